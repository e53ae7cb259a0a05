#include "doc/textread.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include <utf8proc.h>

#include "core/hash.h"
#include "core/mem.h"
#include "core/table.h"
#include "core/utf8.h"
#include "doc/readers.h"
#include "doc/term.h"

/* One line of the input: bytes [s, e), its text from cs (after the
 * indentation), `indent` columns deep. */
struct line {
	size_t s, cs, e;
	unsigned indent;
	int blank;
};

static unsigned tab_stop(unsigned col)
{
	return (col / 8 + 1) * 8;
}

static void line_at(const char *t, size_t len, size_t pos, struct line *l)
{
	const char *nl;
	unsigned col = 0;
	size_t i = pos;

	/* a no-break space (U+00A0) indents as a space does */
	for (;;) {
		if (i < len && (t[i] == ' ' || t[i] == '\t')) {
			col = t[i] == '\t' ? tab_stop(col) : col + 1;
			i++;
		} else if (i + 1 < len && (unsigned char)t[i] == 0xC2 &&
			   (unsigned char)t[i + 1] == 0xA0) {
			col++;
			i += 2;
		} else {
			break;
		}
	}
	nl = memchr(t + i, '\n', len - i);
	l->s = pos;
	l->cs = i;
	l->e = nl ? (size_t)(nl - t) : len;
	l->indent = col;
	l->blank = 1;
	for (size_t k = i; k < l->e && l->blank; k++)
		l->blank = t[k] == ' ' || t[k] == '\t' || t[k] == '\r' || t[k] == '\f' ||
			   t[k] == '\v';
}

/* The code point at t[i] (or U+FFFD for a bad byte) and its length. */
static int char_at(const char *t, size_t len, size_t i, uint32_t *cp)
{
	int n;

	if ((unsigned char)t[i] < 0x80) {
		*cp = (unsigned char)t[i];
		return 1;
	}
	n = lp_utf8_decode((const unsigned char *)t + i, len - i, cp);
	if (!n) {
		*cp = 0xFFFD;
		return 1;
	}
	return n;
}

/* The start of the character that ends just before `i` (not before lo). */
static size_t char_before(const char *t, size_t lo, size_t i)
{
	size_t k = i - 1;

	while (k > lo && i - k < 4 && ((unsigned char)t[k] & 0xC0) == 0x80)
		k--;
	return k;
}

static int is_hyphen_cp(uint32_t cp)
{
	return cp == '-' || cp == 0x2010 || cp == 0x2011 || cp == 0x2212 || cp == 0xAD;
}

static int is_lower(uint32_t cp)
{
	return lp_utf8_is_alnum(cp) && !(cp >= '0' && cp <= '9') && lp_utf8_tolower(cp) == cp &&
	       !lp_utf8_is_cjk(cp);
}

/* A word broken at the end of line l, continued on `next`:
 * x = t[xs, xe) the word's part before the hyphen t[xe, he), y = t[ys, ye)
 * its part after. */
struct brk {
	size_t xs, xe, he, ys, ye;
	uint32_t hyphen;
	int after_hyphen; /* the part before is itself after a hyphen ("--no-") */
};

/* The characters a path or URL goes on with after a '/'. */
static int path_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '~' || c == '*';
}

/* A path or a slashed word broken after its '/' at t[k], the end of line
 * l ("/etc/cron.daily/" over "apt", "preload/" over "configuration"): a
 * text formatter wraps there as at a space. The break joins with the '/'
 * kept (b->hyphen '/'), when the line ends in a word and the next line
 * goes on with a path's characters; a command after a path ("# cd /tmp/"
 * over "# ls") does not. */
static int path_break(const char *t, size_t len, const struct line *l, const struct line *next,
		      size_t k, struct brk *b)
{
	if (k == l->cs || !(path_char(t[k - 1]) || t[k - 1] == '/' || t[k - 1] == ':') ||
	    !path_char(t[next->cs]))
		return 0;
	b->hyphen = '/';
	b->he = k + 1;
	b->xe = k;
	for (b->xs = k; b->xs > l->cs && t[b->xs - 1] != ' ' && t[b->xs - 1] != '\t'; b->xs--)
		;
	b->after_hyphen = 0;
	b->ys = b->ye = next->cs;
	while (b->ye < next->e && b->ye < len && t[b->ye] != ' ' && t[b->ye] != '\t')
		b->ye++;
	return 1;
}

static int find_break(const char *t, size_t len, const struct line *l, const struct line *next,
		      struct brk *b)
{
	size_t e = l->e, k;
	uint32_t cp;

	if (!next || next->blank || l->blank)
		return 0;
	while (e > l->cs && (t[e - 1] == ' ' || t[e - 1] == '\t'))
		e--;
	if (e == l->cs)
		return 0;
	k = char_before(t, l->cs, e);
	char_at(t, len, k, &cp);
	if (cp == '/')
		return path_break(t, len, l, next, k, b);
	if (!is_hyphen_cp(cp))
		return 0;
	b->hyphen = cp;
	b->he = e;
	b->xe = k;
	b->xs = k;
	while (b->xs > l->cs) {
		size_t p = char_before(t, l->cs, b->xs);

		char_at(t, len, p, &cp);
		if (!lp_utf8_is_alnum(cp))
			break;
		b->xs = p;
	}
	if (b->xs == b->xe)
		return 0;
	b->after_hyphen = 0;
	if (b->xs > l->cs) {
		char_at(t, len, char_before(t, l->cs, b->xs), &cp);
		b->after_hyphen = is_hyphen_cp(cp);
	}
	b->ys = b->ye = next->cs;
	while (b->ye < next->e) {
		int n = char_at(t, len, b->ye, &cp);

		if (!lp_utf8_is_alnum(cp))
			break;
		b->ye += (size_t)n;
	}
	return b->ye > b->ys;
}

/* The word list: candidate forms of the breaks, with how often each occurs
 * whole in the document. Keys: 'J' + joined word, 'C' + word-hyphen-word,
 * ASCII letters folded to lower case. */
struct wl_entry {
	uint64_t h; /* core/table.h: the key's hash, 0: an empty slot */
	size_t off; /* key in pool */
	size_t len;
	size_t count;
};

struct wordlist {
	struct lp_table v; /* of struct wl_entry */
	char *pool;
	size_t pool_len, pool_cap;
};

#define KEY_MAX 128

static uint64_t hash_key(const char *k, size_t n)
{
	uint64_t h = lp_hash_bytes(k, n, 0x776c);

	return h ? h : 1;
}

