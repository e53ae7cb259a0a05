#!/bin/sh
# openai-server.sh - model backend openai against a real OpenAI-compatible
# server on loopback: llama-cpp-python's (python -m llama_cpp.server),
# serving the same SmolLM2 GGUF as the embedded engine.
#
#  - greedy summarize.yaml through the server and through the engine: the
#    same summary tree shape (asserted); how many chunk summaries are
#    identical, and the wall time both ways (printed);
#  - the server killed mid-run of a batch: the document fails with a
#    message naming the URL and the error, and the batch goes on;
#  - the API key the server demands (--api_key) is sent, and appears in no
#    output, trace or error.
#
# The server comes from the venv scripts/bootstrap keeps in its cache
# (or LPIPE_SERVER_PYTHON); without it, or without the model, the test is
# skipped (77) and says why.
. "$top_srcdir/tests/cli/lib.sh"

MODEL=${LPIPE_MODEL_DIR:-${HOME:-.}/.cache/lpipe/models}/SmolLM2-135M-Instruct.Q4_1.gguf
PY=${LPIPE_SERVER_PYTHON:-${LPIPE_CACHE:-${HOME:-.}/.cache/lpipe}/server-venv/bin/python}
DOC=$top_srcdir/data/bash-reference.en.txt

[ -f "$MODEL" ] || { echo "skip: no model at $MODEL (make models)"; exit 77; }
[ -f "$DOC" ] || { echo "skip: no $DOC"; exit 77; }
[ -x "$PY" ] || { echo "skip: no server python at $PY (sh scripts/bootstrap server)"; exit 77; }
if ! missing=$("$PY" - 2>&1 <<'PY'
import importlib, sys
gone = []
for m in ("llama_cpp.server.app", "uvicorn", "fastapi", "sse_starlette",
          "starlette_context", "pydantic_settings"):
    try:
        importlib.import_module(m)
    except Exception:
        gone.append(m)
print(" ".join(gone))
sys.exit(1 if gone else 0)
PY
); then
	echo "skip: $PY lacks llama-cpp-python[server] ($missing)"
	exit 77
fi

KEY=sk-lpipe-server-test-8d2e41c3
export LPIPE_TEST_KEY=$KEY
SERVER_PID=
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
ALL=$WORK/all-output
: >"$ALL"
keep() { cat "$OUT" "$ERR" >>"$ALL"; }
now() { "$PY" -c 'import time; print("%.1f" % time.time())'; }

PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SLOG=$WORK/server.log
# One thread: llama.cpp's threads wait for each other at every op, and on
# a busy machine a descheduled one stalls the rest (0.24 tokens/s with 2
# threads at a load of 20, on 2 cores).
start_server() {
	"$PY" -m llama_cpp.server --model "$MODEL" --model_alias smollm2 --host 127.0.0.1 \
		--port "$PORT" --n_ctx 2048 --n_threads 1 --api_key "$KEY" >"$SLOG" 2>&1 &
	SERVER_PID=$!
	if ! "$PY" - "$PORT" <<'PY'
import sys, time, urllib.request, urllib.error
for _ in range(600):
    try:
        urllib.request.urlopen("http://127.0.0.1:%s/v1/models" % sys.argv[1], timeout=1)
        sys.exit(0)
    except urllib.error.HTTPError:
        sys.exit(0)  # up, and asking for the key
    except Exception:
        time.sleep(0.2)
sys.exit(1)
PY
	then
		echo "skip: the server did not start:"
		tail -5 "$SLOG"
		exit 77
	fi
}
start_server

# A part of the bash manual that makes a tree of a few chunks.
head -c 40000 "$DOC" >"$WORK/doc.txt"
sed -e "s|^  path: .*|  backend: openai\\
  url: http://127.0.0.1:$PORT/v1\\
  name: smollm2\\
  api_key_env: LPIPE_TEST_KEY\\
  timeout: 120s\\
  retries: 1\\
  tokenizer: $MODEL|" "$PIPELINES/summarize.yaml" >"$WORK/remote.yaml"
grep -q "backend: openai" "$WORK/remote.yaml" || { fail "summarize.yaml has no model path line"; finish; exit; }

t0=$(now)
lp run "$PIPELINES/summarize.yaml" "$WORK/doc.txt" --format json
t1=$(now)
cp "$OUT" "$WORK/local.json"
expect "summarize.yaml on the embedded engine" 0
lp run "$WORK/remote.yaml" "$WORK/doc.txt" --format json
t2=$(now)
keep
cp "$OUT" "$WORK/remote.json"
expect "summarize.yaml through the server" 0
expect_out "the trace says where the model is" "model: 'smollm2' on 'http://127.0.0.1:$PORT/v1'"
# rerank: model needs the model's probabilities, which a server does not
# send: the words rank, an event says so, and the answer still comes
cat >"$WORK/remote-qa.yaml" <<YAML
version: 1
model: {backend: openai, url: "http://127.0.0.1:$PORT/v1", name: smollm2,
        api_key_env: LPIPE_TEST_KEY, timeout: 120s, retries: 1, tokenizer: "$MODEL"}
