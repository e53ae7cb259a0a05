#!/usr/bin/env python3
"""openai_stub.py - a stand-in for an OpenAI-compatible server, on loopback.

Usage: openai_stub.py PORT_FILE LOG_FILE PLAN

Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening) and
answers POST /v1/chat/completions with the HTTP statuses of PLAN in turn, a
comma-separated list such as "429,500,200" whose last entry repeats. A 200
is a chat completion whose content is "stub reply N to TEXT" (N counts
requests, TEXT is the start of the last message);
any other status carries {"error": {"message": ...}}. Each request adds a
line to LOG_FILE: its number, the status sent, "auth=ok" when the
Authorization header is "Bearer $STUB_KEY" ("auth=none" without a header,
"auth=bad" otherwise: the key itself is never written), the model and
max_tokens of the request, its path, said=TEXT (the start of the last
message, spaces as underscores), and open=K: the requests open at once
when it arrived, itself included (a request stops counting before its reply
is sent, so K never exceeds what the client had in flight).

With STUB_HOLD="SECONDS,GATHER" set, each request is held at least SECONDS
before its reply, and until GATHER requests have once been open together:
a client that can keep GATHER in flight shows it however the threads
happen to be scheduled. The wait for GATHER ends after 60 s, which only a
client that cannot keep that many in flight ever reaches.

With STUB_GATE=DIR set, request N (counted from 1) creates DIR/arrived.N
and is then held, without any time limit, until DIR/open.N or DIR/open
exists: a test knows exactly which request is in flight, and lets it go
when it has done what it wanted meanwhile (signalled the client, say).
Standard library only.
"""
import http.server
import json
import os
import sys
import threading
import time


def pass_gate(gate, n):
    """Mark request n as arrived in the directory gate, then wait there
    until the test opens it (open.n, or open for every request)."""
    with open(os.path.join(gate, "arrived.%d" % n), "w"):
        pass
    while not (os.path.exists(os.path.join(gate, "open.%d" % n)) or
               os.path.exists(os.path.join(gate, "open"))):
        time.sleep(0.01)


def last_words(req):
    """The last message's content, up to 40 characters (echoed back)."""
    try:
        return str(req["messages"][-1]["content"])[:40]
    except (KeyError, IndexError, TypeError):
        return ""


def main():
    port_file, log_file, plan = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    want = "Bearer " + os.environ.get("STUB_KEY", "")
    count = [0]
    lock = threading.Lock()
    hold = os.environ.get("STUB_HOLD", "")
    hold_s, gather = (float(hold.split(",")[0]), int(hold.split(",")[1])) if hold else (0, 0)
    gate = os.environ.get("STUB_GATE", "")
    # requests open now, and the most ever open at once
    opened = {"now": 0, "max": 0}
    changed = threading.Condition(lock)

    def arrive():
        with changed:
            opened["now"] += 1
            opened["max"] = max(opened["max"], opened["now"])
            changed.notify_all()
            return opened["now"]

    def wait_out():
        start = time.monotonic()
        with changed:
            changed.wait_for(lambda: opened["max"] >= gather, timeout=hold_s + 60)
        left = hold_s - (time.monotonic() - start)
        if left > 0:
            time.sleep(left)
        with changed:
            opened["now"] -= 1

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            now_open = arrive()
            with lock:
                n = count[0]
                count[0] += 1
            status = int(plan[min(n, len(plan) - 1)])
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                req = json.loads(body)
            except ValueError:
                req = {}
            auth = self.headers.get("Authorization")
            auth = "none" if auth is None else "ok" if auth == want else "bad"
            with lock, open(log_file, "a") as f:
                f.write("%d %d auth=%s model=%s max_tokens=%s path=%s said=%s open=%d\n" % (
                    n + 1, status, auth, req.get("model"), req.get("max_tokens"),
                    self.path, "_".join(last_words(req).split()), now_open))
            if gate:
                pass_gate(gate, n + 1)
            wait_out()
            if status == 200:
                reply = {"object": "chat.completion", "model": req.get("model"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant",
                                                  "content": "stub reply %d to %s" % (
                                                      n + 1, last_words(req))}}],
                         "usage": {"prompt_tokens": 7, "completion_tokens": 3,
                                   "total_tokens": 10}}
            else:
                reply = {"error": {"message": "stub status %d" % status,
                                   "type": "stub"}}
            data = json.dumps(reply).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave the request up (a cancelled run)

    # threads: a client with several requests in flight gets them served
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