static void wl_init(struct wordlist *w)
{
	memset(w, 0, sizeof(*w));
	lp_table_init(&w->v, sizeof(struct wl_entry), 256, LP_MEM_DOC);
}

/* A key being looked up, and the pool that holds the entries' keys. */
struct wl_key {
	const struct wordlist *w;
	const char *k;
	size_t n;
};

static int wl_same(const void *slot, void *ctx)
{
	const struct wl_entry *e = slot;
	const struct wl_key *key = ctx;

	return e->len == key->n && !memcmp(key->w->pool + e->off, key->k, key->n);
}

/* The entry of k[0..n), or the empty slot where it would go; NULL before
 * the first key. */
static struct wl_entry *wl_slot(const struct wordlist *w, const char *k, size_t n)
{
	struct wl_key key = { w, k, n };

	return lp_table_find(&w->v, hash_key(k, n), wl_same, &key);
}

static struct wl_entry *wl_find(const struct wordlist *w, const char *k, size_t n)
{
	struct wl_entry *e = wl_slot(w, k, n);

	return e && e->h ? e : NULL;
}

static enum lp_status wl_add(struct wordlist *w, const char *k, size_t n, struct lp_diag *d)
{
	enum lp_status s;
	struct wl_entry *e;

	if (wl_find(w, k, n))
		return LP_OK;
	if (lp_table_needs_room(&w->v) && (s = lp_table_grow(&w->v, d)))
		return s;
	if (w->pool_len + n > w->pool_cap) {
		size_t cap = w->pool_cap ? 2 * w->pool_cap : 4096;
		char *p;

		while (cap < w->pool_len + n)
			cap *= 2;
		if (!(p = lp_mem_realloc(LP_MEM_DOC, w->pool, cap, d)))
			return LP_E_NOMEM;
		w->pool = p;
		w->pool_cap = cap;
	}
	memcpy(w->pool + w->pool_len, k, n);
	e = wl_slot(w, k, n);
	e->off = w->pool_len;
	e->len = n;
	e->count = 0;
	lp_table_put(&w->v, e, hash_key(k, n));
	w->pool_len += n;
	return LP_OK;
}

static void wl_free(struct wordlist *w)
{
	lp_table_release(&w->v);
	lp_mem_free(w->pool);
	w->pool = NULL;
	w->pool_len = w->pool_cap = 0;
}

/* Append t[s, e) folded (ASCII letters to lower case) to key; 0 when the
 * key would pass KEY_MAX. */
static int key_put(char *key, size_t *n, const char *t, size_t s, size_t e)
{
	if (*n + (e - s) > KEY_MAX)
		return 0;
	for (size_t i = s; i < e; i++)
		key[(*n)++] = (t[i] >= 'A' && t[i] <= 'Z') ? (char)(t[i] + 32) : t[i];
	return 1;
}

/* The two keys of a break; 0 when too long to look up. */
static int break_keys(const char *t, const struct brk *b, char *jk, size_t *jn, char *ck,
		      size_t *cn)
{
	*jn = *cn = 1;
	jk[0] = 'J';
	ck[0] = 'C';
	if (!key_put(jk, jn, t, b->xs, b->xe) || !key_put(jk, jn, t, b->ys, b->ye) ||
	    !key_put(ck, cn, t, b->xs, b->xe) || !key_put(ck, cn, "-", 0, 1) ||
	    !key_put(ck, cn, t, b->ys, b->ye))
		return 0;
	return 1;
}

enum { BREAK_JOIN = 1, BREAK_KEEP_HYPHEN = 2 };

static int decide(const struct wordlist *w, const char *t, size_t len, const struct brk *b)
{
	char jk[KEY_MAX + 1], ck[KEY_MAX + 1];
	size_t jn, cn, jc = 0, cc = 0;
	uint32_t last, first;

	if (b->hyphen == 0xAD)
		return BREAK_JOIN;
	if (b->hyphen == '/')
		return BREAK_KEEP_HYPHEN; /* the path's own '/' */
	if (break_keys(t, b, jk, &jn, ck, &cn)) {
		const struct wl_entry *je = wl_find(w, jk, jn), *ce = wl_find(w, ck, cn);

		jc = je ? je->count : 0;
		cc = ce ? ce->count : 0;
	}
	if (cc > jc)
		return BREAK_KEEP_HYPHEN;
	if (jc)
		return BREAK_JOIN;
	char_at(t, len, char_before(t, b->xs, b->xe), &last);
	char_at(t, len, b->ys, &first);
	if (b->hyphen == 0x2011 || b->after_hyphen || (last >= '0' && last <= '9') ||
	    !is_lower(first))
		return BREAK_KEEP_HYPHEN;
	return BREAK_JOIN;
}

/* Pass 1: the candidate keys of every break. */
static enum lp_status collect_breaks(const char *t, size_t len, struct wordlist *w,
				     struct lp_doc_sink *sink, struct lp_diag *d)
{
	struct line l, next;
	size_t pos = 0;
	enum lp_status s;

	if (!len)
		return LP_OK;
	line_at(t, len, 0, &l);
	while (l.e < len) {
		struct brk b;
		char jk[KEY_MAX + 1], ck[KEY_MAX + 1];
		size_t jn, cn;

		line_at(t, len, l.e + 1, &next);
		if (find_break(t, len, &l, &next, &b) && b.hyphen != '/' &&
		    break_keys(t, &b, jk, &jn, ck, &cn) &&
		    ((s = wl_add(w, jk, jn, d)) || (s = wl_add(w, ck, cn, d))))
			return s;
		l = next;
		if (l.s - pos >= ((size_t)1 << 20)) {
			lp_doc_sink_passed(sink, l.s);
			pos = l.s;
		}
	}
	lp_doc_sink_passed(sink, len);
	return LP_OK;
}

static void count_key(struct wordlist *w, char prefix, const char *t, size_t a, size_t ae,
		      size_t b, size_t be)
{
	char k[KEY_MAX + 1];
	size_t n = 1;
	struct wl_entry *e;

	k[0] = prefix;
	if (!key_put(k, &n, t, a, ae))
		return;
	if (b < be && (!key_put(k, &n, "-", 0, 1) || !key_put(k, &n, t, b, be)))
		return;
	if ((e = wl_find(w, k, n)))
		e->count++;
}

/* Pass 2: count the candidates where they occur whole: each piece of a
 * hyphenated token as a joined word, each pair of neighbouring pieces as a
 * compound. A line break ends a token, so the broken words do not count
 * themselves. */
