/*
 * read_html.c - HTML to blocks with libxml2's HTML parser, driven as a
 * push parser with SAX callbacks: no tree is built, the file goes in by
 * 64 KiB pieces, and each block goes to the sink when its element ends,
 * so memory stays flat in the file's size (doc/gather.h bounds a block).
 *
 * What is read: h1-h6 (HEADING), p and text directly in other block
 * elements (PARAGRAPH), li (LIST_ITEM, depth = open ul/ol/menu/dir),
 * dt/dd (DEF_TERM/DEF_BODY), tr with its th/td cells (TABLE_ROW; a header
 * row when under thead or made of th only), pre (CODE, lines kept),
 * blockquote (QUOTE). Dropped with everything inside: script, style, nav,
 * noscript, template, head, and elements hidden by the `hidden` attribute
 * or an inline style "display: none". Entities are decoded by libxml2;
 * it also honours <meta charset> and the http-equiv Content-Type, and
 * falls back to Latin-1 when bytes do not fit the declared encoding.
 *
 * libxml2's allocations are counted against the memory budget (tag
 * LP_MEM_DOC) through xmlMemSetup; see html_mem_setup for how that lives
 * beside other users of libxml2 in the same process. Elements nested
 * deeper than HTML_MAX_DEPTH stop the reader: libxml2 looks an end tag up
 * through its whole stack of open elements, so a depth bomb would
 * otherwise cost depth x tags.
 */
#include "doc/readers.h"

#include "config.h"

#ifdef LP_HAVE_LIBXML2

#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/HTMLparser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlmemory.h>

#include "core/mem.h"
#include "doc/gather.h"

/* Bytes handed to the push parser at a time. */
#define HTML_PIECE (64 * 1024)
/* Open elements at most (browsers flatten past 512). */
#define HTML_MAX_DEPTH 1024

/* --- libxml2's memory, counted ------------------------------------- */

/*
 * The wrappers allocate with malloc itself and only charge what
 * malloc_usable_size says to the budget. So a block another part of the
 * process got from libxml2 before the wrappers were installed can be
 * freed through them (the charge never goes below what they charged), and
 * a block they allocated stays valid for whoever frees it later. They are
 * installed once, and only when libxml2 still has its default allocator:
 * a program that set its own with xmlMemSetup keeps it, and then
 * libxml2's memory is not counted.
 */
static atomic_size_t html_mem_charged;
static _Thread_local int html_mem_refused;
static int html_mem_counted;

static void html_uncharge(size_t n)
{
	size_t cur = atomic_load(&html_mem_charged), take;

	do {
		take = n < cur ? n : cur;
	} while (!atomic_compare_exchange_weak(&html_mem_charged, &cur, cur - take));
	if (take)
		lp_mem_unreserve(LP_MEM_DOC, take);
}

static int html_charge(size_t n)
{
	if (lp_mem_reserve(LP_MEM_DOC, n, NULL)) {
		html_mem_refused = 1;
		return -1;
	}
	atomic_fetch_add(&html_mem_charged, n);
	return 0;
}

static void *html_malloc(size_t n)
{
	void *p = malloc(n);

	if (p && html_charge(malloc_usable_size(p))) {
		free(p);
		p = NULL;
	}
	return p;
}

static void html_free(void *p)
{
	if (p) {
		size_t n = malloc_usable_size(p);
		free(p);
		html_uncharge(n);
	}
}

static void *html_realloc(void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0, now;
	size_t ahead = n > old ? n - old : 0;
	void *q;

	/* charge the growth first, so a refusal leaves `p` as it was */
	if (ahead && html_charge(ahead))
		return NULL;
	q = realloc(p, n);
	if (!q) {
		html_uncharge(ahead);
		return NULL;
	}
	now = malloc_usable_size(q);
	if (now > old + ahead) {
		/* malloc's rounding, after the fact: a refusal here would
		 * leave nothing to undo, so it is not one */
		int refused = html_mem_refused;
		if (html_charge(now - old - ahead))
			html_mem_refused = refused;
	} else {
		html_uncharge(old + ahead - now);
	}
	return q;
}

