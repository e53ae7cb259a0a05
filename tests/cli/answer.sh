#!/bin/sh
# answer.sh - the answer stage's checks from the command line: whatever
# the model writes, the output says how the answer was checked, quotes the
# source as it is, cites only chunks that were given, and speaks the
# document's language. The pipeline without a model path runs the default
# model (fetched by the bootstrap, as for the shipped pipelines); the one
# with ${LPIPE_MODEL} runs the tiny random model (tests/tools/gen_chat_model).
. "$top_srcdir/tests/cli/lib.sh"

MODEL=$WORK/tiny.gguf
"$top_builddir/tests/tools/gen_chat_model" "$MODEL" || { fail "write the tiny model"; finish; }
export LPIPE_MODEL="$MODEL"
DOC=$WORK/mail.txt
cat >"$DOC" <<'TXT'
The shell reads its startup files when it starts.

Programs read the mail. How often the shell checks for mail is set by MAILCHECK. The default is 60 seconds.

Tilde expansion replaces a leading tilde with the home directory.
TXT
P=$(pipeline qa <<'YAML'
version: 1
model: {context: 1024}
retrieval: {scorer: bm25}
stages:
  - split: {unit: tokens, size: 24, overlap: 0, boundary: sentence}
  - retrieve: {query: "${question}", top_k: 3, order: document}
  - answer: {question: "${question}", max_tokens: 16, context: chunks, quote: ranked}
YAML
)
Q="How often does the shell check for mail?"

# ranked: the best-matching sentence is quoted verbatim, with the one after it
lp run "$P" "$DOC" -q "$Q" --format json
expect "quote: ranked runs" 0
expect_out "the check names the ranked sentence" '"answer_check": "ranked'
if python3 - "$OUT" "$DOC" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
a = r["answer"]
quote = [l for l in a.split("\n") if l.startswith("Quote: ")]
assert quote == ['Quote: "How often the shell checks for mail is set by MAILCHECK. '
                 'The default is 60 seconds."'], quote
assert len(r["cited"]) == 1, r["cited"]
assert a.endswith("\nSources: [chunk %d]" % r["cited"][0]), a
assert r["cited"][0] in [s["id"] for s in r["selected"]]
# the quote maps to its own bytes of the file, not its paragraph's
q = r["quote"]
raw = open(sys.argv[2], "rb").read()
assert raw[q["source_offset"]:q["source_offset"] + q["source_length"]].decode() == q["text"], q
PY
then ok "the quote is the source's sentence, its chunk the one source"; else
	fail "quote or sources wrong"; fi

# model: the model's quote is looked for in the source; whether found or
# replaced, the Quote line holds the source's own words
lp run "$P" "$DOC" -q "$Q" --set stages.answer.quote=model
expect "quote: model runs" 0
quote=$(sed -n 's/^Quote: "\(.*\)"$/\1/p' "$OUT")
[ -n "$quote" ] && grep -qF -- "$quote" "$DOC" && ok "the quote is in the source" ||
	fail "the quote '$quote' is not in the source"
grep -q "^Check: the model's quote was" "$OUT" && ok "the check line names the model's quote" ||
	fail "no check line for the model's quote"

# off: one step; citations all name chunks that were given
lp run "$P" "$DOC" -q "$Q" --set stages.answer.quote=off --format json
expect "quote: off runs" 0
expect_out "no quote step, a Sources line" '"answer_check": "none"' 'Sources: [chunk'

# the sentence after the quoted one joins it only in the same paragraph,
# or when the quoted one announces it ("... by the following:") or it is a
# command; a blank line and another entry keep it out. (The tiny model's
# answers never stand on the sentence, so the quote becomes the answer:
# that shows what the model was given.)
ENT=$WORK/entries.txt
cat >"$ENT" <<'TXT'
'CDPATH'
     A colon-separated list of directories used as a search path for cd.

'HOME'
     The current user's home directory; the default for cd.

You can list the files opened by a process with lsof by the following:

     $ sudo lsof -p 1
TXT
P1=$(pipeline qa1 <<'YAML'
version: 1
model: {path: "${LPIPE_MODEL}", context: 1024}
retrieval: {scorer: bm25}
stages:
  - split: {unit: tokens, size: 200, overlap: 0}
  - answer: {question: "${question}", max_tokens: 16, context: chunks, quote: ranked}
YAML
)
lp run "$P1" "$ENT" -q "Which variable gives cd a colon-separated search path?"
expect "an entry's sentence" 0
grep -q "search path for cd" "$OUT" && ! grep -q "home directory" "$OUT" &&
	ok "the next entry after a blank line is left out" ||
	fail "the answer took in the next entry: $(cat "$OUT")"
