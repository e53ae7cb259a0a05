/*
 * read_markdown.c - Markdown to blocks with md4c's parser (CommonMark with
 * GitHub's tables and strikethrough), from its callbacks: md4c's HTML
 * renderer is not used, so no markup is written to be parsed again.
 *
 * Blocks: headings (ATX and setext, with their level), paragraphs, list
 * items (depth = open lists), table rows (cells; the rows under the
 * table's head are header rows), code blocks (fenced and indented, lines
 * kept), block quotes (a quote's paragraphs are QUOTE blocks). Inline
 * markup goes: emphasis marks vanish, code spans and links keep their
 * text, images their alternative text, entities are decoded, raw HTML is
 * dropped. Byte ranges come from where md4c's text pointers lie in the
 * source; a block covers the text it was made of.
 *
 * md4c allocates with malloc and takes no allocator, so its memory cannot
 * be counted as it happens: the reader charges the budget (LP_MEM_DOC)
 * with a bound on it before parsing (MD_COST_PER_BYTE times the input:
 * md4c keeps per-line and per-block tables for what it parses, about
 * 0.6 bytes per byte measured with mallinfo2, plus one paragraph's marks)
 * and gives it back after.
 *
 * Those tables live until md_parse returns, so a document over MD_WINDOW
 * is parsed a window at a time, each cut where no block can go on: at a
 * line that starts in the first column after a blank line (or a list
 * item's line after another), outside fenced code and the HTML blocks
 * that run over blank lines (md_next_cut). A window is copied (tracked)
 * with the document's link reference definitions after it, so a link
 * resolves whichever window defines it (md_defs; their text is no
 * block), and md4c's charge is the window's, not the document's: the
 * tracked peak is flat in the document's size. A document under
 * MD_WINDOW is parsed whole, in place, as before. Where no cut is safe
 * for MD_WINDOW_MAX bytes (one fenced block or unclosed comment that
 * long) the window ends there anyway, and what follows reads as
 * Markdown of its own: the price of a bound on such input.
 *
 * md4c looks at a reference definition's whole destination and title
 * each time a link uses it, so a 1 MB definition used 10,000 times costs
 * 10 GB of work. Definitions longer than MD_MAX_REF are refused before
 * parsing (md_long_ref), naming their line; real ones are a URL long.
 */
#include "doc/readers.h"

#include "config.h"

#ifdef LP_HAVE_MD4C

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <md4c.h>

#ifdef LP_HAVE_LIBXML2
#include <libxml/HTMLparser.h>
#endif

#include "core/mem.h"
#include "core/utf8.h"
#include "doc/gather.h"

/* Bytes of md4c's own memory charged per byte of input (see above). */
#define MD_COST_PER_BYTE 2
/* Bytes a link reference definition may take, from its "]:" to the end
 * of its paragraph. */
#define MD_MAX_REF (64 * 1024)
/* A document over MD_WINDOW bytes is parsed in windows of about that
 * size, none over MD_WINDOW_MAX (where no cut is safe before, one is
 * made at a line's start); the definitions copied after each window
 * take at most MD_MAX_DEFS bytes. */
#define MD_WINDOW ((size_t)1 << 20)
#define MD_WINDOW_MAX ((size_t)4 << 20)
#define MD_MAX_DEFS ((size_t)256 << 10)

struct md_reader {
	const char *name;
	const char *src;   /* the input: text pointers inside it give offsets */
	size_t len;
	size_t base;       /* the file's byte at src[0] (a window's start) */
	const char *defs, *defs_end; /* the definitions copied after a window */
	struct lp_gather g;
	struct lp_diag *d;
	enum lp_status st;
	unsigned lists;    /* open ul/ol */
	unsigned html;     /* inside a raw HTML block */
	int thead;
	size_t last_off;   /* where the last text came from, for messages */
};

static int md_stop(struct md_reader *r, enum lp_status st)
{
	if (st && !r->st)
		r->st = st;
	return r->st ? 1 : 0;
}

