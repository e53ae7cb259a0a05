#!/bin/sh
# batch.sh - lpipe batch: good and bad files, outputs equal to lpipe run,
# the manifest and report, resume, --force, --glob/--exclude, --from,
# --fail-fast, shards N = 1..7, --merge (missing, doubled) and
# --emit-sbatch.
. "$top_srcdir/tests/cli/lib.sh"

PIPE=$(cd "$PIPELINES" && pwd)/extractive-summary.yaml # absolute: one check runs elsewhere
SRC=$top_srcdir/data/debian-reference.en.txt
command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }

# A corpus of distinct documents, two levels deep.
corpus() {
	dir=$1
	n=$2
	mkdir -p "$dir/sub/deeper"
	i=1
	while [ "$i" -le "$n" ]; do
		case $((i % 3)) in
		0) d=$dir ;;
		1) d=$dir/sub ;;
		*) d=$dir/sub/deeper ;;
		esac
		tail -c +$((i * 2311)) "$SRC" | head -c $((2500 + i * 97)) >"$d/doc$i.txt"
		i=$((i + 1))
	done
}

# manifest_check MANIFEST N: N lines, each key once, every line JSON with
# the documented fields. Prints nothing; returns 1 on a mismatch.
manifest_check() {
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
keys = [json.loads(l)["key"] for l in lines]
fields = {"input", "key", "bytes", "sha256", "pipeline", "status", "exit_code", "reason",
          "wall_s", "cpu_s", "tokens_in", "tokens_out", "peak_tracked_bytes",
          "keyphrase_survival", "output", "output_bytes", "output_sha256", "shard"}
ok = len(lines) == int(sys.argv[2]) and len(set(keys)) == len(keys)
ok = ok and all(set(json.loads(l)) == fields for l in lines)
sys.exit(0 if ok else 1)
PY
}

# ---- good and bad files ------------------------------------------------
BAD=$WORK/bad
corpus "$BAD" 4
printf 'caf\351 au lait\n' >"$BAD/invalid.txt"
: >"$BAD/empty.txt"
printf 'text\000with a NUL\n' >"$BAD/binary.txt"
ln -s loop "$BAD/loop"
cp "$BAD/sub/doc1.txt" "$BAD/unreadable.txt"
chmod 000 "$BAD/unreadable.txt"
# root reads a file whatever its mode: then it is a good file
if cat "$BAD/unreadable.txt" >/dev/null 2>&1; then unreadable=ok; else unreadable=failed; fi

lp batch "$PIPE" "$BAD" -o "$WORK/obad"
expect "a directory with bad files: exit 3 (input error)" 3 \
	"invalid UTF-8" "empty document" "binary file" "Too many levels of symbolic links" \
	"4 failed"
for k in doc1 doc2 doc3 doc4; do
	f=$(find "$WORK/obad" -name "$k.txt.txt")
	if [ -s "$f" ]; then ok "output of good $k"; else fail "no output for good $k"; fi
done
manifest_check "$WORK/obad/manifest.jsonl" 9 && ok "manifest: 9 inputs, each once" ||
	fail "manifest of the bad directory"
python3 - "$WORK/obad/manifest.jsonl" "$unreadable" <<'PY' && ok "manifest statuses" || fail "manifest statuses"
import json, sys
st = {json.loads(l)["key"]: json.loads(l) for l in open(sys.argv[1])}
want = {"invalid.txt": "failed", "empty.txt": "failed", "binary.txt": "failed",
        "loop": "failed", "unreadable.txt": sys.argv[2]}
for k, s in want.items():
    if st[k]["status"] != s or (s == "failed") != (st[k]["output"] is None):
        sys.exit("%s: %s" % (k, st[k]))
    if s == "failed" and (st[k]["exit_code"] != 3 or not st[k]["reason"]):
        sys.exit("%s: %s" % (k, st[k]))
PY
[ -z "$(find "$WORK/obad" -name '*.tmp.*')" ] && ok "no temporary file" || fail "temporary file left"
head -1 "$WORK/obad/report.csv" | grep -q '^key,input,status,exit_code,reason' &&
	[ "$(wc -l <"$WORK/obad/report.csv")" -eq 10 ] && ok "report.csv: header and 9 rows" ||
	fail "report.csv"