retrieval: {scorer: bm25}
stages:
  - split: {unit: tokens, size: 200, overlap: 0, boundary: sentence}
  - retrieve: {query: "\${question}", top_k: 3}
  - answer: {question: "\${question}", max_tokens: 32, context: chunks, quote: ranked,
             rerank: model}
YAML
lp run "$WORK/remote-qa.yaml" "$WORK/doc.txt" -q "What does the shell do with a command it cannot find?" --format json
expect "rerank: model through the server" 0
expect_out "an event says the words ranked alone" 'gives no probabilities' 'sentences ranked by their words alone'
requests=$(grep -c "POST /v1/chat/completions" "$SLOG")
[ "$requests" -gt 0 ] && ok "the server answered $requests requests" ||
	fail "the server saw no request"
if cmp=$("$PY" - "$WORK/local.json" "$WORK/remote.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
shape = lambda d: [len(l["summaries"]) for l in d["summary_levels"]]
la, lb = a["summary_levels"], b["summary_levels"]
same = sum(p["text"] == q["text"] for p, q in zip(la[0]["summaries"], lb[0]["summaries"]))
print("tree %s vs %s; %d of %d chunk summaries identical; final summary %s" % (
    shape(a), shape(b), same, len(la[0]["summaries"]),
    "identical" if a["summary"] == b["summary"] else "different"))
sys.exit(0 if shape(a) == shape(b) and shape(a) else 1)
PY
); then
	ok "same tree shape: $cmp"
else
	fail "tree shapes differ: $cmp"
fi
echo "# wall time: embedded $(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}') s," \
	"server $(echo "$t1 $t2" | awk '{printf "%.1f", $2 - $1}') s ($requests requests)"

# The server dies while a request of a batch of two documents is in
# flight: SIGKILL, so the request is cut (on SIGTERM the server would
# finish it first). The server is stopped (SIGSTOP) before the batch, so
# the kernel accepts the connection but nothing can reply; the test waits
# until the request is in flight (an established connection to the port),
# then kills it. However fast the machine, the document cannot finish
# first. The first document fails naming the URL and the error, and the
# batch goes on to the second (which fails the same way: no server).
rc_file=$WORK/kill.rc
mkdir "$WORK/two"
cp "$WORK/doc.txt" "$WORK/two/a.txt"
head -c 4000 "$WORK/doc.txt" >"$WORK/two/b.txt"
kill -STOP "$SERVER_PID"
( "$LPIPE" batch "$WORK/remote.yaml" "$WORK/two" -o "$WORK/two-out" -j 1 >"$OUT" 2>"$ERR" \
	</dev/null
  echo $? >"$rc_file" ) &
run_pid=$!
# in_flight: a client's connection to the server's port is established
in_flight() {
	"$PY" - "$PORT" <<'PY'
import sys
port = "%04X" % int(sys.argv[1])
for name in ("/proc/net/tcp", "/proc/net/tcp6"):
    try:
        rows = open(name).read().splitlines()[1:]
    except OSError:
        continue
    for r in rows:
        f = r.split()
        if f[2].endswith(":" + port) and f[3] == "01":  # remote = server, ESTABLISHED
            sys.exit(0)
sys.exit(1)
PY
}
sent_or_ended() { in_flight || [ -s "$rc_file" ]; }
wait_for sent_or_ended && in_flight || fail "the batch never sent its request"
kill -9 "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null
SERVER_PID=
wait "$run_pid"
rc=$(cat "$rc_file")
keep
expect "the server killed mid-run" 3 "unable to reach 'http://127.0.0.1:$PORT/v1/chat/completions'" \
	"(2 attempts)" "2 of 2 documents: 0 ok, 0 verification failed, 2 failed"
cat "$WORK/two-out/manifest.jsonl" >>"$ALL"
if "$PY" - "$WORK/two-out/manifest.jsonl" "$PORT" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
url = "http://127.0.0.1:%s/v1/chat/completions" % sys.argv[2]
sys.exit(0 if sorted(l["key"] for l in lines) == ["a.txt", "b.txt"] and
         all(l["status"] == "failed" and l["exit_code"] == 3 and url in l["reason"]
             for l in lines) else 1)
PY
then
	ok "the manifest records both documents failed, each naming the URL"
else
	fail "the manifest after the kill: $(cat "$WORK/two-out/manifest.jsonl")"
fi

if grep -qF "$KEY" "$ALL"; then
	fail "the API key appears in lpipe's output"
else
	ok "the API key appears in no output, trace or error"
fi
finish
