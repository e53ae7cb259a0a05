#!/bin/sh
# serve-hostile.sh - lpipe serve against clients that mean harm: a 10 GB
# Content-Length, huge headers, chunked bodies past the limit or
# malformed, a client that sends a byte a second, 1,000 idle connections,
# path traversal in names, ids and document paths (symlinks included), a
# missing or wrong token, an address off loopback without one, and the
# connection limit. Each
# is refused with its status and the server goes on serving the others.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/serve_lib.sh"

mkdir -p "$WORK/pipelines" "$WORK/docs/sub" "$WORK/outside"
cp "$PIPELINES/extractive-summary.yaml" "$WORK/pipelines/extractive.yaml"
cp "$DATA/small.txt" "$WORK/docs/sub/small.txt"
echo "secret" >"$WORK/outside/secret.txt"
ln -s "$WORK/outside/secret.txt" "$WORK/docs/link.txt"
ln -s "$WORK/outside" "$WORK/docs/dirlink"
TOKEN_VALUE=tok-5b7e0c1d9a2f4e6b8c0d
printf '%s\n' "$TOKEN_VALUE" >"$WORK/token"
chmod 600 "$WORK/token"

# -- the command line -----------------------------------------------------
lp serve --help
expect "serve --help" 0
cp "$OUT" "$WORK/help"
lp help serve
cmp -s "$OUT" "$WORK/help" && ok "serve --help = help serve" || fail "serve --help differs"
lp serve --jobs 0
expect "--jobs 0" 2 "--jobs"
lp serve --mem-budget 64MiB --doc-cache 64MiB
expect "a document cache as large as the budget" 2 "smaller than --mem-budget"
lp serve --listen nowhere
expect "an address that is no ADDR:PORT" 2 "is no numeric ADDR:PORT"

# -- off loopback ---------------------------------------------------------
lp serve --listen 0.0.0.0:0 --pipelines "$WORK/pipelines"
expect "off loopback without a token" 2 "needs --token-file"
lp serve --listen 127.0.0.1:0 --pipelines "$WORK/pipelines" --token-file "$WORK/none"
expect "an unreadable token file" 2 "cannot read --token-file"
printf 'short\n' >"$WORK/short"
lp serve --listen 127.0.0.1:0 --pipelines "$WORK/pipelines" --token-file "$WORK/short"
expect "a token too short" 2 "shorter than 16 bytes"

start_serve --pipelines "$WORK/pipelines" --mem-budget 256MiB --doc-cache 16MiB \
	--max-body 1MiB --max-header 16KiB --client-timeout 2 --documents "$WORK/docs" \
	--token-file "$WORK/token"

# -- the token ------------------------------------------------------------
api GET /v1/health
expect_status "health needs no token" 200 '"token":true'
api GET /v1/pipelines
expect_status "no token" 401 "bearer token"
TOKEN=wrong-token-0000000000 api GET /v1/pipelines
expect_status "a wrong token" 401
TOKEN=${TOKEN_VALUE}x api GET /v1/pipelines
expect_status "the token and one byte more" 401
c=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN_VALUE" \
	"http://127.0.0.1:$SPORT/v1/pipelines")
[ "$c" = 200 ] && ok "curl with the token" || fail "curl with the token: $c"
export TOKEN=$TOKEN_VALUE
api GET /metrics
expect_status "metrics with the token" 200 'lpipe_serve_rejections_total{cause="unauthorized"} 3'

