#!/bin/sh
# serve-page.sh - the web page of lpipe serve in headless Chromium
# (serve_page.py over the DevTools protocol): drop a document, ask, see
# the progress while the stub model server holds the run, read the answer
# with its quote and cited passage highlighted; Chinese labels for a
# Chinese browser. The screenshot is kept as $LPIPE_SERVE_SHOT when set.
# Skipped (77) without a browser, as tests/cli/html_browser.sh.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/serve_lib.sh"

browser=${LPIPE_CHROMIUM:-}
if [ -z "$browser" ]; then
	for b in chromium-headless-shell chromium; do
		command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
	done
fi
[ -n "$browser" ] || { echo "skip: no headless Chromium"; exit 77; }

G=$WORK/gate
mkdir -p "$G" "$WORK/pipelines"
STUB_GATE=$G start_stub 200
# qa on the stub model: the answer is the quoted sentence, whatever the
# stub says (an answer not in its sentence is replaced by it)
sed -e '/^model:/,/^memory:/{/^memory:/!d}' -e "s|^memory:|model: {backend: openai, url: \"http://127.0.0.1:$PORT/v1\", name: stub-model, timeout: 600s, retries: 0, context: 2048}\nmemory:|" \
	"$PIPELINES/qa.yaml" >"$WORK/pipelines/qa.yaml"
start_serve --pipelines "$WORK/pipelines" --mem-budget 256MiB
shot=${LPIPE_SERVE_SHOT:-$WORK/page.png}
if python3 "$top_srcdir/tests/cli/serve_page.py" "$browser" "$SPORT" "$DATA/small.txt" "$G" \
	"$shot"; then
	ok "the page in $browser"
else
	fail "the page in $browser"
fi
stop_serve
finish
