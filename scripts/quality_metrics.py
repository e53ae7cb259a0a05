"""quality_metrics - the text metrics of scripts/eval-quality and bench/e2e.

Standard library only. Every function takes plain strings, so the same
numbers come out whichever program wrote the text (lpipe or a peer chain).

Normalisation (norm): Unicode NFKC, Unicode dashes made '-', quotes
('"`' and the curly ones, 「」) removed, white space collapsed to one
space. Case is folded unless the needle has an upper-case letter (an
identifier such as SECONDS or an option such as dpkg -S is matched
exactly). A needle that starts (ends) with an ASCII letter or digit must
not be glued to one in the haystack: SECONDS does not match in
EPOCHSECONDS, 127 not in 1270; a path (starting with / or ~) must not
go on: /var/log/ does not match in /var/log/dpkg.log. Chinese has no
word boundaries: a Han
character next to a match is fine. When the haystack is a document,
white space is removed altogether on both sides for Chinese text, where
a line break may fall inside a phrase.
"""

import functools
import re
import unicodedata

QUOTES = "'\"`\u2018\u2019\u201c\u201d\u300c\u300d\u300e\u300f"
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_QUOTE_TABLE = {ord(c): None for c in QUOTES}
_QUOTE_TABLE.update({ord(c): "-" for c in DASHES})
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def norm(s):
    """NFKC, dashes to '-', quotes dropped, white space collapsed."""
    s = unicodedata.normalize("NFKC", s).translate(_QUOTE_TABLE)
    return re.sub(r"\s+", " ", s).strip()


def has_han(s):
    return HAN.search(s) is not None


def _alnum(c):
    return c.isascii() and c.isalnum()


@functools.lru_cache(maxsize=64)
def _fold(s):
    return s.casefold()


def _squash_cjk(s):
    return re.sub(r"\s+(?=[^\x00-\x7f])|(?<=[^\x00-\x7f])\s+", "", s)


@functools.lru_cache(maxsize=64)
def _prep(s, squash):
    s = norm(s)
    if squash == "all":
        return re.sub(r"\s", "", s)
    return _squash_cjk(s) if squash else s


def find(hay, needle, squash=False):
    """True when needle occurs in hay under the rules of the module
    docstring; squash=True removes white space next to non-ASCII
    characters (Chinese text), squash="all" removes all white space (and
    with it the boundary rule)."""
    h, n = _prep(hay, squash), _prep(needle, squash)
    if not n:
        return False
    if not re.search(r"[A-Z]", n):
        h, n = _fold(h), n.casefold()
    start = 0
    while True:
        i = h.find(n, start)
        if i < 0:
            return False
        j = i + len(n)
        ok_left = not (_alnum(n[0]) and i > 0 and _alnum(h[i - 1]))
        ok_right = not (_alnum(n[-1]) and j < len(h) and _alnum(h[j]))
        if n[0] in "/~" and j < len(h):  # a path must not go on
            ok_right = ok_right and not (_alnum(h[j]) or h[j] in "_/-"
                                         or (h[j] == "." and _alnum(h[j + 1:j + 2] or " ")))
        if (ok_left and ok_right) or squash == "all":
            return True
        start = i + 1


def in_source(source, needle):
    """needle occurs in a document (white space collapsed, or removed next
    to Chinese characters), or does with all white space removed (a line
    break inside a path such as "/etc/cron.daily/ apt")."""
    return (find(source, needle, squash=has_han(source) or has_han(needle))
            or find(source, needle, squash="all"))


def answer_correct(output, answer, variants=()):
    """The output holds the answer or one of its accepted variants."""
    return any(find(output, a) for a in [answer, *variants] if a)


# ---- citations -----------------------------------------------------------

CITE = re.compile(r"\[chunk\s+(\d+)\]", re.I)


def cited_ids(answer_text):
    """The chunk ids cited as [chunk N] anywhere in the text, in order."""
    seen = []
    for m in CITE.finditer(answer_text or ""):
        n = int(m.group(1))
        if n not in seen:
            seen.append(n)
    return seen


def inline_cited(answer_text):
    """True when the text before a trailing 'Sources:' line cites a chunk
    (the model cited by itself, rather than lpipe's fallback list)."""
    body = re.split(r"\n\s*Sources:", answer_text or "")[0]
    return bool(CITE.search(body))