[ "$(head -n 1 "$OUT")" = "CDPATH" ] && ok "a question asking for a name gets the entry's term" ||
	fail "not answered with the entry's term: $(cat "$OUT")"

# a name the sentence gives: beside the kind word, in quote marks, or a
# table row's first cell
NAMES=$WORK/names.txt
cat >"$NAMES" <<'TXT'
When the 'noclobber' option is set, the > operator does not overwrite a file.

Set the maximum mount count to 0 with "tune2fs -c0 /dev/sda1" in "/etc/fstab".

    |lsof -p 1   |list the files that process 1 has open  |
    |df -h       |show how full each filesystem is        |
TXT
answers_name() { # QUESTION NAME
	lp run "$P1" "$NAMES" -q "$1"
	[ "$(head -n 1 "$OUT")" = "$2" ] && ok "the name: $1" ||
		fail "not answered '$2': $1: $(cat "$OUT")"
}
answers_name "Which option stops > from overwriting a file?" "noclobber"
answers_name "Which command sets the maximum mount count?" "tune2fs -c0 /dev/sda1"
answers_name "Which command shows how full each filesystem is?" "df -h"

# a bare word beside the kind word is a name only when the document's
# code writes it ("def"), not a word of prose ("requires")
if "$LPIPE" version | grep -q '^readers:.*markdown'; then
	MD=$WORK/code.md
	cat >"$MD" <<'MD'
# Functions

The keyword def introduces a function definition.

```
def fib(n):
    return n
```

The c option requires an archive name.
MD
	lp run "$P1" "$MD" -q "Which keyword introduces a function definition?"
	[ "$(head -n 1 "$OUT")" = "def" ] && ok "a bare name the code writes" ||
		fail "not answered 'def': $(cat "$OUT")"
	lp run "$P1" "$MD" -q "Which option names the archive?"
	! grep -q '^requires$' "$OUT" && ok "a word of prose is no name" ||
		fail "answered a word of prose: $(cat "$OUT")"
fi

# what the document does not say: a name it never holds, a sentence that
# does not name the focus, a quantity without a number
abstains() { # QUESTION DOC WHAT...
	q=$1 doc=$2
	shift 2
	lp run "$P1" "$doc" -q "$q" --format json
	expect "abstain: $q" 0
	if python3 - "$OUT" "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
a = r["answer"]
assert a.split("\n")[0] in ("The document does not say.", "文档中没有说明。"), a
assert r["abstained"] is True and r["answer_check"] == "abstain", r
assert r["cited"] and a.rstrip().endswith("]"), a
for w in sys.argv[2:]:
    assert w in a, (w, a)
PY
	then ok "abstains: $q"; else fail "did not abstain: $q: $(cat "$OUT")"; fi
}
abstains "What is the default value of BASH_TURBO?" "$ENT" "no passage" "BASH_TURBO"
abstains "How many directories may CDPATH hold?" "$ENT" "quantity"
abstains "What does the --recursive option of cd do?" "$ENT" "--recursive"
# the model's answer does not stand and the nearest sentence holds a
# third of the question: that sentence is shown as the nearest, not given
# as the answer; holding the whole question, it is the answer
ABC=$WORK/abc.txt
printf 'Alpha settings live in the red file.\n\nBeta settings live in the blue file.\n\nGamma settings live in the green file.\n' >"$ABC"
P3=$(pipeline qa3 <<'YAML'
version: 1
model: {path: "${LPIPE_MODEL}", context: 1024}
retrieval: {scorer: bm25}
stages:
  - split: {unit: tokens, size: 24, overlap: 0, boundary: sentence}
  - answer: {question: "${question}", max_tokens: 16, context: chunks, quote: ranked}
YAML
)
lp run "$P3" "$ABC" -q "Which file is used for the alpha, beta and gamma settings?" --format json
expect "a weak nearest sentence" 0
if python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
a = r["answer"].split("\n")
assert a[0] == "The document does not say." and r["abstained"] is True, r["answer"]
assert a[2].startswith('Nearest: "Gamma settings'), a
assert "too little of the question" in a[3] and r["quote"] is None, r
PY
then ok "is shown as the nearest, not as a quote"; else fail "a weak sentence: $(cat "$OUT")"; fi
lp run "$P3" "$ABC" -q "Which file is used for the gamma settings?" --format json
expect "a sentence holding the question" 0
expect_out "is the answer" '"answer_check": "ranked+sentence"'
# a sentence in an entry is weighed with the entry's term: it tells all
# that "What does the -C option do?" asks, not what a default would be
P4=$(pipeline qa4 <<'YAML'
version: 1
model: {path: "${LPIPE_MODEL}", context: 1024}
retrieval: {scorer: bm25}
stages:
  - split: {unit: tokens, size: 256, overlap: 0, boundary: sentence}
  - answer: {question: "${question}", max_tokens: 16, context: chunks, quote: ranked}
YAML
)
OPT=$WORK/opt.txt
printf '%s\n' 'OPTIONS' '       -C, --directory=DIR' \
	'              Change to DIR before performing any operations.' '' \
	'       -v, --verbose' '              Verbosely list files processed.' >"$OPT"
