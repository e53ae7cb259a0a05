# html_fixture.sh - the HTML reports the html*.sh tests look at, sourced
# after lib.sh. Writes, in $WORK:
#   hostile.txt          a document full of markup that must stay text
#   report.yaml          split, retrieve, summarize (2+ levels), answer, verify,
#                        with a name and keyphrases that are markup too
#   hostile.html/.json   the run of report.yaml on hostile.txt, both formats
#   small.html           the extractive summary of the lighthouse sample
# The answer comes from the tiny random model (tests/tools/gen_chat_model),
# so no real weights are needed and whatever bytes it writes are escaped.
# Sets QUESTION; calls fail and finish when a report cannot be made.

MODEL=$WORK/tiny.gguf
"$top_builddir/tests/tools/gen_chat_model" "$MODEL" >/dev/null ||
	{ fail "write the tiny model"; finish; exit 1; }
export LPIPE_MODEL="$MODEL"

cat >"$WORK/hostile.txt" <<'TXT'
Keeping the light: </title><script>window.__pwned = 1</script>

The keeper wrote <img src=x onerror="window.__pwned = 2"> in the log book every night. The lamp burned colza oil & whale oil, and later "mineral" oil from 'Scotland'.

Closing tags such as </script> and </style> and </textarea> are only words here. A comment starts with <!-- and ends with --> and a CDATA block ends with ]]> in this sentence.

<svg onload="window.__pwned = 3"><a href="javascript:window.__pwned = 4">click</a></svg> The fog signal sounded every minute when the sea was white.

A lighthouse tells a ship where the land is and which stretch of land it is. Every station has its own rhythm of flashes, listed in the charts beside the tower.

The lens of a first-order light weighs several tonnes and floats on a bath of mercury, so that one keeper can turn it by hand. The clockwork that turns it must be wound every few hours.

Oil gave way to paraffin vapour burners, then to electric lamps. The last keepers left when the lights were automated, and a monitoring station now watches the whole coast.

The fog signal was first a bell, then a gun, then a siren driven by compressed air. Its code, like the code of the light, names the station to a ship that cannot see it.
TXT

cat >"$WORK/report.yaml" <<'YAML'
version: 1
name: "<b>report</b> & </title><script>window.__pwned = 6</script>"
model: {context: 1024}
retrieval: {scorer: bm25}
stages:
  - split: {unit: tokens, size: 40, overlap: 6, boundary: sentence}
  - retrieve: {query: "${question}", top_k: 6, order: document}
  - summarize: {strategy: extractive, fanout: 2, max_words: 30}
  - answer: {question: "${question}", max_tokens: 12, context: chunks, quote: ranked}
  - verify:
      keyphrases:
        auto: 4
        must: ['<img src=x onerror="window.__pwned = 2">', 'fog signal', '</script>x']
      min_words: 5
      on_fail: warn
YAML

QUESTION='Which oil did the lamp burn? <script>window.__pwned = 5</script>'
for fmt in html json; do
	lp run "$WORK/report.yaml" "$WORK/hostile.txt" -q "$QUESTION" --format "$fmt" \
		-o "$WORK/hostile.$fmt"
	if [ "$rc" -gt 1 ]; then
		fail "the $fmt report of the hostile document: exit status $rc"
		sed 's/^/  stderr: /' "$ERR" | head -5
		finish
		exit 1
	fi
done
lp run "$PIPELINES/extractive-summary.yaml" "$DATA/small.txt" --format html -o "$WORK/small.html"
if [ "$rc" -gt 1 ]; then
	fail "the html report of the extractive summary: exit status $rc"
	finish
	exit 1
fi
