#!/bin/sh
# formats.sh - choosing a document's reader: input.format forces one, auto
# sniffs the name and the content, a format whose reader is not built is
# refused naming the package to install, and a man page rendered to text
# comes out repaired, in blocks, cited by its section path.
. "$top_srcdir/tests/cli/lib.sh"

SPLIT=$(pipeline split <<'YAML'
version: 1
stages:
  - split: {unit: words, size: 40, overlap: 0, boundary: sentence}
YAML
)
MAN=$DATA/man-like.txt
readers=$("$LPIPE" version | sed -n 's/^readers: //p')
case " $readers " in
*" text "*) ok "version lists the readers: $readers" ;;
*) fail "version lists no text reader: '$readers'" ;;
esac

# auto: plain text, repaired and in blocks
lp run "$SPLIT" "$MAN" --format json -o "$WORK/r.json"
expect "a man page as text" 0
if python3 - "$WORK/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
assert r["document"]["format"] == "text", r["document"]
ch = r["chunks"]
kinds = {c["kind"] for c in ch}
assert "heading" in kinds or "table_row" in kinds or "definition_body" in kinds, kinds
secs = [c["section"] for c in ch]
assert "OPTIONS \u203a --delete" in secs, secs
assert all(c["source_offset"] >= 0 and c["source_length"] > 0 for c in ch)
text = r["result"]
assert "receiving side" in text and "re\u2010" not in text, text
PY
then ok "sections, kinds and the repaired word in the JSON report"
else fail "sections, kinds and the repaired word in the JSON report"; fi

# the entry of the option a question names answers it, cited by its section
MODEL=$WORK/tiny.gguf
if "$top_builddir/tests/tools/gen_chat_model" "$MODEL"; then
	QA=$(pipeline qa <<YAML
version: 1
model: {path: "$MODEL", context: 1024}
retrieval: {scorer: bm25}
stages:
  - split: {unit: words, size: 30, overlap: 0, boundary: sentence}
  - retrieve: {query: "\${question}", top_k: 3, order: score}
  - answer: {question: "\${question}", max_tokens: 8, context: chunks, quote: ranked}
YAML
)
	lp run "$QA" "$MAN" -q "What does the --delete option do?"
	expect "a question on --delete" 0
	expect_out "the --delete entry's own definition answers" \
		"This tells tool to delete extraneous files from the receiving side"
	expect_out "cited by section path" "$(printf '\302\267 OPTIONS \342\200\272 --delete]')"
	grep -q "may be combined" "$OUT" && fail "a sentence merely naming --delete answers" ||
		ok "not the sentence that merely names --delete"
else
	fail "write the tiny model"
fi

# input.format is checked where it is written
BAD=$(pipeline bad <<'YAML'
version: 1
input: {format: pdff}
stages:
  - split: {unit: words, size: 40}
YAML
)
lp run "$BAD" "$MAN"
expect "an unknown input.format" 2 "$BAD:2:" "must be one of auto, text, markdown, html, pdf"

# the content wins over a misleading name; input.format wins over both
printf '<!DOCTYPE html>\n<html><body><p>Hello there.</p></body></html>\n' >"$WORK/page.txt"
printf '# Title\n\nSome *markdown* text.\n' >"$WORK/notes.md"
printf '%%PDF-1.4\n%% not really a PDF\n' >"$WORK/paper.txt"
for f in html:page.txt markdown:notes.md pdf:paper.txt; do
	fmt=${f%%:*} file=$WORK/${f#*:}
	case " $readers " in
	*" $fmt "*)
		echo "# the $fmt reader is built: its own tests read $fmt files" ;;
	*)
		case $fmt in
		markdown) pkg=libmd4c-dev ;; html) pkg=libxml2-dev ;; pdf) pkg=libpoppler-glib-dev ;;
		esac
		if [ "$fmt" = markdown ]; then
			# Markdown is text: chosen by its name alone, it is read as such
			lp run "$SPLIT" "$file"
			expect "markdown read as text without its reader" 0 "${f#*:}" "install $pkg"
			lp run "$SPLIT" "$file" --set input.format=markdown
		else
			lp run "$SPLIT" "$file"
		fi
		expect "$fmt refused without its reader" 3 "${f#*:}" "install $pkg"
		;;
	esac
	lp run "$SPLIT" "$file" --set input.format=text --format json
	expect "input.format=text reads ${f#*:} as text" 0
	python3 -c 'import json,sys; assert json.load(sys.stdin)["document"]["format"] == "text"' \
		<"$OUT" && ok "the JSON report says text" || fail "the JSON report says text"
done

# man rsync | col -b, when this machine has them: no word left broken
if command -v man >/dev/null && command -v col >/dev/null && man -w rsync >/dev/null 2>&1; then
	MANWIDTH=80 man rsync 2>/dev/null | col -b >"$WORK/rsync.txt"
	rc=0
	LPIPE_DOC_STATS="$WORK/rsync.txt" "$top_builddir/tests/check_doc" >"$OUT" 2>"$ERR" || rc=$?
	line=$(head -1 "$OUT")
	echo "# $line"
	before=$(echo "$line" | sed -n 's/.*broken words \([0-9]*\) -> \([0-9]*\);.*/\1/p')
	after=$(echo "$line" | sed -n 's/.*broken words \([0-9]*\) -> \([0-9]*\);.*/\2/p')
	[ "$rc" -eq 0 ] && [ "${before:-0}" -gt 100 ] && [ "$after" = 0 ] &&
		ok "man rsync: $before broken words, none left" ||
		fail "man rsync: broken words '$before' -> '$after'"
	grep -q -- '--verbose, -v' "$OUT" && fail "an option summary is still one long sentence" ||
		ok "no long sentence holds the option summary"
else
	echo "# man rsync not rendered here (man, col or rsync missing)"
fi

finish