static char *html_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = html_malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static pthread_once_t html_mem_once = PTHREAD_ONCE_INIT;

static void html_mem_setup(void)
{
	xmlFreeFunc f;
	xmlMallocFunc m;
	xmlReallocFunc r;
	xmlStrdupFunc s;

	/* libxml2's own one-time tables come from malloc: they live as long
	 * as the process and are not the document's */
	xmlInitParser();
	if (xmlMemGet(&f, &m, &r, &s) == 0 && f == free && m == malloc && r == realloc)
		html_mem_counted = xmlMemSetup(html_free, html_malloc, html_realloc,
					       html_strdup) == 0;
}

/* --- elements -------------------------------------------------------- */

enum html_role {
	R_INLINE,   /* text flows through */
	R_BLOCK,    /* ends the block before and after it */
	R_SKIP,     /* dropped with its content */
	R_HEADING,  /* h1-h6 */
	R_LIST,     /* ul, ol, menu, dir: a list level */
	R_LI,
	R_DT,
	R_DD,
	R_PRE,
	R_QUOTE,
	R_TABLE_SECTION_HEAD, /* thead */
	R_TR,
	R_CELL,     /* th, td */
	R_BR,
};

struct html_name {
	const char *name;
	enum html_role role;
};

/* sorted by name for bsearch */
static const struct html_name html_names[] = {
	{ "address", R_BLOCK }, { "article", R_BLOCK }, { "aside", R_BLOCK },
	{ "blockquote", R_QUOTE }, { "body", R_BLOCK }, { "br", R_BR },
	{ "caption", R_BLOCK }, { "center", R_BLOCK }, { "dd", R_DD },
	{ "details", R_BLOCK }, { "dialog", R_BLOCK }, { "dir", R_LIST },
	{ "div", R_BLOCK }, { "dl", R_BLOCK }, { "dt", R_DT },
	{ "fieldset", R_BLOCK }, { "figcaption", R_BLOCK }, { "figure", R_BLOCK },
	{ "footer", R_BLOCK }, { "form", R_BLOCK }, { "frameset", R_SKIP },
	{ "h1", R_HEADING }, { "h2", R_HEADING }, { "h3", R_HEADING },
	{ "h4", R_HEADING }, { "h5", R_HEADING }, { "h6", R_HEADING },
	{ "head", R_SKIP }, { "header", R_BLOCK }, { "hgroup", R_BLOCK },
	{ "hr", R_BLOCK }, { "html", R_BLOCK }, { "iframe", R_SKIP },
	{ "legend", R_BLOCK }, { "li", R_LI }, { "listing", R_PRE },
	{ "main", R_BLOCK }, { "menu", R_LIST }, { "nav", R_SKIP },
	{ "noframes", R_SKIP }, { "noscript", R_SKIP }, { "object", R_SKIP },
	{ "ol", R_LIST }, { "option", R_BLOCK }, { "p", R_BLOCK },
	{ "plaintext", R_PRE }, { "pre", R_PRE }, { "script", R_SKIP },
	{ "section", R_BLOCK }, { "select", R_SKIP }, { "style", R_SKIP },
	{ "summary", R_BLOCK }, { "svg", R_SKIP }, { "table", R_BLOCK },
	{ "tbody", R_BLOCK }, { "td", R_CELL }, { "template", R_SKIP },
	{ "textarea", R_SKIP }, { "tfoot", R_BLOCK }, { "th", R_CELL },
	{ "thead", R_TABLE_SECTION_HEAD }, { "title", R_SKIP }, { "tr", R_TR },
	{ "ul", R_LIST }, { "xmp", R_PRE },
};

static int html_name_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct html_name *)elem)->name);
}

static enum html_role html_role_of(const char *name)
{
	const struct html_name *n = bsearch(name, html_names,
					    sizeof(html_names) / sizeof(html_names[0]),
					    sizeof(html_names[0]), html_name_cmp);
	return n ? n->role : R_INLINE;
}

