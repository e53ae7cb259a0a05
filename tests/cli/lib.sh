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

# wait_for COMMAND...: run COMMAND every 10 ms until it succeeds. A test
# that must act while lpipe is at a known point waits for a sign of that
# point (a file, a line of output), never for a fixed time. Returns 1 only
# after 300 s, to end a hung test: the bound is not a timing assertion.
wait_for() {
	wait_n=0
	until "$@"; do
		wait_n=$((wait_n + 1))
		[ "$wait_n" -ge 30000 ] && return 1
		sleep 0.01
	done
}

# start_stub PLAN: start tests/tools/openai_stub.py (python3) with the
# reply statuses PLAN and a fresh log; sets STUB_PID, PORT and LOG
# ($WORK/stub.log), and kills a stub this test started before. The
# environment's STUB_HOLD and STUB_GATE reach the stub.
STUB_PID=
start_stub() {
	[ -n "$STUB_PID" ] && kill "$STUB_PID" 2>/dev/null && wait "$STUB_PID" 2>/dev/null
	LOG=$WORK/stub.log
	rm -f "$WORK/port" "$LOG"
	: >"$LOG"
	python3 "$top_srcdir/tests/tools/openai_stub.py" "$WORK/port" "$LOG" "$1" &
	STUB_PID=$!
	wait_for test -s "$WORK/port" || { echo "the stub did not start"; exit 99; }
	PORT=$(cat "$WORK/port")
}

# stub_model FILE: write to FILE the head of a pipeline on the stub
# started by start_stub, up to its "stages:" line.
stub_model() {
	cat >"$1" <<EOT
version: 1
name: $(basename "$1" .yaml)
model:
  backend: openai
  url: http://127.0.0.1:$PORT/v1
  name: stub-model
  timeout: 600s
  retries: 0
  context: 1024
stages:
EOT
}

# stub_pipeline FILE [LINES]: write to FILE a pipeline of one request to
# the stub started by start_stub (generate, 16 tokens), with LINES (more
# stages) after it.
stub_pipeline() {
	stub_model "$1"
	cat >>"$1" <<EOT
  - generate: {prompt: "Write about lighthouses.", max_total: 16, chunk: 16, overlap: 0}
${2:-}
EOT
}

finish() {
	echo "# $n_ok passed, $n_fail failed"
	[ "$n_fail" -eq 0 ]
}
