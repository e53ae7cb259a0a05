/*
 * read_pdf.c - PDF to blocks with poppler-glib, one page at a time.
 *
 * poppler gives each page's text in reading order, one line per '\n',
 * with a rectangle per character and the font of each run. From those:
 *  - paragraphs are rebuilt from lines: a new one starts at a vertical
 *    gap wider than the font's leading, a change of font size, a line
 *    moving up (a new column), a list bullet, or after a short line that
 *    ends a sentence;
 *  - a line (or up to three, a title wrapped) that prints the title of an
 *    entry of the document's outline (bookmarks), on the page the entry
 *    goes to, is a HEADING of the entry's depth, a block of its own
 *    whatever its font: the outline is the author's own list of headings
 *    (titles and lines are compared by their letters and digits alone,
 *    since outline writers drop marks: "fontsconf" for "fonts-conf");
 *    PDF_MAX_OUTLINE entries PDF_OUTLINE_DEPTH deep are read at most;
 *  - a paragraph of at most three lines in a font clearly larger than the
 *    body's is a HEADING, its level from the ratio of the sizes; one or
 *    two lines in a bold face at the body's size, not ending like a
 *    sentence, are a level-3 HEADING (unless the body itself is mostly
 *    bold); a change of face also starts a paragraph;
 *  - a word broken at a line end ("de-" + "fault", or a soft hyphen) is
 *    joined, unless the hyphenated form occurs whole on the page
 *    ("well-" + "known" where "well-known" is written elsewhere);
 *  - running headers and footers go: a first pass over up to
 *    PDF_SAMPLE_PAGES pages, spread over the document, notes the top and
 *    bottom lines of each (digits taken as one "#", so "Page 3" and
 *    "Page 4" agree) and those found on at least half of them (and on
 *    three) are dropped wherever they are a page's top or bottom line.
 *    A header that changes with the chapter is known by its place
 *    instead: a short line set apart from the text, in the band where
 *    half the sampled pages have one. The same pass finds the body's
 *    font size.
 *
 * Memory: the file is wrapped without a copy (it is the caller's); each
 * page is loaded, read and released before the next, so what poppler
 * holds is one page's objects and text beside the document's
 * cross-reference table, fonts and caches. The page tables the reader
 * builds are tracked (LP_MEM_DOC). poppler takes no allocator, so its
 * memory is charged to the budget (LP_MEM_DOC) by a bound, measured
 * with mallinfo2 on the seven PDFs of bench/extract (Debian 12, poppler
 * 22.12): the document holds 0.5-0.65 MB once opened and 1.1-2.1 MB
 * after its pages were read, charged before it is opened as
 * PDF_DOC_COST plus PDF_DOC_COST_PER_BYTE per byte of the file; a page
 * takes 290-410 bytes per character of its text on average and at most
 * 5.9 MB (8,825 characters of an index), charged as PDF_PAGE_COST
 * before it is loaded and PDF_CHAR_COST per character once its text is
 * known, and given back when the page is done. A budget too small for
 * that refuses the document naming the file and the page. What poppler
 * allocates inside one call is only charged after it (the page's text
 * cannot be sized before it is read). PDF_MAX_PAGES bounds the pages
 * read, so a huge page tree ends.
 *
 * Refusals (LP_E_INPUT, naming the file, and the page where one is at
 * fault): an encrypted PDF that needs a password, a file poppler cannot
 * open (with the byte where it is at fault: the end of a file cut short,
 * or the cross-reference table its trailer names), a page it cannot
 * load, a PDF whose pages have no text ("no text layer: run OCR first").
 * A damaged file poppler can rebuild (a wrong cross-reference table) is
 * read as poppler rebuilds it.
 */
#include "doc/readers.h"

#include "config.h"

#ifdef LP_HAVE_POPPLER

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <poppler.h>

#include "core/mem.h"
#include "doc/gather.h"

/* poppler's own memory, charged to the budget (see "Memory" above):
 * the document's, per byte of file beyond a fixed part, and a page's,
 * before it is loaded and then per character of its text. */
#define PDF_DOC_COST ((size_t)1 << 20)
#define PDF_DOC_COST_PER_BYTE 1
#define PDF_PAGE_COST ((size_t)1 << 20)
#define PDF_CHAR_COST 1024
#define PDF_SAMPLE_PAGES 40
#define PDF_MAX_PAGES 200000
/* Distinct top/bottom lines kept by the first pass. */
#define PDF_MAX_KEYS 512
#define PDF_KEY_LEN 96
/* Outline entries kept, the depth followed, and the bytes of a title's
 * key (longer titles are matched on their first PDF_MARK_LEN bytes). */
#define PDF_MAX_OUTLINE 20000
#define PDF_OUTLINE_DEPTH 16
#define PDF_MARK_LEN 160
/* Lines an outline title may be wrapped over on its page. */
#define PDF_MARK_LINES 3

struct pdf_line {
	size_t off, len;          /* bytes in the page's text */
	double x1, y1, x2, y2;    /* bounding box, points, y down */
	double size;              /* font size of its first character */
	int bold;                 /* every character in a bold face */
	int drop;                 /* a running header or footer */
	unsigned char outline;    /* the level (1..6) of the outline entry this
				   * line begins, or 0 */
	unsigned char outline_n;  /* lines the entry's title spans (1..3) */
};

struct pdf_page {
	char *text;               /* poppler's, g_free */
	struct pdf_line *lines;   /* tracked */
	size_t n_lines, cap;
	size_t charged;           /* bytes of poppler's memory reserved for it */
};

struct pdf_key {
	char key[PDF_KEY_LEN];
	unsigned pages;
	int last_page;
};