static int md_enter_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
	struct md_reader *r = ud;
	enum lp_status st = LP_OK;

	switch (type) {
	case MD_BLOCK_QUOTE:
		st = lp_gather_push(&r->g, LP_BLOCK_QUOTE, 0, r->d);
		break;
	case MD_BLOCK_UL:
	case MD_BLOCK_OL:
		st = lp_gather_break(&r->g, r->d);
		r->lists++;
		break;
	case MD_BLOCK_LI:
		st = lp_gather_push(&r->g, LP_BLOCK_LIST_ITEM, r->lists ? r->lists : 1, r->d);
		break;
	case MD_BLOCK_H:
		st = lp_gather_push(&r->g, LP_BLOCK_HEADING, ((MD_BLOCK_H_DETAIL *)detail)->level,
				    r->d);
		break;
	case MD_BLOCK_CODE:
		st = lp_gather_push(&r->g, LP_BLOCK_CODE, 0, r->d);
		break;
	case MD_BLOCK_HTML:
		r->html++;
		break;
	case MD_BLOCK_THEAD:
		r->thead = 1;
		break;
	case MD_BLOCK_TBODY:
		r->thead = 0;
		break;
	case MD_BLOCK_TR:
		st = lp_gather_push(&r->g, LP_BLOCK_TABLE_ROW, 0, r->d);
		break;
	case MD_BLOCK_DOC:
	case MD_BLOCK_TH:
	case MD_BLOCK_TD:
		break;
	case MD_BLOCK_HR:
	case MD_BLOCK_P:
	case MD_BLOCK_TABLE:
		st = lp_gather_break(&r->g, r->d);
		break;
	}
	return md_stop(r, st);
}

static int md_leave_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
	struct md_reader *r = ud;
	enum lp_status st = LP_OK;

	(void)detail;
	switch (type) {
	case MD_BLOCK_QUOTE:
	case MD_BLOCK_LI:
	case MD_BLOCK_H:
	case MD_BLOCK_CODE:
		st = lp_gather_pop(&r->g, r->d);
		break;
	case MD_BLOCK_TR:
		r->g.header = r->thead;
		st = lp_gather_pop(&r->g, r->d);
		r->g.header = 0;
		break;
	case MD_BLOCK_UL:
	case MD_BLOCK_OL:
		st = lp_gather_break(&r->g, r->d);
		if (r->lists)
			r->lists--;
		break;
	case MD_BLOCK_HTML:
		if (r->html)
			r->html--;
		break;
	case MD_BLOCK_TH:
	case MD_BLOCK_TD:
		st = lp_gather_cell(&r->g, r->d);
		break;
	case MD_BLOCK_P:
	case MD_BLOCK_TABLE:
		st = lp_gather_break(&r->g, r->d);
		break;
	case MD_BLOCK_DOC:
	case MD_BLOCK_THEAD:
	case MD_BLOCK_TBODY:
	case MD_BLOCK_HR:
		break;
	}
	return md_stop(r, st);
}

static int md_span(MD_SPANTYPE type, void *detail, void *ud)
{
	(void)type;
	(void)detail;
	(void)ud;
	return 0;
}