lp run "$P4" "$OPT" -q "What does the -C option do?" --format json
expect "an entry's sentence" 0
expect_out "answers what the entry's term leaves" '"answer_check": "ranked+sentence"'
expect_out "with the entry's sentence" 'Change to DIR before performing any operations.'
lp run "$P4" "$OPT" -q "What is the default value of the -C option?" --format json
expect "an entry's sentence without the default" 0
expect_out "abstains" '"abstained": true'
# the question's name for the document (the initials of its title) need
# not be near the sentence; a defined phrase names its entry
LIC=$WORK/lic.txt
printf '%s\n' 'Frobnicator Public License Version 1.0' '=====' '' '1. Definitions' '' \
	'1.1. "Covered Work"' '    means the program and every part of it.' '' \
	'1.2. "Licensor"' '    means the one who offers the work.' >"$LIC"
lp run "$P4" "$LIC" -q 'What does "Covered Work" mean in the FPL?' --format json
expect "a question naming the document" 0
expect_out "is answered" 'every part of it'
expect_out "is not an abstention" '"abstained": false'
# the sentence after the answer is left out when it adds nothing asked
printf 'Alpha settings live in the red file. More about them is in the manual.\n' >"$WORK/more.txt"
lp run "$P4" "$WORK/more.txt" -q "Where do the alpha settings live?" --format json
expect "an idle next sentence" 0
grep -q 'in the manual' "$OUT" && fail "the next sentence was kept: $(cat "$OUT")" ||
	ok "the next sentence is left out"
lp run "$P1" "$ENT" -q "What is the home directory?" --format json
expect "an answer" 0
expect_out "an answer is not an abstention" '"abstained": false'
lp run "$P1" "$ENT" -q "How can you list the files opened by a process?"
expect "a sentence that announces a command" 0
grep -q 'sudo lsof -p 1' "$OUT" && ok "the command after 'the following:' is taken in" ||
	fail "the command was left out: $(cat "$OUT")"
# ... and read with its sentence from the first reply on, not after one
# made from the announcement alone
lp run "$P1" "$ENT" -q "How can you list the files opened by a process?" --format json
expect "a sentence that announces a command, json" 0
expect_out "the announcement is read with what it announces" \
	'introduces what follows, read with it'

# the document's language: a Chinese document gets the Chinese check line
ZH=$WORK/zh.txt
printf 'tmpfs 是一个临时文件系统。它的文件都保存在虚拟内存中。\n\n这里讲别的事情。\n' >"$ZH"
lp run "$P" "$ZH" -q "tmpfs 的文件都保存在哪里？"
expect "a Chinese document" 0
expect_out "the check line is in Chinese" 'Check: 这是原文中与问题最匹配的句子'
abstains "tmpfs 的 MAX_SIZE 默认是多少？" "$ZH" "MAX_SIZE"

# a sentence that announces what follows, at its chunk's end, is read on
# in the next chunk, which holds it too, and that chunk is cited
KEYS=$WORK/keys.txt
printf 'Keys are kept in the home directory.\n\nGenerate the authentication keys locally by the following.\n\n    $ ssh-keygen -t rsa\n\nTilde expansion replaces a leading tilde.\n' >"$KEYS"
PK=$(pipeline overlap <<'YAML'
version: 1
model: {context: 1024}
retrieval: {scorer: bm25}
stages:
  - split: {unit: sentences, size: 2, overlap: 1}
  - retrieve: {query: "${question}", top_k: 3, order: document}
  - answer: {question: "${question}", max_tokens: 16, context: chunks, quote: ranked}
YAML
)
lp run "$PK" "$KEYS" -q "Which command generates the authentication keys locally?" --format json
expect "an announcement at a chunk's end" 0
expect_out "what it announces comes from the next chunk" 'ssh-keygen -t rsa'
expect_out "which is cited" 'Sources: [chunk 1]'

# rerank: dense. Of two sentences of one passage, the words pick the one
# that names more of the question; its meaning, the one that answers.
FARM=$WORK/farm.txt
printf '%s\n\n%s\n' 'The farm at night is quiet, and no animal sleeps in the barn. A large dog guards the farm. The hens lay eggs in spring.' \
	'Tilde expansion replaces a leading tilde with the home directory.' >"$FARM"