static void count_words(const char *t, size_t len, struct wordlist *w, struct lp_doc_sink *sink)
{
	size_t i = 0, pos = 0, prev_s = 0, prev_e = 0, cur_s = 0;
	int in = 0;

	while (i <= len) {
		uint32_t cp = 0;
		int n = i < len ? char_at(t, len, i, &cp) : 1;
		int alnum = i < len && lp_utf8_is_alnum(cp);
		int hy = i < len && (cp == '-' || cp == 0x2010 || cp == 0x2011);

		if (alnum) {
			if (!in) {
				cur_s = i;
				in = 1;
			}
		} else if (in) {
			/* a piece t[cur_s, i) ends */
			count_key(w, 'J', t, cur_s, i, 0, 0);
			if (prev_e)
				count_key(w, 'C', t, prev_s, prev_e, cur_s, i);
			in = 0;
			if (hy && i + (size_t)n < len) {
				uint32_t nx;

				char_at(t, len, i + (size_t)n, &nx);
				if (lp_utf8_is_alnum(nx)) {
					prev_s = cur_s;
					prev_e = i;
					i += (size_t)n;
					continue;
				}
			}
			prev_e = 0;
		} else {
			prev_e = 0;
		}
		i += (size_t)n;
		if (i - pos >= ((size_t)1 << 20)) {
			lp_doc_sink_passed(sink, i);
			pos = i;
		}
	}
	lp_doc_sink_passed(sink, len);
}

/* Pass 3 state. */
struct reader {
	const char *t;
	size_t len;
	struct lp_doc_sink *sink;
	struct lp_textread_stats *st;
	struct wordlist *w;
	struct line *lines; /* the paragraph: [n] */
	size_t n;
	char *buf;          /* repaired text (tracked) */
	size_t buf_cap;
	long term_indent;   /* indentation of the open entry's term, -1: none */
};

static enum lp_status buf_put(struct reader *r, size_t *at, const char *p, size_t n,
			      struct lp_diag *d)
{
	if (*at + n > r->buf_cap) {
		size_t cap = r->buf_cap ? r->buf_cap : 4096;
		char *b;

		while (cap < *at + n)
			cap *= 2;
		if (!(b = lp_mem_realloc(LP_MEM_DOC, r->buf, cap, d)))
			return LP_E_NOMEM;
		r->buf = b;
		r->buf_cap = cap;
	}
	memcpy(r->buf + *at, p, n);
	*at += n;
	return LP_OK;
}

static int line_break_at(struct reader *r, size_t k, struct brk *b)
{
	return k + 1 < r->n && find_break(r->t, r->len, &r->lines[k], &r->lines[k + 1], b);
}

/* Hand over t[sb, eb), lines a..z of the paragraph, as one block: the
 * source's bytes when no break inside needs repair, else the repaired copy. */
static enum lp_status emit(struct reader *r, enum lp_block_kind kind, unsigned level, size_t a,
			   size_t sb, size_t z, size_t eb, struct lp_diag *d)
{
	struct lp_block_in in = { 0 };
	size_t from = sb, at = 0, nb = 0;
	struct brk b;
	enum lp_status s;

	in.kind = kind;
	in.level = level;
	in.src_off = sb;
	in.src_len = eb - sb;
	in.text = r->t + sb;
	in.len = eb - sb;
	for (size_t k = a; k < z && !nb; k++)
		nb += line_break_at(r, k, &b);
	if (nb && eb - sb <= LP_TEXTREAD_MAX_REPAIR) {
		nb = 0;
		for (size_t k = a; k <= z; k++) {
			size_t end = k == z ? eb : r->lines[k].e;

			if (k < z && line_break_at(r, k, &b)) {
				int how = decide(r->w, r->t, r->len, &b);

				if ((s = buf_put(r, &at, r->t + from,
						 (how == BREAK_JOIN ? b.xe : b.he) - from, d)))
					return s;
				from = r->lines[k + 1].cs;
				nb++;
				if (r->st)
					r->st->joined += how == BREAK_JOIN;
				continue;
			}
			if ((s = buf_put(r, &at, r->t + from, end - from, d)) ||
			    (k < z && (s = buf_put(r, &at, "\n", 1, d))))
				return s;
			if (k < z)
				from = r->lines[k + 1].s;
		}
		in.text = r->buf;
		in.len = at;
		if (r->st)
			r->st->breaks += nb;
	}
	if (r->st) {
		r->st->headings += kind == LP_BLOCK_HEADING;
		r->st->terms += kind == LP_BLOCK_DEF_TERM;
		r->st->paragraphs += kind == LP_BLOCK_PARAGRAPH;
	}
	return r->sink->block(r->sink, &in, d);
}

/* Words in t[s, e), and whether it ends like a sentence. */
static size_t words_in(const char *t, size_t s, size_t e)
{
	size_t n = 0;
	int in = 0;

	for (size_t i = s; i < e; i++) {
		int sp = t[i] == ' ' || t[i] == '\t';

		n += !sp && !in;
		in = !sp;
	}
	return n;
}

static size_t trim_end(const char *t, size_t s, size_t e)
{
	while (e > s && (t[e - 1] == ' ' || t[e - 1] == '\t'))
		e--;
	return e;
}

/* A man page's heading: see textread.h. Returns its level or 0. */
static unsigned heading_level(const struct reader *r, size_t i)
{
	const struct line *l = &r->lines[i];
	size_t e = trim_end(r->t, l->cs, l->e), upper = 0;

	if (e - l->cs > 60 || words_in(r->t, l->cs, e) > 8 || lp_term_ends_clause(r->t[e - 1]))
		return 0;
	if (l->indent == 0) {
		/* a name in quotes or with an identifier's marks ("'SHLVL'",
		 * "PROMPT_COMMAND", "-x") is an entry's term, not a heading */
		if (r->t[l->cs] == '-' || memchr(r->t + l->cs, '_', e - l->cs))
			return 0;
		for (size_t k = l->cs; k < e; k++) {
			if (r->t[k] >= 'a' && r->t[k] <= 'z')
				return 0;
			if (strchr("'`\"$=[<", r->t[k]))
				return 0;
			upper += r->t[k] >= 'A' && r->t[k] <= 'Z';
		}
		return upper >= 2 && (r->n == i + 1 || r->lines[i + 1].indent > 0) ? 1 : 0;
	}
	if (l->indent == 3 && i + 1 < r->n && r->lines[i + 1].indent > 3 &&
	    r->t[l->cs] >= 'A' && r->t[l->cs] <= 'Z')
		return 2;
	return 0;
}