/* "display:none" in an inline style, any case and spacing */
static int html_style_hides(const char *style)
{
	char compact[256];
	size_t n = 0;

	for (const char *s = style; *s && n + 1 < sizeof(compact); s++) {
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			compact[n++] = (char)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s);
	}
	compact[n] = '\0';
	for (char *p = compact; (p = strstr(p, "display:none")); p += 12) {
		if (p == compact || p[-1] == ';' || p[-1] == '{')
			return 1;
	}
	return 0;
}

/* Hidden: the hidden attribute, display:none, aria-hidden="true" (what a
 * screen reader leaves out), or a heading's permalink, an <a> with
 * class "headerlink" (Sphinx, MkDocs: a "¶" after every heading). */
static int html_hidden(const char *name, const xmlChar **atts)
{
	for (size_t i = 0; atts && atts[i]; i += 2) {
		const char *k = (const char *)atts[i], *v = (const char *)atts[i + 1];
		if (!strcmp(k, "hidden"))
			return 1;
		if (!strcmp(k, "style") && v && html_style_hides(v))
			return 1;
		if (!strcmp(k, "aria-hidden") && v && !strcmp(v, "true"))
			return 1;
		if (!strcmp(name, "a") && !strcmp(k, "class") && v && strstr(v, "headerlink"))
			return 1;
	}
	return 0;
}

/* --- the reader's state ---------------------------------------------- */

struct html_reader {
	htmlParserCtxtPtr ctxt;
	const char *name;
	size_t len;                /* of the input */
	struct lp_gather g;
	struct lp_diag *d;
	enum lp_status st;         /* first failure; the parser is stopped */
	unsigned depth;            /* open elements */
	unsigned skip;             /* depth of the dropped element, 0: none */
	unsigned char roles[HTML_MAX_DEPTH + 1]; /* role of the element at each depth */
	unsigned lists;            /* open ul/ol */
	unsigned row;              /* depth of the open tr, 0: none */
	unsigned thead;            /* open thead elements */
	int row_all_th, row_cells;
};

/* Where the parser is in the input. It counts in the UTF-8 it decoded
 * to, so past a conversion (a Latin-1 page) positions are approximate;
 * they never leave the input. */
static size_t html_pos(const struct html_reader *r)
{
	const xmlParserInputPtr in = r->ctxt->input;
	size_t pos;

	if (!in || !in->cur || !in->base)
		return 0;
	pos = (size_t)in->consumed + (size_t)(in->cur - in->base);
	return pos < r->len ? pos : r->len;
}

static int html_line(const struct html_reader *r)
{
	return r->ctxt->input ? r->ctxt->input->line : 0;
}

static void html_fail(struct html_reader *r, enum lp_status st)
{
	if (!r->st)
		r->st = st;
	xmlStopParser(r->ctxt);
}

static void html_check(struct html_reader *r, enum lp_status st)
{
	if (st)
		html_fail(r, st);
}

/* End of a block. Inside a table row only the row's cells have
 * structure: other block boundaries there separate words. */
static void html_boundary(struct html_reader *r)
{
	if (r->row)
		lp_gather_space(&r->g);
	else
		html_check(r, lp_gather_break(&r->g, r->d));
}

static void html_push_kind(struct html_reader *r, enum lp_block_kind k, unsigned level)
{
	html_check(r, lp_gather_push(&r->g, k, level, r->d));
	lp_gather_at(&r->g, html_pos(r), 0);
}

static void html_pop_kind(struct html_reader *r)
{
	lp_gather_at(&r->g, html_pos(r), 0);
	html_check(r, lp_gather_pop(&r->g, r->d));
}

