#!/usr/bin/env python3
"""load.py - a load of runs on `lpipe serve`, from concurrent clients.

    load.py PORT RUNS CLIENTS PIPELINE[,PIPELINE...] DOC[,DOC...] [QUESTION]
    load.py PORT cache BUDGET K PIPELINE[,PIPELINE...] DOC [QUESTION]

Uploads the documents, then CLIENTS threads submit RUNS runs between
them (run i: pipeline i mod P on document i mod D), each following its
run's event stream to the end and reading the run. A 429 is counted and
retried after its Retry-After; anything else that is not a run done is a
failure. Meanwhile /metrics is sampled every 0.2 s for the runs running,
the queue depth and the tracked bytes. Prints one JSON object: counts,
wall seconds, runs per second, p50/p95/max latency (first submission to
the run's end, retries included), the most runs seen running at once,
the tracked peak and the resident peak from /metrics, the budget and the
models the server loaded.

With "cache": run each pipeline once on DOC (the largest document) and
print the --doc-cache that leaves, of a server started with
--mem-budget BUDGET (bytes), room for the models once and K runs of the
largest own part (a run's planned bytes less its model's): the plans of
a load with that cache admit K runs at once, whatever --jobs allows.
Standard library only.
"""
import json
import sys
import threading
import time
import urllib.error
import urllib.request


def call(port, method, path, body=None, ctype=None):
    req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), data=body,
                                 method=method)
    if ctype:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def metrics(port):
    _, _, text = call(port, "GET", "/metrics")
    out = {}
    for line in text.decode().splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            out[k] = float(v)
    return out


def follow(port, rid):
    """Read the run's events to their end."""
    req = urllib.request.Request("http://127.0.0.1:%s/v1/runs/%s/events" % (port, rid))
    with urllib.request.urlopen(req, timeout=600) as r:
        for _ in r:
            pass


def upload(port, path):
    with open(path, "rb") as f:
        st, _, body = call(port, "POST", "/v1/documents", f.read())
    assert st in (200, 201), (st, body)
    return json.loads(body)["id"]


def cache_for(port, budget, k, pipes, doc, question):
    """The --doc-cache that admits k runs (above)."""
    did = upload(port, doc)
    _, _, data = call(port, "GET", "/v1/pipelines")
    model = {p["name"]: p["model_bytes"]["en"] for p in json.loads(data)}
    own = 0
    for p in pipes:
        req = {"pipeline": p, "document": did}
        if question:
            req["question"] = question
        st, _, data = call(port, "POST", "/v1/runs", json.dumps(req).encode(),
                           "application/json")
        assert st == 202, (st, data)
        rid = json.loads(data)["id"]
        follow(port, rid)
        _, _, data = call(port, "GET", "/v1/runs/" + rid)
        own = max(own, json.loads(data)["planned_bytes"] - model[p])
    # the bench's pipelines share one model, or have none
    need = max(model[p] for p in pipes)
    print(int(budget - budget // 16 - need - k * own))
    return 0


def main(argv):
    if argv[2] == "cache":
        return cache_for(argv[1], int(argv[3]), float(argv[4]), argv[5].split(","), argv[6],
                         argv[7] if len(argv) > 7 else None)
    port, runs, clients = argv[1], int(argv[2]), int(argv[3])
    pipes, docs = argv[4].split(","), argv[5].split(",")
    question = argv[6] if len(argv) > 6 else None
    ids = [upload(port, d) for d in docs]
    lock = threading.Lock()
    state = {"next": 0, "lat": [], "r429": 0, "failed": [], "done": 0}
    stop = threading.Event()
    peaks = {"running": 0, "queued": 0, "tracked": 0}

    def sampler():
        while not stop.is_set():
            m = metrics(port)
            peaks["running"] = max(peaks["running"], m.get('lpipe_serve_runs{state="running"}', 0))
            peaks["queued"] = max(peaks["queued"], m.get("lpipe_serve_queue_depth", 0))
            peaks["tracked"] = max(peaks["tracked"], m.get("lpipe_tracked_total_bytes", 0))
            time.sleep(0.2)

    def client():
        while True:
            with lock:
                i = state["next"]
                if i >= runs:
                    return
                state["next"] += 1
            req = {"pipeline": pipes[i % len(pipes)], "document": ids[i % len(ids)]}
            if question:
                req["question"] = question
            body = json.dumps(req).encode()
            t0 = time.monotonic()
            while True:
                st, hdrs, data = call(port, "POST", "/v1/runs", body, "application/json")
                if st != 429:
                    break
                with lock:
                    state["r429"] += 1
                ra = {k.lower(): v for k, v in hdrs.items()}.get("retry-after", "1")
                time.sleep(min(float(ra), 5.0))
            if st != 202:
                with lock:
                    state["failed"].append("submit %d %s" % (st, data[:200]))
                continue
            rid = json.loads(data)["id"]
            follow(port, rid)
            st, _, data = call(port, "GET", "/v1/runs/" + rid)
            run = json.loads(data)
            with lock:
                if run.get("state") == "done":
                    state["done"] += 1
                    state["lat"].append(time.monotonic() - t0)
                else:
                    state["failed"].append("%s: %s" % (run.get("state"), run.get("error")))

    smp = threading.Thread(target=sampler)
    smp.start()
    t0 = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    stop.set()
    smp.join()
    m = metrics(port)
    lat = sorted(state["lat"])
    pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] if lat else None
    print(json.dumps({
        "runs": runs, "clients": clients, "done": state["done"],
        "failed": len(state["failed"]), "failures": state["failed"][:5],
        "rejected_429": state["r429"], "wall_s": round(wall, 2),
        "runs_per_s": round(state["done"] / wall, 3),
        "p50_s": pct(0.50), "p95_s": pct(0.95), "max_s": lat[-1] if lat else None,
        "max_running": peaks["running"], "max_queued": peaks["queued"],
        "max_tracked_sampled": peaks["tracked"],
        "tracked_peak_bytes": m.get("lpipe_tracked_peak_bytes"),
        "resident_peak_bytes": m.get("lpipe_resident_peak_bytes"),
        "budget_bytes": m.get("lpipe_budget_bytes"),
        "allocation_failures": m.get("lpipe_allocation_failures_total"),
        "models_loaded": m.get("lpipe_serve_models_loaded_total")}))
    return 0 if not state["failed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
