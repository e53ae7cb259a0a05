#include "doc/gather.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/utf8.h"

/* Between the cells of a row in the row's text. */
#define CELL_SEP " | "
#define CELL_SEP_LEN 3

void lp_gather_init(struct lp_gather *g, struct lp_doc_sink *sink)
{
	memset(g, 0, sizeof(*g));
	g->sink = sink;
	g->kind = LP_BLOCK_PARAGRAPH;
	g->src_lo = (size_t)-1;
}

void lp_gather_release(struct lp_gather *g)
{
	lp_mem_free(g->text);
	lp_mem_free(g->cell_ends);
	g->text = NULL;
	g->cell_ends = NULL;
	g->len = g->cap = g->n_cells = g->cells_cap = 0;
}

void lp_gather_begin(struct lp_gather *g, enum lp_block_kind kind, unsigned level)
{
	g->kind = kind;
	g->level = level;
}

int lp_gather_empty(const struct lp_gather *g)
{
	return g->len == 0;
}

void lp_gather_space(struct lp_gather *g)
{
	g->space = 1;
}

void lp_gather_at(struct lp_gather *g, size_t off, size_t n)
{
	if (g->src_lo > g->src_hi) {
		g->src_lo = off;
		g->src_hi = off + n;
		return;
	}
	if (off < g->src_lo)
		g->src_lo = off;
	if (off + n > g->src_hi)
		g->src_hi = off + n;
}

static enum lp_status reserve(struct lp_gather *g, size_t extra, struct lp_diag *d)
{
	size_t want = g->len + extra, cap;
	char *p;

	if (want <= g->cap)
		return LP_OK;
	cap = g->cap ? g->cap : 256;
	while (cap < want)
		cap *= 2;
	p = lp_mem_realloc(LP_MEM_DOC, g->text, cap, d);
	if (!p)
		return LP_E_NOMEM;
	g->text = p;
	g->cap = cap;
	return LP_OK;
}

static void reset(struct lp_gather *g)
{
	g->len = 0;
	g->space = 0;
	g->n_cells = 0;
	g->cell_start = 0;
	g->src_lo = (size_t)-1;
	g->src_hi = 0;
}

/* Hand the first `cut` bytes (a whole block unless the block overflowed)
 * to the sink. For a row, `cut` is always the whole text. */
static enum lp_status emit(struct lp_gather *g, size_t cut, struct lp_diag *d)
{
	struct lp_block_in b;
	const char *cells[64], **cp = cells;
	size_t lens[64], *lp = lens;
	enum lp_status st;
	size_t start = 0, end = cut;

	memset(&b, 0, sizeof(b));
	b.kind = g->kind;
	b.level = g->level;
	b.page = g->page;
	if (g->src_lo <= g->src_hi) {
		b.src_off = g->src_lo;
		b.src_len = g->src_hi - g->src_lo;
	}
	if (g->kind == LP_BLOCK_CODE) {
		/* blank lines around a code block are not its text */
		while (start < end && (g->text[start] == '\n'))
			start++;
		while (end > start && (g->text[end - 1] == '\n' || g->text[end - 1] == ' ' ||
				       g->text[end - 1] == '\t'))
			end--;
	}
	b.text = g->text + start;
	b.len = end - start;
	if (g->kind == LP_BLOCK_TABLE_ROW) {
		size_t n = g->n_cells;
		if (n > 64) {
			cp = lp_mem_alloc(LP_MEM_DOC, n * sizeof(*cp), d);
			lp = lp_mem_alloc(LP_MEM_DOC, n * sizeof(*lp), d);
			if (!cp || !lp) {
				lp_mem_free(cp);
				lp_mem_free(lp);
				return LP_E_NOMEM;
			}
		}
		for (size_t i = 0, s = 0; i < n; i++) {
			cp[i] = g->text + s;
			lp[i] = g->cell_ends[i] - s;
			s = g->cell_ends[i] + CELL_SEP_LEN;
		}
		b.cells = cp;
		b.cell_lens = lp;
		b.n_cells = n;
		b.header = g->header;
	}
	st = b.len ? g->sink->block(g->sink, &b, d) : LP_OK;
	if (cp != cells) {
		lp_mem_free(cp);
		lp_mem_free(lp);
	}
	return st;
}

enum lp_status lp_gather_cell(struct lp_gather *g, struct lp_diag *d)
{
	if (g->n_cells == g->cells_cap) {
		size_t cap = g->cells_cap ? 2 * g->cells_cap : 16;
		size_t *p = lp_mem_realloc(LP_MEM_DOC, g->cell_ends, cap * sizeof(*p), d);
		if (!p)
			return LP_E_NOMEM;
		g->cell_ends = p;
		g->cells_cap = cap;
	}
	g->cell_ends[g->n_cells++] = g->len;
	if (reserve(g, CELL_SEP_LEN, d))
		return LP_E_NOMEM;
	memcpy(g->text + g->len, CELL_SEP, CELL_SEP_LEN);
	g->len += CELL_SEP_LEN;
	g->cell_start = g->len;
	g->space = 0;
	return LP_OK;
}

enum lp_status lp_gather_end(struct lp_gather *g, struct lp_diag *d)
{
	enum lp_status st;
	int any = g->len > 0;

