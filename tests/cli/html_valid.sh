#!/bin/sh
# html_valid.sh - the HTML reports pass an HTML checker from Debian's
# packages: tidy (errors and warnings), and html5lib's parser (parse
# errors of the HTML5 algorithm). Skipped (77) when neither is installed;
# scripts/bootstrap installs both for 'test'.
. "$top_srcdir/tests/cli/lib.sh"

# html5lib is a Debian package: it lives with Debian's python3, which may
# not be the first python3 on PATH.
HTML5LIB_PY=
for py in python3 /usr/bin/python3; do
	if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import html5lib' 2>/dev/null; then
		HTML5LIB_PY=$py
		break
	fi
done
if ! command -v tidy >/dev/null 2>&1 && [ -z "$HTML5LIB_PY" ]; then
	echo "skip: neither tidy nor python3-html5lib is installed"
	exit 77
fi

. "$top_srcdir/tests/cli/html_fixture.sh"

for page in hostile small; do
	f=$WORK/$page.html
	if command -v tidy >/dev/null 2>&1; then
		# -errors: report only; 0 clean, 1 warnings, 2 errors
		if tidy -errors -q "$f" >"$WORK/tidy.log" 2>&1; then
			ok "tidy: $page report has no error or warning"
		else
			fail "tidy: $page report"
			sed 's/^/  tidy: /' "$WORK/tidy.log" | head -10
		fi
	else
		echo "# tidy not installed: not run on the $page report"
	fi
	if [ -n "$HTML5LIB_PY" ]; then
		if "$HTML5LIB_PY" - "$f" <<'PY'
import sys
import html5lib
p = html5lib.HTMLParser(strict=False)
p.parse(open(sys.argv[1], "rb").read(), transport_encoding="utf-8")
for pos, code, data in p.errors[:10]:
    print("  html5lib: line %d col %d: %s %s" % (pos[0], pos[1], code, data))
sys.exit(1 if p.errors else 0)
PY
		then ok "html5lib: $page report parses without error"
		else fail "html5lib: $page report"; fi
	else
		echo "# python3-html5lib not installed: not run on the $page report"
	fi
done

finish
