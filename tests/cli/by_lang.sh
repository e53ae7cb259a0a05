#!/bin/sh
# by_lang.sh - model.by_lang: a pipeline picks its model by the document's
# language. Two tiny models (2 and 3 layers) stand for the default and the
# Chinese one; run, check, plan and probe must agree on which one a
# document gets, a missing per-language model falls back to the default
# with a one-line notice (exit 0), and the schema refuses what it does not
# know with file:line:col.
. "$top_srcdir/tests/cli/lib.sh"

A=$WORK/a.gguf B=$WORK/b.gguf
"$top_builddir/tests/tools/gen_chat_model" "$A" 2 &&
	"$top_builddir/tests/tools/gen_chat_model" "$B" 3 || { fail "write the tiny models"; finish; }
printf 'The shell reads its startup files when it starts. It then waits for commands.\n' >"$WORK/en.txt"
printf '系统启动时读取配置文件。然后等待用户输入命令。这是一个简短的中文文档。\n' >"$WORK/zh.txt"
cat >"$WORK/p.yaml" <<YAML
version: 1
model:
  path: $A
  context: 512
  by_lang:
    zh: {path: $B, context: 256}
stages:
  - split: {unit: tokens, size: 64, overlap: 0}
YAML

# the split by tokens opens the model: its trace says which one
events() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print("\n".join(e for s in r["stages"] for e in s.get("events", [])))' "$OUT"; }

lp run "$WORK/p.yaml" "$WORK/zh.txt" --format json
expect "a Chinese document runs" 0
events | grep -qxF "model for zh documents: $B" && ok "the Chinese document gets the zh model" ||
	fail "no zh model in the trace: $(events)"
lp run "$WORK/p.yaml" "$WORK/en.txt" --format json
expect "an English document runs" 0
events | grep -q "model for" && fail "the English document got a per-language model" ||
	ok "the English document gets the default model"

# missing: the default, a notice, exit 0
lp run "$WORK/p.yaml" "$WORK/zh.txt" --format json --set model.by_lang.zh.path="$WORK/none.gguf"
expect "a missing zh model falls back" 0 "model.by_lang.zh: no file '$WORK/none.gguf': zh documents use '$A'"
[ "$(grep -c . "$ERR")" -eq 1 ] && ok "the notice is one line" || fail "stderr: $(cat "$ERR")"
events | grep -qF "no file '$WORK/none.gguf'" && ok "the trace records the fallback" ||
	fail "no fallback in the trace: $(events)"
lp run "$WORK/p.yaml" "$WORK/zh.txt" --quiet --set model.by_lang.zh.path="$WORK/none.gguf"
[ "$rc" -eq 0 ] && [ ! -s "$ERR" ] && ok "--quiet keeps the notice off" || fail "--quiet: $rc $(cat "$ERR")"
# by_lang null: one model for every language
lp run "$WORK/p.yaml" "$WORK/zh.txt" --format json --set model.by_lang=
events | grep -q "model for" && fail "by_lang= still chose a model" || ok "by_lang= turns the choice off"

# a bare file name is looked up in the model directory
cp "$B" "$WORK/c.gguf"
LPIPE_MODEL_DIR=$WORK lp run "$WORK/p.yaml" "$WORK/zh.txt" --format json --set model.by_lang.zh.path=c.gguf
events | grep -qxF "model for zh documents: $WORK/c.gguf" && ok "a file name is found in LPIPE_MODEL_DIR" ||
	fail "model directory lookup: $(events) $(cat "$ERR")"

# check prints the entry with its defaults and loads back
lp check "$WORK/p.yaml"
expect "check" 0
grep -qF "    zh: {path: $B, context: 256, kv_type: f16, chat_template: ~, weights: map}" "$OUT" &&
	ok "check prints the resolved zh entry" || fail "check: $(cat "$OUT")"
cp "$OUT" "$WORK/printed.yaml"
lp check "$WORK/printed.yaml"
cmp -s "$OUT" "$WORK/printed.yaml" && ok "the printed plan loads back the same" || fail "round trip differs"
lp check "$WORK/p.yaml" --set model.by_lang.zh.path="$WORK/none.gguf"
expect "check names a missing zh model" 0 "model.by_lang.zh: no file"

# plan and probe take the pipeline's model for a language
lp plan "$WORK/p.yaml" --lang zh --mem-budget 64MiB
expect "plan --lang zh" 0
grep -qF "# lpipe plan: $B within" "$OUT" && ok "plan plans the zh model" || fail "plan: $(head -1 "$OUT")"
lp plan "$WORK/p.yaml" --mem-budget 64MiB
grep -qF "# lpipe plan: $A within" "$OUT" && ok "plan without --lang plans the default" ||
	fail "plan: $(head -1 "$OUT")"
lp probe "$WORK/p.yaml" --lang zh --min 16 --max 32 --decode 2
expect "probe --lang zh" 0
grep -qF "model: $B," "$OUT" && ok "probe loads the zh model" || fail "probe: $(head -1 "$OUT")"
lp probe "$A" --lang zh
expect "--lang with a model file" 2 "is not a pipeline"
lp plan "$WORK/p.yaml" --lang fr --mem-budget 64MiB
expect "--lang fr" 2 "unknown language 'fr'"

# the schema
printf 'version: 1\nmodel:\n  by_lang:\n    fr: {path: x.gguf}\nstages: []\n' >"$WORK/bad1.yaml"
lp check "$WORK/bad1.yaml"
expect "an unknown language" 2 "bad1.yaml:4:5: error: model.by_lang: unknown language 'fr'"
printf 'version: 1\nmodel:\n  by_lang:\n    zh: {path: x.gguf, device: cpu}\nstages: []\n' >"$WORK/bad2.yaml"
lp check "$WORK/bad2.yaml"
expect "a key an entry may not set" 2 "bad2.yaml:4:24: error: model.by_lang.zh: unknown key 'device'"
printf 'version: 1\nmodel:\n  by_lang:\n    zh: {path: x.gguf, contxt: 9}\nstages: []\n' >"$WORK/bad3.yaml"
lp check "$WORK/bad3.yaml"
expect "a misspelt key" 2 "bad3.yaml:4:24: error: model.by_lang.zh: unknown key 'contxt' (did you mean 'context'?)"
printf 'version: 1\nmodel:\n  by_lang:\n    zh: x.gguf\nstages: []\n' >"$WORK/bad4.yaml"
lp check "$WORK/bad4.yaml"
expect "an entry that is not a map" 2 "bad4.yaml:4:9: error: model.by_lang.zh: expected a map"
printf 'version: 1\nmodel:\n  by_lang: [zh]\nstages: []\n' >"$WORK/bad5.yaml"
lp check "$WORK/bad5.yaml"
expect "by_lang that is not a map" 2 "bad5.yaml:3:12: error: model: 'by_lang' must map"
printf 'version: 1\nmodel:\n  by_lang:\n    zh: {context: 8}\nstages: []\n' >"$WORK/bad6.yaml"
lp check "$WORK/bad6.yaml"
expect "an entry's range" 2 "bad6.yaml:4:19: error: model.by_lang.zh:"

finish
