#!/bin/sh
# batch-model.sh - lpipe batch with a model, on the tiny random model
# (tests/tools/gen_chat_model): documents on two threads share one loaded
# session, every output equals lpipe run's, and the manifest counts each
# document's own tokens while the other generates on the same session.
. "$top_srcdir/tests/cli/lib.sh"

MODEL=$WORK/tiny.gguf
"$top_builddir/tests/tools/gen_chat_model" "$MODEL" || { fail "write the tiny model"; finish; }
export LPIPE_MODEL="$MODEL"
command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }

C=$WORK/corpus
mkdir -p "$C"
i=1
while [ "$i" -le 4 ]; do
	tail -c +$((i * 40000 + 1)) "$top_srcdir/data/bash-reference.en.txt" | head -c 4000 |
		iconv -c -f UTF-8 -t UTF-8 >"$C/doc$i.txt" 2>/dev/null || true
	i=$((i + 1))
done
SET="--set model.context=1024 --set stages.split.size=300"

lp batch "$PIPELINES/summarize.yaml" "$C" -o "$WORK/out" -j 2 $SET
expect "summarize.yaml on 4 documents, 2 in flight" 0 "4 of 4 documents" "models loaded 1"
for k in 1 2 3 4; do
	"$LPIPE" run "$PIPELINES/summarize.yaml" "$C/doc$k.txt" $SET --format json \
		>"$WORK/run$k.json" 2>/dev/null || true
	"$LPIPE" run "$PIPELINES/summarize.yaml" "$C/doc$k.txt" $SET 2>/dev/null |
		cmp -s - "$WORK/out/doc$k.txt.txt" && ok "doc$k: output equals lpipe run's" ||
		fail "doc$k: output differs from lpipe run's"
done
python3 - "$WORK/out/manifest.jsonl" "$WORK" <<'PY' && ok "manifest tokens are each document's own" ||
import json, sys
generated = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    k = e["key"].split(".")[0][3:]
    run = json.load(open("%s/run%s.json" % (sys.argv[2], k)))
    lv = run["summary_levels"]
    tin = sum(l.get("tokens_in", 0) for l in lv)
    tout = sum(l.get("tokens_out", 0) for l in lv)
    generated += e["tokens_out"]
    if (e["tokens_in"], e["tokens_out"]) != (tin, tout):
        sys.exit("%s: manifest %s/%s, run %s/%s" % (e["key"], e["tokens_in"], e["tokens_out"], tin, tout))
    if e["peak_tracked_bytes"] < run["memory"]["peak_tracked_bytes"] // 2:
        sys.exit("%s: peak %s misses the shared model" % (e["key"], e["peak_tracked_bytes"]))
sys.exit(0 if generated else "no document generated anything")
PY
	fail "manifest tokens"

finish