chmod 644 "$BAD/unreadable.txt"

# ---- outputs equal lpipe run's; -j 2; resume; --force --------------------
C=$WORK/corpus
corpus "$C" 9
lp batch "$PIPE" "$C" -o "$WORK/o1" -j 2
expect "batch -j 2 over 9 documents" 0 "9 ok"
same=1
for f in $(cd "$C" && find . -name '*.txt' | sed 's|^\./||'); do
	"$LPIPE" run "$PIPE" "$C/$f" 2>/dev/null | cmp -s - "$WORK/o1/$f.txt" || same=0
done
[ "$same" = 1 ] && ok "every output is what lpipe run writes" || fail "outputs differ from lpipe run"
cp "$WORK/o1/manifest.jsonl" "$WORK/m1"
lp batch "$PIPE" "$C" -o "$WORK/o1"
expect "resume: everything done" 0 "9 skipped"
cmp -s "$WORK/m1" "$WORK/o1/manifest.jsonl" && ok "resume keeps the manifest" ||
	fail "resume changed the manifest"
echo "One more sentence about packages." >>"$C/sub/doc1.txt"
rm "$WORK/o1/doc3.txt.txt"
lp batch "$PIPE" "$C" -o "$WORK/o1"
expect "resume redoes a changed and a deleted output" 0 "2 ok" "7 skipped"
lp batch "$PIPE" "$C" -o "$WORK/o1" --set stages.summarize.max_words=120
expect "another pipeline hash redoes all" 0 "9 ok"
lp batch "$PIPE" "$C" -o "$WORK/o1" --set stages.summarize.max_words=120 --force
expect "--force redoes all" 0 "9 ok"
manifest_check "$WORK/o1/manifest.jsonl" 9 && ok "manifest still lists each input once" ||
	fail "manifest after resumes"

# ---- progress: plain lines when standard error is no terminal -----------
lp batch "$PIPE" "$C" -o "$WORK/o1" --progress
expect "--progress off a terminal: lines" 0 "batch: 9/9 documents" "0 failed"
grep -q "$(printf '\r')" "$ERR" && fail "--progress off a terminal redraws with CR" ||
	ok "--progress off a terminal writes whole lines"
lp batch "$PIPE" "$C" -o "$WORK/o1"
grep -q "documents, .*/s" "$ERR" && fail "progress shown off a terminal without --progress" ||
	ok "no progress off a terminal by default"

# ---- selection: --glob, --exclude, --from, files ---------------------------
cp "$C/doc3.txt" "$C/sub/notes.md"
lp batch "$PIPE" "$C" -o "$WORK/o2" --glob '*.md'
expect "--glob takes only matching names" 0 "1 of 1 document"
lp batch "$PIPE" "$C" -o "$WORK/o3" --exclude deeper --exclude 'doc9*'
expect "--exclude a directory and a name" 0 "6 of 6"
(cd "$C" && find . -name 'doc[12].txt') >"$WORK/list"
(cd "$C" && "$LPIPE" batch "$PIPE" --from "$WORK/list" -o "$WORK/o4") >"$OUT" 2>"$ERR" && rc=0 || rc=$?
expect "--from LIST" 0 "2 of 2"
[ -s "$WORK/o4/sub/doc1.txt.txt" ] && ok "--from mirrors the listed path" || fail "--from output path"
lp batch "$PIPE" "$C/doc3.txt" "$C/sub/doc1.txt" -o "$WORK/o5" --format json
expect "file arguments, --format json" 0 "2 ok"
python3 -m json.tool "$(find "$WORK/o5" -name 'doc3.txt.json')" >/dev/null &&
	ok "json output per document" || fail "json output"
lp batch "$PIPE" "$C/doc3.txt" "$WORK/missing.txt" -o "$WORK/o6"
expect "a missing input argument" 3 "missing.txt"

# ---- --fail-fast ------------------------------------------------------------
lp batch "$PIPE" "$BAD" -o "$WORK/o7" --fail-fast
expect "--fail-fast stops at the first failure" 3 "--fail-fast"
[ "$(wc -l <"$WORK/o7/manifest.jsonl")" -lt 9 ] && ok "--fail-fast left documents undone" ||
	fail "--fail-fast ran everything"

