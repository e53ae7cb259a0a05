#!/bin/sh
# bench/serve/run.sh - a load on lpipe serve over loopback, beside the same
# runs done one after another by lpipe run.
#
#   sh bench/serve/run.sh [BUILD_DIR]       (default: build)
#
# 1. RUNS (default 200) runs from CLIENTS (default 16) concurrent clients
#    over 3 documents cut from data/ (20, 60 and 100 KB) and 2 pipelines
#    without a model (extractive-summary, retrieve), --jobs 4 and a queue
#    of 8, under a budget whose plans admit at most 2-3 runs at once: the
#    document cache takes what is left of 66 MiB (less a sixteenth for
#    reports) beside 2.5 times the largest run's plan (load.py cache);
#    then the same runs one after another with lpipe run.
# 2. QA_RUNS (default 200) qa runs from QA_CLIENTS (default 16) clients on
#    the embedded model (SmolLM2-135M), the budget (256 MiB) leaving room
#    for the model once and 2.5 runs' own parts; then the same through the
#    openai backend against llama-cpp-python's server on the same GGUF
#    (REMOTE_RUNS, default QA_RUNS) when its venv is in
#    $LPIPE_CACHE/server-venv (scripts/bootstrap server), each beside the
#    same runs by lpipe run.
# Prints one line per load (JSON from load.py) and the throughput ratios.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
LPIPE=$build/lpipe
RUNS=${RUNS:-200}
CLIENTS=${CLIENTS:-16}
QA_RUNS=${QA_RUNS:-200}
QA_CLIENTS=${QA_CLIENTS:-16}
REMOTE_RUNS=${REMOTE_RUNS:-$QA_RUNS}
CACHE=${LPIPE_CACHE:-$HOME/.cache/lpipe}
W=$(mktemp -d "${TMPDIR:-/tmp}/lpipe-bench-serve.XXXXXX")
SPID=
LPID=
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; [ -n "$LPID" ] && kill "$LPID" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT

head -c 20000 "$top/data/bash-reference.en.txt" >"$W/d1.txt"
tail -c 60000 "$top/data/debian-reference.en.txt" >"$W/d2.txt"
head -c 100000 "$top/data/debian-reference.en.txt" >"$W/d3.txt"
mkdir -p "$W/p"
cp "$top/pipelines/extractive-summary.yaml" "$top/pipelines/retrieve.yaml" \
	"$top/pipelines/qa.yaml" "$W/p/"
Q="How often does bash check for mail?"