static void html_start(void *ctx, const xmlChar *tag, const xmlChar **atts)
{
	struct html_reader *r = ctx;
	const char *name = (const char *)tag;
	enum html_role role;

	if (r->st)
		return;
	if (++r->depth > HTML_MAX_DEPTH) {
		html_fail(r, lp_diag_set(r->d, LP_E_INPUT, r->name, html_line(r), 0,
					 "elements nested deeper than %d", HTML_MAX_DEPTH));
		return;
	}
	if (r->skip) {
		r->roles[r->depth] = R_INLINE;
		return;
	}
	role = html_role_of(name);
	if (role != R_SKIP && html_hidden(name, atts))
		role = R_SKIP;
	/* inside a row only its own cells have structure */
	if (r->row && role != R_SKIP && role != R_INLINE &&
	    !(role == R_CELL && r->depth == r->row + 1))
		role = role == R_BR ? R_BR : R_BLOCK;
	r->roles[r->depth] = (unsigned char)role;
	switch (role) {
	case R_INLINE:
		break;
	case R_SKIP:
		r->skip = r->depth;
		break;
	case R_BR:
		if (r->g.kind == LP_BLOCK_CODE)
			html_check(r, lp_gather_text(&r->g, "\n", 1, r->d));
		else
			lp_gather_space(&r->g);
		break;
	case R_BLOCK:
		html_boundary(r);
		lp_gather_at(&r->g, html_pos(r), 0);
		break;
	case R_HEADING:
		html_push_kind(r, LP_BLOCK_HEADING, (unsigned)(name[1] - '0'));
		break;
	case R_LIST:
		html_boundary(r);
		r->lists++;
		break;
	case R_LI:
		html_push_kind(r, LP_BLOCK_LIST_ITEM, r->lists ? r->lists : 1);
		break;
	case R_DT:
		html_push_kind(r, LP_BLOCK_DEF_TERM, 0);
		break;
	case R_DD:
		html_push_kind(r, LP_BLOCK_DEF_BODY, 0);
		break;
	case R_PRE:
		html_push_kind(r, LP_BLOCK_CODE, 0);
		break;
	case R_QUOTE:
		html_push_kind(r, LP_BLOCK_QUOTE, 0);
		break;
	case R_TABLE_SECTION_HEAD:
		html_boundary(r);
		r->thead++;
		break;
	case R_TR:
		html_push_kind(r, LP_BLOCK_TABLE_ROW, 0);
		r->row = r->depth;
		r->row_all_th = 1;
		r->row_cells = 0;
		break;
	case R_CELL:
		r->row_cells++;
		if (strcmp(name, "th"))
			r->row_all_th = 0;
		lp_gather_at(&r->g, html_pos(r), 0);
		break;
	}
}

static void html_end(void *ctx, const xmlChar *tag)
{
	struct html_reader *r = ctx;
	enum html_role role;

	if (r->st || !r->depth)
		return;
	role = r->depth <= HTML_MAX_DEPTH ? (enum html_role)r->roles[r->depth] : R_INLINE;
	if (r->skip) {
		if (r->skip == r->depth)
			r->skip = 0;
		r->depth--;
		return;
	}
	switch (role) {
	case R_INLINE:
	case R_SKIP:
	case R_BR:
		break;
	case R_BLOCK:
		lp_gather_at(&r->g, html_pos(r), 0);
		html_boundary(r);
		break;
	case R_LIST:
		html_boundary(r);
		if (r->lists)
			r->lists--;
		break;
	case R_TABLE_SECTION_HEAD:
		html_boundary(r);
		if (r->thead)
			r->thead--;
		break;
	case R_CELL:
		lp_gather_at(&r->g, html_pos(r), 0);
		html_check(r, lp_gather_cell(&r->g, r->d));
		break;
	case R_TR:
		r->g.header = r->thead > 0 || (r->row_all_th && r->row_cells > 0);
		r->row = 0;
		html_pop_kind(r);
		r->g.header = 0;
		break;
	case R_HEADING:
	case R_LI:
	case R_DT:
	case R_DD:
	case R_PRE:
	case R_QUOTE:
		html_pop_kind(r);
		break;
	}
	r->depth--;
}

static void html_chars(void *ctx, const xmlChar *ch, int len)
{
	struct html_reader *r = ctx;
	size_t pos, n = len > 0 ? (size_t)len : 0;

	if (r->st || r->skip || !n)
		return;
	pos = html_pos(r);
	lp_gather_at(&r->g, pos >= n ? pos - n : 0, pos >= n ? n : pos);
	html_check(r, lp_gather_text(&r->g, (const char *)ch, n, r->d));
}

