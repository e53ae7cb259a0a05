#!/bin/sh
# model_info.sh - `lpipe model info` on the tiny test model, a bad file and
# bad usage: output lines and exit codes.
set -u
: "${LPIPE:=./lpipe}" "${top_srcdir:=.}"
model="$top_srcdir/tests/fuzz/corpus/fuzz_gguf/tiny-llama.gguf"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$out" "$err" >&2; exit 1; }

"$LPIPE" model info "$model" --context 1000 >"$out" 2>"$err" || fail "exit $?"
for want in 'architecture:  llama' 'name:          tiny test llama' \
	'layers:        1' 'embedding:     64' 'feed-forward:  96' \
	'heads:         4 (kv heads 2, head dim 16)' 'rope base:     10000' \
	'tokenizer:     gpt2 (pre: default), 8 tokens' 'tensors:       6' \
	'memory at context 1000:' \
	'  kv cache f16   125.00 KiB  (128 bytes per token)'; do
	grep -qxF "$want" "$out" || fail "missing line '$want'"
done
grep -Eq '^  q4_1 +1 +2\.50 KiB$' "$out" || fail "q4_1 row"

# not a model: input error (3), message with the byte offset
"$LPIPE" model info "$top_srcdir/tests/model_info.sh" >"$out" 2>"$err"
[ $? -eq 3 ] || fail "bad file: want exit 3"
grep -q 'byte 0: error: not a GGUF file' "$err" || fail "bad magic message"

# usage errors (2)
"$LPIPE" model info >"$out" 2>"$err"; [ $? -eq 2 ] || fail "no file: want exit 2"
"$LPIPE" model info "$model" --context x >"$out" 2>"$err"; [ $? -eq 2 ] || fail "bad --context"
"$LPIPE" model frob >"$out" 2>"$err"; [ $? -eq 2 ] || fail "bad subcommand"
"$LPIPE" model --help >"$out" 2>"$err" || fail "--help"
grep -q 'usage: lpipe model info FILE' "$out" || fail "--help text"
echo "model_info: ok"
