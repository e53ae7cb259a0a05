# shards.sh - helpers for the tests that run `lpipe batch` in shards on a
# scheduler (slurm.sh, parallel.sh); sourced after lib.sh.

# skip REASON: the test cannot run here; automake counts exit 77 as skipped.
skip() {
	echo "SKIP - $*"
	exit 77
}

# A shard picks its share from these when --shard is not given: a test that
# itself runs under Slurm must not inherit its job's.
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN \
	SLURM_ARRAY_TASK_MAX SLURM_ARRAY_JOB_ID SLURM_JOB_ID

# need_batch: skip unless this lpipe has the batch command.
need_batch() {
	"$LPIPE" help batch >/dev/null 2>&1 || skip "this lpipe has no batch command"
}

# The pipeline by absolute path: shards run in other working directories.
PIPE=$(cd "$PIPELINES" && pwd)/extractive-summary.yaml

# corpus DIR: 12 documents of 70 to 100 words in two folders, each five
# consecutive sentences of tests/data/cli/small.txt (short enough that the
# extractive summary keeps every keyphrase, so each one succeeds).
corpus() {
	python3 - "$DATA/small.txt" "$1" <<'PY'
import os, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
sents = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
for i in range(12):
    sub = os.path.join(sys.argv[2], "ab"[i % 2])
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "doc%02d.txt" % i), "w", encoding="utf-8") as f:
        f.write(" ".join(sents[(i + k) % len(sents)] for k in range(5)) + "\n")
PY
}

# n_manifests DIR: how many shard manifests DIR holds (manifest-I-of-N.jsonl).
n_manifests() {
	find "$1" -maxdepth 1 -name 'manifest*.jsonl' | grep -c .
}

# check_union CORPUS DIR...: the manifests in DIR... list every file of
# CORPUS exactly once, each succeeded and has its output; prints the counts.
check_union() {
	python3 - "$@" <<'PY'
import glob, json, os, sys
corpus, dirs = sys.argv[1], sys.argv[2:]
want = set()
for root, _, files in os.walk(corpus):
    want.update(os.path.realpath(os.path.join(root, f)) for f in files)
seen = {}
manifests = [m for d in dirs for m in sorted(glob.glob(os.path.join(d, "manifest*.jsonl")))]
for m in manifests:
    with open(m, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            path = os.path.realpath(r["input"])
            seen[path] = seen.get(path, 0) + 1
            assert r["status"] == "ok", (path, r["status"], r.get("reason"))
            out = os.path.join(os.path.dirname(m), r["output"])
            assert os.path.getsize(out) > 0, out
twice = sorted(p for p, n in seen.items() if n > 1)
assert not twice, "listed more than once: %s" % twice
assert set(seen) == want, "missing %s, extra %s" % (sorted(want - set(seen)),
                                                    sorted(set(seen) - want))
print("%d documents in %d manifests, each once, all ok" % (len(seen), len(manifests)))
PY
}

# check_merge OUTDIR: `lpipe batch --merge` over the 4 shards in OUTDIR
# succeeds and its report, OUTDIR/merged.jsonl, lists each of the 12
# documents once, succeeded; the merge fails when one shard is missing, and
# when a second folder holds the same documents again.
check_merge() {
	lp batch --merge "$1"
	expect "--merge over the shards" 0 "merged 4 shards" "12 of 12 documents: 12 ok"
	if python3 - "$1/merged.jsonl" <<'PY'; then
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
keys = [r["key"] for r in rows]
assert len(keys) == 12 and len(set(keys)) == 12, keys
assert all(r["status"] == "ok" for r in rows), [(r["key"], r["status"]) for r in rows]
PY
		ok "merged.jsonl lists the 12 documents once each, all ok"
		# the merged report, for the log
		sed 's/^/# /' "$ERR" "$1/merged.csv"
	else
		fail "merged.jsonl does not list the 12 documents once each, all ok"
	fi
	rm -rf "$WORK/partial"
	cp -R "$1" "$WORK/partial"
	for m in "$WORK"/partial/manifest-*.jsonl; do
		[ -s "$m" ] || continue
		shard=${m##*/manifest}
		rm -f "$WORK"/partial/*"${shard%.jsonl}".*
		break
	done
	lp batch --merge "$WORK/partial"
	expect "--merge without one shard fails" 3 "missing or doubled"
	lp batch --merge "$1" "$WORK/partial"
	expect "--merge with documents twice fails" 3 "missing or doubled"
}
