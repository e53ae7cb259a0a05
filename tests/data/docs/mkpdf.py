#!/usr/bin/env python3
"""mkpdf.py OUTDIR - write the PDFs tests/check_readers reads.

Each is written by hand, object by object, with a correct cross-reference
table, so that every byte of a fixture is visible here:

  text.pdf       5 pages: a running header (naming the page) and footer
                 on each, a heading in a larger font, paragraphs, a word
                 hyphenated at a line end, a compound hyphenated inside a
                 line
  pages10k.pdf   a page tree of 10,000 pages (100 nodes of 100 leaves)
  encrypted.pdf  one page behind the standard security handler, whose
                 user password is not empty
  image.pdf      one page whose only content is an image (a scan)
  outline.pdf    3 pages whose headings are set like the body and named
                 by the document's outline (bookmarks), two levels, one
                 title wrapped over two lines, one reached by a named
                 destination, one printed with marks its bookmark lacks,
                 one whose section number is a line of its own; a list
                 item that names a title, and a rule above one
  truncated.pdf  text.pdf cut inside its second page's content (no xref)
  malformed.pdf  a header, then garbage
"""
import os
import sys
import zlib


def pdf(objects, trailer_extra=b""):
    """objects: list of bytes (object bodies), numbered from 1; the
    catalog is object 1."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, trailer_extra, xref)
    return bytes(out)


def stream(data, extra=b""):
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def esc(s):
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")


def page_content(lines):
    """lines: (font size, x, y, text[, font]) in PDF points from the bottom
    left; font F1 (Helvetica, the default) or F2 (Helvetica-Bold)."""
    ops = []
    for size, x, y, text, *font in lines:
        ops.append(b"BT /%s %d Tf %d %d Td (%s) Tj ET" % (
            (font[0] if font else "F1").encode(), size, x, y, esc(text)))
    return b"\n".join(ops)


BODY = [
    "The quick brown fox jumps over the lazy dog while the",
    "reader keeps its memory bounded by reading one page at a",
    "time, and the de-",
    "fault timeout is sixty seconds for a well-known reason.",
]


NAMES = ["alpha", "bravo", "charlie", "delta", "echo"]


def text_pages():
    pages = []
    for p in range(1, 6):
        name = NAMES[p - 1]
        # the header names the page (found by its place), the footer
        # numbers it (found by its text)
        lines = [(9, 72, 760, "Acme Reader Manual: %s" % name), (9, 290, 40, "Page %d" % p)]
        y = 700
        if p == 1:
            lines.append((20, 72, y, "Getting Started"))
            y -= 40
        if p == 2:
            # a subheading in bold at the body's size
            lines.append((11, 72, y, "Reading Files", "F2"))
            y -= 24
        lines.append((11, 72, y, "This page is called %s." % name))
        y -= 14
        for line in BODY:
            lines.append((11, 72, y, line))
            y -= 14
        y -= 20
        lines.append((11, 72, y, "The %s page ends here." % name))
        pages.append(page_content(lines))
    return pages


def document(contents, page_extra=b"", resources=None):
    n = len(contents)
    font = 3 + 2 * n
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
                b" ".join(b"%d 0 R" % (3 + 2 * i) for i in range(n)), n)]
    res = resources or b"<< /Font << /F1 %d 0 R /F2 %d 0 R >> >>" % (font, font + 1)
    for i, c in enumerate(contents):
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                    b"/Resources %s /Contents %d 0 R %s>>" % (res, 4 + 2 * i, page_extra))
        objs.append(stream(c))
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                b"/Encoding /WinAnsiEncoding >>")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold "
                b"/Encoding /WinAnsiEncoding >>")
    return objs


def pages10k():
    # 1 catalog, 2 root, 3-102 intermediate nodes, 103 content, 104 font,
    # 105.. leaves
    leaves0 = 105
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count 10000 >>" % b" ".join(
                b"%d 0 R" % (3 + i) for i in range(100))]
    for i in range(100):
        kids = b" ".join(b"%d 0 R" % (leaves0 + 100 * i + j) for j in range(100))
        objs.append(b"<< /Type /Pages /Parent 2 0 R /Kids [%s] /Count 100 >>" % kids)
    objs.append(stream(page_content([(11, 72, 700, "One line on every page.")])))
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i in range(100):
        for j in range(100):
            objs.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
                        b"/Resources << /Font << /F1 104 0 R >> >> /Contents 103 0 R >>"
                        % (3 + i))
    return pdf(objs)


def encrypted():
    objs = document([page_content([(11, 72, 700, "secret")])])
    # the standard handler, RC4 40-bit; /U does not match the empty
    # password, so a reader needs the user's password
    objs.append(b"<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 "
                b"/O <" + b"ab" * 32 + b"> /U <" + b"cd" * 32 + b"> >>")
    enc = len(objs)
    return pdf(objs, b"/Encrypt %d 0 R /ID [<00112233445566778899aabbccddeeff>"
                     b"<00112233445566778899aabbccddeeff>] " % enc)


def image():
    w = h = 64
    pixels = bytes((x ^ y) & 0xFF for y in range(h) for x in range(w))
    img = stream(zlib.compress(pixels),
                 b"/Type /XObject /Subtype /Image /Width %d /Height %d "
                 b"/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode " % (w, h))
    content = stream(b"q 468 0 0 648 72 72 cm /Im1 Do Q")
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>",
            content, img]
    return pdf(objs)


def outline():
    """Headings in the body's face and size, known only from the outline."""
    pages = [
        [(11, 72, 700, "Installing"),
         (11, 72, 686, "The quick brown fox jumps over the lazy dog while the"),
         (11, 72, 672, "reader keeps its memory bounded by reading a page."),
         (11, 72, 656, "\x95 Building from the source tree"),
         (11, 72, 640, "Building from the"),
         (11, 72, 626, "source tree"),
         (11, 72, 612, "Run the configure script and then make in the top"),
         (11, 72, 598, "directory of the tree, as the other manuals say.")],
        [(11, 72, 714, "~~~~~~~~"),
         (11, 72, 700, '<dir prefix="default">'),
         (11, 72, 686, "This element names a directory to scan for fonts, and"),
         (11, 72, 672, "Installing"),
         (11, 72, 658, "is a word that this page uses in its running text.")],
        [(11, 72, 700, "The last page has no heading of its own at all, and"),
         (11, 72, 686, "its bookmark names nothing that is printed on it."),
         (14, 72, 660, "5.1"),
         (14, 130, 660, "Closing Words"),
         (11, 72, 640, "That is all there is to say.")],
        [(11, 72, 700, "A fourth page, so that the running lines are known.")],
        [(11, 72, 700, "A fifth page, for the same reason.")],
    ]
    # a running header on every page, its page number at the right
    for i, p in enumerate(pages):
        p[:0] = [(9, 72, 760, "Acme Guide"), (9, 520, 760, "%d / %d" % (i + 1, len(pages)))]
    objs = document([page_content(p) for p in pages])
    page_ref = [3 + 2 * i for i in range(len(pages))]
    n = len(objs)
    root, first = n + 1, n + 2
    # (title, level, destination): an explicit one, or a name
    items = [("Installing", 1, b"[%d 0 R /XYZ 0 792 0]" % page_ref[0]),
             ("Building from the source tree", 2, b"[%d 0 R /XYZ 0 660 0]" % page_ref[0]),
             ('dir prefix="default"', 2, b"/dir"),
             ("Appendix", 1, b"[%d 0 R /Fit]" % page_ref[2]),
             ("Closing Words", 2, b"[%d 0 R /XYZ 0 670 0]" % page_ref[2])]
    num = [first + i for i in range(len(items))]
    tops = [i for i, it in enumerate(items) if it[1] == 1]
    for i, (title, level, dest) in enumerate(items):
        parent = root if level == 1 else num[max(t for t in tops if t < i)]
        sib = [j for j, it in enumerate(items) if it[1] == level and
               (level == 1 or max(t for t in tops if t < j) == max(t for t in tops if t < i))]
        k = sib.index(i)
        kids = [j for j in range(i + 1, len(items)) if items[j][1] == level + 1 and
                max(t for t in tops if t < j) == i] if level == 1 else []
        d = b"<< /Title (%s) /Parent %d 0 R /Dest %s" % (esc(title), parent, dest)
        if k:
            d += b" /Prev %d 0 R" % num[sib[k - 1]]
        if k + 1 < len(sib):
            d += b" /Next %d 0 R" % num[sib[k + 1]]
        if kids:
            d += b" /First %d 0 R /Last %d 0 R /Count %d" % (num[kids[0]], num[kids[-1]], len(kids))
        objs.append(d + b" >>")
    objs.insert(root - 1, b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (
        num[tops[0]], num[tops[-1]], len(tops)))
    objs[0] = (b"<< /Type /Catalog /Pages 2 0 R /Outlines %d 0 R /PageMode /UseOutlines "
               b"/Dests << /dir [%d 0 R /XYZ 0 792 0] >> >>" % (root, page_ref[1]))
    return pdf(objs)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    text = pdf(document(text_pages()))
    files = {
        "text.pdf": text,
        "pages10k.pdf": pages10k(),
        "encrypted.pdf": encrypted(),
        "image.pdf": image(),
        "outline.pdf": outline(),
        "truncated.pdf": text[: text.index(b"6 0 obj") + 60],
        "malformed.pdf": b"%PDF-1.4\n" + bytes((i * 37 + 11) & 0xFF for i in range(2000)),
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