/* An outline (bookmark) entry: the heading it names, on its page. */
struct pdf_mark {
	int page;                 /* 1-based */
	unsigned char level;      /* 1..6: its depth in the outline */
	unsigned char used;       /* matched to a line already */
	unsigned short len;       /* bytes of key */
	char key[PDF_MARK_LEN];   /* pdf_key_words of its title */
};

struct pdf_reader {
	const char *name;
	PopplerDocument *doc;
	struct lp_gather g;
	struct lp_diag *d;
	struct pdf_key *keys;     /* tracked, PDF_MAX_KEYS */
	size_t n_keys;
	unsigned sampled;
	unsigned top_y[256], bottom_y[256]; /* sampled pages whose isolated top or
				   * bottom line lies in each 4pt band */
	double body;              /* body font size */
	double size_hist[64];     /* characters per font size, 1pt bins */
	double chars, bold_chars; /* sampled characters, of them in bold lines */
	struct pdf_mark *marks;   /* tracked; sorted by page, then key */
	size_t n_marks, marks_cap;
};

/* --- one page's lines ------------------------------------------------ */

static void pdf_page_release(struct pdf_page *pg)
{
	g_free(pg->text);
	lp_mem_free(pg->lines);
	lp_mem_unreserve(LP_MEM_DOC, pg->charged);
	memset(pg, 0, sizeof(*pg));
}

/* Charge `bytes` more of poppler's memory to the budget for `page` (a
 * page's number, or 0 for the document). On refusal, the message names
 * the page and says what did not fit. */
static enum lp_status pdf_charge(struct pdf_reader *r, size_t bytes, int page, size_t *charged)
{
	char need[32], left[32];
	size_t budget = lp_mem_budget(), used = lp_mem_current_total();

	if (!lp_mem_reserve(LP_MEM_DOC, bytes, r->d)) {
		*charged += bytes;
		return LP_OK;
	}
	lp_mem_format_size(*charged + bytes, need, sizeof(need));
	lp_mem_format_size(budget > used ? budget - used : 0, left, sizeof(left));
	if (page)
		return lp_diag_set(r->d, LP_E_NOMEM, r->name, 0, 0,
				   "page %d: poppler's memory for the page (%s, counted per "
				   "character of its text) does not fit the memory budget "
				   "(%s free)", page, need, left);
	return lp_diag_set(r->d, LP_E_NOMEM, r->name, 0, 0,
			   "poppler's memory for the document (%s, counted per byte of the "
			   "file) does not fit the memory budget (%s free)", need, left);
}

static enum lp_status pdf_add_line(struct pdf_page *pg, const struct pdf_line *l,
				   struct lp_diag *d)
{
	if (pg->n_lines == pg->cap) {
		size_t cap = pg->cap ? 2 * pg->cap : 64;
		struct pdf_line *p = lp_mem_realloc(LP_MEM_DOC, pg->lines, cap * sizeof(*p), d);
		if (!p)
			return LP_E_NOMEM;
		pg->lines = p;
		pg->cap = cap;
	}
	pg->lines[pg->n_lines++] = *l;
	return LP_OK;
}

/* The attributes of character `ci`, from poppler's runs (sorted), or
 * NULL. */
static const PopplerTextAttributes *pdf_attr_at(GList **run, guint ci)
{
	while (*run) {
		PopplerTextAttributes *a = (*run)->data;
		if ((guint)a->end_index >= ci)
			return (guint)a->start_index <= ci ? a : NULL;
		*run = (*run)->next;
	}
	return NULL;
}

/* Whether a font's name says a bold face ("Helvetica-Bold",
 * "DejaVuSans-BoldOblique", "Inter-SemiBold", "Roboto-Black"). */
static int pdf_bold_font(const char *name)
{
	static const char *const faces[] = { "bold", "black", "heavy", "demi", NULL };

	for (size_t i = 0; name && faces[i]; i++)
		if (strcasestr(name, faces[i]))
			return 1;
	return 0;
}

/* Load page `p` (0-based) into lines. The caller releases `pg`, on
 * failure too. */
static enum lp_status pdf_load_page(struct pdf_reader *r, int p, struct pdf_page *pg)
{
	PopplerPage *page;
	PopplerRectangle *rects = NULL;
	guint n_rects = 0, ci = 0;
	GList *attrs, *run;
	struct pdf_line l;
	enum lp_status st = LP_OK;
	size_t i = 0, len;
	int any;

	memset(pg, 0, sizeof(*pg));
	/* a page's part before poppler reads it, the rest once its text
	 * says how much poppler holds */
	if ((st = pdf_charge(r, PDF_PAGE_COST, p + 1, &pg->charged)))
		return st;
	if (!(page = poppler_document_get_page(r->doc, p)))
		return lp_diag_set(r->d, LP_E_INPUT, r->name, 0, 0,
				   "page %d: poppler cannot load it (damaged PDF)", p + 1);
	pg->text = poppler_page_get_text(page);
	if (!pg->text || !poppler_page_get_text_layout(page, &rects, &n_rects))
		n_rects = 0;
	attrs = poppler_page_get_text_attributes(page);
	run = attrs;
	len = pg->text ? strlen(pg->text) : 0;
	st = pdf_charge(r, PDF_CHAR_COST * (n_rects > len ? n_rects : len), p + 1, &pg->charged);
	while (i < len && !st) {
		size_t start = i;
		memset(&l, 0, sizeof(l));
		l.x1 = l.y1 = 1e9;
		l.x2 = l.y2 = -1e9;
		l.bold = 1;
		any = 0;
		/* one line: up to '\n', its box from its characters' boxes */
		for (; i < len && pg->text[i] != '\n'; ci++) {
			unsigned char c = (unsigned char)pg->text[i];
			if (ci < n_rects && c != ' ') {
				PopplerRectangle *rc = &rects[ci];
				l.x1 = fmin(l.x1, rc->x1);
				l.y1 = fmin(l.y1, rc->y1);
				l.x2 = fmax(l.x2, rc->x2);
				l.y2 = fmax(l.y2, rc->y2);
				{
					const PopplerTextAttributes *a = pdf_attr_at(&run, ci);

					if (a && !l.size)
						l.size = a->font_size;
					l.bold &= a && pdf_bold_font(a->font_name);
					any = 1;
				}
			}
			i += (size_t)(g_utf8_next_char(pg->text + i) - (pg->text + i));
		}
		l.bold &= any;
		l.off = start;
		l.len = i - start;
		while (l.len && (pg->text[l.off] == ' ' || pg->text[l.off] == '\t')) {
			l.off++;
			l.len--;
		}
		while (l.len && isspace((unsigned char)pg->text[l.off + l.len - 1]))
			l.len--;
		if (i < len) { /* the '\n' */
			i++;
			ci++;
		}
		if (!l.len)
			continue;
		if (l.x1 > l.x2) { /* no boxes: keep the order, guess the rest */
			l.x1 = l.y1 = l.x2 = l.y2 = 0;
		}
		st = pdf_add_line(pg, &l, r->d);
	}
	poppler_page_free_text_attributes(attrs);
	g_free(rects);
	g_object_unref(page);
	return st;
}