# ---- shards: N = 1..7, union = every input once ------------------------------
for n in 1 2 3 4 5 6 7; do
	i=0
	while [ "$i" -lt "$n" ]; do
		"$LPIPE" batch "$PIPE" "$C" -o "$WORK/s$n" --shard "$i/$n" --quiet 2>/dev/null || true
		i=$((i + 1))
	done
	cat "$WORK/s$n"/manifest*.jsonl >"$WORK/union"
	if manifest_check "$WORK/union" 10; then ok "shards of $n: every input exactly once"
	else fail "shards of $n"; fi
	lp batch --merge "$WORK/s$n"
	expect "--merge of $n shards" 0 "10 of 10 documents"
done
SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3 \
	"$LPIPE" batch "$PIPE" "$C" -o "$WORK/slurm" --quiet 2>/dev/null && rc=0 || rc=$?
[ "$rc" = 0 ] && [ -f "$WORK/slurm/manifest-1-of-3.jsonl" ] &&
	cmp -s "$WORK/slurm/inputs-1-of-3.txt" "$WORK/s3/inputs-1-of-3.txt" &&
	ok "Slurm array variables give shard 1/3" || fail "shard from SLURM_ARRAY_TASK_*"

# A temporary of a killed run is removed only by the shard that owns its
# output: shards sharing OUTDIR from other hosts keep theirs (a pid there
# means nothing here).
k1=$(sed -n 2p "$WORK/s2/inputs-1-of-2.txt")
tmp="$WORK/s2/$k1.txt.tmp.999999999.abcdef"
echo partial >"$tmp"
"$LPIPE" batch "$PIPE" "$C" -o "$WORK/s2" --shard 0/2 --quiet 2>/dev/null || true
[ -f "$tmp" ] && ok "another shard's temporary is left alone" || fail "shard 0/2 removed 1/2's temporary"
"$LPIPE" batch "$PIPE" "$C" -o "$WORK/s2" --shard 1/2 --quiet 2>/dev/null || true
[ -f "$tmp" ] && fail "the owning shard left its stale temporary" || ok "the owning shard removes it"

# ---- --merge: missing and doubled ------------------------------------------------
rm "$WORK/s3/inputs-2-of-3.txt"
cp "$WORK/s3/merged.jsonl" "$WORK/s3-merged.before"
lp batch --merge "$WORK/s3"
expect "--merge with a shard missing" 3 "shard 2/3 is missing" "not written"
# a failed merge leaves the last good merged report as it was
cmp -s "$WORK/s3/merged.jsonl" "$WORK/s3-merged.before" &&
	ok "a failed --merge keeps the previous merged.jsonl" ||
	fail "a failed --merge replaced merged.jsonl"
for m in "$WORK"/s4/manifest-*.jsonl; do
	[ -s "$m" ] && { : >"$m"; break; } # a shard that never finished a document
done
lp batch --merge "$WORK/s4"
expect "--merge with a document missing" 3 "is missing: its shard"
mkdir "$WORK/s5b"
cp "$WORK/s5/inputs-1-of-5.txt" "$WORK/s5/manifest-1-of-5.jsonl" "$WORK/s5b/"
lp batch --merge "$WORK/s5" "$WORK/s5b"
expect "--merge with a shard doubled" 3 "shard 1/5 is doubled" "is doubled"

# ---- --emit-sbatch ------------------------------------------------------------------
lp batch "$PIPE" "$C" -o "$WORK/o8" -j 2 --emit-sbatch=3
expect "--emit-sbatch" 0
expect_out "sbatch script" "#SBATCH --array=0-2" "batch" "-o" "--merge"
grep -v '^#' "$OUT" | grep -q -e '--emit-sbatch' -e '--shard' &&
	fail "script keeps --emit-sbatch or --shard" || ok "script runs the command itself"
sh -n "$OUT" && ok "script is valid sh" || fail "script is not valid sh"

# ---- usage ------------------------------------------------------------------------------
lp batch "$PIPE" "$C"
expect "missing -o" 2 "missing -o OUTDIR"
lp batch "$PIPE" "$C" -o "$WORK/o9" --shard 3/3
expect "bad --shard" 2 "need 0 <= I < N"
lp help batch
expect "help batch" 0
expect_out "help text" "--emit-sbatch" "--merge" "manifest.jsonl"

finish
