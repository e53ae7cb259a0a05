#!/bin/sh
# golden.sh - the extractive summary of a small document, compared with a
# reviewed golden file, plus what verification adds to each format.
#
# To regenerate after an intended change (then review the diff by eye):
#   build/lpipe run pipelines/extractive-summary.yaml tests/data/cli/small.txt \
#       >tests/data/cli/small.extractive.txt
. "$top_srcdir/tests/cli/lib.sh"

DOC=$DATA/small.txt
P=$PIPELINES/extractive-summary.yaml
GOLDEN=$DATA/small.extractive.txt

lp run "$P" "$DOC"
expect "extractive summary" 0
if diff -u "$GOLDEN" "$OUT" >"$WORK/diff"; then ok "matches $GOLDEN"; else
	fail "differs from $GOLDEN"; head -40 "$WORK/diff"; fi
tail -n 1 "$OUT" | grep -q '^verification: [0-9]*/[0-9]* keyphrases survived ([0-9]*%), [0-9]* words' &&
	ok "text ends with the verification line" || fail "no verification line"
[ "$(tail -n 2 "$OUT" | head -n 1)" = "" ] && ok "a blank line before it" ||
	fail "no blank line before the verification line"

# Same run twice: same bytes (no timing or addresses in the text output).
cp "$OUT" "$WORK/first"
lp run "$P" "$DOC"
cmp -s "$OUT" "$WORK/first" && ok "deterministic" || fail "two runs differ"

lp run "$P" "$DOC" --format json
expect "extractive summary as JSON" 0
if python3 - "$OUT" "$WORK/first" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
text_out = open(sys.argv[2], encoding="utf-8").read()
assert [s["kind"] for s in r["stages"]] == ["split", "summarize", "verify"], r["stages"]
assert r["summary_levels"] and r["summary_levels"][0]["level"] == 0
assert r["summary"] and r["result"] == r["summary"]
assert text_out.startswith(r["result"].rstrip("\n"))
v = r["verification"]
assert set(v) == {"passed", "survival_rate", "survived", "missing", "phrases", "words", "min_words",
                  "auto_survival_rate", "min_survival", "retries", "grounding"}
assert v["grounding"] is None and v["retries"] == 0 and v["min_survival"] == 0.6
assert [s["pass"] for s in r["stages"]] == [1, 1, 1] and [s["stage"] for s in r["stages"]] == [0, 1, 2]
assert len(v["survived"]) + len(v["missing"]) == len(v["phrases"]) > 0
assert all(p["origin"] in ("must", "regex", "auto") for p in v["phrases"])
assert abs(v["survival_rate"] - len(v["survived"]) / len(v["phrases"])) < 1e-9
assert v["min_words"] == 40 and v["words"] > 0
PY
then ok "JSON summary and verification"; else fail "JSON summary and verification"; fi

# Progress: off when stderr is not a terminal, on with --progress.
# (stderr may hold the verification warning: 2/8 automatic keyphrases of
# small.txt survive the extractive summary, under min_survival 0.6.)
grep -q '3/3\|summarize' "$ERR" && fail "progress drawn without --progress" ||
	ok "no progress by default"
grep -q '^lpipe: warning: verification failed: .* fewer than min_survival 0.6$' "$ERR" &&
	ok "low keyphrase survival warns" || fail "no warning for low keyphrase survival"
lp run "$P" "$DOC" --progress
expect "--progress draws on stderr" 0 "summarize" "3/3"
lp run "$P" "$DOC" --progress --quiet
grep -q '3/3\|summarize' "$ERR" && fail "--quiet after --progress still draws" ||
	ok "--quiet wins when last"

lp run "$P" "$DOC" --format markdown
expect_out "markdown verification table" "## Verification" "| Keyphrase | Origin | Survived |"

# A verification that fails: exit 1, the output is still written.
echo old >"$WORK/v.txt"
lp run "$P" "$DOC" --set stages.verify.min_words=100000 --set stages.verify.on_fail=fail \
	-o "$WORK/v.txt"
expect "failed verification" 1 "verification failed"
grep -q '^verification: .*(minimum 100000)' "$WORK/v.txt" && ok "output written, minimum shown" ||
	fail "output of a failed verification"

finish
