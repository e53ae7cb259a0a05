#!/bin/sh
# openai.sh - model backend openai against a stub server on loopback
# (tests/tools/openai_stub.py): requests and their key, retries with
# back-off on 429 and 5xx, giving up after the bound, errors that fail at
# once, model.concurrency capping the requests in flight of a batch, and
# the key kept out of every output, trace and error.
. "$top_srcdir/tests/cli/lib.sh"

command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is needed for the stub"; exit 77; }

KEY=sk-lpipe-test-5f1c9e0a7b
export LPIPE_TEST_KEY=$KEY STUB_KEY=$KEY
trap '[ -n "$STUB_PID" ] && kill "$STUB_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
# Everything lpipe wrote, for the key search at the end.
ALL=$WORK/all-output
: >"$ALL"
keep() { cat "$OUT" "$ERR" >>"$ALL"; }

# remote RETRIES [EXTRA_MODEL_KEYS]: a one-request pipeline on the stub.
remote() {
	pipeline remote <<EOT
version: 1
model:
  backend: openai
  url: http://127.0.0.1:$PORT/v1
  name: stub-model
  api_key_env: LPIPE_TEST_KEY
  timeout: 10s
  retries: $1
  context: 1024
${2:-}
stages:
  - generate: {prompt: "Write about lighthouses.", max_total: 16, chunk: 16, overlap: 0}
EOT
}

requests() { wc -l <"$LOG" | tr -d ' '; }

# -- configuration ---------------------------------------------------------
start_stub 200
P=$(remote 2)
lp check "$P"
keep
expect "check accepts backend openai" 0
expect_out "check prints the variable's name" "api_key_env: LPIPE_TEST_KEY" "backend: openai" \
	"timeout: 10000ms" "retries: 2"
# refused NAME MODEL WHAT MESSAGE: `lpipe check` of a generate pipeline
# whose model section is MODEL fails with exit status 2 and MESSAGE.
refused() {
	P=$(printf 'version: 1\nmodel: %s\nstages: [{generate: {prompt: "x"}}]\n' "$2" |
		pipeline "$1")
	lp check "$P"
	expect "$3" 2 "$4"
}
refused nourl '{backend: openai, name: m}' "backend openai without url" \
	"needs 'url' and 'name'"
refused withpath '{backend: openai, url: "http://127.0.0.1:1/v1", name: m, path: /x.gguf}' \
	"backend openai with a model path" "use 'tokenizer'"
refused local '{url: "http://127.0.0.1:1/v1"}' "url without backend openai" \
	"'url' needs 'backend: openai'"
refused badtime '{backend: openai, url: "http://127.0.0.1:1/v1", name: m, timeout: soon}' \
	"a timeout that is not a duration" "must be a duration"

# -- one request -----------------------------------------------------------
P=$(remote 2)
lp run "$P" "$DATA/small.txt" --format json
keep
expect "a request to the stub" 0
expect_out "its reply is the answer" '"stub reply 1 to Write about lighthouses."' "tokens estimated"
if [ "$(requests)" = 1 ] && grep -q "^1 200 auth=ok model=stub-model max_tokens=16 " "$LOG"; then
	ok "one request with the key, the model name and max_tokens"
else
	fail "the stub saw: $(cat "$LOG")"
fi
LPIPE_TEST_KEY= lp run "$P" "$DATA/small.txt"
keep
expect "an empty key variable" 2 "'LPIPE_TEST_KEY', which is not set"
P=$(remote 2 "  tokenizer: $WORK/none.gguf")
lp run "$P" "$DATA/small.txt"
expect "a missing tokenizer file" 3 "none.gguf" "unable to open the tokenizer"

# -- retries ---------------------------------------------------------------
start_stub 429,500,200
P=$(remote 4)
lp run "$P" "$DATA/small.txt" --format json -v
keep
expect "429 then 500 then success" 0 "HTTP 429: retrying in 500 ms (attempt 2 of 5)" \
	"HTTP 500: retrying in 1000 ms (attempt 3 of 5)"
expect_out "the third reply is the answer" '"stub reply 3 to Write about lighthouses."'
[ "$(requests)" = 3 ] && ok "three requests" || fail "$(requests) requests, expected 3"

start_stub 503
P=$(remote 2)
lp run "$P" "$DATA/small.txt"
keep
expect "503 until the bound" 3 "'http://127.0.0.1:$PORT/v1/chat/completions' answered HTTP 503" \
	"stub status 503" "(3 attempts)"
[ "$(requests)" = 3 ] && ok "1 + 2 retries, then no more" || fail "$(requests) requests, expected 3"

start_stub 401
P=$(remote 4)
lp run "$P" "$DATA/small.txt"
keep
expect "401 fails at once" 2 "answered HTTP 401" "(1 attempt)"
[ "$(requests)" = 1 ] && ok "no retry on 401" || fail "$(requests) requests, expected 1"

