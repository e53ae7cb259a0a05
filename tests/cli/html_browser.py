#!/usr/bin/env python3
"""html_browser.py - drive a headless Chromium over the DevTools protocol.

    html_browser.py CHROMIUM check REPORT.html REPORT.json SOURCE.txt
    html_browser.py CHROMIUM shot  REPORT.html OUT.png [WIDTH]

The browser is started with --remote-debugging-pipe: protocol messages are
NUL-terminated JSON on its file descriptors 3 (commands) and 4 (replies),
so only the standard library is needed. `check` loads the report, clicks
a summary open, clicks its first chunk link, and compares what is laid out
on the page (elements present, boxes visible, the excerpt equal to the
source's byte range) with what the JSON report of the same run says;
it prints "ok - ..." / "FAIL - ..." lines and exits 1 on a failure.
Last, it takes a screenshot of the whole page and checks that every
section lies inside it (kept as $LPIPE_HTML_SHOT when that is set).
`shot` writes a screenshot of the whole page.
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

# Guards against a browser that hangs, not assertions about speed.
REPLY_WAIT_S = 60


class Browser:
    def __init__(self, binary, width=1200, height=900):
        self.tmp = tempfile.mkdtemp(prefix="lpipe-browser.")
        # the pipe ends the browser gets are moved above 9 first, so that
        # making them its fds 3 and 4 cannot overwrite one with the other
        cmd_r, self.cmd_w = os.pipe()
        self.rep_r, rep_w = os.pipe()
        cmd_r, rep_w = self._high(cmd_r), self._high(rep_w)
        args = [binary, "--headless", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--remote-debugging-pipe", "--user-data-dir=" + self.tmp,
                "--window-size=%d,%d" % (width, height), "about:blank"]
        # the page is the test's own: no sandbox, which Chromium refuses to
        # start as root and cannot set up in many containers
        args.insert(1, "--no-sandbox")

        def fds():
            os.dup2(cmd_r, 3)
            os.dup2(rep_w, 4)
        self.proc = subprocess.Popen(args, preexec_fn=fds, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(rep_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    @staticmethod
    def _high(fd):
        hi = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
        os.close(fd)
        return hi

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rep_r], [], [], left)[0]:
                raise RuntimeError("no reply from the browser in %d s" % REPLY_WAIT_S)
            chunk = os.read(self.rep_r, 1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + REPLY_WAIT_S
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method):
        deadline = time.monotonic() + REPLY_WAIT_S
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def open_page(self):
        targets = self.send("Target.getTargets")["targetInfos"]
        pages = [t for t in targets if t["type"] == "page"]
        tid = pages[0]["targetId"] if pages else \
            self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": tid, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.send(domain + ".enable")

    def navigate(self, url):
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def js(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("script failed: %s" % r["exceptionDetails"].get("text"))
        return r["result"].get("value")

    def click(self, selector):
        """Scroll the element into view and click its centre with the mouse."""
        box = self.js("(function(){var e=document.querySelector(%s);if(!e)return null;"
                      "e.scrollIntoView({block:'center'});var r=e.getBoundingClientRect();"
                      "return [r.left+r.width/2,r.top+r.height/2];})()" % json.dumps(selector))
        if not box:
            return False
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})
        self.js("new Promise(function(r){requestAnimationFrame(function(){"
                "requestAnimationFrame(r);});})")
        return True

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=REPLY_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


# An element's box and whether it is rendered (checkVisibility: false in a
# closed <details>, whose content Chromium lays out but does not paint).
BOX = """(function(sel){var e=document.querySelector(sel);if(!e)return null;
var r=e.getBoundingClientRect();
return {x:r.left,y:r.top,w:r.width,h:r.height,shown:e.checkVisibility({
 contentVisibilityAuto:true,opacityProperty:true,visibilityProperty:true}),
 vh:innerHeight,text:e.textContent};})(%s)"""


class Checker:
    def __init__(self):
        self.failed = 0

    def check(self, what, cond, detail=""):
        if cond:
            print("ok - " + what)
        else:
            self.failed += 1
            print("FAIL - %s%s" % (what, (": " + str(detail)) if detail else ""))


def visible(b):
    """A box a reader can see: rendered, not empty."""
    return bool(b) and b["shown"] and b["w"] > 0 and b["h"] > 0


def check_layout(br, ck, rep):
    ids = ["result", "question", "tree", "keyphrases", "memory", "trace", "chunks"]
    boxes = [br.js(BOX % json.dumps("#" + i)) for i in ids]
    ck.check("every section is laid out and visible", all(visible(b) for b in boxes),
             [i for i, b in zip(ids, boxes) if not visible(b)])
    ys = [b["y"] for b in boxes if b]
    ck.check("sections in the documented order", ys == sorted(ys), ys)
    levels = rep["summary_levels"]
    n_sum = sum(len(l["summaries"]) for l in levels)
    ck.check("one details per summary (%d)" % n_sum,
             br.js("document.querySelectorAll('details.summary').length") == n_sum)
    ck.check("the top summary is open",
             br.js("document.getElementById('s-%d-0').open" % (len(levels) - 1)) is True)
    rows = br.js("document.querySelectorAll('#retrieved tbody tr').length")
    ck.check("one retrieved row per selected chunk (%d)" % len(rep["selected"]),
             rows == len(rep["selected"]), rows)
    scores = br.js("Array.from(document.querySelectorAll('#retrieved meter'))"
                   ".map(function(m){return m.value;})")
    want = [max(c["score"], 0) for c in rep["selected"]]
    ck.check("retrieved scores as in the JSON report",
             scores is not None and len(scores) == len(want) and
             all(abs(a - b) <= 1e-5 * max(1, abs(b)) for a, b in zip(scores, want)),
             (scores, want))
    ranks = br.js("Array.from(document.querySelectorAll('#retrieved tbody td:nth-child(4)'))"
                  ".map(function(td){return +td.textContent;})")
    sel = rep["selected"]
    want = [1 + sum(o["score"] > c["score"] for o in sel) for c in sel]
    ck.check("retrieved chunks ranked by score", ranks == want, (ranks, want))
    ph = rep["verification"]["phrases"]
    kept = br.js("document.querySelectorAll('ul.phrases li.kept').length")
    lost = br.js("document.querySelectorAll('ul.phrases li.lost').length")
    ck.check("keyphrases marked kept/lost as in the JSON report",
             kept == sum(p["survived"] for p in ph) and lost == sum(not p["survived"] for p in ph),
             (kept, lost))
    bars = br.js("document.querySelectorAll('#mem-stages rect').length")
    ck.check("one memory bar per stage run (%d)" % len(rep["stages"]),
             bars == len(rep["stages"]), bars)
    ck.check("memory per tag drawn",
             br.js("Array.from(document.querySelectorAll('#mem-tags rect'))"
                   ".every(function(r){return r.getBBox().width>0;})") is True and
             visible(br.js(BOX % json.dumps("#mem-tags"))))
    ck.check("one trace row per stage run",
             br.js("document.querySelectorAll('#trace tbody tr').length") == len(rep["stages"]))


def check_follow(br, ck, rep, source):
    sel = "#s-0-0"
    closed = br.js(BOX % json.dumps(sel + " pre.text"))
    ck.check("a closed summary hides its text", closed and not visible(closed), closed)
    br.click(sel + " > summary")
    ck.check("clicking a summary opens it", br.js("document.querySelector('%s').open" % sel))
    opened = br.js(BOX % json.dumps(sel + " pre.text"))
    ck.check("the opened summary's text is visible", visible(opened), opened)
    want = rep["summary_levels"][0]["summaries"][0]["text"]
    ck.check("the summary shows its text", opened and opened["text"] == want,
             opened and opened["text"][:80])
    href = br.js("(document.querySelector('%s .from a[href^=\"#c-\"]')||{}).hash||null" % sel)
    ck.check("the summary links to a chunk", bool(href), href)
    if not href:
        return
    cid = int(href[len("#c-"):])
    br.click(sel + ' .from a[href="%s"]' % href)
    ck.check("following the link changes the address to " + href,
             br.js("location.hash") == href)
    target = "#c-%d" % cid
    ck.check("the chunk opens and is highlighted",
             br.js("(function(e){return e.open&&e.classList.contains('hl');})"
                   "(document.querySelector('%s'))" % target) is True)
    ex = br.js(BOX % json.dumps(target + " pre.excerpt"))
    ck.check("the chunk's excerpt is visible in the viewport",
             visible(ex) and ex["y"] < ex["vh"] and ex["y"] + ex["h"] > 0, ex)
    c = rep["chunks"][cid]
    text = source[c["offset"]:c["offset"] + c["length"]].decode("utf-8")
    ck.check("the excerpt is the source's bytes %d-%d" % (c["offset"], c["offset"] + c["length"]),
             ex and ex["text"] == text, ex and ex["text"][:80])
    rng = br.js(BOX % json.dumps(target + " .range"))
    ck.check("the chunk names its byte range",
             rng and rng["text"] == "bytes %d\u2013%d" % (c["offset"], c["offset"] + c["length"]),
             rng and rng["text"])


def check(binary, html, rep_path, src_path):
    rep = json.load(open(rep_path, encoding="utf-8"))
    source = open(src_path, "rb").read()
    ck = Checker()
    br = Browser(binary)
    try:
        br.open_page()
        # before any page script: count policy violations and stray dialogs
        br.send("Page.addScriptToEvaluateOnNewDocument", {"source":
                "window.__csp=[];document.addEventListener('securitypolicyviolation',"
                "function(e){window.__csp.push(e.violatedDirective+' '+e.blockedURI);});"})
        br.navigate("file://" + os.path.abspath(html))
        check_layout(br, ck, rep)
        check_follow(br, ck, rep, source)
        pwned = br.js("typeof window.__pwned")
        ck.check("no markup from the document ran", pwned == "undefined", pwned)
        ck.check("no element came from the document",
                 br.js("document.querySelectorAll('img,iframe,object,embed,"
                       "body script:not(:last-of-type),a[href^=\"javascript\"]').length") == 0)
        ck.check("one script element, the report's own",
                 br.js("document.scripts.length") == 1)
        csp = br.js("window.__csp")
        ck.check("no content security policy violation", csp == [], csp)
        reqs = [e["params"]["request"]["url"] for e in br.events
                if e.get("method") == "Network.requestWillBeSent"]
        ck.check("no request but the page itself",
                 all(u.startswith("file://") for u in reqs) and len(reqs) <= 1, reqs)
        title = br.js("document.title")
        ck.check("the title is the pipeline name as text",
                 title == "lpipe report: " + rep["pipeline"]["name"], title)
        check_screenshot(br, ck, 1200)
    except RuntimeError as e:
        ck.check("talk to the browser", False, e)
    finally:
        br.close()
    return 1 if ck.failed else 0


def full_page_png(br, width):
    """A screenshot of the whole page (the viewport grown to its height)."""
    h = br.js("Math.ceil(document.documentElement.scrollHeight)")
    br.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": min(h, 16000),
                                                  "deviceScaleFactor": 1, "mobile": False})
    data = br.send("Page.captureScreenshot", {"format": "png",
                                              "captureBeyondViewport": True})["data"]
    return base64.b64decode(data)


def png_size(png):
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        return None
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def check_screenshot(br, ck, width):
    """The screenshot holds the page, and every section's box lies inside it."""
    png = full_page_png(br, width)
    size = png_size(png)
    page = br.js("[document.documentElement.scrollWidth,document.documentElement.scrollHeight]")
    ck.check("the screenshot is the whole page %s" % (page,), size == tuple(page), size)
    boxes = br.js("Array.from(document.querySelectorAll('main>section,header,nav')).map("
                  "function(e){var r=e.getBoundingClientRect();return [e.id||e.tagName,"
                  "r.left+scrollX,r.top+scrollY,r.right+scrollX,r.bottom+scrollY];})")
    out = [b[0] for b in boxes if not size or b[1] < 0 or b[2] < 0 or b[3] > size[0] + 0.5
           or b[4] > size[1] + 0.5 or b[3] <= b[1] or b[4] <= b[2]]
    ck.check("all %d sections lie inside the screenshot" % len(boxes),
             len(boxes) == 9 and not out, out or len(boxes))
    path = os.environ.get("LPIPE_HTML_SHOT")
    if path:
        with open(path, "wb") as f:
            f.write(png)


def shot(binary, html, png, width):
    br = Browser(binary, width=width)
    try:
        br.open_page()
        br.navigate("file://" + os.path.abspath(html))
        with open(png, "wb") as f:
            f.write(full_page_png(br, width))
    finally:
        br.close()
    return 0


def main(argv):
    if len(argv) >= 6 and argv[2] == "check":
        return check(argv[1], argv[3], argv[4], argv[5])
    if len(argv) >= 5 and argv[2] == "shot":
        return shot(argv[1], argv[3], argv[4], int(argv[5]) if len(argv) > 5 else 1200)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
