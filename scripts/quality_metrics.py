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


# ---- answers: the paragraph, abstention, conciseness -------------------------

# The answer column of a question the document does not answer.
NO_ANSWER = "-"

# A reply that says the document does not answer: the one place these
# are defined (matched after norm, which drops apostrophes: "doesnt"). English: "the document does not say / mention / state ...",
# "... is not mentioned in the document", "the document says nothing
# about"; Chinese: "文档中没有说明" and its variants (文档/文中/原文,
# 没有/未/并未, 说明/提到/提及/给出/介绍/涉及).
ABSTAIN_PATTERNS = [
    r"\b(?:the|this) (?:document|text|source|manual|passage|page)s? (?:does not|doesn'?t|do not|"
    r"don'?t|did not|didn'?t) (?:say|mention|state|specify|cover|contain|describe|explain|answer|tell|give)",
    r"\b(?:is|are|was|were) not (?:mentioned|stated|specified|covered|described|given|answered)"
    r" in the (?:document|text|source|manual|passage)",
    r"\bthe (?:document|text|source|manual) says nothing\b",
    r"\bno (?:information|answer|mention)\b[^.\n]{0,40}\bin the (?:document|text|source|manual)",
    r"(?:文档|文中|原文|资料|手册)(?:中|里)?(?:并)?(?:没有|未|没)(?:有)?"
    r"(?:说明|提到|提及|给出|介绍|涉及|描述|记载|相关)",
    r"(?:文档|文中|原文)(?:中|里)?找不到",
]
ABSTAIN = re.compile("|".join(f"(?:{p})" for p in ABSTAIN_PATTERNS), re.I)

# Lines that lpipe's answer stage writes after the answer: the quoted
# source sentence, the check, the sources.
AFTER_ANSWER = re.compile(r"\n\s*(?:Quote|Nearest|\u5f15\u6587|Check|Sources)\s*[:\uff1a]")
CONCISE_WORDS = 30
CONCISE_HAN = 60


def answer_paragraph(text):
    """The answer's own words: the text before a "Quote:" ("引文："),
    "Check:" or "Sources:" line."""
    return AFTER_ANSWER.split("\n" + (text or ""))[0].strip()


def abstains(text):
    """True when the text says the document does not answer
    (ABSTAIN_PATTERNS)."""
    return ABSTAIN.search(norm(text or "")) is not None


def concise(text):
    """At most CONCISE_WORDS Latin words, or CONCISE_HAN Han characters,
    or a mix within the same budget (words/30 + Han/60 <= 1)."""
    t = text or ""
    han = len(HAN.findall(t))
    latin = len(re.findall(r"[A-Za-z0-9][\w'.-]*", t))
    return latin / CONCISE_WORDS + han / CONCISE_HAN <= 1.0


def concise_correct(paragraph, answer, variants=()):
    """Right (answer_correct) and short (concise)."""
    return answer_correct(paragraph, answer, variants) and concise(paragraph)


def confidently_wrong(paragraph, right):
    """A reply that is not right and does not abstain (for a question the
    document does not answer, right is False: only an abstention is
    right)."""
    return not right and not abstains(paragraph)


# ---- verbatim replies ------------------------------------------------------

def _letters(s):
    return re.sub(r"[\s\-\u00ad_]", "", norm(s)).casefold()


def verbatim(paragraph, source):
    """True when every sentence of the paragraph occurs in the source
    with white space, hyphens and underscores left out of both (norm,
    case folded), so that lines wrapped another way, a word a rendered
    manual broke at a line's end ("extra-\nordinarily") and a link's
    words as html2text writes them ("Handling_Exceptions") still match:
    the reply is the document's own words. False for an empty paragraph."""
    sens = sentences(paragraph)
    src = _letters(source or "")
    return bool(sens) and all(_letters(x) in src for x in sens)


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


# ---- summary sentences that stand alone --------------------------------------

# A sentence that points at something after it: "the following ...",
# "as follows", "below", "如下", "以下", "下列"; it stands only when its
# list comes in the same sentence (a colon and 3+ words after it).
FORWARD = re.compile(r"\b(?:the following|as follows|(?:listed|shown|given|described) below"
                     r"|see below|below:)|如下|以下|下列|下面的", re.I)
