#!/usr/bin/env python3
"""serve_client.py - a client of `lpipe serve` for tests/cli/serve*.sh.

Usage: serve_client.py PORT COMMAND [ARGS...]

  req METHOD PATH [BODY_FILE] [Header: value]...
        one request with urllib; prints the status on the first line, then
        the Retry-After header when there is one ("retry-after N"), then
        the body
  wait RUN_ID STATE...
        poll GET /v1/runs/RUN_ID (urllib) until its state is one of STATE;
        prints the last JSON (gives up after 300 s: a hang, not a timing)
  events RUN_ID
        read GET /v1/runs/RUN_ID/events to its end; prints each event as
        "EVENT DATA" on a line
  hostile CASE
        a request no well-behaved client sends, over a raw socket; prints
        the status the server answered, or "closed" when it closed the
        connection without one. CASE: huge-length, huge-header,
        chunked-over, chunked-bad, slow, pipelined-garbage
  idle N
        open N connections that send nothing, check that a request on
        another one is answered 200 meanwhile, print "served N"
  limit N
        open N idle connections, send a request on one more (its answer
        or "closed"), close them, and wait until a request is answered:
        prints "extra STATUS after STATUS"

Set TOKEN in the environment to send "Authorization: Bearer $TOKEN".
Standard library only.
"""
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request


def url(port, path):
    return "http://127.0.0.1:%s%s" % (port, path)


def request(port, method, path, body=None, headers=()):
    req = urllib.request.Request(url(port, path), data=body, method=method)
    tok = os.environ.get("TOKEN")
    if tok:
        req.add_header("Authorization", "Bearer " + tok)
    for h in headers:
        k, v = h.split(":", 1)
        req.add_header(k.strip(), v.strip())
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def cmd_req(port, args):
    method, path = args[0], args[1]
    body, headers = None, []
    for a in args[2:]:
        if ":" in a and not os.path.exists(a):
            headers.append(a)
        else:
            with open(a, "rb") as f:
                body = f.read()
    if body is None and method in ("POST", "PUT"):
        body = b""
    status, hdrs, data = request(port, method, path, body, headers)
    print(status)
    ra = {k.lower(): v for k, v in hdrs.items()}.get("retry-after")
    if ra:
        print("retry-after", ra)
    sys.stdout.write(data.decode("utf-8", "replace") + "\n")


def cmd_wait(port, args):
    rid, states = args[0], args[1:]
    end = time.time() + 300
    while True:
        status, _, data = request(port, "GET", "/v1/runs/" + rid)
        run = json.loads(data)
        if status == 200 and run.get("state") in states:
            print(json.dumps(run))
            return 0
        if time.time() > end:
            print("gave up: " + data.decode())
            return 1
        time.sleep(0.02)


def cmd_events(port, args):
    req = urllib.request.Request(url(port, "/v1/runs/%s/events" % args[0]))
    tok = os.environ.get("TOKEN")
    if tok:
        req.add_header("Authorization", "Bearer " + tok)
    with urllib.request.urlopen(req, timeout=300) as r:
        print("content-type", r.headers.get("Content-Type"))
        event, data = None, None
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith(":"):
                print("comment", line[1:].strip())
            elif line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and event:
                print(event, data)
                sys.stdout.flush()
                event, data = None, None


def raw(port, payload, slow=False, max_s=60):
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.settimeout(max_s)
    try:
        if slow:
            # one byte a second, until the server gives up on us
            for b in payload:
                s.sendall(bytes([b]))
                time.sleep(1)
        else:
            s.sendall(payload)
        data = s.recv(65536)
    except (BrokenPipeError, ConnectionResetError):
        return "closed"
    except socket.timeout:
        return "timeout"
    finally:
        s.close()
    if not data:
        return "closed"
    return data.split(b"\r\n", 1)[0].split(b" ")[1].decode()


def cmd_hostile(port, args):
    case = args[0]
    head = b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    if os.environ.get("TOKEN"):
        head += b"Authorization: Bearer " + os.environ["TOKEN"].encode() + b"\r\n"
    if case == "huge-length":
        p = head + b"Content-Length: 10737418240\r\n\r\n{"
    elif case == "huge-header":
        p = (b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 +
             b"\r\n\r\n")
    elif case == "chunked-over":
        # chunks that add up past --max-body, each one small
        chunk = b"%x\r\n%s\r\n" % (60000, b"a" * 60000)
        p = head + b"Transfer-Encoding: chunked\r\n\r\n" + chunk * 40 + b"0\r\n\r\n"
    elif case == "chunked-bad":
        p = head + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
    elif case == "chunked-huge-size":
        p = head + b"Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n{}\r\n"
    elif case == "both-lengths":
        p = (head + b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"2\r\n{}\r\n0\r\n\r\n")
    elif case == "slow":
        print(raw(port, b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n", slow=True))
        return 0
    elif case == "bad-request-line":
        p = b"\x00\x01\x02 garbage\r\n\r\n"
    else:
        print("unknown case " + case)
        return 2
    print(raw(port, p))
    return 0


def cmd_idle(port, args):
    n = int(args[0])
    socks = []
    for _ in range(n):
        socks.append(socket.create_connection(("127.0.0.1", int(port))))
    status, _, _ = request(port, "GET", "/v1/health")
    for s in socks:
        s.close()
    print("served" if status == 200 else "status %d" % status, n)
    return 0


def cmd_limit(port, args):
    """N idle connections fill --max-connections N: one more is turned
    away; once they close, a request is served again."""
    n = int(args[0])
    socks = [socket.create_connection(("127.0.0.1", int(port))) for _ in range(n)]
    # the server has taken them all when each is past accept: a request on
    # the first of them proves the listener has seen it
    extra = raw(port, b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n", max_s=30)
    for s in socks:
        s.close()
    end = time.time() + 60
    while True:
        try:
            status, _, _ = request(port, "GET", "/v1/health")
            break
        except (urllib.error.URLError, ConnectionError):
            if time.time() > end:
                status = 0
                break
            time.sleep(0.02)
    print("extra", extra, "after", status)
    return 0


def main():
    port, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    fn = {"req": cmd_req, "wait": cmd_wait, "events": cmd_events,
          "hostile": cmd_hostile, "idle": cmd_idle, "limit": cmd_limit}[cmd]
    return fn(port, args) or 0


if __name__ == "__main__":
    sys.exit(main())