/* A title centred on the page ("GNU GENERAL PUBLIC LICENSE", "Preamble",
 * as licences and plain-text books set them): the paragraph's first line,
 * indented CENTRED_MIN_INDENT columns or more, its middle within
 * CENTRED_SLACK of the middle of a CENTRED_WIDTH-column page, made of
 * words that start with a capital or a digit (short function words
 * aside) and no marks of code or commands. Returns 1 or 0. */
#define CENTRED_MIN_INDENT 10
#define CENTRED_WIDTH 72
#define CENTRED_SLACK 6
static int is_centred(const struct reader *r, size_t i)
{
	const struct line *l = &r->lines[i];
	size_t e = trim_end(r->t, l->cs, l->e), w = e - l->cs, words = 0;
	long mid2 = 2 * (long)l->indent + (long)w - CENTRED_WIDTH;

	if (l->indent < CENTRED_MIN_INDENT || w > 60 || lp_term_ends_clause(r->t[e - 1]) ||
	    mid2 > 2 * CENTRED_SLACK || mid2 < -2 * CENTRED_SLACK)
		return 0;
	for (size_t k = l->cs; k < e;) {
		size_t b = k;
		while (k < e && r->t[k] != ' ')
			k++;
		for (size_t c = b; c < k; c++)
			if (!isalnum((unsigned char)r->t[c]) && !strchr(",.:'&()", r->t[c]))
				return 0;
		if (k - b > 3 && !isupper((unsigned char)r->t[b]) && !isdigit((unsigned char)r->t[b]))
			return 0;
		words += k > b;
		while (k < e && r->t[k] == ' ')
			k++;
	}
	return words > 0;
}

/* An underlined heading ("3.2 Shell Commands" over "=================",
 * as info, reStructuredText and plain-text manuals write them): line i is
 * short and the line below is one mark repeated about as wide. Returns
 * the level ('*' 1, '=' 2, '-' 3, '.' or '~' 4) or 0. */
static unsigned underlined_level(const struct reader *r, size_t i)
{
	static const char marks[] = "*=-.~";
	const struct line *l = &r->lines[i], *u;
	size_t e, ue, w, uw;

	if (i + 1 >= r->n)
		return 0;
	u = &r->lines[i + 1];
	e = trim_end(r->t, l->cs, l->e);
	ue = trim_end(r->t, u->cs, u->e);
	if (e == l->cs || e - l->cs > 100 || ue - u->cs < 3 || u->indent != l->indent ||
	    !strchr(marks, r->t[u->cs]) || !r->t[u->cs])
		return 0;
	for (size_t k = u->cs; k < ue; k++)
		if (r->t[k] != r->t[u->cs])
			return 0;
	w = lp_utf8_count((const unsigned char *)r->t + l->cs, e - l->cs);
	uw = ue - u->cs;
	if (uw * 10 < w * 7 || uw > w + 4)
		return 0;
	return (unsigned)(strchr(marks, r->t[u->cs]) - marks) + 1 - (r->t[u->cs] == '~');
}

/* A numbered heading alone in its paragraph ("9.4.5. Listing open
 * files", "3.2 Shell Commands", as DocBook and texinfo render them to
 * text): a short line that starts with a section number of two parts or
 * more and does not end like a sentence. Returns the level (the number's
 * parts, at most 6) or 0. */
static unsigned numbered_level(const struct reader *r)
{
	const struct line *l = &r->lines[0];
	size_t e = trim_end(r->t, l->cs, l->e), k = l->cs;
	unsigned parts = 0;

	if (r->n != 1 || e - l->cs > 80 || lp_term_ends_clause(r->t[e - 1]) ||
	    lp_term_ends_cjk_clause(r->t + l->cs, e - l->cs))
		return 0;
	while (k < e && r->t[k] >= '0' && r->t[k] <= '9') {
		size_t d = k;

		while (k < e && r->t[k] >= '0' && r->t[k] <= '9')
			k++;
		if (k - d > 3)
			return 0;
		parts++;
		if (k < e && r->t[k] == '.')
			k++;
		else
			break;
	}
	/* "N.N" at least: "1. Unpack the file" is a numbered step */
	if (parts < 2 || k + 1 >= e)
		return 0;
	if (r->t[k] == ' ')
		k++;
	else if ((unsigned char)r->t[k] == 0xC2 && (unsigned char)r->t[k + 1] == 0xA0)
		k += 2; /* a no-break space */
	else
		return 0;
	if (k >= e || r->t[k] == ' ')
		return 0;
	return parts > 6 ? 6 : parts;
}

/* The column where line l's second cell starts (after a gap of two or
 * more columns, or a tab), 0 when it has one cell; *c1e: the first cell's
 * end. */
static unsigned second_col(const char *t, const struct line *l, size_t *c1e)
{
	unsigned col = l->indent;

	for (size_t i = l->cs; i < l->e;) {
		if (t[i] == ' ' || t[i] == '\t') {
			size_t g = i;
			unsigned gc = col;
			int tab = 0;

			while (i < l->e && (t[i] == ' ' || t[i] == '\t')) {
				tab |= t[i] == '\t';
				col = t[i] == '\t' ? tab_stop(col) : col + 1;
				i++;
			}
			if (i < l->e && (tab || col - gc >= 2)) {
				*c1e = g;
				return col;
			}
			continue;
		}
		col += ((unsigned char)t[i] & 0xC0) != 0x80;
		i++;
	}
	return 0;
}

static int is_border(const char *t, const struct line *l)
{
	size_t e = trim_end(t, l->cs, l->e);

	if (e == l->cs || (t[l->cs] != '+' && t[l->cs] != '|'))
		return 0;
	for (size_t k = l->cs; k < e; k++)
		if (!strchr("+-=|: ", t[k]))
			return 0;
	return memchr(t + l->cs, '-', e - l->cs) || memchr(t + l->cs, '=', e - l->cs);
}

static int is_pipe_row(const char *t, const struct line *l)
{
	return l->e > l->cs && t[l->cs] == '|' && memchr(t + l->cs + 1, '|', l->e - l->cs - 1);
}

#define MAX_CELLS 32

/* Append t[s, e) folded to single spaces to the row buffer. */
/* A word broken at the line end t[k] == '\n' inside t[lo, hi) (a cell
 * that wraps): BREAK_JOIN or BREAK_KEEP_HYPHEN with *b filled, else 0. */
