#!/bin/sh
# generate.sh - `lpipe generate`: usage errors always; with SmolLM2 present
# (run `make models`), greedy generation, chat, budgets and KV types.
: "${LPIPE:?LPIPE must name the lpipe binary}"

model=${LPIPE_MODEL:-${LPIPE_MODEL_DIR:-${HOME:-.}/.cache/lpipe/models}/SmolLM2-135M-Instruct.Q4_1.gguf}
n_fail=0
ok() { echo "ok - $*"; }
fail() { n_fail=$((n_fail + 1)); echo "FAIL - $*"; }
# run DESCRIPTION EXPECTED-STATUS ARGS...; leaves stdout in $out, stderr in $err
run() {
	what=$1 want_rc=$2
	shift 2
	rc=0
	out=$("$LPIPE" generate "$@" 2>"${TMPDIR:-/tmp}/lpipe-gen-err.$$") || rc=$?
	err=$(cat "${TMPDIR:-/tmp}/lpipe-gen-err.$$")
	rm -f "${TMPDIR:-/tmp}/lpipe-gen-err.$$"
	if [ "$rc" -ne "$want_rc" ]; then
		fail "$what: exit status $rc, expected $want_rc ($err)"
		return 1
	fi
	ok "$what"
}

run "no prompt is a usage error" 2 "$model"
run "bad kv type is a usage error" 2 "$model" -p x --kv-type q4
run "bad number is a usage error" 2 "$model" -p x -n many
run "missing model is an input error" 3 /nonexistent/model.gguf -p x
if [ ! -r "$model" ]; then
	echo "skip: no model at $model"
	[ "$n_fail" -eq 0 ] && exit 77
	exit 1
fi
run "greedy chat" 0 "$model" -p "What is the capital of France?" --chat -n 24 \
	--temp 0 --threads 2
case $out in *Paris*) ok "the answer names Paris" ;; *) fail "no Paris in '$out'" ;; esac
case $err in *"prompt: "*"tokens/s"*) ok "speeds on stderr" ;; *) fail "stderr: '$err'" ;; esac
first=$out
run "greedy is reproducible, q8_0 cache" 0 "$model" -p "What is the capital of France?" \
	--chat -n 24 --temp 0 --threads 1 --kv-type q8_0
case $out in *Paris*) ok "q8_0 cache still answers Paris" ;; *) fail "q8_0: '$out'" ;; esac
run "sampling with a seed" 0 "$model" -p "Once upon a time" -n 16 --temp 0.8 --seed 7
a=$out
run "same seed again" 0 "$model" -p "Once upon a time" -n 16 --temp 0.8 --seed 7
[ "$a" = "$out" ] && ok "same seed, same text" || fail "seeded runs differ"
run "a budget below the weights fails cleanly" 4 "$model" -p x --mem-budget 10MiB
case $err in *load*) ok "the error names the phase" ;; *) fail "stderr: '$err'" ;; esac
run "a prompt longer than the context" 3 "$model" -p "one two three four five six" --ctx 4
[ "$n_fail" -eq 0 ]
