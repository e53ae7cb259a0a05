#!/bin/sh
# serve-life.sh - the life of lpipe serve: SIGTERM stops admission (503),
# cancels what waits, lets the running run finish and exits 0; a run that
# outlasts --drain-timeout is cancelled; kill -9 loses only what was in
# flight and the next start is clean. Every wait is for a sign (a gate
# file of the stub, a log line, the process's exit), never a sleep.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/serve_lib.sh"

gated_setup
ARGS="--pipelines $WORK/pipelines --mem-budget 256MiB --jobs 1 --queue 4"

# -- SIGTERM: drain -------------------------------------------------------
# --client-timeout 1: an event stream outlives the idle timeout
start_serve $ARGS --drain-timeout 300 --client-timeout 1
upload "$DATA/small.txt"
submit "{\"pipeline\":\"gated\",\"document\":\"$DOC\"}"
A=$RUN
wait_for test -e "$G/arrived.1" || fail "run A never started"
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
B=$RUN
$CLIENT "$SPORT" events "$A" >"$WORK/events" 2>&1 &
EV=$!
wait_for grep -q '^progress ' "$WORK/events"
# a keep-alive comes after 5 s without news: the stream was quiet for
# longer than the connection's idle timeout and is still open
kept_or_cut() { grep -q '^comment keep-alive' "$WORK/events" || ! kill -0 "$EV" 2>/dev/null; }
wait_for kept_or_cut
grep -q '^comment keep-alive' "$WORK/events" && kill -0 "$EV" 2>/dev/null &&
	ok "a quiet event stream outlives --client-timeout" || fail "the stream was cut"
kill -TERM "$SPID"
wait_for grep -q "SIGTERM: draining" "$SLOG" || fail "no word of draining"
api GET /v1/health
expect_status "health while draining" 503 '"status":"draining"'
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
expect_status "a new run while draining" 503 "shutting down"
api GET "/v1/runs/$B"
expect_status "the queued run is cancelled" 200 '"state":"cancelled"' "shut down before"
api GET "/v1/runs/$A"
expect_status "the running run goes on" 200 '"state":"running"'
touch "$G/open.1"
src=0
wait "$SPID" || src=$?
SPID=
[ "$src" = 0 ] && ok "exit 0 once the running run finished" || fail "exit $src"
wait "$EV"
tail -1 "$WORK/events" | grep -q '"state":"done"' && ok "the drained run ended done" ||
	fail "events of the drained run: $(tail -2 "$WORK/events")"
grep -q "stopped" "$SLOG" && ok "the log says it stopped" || fail "log: $(cat "$SLOG")"

# -- a run that outlasts --drain-timeout: cancelled inside its stage ----------
start_serve $ARGS --drain-timeout 0
upload "$DATA/small.txt"
submit "{\"pipeline\":\"gated\",\"document\":\"$DOC\"}"
wait_for test -e "$G/arrived.2" || fail "the run never started"
kill -TERM "$SPID"
src=0
wait "$SPID" || src=$?
SPID=
[ "$src" = 0 ] && ok "exit 0 past the drain timeout" || fail "exit $src past the drain timeout"
# its model request is still held by the stub: the cancel gives it up
! grep -q "abandoned" "$SLOG" && ok "the held run stopped at the cancel, nothing abandoned" ||
	fail "log: $(cat "$SLOG")"
touch "$G/open.2"

# -- kill -9, then a clean start --------------------------------------------
start_serve $ARGS
upload "$DATA/small.txt"
submit "{\"pipeline\":\"gated\",\"document\":\"$DOC\"}"
OLD=$RUN
wait_for test -e "$G/arrived.3" || fail "the run never started"
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
SPID=
touch "$G/open.3"
start_serve $ARGS
api GET /v1/health
expect_status "the next start serves" 200 '"queued":0,"running":0'
api GET "/v1/runs/$OLD"
expect_status "the run in flight is gone, not half there" 404
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
expect_status "documents were in memory only: upload again" 404 "no document"
upload "$DATA/small.txt"
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
$CLIENT "$SPORT" wait "$RUN" done failed >"$WORK/r.json"
grep -q '"state": "done"' "$WORK/r.json" && ok "a run after the restart" || fail "$(cat "$WORK/r.json")"
ls "$WORK" | grep -q 'ready\.tmp' && fail "a temporary ready file is left" ||
	ok "no half-written file left"
stop_serve
[ "$src" = 0 ] && ok "exit 0" || fail "exit $src"
finish