/* --- running headers and footers --------------------------------------- */

/* A line's key: lower case, digit runs as '#', spaces folded. */
static void pdf_key_of(const char *s, size_t n, char *key)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < PDF_KEY_LEN; i++) {
		unsigned char c = (unsigned char)s[i];
		if (isdigit(c)) {
			if (!k || key[k - 1] != '#')
				key[k++] = '#';
		} else if (isspace(c)) {
			if (k && key[k - 1] != ' ')
				key[k++] = ' ';
		} else {
			key[k++] = (char)tolower(c);
		}
	}
	while (k && key[k - 1] == ' ')
		k--;
	key[k] = '\0';
}

static struct pdf_key *pdf_find_key(struct pdf_reader *r, const char *key)
{
	for (size_t i = 0; i < r->n_keys; i++)
		if (!strcmp(r->keys[i].key, key))
			return &r->keys[i];
	return NULL;
}

/* A page's two top lines and two bottom lines, in idx[0..1] and
 * idx[2..3] (outermost first; (size_t)-1 where the page has fewer). */
static void pdf_edge_lines(const struct pdf_page *pg, size_t *idx)
{
	size_t *top = idx, *bot = idx + 2;

	idx[0] = idx[1] = idx[2] = idx[3] = (size_t)-1;
	for (size_t i = 0; i < pg->n_lines; i++) {
		const struct pdf_line *l = &pg->lines[i];
		if (top[0] == (size_t)-1 || l->y1 < pg->lines[top[0]].y1) {
			top[1] = top[0];
			top[0] = i;
		} else if (top[1] == (size_t)-1 || l->y1 < pg->lines[top[1]].y1) {
			top[1] = i;
		}
	}
	for (size_t i = 0; i < pg->n_lines; i++) {
		const struct pdf_line *l = &pg->lines[i];
		if (i == top[0] || i == top[1])
			continue;
		if (bot[0] == (size_t)-1 || l->y2 > pg->lines[bot[0]].y2) {
			bot[1] = bot[0];
			bot[0] = i;
		} else if (bot[1] == (size_t)-1 || l->y2 > pg->lines[bot[1]].y2) {
			bot[1] = i;
		}
	}
}

/* Two lines side by side ("Chapter 2: Copyright" ... "2"). */
static int pdf_same_row(const struct pdf_line *a, const struct pdf_line *b)
{
	return b->y1 < a->y2 && b->y2 > a->y1;
}

/* A short line set apart from the page's text by a gap of over a line
 * and a half: what a running header or footer looks like. `edge` is the
 * page's outermost line at the top (top = 1) or the bottom. */
static int pdf_isolated(const struct pdf_page *pg, size_t edge, int top)
{
	const struct pdf_line *l = &pg->lines[edge];
	double size = l->size > 0 ? l->size : 10, gap = 1e9;

	if (l->len > 120)
		return 0;
	for (size_t i = 0; i < pg->n_lines; i++) {
		const struct pdf_line *o = &pg->lines[i];
		if (i == edge || pdf_same_row(l, o))
			continue;
		gap = fmin(gap, top ? o->y1 - l->y2 : l->y1 - o->y2);
	}
	return gap > 1.5 * size && gap < 1e9;
}

static unsigned pdf_band(double y)
{
	long b = lround(y / 4);
	return b < 0 ? 0 : b > 255 ? 255 : (unsigned)b;
}

static void pdf_note_page(struct pdf_reader *r, const struct pdf_page *pg, int p)
{
	size_t idx[4], n = 4;
	char key[PDF_KEY_LEN];

	pdf_edge_lines(pg, idx);
	if (idx[0] != (size_t)-1 && pdf_isolated(pg, idx[0], 1))
		r->top_y[pdf_band(pg->lines[idx[0]].y1)]++;
	if (idx[2] != (size_t)-1 && pdf_isolated(pg, idx[2], 0))
		r->bottom_y[pdf_band(pg->lines[idx[2]].y2)]++;
	for (size_t i = 0; i < pg->n_lines; i++) {
		const struct pdf_line *l = &pg->lines[i];
		int bin = (int)lround(l->size);
		if (bin > 0 && bin < 64)
			r->size_hist[bin] += (double)l->len;
		r->chars += (double)l->len;
		if (l->bold)
			r->bold_chars += (double)l->len;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pdf_line *l;
		struct pdf_key *k;
		if (idx[i] == (size_t)-1)
			continue;
		l = &pg->lines[idx[i]];
		pdf_key_of(pg->text + l->off, l->len, key);
		if (!key[0])
			continue;
		k = pdf_find_key(r, key);
		if (!k && r->n_keys < PDF_MAX_KEYS) {
			k = &r->keys[r->n_keys++];
			memcpy(k->key, key, sizeof(key));
			k->pages = 0;
			k->last_page = -1;
		}
		if (k && k->last_page != p) {
			k->pages++;
			k->last_page = p;
		}
	}
}

