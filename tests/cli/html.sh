#!/bin/sh
# html.sh - the HTML report: selected from the command line and from the
# pipeline, written atomically, self-contained, markup in the document kept
# as text, and every link, summary and excerpt where the JSON report of the
# same run says. (html_valid.sh checks it against an HTML checker,
# html_browser.sh in a browser.)
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/html_fixture.sh"

H=$WORK/hostile.html
case $(head -c 16 "$H") in
"<!DOCTYPE html>"*) ok "--format html writes an HTML page" ;;
*) fail "--format html: no doctype" ;;
esac
tail -c 8 "$H" | grep -q '</html>' && ok "the page is complete" || fail "the page is cut short"

# Selected from the pipeline, from --set, and named in the usage error.
P=$(pipeline out-html <<'Y'
version: 1
name: out-html
stages:
  - split: {size: 64, overlap: 8}
output: {format: html}
Y
)
lp run "$P" "$DATA/small.txt"
expect "output: {format: html}" 0
expect_out "output.format html writes HTML" "<!DOCTYPE html>" "<title>lpipe report: out-html</title>"
lp check "$P"
expect "lpipe check accepts format html" 0
expect_out "lpipe check shows format html" "format: html"
lp run "$PIPELINES/extractive-summary.yaml" "$DATA/small.txt" --set output.format=html
expect "--set output.format=html" 0
expect_out "--set output.format=html writes HTML" "<!DOCTYPE html>"
lp run "$P" "$DATA/small.txt" --format pdf
expect "--format pdf" 2 "unknown format 'pdf' (expected text, markdown, json or html)"

# -o: written through a temporary file and renamed; a failed run leaves
# the old page and no temporary file.
echo "old page" >"$WORK/page.html"
lp run "$P" "$WORK/missing.txt" -o "$WORK/page.html"
[ "$(cat "$WORK/page.html")" = "old page" ] && ok "-o page untouched by a failed run" ||
	fail "-o page changed by a failed run"
lp run "$P" "$DATA/small.txt" -o "$WORK/page.html"
expect "-o page.html" 0
grep -q "<!DOCTYPE html>" "$WORK/page.html" && ok "-o replaced the page" || fail "-o left the old page"
ls -a "$WORK" | grep -q '\.tmp\.' && fail "temporary file left behind" || ok "no temporary file left"

# Markup in the document, the question, the pipeline name and the
# keyphrases stays text: the page's only script is its own.
n=$(grep -o -i '<script' "$H" | wc -l)
[ "$n" -eq 1 ] && ok "one <script> in the page" || fail "$n <script> tags in the page"
for bad in '<img' '<svg onload' '<a href="javascript' '</title><script' '<b>report'; do
	grep -qiF -- "$bad" "$H" && fail "raw '$bad' in the page" || ok "no raw '$bad'"
done
for good in '&lt;img src=x onerror=&quot;window.__pwned = 2&quot;&gt;' \
	'Which oil did the lamp burn? &lt;script&gt;window.__pwned = 5&lt;/script&gt;' \
	'<title>lpipe report: &lt;b&gt;report&lt;/b&gt; &amp; &lt;/title&gt;&lt;script&gt;' \
	'<li class="lost">&lt;/script&gt;x<span class="tag">must</span>'; do
	grep -qF -- "$good" "$H" && ok "escaped: $good" || fail "missing, escaped: $good"
done

# Controls and invalid UTF-8 (replaced on input) come out as U+FFFD, never raw.
printf 'Bell\a and escape\033 and DEL\177 and a bad byte \377 here. Another sentence follows it.\n' \
	>"$WORK/controls.txt"
R=$(pipeline replace <<'Y'
version: 1
input: {invalid_utf8: replace}
stages:
  - split: {size: 64, overlap: 8}
output: {format: html}
Y
)
lp run "$R" "$WORK/controls.txt" -o "$WORK/controls.html"
expect "a document with controls and invalid UTF-8" 0
if LC_ALL=C grep -q "$(printf '[\001-\010\013\014\016-\037\177]')" "$WORK/controls.html"; then
	fail "a control character reached the page"
else
	ok "no control character in the page"
fi
grep -q "Bell$(printf '\357\277\275') and escape$(printf '\357\277\275')" "$WORK/controls.html" &&
	ok "controls written as U+FFFD" || fail "controls not replaced"

# The policy names the hash of the page's script; everything else is
# refused, so nothing is fetched; every link has its target; summaries
# and excerpts are where the JSON report says.
if python3 - "$H" "$WORK/hostile.json" "$WORK/hostile.txt" "$WORK/small.html" <<'PY'
import base64, hashlib, html.parser, json, re, sys

page = open(sys.argv[1], encoding="utf-8").read()
rep = json.load(open(sys.argv[2], encoding="utf-8"))
src = open(sys.argv[3], "rb").read()
fails = []

def need(what, cond):
    print(("ok - " if cond else "FAIL - ") + what)
    if not cond:
        fails.append(what)

script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
need("the policy refuses fetches", csp.startswith("default-src 'none';"))
need("the policy admits the page's script by its hash", "'sha256-%s'" % digest in csp)

class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.hrefs, self.srcs = set(), [], []
        self.stack, self.texts, self.summaries = [], {}, []
        self.cur = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"])
        if "src" in a:
            self.srcs.append(a["src"])
        if tag == "details" and a.get("class") in ("chunk", "summary"):
            self.cur = a["id"]
            if a["class"] == "summary":
                self.summaries.append(a["id"])
        if tag == "pre" and self.cur and a.get("class") in ("excerpt", "text"):
            self.stack.append(self.cur)
            self.texts[self.cur] = ""
    def handle_endtag(self, tag):
        if tag == "pre" and self.stack:
            self.stack.pop()
    def handle_data(self, data):
        if self.stack:
            self.texts[self.stack[-1]] += data

p = Page()
p.feed(page)
need("no src attribute (nothing loaded)", p.srcs == [])
need("no link leaves the page", all(h.startswith("#") for h in p.hrefs))
dangling = [h for h in p.hrefs if h[1:] not in p.ids]
need("every link has its target %s" % dangling[:3], not dangling)
levels = rep["summary_levels"]
need("one summary per tree node",
     p.summaries == ["s-%d-%d" % (l, i) for l in reversed(range(len(levels)))
                     for i in range(len(levels[l]["summaries"]))])
need("summary texts as in the JSON report",
     all(p.texts["s-%d-%d" % (l, i)] == s["text"]
         for l in range(len(levels)) for i, s in enumerate(levels[l]["summaries"])))
shown = [k for k in p.texts if k.startswith("c-")]
need("excerpts of the retrieved chunks", all("c-%d" % c["id"] in shown for c in rep["selected"]))
need("each excerpt is its chunk's bytes",
     shown and all(p.texts[k] == src[c["offset"]:c["offset"] + c["length"]].decode()
                   for k in shown for c in [rep["chunks"][int(k[2:])]]))

small = Page()
small.feed(open(sys.argv[4], encoding="utf-8").read())
need("extractive report: a tree and chunk excerpts",
     "s-0-0" in small.summaries and any(k.startswith("c-") for k in small.texts))
sys.exit(1 if fails else 0)
PY
then ok "page structure against the JSON report"; else fail "page structure against the JSON report"; fi

finish
