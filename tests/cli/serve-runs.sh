#!/bin/sh
# serve-runs.sh - what one run of lpipe serve does to the others: a run
# cancelled inside a stage stops at its next step (a model request held
# by the stub is abandoned, no further request is made) and frees what it
# held; an allocation that fails inside one run (LPIPE_FAIL_ALLOC_RUN)
# fails that run alone, naming its phase, while another run goes on to
# the end. Every wait is for a sign (a gate file of the stub, a state),
# never a sleep.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/serve_lib.sh"

gated_setup
# one model request per chunk, a dozen chunks: a run that would go on
# after its cancel would ask the stub again
stub_model "$WORK/pipelines/chunks.yaml"
cat >>"$WORK/pipelines/chunks.yaml" <<EOT
  - split: {unit: words, size: 40, overlap: 0, boundary: none}
  - summarize: {strategy: refine, max_tokens: 16}
EOT
cp "$PIPELINES/retrieve.yaml" "$WORK/pipelines/"
sed 's/scorer: bm25/scorer: hash/' "$PIPELINES/retrieve.yaml" >"$WORK/pipelines/retrieve-hash.yaml"
metric() { curl -s "http://127.0.0.1:$SPORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
# tracked bytes but what the server keeps of documents for the next runs
tracked() { echo $(($(metric lpipe_tracked_total_bytes) - $(metric lpipe_serve_shared_bytes))); }

# -- cancel inside a stage ------------------------------------------------
start_serve --pipelines "$WORK/pipelines" --mem-budget 256MiB --jobs 2 --queue 4
upload "$DATA/small.txt"
before=$(tracked)
touch "$G/open.1" "$G/open.2"
submit "{\"pipeline\":\"chunks\",\"document\":\"$DOC\"}"
A=$RUN
wait_for test -e "$G/arrived.3" || fail "run A never made its third request"
api GET "/v1/runs/$A"
expect_status "run A is inside its summarize stage" 200 '"state":"running"' 'summarize'
api DELETE "/v1/runs/$A"
expect_status "DELETE of a run inside a stage" 202
# request 3 stays held: the run must give it up, not wait for it
$CLIENT "$SPORT" wait "$A" cancelled done failed >"$WORK/a.json"
grep -q '"state": "cancelled"' "$WORK/a.json" &&
	grep -q 'run cancelled while waiting for the model server' "$WORK/a.json" &&
	ok "the run stopped inside its stage, giving up the held request" ||
	fail "run A: $(cat "$WORK/a.json")"
touch "$G/open.3"
n=$(grep -c . "$LOG")
[ ! -e "$G/arrived.4" ] && ok "no model request after the cancel ($n made)" ||
	fail "run A asked the model again after its cancel: $(cat "$LOG")"
after=$(tracked)
[ "$after" -le "$before" ] && ok "the cancelled run freed what it held ($before -> $after bytes)" ||
	fail "tracked bytes $before before the run, $after after its cancel"

# -- two questions on one document: its parsed form and index reused -------
# (the document was parsed by run A already: each first question makes
# its index alone and finds the document, each second one finds both)
found() { metric "lpipe_serve_shared_total{found=\"$1\"}"; }
for k in retrieve retrieve-hash; do
	hits0=$(found yes) miss0=$(found no)
	for q in "What is a package?" "How do I install a package?"; do
		submit "{\"pipeline\":\"$k\",\"document\":\"$DOC\",\"question\":\"$q\"}"
		$CLIENT "$SPORT" wait "$RUN" done failed cancelled >"$WORK/q.json"
	done
	[ $(($(found no) - miss0)) = 1 ] && [ $(($(found yes) - hits0)) = 3 ] &&
		ok "$k: the second question reused the parsed document and its index ($(metric lpipe_serve_shared_entries) kept, $(metric lpipe_serve_shared_bytes) bytes)" ||
		fail "$k: $(found yes) found, $(found no) made (before: $hits0, $miss0)"
	"$LPIPE" run "$WORK/pipelines/$k.yaml" "$DATA/small.txt" -q "How do I install a package?" \
		--format json >"$WORK/r.json" 2>"$ERR"
	python3 - "$WORK/q.json" "$WORK/r.json" <<'PY' && ok "$k: and chose the chunks lpipe run chooses" ||
import json, sys
a, b = json.load(open(sys.argv[1]))["result"], json.load(open(sys.argv[2]))
sys.exit(0 if a["selected"] == b["selected"] and a["result"] == b["result"] else 1)
PY
		fail "$k: the reused index chose otherwise: $(head -c 300 "$WORK/q.json")"
done
stop_serve
[ "$src" -eq 0 ] || fail "lpipe serve exited $src"

# -- an allocation that fails inside one run ------------------------------
# the second run started fails its 10th tracked allocation (in its
# summarize stage); the first, held by the stub meanwhile, and a third
# after it end done
LPIPE_FAIL_ALLOC_RUN=2:10 start_serve --pipelines "$WORK/pipelines" --mem-budget 256MiB \
	--jobs 2 --queue 4
upload "$DATA/small.txt"
rm -f "$G"/open*
submit "{\"pipeline\":\"gated\",\"document\":\"$DOC\"}"
A=$RUN
wait_for test -e "$G/arrived.4" || fail "run A never reached the model"
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
B=$RUN
$CLIENT "$SPORT" wait "$B" done failed cancelled >"$WORK/b.json"
grep -q '"state": "failed"' "$WORK/b.json" &&
	grep -Eq '"error": "[^"]*(load|split|retrieve|summarize|verify): allocation #[0-9]+ of [^"]* failed \(injected\)' \
		"$WORK/b.json" && ok "the failed allocation failed its run, naming the phase: $(
		sed -n 's/.*"error": "\([^"]*\)".*/\1/p' "$WORK/b.json")" ||
	fail "run B: $(cat "$WORK/b.json")"
