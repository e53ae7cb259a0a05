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
 * md4c keeps per-line and per-block tables for the whole document, at
 * most a few tens of bytes per source line, plus one paragraph's marks)
 * and gives it back after.
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

struct md_reader {
	const char *name;
	const char *src;   /* the input: text pointers inside it give offsets */
	size_t len;
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

	if (r->html)
		return 0;
	if (text >= r->src && text < r->src + r->len) {
		r->last_off = (size_t)(text - r->src);
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

enum lp_status lp_read_markdown(const char *name, const char *bytes, size_t len,
				struct lp_doc_sink *sink, struct lp_diag *d)
{
	MD_PARSER parser;
	struct md_reader r;
	size_t cost;
	int rc, line;

	if (len > UINT_MAX / 2)
		return lp_diag_set(d, LP_E_INPUT, name, 0, 0,
				   "Markdown over %u bytes is not read", UINT_MAX / 2);
	if ((line = md_long_ref(bytes, len)))
		return lp_diag_set(d, LP_E_INPUT, name, line, 0,
				   "link reference definition over %d bytes: not read", MD_MAX_REF);
	cost = len * MD_COST_PER_BYTE + 65536;
	if (lp_mem_reserve(LP_MEM_DOC, cost, d))
		return lp_gather_blame(d, name, LP_E_NOMEM);
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
	r.src = bytes;
	r.len = len;
	r.d = d;
	lp_gather_init(&r.g, sink);
	rc = md_parse(bytes, (MD_SIZE)len, &parser, &r);
	if (!r.st && rc)
		r.st = lp_diag_set_offset(d, LP_E_NOMEM, name, (long long)r.last_off,
					  "the Markdown parser ran out of memory");
	if (!r.st)
		r.st = lp_gather_end(&r.g, d);
	lp_gather_release(&r.g);
	lp_mem_unreserve(LP_MEM_DOC, cost);
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
