#!/bin/sh
# pipelines.sh - every shipped pipeline passes 'lpipe check', and the
# resolved plan it prints is itself a valid pipeline.
. "$top_srcdir/tests/cli/lib.sh"

n=0
for f in "$PIPELINES"/*.yaml; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f")
	lp check "$f"
	expect "check $name" 0
	if [ "$rc" -eq 0 ]; then
		cp "$OUT" "$WORK/plan-$name"
		lp check "$WORK/plan-$name"
		expect "the plan of $name checks too" 0
	fi
	lp check -q "what is it about?" --set memory.budget=48MiB "$f"
	expect "check -q --set $name" 0
	expect_out "--set reaches the plan of $name" "budget: 48MiB"
done
[ "$n" -ge 2 ] && ok "$n pipelines found" || fail "only $n pipelines in $PIPELINES"

finish
