#!/bin/sh
# quote.sh - a request for the document's own words is answered with the
# passage itself, word for word, cited: a clause under its numbered title,
# an entry with its term; a topic the document lacks is an abstention;
# `reply: verbatim` runs without a model and is refused without a quote.
. "$top_srcdir/tests/cli/lib.sh"

DOC=$WORK/licence.txt
cat >"$DOC" <<'TXT'
TERMS AND CONDITIONS

  7. Additional Terms.

  You may add terms to material you add to a covered work, such as
notices of authorship, provided they are not stricter than these.

  8. Termination.

  You may not propagate or modify a covered work except as expressly
provided under this License.  Any attempt otherwise to propagate or
modify it is void.

  However, if you cease all violation of this License, then your
license is reinstated provisionally.

  9. Acceptance Not Required for Having Copies.

  You are not required to accept this License in order to receive or
run a copy of the Program.

OPTIONS
       --delete
              delete extraneous files from the destination directory.

       --dry-run
              perform a trial run that makes no changes.
TXT

lp run "$PIPELINES/quote.yaml" "$DOC" -q "Quote the clause about termination."
expect "a quote request runs without a model" 0
if python3 - "$OUT" <<'PY'
import sys
out = open(sys.argv[1], encoding="utf-8").read()
para = out.split("\nCheck:")[0]
assert para.startswith("8. Termination.\n\nYou may not propagate or modify a covered work except "
                       "as expressly provided under this License."), para
assert "your license is reinstated provisionally." in para, para
assert "Acceptance" not in para and "Additional" not in para, para
assert "\nSources: [chunk " in out, out
PY
then ok "the clause is its title and the paragraphs under it, word for word"; else
	fail "clause wrong: $(cat "$OUT")"; fi

lp run "$PIPELINES/quote.yaml" "$DOC" -q "Show me the exact text that says what --dry-run does" \
	--format json
expect "an entry request runs" 0
if python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
assert r["answer"].startswith("--dry-run\n\nperform a trial run that makes no changes."), r["answer"]
assert r["answer_check"] == "ranked+verbatim", r["answer_check"]
assert not r["abstained"], r
assert r["quote"], r
PY
then ok "an entry is given with its term, and the report says it is verbatim"; else
	fail "entry wrong: $(cat "$OUT")"; fi

lp run "$PIPELINES/quote.yaml" "$DOC" -q "Quote the clause about cooking recipes."
expect "a request for what is not there runs" 0
expect_out "it abstains" "The document does not say."

P=$(pipeline noquote <<'YAML'
version: 1
stages:
  - split: {unit: tokens, size: 64}
  - answer: {question: "${question}", reply: verbatim}
YAML
)
lp check "$P"
expect "a verbatim reply needs a quote" 2 "'reply: verbatim' gives the passage of a quote"

finish
