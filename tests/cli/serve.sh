#!/bin/sh
# serve.sh - lpipe serve through real clients (curl and Python's urllib):
# every endpoint, documents by content hash, runs to their report, the
# event stream, admission with a bounded queue (429 + Retry-After), a run
# that can never fit (413), cancellation queued and running, the request
# errors, and /metrics. Runs are held at known points by a stub model
# server (STUB_GATE), never by a sleep.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/serve_lib.sh"

gated_setup
# a pipeline that does not load is left out, the others are served
printf 'version: 1\nstages: [{nosuch: {}}]\n' >"$WORK/pipelines/broken.yaml"

start_serve --pipelines "$WORK/pipelines" --mem-budget 256MiB --doc-cache 8MiB \
	--jobs 1 --queue 2
grep -q "pipeline 'broken' is not offered" "$SLOG" && ok "a broken pipeline is left out" ||
	fail "no word of the broken pipeline: $(cat "$SLOG")"

# -- health, pipelines ----------------------------------------------------
api GET /v1/health
expect_status "GET /v1/health" 200 '"status":"ok"' '"version":'
c=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SPORT/v1/health")
[ "$c" = 200 ] && ok "curl: GET /v1/health" || fail "curl: GET /v1/health: $c"
api GET /v1/pipelines
expect_status "GET /v1/pipelines" 200 '"name":"extractive"' '"name":"gated"'
grep -q broken "$OUT" && fail "the broken pipeline is listed" || ok "only loaded pipelines listed"

# -- documents ------------------------------------------------------------
upload "$DATA/small.txt"
sha=$(sha256sum "$DATA/small.txt" | cut -d' ' -f1)
expect_status "POST /v1/documents: new" 201 '"created":true'
[ "$DOC" = "$sha" ] && ok "the id is the SHA-256 of the bytes" || fail "id $DOC, sha256 $sha"
api POST /v1/documents "$DATA/small.txt"
expect_status "the same bytes again: the same document" 200 '"created":false' "$sha"
c=$(curl -s -o "$WORK/c.json" -w '%{http_code}' --data-binary "@$DATA/small.txt" \
	"http://127.0.0.1:$SPORT/v1/documents")
[ "$c" = 200 ] && grep -q "$sha" "$WORK/c.json" && ok "curl: upload" || fail "curl: upload: $c"
: >"$WORK/empty"
api POST /v1/documents "$WORK/empty"
expect_status "an empty document" 400 "empty"
head -c 9000000 /dev/zero | tr '\0' 'a' >"$WORK/big.txt"
api POST /v1/documents "$WORK/big.txt"
expect_status "a document larger than the cache" 413 "document cache"
api GET /v1/documents
expect_status "GET /v1/documents: not a method it takes" 405
# the name an upload gives is what tells Markdown from text
printf '# Keeping\n\nA *lighthouse* keeper trims the wicks every night.\n\n## Lenses\n\nThe lens bends the light into a beam.\n' >"$WORK/notes.md"
api POST "/v1/documents?name=../x/notes.md" "$WORK/notes.md"
expect_status "an upload with its file name, the path cut off" 201 '"name":"notes.md"'
MD=$(json_field id)

# -- a run, to its report -------------------------------------------------
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
expect_status "POST /v1/runs" 202 '"state":"queued"'
$CLIENT "$SPORT" wait "$RUN" done failed >"$WORK/run.json"
if python3 - "$WORK/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["state"] == "done", r
assert r["result"]["pipeline"]["name"] == "extractive-summary", r["result"]["pipeline"]
assert r["result"]["summary"], "no summary"
assert r["peak_bytes"] > 0 and r["planned_bytes"] >= r["peak_bytes"], r
PY
then ok "GET /v1/runs/ID: done, with the JSON report, peak within the plan"
else fail "the finished run: $(head -c 400 "$WORK/run.json")"; fi
"$LPIPE" run "$PIPELINES/extractive-summary.yaml" "$DATA/small.txt" --format json >"$WORK/cli.json" 2>/dev/null
if python3 - "$WORK/run.json" "$WORK/cli.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["result"]
b = json.load(open(sys.argv[2]))
assert a["summary"] == b["summary"], (a["summary"], b["summary"])
PY
then ok "the same summary as lpipe run --format json"
else fail "the server's summary differs from lpipe run's"; fi
curl -s -D "$WORK/h" -o /dev/null -H 'Content-Type: application/json' \
	-d "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}" "http://127.0.0.1:$SPORT/v1/runs"
grep -qi '^Location: /v1/runs/[0-9a-f]\{32\}' "$WORK/h" && ok "curl: 202 with a Location" ||
	fail "curl: no Location: $(cat "$WORK/h")"
