#!/bin/sh
# chain.sh - the model pipelines from the command line, on the tiny random
# model (tests/tools/gen_chat_model): they run to a complete result, and a
# run that fails (no model, over the budget with on_oom: fail, an injected
# allocation failure) exits with its status and never leaves a partial or
# replaced -o file.
. "$top_srcdir/tests/cli/lib.sh"

MODEL=$WORK/tiny.gguf
"$top_builddir/tests/tools/gen_chat_model" "$MODEL" || { fail "write the tiny model"; finish; }
DOC=$DATA/small.txt
export LPIPE_MODEL="$MODEL"

for name in summarize refine summarize-answer qa long-generate; do
	lp run "$PIPELINES/$name.yaml" "$DOC" -q "which words does the text use?" \
		--set model.context=1024 -o "$WORK/$name.txt"
	[ "$rc" -eq 1 ] && rc=0 # junk text may fail verification; the run completed
	expect "$name.yaml runs on the tiny model" 0
	[ -s "$WORK/$name.txt" ] && ok "$name.yaml wrote its result" ||
		fail "$name.yaml wrote no result"
done

lp run "$PIPELINES/summarize-answer.yaml" "$DOC" -q "which words does the text use?" --format json \
	--set model.context=1024
expect "summarize-answer as json" 0
expect_out "the json holds levels with token counts and a cited answer" \
	'"tokens_in"' '"summary_levels"' 'Sources: [chunk'

# on_fail: retry reruns summarize and verify as steps of their own: the trace
# shows each pass; max_retries bounds it (min_words makes every pass fail).
lp run "$PIPELINES/summarize.yaml" "$DOC" --format json --set model.context=1024 \
	--set stages.verify.on_fail=retry --set stages.verify.max_retries=2 \
	--set stages.verify.min_words=100000 --set stages.verify.grounded=true
expect "on_fail: retry" 0 "verification failed"
if python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
st = r["stages"]
assert [s["kind"] for s in st] == ["split", "summarize", "verify", "summarize", "verify",
                                   "summarize", "verify"], st
assert [s["pass"] for s in st] == [1, 1, 1, 2, 2, 3, 3], st
assert [s["stage"] for s in st] == [0, 1, 2, 1, 2, 1, 2], st
assert all(s["peak_tracked_bytes"] > 0 for s in st[3:]), st
assert any(e.startswith("retry 1: rerun from stage 2 (summarize)") for e in st[2]["events"])
assert any(e.startswith("retry 2: ") for e in st[4]["events"])
v = r["verification"]
assert v["retries"] == 2 and not v["passed"], v
g = v["grounding"]
assert set(g) == {"tokens", "found", "rate", "removed", "ungrounded"}, g
assert 0 <= g["found"] <= g["tokens"]
PY
then ok "on_fail: retry reruns from the runner, pass by pass"; else
	fail "on_fail: retry reruns from the runner, pass by pass"; fi
lp run "$PIPELINES/summarize.yaml" "$DOC" --format markdown --set model.context=1024 \
	--set stages.verify.on_fail=retry --set stages.verify.min_words=100000
expect_out "markdown trace names the second pass" "- summarize (pass 2): " "- verify (pass 2): "

# A title centred on the page is the document model's heading: the summary
# does not glue it onto its sentences as if it were a term ("TITLE: ...").
cat >"$WORK/centred.txt" <<'EOF'
                    THE SAMPLE PUBLIC NOTICE
                       Version 2, 1 May 2000

 Everyone may copy and hand on this notice to others, but nobody may change it.

                            Preamble

  The notice says what a reader may do with the text that carries it.

  A reader may print the text, lend it to a friend, and read it aloud to a class.
EOF
lp run "$PIPELINES/summarize.yaml" "$WORK/centred.txt" --set model.context=1024
[ "$rc" -eq 1 ] && rc=0 # a short text fails min_words; the run completed
expect "summary of a centred title" 0
expect_out "the summary keeps the text's sentences" "Everyone may copy"
if grep -qF "PUBLIC NOTICE:" "$OUT"; then
	fail "the centred title is glued onto a sentence"
else
	ok "no centred title glued onto a sentence"
fi

# on_fail: retry with compress: the rerun takes, for each phrase the first
# pass lost, a sentence that holds it, and keeps it in the selection.
python3 - "$WORK/keeper.txt" <<'PY'
import random, sys
random.seed(3)
subj = ["The keeper", "The lighthouse keeper", "The old keeper", "The keeper of the light",
        "The night keeper"]
