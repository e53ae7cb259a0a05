#!/bin/sh
# faults.sh - make each tracked allocation of a whole run fail in turn
# (LPIPE_FAIL_ALLOC=N): every run must stop with exit status 4 and a
# message about memory, leave an existing -o file untouched, or, once N is
# past the last allocation, succeed with the normal result. The text
# format is compared: the JSON one holds timings, which differ run to run.
. "$top_srcdir/tests/cli/lib.sh"

DOC=$DATA/small.txt

sweep() {
	name=$1
	shift
	lp run "$@" "$DOC" -o "$WORK/ref.txt"
	expect "$name: reference run" 0
	[ "$rc" -eq 0 ] || return
	export LPIPE_FAIL_ALLOC
	n=1
	while [ "$n" -le 5000 ]; do
		LPIPE_FAIL_ALLOC=$n
		echo previous >"$WORK/out.txt"
		lp run "$@" "$DOC" -o "$WORK/out.txt"
		if [ "$rc" -eq 0 ]; then
			break
		fi
		if [ "$rc" -ne 4 ] || ! grep -q 'LPIPE_FAIL_ALLOC\|memory' "$ERR"; then
			unset LPIPE_FAIL_ALLOC
			expect "$name: allocation $n fails cleanly" 4 "memory"
			return
		fi
		if [ "$(cat "$WORK/out.txt")" != previous ]; then
			unset LPIPE_FAIL_ALLOC
			fail "$name: allocation $n failed but -o was replaced"
			return
		fi
		n=$((n + 1))
	done
	unset LPIPE_FAIL_ALLOC
	if [ "$rc" -ne 0 ]; then
		fail "$name: still failing after $n allocations"
	elif cmp -s "$WORK/ref.txt" "$WORK/out.txt"; then
		ok "$name: allocations 1..$((n - 1)) fail cleanly, then the normal result"
	else
		fail "$name: allocation $n failed silently: the result differs"
	fi
}

SPLIT=$(pipeline split <<'Y'
version: 1
stages:
  - split: {size: 64, overlap: 8}
Y
)
sweep split "$SPLIT"
sweep extractive-summary "$PIPELINES/extractive-summary.yaml"

# truncate joins the chunks of the working set, then head, marker, a
# summary of the middle and tail: a failed append is out of memory, never
# a shorter text.
TRUNCATE=$(pipeline truncate <<'Y'
version: 1
stages:
  - split: {size: 64, overlap: 0}
  - truncate: {head: 120, tail: 60, middle: summary, middle_words: 20}
Y
)
sweep truncate "$TRUNCATE"

# Loading the pipeline: every allocation made while the file is read and
# each stage's options are parsed must fail as "out of memory" (exit 4),
# never as a configuration error (2) or input error (3), and never be
# ignored (a prompt_file cut short). Long strings make the loader take
# several arena blocks; the stages cover every kind's parse function.
big=$(printf 'word %.0s' $(seq 1 1200))
printf 'Summarize. %.0s' $(seq 1 900) >"$WORK/prompt.txt"
LOAD=$WORK/load.yaml
{
	echo "version: 1"
	echo "model: {path: $WORK/missing.gguf, context: 512}"
	echo "memory: {budget: 64MiB, on_oom: shrink}"
	echo "stages:"
	for i in 1 2 3; do
		echo "  - split: {unit: regex, pattern: '(?m)^#+ $big', size: 2}"
		echo "  - retrieve: {query: \"$big\", top_k: 3}"
		echo "  - truncate: {head: 100}"
		echo "  - summarize: {strategy: tree, max_tokens: 16, prompt_file: prompt.txt}"
		echo "  - answer: {question: \"$big\", prompt: \"$big\"}"
		echo "  - generate: {prompt: \"$big\", max_total: 10}"
		echo "  - verify: {keyphrases: {auto: 3, must: [\"$big\", b$i], regex: ['a$big']}, on_fail: retry}"
	done
} >"$LOAD"
lp check "$LOAD" -q "why?" --set stages.split.size=3
expect "loading sweep: reference check" 0
cp "$OUT" "$WORK/check-ref.txt"
n=1
[ "$rc" -eq 0 ] || n=2001
while [ "$n" -le 2000 ]; do
	LPIPE_FAIL_ALLOC=$n lp check "$LOAD" -q "why?" --set stages.split.size=3
	[ "$rc" -eq 0 ] && break
	if [ "$rc" -ne 4 ] || ! grep -q 'LPIPE_FAIL_ALLOC\|memory' "$ERR"; then
		expect "loading: allocation $n fails as out of memory" 4 "memory"
		break
	fi
	n=$((n + 1))
done
if [ "$rc" -eq 0 ] && [ "$n" -gt 8 ]; then
	cmp -s "$OUT" "$WORK/check-ref.txt" &&
		ok "loading: allocations 1..$((n - 1)) fail with exit 4, then the same plan" ||
		fail "loading: allocation $n failed silently: the plan differs"
elif [ "$rc" -eq 0 ]; then
	fail "loading: only $((n - 1)) allocations swept (the file no longer stresses the loader)"
fi

finish