serve() { # ARGS...: start the server, wait for its port
	rm -f "$W/ready"
	"$LPIPE" serve --listen 127.0.0.1:0 --ready-file "$W/ready" --pipelines "$W/p" "$@" \
		2>"$W/serve.log" &
	SPID=$!
	while [ ! -s "$W/ready" ]; do
		kill -0 "$SPID" 2>/dev/null || { cat "$W/serve.log"; exit 1; }
		sleep 0.05
	done
	PORT=$(cat "$W/ready")
}
unserve() { kill -TERM "$SPID"; wait "$SPID" || true; SPID=; }
# cache_for BUDGET PIPELINES: the --doc-cache that leaves room for the
# model once and 2.5 runs of the largest plan (on d3) under BUDGET bytes
cache_for() {
	serve --mem-budget "$1" --doc-cache 4MiB --jobs 1
	python3 "$top/bench/serve/load.py" "$PORT" cache "$1" 2.5 "$2" "$W/d3.txt" "$Q"
	unserve
}
rss_of() { sed -n 's/^VmHWM:[ \t]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

# sequential N PIPELINE_LIST [QUESTION]: the same runs by lpipe run, one by one
sequential() {
	n=$1 pipes=$2
	shift 2
	np=$(echo "$pipes" | tr ',' ' ' | wc -w)
	t0=$(date +%s.%N)
	i=0
	while [ "$i" -lt "$n" ]; do
		p=$(echo "$pipes" | cut -d, -f$((i % np + 1)))
		d=$W/d$((i % 3 + 1)).txt
		if [ $# -gt 0 ]; then
			"$LPIPE" run "$W/p/$p.yaml" "$d" -q "$1" >/dev/null 2>&1 || true
		else
			"$LPIPE" run "$W/p/$p.yaml" "$d" >/dev/null 2>&1 || true
		fi
		i=$((i + 1))
	done
	t1=$(date +%s.%N)
	echo "$n $t0 $t1" | awk '{ printf "{\"sequential_runs\": %d, \"wall_s\": %.2f, \"runs_per_s\": %.3f}\n", $1, $3 - $2, $1 / ($3 - $2) }'
}

ratio() { # LOAD_JSON SEQ_JSON
	python3 -c 'import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]); print("throughput ratio serve/sequential: %.2f" % (a["runs_per_s"]/b["runs_per_s"]))' "$1" "$2"
}

B=69206016
C=$(cache_for $B extractive-summary,retrieve)
echo "== $RUNS runs, $CLIENTS clients, extractive-summary + retrieve, budget 66MiB, document cache $C"
serve --mem-budget $B --doc-cache "$C" --jobs 4 --queue 8
load=$(python3 "$top/bench/serve/load.py" "$PORT" "$RUNS" "$CLIENTS" extractive-summary,retrieve \
	"$W/d1.txt,$W/d2.txt,$W/d3.txt" "$Q") || true
echo "$load"
echo "server VmHWM: $(rss_of "$SPID") kB"
unserve
seq=$(sequential "$RUNS" extractive-summary,retrieve "$Q")
echo "$seq"
ratio "$load" "$seq"

B=268435456
C=$(cache_for $B qa)
echo "== $QA_RUNS qa runs, $QA_CLIENTS clients, the embedded model, budget 256MiB, document cache $C"
serve --mem-budget $B --doc-cache "$C" --jobs 4 --queue 8
load=$(python3 "$top/bench/serve/load.py" "$PORT" "$QA_RUNS" "$QA_CLIENTS" qa \
	"$W/d1.txt,$W/d2.txt,$W/d3.txt" "$Q") || true
echo "$load"
echo "server VmHWM: $(rss_of "$SPID") kB"
unserve
seq=$(sequential "$QA_RUNS" qa "$Q")
echo "$seq"
ratio "$load" "$seq"

PY=$CACHE/server-venv/bin/python
MODEL=$CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf
if [ -x "$PY" ] && "$PY" -c 'import llama_cpp.server' 2>/dev/null && [ -f "$MODEL" ]; then
	LPORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$PY" -m llama_cpp.server --model "$MODEL" --model_alias smollm2 --host 127.0.0.1 \
		--port "$LPORT" --n_ctx 2048 --n_threads 1 >"$W/llama.log" 2>&1 &
	LPID=$!
	until curl -s -o /dev/null "http://127.0.0.1:$LPORT/v1/models"; do
		kill -0 "$LPID" 2>/dev/null || { tail -5 "$W/llama.log"; exit 1; }
		sleep 0.2
	done
	sed -e "s|^  path: .*|  backend: openai\\
  url: http://127.0.0.1:$LPORT/v1\\
  name: smollm2\\
  timeout: 300s\\
  retries: 1\\
  concurrency: 2\\
  tokenizer: $MODEL|" -e '/^  by_lang:/,/^memory:/{/^memory:/!d}' "$top/pipelines/qa.yaml" >"$W/p/qa-remote.yaml"
	B=67108864
	C=$(cache_for $B qa-remote)
	echo "== $REMOTE_RUNS qa runs, $QA_CLIENTS clients, openai backend on llama-cpp-python, budget 64MiB, document cache $C"
	serve --mem-budget $B --doc-cache "$C" --jobs 4 --queue 8
	load=$(python3 "$top/bench/serve/load.py" "$PORT" "$REMOTE_RUNS" "$QA_CLIENTS" qa-remote \
		"$W/d1.txt,$W/d2.txt,$W/d3.txt" "$Q") || true
	echo "$load"
	echo "server VmHWM: $(rss_of "$SPID") kB"
	unserve
	seq=$(sequential "$REMOTE_RUNS" qa-remote "$Q")
	echo "$seq"
	ratio "$load" "$seq"
else
	echo "== openai backend: skipped (no llama-cpp-python venv in $CACHE/server-venv)"
fi