/* Parse errors are recovered from: none is printed, none is fatal. */
static void html_quiet(void *ctx, xmlErrorPtr err)
{
	(void)ctx;
	(void)err;
}

static enum lp_status html_parse(struct html_reader *r, const char *bytes, size_t len)
{
	size_t off = 0;

	while (!r->st && !html_mem_refused && off < len) {
		size_t n = len - off < HTML_PIECE ? len - off : HTML_PIECE;
		xmlParserInputPtr in;
		htmlParseChunk(r->ctxt, bytes + off, (int)n, 0);
		off += n;
		/* libxml2 2.9 resumes its search for a tag's end from a mark
		 * (checkIndex) and a quote state it keeps in hasPErefs,
		 * which can go stale between pieces: the parser then waits
		 * for the end of the file, holding all of it. A search from
		 * the token's start costs little and does not stall. */
		r->ctxt->checkIndex = 0;
		r->ctxt->hasPErefs = 0;
		/* and it drops what it has parsed only when a text node ends
		 * near the end of what it was given: drop it here, between
		 * two pieces, where the parser is at a token's start */
		in = r->ctxt->input;
		if (in && in->buf && in->cur - in->base > HTML_PIECE)
			xmlParserInputShrink(in);
	}
	if (!r->st && !html_mem_refused)
		htmlParseChunk(r->ctxt, NULL, 0, 1);
	if (html_mem_refused && !r->st)
		r->st = lp_diag_set(r->d, LP_E_NOMEM, r->name, html_line(r), 0,
				    "the HTML parser went over the memory budget (%zu bytes)",
				    lp_mem_budget());
	if (!r->st) {
		/* what an unclosed document leaves open */
		r->row = 0;
		r->st = lp_gather_end(&r->g, r->d);
	}
	return r->st;
}

enum lp_status lp_read_html(const char *name, const char *bytes, size_t len,
			    struct lp_doc_sink *sink, struct lp_diag *d)
{
	htmlSAXHandler sax;
	struct html_reader *r;
	enum lp_status st;

	pthread_once(&html_mem_once, html_mem_setup);
	r = lp_mem_calloc(LP_MEM_DOC, 1, sizeof(*r), d);
	if (!r)
		return LP_E_NOMEM;
	memset(&sax, 0, sizeof(sax));
	sax.startElement = html_start;
	sax.endElement = html_end;
	sax.characters = html_chars;
	sax.ignorableWhitespace = html_chars;
	sax.cdataBlock = html_chars;
	sax.serror = html_quiet;
	sax.initialized = XML_SAX2_MAGIC;
	r->name = name;
	r->len = len;
	r->d = d;
	lp_gather_init(&r->g, sink);
	html_mem_refused = 0;
	r->ctxt = htmlCreatePushParserCtxt(&sax, r, bytes, len < 4 ? (int)len : 4, name,
					   XML_CHAR_ENCODING_NONE);
	if (!r->ctxt) {
		st = lp_diag_set(d, LP_E_NOMEM, name, 0, 0,
				 "cannot start the HTML parser: out of memory");
	} else {
		htmlCtxtUseOptions(r->ctxt, HTML_PARSE_RECOVER | HTML_PARSE_NONET |
						    HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
		st = html_parse(r, len < 4 ? bytes + len : bytes + 4, len < 4 ? 0 : len - 4);
		htmlFreeParserCtxt(r->ctxt);
	}
	lp_gather_release(&r->g);
	lp_mem_free(r);
	return lp_gather_blame(d, name, st);
}

#else /* !LP_HAVE_LIBXML2 */

#include "doc/gather.h"

enum lp_status lp_read_html(const char *name, const char *bytes, size_t len,
			    struct lp_doc_sink *sink, struct lp_diag *d)
{
	(void)bytes;
	(void)len;
	(void)sink;
	return lp_gather_missing(d, name, "HTML", "libxml2-dev");
}

#endif
