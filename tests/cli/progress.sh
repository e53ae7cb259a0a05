#!/bin/sh
# progress.sh - progress goes to stderr only: a live line on a terminal
# (checked under a pseudo-terminal made by script(1)), plain lines with
# --progress elsewhere, nothing with --quiet; stdout and the -o file hold
# the same result whatever is shown.
. "$top_srcdir/tests/cli/lib.sh"

P=$PIPELINES/extractive-summary.yaml
DOC=$top_srcdir/data/eval/docs/bash-jobs.en.txt
ESC=$(printf '\033')
CR=$(printf '\r')

lp run "$P" "$DOC"
cp "$OUT" "$WORK/plain.out"
if [ -s "$WORK/plain.out" ] && ! grep -q 'progress' "$ERR"; then
	ok "no progress when stderr is not a terminal"
else
	fail "progress without a terminal or no result: $(head -c 200 "$ERR")"
fi

lp run "$P" "$DOC" --progress
if grep -q '^lpipe: progress: \[2/3 summarize\] summarize: 11/11 chunks, done in [0-9]*:[0-9][0-9]$' "$ERR"; then
	ok "--progress: a plain last line with the stage, count and time"
else
	fail "--progress line: $(grep progress "$ERR" | head -3)"
fi
if grep -q "$CR\\|$ESC" "$ERR"; then
	fail "--progress without a terminal wrote terminal controls"
else
	ok "plain lines carry no terminal controls"
fi
cmp -s "$OUT" "$WORK/plain.out" && ok "--progress leaves stdout alone" ||
	fail "--progress changed stdout"

for order in "--quiet --progress" "--progress --quiet"; do
	# shellcheck disable=SC2086 # two options
	lp run "$P" "$DOC" $order
	grep -q 'progress' "$ERR" && fail "$order still shows progress" ||
		ok "$order: no progress"
done

lp run "$P" "$DOC" --progress -o "$WORK/o.txt"
if cmp -s "$WORK/o.txt" "$WORK/plain.out" && [ ! -s "$OUT" ] && grep -q progress "$ERR"; then
	ok "-o FILE holds the result only"
else
	fail "-o FILE differs from stdout, or progress went astray"
fi

# Under a pseudo-terminal: stdout and stderr are both the terminal.
if ! command -v script >/dev/null 2>&1; then
	echo "script(1) (util-linux) not found: terminal checks skipped"
	[ "$n_fail" -eq 0 ] || exit 1
	exit 77
fi
tty_run() {
	# script -e: its exit status is the command's
	rc=0
	script -qec "$1" /dev/null </dev/null >"$WORK/raw" 2>&1 || rc=$?
}
tty_run "'$LPIPE' run '$P' '$DOC'"
raw=$WORK/raw
if [ "$rc" -eq 0 ] && grep -q "${CR}\\[2/3 summarize\\] .*elapsed${ESC}\\[K" "$raw"; then
	ok "terminal: a live line, redrawn in place"
else
	fail "terminal: no live line (rc $rc): $(head -c 300 "$raw" | od -c | head -5)"
fi
# After the last erase ("\r" ESC "[K" with nothing drawn after it) comes
# the result, and no progress text.
tail=$(awk -v e="${CR}${ESC}[K" '{ s = s $0 "\n" } END {
	n = 0; while ((i = index(s, e)) > 0) { s = substr(s, i + length(e)); n++ }
	if (n) printf "%s", s }' "$raw" | tr -d '\r')
if [ -n "$tail" ] && ! printf '%s' "$tail" | grep -q 'elapsed\|tok/s\|done in' &&
   printf '%s\n' "$tail" | grep -q '^verification: ' &&
   printf '%s\n' "$tail" | grep -qF "$(head -1 "$WORK/plain.out" | cut -c1-60)"; then
	ok "terminal: the line is erased before the result, none after it"
else
	fail "terminal: stray progress after the result: $(printf '%s' "$tail" | head -c 300)"
fi
tty_run "'$LPIPE' run '$P' '$DOC' >'$WORK/tty.out'"
if cmp -s "$WORK/tty.out" "$WORK/plain.out" && grep -q "${ESC}\\[K" "$raw"; then
	ok "terminal: stdout redirected holds the result only"
else
	fail "terminal: stdout differs with a live line on stderr"
fi
tty_run "'$LPIPE' run '$P' '$DOC' --quiet"
grep -q "${ESC}\\[K\\|elapsed" "$raw" && fail "terminal: --quiet still draws" ||
	ok "terminal: --quiet draws nothing"

# probe: the same line over the lengths it measures
gen=${top_builddir:-.}/tests/tools/gen_tiny_model
if "$gen" "$WORK/tiny.gguf" >/dev/null 2>&1; then
	tty_run "'$LPIPE' probe '$WORK/tiny.gguf' --min 64 --max 128 --decode 2 --threads 1"
	if [ "$rc" -eq 0 ] && grep -q "${CR}probe (n_ctx 64): 0/2 lengths" "$raw" &&
	   grep -q '^growth: ' "$raw"; then
		ok "probe: a live line on a terminal"
	else
		fail "probe: no live line (rc $rc)"
	fi
	lp probe "$WORK/tiny.gguf" --min 64 --max 128 --decode 2 --threads 1 --progress
	grep -q '^lpipe: progress: probe: 2/2 lengths, .*done in' "$ERR" &&
		! grep -q progress "$OUT" && ok "probe --progress: plain lines on stderr" ||
		fail "probe --progress: $(grep progress "$ERR" "$OUT" | head -2)"
else
	fail "cannot write the tiny model"
fi

[ "$n_fail" -eq 0 ]