# A sentence opening with a pronoun as subject. It, They, He, She are
# pronouns wherever; This, These, Those, That are subjects only when a
# verb follows directly ("This is", "These allow"), else determiners
# ("This option ...").
PRONOUN_ALWAYS = re.compile(r"^(?:It|They|He|She|Its|Their)\b(?!['\u2019]s\b\s+(?:name|value))")
PRONOUN_DEMO = re.compile(r"^(?:This|These|Those|That)\s+(\w+)")
PRONOUN_ZH = re.compile(r"^(?:它们|它|他们|他|她|这些|此外|这|此|其)")
# Verb-like words for the two checks above and for fragments: the
# auxiliaries and modals, and common verbs of technical prose.
VERBS = set("""is are was were be been being am has have had having do does did can could
will would shall should may might must need needs let lets allow allows allowed make makes
made mean means meant provide provides provided give gives gave show shows shown use uses
used run runs ran set sets get gets got keep keeps kept take takes took say says said
describe describes work works apply applies include includes contain contains require
requires return returns read reads write writes start starts stop stops create creates
change changes call calls tell tells cause causes become becomes happen happens also
then""".split())
# A heading glued onto a sentence: an ALL-CAPS run of 2+ words, a section
# number (3.2, 1.2.3, 第 4 章), or a Title Case run of 2-6 words ending in
# a colon, before the sentence proper.
GLUED = [
    re.compile(r"^[A-Z][A-Z0-9'/-]+(?:\s+[A-Z0-9][A-Z0-9'/-]+)+\s*[:.\u2014-]?\s+[A-Z]?[a-z]"),
    re.compile(r"^\d+(?:\.\d+)+\.?\s+\S"),
    re.compile(r"^第\s*[\d一二三四五六七八九十]+\s*[章节]"),
    re.compile(r"^(?:[A-Z][\w/-]*\s+){1,5}[A-Z][\w/-]*:\s+\S"),
]
DETERMINERS = set("a an the of for in on at with and or to by its their all some many "
                  "no each every this these those".split())


def _has_verb(sen):
    """A verb-like word in an English sentence: one of VERBS, or a word
    (not the first) ending in -ed or -ing, or in -s (not -ss, -us, -is)
    when it neither follows a determiner or preposition nor is followed
    by a comma, "and" or "or" (a plural in a list: "hard links, symbolic
    links, and devices")."""
    toks = list(re.finditer(r"[A-Za-z][\w'\u2019-]*", sen))
    for k, m in enumerate(toks):
        w, lw = m.group(0), m.group(0).lower()
        if lw in VERBS:
            return True
        if k == 0:
            continue
        if re.search(r"(?:ed|ing)$", lw) and len(lw) > 4:
            return True
        prev = toks[k - 1].group(0).lower()
        rest = sen[m.end():].lstrip()
        listy = rest.startswith(",") or re.match(r"(?:and|or)\b", rest)
        if (re.search(r"[^sui]s$", lw) and len(lw) > 3 and prev not in DETERMINERS
                and not w[0].isupper() and not listy):
            return True
    return False


def _paragraphs(text):
    """Paragraphs: split at blank lines; a short line without a final
    stop (a heading) starts a new paragraph after it."""
    out = []
    for block in re.split(r"\n\s*\n", text or ""):
        cur = []
        for line in block.split("\n"):
            line = line.strip()
            if not line:
                continue
            heading = (len(line.split()) <= 8 and not re.search(r"[.!?:;\u3002\uff01\uff1f]$", line)
                       and not re.match(r"^[-*\u2022]", line))
            if heading:
                if cur:
                    out.append(" ".join(cur))
                cur = []
                out.append(None)  # a heading: the next sentence opens a paragraph
            else:
                cur.append(line)
        if cur:
            out.append(" ".join(cur))
    return out


def standalone_failures(text):
    """[(sentence, reason)] for the summary's sentences that do not stand
    alone: "lead-in" (a forward-pointing lead-in without its list),
    "pronoun" (the first sentence of a paragraph opens with a pronoun as
    subject: nothing before it in the summary to point back to),
    "fragment" (English: 3+ words and no verb-like word, _has_verb; a
    sentence ending in a colon), "glued heading" (GLUED). A list item
    (a line starting with - * or a bullet) is not checked for a verb."""
    bad = []
    for para in _paragraphs(strip_verification(text)):
        if para is None:
            continue
        for k, sen in enumerate(sentences(para)):
            sen = sen.strip()
            zh = has_han(sen)
            words = re.findall(r"[A-Za-z][\w'\u2019-]*", sen)
            why = None
            if any(rx.search(sen) for rx in GLUED):
                why = "glued heading"
            elif re.search(r"[:\uff1a]\s*$", sen):
                why = "lead-in"
            else:
                m = FORWARD.search(sen)
                after = re.search(r"[:\uff1a](.*)$", sen[m.end():]) if m else None
                if m and not (after and (len(after.group(1).split()) >= 3
                                         or len(HAN.findall(after.group(1))) >= 4)):
                    why = "lead-in"
            if why is None and k == 0:
                dm = PRONOUN_DEMO.match(sen)
                if (PRONOUN_ZH.match(sen) if zh else
                        (PRONOUN_ALWAYS.match(sen) or (dm and dm.group(1).lower() in VERBS))):
                    why = "pronoun"
            if why is None and not zh and len(words) >= 3 and not _has_verb(sen):
                why = "fragment"
            if why:
                bad.append((sen, why))
    return bad


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


def answer_meta(text):
    """The meta-talk phrases of an answer's own words (answer_paragraph):
    a "Quote:" or "Nearest:" line holds the document's words, and a
    document that speaks of itself ("This manual describes ...") is no
    meta-talk of the answer that quotes it."""
    return meta_talk(answer_paragraph(text))


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
