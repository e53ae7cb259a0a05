#!/bin/sh
# probe.sh - `lpipe probe` and `lpipe plan` on a tiny generated model:
# exit codes, outputs, budget crossing.
. "$top_srcdir/tests/cli/lib.sh"

gen=${top_builddir:-.}/tests/tools/gen_tiny_model
model=$WORK/tiny.gguf
"$gen" "$model" || { echo "cannot write the tiny model"; exit 1; }
printf 'not a model\n' >"$WORK/bad.gguf"

lp probe
expect "probe without a model is a usage error" 2 "missing MODEL"
lp probe "$model" --bogus
expect "probe: unknown option" 2 "unknown option '--bogus'"
lp probe "$model" --kv-type q4
expect "probe: bad kv type" 2 "bad kv type 'q4'"
lp probe "$model" --min 256 --max 128
expect "probe: min above max" 2 "--min 256 is above --max 128"
lp probe "$model" --mem-budget lots
expect "probe: bad size" 2 "invalid value 'lots' for --mem-budget"
lp probe /nonexistent/model.gguf
expect "probe: missing model is an input error" 3
lp probe "$WORK/bad.gguf"
expect "probe: a text file is not a model" 3
lp probe "$model" --mem-budget 1KiB
expect "probe: weights over the budget" 4 "load"

lp probe "$model" --min 64 --max 256 --decode 4 --threads 2 \
	--csv "$WORK/p.csv" --svg "$WORK/p.svg"
expect "probe on the tiny model" 0
if [ "$(wc -l <"$WORK/p.csv")" -eq 10 ] &&
   head -1 "$WORK/p.csv" | grep -q '^n_ctx,phase,ok,seconds,tokens_per_s,weights_bytes,kv_bytes,scratch_bytes,logits_bytes,tracked_peak_bytes,rss_bytes,predicted_bytes$'
then ok "CSV header and one row per length and phase"; else fail "CSV: $(head -2 "$WORK/p.csv")"; fi
if grep -q '^growth: linear' "$OUT" && grep -q '^budget: none' "$OUT"; then
	ok "verdict on stdout"
else
	fail "verdict: $(tail -2 "$OUT")"
fi
if grep -q '</svg>' "$WORK/p.svg" && [ "$(grep -c '<polyline' "$WORK/p.svg")" -eq 7 ]; then
	ok "SVG written"
else
	fail "SVG incomplete"
fi

# A budget just above what 64 tokens need: 128 and 256 are over it.
need=$(awk -F, '$1 == 64 && $2 == "load" { print $12 }' "$WORK/p.csv")
lp probe "$model" --min 64 --max 256 --decode 4 --threads 2 --mem-budget $((need + 512))
if [ "$rc" -eq 0 ] && grep -q 'exceeded at n_ctx 128 (measured)' "$OUT" &&
   [ "$(grep -c ' over ' "$OUT")" -eq 6 ]; then
	ok "budget crossing measured"
else
	fail "budget crossing: rc $rc, $(tail -1 "$OUT")"
fi

lp plan "$model"
expect "plan without a budget is a usage error" 2 "missing --mem-budget"
lp plan "$model" --mem-budgt 1GiB
expect "plan: misspelt option" 2 "did you mean '--mem-budget'"
lp plan "$model" --mem-budget 1GiB --kv-type q3
expect "plan: bad kv type" 2 "bad kv type 'q3'"
lp plan "$WORK/bad.gguf" --mem-budget 1GiB
expect "plan: a text file is not a model" 3
lp plan "$model" --mem-budget 1KiB
expect "plan: budget below the weights" 4 "the weights alone need"
lp plan "$model" --mem-budget 64MiB --threads 2
expect "plan on the tiny model" 0
if grep -qx '  context: 1024' "$OUT" && grep -qx '  kv_type: f16' "$OUT" &&
   grep -qx '  budget: 64MiB' "$OUT" &&
   grep -q '^  - split: {unit: tokens, size: 672, overlap: 80, boundary: sentence}$' "$OUT"
then ok "plan prints the YAML fragment"; else fail "plan output: $(cat "$OUT")"; fi
# The fragment is a valid pipeline once a name and a stage are around it.
{ printf 'version: 1\nname: planned\n'; grep -v '^#' "$OUT"
  echo '  - summarize: {strategy: extractive, fanout: 4, max_words: 100}'; } >"$WORK/planned.yaml"
lp check "$WORK/planned.yaml"
expect "the plan's YAML passes lpipe check" 0
lp probe --help
if [ "$rc" -eq 0 ] && grep -q '^usage: lpipe probe MODEL' "$OUT"; then ok "probe --help"; else fail "probe --help"; fi

[ "$n_fail" -eq 0 ]
