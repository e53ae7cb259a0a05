#!/bin/sh
# quality.sh - the metrics of scripts/quality_metrics.py on hand-made
# strings (tests/quality_metrics_test.py), and the evaluation data of
# data/eval holds (every answer and evidence in its document, every
# keyphrase in its excerpt: scripts/eval-quality --check; every quote
# request's evidence in its document: scripts/eval-quote --check), and --rescore
# measures saved outputs again.
. "$top_srcdir/tests/cli/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
	echo "skip - no python3"
	exit 77
fi

if python3 "$top_srcdir/tests/quality_metrics_test.py" >"$OUT" 2>&1; then
	ok "quality metrics unit tests"
else
	fail "quality metrics unit tests"
	sed 's/^/  /' "$OUT" | tail -20
fi

if [ ! -f "$top_srcdir/data/eval/qa.tsv" ]; then
	ok "no data/eval here (a distribution): its check skipped"
elif (cd "$top_srcdir" && python3 scripts/eval-quality --check) >"$OUT" 2>"$ERR"; then
	ok "the evaluation data holds"
else
	fail "the evaluation data holds"
	sed 's/^/  stderr: /' "$ERR" | head -10
fi
if [ -f "$top_srcdir/data/eval/quote.tsv" ]; then
	if (cd "$top_srcdir" && python3 scripts/eval-quote --check) >"$OUT" 2>"$ERR"; then
		ok "the quote requests' evidence is in their documents"
	else
		fail "the quote requests' evidence is in their documents"
		sed 's/^/  stderr: /' "$ERR" | head -10
	fi
fi

# --rescore measures saved outputs again: a right and a wrong answer, an
# abstention where the document has no answer and a confident answer
# where it has none (acc 0.50, cite 0.25, abs_p 1.00, abs_r 0.50, cwrong
# 0.50), in a row per language, per split and genre, and for all.
if [ -f "$top_srcdir/data/eval/qa.tsv" ]; then
	cat >"$WORK/runs.json" <<'JSON'
{"runs": [
 {"pipeline": "p.yaml", "model": "m", "language": "en", "doc": "data/bash-reference.en.txt",
  "question": "What exit status does bash return when a command is not found?",
  "output": "It is 127 [chunk 1].", "cited_texts": {"1": "returns a status of 127"},
  "wall": 2.0, "rss": 10},
 {"pipeline": "p.yaml", "model": "m", "language": "en", "doc": "data/bash-reference.en.txt",
  "question": "Which builtin is a synonym for mapfile?",
  "output": "mapfile itself", "wall": 4.0, "rss": 12},
 {"pipeline": "p.yaml", "model": "m", "language": "en", "doc": "data/bash-reference.en.txt",
  "question": "What is the default value of the BASH_TURBO variable?",
  "output": "The document does not say.", "wall": 1.0, "rss": 12},
 {"pipeline": "p.yaml", "model": "m", "language": "en", "doc": "data/bash-reference.en.txt",
  "question": "Which company sells commercial support contracts for Bash?",
  "output": "GNU sells them.", "wall": 1.0, "rss": 12}]}
JSON
	want='4 0.50 0.50 0.50 1.00 0.50 0.50 0.25'
	if (cd "$top_srcdir" && python3 scripts/eval-quality --rescore "$WORK/runs.json" --lang en) >"$OUT" 2>"$ERR" &&
	   [ "$(awk '$1 == "en" { print $2, $3, $4, $5, $6, $7, $8, $9 }' "$OUT")" = "$want" ] &&
	   [ "$(awk '$1 == "dev:reference-manual" { print $2, $3, $4, $5, $6, $7, $8, $9 }' "$OUT")" = "$want" ] &&
	   head -2 "$OUT" | grep -q ' acc  acc_p   conc  abs_p  abs_r cwrong   cite '; then
		ok "--rescore: accuracy, abstention, confident errors and citation of saved answers"
	else
		fail "--rescore: accuracy, abstention, confident errors and citation of saved answers"
		sed 's/^/  /' "$OUT" "$ERR" | head -10
	fi
	# the test split holds none of these runs' documents: no table
	(cd "$top_srcdir" && python3 scripts/eval-quality --rescore "$WORK/runs.json" --split test) >"$OUT" 2>"$ERR" || true
	if [ ! -s "$OUT" ]; then
		ok "--rescore --split test leaves out the dev documents"
	else
		fail "--rescore --split test leaves out the dev documents"
		sed 's/^/  /' "$OUT" | head -5
	fi
fi

# A broken row is refused (in a copy of the scripts and excerpts): an answer that is not in its document.
mkdir -p "$WORK/tree/scripts" "$WORK/tree/data/eval"
cp "$top_srcdir/scripts/eval-quality" "$top_srcdir/scripts/quality_metrics.py" "$WORK/tree/scripts/"
mkdir -p "$WORK/tree/data/eval/docs" "$WORK/tree/data/eval/keyphrases"
printf 'x\n' >"$WORK/tree/data/doc.en.txt"
printf 'doc\tlang\tquestion\tanswer\tvariants\tevidence\ndata/doc.en.txt\ten\tq?\tnot there\t\tx\n' \
	>"$WORK/tree/data/eval/qa.tsv"
rc=0
(cd "$WORK/tree" && python3 scripts/eval-quality --check) >"$OUT" 2>"$ERR" || rc=$?
expect "a row whose answer is not in its document is refused" 2 "answer 'not there' is not in"

# A document without a row in split.tsv is refused.
printf 'doc\tlang\tquestion\tanswer\tvariants\tevidence\ndata/doc.en.txt\ten\tq?\t-\t\tx\n' \
	>"$WORK/tree/data/eval/qa.tsv"
printf 'doc\tsplit\tgenre\n' >"$WORK/tree/data/eval/split.tsv"
rc=0
(cd "$WORK/tree" && python3 scripts/eval-quality --check) >"$OUT" 2>"$ERR" || rc=$?
expect "a document missing from split.tsv is refused" 2 "data/doc.en.txt: not in data/eval/split.tsv"

finish
