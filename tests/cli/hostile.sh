#!/bin/sh
# hostile.sh - bad pipelines and bad documents give the documented exit
# status and a message that says what and where, never a crash.
. "$top_srcdir/tests/cli/lib.sh"

DOC=$DATA/small.txt
SPLIT=$(pipeline split <<'Y'
version: 1
name: split-only
stages:
  - split: {size: 64, overlap: 8}
Y
)

# A pipeline that is valid except for the lines given on standard input
# (appended after "version: 1").
bad() {
	f=$WORK/$1.yaml
	{ echo "version: 1"; cat; } >"$f"
	lp check "$f"
}

# (1) YAML syntax error: file:line:col
bad c1 <<'Y'
stages:
  - split: {size: 64
output: {format: text}
Y
expect "(1) YAML syntax error" 2 "c1.yaml:"
grep -q "c1.yaml:[0-9]*:[0-9]*: error:" "$ERR" && ok "(1) syntax error has line:col" ||
	fail "(1) syntax error lacks line:col"

# (2) unknown key, with the nearest valid key suggested
bad c2 <<'Y'
stages:
  - split: {size: 64}
outptu: {format: text}
Y
expect "(2) unknown key" 2 "c2.yaml:4:" "'outptu'" "did you mean 'output'"

# (3) wrong type: a list where a number is expected
bad c3 <<'Y'
stages:
  - split: {size: [1, 2]}
Y
expect "(3) wrong type" 2 "c3.yaml:3:" "'size'" "integer"

# (4) overlap not smaller than size
bad c4 <<'Y'
stages:
  - split: {size: 64, overlap: 64}
Y
expect "(4) overlap >= size" 2 "c4.yaml:3:" "overlap" "size"

# (5) unknown stage kind, with a suggestion
bad c5 <<'Y'
stages:
  - splitt: {size: 64}
Y
expect "(5) unknown stage kind" 2 "c5.yaml:3:" "'splitt'" "did you mean 'split'"

# (6) empty stage list
bad c6 <<'Y'
stages: []
Y
expect "(6) empty stage list" 2 "c6.yaml:2:" "'stages'" "empty"

# duplicate key
bad c7 <<'Y'
stages:
  - split: {size: 64}
stages:
  - split: {size: 32}
Y
expect "duplicate key" 2 "c7.yaml:4:" "duplicate" "'stages'"

# anchor and alias (refused: no expansion blow-up)
bad c8 <<'Y'
base: &b {size: 64}
stages:
  - split: *b
Y
expect "anchor and alias" 2 "c8.yaml:2:" "anchor"

# ${question} without -q: the config error, and a hint about -q
Q=$(pipeline question <<'Y'
version: 1
name: "about ${question}"
stages:
  - split: {size: 64}
Y
)
lp run "$Q" "$DOC"
expect "undefined \${question}" 2 "question.yaml:2:" "'question'" "-q TEXT"
lp run "$Q" "$DOC" -q lighthouses --format json
expect "-q sets \${question}" 0
expect_out "-q reaches the pipeline" '"name": "about lighthouses"'

# missing files
lp check "$WORK/no-such.yaml"
expect "missing pipeline" 3 "no-such.yaml"
lp run "$SPLIT" "$WORK/no-such.txt"
expect "missing document" 3 "no-such.txt"
lp run "$SPLIT" "$WORK"
expect "directory as document" 3

# (7) invalid UTF-8: refused with the byte offset, accepted with replace
printf 'The first sentence is fine. Then \377 breaks it.\n' >"$WORK/latin1.txt"
lp run "$SPLIT" "$WORK/latin1.txt"
expect "(7) invalid UTF-8 refused" 3 "latin1.txt: byte 33:" "UTF-8"
lp run "$SPLIT" "$WORK/latin1.txt" --set input.invalid_utf8=replace --format json
expect "(7) invalid UTF-8 replaced" 0
expect_out "(7) replacement counted" '"replaced_invalid": 1'
lp run "$SPLIT" "$WORK/latin1.txt" --set input.invalid_utf8=replace
expect_out "(7) U+FFFD in the output" "$(printf 'Then \357\277\275 breaks')"

# (8) binary file
printf 'ELF\000\001\002some data\n' >"$WORK/binary.bin"
lp run "$SPLIT" "$WORK/binary.bin"
expect "(8) binary file" 3 "binary.bin" "NUL byte"

# (9) empty file, and one of white space only
: >"$WORK/void.txt"
lp run "$SPLIT" "$WORK/void.txt"
expect "(9) empty file" 3 "void.txt" "empty"
printf ' \n\t\n' >"$WORK/spaces.txt"
lp run "$SPLIT" "$WORK/spaces.txt"
expect "(9) blank file" 3 "spaces.txt" "empty"
lp_stdin "$WORK/void.txt" run "$SPLIT" -
expect "(9) empty standard input" 3 "empty"

# The same document from standard input and from a file gives the same result.
lp run "$SPLIT" "$DOC"
cp "$OUT" "$WORK/from-file"
lp_stdin "$DOC" run "$SPLIT" -
expect "document from standard input" 0
cmp -s "$OUT" "$WORK/from-file" && ok "stdin = file" || fail "stdin and file differ"

# (10) a 50 MB document on one line: runs, or stops with a clear budget
# error; never a crash. Sentences, so the splitter has boundaries to find,
# then one 50 MB "word" with none.
big=$WORK/big.txt
yes 'The quick brown fox jumps over the lazy dog near the river bank.' |
	head -c 52428800 | tr '\n' ' ' >"$big"
BIGSPLIT=$(pipeline bigsplit <<'Y'
version: 1
stages:
  - split: {size: 384, overlap: 48}
Y
)
lp run "$BIGSPLIT" "$big" --format json --quiet -o "$WORK/big.json"
if [ "$rc" -eq 0 ]; then
	ok "(10) 50 MB single line: ran"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["chunks"]) > 10000, len(d["chunks"]); assert d["document"]["bytes"] == 52428800' \
		"$WORK/big.json" && ok "(10) 50 MB: chunks cover it" || fail "(10) 50 MB: bad JSON"