def citation_score(chunk_texts, needles):
    """(share of cited chunks holding one of needles, any holds one);
    chunk_texts are the cited chunks' texts. (0, False) when none."""
    if not chunk_texts:
        return 0.0, False
    good = [any(in_source(t, n) for n in needles if n) for t in chunk_texts]
    return sum(good) / len(good), any(good)


# ---- grounding -----------------------------------------------------------

FACT_PATTERNS = [
    ("quoted", re.compile(r"\"([^\"\n]{2,80})\"|\u201c([^\u201d\n]{2,80})\u201d"
                          r"|(?<!\w)'([^'\n]{2,80})'(?!\w)|`([^`\n]{2,80})`")),
    ("path", re.compile(r"(?<![\w/])(?:~|\.{1,2})?/[\w.+-]+(?:/[\w.+-]*)*")),
    ("option", re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")),
    ("number", re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*")),
    ("identifier", re.compile(
        r"\b(?:[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*"
        r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Z][A-Z0-9]{2,})\b")),
]


def facts(text):
    """The checkable facts of a text: (kind, string) for every number,
    option (-x, --foo), path (/etc/x, ~/.x), identifier (snake_case,
    camelCase/CamelCase, dotted.name, ALLCAPS of 3+) and quoted string."""
    out = []
    for kind, rx in FACT_PATTERNS:
        for m in rx.finditer(text):
            s = next((g for g in m.groups() if g), None) if m.groups() else m.group(0)
            s = (s or m.group(0)).strip().rstrip(".,;:")
            if len(s) >= 1 and (kind, s) not in out:
                out.append((kind, s))
    return out


def fact_grounding(output, source):
    """(grounded, total, ungrounded list): facts of output found in source."""
    fs = facts(output)
    bad = [s for _, s in fs if not in_source(source, s)]
    return len(fs) - len(bad), len(fs), bad


SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|(?<=[\u3002\uff01\uff1f])|\n\s*\n")
STOP = set("""a an and are as at be been but by can do does for from has have
how if in into is it its may more most no not of on or so such than that the
their then there these they this those to was were what when where which
while who will with would you your also other use used using only each any
all one two""".split())


def sentences(text):
    """Sentences: split after . ! ? before a capital/digit/quote, after
    the Chinese full stops, and at blank lines."""
    parts = SENT_SPLIT.split(text or "")
    return [p.strip() for p in parts if p and p.strip()]


def content_units(s):
    """The set a sentence is compared by: for Chinese, the bigrams of its
    Han characters plus its ASCII words; otherwise its lower-case words of
    2+ letters/digits that are not stop words."""
    s = norm(s).casefold()
    units = {w for w in re.findall(r"[a-z0-9_][a-z0-9_.+-]*[a-z0-9_]|[a-z0-9]", s)
             if len(w) >= 2 and w not in STOP}
    han = "".join(HAN.findall(s))
    runs = re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", s)
    for r in runs:
        units.update(r[i:i + 2] for i in range(len(r) - 1))
    if han and not any(len(r) > 1 for r in runs):
        units.update(han)
    return units


SUPPORT_WINDOW = 3
SUPPORT_SHARE = 0.5


def sentence_support(output, source, window=SUPPORT_WINDOW, share=SUPPORT_SHARE):
    """(supported, total): an output sentence is supported when at least
    `share` of its content units (content_units) occur in the union of the
    units of `window` consecutive source sentences (some window). Sentences
    with fewer than 3 units are not counted."""
    src = [content_units(s) for s in sentences(source)]
    wins = []
    for i in range(max(1, len(src) - window + 1)):
        u = set()
        for k in src[i:i + window]:
            u |= k
        wins.append(u)
    ok = total = 0
    for s in sentences(output):
        u = content_units(s)
        if len(u) < 3:
            continue
        total += 1
        if any(len(u & w) >= share * len(u) for w in wins):
            ok += 1
    return ok, total


# ---- meta-talk, language, keyphrases, words -------------------------------

META_PATTERNS = [
    r"\bthe (?:text|document|passage|article|section|excerpt|chapter|summary|input|content)s? "
    r"(?:describes?|discuss(?:es)?|explains?|provides?|covers?|talks?|is about|focuses|outlines?|presents?|highlights?|mentions?)",
    r"\b(?:this|the following) (?:text|document|passage|article|section|excerpt|chapter|summary)\b",
    r"\bthe summary\b",
    r"\bin summary\b",
    r"\bto summari[sz]e\b",
    r"\bin conclusion\b",
    r"\bhere is (?:a|the) summary\b",
    r"\bsummary:",
    r"\bthe (?:author|passage|text) (?:says|states|mentions)\b",
    r"\bin \d+ sentences\b",
    r"(?:本文|这段文字|该文档|本文档|这篇文章|文本)(?:描述|介绍|讨论|说明|讲述|主要)",
    r"总之|总而言之|综上所述|摘要[:：]|以下是摘要",
]
META = re.compile("|".join(f"(?:{p})" for p in META_PATTERNS), re.I)


def meta_talk(text):
    """The meta-talk phrases found in text (META_PATTERNS: 'The text
    describes', 'This document', 'The summary', 'In summary', 'in 2
    sentences', '本文介绍', '总之', ...)."""
    return [m.group(0) for m in META.finditer(text or "")]


def script_of(text):
    """'zh', 'en' or None (too little prose to say). Code-like tokens
    (with / _ - . = $ digits) are dropped first; then 'zh' when the Han
    characters are at least as many as the Latin words."""
    t = re.sub(r"\S*[/_=$\d.\\-]\S*", " ", norm(text or ""))
    han = len(HAN.findall(t))
    words = len(re.findall(r"[A-Za-z]{2,}", t))
    if han + words < 3:
        return None
    return "zh" if han >= words else "en"


def language_match(text, lang):
    """True when the output's script is the document's (None counts as a
    match: a bare command is no language)."""
    s = script_of(text)
    return s is None or s == lang


def load_keyphrases(path):
    """Keyphrase file: one phrase a line, alternatives separated by '|',
    '#' starts a comment line."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                out.append([a.strip() for a in line.split("|") if a.strip()])
    return out


def keyphrase_survival(text, phrases):
    """(kept, total, missing): a phrase is kept when one of its
    alternatives occurs in text (find, case-insensitive for lower-case
    phrases, white space ignored around Chinese)."""
    squash = has_han(text)
    missing = [p[0] for p in phrases if not any(find(text, a, squash) for a in p)]
    return len(phrases) - len(missing), len(phrases), missing


def words(text):
    """Latin words plus Han characters."""
    t = text or ""
    return len(re.findall(r"[A-Za-z0-9][\w'.-]*", t)) + len(HAN.findall(t))


def strip_verification(text):
    """The text output of lpipe without its trailing verification line
    (a blank line, then 'verification: S/N keyphrases survived ...')."""
    return re.sub(r"\n\nverification: \d+/\d+ keyphrases[^\n]*\n?$", "", text or "").rstrip()


def interleave(items):
    """items (dicts with a "doc") reordered: the first of each document,
    then the second of each, ... (a limit then spreads over documents)."""
    by = {}
    for x in items:
        by.setdefault(x["doc"], []).append(x)
    out, k = [], 0
    while len(out) < len(items):
        out += [v[k] for v in by.values() if k < len(v)]
        k += 1
    return out


# ---- running a measured process -------------------------------------------

def tree_rss_kib(pid):
    """Resident KiB of pid and every process below it, summed (VmRSS of
    /proc/P/status; children from /proc/P/task/T/children)."""
    import os
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            pass
    return total


def run_measured(cmd, env=None, stdin_text=None):
    """Run cmd in its own process: (exit code, stdout, stderr, wall
    seconds, peak RSS in MiB). The peak RSS is the larger of wait4's
    ru_maxrss (the largest single process of the tree) and the largest
    sum over the whole process tree sampled every 20 ms, so a command that
    forks helpers is charged for all of them. Output goes through
    temporary files, so a large report cannot block the child."""
    import os
    import subprocess
    import tempfile
    import threading
    import time
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env,
                             stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL)
        peak, done = [0], threading.Event()

        def sample():
            while not done.wait(0.02):
                peak[0] = max(peak[0], tree_rss_kib(p.pid))
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        if stdin_text is not None:
            p.stdin.write(stdin_text.encode("utf-8"))
            p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (p.returncode, out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace"), wall, max(ru.ru_maxrss, peak[0]) / 1024.0)
