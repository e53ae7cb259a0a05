#!/bin/sh
# parallel.sh - lpipe batch in shards under GNU parallel, the way README.md
# shows it over several hosts; here the hosts are two slots of the local
# machine (--sshlogin 2/:, ':' is parallel's name for "no ssh"). The union
# of the 4 shards is every document once, and --merge agrees. Skipped (77)
# when parallel is not installed.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/shards.sh"

command -v parallel >/dev/null 2>&1 || skip "GNU parallel not found (Debian package: parallel)"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
need_batch

CORPUS=$WORK/corpus
corpus "$CORPUS"
rc=0
parallel --will-cite --halt now,fail=1 --sshlogin 2/: \
	"$LPIPE" batch "$PIPE" "$CORPUS" -o "$WORK/out" --shard {}/4 \
	::: 0 1 2 3 >"$OUT" 2>"$ERR" </dev/null || rc=$?
expect "parallel runs the 4 shards" 0
[ "$(n_manifests "$WORK/out")" -eq 4 ] && ok "each shard wrote its manifest" ||
	fail "$(n_manifests "$WORK/out") shard manifests in the output folder, not 4"
if check_union "$CORPUS" "$WORK/out"; then ok "the shards hold every document once"; else
	fail "the shards do not hold every document once"
fi
check_merge "$WORK/out"

finish
