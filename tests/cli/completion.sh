#!/bin/sh
# completion.sh - the bash completion, sourced into bash and asked as a
# user's <TAB> would ask it: commands, options, pipeline paths, installed
# pipelines, --set keys from `lpipe check --keys`; and `make install`
# puts it and the pipelines where bash-completion looks.
. "$top_srcdir/tests/cli/lib.sh"

command -v bash >/dev/null 2>&1 || { echo "skip: no bash"; exit 77; }
COMP=${top_builddir:-.}/scripts/completion/lpipe
[ -r "$COMP" ] || { fail "no $COMP (make builds it)"; exit 1; }
COMP=$(cd "$(dirname "$COMP")" && pwd)/lpipe

# complete CWD WORD...: the candidates for the last WORD of "lpipe WORD...",
# one a line, in $OUT, as bash's programmable completion gets them.
complete_words() {
	cwd=$1
	shift
	(cd "$cwd" && bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_lpipe
		printf "%s\n" "${COMPREPLY[@]}"' complete "$COMP" "$LPIPE" "$@") >"$OUT" 2>"$ERR"
}
# expect_words DESCRIPTION WORD...: $OUT holds exactly these (any order)
expect_words() {
	what=$1
	shift
	printf '%s\n' "$@" | sort >"$WORK/want"
	sort "$OUT" | grep -v '^$' >"$WORK/got"
	if cmp -s "$WORK/want" "$WORK/got"; then
		ok "$what"
	else
		fail "$what: got $(tr '\n' ' ' <"$WORK/got")"
	fi
}

complete_words "$top_srcdir" run pipelines/su
expect_words "run pipelines/su<TAB>: the pipelines of that name" \
	pipelines/summarize-answer.yaml pipelines/summarize.yaml

complete_words "$top_srcdir" run pipelines/summarize.yaml doc.txt --set stages.split.
expect_words "--set stages.split.<TAB>: the split stage's keys" \
	stages.split.unit= stages.split.size= stages.split.overlap= \
	stages.split.boundary= stages.split.pattern=

complete_words "$top_srcdir" check x.yaml --set stages.verify.keyphrases.a
expect_words "--set a nested key" stages.verify.keyphrases.auto=

complete_words "$top_srcdir" pro
expect_words "a command" probe
complete_words "$top_srcdir" ""
missing=
for c in run check probe plan help version; do
	grep -qx "$c" "$OUT" || missing="$missing $c"
done
[ -z "$missing" ] && ok "the commands, from lpipe --help" || fail "commands lack$missing"

complete_words "$top_srcdir" run --pro
expect_words "an option of run" --progress
complete_words "$top_srcdir" probe m.gguf --kv
expect_words "an option of probe" --kv-type
complete_words "$top_srcdir" run p.yaml d.txt --format m
expect_words "a value of --format" markdown
complete_words "$top_srcdir" help ch
expect_words "help COMMAND" check

# a bare name: the installed ready pipelines, with their path
mkdir -p "$WORK/share/pipelines" "$WORK/empty"
cp "$PIPELINES/qa.yaml" "$PIPELINES/summarize.yaml" "$WORK/share/pipelines/"
LPIPE_PIPELINES_DIR=$WORK/share/pipelines complete_words "$WORK/empty" run su
expect_words "run su<TAB>: an installed pipeline" "$WORK/share/pipelines/summarize.yaml"

# zsh, through bashcompinit (its _bash_complete runs with ksharrays)
if command -v zsh >/dev/null 2>&1; then
	(cd "$top_srcdir" && zsh -fc '
		autoload -U +X compinit && compinit -u
		autoload -U +X bashcompinit && bashcompinit
		source "$1"; setopt ksharrays
		COMP_WORDS=("$2" run pipelines/su); COMP_CWORD=2; _lpipe
		print -l "${COMPREPLY[@]}"
		COMP_WORDS=("$2" run x.yaml --set stages.split.s); COMP_CWORD=4; _lpipe
		print -l "${COMPREPLY[@]}"' zsh "$COMP" "$LPIPE") >"$OUT" 2>"$ERR"
	expect_words "zsh: pipelines/su<TAB> and --set stages.split.s<TAB>" \
		pipelines/summarize-answer.yaml pipelines/summarize.yaml stages.split.size=
else
	fail "zsh not found (scripts/bootstrap installs it)"
fi

# the same keys as the parsers': one line each, every stage kind there
lp check --keys
if [ "$rc" -eq 0 ] && grep -qx 'stages.split.size' "$OUT" && grep -qx 'model.context' "$OUT" &&
   grep -qx 'stages.verify.keyphrases.must' "$OUT" && ! grep -q 'keyphrases$' "$OUT" &&
   [ "$(sort "$OUT" | uniq -d)" = "" ]; then
	ok "check --keys lists the schema's keys"
else
	fail "check --keys: rc $rc, $(head -3 "$OUT")"
fi
lp check --keys "$PIPELINES/qa.yaml"
expect "check --keys takes no pipeline" 2 "--keys takes no PIPELINE"

# make install puts the completion and the pipelines in place
if make -s -C "${top_builddir:-.}" DESTDIR="$WORK/dest" install-bashcompletionDATA \
	install-pipelinesDATA >"$WORK/make.log" 2>&1; then
	c=$(find "$WORK/dest" -path '*/bash-completion/completions/lpipe' | head -1)
	p=$(find "$WORK/dest" -path '*/lpipe/pipelines/summarize.yaml' | head -1)
	if [ -n "$c" ] && [ -n "$p" ] && grep -q "$(dirname "${p#"$WORK/dest"}")" "$c"; then
		ok "make install: completion and pipelines, the folder written into it"
	else
		fail "make install: completion '$c', pipeline '$p'"
	fi
else
	fail "make install of the completion: $(tail -3 "$WORK/make.log")"
fi

[ "$n_fail" -eq 0 ]