printf 'pipeline=extractive&document=%s' "$DOC" >"$WORK/form"
api POST /v1/runs "$WORK/form" "Content-Type: application/x-www-form-urlencoded"
expect_status "a form body" 202
api DELETE "/v1/runs/$RUN"
expect_status "DELETE of a run that ended" 409 "ended already"
submit "{\"pipeline\":\"extractive\",\"document\":\"$MD\"}"
$CLIENT "$SPORT" wait "$RUN" done failed >"$WORK/md.json"
# as lpipe run reads the same file under the same name: the same format,
# or the same refusal (a build without the Markdown reader)
"$LPIPE" run "$PIPELINES/extractive-summary.yaml" "$WORK/notes.md" --format json \
	>"$WORK/md-cli.json" 2>"$WORK/md-cli.err" || true
if python3 - "$WORK/md.json" "$WORK/md-cli.json" "$WORK/md-cli.err" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
try:
    cli = json.load(open(sys.argv[2]))
except ValueError:
    cli = None
if cli is None:
    err = open(sys.argv[3]).read().split("error: ", 1)[-1].strip()
    assert r["state"] == "failed" and err in r["error"], (r, err)
else:
    assert r["result"]["document"]["format"] == cli["document"]["format"], r
PY
then ok "the upload named notes.md is read as lpipe run reads notes.md"
else fail "the .md upload: $(head -c 300 "$WORK/md.json")"; fi

# -- request errors -------------------------------------------------------
bad() { # DESCRIPTION STATUS JSON FRAGMENT
	submit "$3"
	expect_status "$1" "$2" "$4"
}
bad "malformed JSON" 400 '{"pipeline": "extractive",' "malformed JSON"
bad "not an object" 400 '[1,2]' "JSON object"
bad "an unknown field" 400 "{\"pipeline\":\"extractive\",\"document\":\"$DOC\",\"x\":1}" \
	"unknown field 'x'"
bad "a path for a pipeline" 400 "{\"pipeline\":\"../../etc/passwd\",\"document\":\"$DOC\"}" \
	"bare name"
bad "a pipeline file name" 400 "{\"pipeline\":\"extractive.yaml\",\"document\":\"$DOC\"}" \
	"bare name"
bad "no such pipeline" 404 "{\"pipeline\":\"nosuch\",\"document\":\"$DOC\"}" \
	"no pipeline named 'nosuch'"
bad "a path for a document" 400 '{"pipeline":"extractive","document":"../../etc/passwd"}' \
	"64 hex digits"
bad "no such document" 404 \
	"{\"pipeline\":\"extractive\",\"document\":\"$(printf '%064d' 0)\"}" "no document"
bad "document_path without --documents" 400 \
	'{"pipeline":"extractive","document_path":"small.txt"}' "--documents"
bad "model.path from a client" 400 \
	"{\"pipeline\":\"extractive\",\"document\":\"$DOC\",\"set\":{\"model.path\":\"/x.gguf\"}}" \
	"not one a client may set"
bad "prompt_file from a client" 400 \
	"{\"pipeline\":\"gated\",\"document\":\"$DOC\",\"set\":{\"stages.generate.prompt_file\":\"/etc/passwd\"}}" \
	"not one a client may set"
bad "a variable in an override" 400 \
	"{\"pipeline\":\"extractive\",\"document\":\"$DOC\",\"set\":{\"stages.split.size\":\"\${HOME}\"}}" \
	"plain word"
bad "an allowed key with a bad value" 400 \
	"{\"pipeline\":\"extractive\",\"document\":\"$DOC\",\"set\":{\"stages.split.size\":\"huge\"}}" \
	"extractive"
bad "a duplicate key" 400 '{"pipeline":"a","pipeline":"b"}' "malformed JSON"
api GET /v1/runs/nosuch
expect_status "GET of no such run" 404
api GET /v1/runs/../../etc/passwd
expect_status "a path in a run id" 404
api PUT /v1/runs "$WORK/form"
expect_status "PUT /v1/runs" 405
api GET /nosuch
expect_status "an unknown path" 404

# -- admission: one job, a queue of two ------------------------------------
submit "{\"pipeline\":\"gated\",\"document\":\"$DOC\",\"question\":\"q\"}"
A=$RUN
wait_for test -e "$G/arrived.1" || fail "run A never reached the model"
api GET "/v1/runs/$A"
expect_status "run A is running" 200 '"state":"running"' '"stage":"1/2 generate"'
submit "{\"pipeline\":\"gated\",\"document\":\"$DOC\"}"
B=$RUN
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
C=$RUN
api GET "/v1/runs/$B"
expect_status "run B waits first in the queue" 200 '"state":"queued"' '"queue_position":1'
api GET "/v1/runs/$C"
expect_status "run C waits behind it (first in, first out)" 200 '"queue_position":2'
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
expect_status "a full queue" 429 "queue is full"
grep -q '^retry-after [1-9]' "$OUT" && ok "429 says Retry-After" || fail "no Retry-After"
api DELETE "/v1/runs/$C"
expect_status "DELETE of a queued run" 202 '"state":"cancelled"'
# the events of a running run: its progress is there before it ends
$CLIENT "$SPORT" events "$A" >"$WORK/events" 2>&1 &
EV=$!
wait_for grep -q '^progress ' "$WORK/events" || fail "no progress event"
grep -q '^content-type text/event-stream' "$WORK/events" && ok "events: text/event-stream" ||
	fail "events: $(head -2 "$WORK/events")"