/* The first pass: sample pages for running lines and the body size. */
static enum lp_status pdf_sample(struct pdf_reader *r, int n_pages)
{
	int n = n_pages < PDF_SAMPLE_PAGES ? n_pages : PDF_SAMPLE_PAGES;
	double best = 0;

	for (int s = 0; s < n; s++) {
		int p = (int)((long long)s * n_pages / n);
		struct pdf_page pg;
		enum lp_status st = pdf_load_page(r, p, &pg);
		if (st == LP_OK) {
			pdf_note_page(r, &pg, p);
			r->sampled++;
		}
		pdf_page_release(&pg);
		if (st == LP_E_NOMEM)
			return st;
	}
	if (r->d)
		lp_diag_init(r->d); /* a page that failed here fails again, in order */
	for (int b = 1; b < 64; b++) {
		if (r->size_hist[b] > best) {
			best = r->size_hist[b];
			r->body = b;
		}
	}
	return LP_OK;
}

/* Sampled pages a line must be found on to be running. */
static unsigned pdf_need(const struct pdf_reader *r)
{
	return r->sampled / 2 > 3 ? (r->sampled + 1) / 2 : 3;
}

static int pdf_running(const struct pdf_reader *r, const char *key)
{
	unsigned need = pdf_need(r);

	if (r->sampled < 4 || !key[0])
		return 0;
	for (size_t i = 0; i < r->n_keys; i++)
		if (!strcmp(r->keys[i].key, key))
			return r->keys[i].pages >= need;
	return 0;
}

/* A list bullet (a symbol, not a number) at the start of a line: "• ",
 * "◦ ", "▪ " (or without their space, as poppler may give them), "– ",
 * "- ", "* ". */
static int pdf_bullet_symbol(const char *s, size_t n)
{
	static const char *bullets[] = { "\xE2\x80\xA2", "\xE2\x97\xA6", "\xE2\x96\xAA",
					 "\xE2\x80\x93 ", "- ", "* " };

	for (size_t b = 0; b < sizeof(bullets) / sizeof(bullets[0]); b++)
		if (n > strlen(bullets[b]) && !memcmp(s, bullets[b], strlen(bullets[b])))
			return 1;
	return 0;
}

/* A list bullet or number at the start of a line. */
static int pdf_bullet(const char *s, size_t n)
{
	static const char *spaced[] = { "\xE2\x80\xA2 ", "\xE2\x97\xA6 ", "\xE2\x96\xAA " };
	size_t i = 0;

	for (size_t b = 0; b < sizeof(spaced) / sizeof(spaced[0]); b++)
		if (n > strlen(spaced[b]) && !memcmp(s, spaced[b], strlen(spaced[b])))
			return 1;
	if (pdf_bullet_symbol(s, n) && (unsigned char)s[0] < 0x80)
		return 1;
	if (n > 4 && !memcmp(s, "\xE2\x80\x93 ", 4))
		return 1;
	while (i < n && i < 3 && isdigit((unsigned char)s[i]))
		i++;
	return i && i + 1 < n && (s[i] == '.' || s[i] == ')') && s[i + 1] == ' ';
}

/* --- the outline ------------------------------------------------------- */

/* Append the words of `n` bytes of `s` to `buf` (`*len` of `cap` used):
 * lower case, in compatibility form (a ligature as its letters, an
 * accent dropped), one space between words, so that a title and the
 * line that prints it agree whatever the fonts made of them. Stops when
 * `buf` is full. */
static void pdf_words(const char *s, size_t n, char *buf, size_t *len, size_t cap)
{
	size_t i = 0;

	while (i < n && *len + 8 < cap) {
		gunichar c = g_utf8_get_char_validated(s + i, (gssize)(n - i)), dec[18];
		gsize k;

		if (c == (gunichar)-1 || c == (gunichar)-2) { /* not UTF-8: a gap */
			c = ' ';
			i++;
		} else {
			i += (size_t)(g_utf8_next_char(s + i) - (s + i));
		}
		k = g_unichar_fully_decompose(c, TRUE, dec, G_N_ELEMENTS(dec));
		for (gsize j = 0; j < k && *len + 8 < cap; j++) {
			if (g_unichar_isalnum(dec[j]))
				*len += (size_t)g_unichar_to_utf8(g_unichar_tolower(dec[j]), buf + *len);
			else if (!g_unichar_ismark(dec[j]) && *len && buf[*len - 1] != ' ')
				buf[(*len)++] = ' ';
		}
	}
}

/* A title's key from its words (pdf_words): without a leading section
 * number ("2.1 Usage", "A.3 Files": digit words, and one character before
 * one) and without the spaces, so a word broken over two lines ("Config-"
 * "uration") is the word. At most PDF_MARK_LEN bytes; returns the length. */
static size_t pdf_key_words(const char *w, size_t n, char *key)
{
	size_t i = 0, k = 0;

	for (;;) {
		size_t e = i, next;
		int digits = 1;
		while (i < n && w[i] == ' ')
			i++;
		for (e = i; e < n && w[e] != ' '; e++)
			digits &= isdigit((unsigned char)w[e]) != 0;
		if (e == i)
			break;
		for (next = e; next < n && w[next] == ' '; next++)
			;
		if (digits || (g_utf8_next_char(w + i) == w + e && next < n &&
			       isdigit((unsigned char)w[next]))) {
			i = e;
			continue;
		}
		break;
	}
	for (; i < n && k < PDF_MARK_LEN; i++)
		if (w[i] != ' ')
			key[k++] = w[i];
	return k;
}