static int fold_break(const struct reader *r, size_t lo, size_t k, size_t hi, struct brk *b)
{
	struct line l = { lo, lo, k, 0, 0 }, next = { k + 1, k + 1, k + 1, 0, 0 };

	while (next.cs < hi && (r->t[next.cs] == ' ' || r->t[next.cs] == '\t'))
		next.cs++;
	if (next.cs >= hi || r->t[next.cs] == '\n')
		return 0;
	for (next.e = next.cs; next.e < hi && r->t[next.e] != '\n'; next.e++)
		;
	if (!find_break(r->t, r->len, &l, &next, b))
		return 0;
	return decide(r->w, r->t, r->len, b);
}

static enum lp_status put_folded(struct reader *r, size_t *at, size_t s, size_t e,
				 struct lp_diag *d)
{
	size_t start = *at;
	int space = 0, how;
	struct brk b;
	enum lp_status st;

	for (size_t k = s; k < e; k++) {
		char c = r->t[k];

		if (c == '\n' && *at > start && (how = fold_break(r, s, k, e, &b))) {
			/* a word broken here: joined, or its hyphen kept, with no space */
			if (how == BREAK_JOIN)
				*at -= b.he - b.xe;
			if (r->st) {
				r->st->breaks++;
				r->st->joined += how == BREAK_JOIN;
			}
			k = b.ys - 1;
			space = 0;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n') {
			space = *at > start;
			continue;
		}
		if (space && (st = buf_put(r, at, " ", 1, d)))
			return st;
		space = 0;
		if ((st = buf_put(r, at, &c, 1, d)))
			return st;
	}
	return LP_OK;
}

/* Hand over the row whose nc cells are r->buf at offs[c], lens[c] bytes
 * each (at bytes in all), from source bytes sb..eb. */
static enum lp_status hand_row(struct reader *r, const size_t *offs, const size_t *lens, size_t nc,
			       size_t at, int header, size_t sb, size_t eb, struct lp_diag *d)
{
	const char *cells[MAX_CELLS];
	struct lp_block_in in = { 0 };

	for (size_t c = 0; c < nc; c++)
		cells[c] = r->buf + offs[c];
	in.kind = LP_BLOCK_TABLE_ROW;
	in.text = r->buf;
	in.len = at;
	in.cells = cells;
	in.cell_lens = lens;
	in.n_cells = nc;
	in.header = header;
	in.src_off = sb;
	in.src_len = eb - sb;
	if (r->st)
		r->st->rows++;
	return r->sink->block(r->sink, &in, d);
}

/* Emit one table row from cell ranges [cs[i], ce[i]) of the source
 * (bytes sb..eb of it), cells folded. */
static enum lp_status emit_row(struct reader *r, const size_t *cs, const size_t *ce, size_t nc,
			       int header, size_t sb, size_t eb, struct lp_diag *d)
{
	size_t lens[MAX_CELLS], offs[MAX_CELLS], at = 0;
	enum lp_status s;

	for (size_t c = 0; c < nc; c++) {
		offs[c] = at;
		if ((s = put_folded(r, &at, cs[c], ce[c], d)))
			return s;
		lens[c] = at - offs[c];
	}
	return hand_row(r, offs, lens, nc, at, header, sb, eb, d);
}

/* The cells of pipe row l ("|a  |b  |"): ranges [cs[i], ce[i]) between
 * its bars, the space after the last bar not a cell. Returns how many. */
static size_t pipe_cells(const char *t, const struct line *l, size_t *cs, size_t *ce)
{
	size_t nc = 0, p = l->cs + 1;

	while (p < l->e && nc < MAX_CELLS) {
		const char *bar = memchr(t + p, '|', l->e - p);
		size_t q = bar ? (size_t)(bar - t) : l->e;

		if (!bar && trim_end(t, p, q) == p)
			break;
		cs[nc] = p;
		ce[nc] = q;
		nc++;
		p = q + 1;
	}
	return nc;
}

/* Append the cell part t[s, e) (one line's piece of a cell that wraps over
 * several lines of a grid row) to the cell that starts at `start` of the
 * row buffer, where the part before it, t[ps, pe), ended: a word broken
 * there is repaired as in prose, two Han characters meet with no space
 * (Chinese does not space its words), anything else with one. */
static enum lp_status put_cell_part(struct reader *r, size_t *at, size_t start, size_t ps,
				    size_t pe, size_t s, size_t e, struct lp_diag *d)
{
	struct line l = { ps, ps, pe, 0, 0 }, next = { s, s, e, 0, 0 };
	struct brk b;
	uint32_t last = 0, first = 0;
	int how = 0;
	enum lp_status st;

	if (*at > start) {
		if (find_break(r->t, r->len, &l, &next, &b) &&
		    (how = decide(r->w, r->t, r->len, &b))) {
			if (how == BREAK_JOIN)
				*at -= b.he - b.xe;
			if (r->st) {
				r->st->breaks++;
				r->st->joined += how == BREAK_JOIN;
			}
		} else {
			char_at(r->t, r->len, char_before(r->t, ps, pe), &last);
			char_at(r->t, r->len, s, &first);
			if (!(lp_utf8_is_cjk(last) && lp_utf8_is_cjk(first)) &&
			    (st = buf_put(r, at, " ", 1, d)))
				return st;
		}
	}
	return put_folded(r, at, s, e, d);
}

/* The columns of a grid's cells, from one of its inner borders
 * ("|------+-----|"): the display column (from the border's first
 * character) of each bar or '+' that ends a cell, the right edge last. */
struct grid {
	unsigned ends[MAX_CELLS];
	size_t n;
};

static void grid_of_border(const char *t, const struct line *l, struct grid *g)
{
	size_t e = trim_end(t, l->cs, l->e);

	g->n = 0;
	for (size_t k = l->cs + 1; k < e && g->n < MAX_CELLS; k++)
		if (t[k] == '+' || t[k] == '|')
			g->ends[g->n++] = (unsigned)(k - l->cs);
}

/* The cells of row line l cut at the grid's columns: a bar inside a cell
 * ("[{a|mx|any}]") is text. Characters are as wide as a terminal shows
 * them (a Han character two columns). Returns the cells found, g->n when
 * the line's bars fall on the grid. */
static size_t grid_cells(const char *t, size_t len, const struct line *l, const struct grid *g,
			 size_t *cs, size_t *ce)
{
	size_t nc = 0, start = l->cs + 1;
	unsigned col = 1;

	for (size_t k = l->cs + 1; k < l->e && nc < g->n;) {
		uint32_t cp;
		int n = char_at(t, len, k, &cp), w;

		if (cp == '|' && col == g->ends[nc]) {
			cs[nc] = start;
			ce[nc] = k;
			nc++;
			start = k + 1;
		}
		w = utf8proc_charwidth((utf8proc_int32_t)cp);
		col += w > 0 ? (unsigned)w : (cp == '\t' ? 1 : 0);
		k += (size_t)n;
	}
	return nc;
}

