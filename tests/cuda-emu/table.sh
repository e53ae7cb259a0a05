#!/bin/sh
# table.sh LOG... - one row per op, the largest "maxerr OP CASE ERR TOL"
# of each log (check_cuda_ops' output, e.g. tests/cuda-emu/ops-*.sh.log
# after make check) in a column per log, and the op's tolerance.
#   sh tests/cuda-emu/table.sh build/tests/cuda-emu/ops-{forward,reverse,random,asan}.sh.log
[ $# -gt 0 ] || { echo "usage: table.sh LOG..." >&2; exit 2; }
awk '
FNR == 1 { f++; name[f] = FILENAME; sub(/.*\//, "", name[f]); sub(/\.sh\.log$/, "", name[f]) }
# the row: the op, with the weight or cache type, matvec (up to 8 rows)
# or GEMM, prefill or (one query) split decode, the RoPE layout
function row(op, cs,   t) {
	t = ""
	if (match(cs, /^(bf16|f32|f16|q[4-8]_[01K]|q[4-8]_K)/))
		t = substr(cs, RSTART, RLENGTH)
	if (op == "matmul") {
		match(cs, /_n[0-9]+$/)
		return (substr(cs, RSTART + 2) + 0 <= 8 ? "matvec " : "gemm ") t
	}
	if (op == "attention" && t != "")
		return op " " t (cs ~ /_n1$/ ? " decode" : " prefill")
	if (op == "get_rows" || op == "kv_store")
		return op " " t
	if (op == "rope")
		return op " " (cs ~ /^neox/ ? "neox" : "adjacent")
	return op
}
$1 == "maxerr" {
	r = row($2, $3)
	if (!(r in seen)) { seen[r] = 1; ops[++n] = r }
	k = r SUBSEP f
	if (!(k in e) || $4 + 0 > e[k]) e[k] = $4 + 0
	if (!(r in tol) || $5 + 0 > tol[r]) tol[r] = $5 + 0
}
END {
	printf "%-26s", "op"
	for (i = 1; i <= f; i++) printf " %12s", name[i]
	printf " %8s\n", "tol"
	for (j = 1; j <= n; j++) {
		printf "%-26s", ops[j]
		for (i = 1; i <= f; i++) {
			k = ops[j] SUBSEP i
			if (k in e) printf " %12.3g", e[k]; else printf " %12s", "-"
		}
		printf " %8.0e\n", tol[ops[j]]
	}
}' "$@"