static int pdf_mark_cmp(const void *a, const void *b)
{
	const struct pdf_mark *x = a, *y = b;
	int c;

	if (x->page != y->page)
		return x->page < y->page ? -1 : 1;
	c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);
	return c ? c : (int)x->len - (int)y->len;
}

/* Keep one outline entry at depth `depth` (0 = top) when it goes to a
 * page of this document and has a title with words. */
static enum lp_status pdf_add_mark(struct pdf_reader *r, PopplerAction *a, int depth,
				   int n_pages)
{
	char words[4 * PDF_MARK_LEN];
	size_t n = 0;
	struct pdf_mark m;
	PopplerDest *dest;
	int page;

	if (!a || a->type != POPPLER_ACTION_GOTO_DEST || !a->any.title || !a->goto_dest.dest)
		return LP_OK;
	dest = a->goto_dest.dest;
	if (dest->type == POPPLER_DEST_NAMED) {
		PopplerDest *named = dest->named_dest ?
			poppler_document_find_dest(r->doc, dest->named_dest) : NULL;
		page = named ? named->page_num : 0;
		if (named)
			poppler_dest_free(named);
	} else {
		page = dest->page_num;
	}
	if (page < 1 || page > n_pages)
		return LP_OK;
	memset(&m, 0, sizeof(m));
	pdf_words(a->any.title, strlen(a->any.title), words, &n, sizeof(words));
	m.len = (unsigned short)pdf_key_words(words, n, m.key);
	if (!m.len)
		return LP_OK;
	m.page = page;
	m.level = (unsigned char)(depth < 5 ? depth + 1 : 6);
	if (r->n_marks == r->marks_cap) {
		size_t cap = r->marks_cap ? 2 * r->marks_cap : 64;
		struct pdf_mark *p = lp_mem_realloc(LP_MEM_DOC, r->marks, cap * sizeof(*p), r->d);
		if (!p)
			return LP_E_NOMEM;
		r->marks = p;
		r->marks_cap = cap;
	}
	r->marks[r->n_marks++] = m;
	return LP_OK;
}

/* The document's outline as marks, sorted by page and key: at most
 * PDF_MAX_OUTLINE entries, PDF_OUTLINE_DEPTH deep, so that an outline
 * made to loop or to nest without end still ends. */
static enum lp_status pdf_read_outline(struct pdf_reader *r, int n_pages)
{
	PopplerIndexIter *stack[PDF_OUTLINE_DEPTH];
	enum lp_status st = LP_OK;
	size_t seen = 0;
	int depth = 0;

	stack[0] = poppler_index_iter_new(r->doc);
	if (!stack[0])
		return LP_OK;
	while (depth >= 0 && !st && seen++ < PDF_MAX_OUTLINE) {
		PopplerAction *a = poppler_index_iter_get_action(stack[depth]);
		PopplerIndexIter *child;

		st = pdf_add_mark(r, a, depth, n_pages);
		if (a)
			poppler_action_free(a);
		child = depth + 1 < PDF_OUTLINE_DEPTH ? poppler_index_iter_get_child(stack[depth])
						      : NULL;
		if (child) {
			stack[++depth] = child;
			continue;
		}
		while (depth >= 0 && !poppler_index_iter_next(stack[depth]))
			poppler_index_iter_free(stack[depth--]);
	}
	while (depth >= 0)
		poppler_index_iter_free(stack[depth--]);
	if (r->n_marks)
		qsort(r->marks, r->n_marks, sizeof(*r->marks), pdf_mark_cmp);
	return st;
}

/* An unused mark of page `p` whose key is `key`, or NULL. */
static struct pdf_mark *pdf_find_mark(struct pdf_reader *r, int p, const char *key, size_t n)
{
	struct pdf_mark want;
	size_t lo = 0, hi = r->n_marks;

