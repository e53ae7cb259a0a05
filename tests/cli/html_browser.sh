#!/bin/sh
# html_browser.sh - the HTML report in a real browser: headless Chromium
# from Debian's packages (chromium-headless-shell, or chromium), driven over
# the DevTools protocol by html_browser.py. It loads the page, clicks a
# summary open, follows its link to a chunk, and checks that the elements
# are laid out and visible where the JSON report of the same run says (no
# pixel comparison). Skipped (77) without a browser; LPIPE_CHROMIUM names
# one explicitly. scripts/bootstrap installs chromium-headless-shell for
# 'test' unless LPIPE_TEST_BROWSER=no.
. "$top_srcdir/tests/cli/lib.sh"

browser=${LPIPE_CHROMIUM:-}
if [ -z "$browser" ]; then
	for b in chromium-headless-shell chromium; do
		if command -v "$b" >/dev/null 2>&1; then
			browser=$b
			break
		fi
	done
fi
if [ -z "$browser" ]; then
	echo "skip: no headless Chromium (chromium-headless-shell or chromium)"
	exit 77
fi
command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }

. "$top_srcdir/tests/cli/html_fixture.sh"

if python3 "$top_srcdir/tests/cli/html_browser.py" "$browser" check "$WORK/hostile.html" \
	"$WORK/hostile.json" "$WORK/hostile.txt"; then
	ok "the report in $browser"
else
	fail "the report in $browser"
fi
finish
