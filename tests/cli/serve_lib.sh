# serve_lib.sh - helpers of tests/cli/serve*.sh, sourced after lib.sh.
#
# start_serve ARGS...: start `lpipe serve` on a free loopback port with
# ARGS, wait for its ready file (never for a time); sets SPID, SPORT and
# SLOG. stop_serve: SIGTERM, wait, the exit status in $src.
# api METHOD PATH [BODY_FILE] [Header: value]...: one request through
# serve_client.py (urllib); the status in $st, the body in $OUT.
# body_has DESCRIPTION FRAGMENT...: $OUT holds each fragment.

command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is needed"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "skip: curl is needed"; exit 77; }
"$LPIPE" serve --pipelines "$WORK/none" 2>&1 | grep -q "built without libmicrohttpd" &&
	{ echo "skip: lpipe built without libmicrohttpd"; exit 77; }

CLIENT="python3 $top_srcdir/tests/cli/serve_client.py"
SPID=
trap '[ -n "$SPID" ] && kill -9 "$SPID" 2>/dev/null; [ -n "${STUB_PID:-}" ] && kill "$STUB_PID" 2>/dev/null; rm -rf "$WORK"' EXIT

start_serve() {
	SLOG=$WORK/serve.log
	rm -f "$WORK/ready"
	"$LPIPE" serve --listen 127.0.0.1:0 --ready-file "$WORK/ready" "$@" >"$SLOG" 2>&1 &
	SPID=$!
	wait_for serve_up || { echo "lpipe serve did not start:"; cat "$SLOG"; exit 99; }
	SPORT=$(cat "$WORK/ready")
}
serve_up() { test -s "$WORK/ready" || ! kill -0 "$SPID" 2>/dev/null; }

stop_serve() {
	src=0
	kill -TERM "$SPID" 2>/dev/null
	wait "$SPID" || src=$?
	SPID=
}

api() {
	$CLIENT "$SPORT" req "$@" >"$OUT" 2>"$ERR" || { echo "client failed: $(cat "$ERR")"; }
	st=$(head -1 "$OUT")
}

# expect_status DESCRIPTION STATUS [FRAGMENT...]
expect_status() {
	what=$1
	want=$2
	shift 2
	if [ "$st" != "$want" ]; then
		fail "$what: status $st, expected $want: $(tail -n +2 "$OUT" | head -c 300)"
		return
	fi
	for frag in "$@"; do
		if ! grep -qF -- "$frag" "$OUT"; then
			fail "$what: the answer lacks '$frag': $(tail -n +2 "$OUT" | head -c 300)"
			return
		fi
	done
	ok "$what"
}

# json_field FIELD: a top-level field of the JSON body in $OUT
json_field() {
	tail -n +2 "$OUT" | grep -v '^retry-after' |
		python3 -c 'import json,sys; v=json.load(sys.stdin); print(v.get(sys.argv[1], ""))' "$1"
}

# upload FILE: POST it as a document; its id in $DOC
upload() {
	api POST /v1/documents "$1"
	DOC=$(json_field id)
}

# submit JSON: POST /v1/runs; the run id in $RUN (empty unless 202)
submit() {
	printf '%s' "$1" >"$WORK/body.json"
	api POST /v1/runs "$WORK/body.json" "Content-Type: application/json"
	RUN=
	[ "$st" = 202 ] && RUN=$(json_field id)
	return 0
}

# A pipeline on the stub model server (tests/tools/openai_stub.py): it
# holds each request while STUB_GATE says so, so a test knows a run is
# running and for how long. Written into the directory $1 as gated.yaml.
gated_pipeline() {
	stub_pipeline "$1/gated.yaml" "  - verify: {min_words: 1, on_fail: warn}"
}

# gated_setup: the stub model server with its gate in $G, and a pipelines
# directory $WORK/pipelines holding extractive.yaml and gated.yaml.
gated_setup() {
	G=$WORK/gate
	mkdir -p "$G" "$WORK/pipelines"
	STUB_GATE=$G start_stub 200
	cp "$PIPELINES/extractive-summary.yaml" "$WORK/pipelines/extractive.yaml"
	gated_pipeline "$WORK/pipelines"
}