/* Row line l's cells in grid g: its bars when they make as many cells,
 * else its bars at the grid's columns. Returns g->n, or 0 when neither
 * fits. */
static size_t row_cells(const struct reader *r, const struct line *l, const struct grid *g,
			size_t *cs, size_t *ce)
{
	if (pipe_cells(r->t, l, cs, ce) == g->n || grid_cells(r->t, r->len, l, g, cs, ce) == g->n)
		return g->n;
	return 0;
}

/* Emit one row of a grid table: lines a..z (no border among them, each
 * cut into g's cells by row_cells), cell by cell, each cell's parts
 * joined (put_cell_part). */
static enum lp_status emit_grid_row(struct reader *r, size_t a, size_t z, const struct grid *g,
				    int header, struct lp_diag *d)
{
	size_t lens[MAX_CELLS], offs[MAX_CELLS], at = 0, nc = g->n;
	enum lp_status s;

	for (size_t c = 0; c < nc; c++) {
		size_t ps = 0, pe = 0;

		offs[c] = at;
		for (size_t k = a; k <= z; k++) {
			size_t cs[MAX_CELLS], ce[MAX_CELLS], lo, hi;

			row_cells(r, &r->lines[k], g, cs, ce);
			for (lo = cs[c]; lo < ce[c] && (r->t[lo] == ' ' || r->t[lo] == '\t'); lo++)
				;
			if ((hi = trim_end(r->t, lo, ce[c])) == lo)
				continue;
			if ((s = put_cell_part(r, &at, offs[c], ps, pe, lo, hi, d)))
				return s;
			ps = lo;
			pe = hi;
		}
		lens[c] = at - offs[c];
	}
	return hand_row(r, offs, lens, nc, at, header, r->lines[a].s, r->lines[z].e, d);
}

/* Lines i..j-1 of an ASCII table are a grid when a border separates
 * every row from the next and some row wraps over several lines ("|route
 * -n |display all the routing table in |" over "|  |numerical addresses
 * |"): three or more groups of row lines between borders, one of them of
 * two lines or more. *g gets the cells' columns from the first inner
 * border. A table ruled only under its header has one line a row. */
static int is_grid(const struct reader *r, size_t i, size_t j, struct grid *g)
{
	size_t groups = 0, tall = 0, run = 0;

	g->n = 0;
	for (size_t k = i; k <= j; k++) {
		const struct line *l = &r->lines[k];

		if (k == j || is_border(r->t, l)) {
			if (k < j && !g->n && groups)
				grid_of_border(r->t, l, g);
			groups += run > 0;
			tall += run > 1;
			run = 0;
			continue;
		}
		run++;
	}
	return groups >= 3 && tall > 0 && g->n > 0;
}

/* An ASCII table from line i: rows between '|', borders dropped; in a
 * grid (is_grid) the lines between two borders are one row. Sets *taken
 * to the lines it takes (0: none here); `probe`: only that. */
static enum lp_status pipe_table(struct reader *r, size_t i, int probe, size_t *taken,
				 struct lp_diag *d)
{
	size_t j = i, rows = 0;
	struct grid g;
	int grid;
	enum lp_status s;

	*taken = 0;
	while (j < r->n && (is_border(r->t, &r->lines[j]) || is_pipe_row(r->t, &r->lines[j]))) {
		rows += is_pipe_row(r->t, &r->lines[j]) && !is_border(r->t, &r->lines[j]);
		j++;
	}
	if (rows < 2 && !(rows == 1 && j - i >= 3))
		return LP_OK;
	grid = !probe && is_grid(r, i, j, &g);
	for (size_t k = i, first = 1; !probe && k < j; k++) {
		const struct line *l = &r->lines[k];
		size_t cs[MAX_CELLS], ce[MAX_CELLS], nc, z = k;

		if (!is_pipe_row(r->t, l) || is_border(r->t, l))
			continue; /* "|-----+-----|" is a rule, not a row */
		if (grid) /* the row's lines, when each is cut into the grid's cells */
			for (size_t y = k; y < j && !is_border(r->t, &r->lines[y]) &&
					   row_cells(r, &r->lines[y], &g, cs, ce);
			     y++)
				z = y;
		nc = pipe_cells(r->t, l, cs, ce);
		s = z > k ? emit_grid_row(r, k, z, &g, first && z + 1 < j, d)
			  : emit_row(r, cs, ce, nc, first && k + 1 < j && is_border(r->t, l + 1),
				     l->s, l->e, d);
		if (s)
			return s;
		first = 0;
		k = z;
	}
	*taken = j - i;
	return LP_OK;
}

/* Cells of a columnar line: split at gaps of two or more columns. */
static size_t split_cells(const char *t, const struct line *l, size_t *cs, size_t *ce)
{
	size_t nc = 0, p = l->cs, e = trim_end(t, l->cs, l->e);

	while (p < e && nc < MAX_CELLS) {
		size_t q = p, gap_at = e;

		while (q < e) {
			if (t[q] == '\t' || (t[q] == ' ' && q + 1 < e && (t[q + 1] == ' ' ||
									   t[q + 1] == '\t'))) {
				gap_at = q;
				break;
			}
			q++;
		}
		if (nc == MAX_CELLS - 1)
			gap_at = e;
		cs[nc] = p;
		ce[nc] = gap_at;
		nc++;
		p = gap_at;
		while (p < e && (t[p] == ' ' || t[p] == '\t'))
			p++;
	}
	return nc;
}

/* Two columns whose second holds sentences ("-x  Print commands and
 * their arguments as they are executed.") are a definition list whose
 * bodies fit on a line, not a table: the rows' last lines end with '.'. */
static int bodies_are_sentences(const struct reader *r, size_t i, size_t j, unsigned c)
{
	size_t ends = 0, rows = 0;

	for (size_t k = i; k < j; k++) {
		size_t e;

		if (k + 1 < j && r->lines[k + 1].indent == c)
			continue; /* a continuation follows */
		e = trim_end(r->t, r->lines[k].cs, r->lines[k].e);
		rows++;
		ends += r->t[e - 1] == '.';
	}
	return ends * 2 > rows;
}

