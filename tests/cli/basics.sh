#!/bin/sh
# basics.sh - help, version, usage errors and suggestions.
. "$top_srcdir/tests/cli/lib.sh"

lp --version
expect "--version" 0
expect_out "--version prints the version" "lpipe "
lp version
expect "version" 0

for h in --help -h help; do
	lp $h
	expect "$h" 0
	expect_out "$h lists commands and exit codes" "run " "check " "exit status" "verification failed"
done

lp help run
expect "help run" 0
expect_out "help run lists the options" "usage: lpipe run" "--question" "--set" "--output" \
	"--format" "--mem-budget" "--quiet" "--progress" "--verbose"
cp "$OUT" "$WORK/help-run"
lp run --help
expect "run --help" 0
if cmp -s "$OUT" "$WORK/help-run"; then ok "run --help = help run"; else fail "run --help differs from help run"; fi

# Every option of every command's help is documented in lpipe(1).
lp --help
commands=$(sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' "$OUT")
[ -n "$commands" ] && ok "--help lists the commands" || fail "no commands in --help"
for cmd in $commands; do
	lp help $cmd
	for opt in $(grep -o -- '--[a-z][a-z-]*' "$OUT" | sort -u); do
		esc=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
		if grep -q -- "$esc" "$top_srcdir/man/lpipe.1"; then
			ok "lpipe.1 documents $cmd $opt"
		else
			fail "lpipe.1 does not document $cmd $opt"
		fi
	done
done
# ... and so is every command of the table.
for cmd in $commands; do
	if grep -q "^\.BI* \"*$cmd\( \|\"\|\$\)" "$top_srcdir/man/lpipe.1"; then
		ok "lpipe.1 documents command $cmd"
	else
		fail "lpipe.1 does not document command $cmd"
	fi
done
# ... and every exit code of lp_status_exit_code.
for code in 0 1 2 3 4 5; do
	if grep -q "^\.B $code\$" "$top_srcdir/man/lpipe.1"; then
		ok "lpipe.1 documents exit status $code"
	else
		fail "lpipe.1 lacks exit status $code"
	fi
done

# The man pages format without warnings (when groff is installed).
if command -v groff >/dev/null 2>&1; then
	for page in lpipe.1 lpipe-pipeline.5; do
		warn=$(groff -man -Tutf8 -ww -z "$top_srcdir/man/$page" 2>&1)
		[ -z "$warn" ] && ok "$page formats cleanly" || fail "$page: $warn"
	done
fi

lp
expect "no command" 2 "usage: lpipe"
lp rn
expect "misspelt command" 2 "'rn' is not a command" "did you mean 'run'?"
lp chekc x.yaml
expect "swapped letters" 2 "did you mean 'check'?"
lp frobnicate
expect "unknown command without suggestion" 2 "is not a command"
if grep -q "did you mean" "$ERR"; then fail "no suggestion for a far word"; else ok "no suggestion for a far word"; fi
lp help chek
expect "help with a misspelt command" 2 "did you mean 'check'?"
lp --bogus
expect "unknown global option" 2 "unknown option '--bogus'"

lp run
expect "run without arguments" 2 "missing PIPELINE" "usage: lpipe run"
lp run p.yaml
expect "run without a document" 2 "missing DOC" "usage: lpipe run"
lp run a b c
expect "run with too many arguments" 2 "unexpected argument 'c'" "usage: lpipe run"
lp run --no-such a b
expect "run with an unknown option" 2 "unknown option '--no-such'" "usage: lpipe run"
lp run a b -q
expect "run -q without a value" 2 "needs a value" "usage: lpipe run"
lp run a b --format yaml
expect "run with an unknown format" 2 "unknown format 'yaml'" "usage: lpipe run"
lp run a b --mem-budget lots
expect "run with a bad --mem-budget" 2 "invalid value 'lots' for --mem-budget"
lp run a b --set nokey
expect "run with a --set without '='" 2 "--set needs KEY=VALUE"
lp check
expect "check without a pipeline" 2 "missing PIPELINE" "usage: lpipe check"
lp check a b
expect "check with two pipelines" 2 "unexpected argument 'b'"
lp version extra
expect "version with an argument" 2 "unexpected argument"

finish
