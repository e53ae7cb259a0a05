# lib.sh - helpers for the CLI shell tests, sourced by each tests/cli/*.sh.
#
# The test harness exports LPIPE (the built binary) and top_srcdir. Each
# check prints "ok"/"FAIL" with a description; a script exits 1 if any
# check failed, 0 otherwise (77 means skipped, by automake's convention).

: "${LPIPE:?LPIPE must name the lpipe binary}"
: "${top_srcdir:?top_srcdir must be set}"

n_fail=0
n_ok=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lpipe-cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/stdout
ERR=$WORK/stderr
DATA=$top_srcdir/tests/data/cli
PIPELINES=$top_srcdir/pipelines

ok() { n_ok=$((n_ok + 1)); echo "ok - $*"; }
fail() { n_fail=$((n_fail + 1)); echo "FAIL - $*"; }

# Run lpipe with the given arguments; stdout in $OUT, stderr in $ERR, the
# exit status in $rc. A status above 125 (a signal: crash) is always a failure.
lp() {
	rc=0
	"$LPIPE" "$@" >"$OUT" 2>"$ERR" </dev/null || rc=$?
	if [ "$rc" -gt 125 ]; then
		fail "lpipe $* died with status $rc"
		sed 's/^/  stderr: /' "$ERR" | head -5
	fi
}

# Same, reading standard input from a file.
lp_stdin() {
	input=$1
	shift
	rc=0
	"$LPIPE" "$@" >"$OUT" 2>"$ERR" <"$input" || rc=$?
}

# expect DESCRIPTION STATUS [FRAGMENT...]: the last lp exited with STATUS
# and its stderr contains every FRAGMENT (fixed strings).
expect() {
	what=$1
	want=$2
	shift 2
	if [ "$rc" -ne "$want" ]; then
		fail "$what: exit status $rc, expected $want"
		sed 's/^/  stderr: /' "$ERR" | head -5
		return
	fi
	for frag in "$@"; do
		if ! grep -qF -- "$frag" "$ERR"; then
			fail "$what: stderr lacks '$frag'"
			sed 's/^/  stderr: /' "$ERR" | head -5
			return
		fi
	done
	ok "$what"
}

# expect_out DESCRIPTION FRAGMENT...: stdout of the last lp contains each FRAGMENT.
expect_out() {
	what=$1
	shift
	for frag in "$@"; do
		if ! grep -qF -- "$frag" "$OUT"; then
			fail "$what: stdout lacks '$frag'"
			return
		fi
	done
	ok "$what"
}

# A pipeline file in $WORK from the text on standard input; prints its path.
pipeline() {
	f=$WORK/$1.yaml
	cat >"$f"
	echo "$f"
}

finish() {
	echo "# $n_ok passed, $n_fail failed"
	[ "$n_fail" -eq 0 ]
}