# -- several threads on one client ------------------------------------------
start_stub 200
PAR=${top_builddir:-.}/tests/tools/openai_par
if [ -x "$PAR" ]; then
	rc=0
	"$PAR" "http://127.0.0.1:$PORT/v1" 8 >"$OUT" 2>"$ERR" || rc=$?
	keep
	answered=$(grep -c "^[0-7]: stub reply [1-8] to question [0-7]$" "$OUT")
	mine=$(awk -F'question ' '$1 ~ /^[0-9]+: / { split($1, a, ":"); if (a[1] == $2) n++ } END { print n + 0 }' "$OUT")
	if [ "$rc" = 0 ] && [ "$answered" = 8 ] && [ "$mine" = 8 ] && [ "$(requests)" = 8 ] &&
		[ "$(grep -c ' auth=ok ' "$LOG")" = 8 ]; then
		ok "8 threads on one client: 8 requests with the key, each thread its own reply"
	else
		fail "8 threads: status $rc, $answered replies ($mine to their own question), $(requests) requests"
		head -3 "$OUT" "$ERR"
	fi
else
	fail "no $PAR"
fi

# A back-off gives up its slot: two threads on a client with one slot,
# the first request refused with 429. The other thread's request goes
# next (it has waited for the slot since the start), and the refused one
# is tried again after it; a client that slept holding the slot would
# send the retry second.
start_stub 429,200
if [ -x "$PAR" ]; then
	rc=0
	"$PAR" "http://127.0.0.1:$PORT/v1" 2 1 1 >"$OUT" 2>"$ERR" || rc=$?
	keep
	said() { sed -n "${1}s/.* said=\\([^ ]*\\) .*/\\1/p" "$LOG"; }
	if [ "$rc" = 0 ] && [ "$(requests)" = 3 ] && [ "$(said 1)" = "$(said 3)" ] &&
		[ "$(said 2)" != "$(said 1)" ] && ! grep -qv ' open=1$' "$LOG"; then
		ok "one slot: the other thread's request went during the back-off ($(said 1), $(said 2), $(said 3))"
	else
		fail "one slot, 429 first: status $rc, the stub saw: $(cat "$LOG")"
	fi
fi

# -- requests in flight: model.concurrency --------------------------------
# Eight documents on six batch workers, one request each; the stub holds
# every request 0.3 s and records how many it had open at once. With
# concurrency 2 that is exactly 2 (the hold lets 2 meet, and a client
# without the cap would send up to 6); with 6 it is more than 2, so the
# cap, not the batch, is what held it. STUB_HOLD's second figure makes the
# stub wait (up to 60 s) for that many to meet, so scheduling cannot hide
# them; it never makes more arrive.
mkdir -p "$WORK/docs"
for i in 1 2 3 4 5 6 7 8; do
	echo "Document $i is about lighthouse number $i and its keeper." >"$WORK/docs/d$i.txt"
done
# inflight CONCURRENCY GATHER [JOBS]: the batch (-j JOBS, default 6; "-":
# no -j), then $MAXOPEN and $(requests)
inflight() {
	STUB_HOLD=0.3,$2
	export STUB_HOLD
	start_stub 200
	unset STUB_HOLD
	P=$(remote 0)
	jobs=${3:-6}
	if [ "$jobs" = - ]; then
		lp batch "$P" "$WORK/docs" -o "$WORK/in-flight-$1-$jobs" --set "model.concurrency=$1"
	else
		lp batch "$P" "$WORK/docs" -o "$WORK/in-flight-$1-$jobs" -j "$jobs" \
			--set "model.concurrency=$1"
	fi
	keep
	expect "batch -j $jobs with model.concurrency=$1" 0 "8 of 8 documents"
	MAXOPEN=$(sed -n 's/.* open=\([0-9]*\)$/\1/p' "$LOG" | sort -n | tail -1)
	echo "# model.concurrency=$1: $(requests) requests, at most ${MAXOPEN:-none} open at once"
}
inflight 2 2
[ "$(requests)" = 8 ] && [ "$MAXOPEN" = 2 ] && ok "concurrency 2: never more than 2 in flight" ||
	fail "concurrency 2: $(requests) requests, at most ${MAXOPEN:-none} open at once"
inflight 6 3
[ "$(requests)" = 8 ] && [ "${MAXOPEN:-0}" -gt 2 ] &&
	ok "concurrency 6: $MAXOPEN in flight at once, the cap is what limited them" ||
	fail "concurrency 6: $(requests) requests, at most ${MAXOPEN:-none} open at once"
# without -j a batch keeps as many documents in flight as the model serves
# at once: 3 meet (one worker would never make more than 1 open)
inflight 3 3 -
[ "$(requests)" = 8 ] && [ "$MAXOPEN" = 3 ] &&
	ok "no -j: model.concurrency=3 documents in flight, 3 requests at once" ||
	fail "no -j, concurrency 3: $(requests) requests, at most ${MAXOPEN:-none} open at once"

# -- no server -------------------------------------------------------------
kill "$STUB_PID" && wait "$STUB_PID" 2>/dev/null
STUB_PID=
P=$(remote 1)
lp run "$P" "$DATA/small.txt" --format json
keep
expect "no server" 3 "unable to reach 'http://127.0.0.1:$PORT/v1/chat/completions'" \
	"(2 attempts)"

# -- the key ---------------------------------------------------------------
if grep -qF "$KEY" "$ALL"; then
	fail "the API key appears in lpipe's output:"
	grep -F "$KEY" "$ALL" | head -3
else
	ok "the API key appears in no output, trace or error ($(wc -l <"$ALL" | tr -d ' ') lines searched)"
fi
finish