/* A row of such a list: its term, then its body. */
static enum lp_status emit_def_row(struct reader *r, const size_t *cs, const size_t *ce,
				   size_t sb, size_t eb, struct lp_diag *d)
{
	size_t a = 0, z;
	enum lp_status s;

	while (a < r->n && r->lines[a].e < sb)
		a++;
	for (z = a; z + 1 < r->n && r->lines[z].e < eb; z++)
		;
	if ((s = emit(r, LP_BLOCK_DEF_TERM, 0, a, cs[0], a, ce[0], d)))
		return s;
	return emit(r, LP_BLOCK_DEF_BODY, 0, a, cs[1], z, eb, d);
}

/* The start columns of line l's cells (as split_cells cuts them) into
 * cols[MAX_CELLS]; returns how many. */
static size_t cell_cols(const char *t, const struct line *l, unsigned *cols)
{
	size_t nc = 0, e = trim_end(t, l->cs, l->e);
	unsigned col = l->indent;
	int gap = 1;

	for (size_t i = l->cs; i < e && nc < MAX_CELLS;) {
		if (t[i] == '\t' || (t[i] == ' ' && i + 1 < e && (t[i + 1] == ' ' || t[i + 1] == '\t'))) {
			while (i < e && (t[i] == ' ' || t[i] == '\t')) {
				col = t[i] == '\t' ? tab_stop(col) : col + 1;
				i++;
			}
			gap = 1;
			continue;
		}
		if (gap)
			cols[nc++] = col;
		gap = 0;
		col += ((unsigned char)t[i] & 0xC0) != 0x80;
		i++;
	}
	return nc;
}

/* An option summary or aligned table from line i (see textread.h): rows
 * whose cells start at the same columns (justified prose has gaps too,
 * but not aligned from line to line); as pipe_table. */
static enum lp_status column_table(struct reader *r, size_t i, int probe, size_t *taken,
				   struct lp_diag *d)
{
	const struct line *L = r->lines;
	size_t c1e, j, rows = 1, dashes, nsig;
	int defs;
	unsigned c = second_col(r->t, &L[i], &c1e), sig[MAX_CELLS], cols[MAX_CELLS];
	enum lp_status s;

	*taken = 0;
	if (!c || c - L[i].indent > 40 || words_in(r->t, L[i].cs, c1e) > 4)
		return LP_OK;
	nsig = cell_cols(r->t, &L[i], sig);
	dashes = r->t[L[i].cs] == '-';
	for (j = i + 1; j < r->n; j++) {
		size_t e1;
		unsigned c2 = second_col(r->t, &L[j], &e1);

		if (c2 == c && L[j].indent == L[i].indent && words_in(r->t, L[j].cs, e1) <= 4 &&
		    cell_cols(r->t, &L[j], cols) == nsig && !memcmp(cols, sig, nsig * sizeof(*sig))) {
			rows++;
			dashes += r->t[L[j].cs] == '-';
		} else if (L[j].indent != c) {
			break;
		}
	}
	if (rows < 3 && !(rows == 2 && dashes == 2))
		return LP_OK;
	defs = nsig == 2 && !probe && bodies_are_sentences(r, i, j, c);
	for (size_t k = i; !probe && k < j;) {
		size_t cs[MAX_CELLS], ce[MAX_CELLS], nc = split_cells(r->t, &L[k], cs, ce);
		size_t z = k + 1;

		/* continuation lines at the second column add to the last cell */
		while (z < j && L[z].indent == c && second_col(r->t, &L[z], &c1e) != c)
			z++;
		if (z > k + 1)
			ce[nc - 1] = L[z - 1].e;
		if ((s = defs ? emit_def_row(r, cs, ce, L[k].s, L[z - 1].e, d)
			      : emit_row(r, cs, ce, nc, 0, L[k].s, L[z - 1].e, d)))
			return s;
		k = z;
	}
	*taken = j - i;
	return LP_OK;
}

static int is_list_marker(const char *t, size_t s, size_t e)
{
	if (e - s == 1)
		return strchr("*-+o", t[s]) != NULL;
	if (e - s == 3 && !memcmp(t + s, "\xE2\x80\xA2", 3)) /* • */
		return 1;
	for (size_t k = s; k + 1 < e; k++)
		if (t[k] < '0' || t[k] > '9')
			return 0;
	return e - s >= 2 && (t[e - 1] == '.' || t[e - 1] == ')');
}

/* Is t[s, e) letters and spaces only? */
static int plain_words(const char *t, size_t s, size_t e)
{
	for (size_t i = s; i < e; i++)
		if (!isalpha((unsigned char)t[i]) && t[i] != ' ')
			return 0;
	return 1;
}

/* A definition entry starting at line i; returns 1 and where the term ends
 * and the body starts (bytes, and the body's first line). */
static int term_at(const struct reader *r, size_t i, size_t *te, size_t *bs, size_t *bl)
{
	const struct line *l = &r->lines[i], *n = i + 1 < r->n ? &r->lines[i + 1] : NULL;
	size_t e = trim_end(r->t, l->cs, l->e);
	unsigned col = l->indent;

	if (!n || n->indent <= l->indent || e == l->cs)
		return 0;
	/* the term alone on its line, the body below it */
	if (n->indent >= l->indent + 2 &&
	    lp_term_fits(r->t + l->cs, e - l->cs, words_in(r->t, l->cs, e))) {
		*te = e;
		*bs = n->s;
		*bl = i + 1;
		if (n->cs < n->e)
			*bs = n->cs;
		return 1;
	}
	/* a hanging term: the body starts on its line, at the column below */
	for (size_t k = l->cs; k < l->e; k++) {
		if (col == n->indent) {
			size_t tend = trim_end(r->t, l->cs, k);

			if (r->t[k] == ' ' || r->t[k] == '\t' || tend == k || tend == l->cs)
				return 0;
			/* two spaces or a tab set a hanging term off its body; one
			 * space does so for a name ("--help Print ..."), not for
			 * a plain word, which starts a sentence ("When Bash starts
			 * ..." over an indented example) */
			if (tend - l->cs > 32 || words_in(r->t, l->cs, tend) > 3 ||
			    lp_term_ends_clause(r->t[tend - 1]) ||
			    (k - tend < 2 && r->t[tend] != '\t' && plain_words(r->t, l->cs, tend)))
				return 0;
			*te = tend;
			*bs = k;
			*bl = i;
			return 1;
		}
		if (col > n->indent)
			return 0;
		col = r->t[k] == '\t' ? tab_stop(col)
				      : col + (((unsigned char)r->t[k] & 0xC0) != 0x80);
	}
	return 0;
}

/* Line k starts an entry inside the body above it (an option of a
 * builtin): a term after a line that ends a sentence. */