api GET "/v1/runs/$A"
expect_status "run A runs on beside the failed one" 200 '"state":"running"'
touch "$G/open.4"
$CLIENT "$SPORT" wait "$A" done failed cancelled >"$WORK/a.json"
grep -q '"state": "done"' "$WORK/a.json" && ok "run A ends done" || fail "run A: $(cat "$WORK/a.json")"
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
$CLIENT "$SPORT" wait "$RUN" done failed cancelled >"$WORK/c.json"
grep -q '"state": "done"' "$WORK/c.json" && ok "a run after the failed one ends done" ||
	fail "run C: $(cat "$WORK/c.json")"
curl -s "http://127.0.0.1:$SPORT/metrics" >"$WORK/metrics"
grep -q '^lpipe_serve_runs{state="failed"} 1$' "$WORK/metrics" &&
	grep -q '^lpipe_serve_runs{state="done"} 2$' "$WORK/metrics" &&
	ok "metrics: one run failed, two done" || fail "metrics: $(grep serve_runs "$WORK/metrics")"
stop_serve
[ "$src" -eq 0 ] || fail "lpipe serve exited $src"
LPIPE_FAIL_ALLOC_RUN=x start_serve --pipelines "$WORK/pipelines"
stop_serve
grep -q "LPIPE_FAIL_ALLOC_RUN='x' is ignored" "$SLOG" && ok "a bad LPIPE_FAIL_ALLOC_RUN is named" ||
	fail "log: $(cat "$SLOG")"

# -- models kept between runs, unloaded least recently used ---------------
# two copies of the tiny random model are two models to the engine
"$top_builddir/tests/tools/gen_chat_model" "$WORK/tiny1.gguf" || fail "write the tiny model"
cp "$WORK/tiny1.gguf" "$WORK/tiny2.gguf"
M=$WORK/models
mkdir -p "$M"
for k in 1 2; do
	cat >"$M/tiny$k.yaml" <<EOT
version: 1
model: {path: $WORK/tiny$k.gguf, context: 256}
stages:
  - generate: {prompt: "Write about lighthouses.", max_total: 4, chunk: 4, overlap: 0}
EOT
done
run_tiny() {
	submit "{\"pipeline\":\"tiny$1\",\"document\":\"$DOC\"}"
	$CLIENT "$SPORT" wait "$RUN" done failed cancelled >"$WORK/t.json"
	grep -q '"state": "done"' "$WORK/t.json" || fail "a run of tiny$1: $(cat "$WORK/t.json")"
}
start_serve --pipelines "$M" --mem-budget 256MiB --doc-cache 1MiB
upload "$DATA/small.txt"
run_tiny 1
run_tiny 1
[ "$(metric lpipe_serve_models_loaded_total)" = 1 ] && [ "$(metric lpipe_serve_models)" = 1 ] &&
	[ "$(metric 'lpipe_tracked_bytes{tag="weights"}')" -gt 0 ] &&
	ok "two runs of one model load it once, and it stays loaded" ||
	fail "models loaded $(metric lpipe_serve_models_loaded_total), kept $(metric lpipe_serve_models)"