/* A few entities for builds without libxml2's HTML table. */
static const struct {
	const char *name;
	uint32_t cp;
} md_entities[] = {
	{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' },
	{ "nbsp", 0xA0 }, { "copy", 0xA9 }, { "reg", 0xAE }, { "mdash", 0x2014 },
	{ "ndash", 0x2013 }, { "hellip", 0x2026 }, { "trade", 0x2122 },
};

/* The code point of "&...;" (`n` bytes), or 0 when it names none. */
static uint32_t md_entity(const char *s, size_t n)
{
	char name[40];
	uint32_t cp = 0;

	if (n < 3 || n > sizeof(name) || s[0] != '&' || s[n - 1] != ';')
		return 0;
	memcpy(name, s + 1, n - 2);
	name[n - 2] = '\0';
	if (name[0] == '#') {
		int hex = name[1] == 'x' || name[1] == 'X';
		const char *p = name + 1 + hex;
		for (; *p; p++) {
			int v = *p >= '0' && *p <= '9' ? *p - '0' :
				hex && *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
				hex && *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
			if (v < 0 || cp > 0x10FFFF)
				return 0;
			cp = cp * (hex ? 16 : 10) + (uint32_t)v;
		}
		/* CommonMark: 0 and what is not a scalar value read as U+FFFD */
		if (!cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			cp = 0xFFFD;
		return cp;
	}
	for (size_t i = 0; i < sizeof(md_entities) / sizeof(md_entities[0]); i++)
		if (!strcmp(name, md_entities[i].name))
			return md_entities[i].cp;
#ifdef LP_HAVE_LIBXML2
	{
		const htmlEntityDesc *e = htmlEntityLookup((const xmlChar *)name);
		if (e)
			return e->value;
	}
#endif
	return 0;
}

static int md_text(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size, void *ud)
{
	struct md_reader *r = ud;
	enum lp_status st = LP_OK;
	unsigned char utf8[4];
	uint32_t cp;
	int n;

	if (r->html || (text >= r->defs && text < r->defs_end))
		return 0;
	if (text >= r->src && text < r->src + r->len) {
		r->last_off = r->base + (size_t)(text - r->src);
		lp_gather_at(&r->g, r->last_off, size);
	}
	switch (type) {
	case MD_TEXT_NORMAL:
	case MD_TEXT_CODE:
	case MD_TEXT_LATEXMATH:
		st = lp_gather_text(&r->g, text, size, r->d);
		break;
	case MD_TEXT_NULLCHAR:
		st = lp_gather_text(&r->g, "\xEF\xBF\xBD", 3, r->d);
		break;
	case MD_TEXT_BR:
	case MD_TEXT_SOFTBR:
		if (r->g.kind == LP_BLOCK_CODE)
			st = lp_gather_text(&r->g, "\n", 1, r->d);
		else
			lp_gather_space(&r->g);
		break;
	case MD_TEXT_ENTITY:
		cp = md_entity(text, size);
		if (cp) {
			n = lp_utf8_encode(cp, utf8);
			st = lp_gather_text(&r->g, (const char *)utf8, (size_t)n, r->d);
		} else {
			st = lp_gather_text(&r->g, text, size, r->d);
		}
		break;
	case MD_TEXT_HTML:
		break; /* inline raw HTML: markup */
	}
	return md_stop(r, st);
}

/* Where the paragraph from `p` ends: at a blank line or the end. */
static const char *md_paragraph_end(const char *p, const char *end)
{
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *q;
		if (!nl)
			return end;
		for (q = nl + 1; q < end && (*q == ' ' || *q == '\t' || *q == '\r'); q++)
			;
		if (q >= end || *q == '\n')
			return nl;
		p = nl + 1;
	}
	return end;
}

/* The 1-based line of a link reference definition longer than
 * MD_MAX_REF ("[label]:" at a line's start, after up to three spaces and
 * quote markers), or 0 when there is none. */
static int md_long_ref(const char *s, size_t len)
{
	const char *end = s + len, *p = s;
	int line = 1;

	while (p < end) {
		const char *q = p, *nl;
		int sp = 0;

		while (q < end && (*q == '>' || (*q == ' ' && sp++ < 3)))
			q++;
		if (q < end && *q == '[') {
			const char *close = memchr(q, ']', (size_t)(end - q) < 1001 ? (size_t)(end - q) : 1001);
			if (close && close + 1 < end && close[1] == ':' &&
			    md_paragraph_end(close, end) - close > MD_MAX_REF)
				return line;
		}
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		p = nl + 1;
		line++;
	}
	return 0;
}

/* --- windows ------------------------------------------------------- */

/* What a line scan knows of the lines before: an open fence, an open
 * HTML block that only its end marker closes, how the last line was. */
struct md_scan {
	char fence;          /* '`' or '~' while a fenced block is open */
	size_t fence_len;
	const char *html_end; /* the marker that ends the open HTML block */
	int blank, item, def; /* the last line was blank, a list item's, a definition */
};

static size_t md_indent(const char *p, const char *e)
{
	size_t n = 0;

	while (p + n < e && p[n] == ' ')
		n++;
	return n;
}

static int md_blank(const char *p, const char *e)
{
	for (; p < e; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return 0;
	return 1;
}

/* A list item's marker at the line's start ("- ", "* ", "+ ", "1. ", "2) "). */
static int md_item(const char *p, const char *e)
{
	const char *q = p;

	if (q + 1 < e && (*q == '-' || *q == '*' || *q == '+') && q[1] == ' ')
		return 1;
	while (q < e && q - p < 9 && *q >= '0' && *q <= '9')
		q++;
	return q > p && q + 1 < e && (*q == '.' || *q == ')') && q[1] == ' ';
}

static int md_starts_ci(const char *p, const char *e, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(e - p) < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((p[i] | 0x20) != (w[i] | 0x20))
			return 0;
	return 1;
}

static int md_has_ci(const char *p, const char *e, const char *w)
{
	for (; p < e; p++)
		if (md_starts_ci(p, e, w))
			return 1;
	return 0;
}

/* The end marker of an HTML block of CommonMark's kinds 1-5 (which run
 * over blank lines) that line [p, e) opens, or NULL. */
static const char *md_html_open(const char *p, const char *e)
{
	static const char *const tags[] = { "script", "pre", "style", "textarea" };
	static const char *const ends[] = { "</script>", "</pre>", "</style>", "</textarea>" };

	if (p >= e || *p != '<')
		return NULL;
	for (size_t i = 0; i < 4; i++) {
		const char *q = p + 1 + strlen(tags[i]);
		if (md_starts_ci(p + 1, e, tags[i]) && (q >= e || *q == ' ' || *q == '>' ||
							  *q == '\t' || *q == '\r'))
			return ends[i];
	}
	if (md_starts_ci(p, e, "<!--"))
		return "-->";
	if (md_starts_ci(p, e, "<?"))
		return "?>";
	if (md_starts_ci(p, e, "<![CDATA["))
		return "]]>";
	if (p + 2 < e && p[1] == '!' && p[2] >= 'A' && p[2] <= 'Z')
		return ">";
	return NULL;
}

/* Scan line [p, e): whether a window may begin at it (nothing open that
 * would go on past it), then what it opens or closes. */
static int md_scan_line(struct md_scan *sc, const char *p, const char *e)
{
	size_t ind = md_indent(p, e), n;
	const char *q = p + ind;
	int safe = 0, blank = md_blank(p, e), item = !ind && md_item(p, e);

	if (sc->fence) {
		for (n = 0; ind <= 3 && q + n < e && q[n] == sc->fence; n++)
			;
		if (ind <= 3 && n >= sc->fence_len && md_blank(q + n, e))
			sc->fence = 0;
	} else if (sc->html_end) {
		if (md_has_ci(p, e, sc->html_end))
			sc->html_end = NULL;
	} else {
		safe = !ind && !blank && (sc->blank || (sc->item && item));
		for (n = 0; ind <= 3 && q + n < e && (q[n] == '`' || q[n] == '~') && q[n] == q[0]; n++)
			;
		if (n >= 3 && !(q[0] == '`' && memchr(q + n, '`', (size_t)(e - q - n)))) {
			sc->fence = q[0];
			sc->fence_len = n;
		} else if (ind <= 3 && (sc->html_end = md_html_open(q, e)) &&
			   md_has_ci(q + 2, e, sc->html_end)) {
			sc->html_end = NULL; /* ends on its own line */
		}
	}
	sc->blank = blank;
	sc->item = item;
	return safe;
}

/* Where the window that begins at `pos` ends: the last safe line start
 * in the second half of its MD_WINDOW bytes, else the first one after,
 * else whatever is at MD_WINDOW_MAX (a line's start, or inside a line
 * that long, between two characters); `len` when the rest is a window. */
static size_t md_next_cut(const char *s, size_t len, size_t pos)
{
	struct md_scan sc;
	size_t cut = 0, line = pos;

	if (len - pos <= MD_WINDOW)
		return len;
	memset(&sc, 0, sizeof(sc));
	while (line < len) {
		const char *nl = memchr(s + line, '\n', len - line);
		size_t end = nl ? (size_t)(nl - s) : len;
		int safe = md_scan_line(&sc, s + line, s + end);

		if (line > pos) {
			if (line - pos > MD_WINDOW && (cut || safe))
				return cut ? cut : line;
			if (safe && line - pos >= MD_WINDOW / 2)
				cut = line;
		}
		if (end - pos >= MD_WINDOW_MAX) {
			size_t at = pos + MD_WINDOW_MAX;
			if (line > pos)
				return line;
			while (at < len && at > pos + 1 && ((unsigned char)s[at] & 0xC0) == 0x80)
				at--;
			return at;
		}
		line = end + 1;
	}
	return len;
}

/* Copy the document's link reference definitions ("[label]: dest", a
 * line at the start of a block outside code, with the line after when
 * it holds the destination or a title) into `buf`, at most `cap` bytes,
 * whole ones only. Returns the bytes copied. */
static size_t md_defs(const char *s, size_t len, char *buf, size_t cap)
{
	struct md_scan sc;
	size_t line = 0, n = 0;
	int prev_def = 0, first = 1;

	memset(&sc, 0, sizeof(sc));
	sc.blank = 1;
	while (line < len) {
		const char *nl = memchr(s + line, '\n', len - line), *p = s + line, *e, *lb;
		size_t end = nl ? (size_t)(nl - s) : len, ind = md_indent(p, s + end), take;
		int open = sc.fence || sc.html_end, starts = sc.blank || prev_def || first;

		e = s + end;
		md_scan_line(&sc, p, e);
		first = 0;
		prev_def = 0;
		if (open || sc.fence || ind > 3 || p + ind >= e || p[ind] != '[' || !starts)
			goto next;
		lb = memchr(p + ind, ']', (size_t)(e - p - ind));
		if (!lb || lb + 1 >= e || lb[1] != ':' || lb == p + ind + 1)
			goto next;
		take = end + 1 - line;
		if (nl && nl + 1 < s + len) { /* a destination or a title on the next line */
			const char *n2 = memchr(nl + 1, '\n', len - end - 1), *q = nl + 1;
			size_t e2 = n2 ? (size_t)(n2 - s) : len;
			q += md_indent(q, s + e2);
			if (md_blank(lb + 2, e) || (q < s + e2 && (*q == '"' || *q == '\'' || *q == '(')))
				take = e2 + 1 - line;
		}
		if (take > len - line)
			take = len - line;
		if (n + take + 1 > cap)
			break;
		memcpy(buf + n, p, take);
		n += take;
		if (buf[n - 1] != '\n')
			buf[n++] = '\n';
		prev_def = 1;
next:
		line = end + 1;
	}
	return n;
}

/* Parse one window: s[0, n), the file's bytes from `base` (in place
 * when there are no definitions to add, else as a copy in `copy`). */
static int md_parse_window(struct md_reader *r, const MD_PARSER *parser, const char *s,
			   size_t n, size_t base, char *copy, const char *defs, size_t n_defs)
{
	const char *text = s;
	size_t all = n;

	if (n_defs) {
		memcpy(copy, s, n);
		copy[n] = '\n';
		memcpy(copy + n + 1, defs, n_defs);
		text = copy;
		all = n + 1 + n_defs;
		r->defs = copy + n;
		r->defs_end = copy + all;
	} else {
		r->defs = r->defs_end = NULL;
	}
	r->src = text;
	r->len = n;
	r->base = base;
	return md_parse(text, (MD_SIZE)all, parser, r);
}

enum lp_status lp_read_markdown(const char *name, const char *bytes, size_t len,
				struct lp_doc_sink *sink, struct lp_diag *d)
{
	MD_PARSER parser;
	struct md_reader r;
	char *defs = NULL, *copy = NULL;
	size_t n_defs = 0, pos = 0, copy_cap = 0;
	int rc = 0, line;

	if (len > UINT_MAX / 2)
		return lp_diag_set(d, LP_E_INPUT, name, 0, 0,
				   "Markdown over %u bytes is not read", UINT_MAX / 2);
	if ((line = md_long_ref(bytes, len)))
		return lp_diag_set(d, LP_E_INPUT, name, line, 0,
				   "link reference definition over %d bytes: not read", MD_MAX_REF);
	memset(&parser, 0, sizeof(parser));
	parser.flags = MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_PERMISSIVEAUTOLINKS |
		       MD_FLAG_TASKLISTS;
	parser.enter_block = md_enter_block;
	parser.leave_block = md_leave_block;
	parser.enter_span = md_span;
	parser.leave_span = md_span;
	parser.text = md_text;
	memset(&r, 0, sizeof(r));
	r.name = name;
	r.d = d;
	lp_gather_init(&r.g, sink);
	if (len > MD_WINDOW) {
		defs = lp_mem_alloc(LP_MEM_DOC, MD_MAX_DEFS, d);
		if (!defs)
			r.st = LP_E_NOMEM;
		else
			n_defs = md_defs(bytes, len, defs, MD_MAX_DEFS);
		if (!r.st && n_defs < MD_MAX_DEFS) { /* keep what they take */
			char *p = n_defs ? lp_mem_realloc(LP_MEM_DOC, defs, n_defs, d) : NULL;
			if (p || !n_defs) {
				if (!n_defs)
					lp_mem_free(defs);
				defs = p;
			}
		}
	}
	while (!r.st && !rc) { /* one window at least, for an empty document */
		size_t cut = md_next_cut(bytes, len, pos);
		size_t cost = (cut - pos + n_defs) * MD_COST_PER_BYTE + 65536;
		if (n_defs && cut - pos + 1 + n_defs > copy_cap) { /* the window's copy */
			lp_mem_free(copy);
			copy_cap = cut - pos + 1 + n_defs;
			if (!(copy = lp_mem_alloc(LP_MEM_DOC, copy_cap, d))) {
				r.st = LP_E_NOMEM;
				break;
			}
		}
		if (lp_mem_reserve(LP_MEM_DOC, cost, d)) {
			r.st = LP_E_NOMEM;
			break;
		}
		rc = md_parse_window(&r, &parser, bytes + pos, cut - pos, pos, copy, defs, n_defs);
		lp_mem_unreserve(LP_MEM_DOC, cost);
		if ((pos = cut) >= len)
			break;
	}
	if (!r.st && rc)
		r.st = lp_diag_set_offset(d, LP_E_NOMEM, name, (long long)r.last_off,
					  "the Markdown parser ran out of memory");
	if (!r.st)
		r.st = lp_gather_end(&r.g, d);
	lp_gather_release(&r.g);
	lp_mem_free(copy);
	lp_mem_free(defs);
	return lp_gather_blame(d, name, r.st);
}

#else /* !LP_HAVE_MD4C */

#include "doc/gather.h"

enum lp_status lp_read_markdown(const char *name, const char *bytes, size_t len,
				struct lp_doc_sink *sink, struct lp_diag *d)
{
	(void)bytes;
	(void)len;
	(void)sink;
	return lp_gather_missing(d, name, "Markdown", "libmd4c-dev");
}

#endif
