#!/bin/sh
# stream.sh - streamed weights from the command line, on a tiny random
# model of 48 layers (tests/tools/gen_chat_model): model.weights: stream
# runs; a budget below the mapped weights but above what a streamed run
# takes fails with on_oom: fail (exit 4) and completes with on_oom: shrink,
# the shrink in the JSON trace and the tracked peak within the budget.
. "$top_srcdir/tests/cli/lib.sh"

MODEL=$WORK/layers.gguf
"$top_builddir/tests/tools/gen_chat_model" "$MODEL" 48 || { fail "write the model"; exit 1; }
DOC=$DATA/small.txt
P=$(pipeline chain <<EOF2
version: 1
model: {path: '$MODEL', context: 512}
retrieval: {scorer: bm25}
stages:
  - split: {unit: tokens, size: 48, overlap: 0, boundary: sentence}
  - retrieve: {query: "\${question}", top_k: 2, order: document}
  - summarize: {strategy: tree, fanout: 2, max_tokens: 16}
  - answer: {max_tokens: 16}
EOF2
)
Q="where is the river?"

# The run's tracked peak (the last one in the JSON: the memory section) and
# its weights, from $OUT.
peak() { grep -o '"peak_tracked_bytes": [0-9]*' "$OUT" | tail -1 | sed 's/.*: //'; }
weights() { grep -A1 '"weights": {' "$OUT" | sed -n 's/.*"current": \([0-9]*\).*/\1/p'; }

lp run "$P" "$DOC" -q "$Q" --format json --set model.weights=stream
expect "model.weights: stream runs" 0
streamed_peak=$(peak)
streamed_weights=$(weights)
lp run "$P" "$DOC" -q "$Q" --format json
expect "mapped weights run" 0
mapped_weights=$(weights)
if [ -n "$streamed_peak" ] && [ -n "$mapped_weights" ] &&
   [ "$((streamed_weights * 3))" -lt "$mapped_weights" ] &&
   [ "$streamed_peak" -lt "$mapped_weights" ]; then
	ok "streamed: weights $streamed_weights and peak $streamed_peak below the file $mapped_weights"
else
	fail "streamed weights '$streamed_weights', peak '$streamed_peak', mapped '$mapped_weights'"
	exit 1
fi

budget=$((streamed_peak + (mapped_weights - streamed_peak) / 2))
lp run "$P" "$DOC" -q "$Q" --mem-budget "$budget" --set memory.on_oom=fail
expect "below the mapped weights with on_oom: fail" 4 "load"
lp run "$P" "$DOC" -q "$Q" --mem-budget "$budget" --format json
expect "below the mapped weights with on_oom: shrink" 0
expect_out "the trace records the streaming" "shrink: weights streamed per layer (budget)"
[ "$(peak)" -le "$budget" ] && ok "tracked peak $(peak) within the budget $budget" ||
	fail "tracked peak $(peak) over the budget $budget"

finish
