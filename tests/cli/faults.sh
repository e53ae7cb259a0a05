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

finish