else
	expect "(10) 50 MB single line: clear error" 4 "budget"
fi
lp run "$BIGSPLIT" "$big" --mem-budget 8MiB --quiet
if [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ]; then
	ok "(10) 50 MB under 8 MiB: status $rc"
	[ "$rc" -eq 0 ] || expect "(10) 50 MB under 8 MiB names the budget" 4 "budget"
else
	fail "(10) 50 MB under 8 MiB: status $rc"
	sed 's/^/  stderr: /' "$ERR" | head -5
fi
head -c 52428800 /dev/zero | tr '\0' 'x' >"$big"
lp run "$BIGSPLIT" "$big" --quiet -o "$WORK/big.out"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ]; then ok "(10) 50 MB word: status $rc"; else
	fail "(10) 50 MB word: status $rc"; sed 's/^/  stderr: /' "$ERR" | head -5; fi
rm -f "$big" "$WORK/big.json" "$WORK/big.out"

# A budget too small for anything is exit 4 with the phase named.
lp run "$SPLIT" "$DOC" --mem-budget 1KiB
expect "tiny budget" 4 "budget"
export LPIPE_MEM_BUDGET
LPIPE_MEM_BUDGET=1KiB
lp run "$SPLIT" "$DOC"
expect "tiny budget from LPIPE_MEM_BUDGET" 4 "budget"
lp run "$SPLIT" "$DOC" --mem-budget 0
expect "--mem-budget wins over LPIPE_MEM_BUDGET" 0
LPIPE_MEM_BUDGET=lots
lp run "$SPLIT" "$DOC"
expect "bad LPIPE_MEM_BUDGET" 2 "LPIPE_MEM_BUDGET"
unset LPIPE_MEM_BUDGET

finish