PR=$(pipeline rerank <<'YAML'
version: 1
model: {context: 1024}
retrieval: {scorer: bm25}
stages:
  - split: {unit: paragraphs, size: 1, overlap: 0}
  - retrieve: {query: "${question}", top_k: 3, order: document}
  - answer: {question: "${question}", max_tokens: 16, context: chunks, quote: ranked,
             rerank: dense}
YAML
)
QF="Which animal guards the farm at night?"
lp run "$PR" "$FARM" -q "$QF" --format json --set stages.answer.rerank=lexical
expect "rerank: lexical" 0
expect_out "the words pick the sentence with more of the question" '"text": "The farm at night'
minilm=${LPIPE_EMBED_MODEL:-${LPIPE_MODEL_DIR:-${HOME:-.}/.cache/lpipe/models}/all-MiniLM-L6-v2}
if [ -f "$minilm/model.safetensors" ]; then
	lp run "$PR" "$FARM" -q "$QF" --format json
	expect "rerank: dense" 0
	expect_out "the meaning picks the sentence that answers" '"text": "A large dog guards the farm."'
else
	echo "# no MiniLM at $minilm: the dense rerank's choice is not checked"
fi
# without the model the words rank, and the report says so
LPIPE_EMBED_MODEL=$WORK/no-such-model lp run "$PR" "$FARM" -q "$QF" --format json
expect "rerank: dense without its model" 0
expect_out "an event says the words ranked alone" 'sentences ranked by their words alone'
expect_out "and the words' choice stands" '"text": "The farm at night'
lp check "$PR" --set stages.answer.rerank=meaning
expect "an unknown rerank is a config error" 2 "rerank"

# A sentence as long as the context allows, for a byte-level vocabulary:
# the reply step counts its labels as they are (it broke its own budget,
# exit 5, counting them as 8 tokens), and rerank: model, whose prompt of a
# sentence and the question does not fit, lets the words rank and says so.
LONG=$WORK/long.txt
python3 - "$LONG" <<'PY'
import sys
a = "A large dog guards the farm at night, " + "and the quiet fields lie under the moon, " * 16 + "and all is still."
b = "The farm at night is quiet, " + "and the old barn stands by the river, " * 16 + "and no animal sleeps there."
open(sys.argv[1], "w").write(a + "\n\n" + b + "\n")
PY
PL=$(pipeline long <<'YAML'
version: 1
model: {path: "${LPIPE_MODEL}", context: 512}
retrieval: {scorer: bm25}
stages:
  - split: {unit: paragraphs, size: 1, overlap: 0}
  - retrieve: {query: "${question}", top_k: 2, order: document}
  - answer: {question: "${question}", max_tokens: 16, context: chunks, quote: ranked,
             rerank: model}
YAML
)
lp run "$PL" "$LONG" -q "Which animal guards the farm at night?" --format json
expect "a long sentence in a small context" 0
expect_out "the model rerank steps aside" 'do not fit the model' 'sentences ranked by their words alone'

# rerank: model. "Who is the license steward of the MPL?" shares more
# words with the sentence on renaming a modified licence than with the
# one that answers; asked how likely the question is of each, the model
# prefers the answer's. The shipped qa.yaml on the MPL's text, whose
# English answers take Qwen2.5-Coder-0.5B when it is fetched (SmolLM2's
# likelihoods do not tell these two apart).
MPL=$top_srcdir/data/eval/docs/mpl-2.0.en.txt
qwen=${LPIPE_MODEL_DIR:-${HOME:-.}/.cache/lpipe/models}/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
if [ -f "$qwen" ]; then
	QS="Who is the license steward of the MPL?"
	LPIPE_MODEL= lp run "$top_srcdir/pipelines/qa.yaml" "$MPL" -q "$QS" --format json
	expect "rerank: lexical, as shipped" 0
	expect_out "the words quote the renaming sentence" 'remove any references to the name of the license steward'
	LPIPE_MODEL= lp run "$top_srcdir/pipelines/qa.yaml" "$MPL" -q "$QS" --format json \
		--set stages.answer.rerank=model
	expect "rerank: model" 0
	expect_out "the model's likelihood quotes the answer" '"text": "Mozilla Foundation is the license steward.'
else
	echo "# no Qwen2.5-Coder-0.5B at $qwen: the model rerank's choice is not checked"
fi

# bad keys are caught when the pipeline loads
lp check "$P" --set stages.answer.quote=maybe
expect "an unknown quote mode is a config error" 2 "quote"
lp check "$P" --set stages.answer.budget=8
expect "a budget under 32 tokens is refused" 2 "'budget' must be 0 (what fits) or at least 32"

finish