grep -q '"stage":"1/2 generate"' "$WORK/events" && ok "events: the stage of a running run" ||
	fail "events: $(cat "$WORK/events")"
touch "$G/open.1"
wait "$EV"
tail -1 "$WORK/events" | grep -q '^state .*"state":"done"' && ok "events end with the state done" ||
	fail "events: $(tail -3 "$WORK/events")"
# B runs now; cancel it while its model request is held: it gives the
# request up and stops there, inside its stage (the gate stays shut)
wait_for test -e "$G/arrived.2" || fail "run B never started"
api DELETE "/v1/runs/$B"
expect_status "DELETE of a running run" 202 '"state":"running"'
$CLIENT "$SPORT" wait "$B" cancelled done failed >"$WORK/b.json"
grep -q '"state": "cancelled"' "$WORK/b.json" &&
	grep -q "run cancelled while waiting for the model server" "$WORK/b.json" &&
	ok "the running run stopped inside its stage" || fail "run B: $(cat "$WORK/b.json")"
touch "$G/open"

# -- metrics --------------------------------------------------------------
curl -s "http://127.0.0.1:$SPORT/metrics" >"$WORK/metrics"
for m in 'lpipe_serve_queue_depth 0' 'lpipe_serve_rejections_total{cause="queue_full"} 1' \
	'lpipe_serve_rejections_total{cause="too_large"} 1' 'lpipe_serve_runs{state="cancelled"} 2' \
	'lpipe_tracked_bytes{tag="doc"}' 'lpipe_budget_bytes 268435456' \
	'lpipe_serve_run_seconds_bucket{state="done",le="+Inf"}' 'lpipe_serve_queue_wait_seconds_count'; do
	grep -qF "$m" "$WORK/metrics" && ok "metrics: $m" || fail "metrics lack '$m'"
done
# the OpenAPI file and the server agree: each documented operation,
# asked plainly, answers one of the statuses documented for it
if python3 - "$top_srcdir/man/lpipe-serve.openapi.json" "$SPORT" "$A" <<'PY'
import json, sys, urllib.error, urllib.request
spec, port, run = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
bad = []
for path, ops in spec["paths"].items():
    for method, op in ops.items():
        if method == "parameters":
            continue
        url = "http://127.0.0.1:%s%s" % (port, path.replace("{id}", run))
        body = b"{}" if method == "post" else None
        req = urllib.request.Request(url, data=body, method=method.upper())
        try:
            code = urllib.request.urlopen(req, timeout=60).status
        except urllib.error.HTTPError as e:
            code = e.code
        if str(code) not in op["responses"]:
            bad.append("%s %s: %d" % (method, path, code))
assert not bad, bad
PY
then ok "every operation of the OpenAPI file answers a documented status"
else fail "the OpenAPI file and the server disagree"; fi
peak=$(sed -n 's/^lpipe_tracked_peak_bytes //p' "$WORK/metrics")
[ "$peak" -gt 0 ] && [ "$peak" -le 268435456 ] && ok "tracked peak $peak within the budget" ||
	fail "tracked peak '$peak'"
stop_serve
[ "$src" = 0 ] && ok "SIGTERM: exit 0" || fail "SIGTERM: exit $src"

# -- a run that can never fit: 413 naming its need -------------------------
# the planner's figure for extractive-summary on the document twice over
# (1.76 MB): 2.60 MiB for the document, 13.56 MiB for its verify stage
# (auto keyphrases)
start_serve --pipelines "$WORK/pipelines" --mem-budget 16MiB --doc-cache 2MiB
cat "$top_srcdir/data/debian-reference.en.txt" "$top_srcdir/data/debian-reference.en.txt" \
	>"$WORK/mid.txt"
upload "$WORK/mid.txt"
submit "{\"pipeline\":\"extractive\",\"document\":\"$DOC\"}"
expect_status "a run larger than the budget" 413 "would need 16.15 MiB" \
	"with its largest stage, verify" "more than the 13.00 MiB"
stop_serve

# -- finished runs keep their report, within its room, and nothing else ------
# 40 runs under an 18 MiB budget: reports may take 1.125 MiB (a sixteenth);
# each is about 10 KB, and a run's pipeline (tens of KB of tracked config)
# must not stay behind with it
start_serve --pipelines "$WORK/pipelines" --mem-budget 18MiB --doc-cache 256KiB --queue 64
python3 "$top_srcdir/bench/serve/load.py" "$SPORT" 40 4 extractive "$DATA/small.txt" \
	>"$WORK/load.json" || fail "the load of 40 runs: $(head -c 300 "$WORK/load.json")"
curl -s "http://127.0.0.1:$SPORT/metrics" >"$WORK/metrics"
other=$(sed -n 's/^lpipe_tracked_bytes{tag="other"} //p' "$WORK/metrics")
[ "$other" -le $((1179648 + 65536)) ] && ok "40 runs later, $other tracked bytes of reports and config" ||
	fail "40 runs leave $other bytes under tag other, more than the room for reports"
stop_serve
finish
