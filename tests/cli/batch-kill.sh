#!/bin/sh
# batch-kill.sh - lpipe batch killed with SIGKILL at random moments, then
# resumed: every output is absent or complete (equal to a clean run's),
# the final manifest lists each input exactly once, and no temporary file
# is left. Then SIGINT: the documents in flight finish and the command to
# resume is printed.
. "$top_srcdir/tests/cli/lib.sh"

PIPE=$PIPELINES/extractive-summary.yaml
SRC=$top_srcdir/data/debian-reference.en.txt
command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }
trap '[ -n "$STUB_PID" ] && kill "$STUB_PID" 2>/dev/null; rm -rf "$WORK"' EXIT

C=$WORK/corpus
mkdir -p "$C/a" "$C/b"
i=1
while [ "$i" -le 24 ]; do
	tail -c +$((i * 7919)) "$SRC" | head -c $((16000 + i * 301)) >"$C/$([ $((i % 2)) = 0 ] && echo a || echo b)/doc$i.txt"
	i=$((i + 1))
done
t0=$(date +%s%N)
"$LPIPE" batch "$PIPE" "$C" -o "$WORK/ref" -j 2 --quiet 2>/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$(wc -l <"$WORK/ref/manifest.jsonl")" -eq 24 ] && ok "clean run: 24 documents" ||
	fail "clean run"

# outputs_valid DIR: each output present in DIR equals the clean run's.
outputs_valid() {
	for f in $(cd "$1" && find . -name '*.txt.txt'); do
		cmp -s "$1/$f" "$WORK/ref/$f" || return 1
	done
}

# Kill at a pseudo-random moment (awk's rand, seeded per round) within the
# clean run's time: before the start, mid-document, mid-manifest-line. A
# round resumes what the rounds before left.
round=1
while [ "$round" -le 8 ]; do
	delay=$(awk -v s="$round" -v ms="$ms" -v p="$$" \
		'BEGIN { srand(s * 7919 + p); printf "%.3f", rand() * ms / 1000 / 3 }')
	"$LPIPE" batch "$PIPE" "$C" -o "$WORK/out" -j 2 --quiet 2>/dev/null &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	have=$(find "$WORK/out" -name '*.txt.txt' 2>/dev/null | wc -l)
	if outputs_valid "$WORK/out"; then ok "round $round (kill after ${delay}s, $have outputs): outputs absent or complete"
	else fail "round $round: an output is partial or wrong"; fi
	round=$((round + 1))
done
echo "# after the kills: $(find "$WORK/out" -name '*.txt.txt' | wc -l) outputs," \
	"$(wc -l <"$WORK/out/manifest.jsonl" 2>/dev/null || echo 0) manifest lines"

lp batch "$PIPE" "$C" -o "$WORK/out" -j 2
expect "resume after the kills" 0 "24 of 24"
outputs_valid "$WORK/out" && [ "$(find "$WORK/out" -name '*.txt.txt' | wc -l)" -eq 24 ] &&
	ok "every output complete after the resume" || fail "outputs after the resume"
python3 - "$WORK/out/manifest.jsonl" <<'PY' && ok "manifest lists each input exactly once" || fail "manifest after the resume"
import json, sys
keys = [json.loads(l)["key"] for l in open(sys.argv[1])]
sys.exit(0 if len(keys) == 24 and len(set(keys)) == 24 else 1)
PY
[ -z "$(find "$WORK/out" -name '*.tmp.*')" ] && ok "no temporary file left" ||
	fail "temporary files left: $(find "$WORK/out" -name '*.tmp.*' | head -3)"

# SIGINT: finish what is in flight, write the manifest, print the resume
# command; status 130. The documents go to a stub model server that holds
# the second request (STUB_GATE) until the test lets it go, so the signal
# comes while exactly one document is in flight and one is done, however
# fast the machine: the test waits for each point, never for a time.
G=$WORK/gate
mkdir "$G"
: >"$G/open.1"
STUB_GATE=$G
export STUB_GATE
start_stub 200
unset STUB_GATE
RP=$WORK/remote.yaml
stub_pipeline "$RP"
"$LPIPE" batch "$RP" "$C" -o "$WORK/int" -j 1 --force >"$OUT" 2>"$ERR" </dev/null &
pid=$!
wait_for test -e "$G/arrived.2" || fail "SIGINT: the second request never came"
kill -INT "$pid"
# the handler has run once it says so; only then may the document finish
wait_for grep -q 'stopping: finishing the documents in flight' "$ERR" ||
	fail "SIGINT: the batch did not say it is stopping"
: >"$G/open"
rc=0
wait "$pid" || rc=$?
kill "$STUB_PID" 2>/dev/null && wait "$STUB_PID" 2>/dev/null
STUB_PID=
expect "SIGINT stops the batch" 130 "to resume, run:" "lpipe batch"
n=$(wc -l <"$WORK/int/manifest.jsonl")
[ "$n" -eq 2 ] && [ ! -e "$G/arrived.3" ] &&
	ok "SIGINT: the document in flight finished, none started after it ($n recorded)" ||
	fail "SIGINT recorded $n documents, expected 2 (requests: $(ls "$G" | tr '\n' ' '))"
# stub_replies FILE...: each FILE holds a whole reply of the stub
stub_replies() {
	for f in "$@"; do
		grep -q 'stub reply [12] to Write about lighthouses' "$f" || return 1
	done
}
outs=$(find "$WORK/int" -name '*.txt.txt')
# shellcheck disable=SC2086 # the two paths have no spaces
if [ "$(echo "$outs" | wc -l)" -eq 2 ] && [ -z "$(find "$WORK/int" -name '*.tmp.*')" ] &&
   stub_replies $outs; then
	ok "SIGINT: both outputs complete, no temporary file"
else
	fail "SIGINT left partial outputs: $outs"
fi

finish