# -- documents by path: inside --documents only ---------------------------
path_run() { # DESCRIPTION STATUS PATH FRAGMENT
	submit "{\"pipeline\":\"extractive\",\"document_path\":\"$3\"}"
	expect_status "$1" "$2" "$4"
}
path_run "a document inside --documents" 202 "sub/small.txt"
path_run "../ out of --documents" 403 "../outside/secret.txt" "outside the documents"
path_run "a symlink out of --documents" 403 "link.txt" "outside the documents"
path_run "a directory symlink out of --documents" 403 "dirlink/secret.txt" "outside"
path_run "an absolute path" 400 "/etc/passwd" "relative name"
path_run "a missing file" 404 "sub/none.txt" "no document"
submit '{"pipeline":"..%2F..%2Fetc","document_path":"sub/small.txt"}'
expect_status "an escaped path for a pipeline" 400 "bare name"
printf 'pipeline=..%%2Fpipelines%%2Fextractive&document_path=sub%%2Fsmall.txt' >"$WORK/form"
api POST /v1/runs "$WORK/form" "Content-Type: application/x-www-form-urlencoded"
expect_status "a form with a path for a pipeline" 400 "bare name"
grep -q secret "$SLOG" && fail "the log shows a file outside" || ok "nothing outside was read"

# -- bodies and headers ---------------------------------------------------
hostile() { # DESCRIPTION CASE STATUS...
	what=$1
	got=$($CLIENT "$SPORT" hostile "$2")
	shift 2
	for s in "$@"; do
		[ "$got" = "$s" ] && { ok "$what: $got"; return; }
	done
	fail "$what: $got, expected $*"
}
hostile "a 10 GB Content-Length" huge-length 413
hostile "200 KB of headers" huge-header 431
hostile "chunks past --max-body" chunked-over 413
hostile "a chunk size that is no number" chunked-bad 400
hostile "a chunk size past 64 bits" chunked-huge-size 413
hostile "Content-Length beside chunked (smuggling)" both-lengths 400
hostile "a request line of binary" bad-request-line closed
python3 -c "print('[' * 2040 + ']' * 2040)" >"$WORK/deep.json"
api POST /v1/runs "$WORK/deep.json" "Content-Type: application/json"
expect_status "arrays nested 2040 deep" 400 "JSON object"
python3 -c "print('{\"set\":' + '{\"a\":' * 2040 + '1' + '}' * 2041)" >"$WORK/deep.json"
api POST /v1/runs "$WORK/deep.json" "Content-Type: application/json"
expect_status "objects nested 2040 deep" 400 "scalar value"
head -c 2000000 /dev/zero >"$WORK/2mb"
# answered 413 before the body is read: urllib dies on the closed pipe,
# curl reads the answer
c=$(curl -s -o "$WORK/c.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
	--data-binary "@$WORK/2mb" "http://127.0.0.1:$SPORT/v1/documents")
[ "$c" = 413 ] && grep -q "larger than" "$WORK/c.json" && ok "a document over --max-body: 413" ||
	fail "a document over --max-body: $c $(cat "$WORK/c.json")"
api GET /v1/health
expect_status "still serving after all that" 200

# -- slow and idle clients --------------------------------------------------
$CLIENT "$SPORT" hostile slow >"$WORK/slow" &
SLOW=$!
api GET /v1/health
expect_status "serving while a client sends a byte a second" 200
wait "$SLOW"
[ "$(cat "$WORK/slow")" = closed ] && ok "the slow client was cut off" ||
	fail "the slow client: $(cat "$WORK/slow")"
$CLIENT "$SPORT" idle 1000 >"$WORK/idle" 2>&1
[ "$(cat "$WORK/idle")" = "served 1000" ] && ok "1,000 idle connections, others still served" ||
	fail "idle connections: $(cat "$WORK/idle")"
api GET /v1/health
expect_status "serving after the idle connections" 200
grep -q "$TOKEN_VALUE" "$SLOG" && fail "the token is in the log" || ok "the token is never logged"
stop_serve
[ "$src" = 0 ] && ok "exit 0 after SIGTERM" || fail "exit $src after SIGTERM"

# -- the connection limit ---------------------------------------------------
unset TOKEN
start_serve --pipelines "$WORK/pipelines" --max-connections 8
got=$($CLIENT "$SPORT" limit 8)
[ "$got" = "extra closed after 200" ] &&
	ok "--max-connections 8: a ninth is turned away, then served again" ||
	fail "the connection limit: $got"
stop_serve
finish
