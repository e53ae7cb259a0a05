#!/bin/sh
# docs.sh - what the documentation claims holds for this build:
#  - every command of README.md's command blocks runs (scripts/docs-check;
#    the slow or networked ones are only checked, see its SLOW list);
#  - docs-check itself catches a command that does not run;
#  - README.md and README.zh-CN.md show the same commands;
#  - configure's "CUDA backend:" line says what was built.
. "$top_srcdir/tests/cli/lib.sh"

CHECK="sh $top_srcdir/scripts/docs-check --lpipe $LPIPE"
builddir=${top_builddir:-.}

rc=0
$CHECK "$top_srcdir/README.md" >"$OUT" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && grep -q '[1-9][0-9]* commands run, [0-9]* checked only, 0 failed' "$OUT"; then
	ok "README.md: $(tail -1 "$OUT" | sed 's/^docs-check: //')"
else
	fail "README.md commands (status $rc):"
	sed 's/^/  /' "$OUT" | head -10
fi

rc=0
sh "$top_srcdir/scripts/docs-check" --same "$top_srcdir/README.md" \
	"$top_srcdir/README.zh-CN.md" >"$OUT" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && ok "README.zh-CN.md shows the commands of README.md" ||
	{ fail "the READMEs' commands differ:"; sed 's/^/  /' "$OUT" | head -10; }

# docs-check on READMEs made to fail
cat >"$WORK/good.md" <<'EOF'
Some prose, then a pipeline (not commands):

    version: 1
    stages: []

A fenced block:

```sh
build/lpipe check pipelines/qa.yaml   # a comment
lpipe run pipelines/retrieve.yaml manual.txt \
    -q "how do I change the prompt?"
```

```yaml
lpipe: not a command here
```
EOF
sh "$top_srcdir/scripts/docs-check" --commands "$WORK/good.md" >"$OUT"
printf '%s\n' 'build/lpipe check pipelines/qa.yaml' \
	'lpipe run pipelines/retrieve.yaml manual.txt -q "how do I change the prompt?"' >"$WORK/want"
cmp -s "$OUT" "$WORK/want" && ok "command blocks: fenced, indented, continued, commented" ||
	fail "commands found: $(cat "$OUT")"
rc=0
$CHECK "$WORK/good.md" >"$OUT" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && ok "a README whose commands run passes" ||
	fail "good.md fails: $(head -3 "$OUT")"

# each: one broken command, a cheap one and three that are only checked
for broken in 'build/lpipe run pipelines/no-such.yaml doc.txt' \
	'build/lpipe run pipelines/retrieve.yaml doc.txt -q "..."' \
	'build/lpipe run pipelines/summarize.yaml mybook.txt --set stages.split.sise=3' \
	'build/lpipe run pipelines/summarize.yaml mybook.txt --no-such-option' \
	'scripts/eval-quality --no-such-option' \
	'sh scripts/bootstrap run "unclosed'; do
	printf 'Text.\n\n    %s\n' "$broken" >"$WORK/bad.md"
	rc=0
	$CHECK "$WORK/bad.md" >"$OUT" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] && grep -q '^FAIL' "$OUT" && ok "caught: $broken" ||
		fail "not caught (status $rc): $broken"
done
printf '    build/lpipe check pipelines/qa.yaml\n' >"$WORK/a.md"
printf '    build/lpipe check pipelines/summarize.yaml\n' >"$WORK/b.md"
rc=0
sh "$top_srcdir/scripts/docs-check" --same "$WORK/a.md" "$WORK/b.md" >"$OUT" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q '^+build/lpipe check pipelines/summarize.yaml' "$OUT" &&
	ok "--same names the command that differs" || fail "--same: status $rc"

# configure's CUDA line, the module and `lpipe version` agree
line=$(grep -o 'CUDA backend: [a-z]*' "$builddir/config.log" 2>/dev/null | tail -1)
backends=$("$LPIPE" version | sed -n 's/^backends: //p')
if grep -q '^#define LP_HAVE_CUDA 1' "$builddir/config.h"; then
	[ "$line" = "CUDA backend: yes" ] && [ -f "$builddir/.libs/lpipe-cuda.so" ] &&
		[ "$backends" = "cpu cuda" ] && ok "CUDA backend: yes, and built" ||
		fail "CUDA: configure says '$line', backends '$backends', module $(ls "$builddir"/.libs/lpipe-cuda.so 2>&1)"
else
	[ "$line" = "CUDA backend: no" ] && [ ! -f "$builddir/.libs/lpipe-cuda.so" ] &&
		[ "$backends" = "cpu" ] && ok "CUDA backend: no, and none built" ||
		fail "CUDA: configure says '$line', backends '$backends'"
fi

[ "$n_fail" -eq 0 ]
