#!/usr/bin/env python3
"""serve_page.py - the web page of lpipe serve in headless Chromium.

    serve_page.py CHROMIUM PORT DOCUMENT GATE_DIR SHOT.png

Drives the browser over the DevTools protocol (the Browser class of
html_browser.py): loads http://127.0.0.1:PORT/, drops DOCUMENT on the
drop zone, asks a question with the "qa" pipeline, and, while the stub
model server holds the run's model request (GATE_DIR/arrived.1), checks
that the page shows the run's progress; then opens the gate and checks
the answer, its quote and the cited passage highlighted in the text of
the document. No policy violation, no request but to the server. A
screenshot of the whole page is written to SHOT.png. Last, the labels
in Chinese for a browser that prefers it. Prints ok/FAIL lines; exits 1
on a failure.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_browser import Browser, Checker, full_page_png  # noqa: E402

# Guards against a hang, not assertions about speed.
WAIT_S = 120


def until(br, expr, what):
    """Poll a page expression until it is truthy; its value."""
    end = time.monotonic() + WAIT_S
    while True:
        v = br.js(expr)
        if v:
            return v
        if time.monotonic() > end:
            raise RuntimeError("the page never showed " + what)
        time.sleep(0.05)


def wait_file(path):
    end = time.monotonic() + WAIT_S
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise RuntimeError("no " + path)
        time.sleep(0.02)


DROP = """(function(text,name){var dt=new DataTransfer();
dt.items.add(new File([text],name,{type:'text/plain'}));
var e=new DragEvent('drop',{dataTransfer:dt,bubbles:true,cancelable:true});
document.getElementById('drop').dispatchEvent(e);return true;})(%s,%s)"""


def english(br, ck, port, source, gate, shot):
    br.navigate("http://127.0.0.1:%s/" % port)
    ck.check("English labels", br.js("document.querySelector('h1').textContent") ==
             "lpipe serve" and br.js("document.getElementById('ask').textContent") == "Ask")
    until(br, "!!document.querySelector('#pipeline option[value=qa]')", "the pipelines")
    text = source.decode("utf-8")
    br.js(DROP % (json.dumps(text), json.dumps("small.txt")))
    doc = until(br, "document.getElementById('docinfo').getAttribute('data-id')", "the upload")
    ck.check("the dropped document is uploaded", len(doc) == 64, doc)
    br.js("document.getElementById('question').value='What does the Fresnel lens do?'")
    br.click("#ask")
    wait_file(os.path.join(gate, "arrived.1"))
    prog = until(br, "Array.from(document.querySelectorAll('#events li')).map(function(l){"
                 "return l.textContent}).filter(function(t){return t.indexOf('answer')>=0})[0]",
                 "a progress event of the answer stage")
    ck.check("progress seen while the run is held: " + prog, "answer" in prog)
    ck.check("the status says running",
             br.js("document.getElementById('status').textContent").startswith("running"))
    open(os.path.join(gate, "open"), "w").close()
    until(br, "!!document.querySelector('#passages mark')", "the cited passage")
    answer = br.js("document.getElementById('answer').textContent")
    ck.check("the answer is shown", len(answer.strip()) > 20, answer[:200])
    mark = br.js("document.querySelector('#passages mark').textContent")
    ck.check("the highlighted passage is the document's text", mark and mark in text, mark[:80])
    quote = br.js("(document.querySelector('#passages mark strong.quote')||{}).textContent")
    ck.check("the quote is highlighted inside it: " + str(quote)[:60],
             quote and quote in mark and quote in answer, quote)
    ctx = br.js("document.querySelector('#passages .passage').textContent")
    ck.check("the passage stands in its context", len(ctx) > len(mark) + 100, len(ctx))
    csp = br.js("window.__csp")
    ck.check("no content security policy violation", csp == [], csp)
    reqs = [e["params"]["request"]["url"] for e in br.events
            if e.get("method") == "Network.requestWillBeSent"]
    base = "http://127.0.0.1:%s/" % port
    ck.check("no request but to the server (%d)" % len(reqs),
             reqs and all(u.startswith(base) for u in reqs), reqs)
    png = full_page_png(br, 1000)
    with open(shot, "wb") as f:
        f.write(png)
    ck.check("a screenshot of %d bytes" % len(png), png[:8] == b"\x89PNG\r\n\x1a\n")


def chinese(br, ck, port):
    br.send("Emulation.setUserAgentOverride", {"userAgent": "Mozilla/5.0 lpipe-test",
                                               "acceptLanguage": "zh-CN,zh"})
    br.send("Emulation.setLocaleOverride", {"locale": "zh-CN"})
    br.navigate("http://127.0.0.1:%s/" % port)
    lang = br.js("navigator.language")
    ck.check("Chinese labels for a zh browser (%s)" % lang,
             br.js("document.getElementById('ask').textContent") == "提问" and
             br.js("document.documentElement.lang") == "zh-CN")


def main(argv):
    binary, port, doc, gate, shot = argv[1:6]
    source = open(doc, "rb").read()
    ck = Checker()
    br = Browser(binary, width=1000, height=900)
    try:
        br.open_page()
        br.send("Page.addScriptToEvaluateOnNewDocument", {"source":
                "window.__csp=[];document.addEventListener('securitypolicyviolation',"
                "function(e){window.__csp.push(e.violatedDirective+' '+e.blockedURI);});"})
        english(br, ck, port, source, gate, shot)
        chinese(br, ck, port)
    except RuntimeError as e:
        ck.check("talk to the browser", False, e)
    finally:
        br.close()
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