	want.page = p;
	want.len = (unsigned short)n;
	memcpy(want.key, key, n);
	while (lo < hi) { /* the first mark not below `want` */
		size_t mid = lo + (hi - lo) / 2;
		if (pdf_mark_cmp(&r->marks[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->n_marks && !pdf_mark_cmp(&r->marks[lo], &want); lo++)
		if (!r->marks[lo].used)
			return &r->marks[lo];
	return NULL;
}

/* Whether page `p` has an outline entry. */
static int pdf_page_marked(const struct pdf_reader *r, int p)
{
	size_t lo = 0, hi = r->n_marks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->marks[mid].page < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n_marks && r->marks[lo].page == p;
}

/* Mark the lines of page `p` that print one of its outline titles: a
 * line, or up to PDF_MARK_LINES lines in a row (a title wrapped), whose
 * key is the title's. The longest match wins; each entry names one
 * heading, the first in reading order. Only lines whose `drop` is
 * `dropped` are looked at: the text first, then the running lines, so a
 * chapter's title that also runs atop its pages is a heading where the
 * chapter begins (and the line stays). */
/* Whether `n` bytes of pdf_words output hold no word. */
static int pdf_no_word(const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] != ' ')
			return 0;
	return 1;
}

static void pdf_match_outline(struct pdf_reader *r, struct pdf_page *pg, int p, int dropped)
{
	char words[4 * PDF_MARK_LEN], key[PDF_MARK_LEN];

	for (size_t i = 0; i < pg->n_lines; i++) {
		size_t most = 0;

		while (most < PDF_MARK_LINES && i + most < pg->n_lines &&
		       pg->lines[i + most].drop == dropped && !pg->lines[i + most].outline)
			most++;
		/* a list item that names a section ("• The Client Request
		 * mechanism" in a chapter's list of its subjects) is not it */
		if (most && pdf_bullet_symbol(pg->text + pg->lines[i].off, pg->lines[i].len))
			continue;

		for (size_t k = most; k > 0; k--) {
			struct pdf_mark *m;
			size_t n = 0, kl;

			int wordless = 0;

			for (size_t j = i; j < i + k; j++) {
				size_t before = n;
				if (n)
					words[n++] = ' ';
				pdf_words(pg->text + pg->lines[j].off, pg->lines[j].len, words, &n,
					  sizeof(words));
				/* a title's lines all hold words: a rule, a brace or
				 * a bullet above it is not part of it */
				wordless |= pdf_no_word(words + before, n - before);
			}
			kl = pdf_key_words(words, n, key);
			if (!kl || (k > 1 && wordless) || !(m = pdf_find_mark(r, p, key, kl)))
				continue;
			m->used = 1;
			pg->lines[i].outline = m->level;
			pg->lines[i].outline_n = (unsigned char)k;
			for (size_t j = i; j < i + k; j++)
				pg->lines[j].drop = 0;
			i += k - 1;
			break;
		}
	}
}

/* A title's section number printed as a line of its own ("4.3" beside
 * or above "The 2.x Releases", where the outline has the words alone)
 * goes with the title. */
static void pdf_title_numbers(struct pdf_page *pg)
{
	for (size_t i = 1; i < pg->n_lines; i++) {
		struct pdf_line *num = &pg->lines[i - 1], *t = &pg->lines[i];
		char words[64], key[PDF_MARK_LEN];
		size_t n = 0;
		double size = t->size > 0 ? t->size : 10;

		if (!t->outline || num->outline || num->len > 16)
			continue;
		pdf_words(pg->text + num->off, num->len, words, &n, sizeof(words));
		if (!n || pdf_key_words(words, n, key) ||
		    !(pdf_same_row(num, t) || (t->y1 >= num->y2 && t->y1 - num->y2 < 0.8 * size)))
			continue;
		num->outline = t->outline;
		num->outline_n = (unsigned char)(t->outline_n + 1);
		t->outline = 0;
		t->outline_n = 0;
	}
}

/* --- paragraphs -------------------------------------------------------- */

static int pdf_ends_sentence(const char *s, size_t n)
{
	return n && strchr(".!?:", s[n - 1]);
}

/* Whether line `a` and the next line `b` are one paragraph. */
static int pdf_same_paragraph(const struct pdf_page *pg, const struct pdf_line *a,
			      const struct pdf_line *b, double right)
{
	double size = a->size > 0 ? a->size : 10, gap = b->y1 - a->y2;

	if (a->size > 0 && b->size > 0 && fabs(a->size - b->size) > 0.15 * fmax(a->size, b->size))
		return 0;
	if (a->bold != b->bold) /* a bold heading over its text */
		return 0;
	if (b->y1 < a->y1 - 0.5 * size) /* moved up: a new column or a float */
		return 0;
	if (gap > 0.8 * size)
		return 0;
	if (pdf_bullet(pg->text + b->off, b->len))
		return 0;
	if (pdf_ends_sentence(pg->text + a->off, a->len) && a->x2 < right - 4 * size)
		return 0;
	return 1;
}

/* Where line `a` ends in a hyphen to drop before line `b`: the bytes to
 * keep of `a`, or a->len when the hyphen (if any) stays. */
static size_t pdf_dehyphen(const struct pdf_page *pg, const struct pdf_line *a,
			   const struct pdf_line *b, int *joined)
{
	const char *s = pg->text + a->off, *t = pg->text + b->off;
	size_t n = a->len, w, tw;
	char word[128];

	*joined = 0;
	if (!b->len || !(islower((unsigned char)t[0])))
		return n;
	if (n >= 3 && !memcmp(s + n - 2, "\xC2\xAD", 2)) { /* soft hyphen */
		*joined = 1;
		return n - 2;
	}
	if (n >= 4 && !memcmp(s + n - 3, "\xE2\x80\x90", 3)) { /* U+2010 */
		*joined = 1;
		return n - 3;
	}
	if (n < 3 || s[n - 1] != '-' || !isalpha((unsigned char)s[n - 2]))
		return n;
	/* "well-" + "known": keep the hyphen when the page writes it whole */
	for (w = n - 1; w > 0 && !isspace((unsigned char)s[w - 1]); w--)
		;
	for (tw = 0; tw < b->len && isalpha((unsigned char)t[tw]); tw++)
		;
	*joined = 1;
	if (n - w + tw < sizeof(word)) {
		memcpy(word, s + w, n - w);
		memcpy(word + n - w, t, tw);
		word[n - w + tw] = '\0';
		if (strstr(pg->text, word))
			return n;
	}
	return n - 1;
}

static enum lp_block_kind pdf_kind(const struct pdf_reader *r, const struct pdf_page *pg,
				   size_t first, size_t n, unsigned *level)
{
	const struct pdf_line *l = &pg->lines[first];
	size_t chars = 0;

	*level = 0;
	if (l->outline) { /* the document's outline names it */
		*level = l->outline;
		return LP_BLOCK_HEADING;
	}
	for (size_t i = first; i < first + n; i++)
		chars += pg->lines[i].len;
	/* a contents line ("2 Copyright . . . . 3") is not a heading */
	if (r->body > 0 && l->size >= 1.15 * r->body && n <= 3 && chars < 300 &&
	    !memmem(pg->text + l->off, l->len, ". . .", 5) &&
	    !memmem(pg->text + l->off, l->len, "....", 4)) {
		double ratio = l->size / r->body;
		*level = ratio >= 1.6 ? 1 : ratio >= 1.3 ? 2 : 3;
		return LP_BLOCK_HEADING;
	}
	/* a short bold line at the body's size, where the body is not bold:
	 * a subheading ("Font configuration") */
	if (l->bold && r->chars > 0 && r->bold_chars < 0.5 * r->chars && n <= 2 && chars < 150 &&
	    !pdf_ends_sentence(pg->text + pg->lines[first + n - 1].off,
			       pg->lines[first + n - 1].len) &&
	    !memmem(pg->text + l->off, l->len, "....", 4)) {
		*level = 3;
		return LP_BLOCK_HEADING;
	}
	if (pdf_bullet(pg->text + l->off, l->len)) {
		*level = 1;
		return LP_BLOCK_LIST_ITEM;
	}
	return LP_BLOCK_PARAGRAPH;
}

/* Lines [first, first + n) as one block of page `p`. */
static enum lp_status pdf_emit(struct pdf_reader *r, const struct pdf_page *pg, size_t first,
			       size_t n, unsigned p)
{
	enum lp_status st = LP_OK;
	unsigned level;
	enum lp_block_kind kind = pdf_kind(r, pg, first, n, &level);

	lp_gather_begin(&r->g, kind, level);
	r->g.page = p;
	for (size_t i = first; i < first + n && !st; i++) {
		const struct pdf_line *l = &pg->lines[i];
		int joined = 0;
		size_t keep = i + 1 < first + n ? pdf_dehyphen(pg, l, l + 1, &joined) : l->len;
		st = lp_gather_text(&r->g, pg->text + l->off, keep, r->d);
		if (!joined)
			lp_gather_space(&r->g);
	}
	return st ? st : lp_gather_end(&r->g, r->d);
}

static enum lp_status pdf_page_blocks(struct pdf_reader *r, struct pdf_page *pg, unsigned p)
{
	size_t idx[4], kept = 0, start = (size_t)-1, title_end = (size_t)-1;
	double right = 0;
	char key[PDF_KEY_LEN];
	struct pdf_line *prev = NULL;
	enum lp_status st = LP_OK;