	if (g->kind == LP_BLOCK_TABLE_ROW) {
		/* an open cell with text is a cell; then the text is the
		 * cells and their separators, without a trailing one */
		if (g->len > g->cell_start && (st = lp_gather_cell(g, d)))
			return st;
		any = 0;
		for (size_t i = 0, s = 0; i < g->n_cells; i++) {
			if (g->cell_ends[i] > s)
				any = 1;
			s = g->cell_ends[i] + CELL_SEP_LEN;
		}
		if (g->n_cells)
			g->len = g->cell_ends[g->n_cells - 1];
	}
	st = any ? emit(g, g->len, d) : LP_OK;
	reset(g);
	return st;
}

/* The block is full: hand on what it holds (up to a space, or a line
 * for code) and keep the rest as the start of the next part. */
static enum lp_status overflow(struct lp_gather *g, struct lp_diag *d)
{
	size_t cut = g->len, floor = g->len > 4096 ? g->len - 4096 : 0;
	char sep = g->kind == LP_BLOCK_CODE ? '\n' : ' ';
	enum lp_status st;

	if (g->kind == LP_BLOCK_TABLE_ROW)
		return lp_gather_end(g, d);
	for (size_t i = g->len; i > floor; i--) {
		if (g->text[i - 1] == sep) {
			cut = i - 1;
			break;
		}
	}
	/* never inside a UTF-8 sequence */
	while (cut > 0 && cut < g->len && ((unsigned char)g->text[cut] & 0xC0) == 0x80)
		cut--;
	if (!cut)
		cut = g->len;
	if ((st = emit(g, cut, d)))
		return st;
	if (cut < g->len && (g->text[cut] == sep))
		cut++;
	memmove(g->text, g->text + cut, g->len - cut);
	g->len -= cut;
	g->src_lo = g->src_hi; /* the next part starts where this one's source ended */
	return LP_OK;
}

enum lp_status lp_gather_text(struct lp_gather *g, const char *s, size_t n, struct lp_diag *d)
{
	const unsigned char *u = (const unsigned char *)s;
	int verbatim = g->kind == LP_BLOCK_CODE;
	enum lp_status st;

	for (size_t i = 0; i < n;) {
		unsigned char c = u[i], out[4];
		uint32_t cp;
		int k, w;

		if (c < 0x80) {
			k = 1;
			cp = c;
		} else {
			k = lp_utf8_decode(u + i, n - i, &cp);
			if (!k)
				k = 1; /* cp is U+FFFD */
		}
		i += (size_t)k;
		if (verbatim) {
			if (c == '\r' || c == 0 || (cp < 0x20 && cp != '\n' && cp != '\t'))
				continue;
		} else if (cp == ' ' || cp == '\n' || cp == '\t' || cp == '\r' || cp == '\f' ||
			   cp == '\v' || cp == 0xA0 || (cp >= 0x2000 && cp <= 0x200A) ||
			   cp == 0x2028 || cp == 0x2029 || cp == 0x3000) {
			g->space = 1;
			continue;
		} else if (cp < 0x20 || cp == 0x7F || cp == 0xAD || cp == 0x200B || cp == 0xFEFF) {
			continue; /* controls, soft hyphens, zero-width spaces */
		}
		if (g->len + 8 > LP_GATHER_MAX && (st = overflow(g, d)))
			return st;
		if ((st = reserve(g, 5, d)))
			return st;
		if (g->space && !verbatim && g->len > g->cell_start)
			g->text[g->len++] = ' ';
		g->space = 0;
		w = lp_utf8_encode(cp, out);
		memcpy(g->text + g->len, out, (size_t)w);
		g->len += (size_t)w;
	}
	return LP_OK;
}

/* The kind of the innermost context kept, or PARAGRAPH. */
static void current_kind(struct lp_gather *g)
{
	unsigned n = g->n_ctx < LP_GATHER_DEPTH ? g->n_ctx : LP_GATHER_DEPTH;

	if (n)
		lp_gather_begin(g, (enum lp_block_kind)g->ctx_kind[n - 1], g->ctx_level[n - 1]);
	else
		lp_gather_begin(g, LP_BLOCK_PARAGRAPH, 0);
}

enum lp_status lp_gather_break(struct lp_gather *g, struct lp_diag *d)
{
	enum lp_status st = lp_gather_end(g, d);

	current_kind(g);
	return st;
}

enum lp_status lp_gather_push(struct lp_gather *g, enum lp_block_kind kind, unsigned level,
			      struct lp_diag *d)
{
	enum lp_status st = lp_gather_end(g, d);

	if (g->n_ctx < LP_GATHER_DEPTH) {
		g->ctx_kind[g->n_ctx] = (unsigned char)kind;
		g->ctx_level[g->n_ctx] = (unsigned char)(level > 255 ? 255 : level);
	}
	if (g->n_ctx < (unsigned)-1)
		g->n_ctx++;
	current_kind(g);
	return st;
}

enum lp_status lp_gather_pop(struct lp_gather *g, struct lp_diag *d)
{
	enum lp_status st = lp_gather_end(g, d);

	if (g->n_ctx)
		g->n_ctx--;
	current_kind(g);
	return st;
}

enum lp_status lp_gather_missing(struct lp_diag *d, const char *name, const char *format,
				 const char *package)
{
	return lp_diag_set(d, LP_E_INPUT, name, 0, 0,
			   "this lpipe was built without the %s reader: install the "
			   "Debian package '%s' and rebuild", format, package);
}

enum lp_status lp_gather_blame(struct lp_diag *d, const char *name, enum lp_status st)
{
	if (st && d && !d->file[0] && name)
		snprintf(d->file, sizeof(d->file), "%s", name);
	return st;
}