# a run's plan (its own part and the model), and the model's alone
planned=$(sed -n 's/.*"planned_bytes": \([0-9]*\).*/\1/p' "$WORK/t.json")
model=$(metric lpipe_serve_model_planned_bytes)
stop_serve
# room for one run and a half of a model (a budget of 32 MiB, less its
# sixteenth for reports, less a document cache that takes the rest): the
# second model's run must unload the first, and the first's run the second
budget=33554432
cache=$((budget - budget / 16 - planned - model / 2))
start_serve --pipelines "$M" --mem-budget "$budget" --doc-cache "$cache"
upload "$DATA/small.txt"
run_tiny 1
run_tiny 2
grep -q "unloading the kept model '$WORK/tiny1.gguf' to make room for a run" "$SLOG" &&
	[ "$(metric lpipe_serve_models)" = 1 ] &&
	ok "a run of another model unloads the kept one when the budget has no room" ||
	fail "kept $(metric lpipe_serve_models) (budget $budget, run $planned, model $model): $(cat "$SLOG")"
run_tiny 1
[ "$(metric lpipe_serve_models_loaded_total)" = 3 ] &&
	[ "$(metric lpipe_tracked_peak_bytes)" -le "$budget" ] &&
	ok "and back: 3 loads, the tracked peak within the budget" ||
	fail "loads $(metric lpipe_serve_models_loaded_total), peak $(metric lpipe_tracked_peak_bytes) of $budget"
stop_serve

# -- the planner's figure against the peaks of the runs -------------------
# each model-free ready pipeline on three sizes of one document: the plan
# the server gives a run (GET /v1/runs/ID) must bound the tracked peak of
# the same run done by lpipe run, where nothing else shares the process
# (the server's peaks hold its document cache and kept reports too), and
# stay within four times of it; qa's (with its model) within 10%
P=$WORK/offered
mkdir -p "$P"
for k in extractive-summary focused-summary retrieve extract; do
	cp "$PIPELINES/$k.yaml" "$P/"
done
Q="How do I install a package?"
# plan_bounds PIPELINE SIZE MOST: run PIPELINE on $DOC (of SIZE bytes) in
# the server and by lpipe run; its plan must lie between lpipe run's peak
# and MOST times it (or 1 MiB above it, for a small document)
plan_bounds() {
	submit "{\"pipeline\":\"$1\",\"document\":\"$DOC\",\"question\":\"$Q\"}"
	$CLIENT "$SPORT" wait "$RUN" done failed cancelled >"$WORK/p.json"
	"$LPIPE" run "$P/$1.yaml" "$WORK/d$2.txt" -q "$Q" --format json >"$WORK/r.json" 2>"$ERR"
	python3 - "$WORK/p.json" "$WORK/r.json" "$3" >"$WORK/p.txt" <<'PY' &&
import json, sys
r = json.load(open(sys.argv[1]))
plan, peak = r["planned_bytes"], json.load(open(sys.argv[2]))["memory"]["peak_tracked_bytes"]
print("planned %d, peak %d (%.3fx)" % (plan, peak, plan / peak))
most = max(float(sys.argv[3]) * peak, peak + (1 << 20))
sys.exit(0 if r["state"] == "done" and peak <= plan <= most else 1)
PY
		ok "$1 on $2 bytes: $(cat "$WORK/p.txt")" ||
		fail "$1 on $2 bytes: $(cat "$WORK/p.txt" "$WORK/p.json" | head -c 400)"
}
start_serve --pipelines "$P" --mem-budget 256MiB --doc-cache 4MiB
for n in 20000 100000 878000; do
	head -c "$n" "$top_srcdir/data/debian-reference.en.txt" >"$WORK/d$n.txt"
	upload "$WORK/d$n.txt"
	for k in extractive-summary focused-summary retrieve extract; do
		plan_bounds "$k" "$n" 4
	done
done
stop_serve
# qa on the fetched SmolLM2 (skipped without it)
model=${LPIPE_MODEL_DIR:-${HOME:-.}/.cache/lpipe/models}/SmolLM2-135M-Instruct.Q4_1.gguf
if [ -f "$model" ] && [ -z "${LPIPE_MODEL:-}" ]; then
	cp "$PIPELINES/qa.yaml" "$P/"
	start_serve --pipelines "$P" --mem-budget 1GiB --doc-cache 4MiB
	for n in 20000 100000 878000; do
		upload "$WORK/d$n.txt"
		plan_bounds qa "$n" 1.1
	done
	stop_serve
else
	echo "skip - qa's plan: no SmolLM2 at $model"
fi

finish