	/* a page's outermost line at the top or the bottom goes when it
	 * runs through the document, the next one only after it; a page of
	 * one or two lines keeps them (it may be all the page says) */
	pdf_edge_lines(pg, idx);
	for (size_t i = 0; i < 4 && pg->n_lines > 2; i++) {
		struct pdf_line *l;
		if (idx[i] == (size_t)-1 || (i % 2 == 1 && !pg->lines[idx[i - 1]].drop))
			continue;
		l = &pg->lines[idx[i]];
		pdf_key_of(pg->text + l->off, l->len, key);
		l->drop = pdf_running(r, key);
	}
	/* a header that changes with the chapter ("Chapter 2: Copyright")
	 * is known by its place: set apart, in the band where most sampled
	 * pages have one */
	for (int top = 1; top >= 0 && r->sampled >= 4 && pg->n_lines > 2; top--) {
		size_t e = idx[top ? 0 : 2];
		unsigned *bands = top ? r->top_y : r->bottom_y;
		if (e == (size_t)-1 || pg->lines[e].drop)
			continue;
		if (bands[pdf_band(top ? pg->lines[e].y1 : pg->lines[e].y2)] < pdf_need(r) ||
		    !pdf_isolated(pg, e, top))
			continue;
		for (size_t i = 0; i < pg->n_lines; i++)
			if (pdf_same_row(&pg->lines[e], &pg->lines[i]))
				pg->lines[i].drop = 1;
	}
	if (r->n_marks && pdf_page_marked(r, (int)p)) {
		pdf_match_outline(r, pg, (int)p, 0);
		pdf_match_outline(r, pg, (int)p, 1);
	}
	/* the page's right margin: where most lines end */
	for (size_t i = 0; i < pg->n_lines; i++)
		if (!pg->lines[i].drop)
			right = fmax(right, pg->lines[i].x2);
	/* keep the lines that stay, packed, then cut them into paragraphs */
	for (size_t i = 0; i < pg->n_lines; i++)
		if (!pg->lines[i].drop)
			pg->lines[kept++] = pg->lines[i];
	pg->n_lines = kept;
	pdf_title_numbers(pg);
	/* an outline title is a block of its own, however its lines look */
	for (size_t i = 0; i < pg->n_lines && !st; i++) {
		struct pdf_line *l = &pg->lines[i];
		int in_title = title_end != (size_t)-1 && i < title_end;
		if (prev && (l->outline || i == title_end ||
			     (!in_title && !pdf_same_paragraph(pg, prev, l, right)))) {
			st = pdf_emit(r, pg, start, i - start, p);
			start = title_end = (size_t)-1;
		}
		if (start == (size_t)-1) {
			start = i;
			if (l->outline)
				title_end = i + l->outline_n;
		}
		prev = l;
	}
	if (!st && start != (size_t)-1)
		st = pdf_emit(r, pg, start, pg->n_lines - start, p);
	return st;
}

/* --- the document ------------------------------------------------------ */

/* The last `n` bytes `pat` in s[0, len), or NULL. */
static const char *pdf_last(const char *s, size_t len, const char *pat, size_t n)
{
	for (size_t i = len; i >= n; i--)
		if (!memcmp(s + i - n, pat, n))
			return s + i - n;
	return NULL;
}

/* Where a PDF that poppler cannot open is at fault, from its last KiB
 * (a PDF is read from its end: "startxref", the byte of its
 * cross-reference table, "%%EOF"): the byte in *off and what is wrong
 * there. Looks at nothing but those three tokens. */
static const char *pdf_damage(const char *bytes, size_t len, long long *off)
{
	size_t tail = len < 1024 ? len : 1024;
	const char *end = bytes + len - tail, *eof, *sx, *p;
	unsigned long long xref = 0;
	int digits = 0;

	*off = (long long)len;
	eof = pdf_last(end, tail, "%%EOF", 5);
	if (!eof)
		return "the file ends here, without the end-of-file marker (%EOF) "
		       "a whole PDF ends with";
	sx = pdf_last(end, (size_t)(eof - end), "startxref", 9);
	*off = (long long)(eof - bytes);
	if (!sx)
		return "no \"startxref\" before the end-of-file marker";
	for (p = sx + 9; p < eof && (*p == ' ' || *p == '\r' || *p == '\n' || *p == '\t'); p++)
		;
	for (; p < eof && isdigit((unsigned char)*p) && digits < 19; p++, digits++)
		xref = xref * 10 + (unsigned long long)(*p - '0');
	*off = (long long)(sx - bytes);
	if (!digits)
		return "\"startxref\" gives no byte for the cross-reference table";
	if (xref >= len)
		return "\"startxref\" names a cross-reference table past the end of "
		       "the file";
	*off = (long long)xref;
	return "the cross-reference table here cannot be read, nor the "
	       "objects found without it";
}

static enum lp_status pdf_open(struct pdf_reader *r, const char *bytes, size_t len)
{
	GBytes *gb = g_bytes_new_static(bytes, len);
	GError *err = NULL;
	enum lp_status st = LP_OK;

