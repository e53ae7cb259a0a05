#!/bin/sh
# tokenize.sh - `lpipe tokenize` on SmolLM2-135M-Instruct (skips, 77,
# without the model: run `make models`).
: "${LPIPE:?LPIPE must name the lpipe binary}"

model=${LPIPE_MODEL:-${LPIPE_MODEL_DIR:-${HOME:-.}/.cache/lpipe/models}/SmolLM2-135M-Instruct.Q4_1.gguf}
n_fail=0
ok() { echo "ok - $*"; }
fail() { n_fail=$((n_fail + 1)); echo "FAIL - $*"; }
# check DESCRIPTION EXPECTED-STATUS EXPECTED-STDOUT -- ARGS...
check() {
	what=$1 want_rc=$2 want_out=$3
	shift 4
	rc=0
	out=$("$LPIPE" tokenize "$@" 2>/dev/null) || rc=$?
	if [ "$rc" -ne "$want_rc" ]; then
		fail "$what: exit status $rc, expected $want_rc"
	elif [ -n "$want_out" ] && [ "$out" != "$want_out" ]; then
		fail "$what: got '$out', expected '$want_out'"
	else
		ok "$what"
	fi
}

check "no arguments is a usage error" 2 "" --
check "unknown option" 2 "" -- "$model" x --bogus
check "missing model is an input error" 3 "" -- /nonexistent/model.gguf "x"
if [ ! -r "$model" ]; then
	echo "skip: no model at $model"
	[ "$n_fail" -eq 0 ] && exit 77
	exit 1
fi
check "ids of plain text" 0 "19556 905" -- "$model" "Hello world" --ids-only
check "special tokens are plain text by default" 0 "44 108 306 79 3738 108 46" -- \
	"$model" "<|im_start|>" --ids-only
check "--special parses them" 0 "1 4093" -- "$model" "<|im_start|>user" --ids-only --special
check "id and escaped piece per line" 0 "$(printf '26843\tHi\n28\t,\n197\t\\t\n104\tx')" -- \
	"$model" "$(printf 'Hi,\tx')"
rc=0
out=$(printf 'a\nb\n' | "$LPIPE" tokenize "$model" - --ids-only) || rc=$?
if [ "$rc" -eq 0 ] && [ "$out" = "81 198 82 198" ]; then ok "text from stdin"; else fail "stdin: $rc '$out'"; fi
[ "$n_fail" -eq 0 ]