static int nested_term(const struct reader *r, size_t k)
{
	const struct line *p = &r->lines[k - 1];
	size_t e = trim_end(r->t, p->cs, p->e), te, bs, bl;

	return e > p->cs && (r->t[e - 1] == '.' || r->t[e - 1] == ':') &&
	       term_at(r, k, &te, &bs, &bl);
}

/* The paragraph in r->lines, after its heading (from line i). */
static enum lp_status paragraph(struct reader *r, size_t i, struct lp_diag *d)
{
	const struct line *L = r->lines;
	enum lp_status s;
	size_t taken, te, bs, bl;

	if (r->term_indent >= 0 && (long)L[i].indent <= r->term_indent)
		r->term_indent = -1;
	while (i < r->n) {
		size_t j;

		if ((s = pipe_table(r, i, 0, &taken, d)) ||
		    (!taken && (s = column_table(r, i, 0, &taken, d))))
			return s;
		if (taken) {
			i += taken;
			continue;
		}
		if (term_at(r, i, &te, &bs, &bl)) {
			size_t z = bl;

			while (z + 1 < r->n && L[z + 1].indent > L[i].indent &&
			       !nested_term(r, z + 1))
				z++;
			if (is_list_marker(r->t, L[i].cs, te))
				s = emit(r, LP_BLOCK_LIST_ITEM, 1, i, L[i].cs, z, L[z].e, d);
			else if (!(s = emit(r, LP_BLOCK_DEF_TERM, 0, i, L[i].cs, i, te, d)))
				s = emit(r, LP_BLOCK_DEF_BODY, 0, bl, bs, z, L[z].e, d);
			if (s)
				return s;
			if (!is_list_marker(r->t, L[i].cs, te))
				r->term_indent = L[i].indent;
			i = z + 1;
			continue;
		}
		/* prose up to where a table or an entry starts */
		for (j = i + 1; j < r->n; j++) {
			if (nested_term(r, j))
				break;
			pipe_table(r, j, 1, &taken, d);
			if (!taken)
				column_table(r, j, 1, &taken, d);
			if (taken)
				break;
		}
		if ((s = emit(r, r->term_indent >= 0 && (long)L[i].indent > r->term_indent
					 ? LP_BLOCK_DEF_BODY : LP_BLOCK_PARAGRAPH,
			      0, i, L[i].cs, j - 1, L[j - 1].e, d)))
			return s;
		i = j;
	}
	return LP_OK;
}

/* Whether line l is an info manual's node line: "File: NAME," then
 * "Node: " before the line's end. */
static int is_info_node(const char *t, const struct line *l)
{
	static const char file[] = "File: ", node[] = "Node: ";
	size_t n = l->e - l->cs, k = sizeof(file) - 1;

	if (l->indent || n < k + sizeof(node) || memcmp(t + l->cs, file, k))
		return 0;
	while (k < n && t[l->cs + k] != ',' && t[l->cs + k] != ' ')
		k++;
	if (k >= n || t[l->cs + k] != ',')
		return 0;
	for (k++; k < n && t[l->cs + k] == ' '; k++)
		;
	return n - k >= sizeof(node) - 1 && !memcmp(t + l->cs + k, node, sizeof(node) - 1);
}

/* The paragraph gathered in r->lines: its heading, then the rest. */
static enum lp_status flush_paragraph(struct reader *r, struct lp_diag *d)
{
	unsigned lv;
	size_t i = 0;
	enum lp_status s;

	if (!r->n)
		return LP_OK;
	if (r->n == 1 && is_info_node(r->t, &r->lines[0])) {
		r->n = 0; /* navigation, not text */
		return LP_OK;
	}
	/* a man page's heading, a numbered one, a centred title, or one over
	 * its underline */
	if ((lv = heading_level(r, 0)) || (lv = numbered_level(r)) || (lv = is_centred(r, 0)))
		i = 1;
	else if ((lv = underlined_level(r, 0)))
		i = 2;
	if (lv) {
		size_t e = trim_end(r->t, r->lines[0].cs, r->lines[0].e);

		if ((s = emit(r, LP_BLOCK_HEADING, lv, 0, r->lines[0].cs, 0, e, d)))
			return s;
		r->term_indent = -1;
	}
	s = i < r->n ? paragraph(r, i, d) : LP_OK;
	r->n = 0;
	return s;
}

static enum lp_status read_blocks(struct reader *r, struct lp_diag *d)
{
	size_t pos = 0, passed = 0;
	enum lp_status s;

	r->lines = lp_mem_alloc(LP_MEM_DOC, LP_TEXTREAD_MAX_LINES * sizeof(*r->lines), d);
	if (!r->lines)
		return LP_E_NOMEM;
	while (pos < r->len) {
		struct line l;

		line_at(r->t, r->len, pos, &l);
		if (l.blank || r->n == LP_TEXTREAD_MAX_LINES) {
			if ((s = flush_paragraph(r, d)))
				return s;
		}
		if (!l.blank)
			r->lines[r->n++] = l;
		pos = l.e + 1;
		if (!r->n && pos - passed >= ((size_t)1 << 20)) {
			lp_doc_sink_passed(r->sink, pos);
			passed = pos;
		}
	}
	return flush_paragraph(r, d);
}

enum lp_status lp_textread_run(const char *name, const char *bytes, size_t len,
			       struct lp_doc_sink *sink, struct lp_textread_stats *stats,
			       struct lp_diag *d)
{
	struct wordlist w;
	struct reader r = { 0 };
	enum lp_status s;

	(void)name;
	wl_init(&w);
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if ((s = collect_breaks(bytes, len, &w, sink, d)))
		goto out;
	if (w.v.n)
		count_words(bytes, len, &w, sink);
	r.t = bytes;
	r.len = len;
	r.sink = sink;
	r.st = stats;
	r.w = &w;
	r.term_indent = -1;
	s = read_blocks(&r, d);
out:
	lp_mem_free(r.lines);
	lp_mem_free(r.buf);
	wl_free(&w);
	return s;
}

enum lp_status lp_read_text(const char *name, const char *bytes, size_t len,
			    struct lp_doc_sink *sink, struct lp_diag *d)
{
	return lp_textread_run(name, bytes, len, sink, NULL, d);
}

size_t lp_textread_count_breaks(const char *text, size_t len)
{
	struct line l, next;
	size_t n = 0;

	if (!len)
		return 0;
	line_at(text, len, 0, &l);
	while (l.e < len) {
		struct brk b;

		line_at(text, len, l.e + 1, &next);
		n += find_break(text, len, &l, &next, &b);
		l = next;
	}
	return n;
}