	r->doc = poppler_document_new_from_bytes(gb, NULL, &err);
	g_bytes_unref(gb); /* the document keeps its own reference */
	if (r->doc)
		return LP_OK;
	if (err && g_error_matches(err, POPPLER_ERROR, POPPLER_ERROR_ENCRYPTED))
		st = lp_diag_set(r->d, LP_E_INPUT, r->name, 0, 0,
				 "encrypted PDF: it needs a password to be read "
				 "(decrypt it first, e.g. qpdf --decrypt --password=...)");
	else {
		long long off;
		const char *why = pdf_damage(bytes, len, &off);
		st = lp_diag_set_offset(r->d, LP_E_INPUT, r->name, off,
					"not a readable PDF (damaged or truncated): %s (poppler: %s)", why,
					err && err->message ? err->message : "poppler cannot open it");
	}
	if (err)
		g_error_free(err);
	return st;
}

static enum lp_status pdf_read(struct pdf_reader *r)
{
	int n_pages = poppler_document_get_n_pages(r->doc);
	size_t text_pages = 0;
	enum lp_status st;

	if (n_pages <= 0)
		return lp_diag_set(r->d, LP_E_INPUT, r->name, 0, 0, "the PDF has no pages");
	if (n_pages > PDF_MAX_PAGES)
		return lp_diag_set(r->d, LP_E_INPUT, r->name, 0, 0,
				   "the PDF has %d pages; at most %d are read", n_pages,
				   PDF_MAX_PAGES);
	r->keys = lp_mem_calloc(LP_MEM_DOC, PDF_MAX_KEYS, sizeof(*r->keys), r->d);
	if (!r->keys)
		return LP_E_NOMEM;
	if ((st = pdf_sample(r, n_pages)) || (st = pdf_read_outline(r, n_pages)))
		return st;
	for (int p = 0; p < n_pages; p++) {
		struct pdf_page pg;
		if (!(st = pdf_load_page(r, p, &pg))) {
			text_pages += pg.n_lines > 0;
			st = pdf_page_blocks(r, &pg, (unsigned)p + 1);
		}
		pdf_page_release(&pg);
		if (st)
			return st;
	}
	if (!text_pages)
		return lp_diag_set(r->d, LP_E_INPUT, r->name, 0, 0,
				   "no text layer: run OCR first (%d page%s, none with text)",
				   n_pages, n_pages == 1 ? "" : "s");
	return LP_OK;
}

enum lp_status lp_read_pdf(const char *name, const char *bytes, size_t len,
			   struct lp_doc_sink *sink, struct lp_diag *d)
{
	struct pdf_reader *r;
	enum lp_status st;
	size_t doc_cost, charged = 0;

	/* readers take "%PDF-" anywhere in the first KiB */
	if (len < 8 || !memmem(bytes, len < 1024 ? len : 1024, "%PDF-", 5))
		return lp_diag_set(d, LP_E_INPUT, name, 0, 0,
				   "not a PDF: no %%PDF- header in its first KiB");
	r = lp_mem_calloc(LP_MEM_DOC, 1, sizeof(*r), d);
	if (!r)
		return LP_E_NOMEM;
	r->name = name;
	r->d = d;
	lp_gather_init(&r->g, sink);
	doc_cost = PDF_DOC_COST + (len < SIZE_MAX / PDF_DOC_COST_PER_BYTE ?
				   len * PDF_DOC_COST_PER_BYTE : SIZE_MAX / 2);
	st = pdf_charge(r, doc_cost, 0, &charged);
	if (!st)
		st = pdf_open(r, bytes, len);
	if (!st) {
		st = pdf_read(r);
		g_object_unref(r->doc);
	}
	lp_mem_unreserve(LP_MEM_DOC, charged);
	lp_gather_release(&r->g);
	lp_mem_free(r->keys);
	lp_mem_free(r->marks);
	lp_mem_free(r);
	return lp_gather_blame(d, name, st);
}

#else /* !LP_HAVE_POPPLER */

#include "doc/gather.h"

enum lp_status lp_read_pdf(const char *name, const char *bytes, size_t len,
			   struct lp_doc_sink *sink, struct lp_diag *d)
{
	(void)bytes;
	(void)len;
	(void)sink;
	return lp_gather_missing(d, name, "PDF", "libpoppler-glib-dev");
}

#endif