verbs = ["trims the lamp wick", "winds the clock of the lens", "polishes the brass of the lamp",
         "writes the log of the light", "climbs the stairs of the tower", "checks the oil of the lamp"]
tail = ["before the night comes.", "at every change of the watch.",
        "when the fog rolls in from the sea.", "while the ships pass the rocks.",
        "as the old rules of the light ask."]
out = ["%s %s %s" % (random.choice(subj), random.choice(verbs), random.choice(tail))
       for _ in range(120)]
out.insert(77, "The keeper oils the frobnicator-unit of the lamp before the night comes.")
paras = [" ".join(out[i:i + 6]) for i in range(0, len(out), 6)]
open(sys.argv[1], "w").write("\n\n".join(paras) + "\n")
PY
lp run "$PIPELINES/summarize.yaml" "$WORK/keeper.txt" --set model.context=1024 \
	--set stages.verify.on_fail=retry --set stages.verify.keyphrases.must=frobnicator-unit
expect "on_fail: retry, compress" 0
if grep -v '^verification' "$OUT" | grep -qF "frobnicator-unit"; then
	ok "the rerun keeps the phrase the first pass lost"
else
	fail "the rerun keeps the phrase the first pass lost"
fi
expect_out "the verification passes after the rerun" "11/11 keyphrases survived"

# abstract: the model rewrites the selection; what it writes that the
# selection does not back (all the tiny model's junk) is removed, each
# sentence named, and the selection is the summary, as its own level
lp run "$PIPELINES/summarize.yaml" "$WORK/keeper.txt" --set model.context=1024 \
	--set stages.summarize.abstract=true --format json -v
[ "$rc" -eq 1 ] && rc=0
expect "abstract: true" 0
if python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
lv = r["summary_levels"]
assert len(lv) == 3, len(lv)
assert lv[2]["summaries"][0]["text"] == lv[1]["summaries"][0]["text"] == r["summary"], lv[2]
ev = [e for s in r["stages"] for e in s.get("events", [])]
assert any(e.startswith("abstract: none of the model's") for e in ev), ev
PY
then ok "unbacked sentences removed, the selection kept"; else
	fail "abstract: $(head -c 600 "$OUT")"; fi
grep -q 'abstract: removed "' "$ERR" && ok "each removed sentence is named" ||
	fail "no removed sentence named: $(head -c 600 "$ERR")"

# Failures: exit status, message, and -o untouched.
echo previous >"$WORK/out.txt"
LPIPE_MODEL=$WORK/missing.gguf lp run "$PIPELINES/summarize.yaml" "$DOC" -o "$WORK/out.txt"
expect "a missing model is an input error" 3 "no model: run \`make models\` or set model.path"
[ "$(cat "$WORK/out.txt")" = previous ] && ok "no model: -o untouched" ||
	fail "no model: -o was replaced"

lp run "$PIPELINES/summarize.yaml" "$DOC" --set memory.on_oom=fail --mem-budget 64KiB \
	-o "$WORK/out.txt"
expect "over the budget with on_oom: fail" 4 "memory"
[ "$(cat "$WORK/out.txt")" = previous ] && ok "over budget: -o untouched" ||
	fail "over budget: -o was replaced"

rm -f "$WORK/new.txt"
lp run "$PIPELINES/summarize.yaml" "$DOC" --set memory.on_oom=fail --mem-budget 64KiB \
	-o "$WORK/new.txt"
[ ! -e "$WORK/new.txt" ] && ok "over budget: no partial -o file" ||
	fail "over budget: a partial -o file was left"
ls "$WORK" | grep -q '\.tmp\|~' && fail "a temporary file was left in $WORK" ||
	ok "no temporary file left"

# Allocation failures across a model run: exit 0 (maybe shrunk) or 4.
n=1
while [ "$n" -le 400 ]; do
	echo previous >"$WORK/out.txt"
	LPIPE_FAIL_ALLOC=$n lp run "$PIPELINES/summarize.yaml" "$DOC" \
		--set model.context=1024 -o "$WORK/out.txt"
	[ "$rc" -eq 1 ] && rc=0
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
		expect "allocation $n fails cleanly" 4
		break
	fi
	if [ "$rc" -eq 4 ] && [ "$(cat "$WORK/out.txt")" != previous ]; then
		fail "allocation $n failed but -o was replaced"
		break
	fi
	n=$((n + 37))
done
[ "$n" -gt 400 ] && ok "allocation failures end in 0 or 4, -o intact"

finish
