#include "text/ground.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "core/mem.h"
#include "core/utf8.h"
#include "text/match.h"
#include "text/scan.h"

#define QUOTE_MAX_WORDS 8

const char *lp_ground_kind_name(enum lp_ground_kind k)
{
	static const char *const names[] = { "number", "option", "path", "identifier",
					     "quoted" };

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

/* ---- finding the tokens -------------------------------------------- */

static int is_ascii_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_ascii_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_ascii_word(int c)
{
	return is_ascii_alpha(c) || is_ascii_digit(c) || c == '_';
}

/* Printable ASCII other than a space: what a path or an option is made of. */
static int is_ascii_graph(unsigned char c)
{
	return c > 0x20 && c < 0x7F;
}

struct sink {
	struct lp_ground_token *out;
	size_t cap, n;
};

static void emit(struct sink *s, size_t off, size_t len, enum lp_ground_kind k)
{
	if (len > LP_GROUND_MAX_TOKEN)
		return;
	if (s->n < s->cap) {
		s->out[s->n].off = off;
		s->out[s->n].len = len;
		s->out[s->n].kind = k;
	}
	s->n++;
}

/* A path in run[0..n), trailing punctuation already trimmed. */
static int is_path(const char *r, size_t n)
{
	size_t slashes = 0, letters = 0;

	for (size_t i = 0; i < n; i++) {
		slashes += r[i] == '/';
		letters += is_ascii_alpha((unsigned char)r[i]);
	}
	if (!slashes || !letters)
		return 0;
	if (r[0] == '/' || (n > 1 && r[0] == '~' && r[1] == '/') ||
	    (n > 1 && r[0] == '.' && r[1] == '/') || (n > 2 && !memcmp(r, "../", 3)))
		return 1;
	return slashes >= 2 || memmem(r, n, "://", 3) != NULL;
}

/* Length of the option at r[0..n) ("--name", "-x"), 0 if none. */
static size_t option_len(const char *r, size_t n)
{
	size_t i = 0, j;

	while (i < n && i < 2 && r[i] == '-')
		i++;
	if (!i || i >= n || !is_ascii_alpha((unsigned char)r[i]))
		return 0;
	for (j = i; j < n && (is_ascii_word((unsigned char)r[j]) || r[j] == '-'); j++)
		;
	while (j > i && r[j - 1] == '-')
		j--;
	return j;
}

static int is_word_cp(uint32_t cp);

/* Is the code point before byte i (after: 0), or at it (after: 1), a
 * letter or digit outside CJK? */
static int glued_letter(const char *t, size_t len, size_t i, int after)
{
	uint32_t cp;
	size_t j = i;

	if (!after) {
		while (j > 0 && i - j < 4) {
			j--;
			if (((unsigned char)t[j] & 0xC0) != 0x80)
				break;
		}
	}
	if (lp_utf8_decode((const unsigned char *)t + j, after ? len - j : i - j, &cp) <= 0)
		return 0;
	return is_word_cp(cp);
}

/* Paths and options: runs of printable ASCII. Each claimed range is marked
 * in `claimed` (a bitmap over the text's bytes is too much for a long
 * output, so the ranges are returned in order instead). */
struct range {
	size_t off, end;
};

static size_t ascii_runs(const char *t, size_t len, struct sink *s, struct range *claimed,
			 size_t cap_claimed)
{
	static const char lead[] = "([{<\"'`";
	static const char trail[] = ".,;:!?)]}>\"'`";
	size_t i = 0, n_claimed = 0;

	while (i < len) {
		size_t a, b, opt;
		while (i < len && !is_ascii_graph((unsigned char)t[i]))
			i++;
		a = i;
		while (i < len && is_ascii_graph((unsigned char)t[i]))
			i++;
		b = i;
		/* glued to a letter that is not ASCII (but not CJK, which has no
		 * spaces): part of a longer word, not a path or an option */
		if ((a > 0 && glued_letter(t, len, a, 0)) || (b < len && glued_letter(t, len, b, 1)))
			continue;
		while (a < b && strchr(lead, t[a]))
			a++;
		while (b > a && strchr(trail, t[b - 1]))
			b--;
		if (a >= b)
			continue;
		if (is_path(t + a, b - a)) {
			emit(s, a, b - a, LP_GROUND_PATH);
		} else if ((opt = option_len(t + a, b - a))) {
			emit(s, a, opt, LP_GROUND_OPTION);
			b = a + opt;
		} else {
			continue;
		}
		if (n_claimed < cap_claimed) {
			claimed[n_claimed].off = a;
			claimed[n_claimed].end = b;
		}
		n_claimed++;
	}
	return n_claimed;
}

/* Is a word a code identifier (see ground.h)? */
static int is_ident(const char *w, size_t n)
{
	size_t upper = 0, lower = 0, digits = 0, dots = 0, longest_part = 0, part = 0;
	int camel = 0, under = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)w[i];
		if (c >= 'A' && c <= 'Z') {
			upper++;
			if (i && w[i - 1] >= 'a' && w[i - 1] <= 'z')
				camel = 1;
		} else if ((c >= 'a' && c <= 'z') || c >= 0x80) {
			lower++;
		}
		digits += is_ascii_digit(c);
		under |= c == '_';
		if (c == '.') {
			dots++;
			part = 0;
		} else if (++part > longest_part) {
			longest_part = part;
		}
	}
	if (under || camel)
		return 1;
	if (digits && (upper || lower))
		return 1;
	if (upper >= 2 && !lower)
		return 1;
	return dots && (upper || lower) && longest_part >= 2;
}

/* "1st", "2nd", "3rd", "4th": digits then an ordinal suffix. */
static int is_ordinal(const char *w, size_t n)
{
	size_t i = 0;

	while (i < n && is_ascii_digit((unsigned char)w[i]))
		i++;
	if (!i || n - i != 2)
		return 0;
	return !strncasecmp(w + i, "st", 2) || !strncasecmp(w + i, "nd", 2) ||
	       !strncasecmp(w + i, "rd", 2) || !strncasecmp(w + i, "th", 2);
}

/* Bytes of the number at the start of w ("3.5" of "3.5GB"). */
static size_t number_prefix(const char *w, size_t n)
{
	size_t i = 0;

	while (i < n && (is_ascii_digit((unsigned char)w[i]) ||
			 ((w[i] == '.' || w[i] == ',') && i + 1 < n &&
			  is_ascii_digit((unsigned char)w[i + 1]))))
		i++;
	return i;
}

/* Is w[0..n) numbers joined by single hyphens ("1975-2010")? */
static int numbers_joined(const char *w, size_t n)
{
	for (size_t a = 0;;) {
		size_t m = number_prefix(w + a, n - a);
		if (!m)
			return 0;
		a += m;
		if (a == n)
			return 1;
		if (w[a] != '-' || a + 1 == n)
			return 0;
		a++;
	}
}

/* Is w[0..n) words of letters joined by single hyphens ("byte",
 * "pre-step")? */
static int letter_parts(const char *w, size_t n)
{
	if (!n || w[0] == '-' || w[n - 1] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_ascii_alpha((unsigned char)w[i]) && !(w[i] == '-' && w[i + 1] != '-'))
			return 0;
	return 1;
}

/* Is w[0..n) one or more ".x" (or ".X", ".*"): the open parts of a
 * version or an address? */
static int wildcard_parts(const char *w, size_t n)
{
	if (!n || n % 2)
		return 0;
	for (size_t i = 0; i < n; i += 2)
		if (w[i] != '.' || (w[i + 1] != 'x' && w[i + 1] != 'X' && w[i + 1] != '*'))
			return 0;
	return 1;
}

/*
 * The number of a word that joins it by a hyphen to words of letters: a
 * count before its unit ("1024" of "1024-byte", "7-bit"), or a version
 * after a name, a number with a dot ("4.0" of "bash-4.0"; not the "8" of
 * "UTF-8", a name's part). Sets *off and returns the number's bytes; 0
 * when w is no such word.
 */
static size_t hyphened_number(const char *w, size_t n, size_t *off)
{
	size_t num = number_prefix(w, n), h = n;

	if (num && num < n && w[num] == '-' && letter_parts(w + num + 1, n - num - 1)) {
		*off = 0;
		return num;
	}
	while (h > 0 && w[h - 1] != '-')
		h--;
	if (h < 2 || number_prefix(w + h, n - h) != n - h || !memchr(w + h, '.', n - h) ||
	    !letter_parts(w, h - 1))
		return 0;
	*off = h;
	return n - h;
}

static uint32_t cp_of(const char *t, size_t len, const struct lp_token *k)
{
	uint32_t cp;

	(void)len;
	if (lp_utf8_decode((const unsigned char *)t + k->off, k->len, &cp) <= 0)
		return 0xFFFD;
	return cp;
}

static uint32_t closing_quote(uint32_t cp, int *symmetric)
{
	*symmetric = 0;
	switch (cp) {
	case '"': case '\'': case '`':
		*symmetric = 1;
		return cp;
	case 0x201C: return 0x201D;
	case 0x2018: return 0x2019;
	case 0x00AB: return 0x00BB;
	case 0x300C: return 0x300D;
	case 0x300E: return 0x300F;
	default: return 0;
	}
}

struct quote {
	uint32_t close; /* 0: outside a quote */
	int symmetric;
	size_t first, end, words;
};

/* Feed a token to the quote detector; emits a QUOTED token on the closer. */
static void quote_step(struct quote *q, struct sink *s, const struct lp_token *k, uint32_t cp,
		       const struct lp_token *prev)
{
	int sym;
	uint32_t close;

	if (q->close) {
		if (k->newlines_before) {
			q->close = 0;
		} else if (k->kind == LP_TOKEN_PUNCT && cp == q->close &&
			   !(q->symmetric && k->space_before)) {
			if (q->words && q->words <= QUOTE_MAX_WORDS)
				emit(s, q->first, q->end - q->first, LP_GROUND_QUOTED);
			q->close = 0;
			return;
		} else if (k->kind != LP_TOKEN_PUNCT || q->words) {
			if (k->kind != LP_TOKEN_PUNCT && !q->words++)
				q->first = k->off;
			q->end = k->off + k->len;
			if (q->words > QUOTE_MAX_WORDS || q->end - q->first > LP_GROUND_MAX_TOKEN)
				q->close = 0;
			return;
		}
	}
	if (k->kind != LP_TOKEN_PUNCT || !(close = closing_quote(cp, &sym)))
		return;
	/* a straight quote glued to a word is an apostrophe or a closer */
	if (sym && prev && !k->space_before && prev->kind == LP_TOKEN_WORD)
		return;
	q->close = close;
	q->symmetric = sym;
	q->words = 0;
}

static int in_claimed(const struct range *c, size_t n, size_t off)
{
	for (size_t i = 0; i < n; i++)
		if (off >= c[i].off && off < c[i].end)
			return 1;
	return 0;
}

/* A unit after a number ("3.5 GB", "12 MiB"): letters only, short. */
static int is_unit(const char *w, size_t n)
{
	if (n > 4)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_ascii_alpha((unsigned char)w[i]))
			return 0;
	return 1;
}

/* A word token: number, identifier, or nothing to check. `after_number`:
 * the token before it was a number. */
static void word_token(const char *t, size_t len, struct sink *s, const struct lp_token *k,
		       int line_start, int after_number)
{
	const char *w = t + k->off;
	size_t num = number_prefix(w, k->len), pos = k->off + k->len, hy = 0, hn;
	struct lp_token next;
	int marker = 0;

	if (num == k->len) {
		/* "1." or "2)" opening a line is a list marker; "3.2.1." is a
		 * section's number */
		if (line_start && !memchr(w, '.', num) && lp_match_token_next(t, len, &pos, &next) &&
		    !next.space_before && (t[next.off] == '.' || t[next.off] == ')'))
			marker = 1;
		if (!marker)
			emit(s, k->off, k->len, LP_GROUND_NUMBER);
		return;
	}
	if (num && w[num] == '-' && numbers_joined(w, k->len)) {
		/* a range or a date, "1975-2010", "2009-01-19": each part is a
		 * number */
		for (size_t a = 0, b; a < k->len; a = b + 1) {
			b = a + number_prefix(w + a, k->len - a);
			emit(s, k->off + a, b - a, LP_GROUND_NUMBER);
		}
		return;
	}
	if (num && wildcard_parts(w + num, k->len - num)) {
		/* "1.13.x", "192.168.0.x": a version or an address with its
		 * open parts */
		emit(s, k->off, num, LP_GROUND_NUMBER);
		return;
	}
	if ((hn = hyphened_number(w, k->len, &hy)) > 0) {
		emit(s, k->off + hy, hn, LP_GROUND_NUMBER);
		return;
	}
	if (is_ordinal(w, k->len) || (after_number && is_unit(w, k->len)))
		return;
	if (num && !memchr(w + num, '_', k->len - num) &&
	    number_prefix(w + num, k->len - num) == 0) {
		size_t i = num;
		while (i < k->len && is_ascii_alpha((unsigned char)w[i]))
			i++;
		if (i == k->len) { /* "3.5GB", "10ms": the number counts */
			emit(s, k->off, num, LP_GROUND_NUMBER);
			return;
		}
	}
	if (is_ident(w, k->len))
		emit(s, k->off, k->len, LP_GROUND_IDENT);
}

size_t lp_ground_tokens(const char *text, size_t len, struct lp_ground_token *out,
			size_t cap)
{
	struct range claimed[64];
	struct sink s = { out, cap, 0 };
	struct quote q = { 0 };
	struct lp_token k, prev = {0}, prev2 = {0};
	size_t pos = 0, n_claimed, seen = 0;

	n_claimed = ascii_runs(text, len, &s, claimed, sizeof(claimed) / sizeof(claimed[0]));
	if (n_claimed > sizeof(claimed) / sizeof(claimed[0]))
		n_claimed = sizeof(claimed) / sizeof(claimed[0]);
	while (lp_match_token_next(text, len, &pos, &k)) {
		uint32_t cp = cp_of(text, len, &k);
		quote_step(&q, &s, &k, cp, seen ? &prev : NULL);
		if (k.kind == LP_TOKEN_WORD && !in_claimed(claimed, n_claimed, k.off)) {
			/* "[chunk 3]": a citation, not a claim about the source */
			int cite = seen >= 2 && prev.len == 5 && !strncasecmp(text + prev.off, "chunk", 5) &&
				   text[prev2.off] == '[';
			if (!cite)
				word_token(text, len, &s, &k, !seen || k.newlines_before,
					   seen && prev.kind == LP_TOKEN_WORD &&
					   number_prefix(text + prev.off, prev.len) == prev.len);
		}
		prev2 = prev;
		prev = k;
		seen++;
	}
	return s.n;
}

/* ---- the set and the scan ------------------------------------------ */

void lp_ground_init(struct lp_ground *g)
{
	memset(g, 0, sizeof(*g));
	lp_buf_init(&g->keys);
	lp_buf_init(&g->win);
}

void lp_ground_release(struct lp_ground *g)
{
	lp_buf_release(&g->keys);
	lp_buf_release(&g->win);
	lp_mem_free(g->key_off);
	lp_mem_free(g->key_len);
	lp_mem_free(g->strict);
	lp_mem_free(g->found);
	memset(g, 0, sizeof(*g));
}

static enum lp_status grow(struct lp_ground *g, struct lp_diag *d)
{
	size_t cap = g->cap ? 2 * g->cap : 32;
	size_t *off = lp_mem_realloc(LP_MEM_SCRATCH, g->key_off, cap * sizeof(*off), d);

	if (!off)
		return LP_E_NOMEM;
	g->key_off = off;
	if (!(off = lp_mem_realloc(LP_MEM_SCRATCH, g->key_len, cap * sizeof(*off), d)))
		return LP_E_NOMEM;
	g->key_len = off;
	unsigned char *b = lp_mem_realloc(LP_MEM_SCRATCH, g->strict, cap, d);
	if (!b)
		return LP_E_NOMEM;
	g->strict = b;
	if (!(b = lp_mem_realloc(LP_MEM_SCRATCH, g->found, cap, d)))
		return LP_E_NOMEM;
	g->found = b;
	g->cap = cap;
	return LP_OK;
}

static unsigned char mode_of(enum lp_ground_kind k)
{
	return k == LP_GROUND_QUOTED ? 0 : k == LP_GROUND_NUMBER ? 2 : 1;
}

enum lp_status lp_ground_add(struct lp_ground *g, const char *text, size_t len,
			     enum lp_ground_kind k, size_t *id, struct lp_diag *d)
{
	size_t start = g->keys.len, klen;

	if (lp_match_normalize(text, len, &g->keys))
		goto nomem;
	klen = g->keys.len - start;
	for (size_t i = 0; i < g->n; i++) {
		if (g->key_len[i] == klen && !memcmp(g->keys.data + g->key_off[i],
						     g->keys.data + start, klen)) {
			g->keys.len = start;
			g->keys.data[start] = '\0';
			if (mode_of(k) < g->strict[i])
				g->strict[i] = mode_of(k); /* the most lenient wins */
			*id = i;
			return LP_OK;
		}
	}
	if (lp_buf_addc(&g->keys, '\0') || (g->n == g->cap && grow(g, d)))
		goto nomem;
	g->key_off[g->n] = start;
	g->key_len[g->n] = klen;
	g->strict[g->n] = mode_of(k);
	g->found[g->n] = klen == 0; /* nothing to look for */
	*id = g->n++;
	return LP_OK;
nomem:
	return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory collecting tokens to ground");
}

static uint32_t cp_before(const char *s, size_t at)
{
	size_t i = at;
	uint32_t cp;

	while (i > 0 && at - i < 4) {
		i--;
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			break;
	}
	if (lp_utf8_decode((const unsigned char *)s + i, at - i, &cp) <= 0)
		return 0xFFFD;
	return cp;
}

static uint32_t cp_at(const char *s, size_t len, size_t at)
{
	uint32_t cp;

	if (lp_utf8_decode((const unsigned char *)s + at, len - at, &cp) <= 0)
		return 0xFFFD;
	return cp;
}

static int is_word_cp(uint32_t cp)
{
	return lp_scan_class_of(cp) == LP_SCAN_WORD;
}

/* A character that joins two word characters into one token here. Looser
 * than the scan's LP_SCAN_JOIN (text/scan.h), where ',' joins digits only:
 * a number matched inside "a,1" or "1,a" is not whole. */
static int is_joiner(uint32_t cp)
{
	return cp == '_' || cp == '-' || cp == '.' || cp == ',' || cp == '\'' || cp == 0x2019;
}

/* Is hay[i] the hyphen of a range or a date, between two digits
 * ("1975-2010", "2009-01-19")? Each side is a number of its own there
 * (lp_ground_tokens). */
static int range_hyphen(const char *hay, size_t hlen, size_t i)
{
	return hay[i] == '-' && i > 0 && i + 1 < hlen && is_ascii_digit((unsigned char)hay[i - 1]) &&
	       is_ascii_digit((unsigned char)hay[i + 1]);
}

/* Is hay[at - 1] the hyphen between a name and its version, a number
 * with a dot ("bash-4.0"; lp_ground_tokens takes the number)? */
static int version_hyphen(const char *hay, size_t at, size_t n)
{
	return at > 1 && hay[at - 1] == '-' && is_ascii_alpha((unsigned char)hay[at - 2]) &&
	       memchr(hay + at, '.', n);
}

/* Does hay[at, at + n) stand as whole tokens: no word character, nor a
 * joiner then a word character, on either side? With `unit`, a letter may
 * follow (not a digit, nor a joiner and a digit). */
static int whole(const char *hay, size_t hlen, size_t at, size_t n, int unit)
{
	uint32_t c;
	size_t e = at + n;

	if (at) {
		c = cp_before(hay, at);
		if (is_word_cp(c) && is_word_cp(cp_at(hay, hlen, at)))
			return 0;
		if (is_joiner(c) && at > 1 && is_word_cp(cp_before(hay, at - 1)) &&
		    is_word_cp(cp_at(hay, hlen, at)) && !range_hyphen(hay, hlen, at - 1) &&
		    !(unit && version_hyphen(hay, at, n)))
			return 0;
	}
	if (e < hlen && is_word_cp(cp_before(hay, e))) {
		c = cp_at(hay, hlen, e);
		if (unit && !is_joiner(c) && !is_ascii_digit((int)c))
			return 1;
		if (is_word_cp(c))
			return 0;
		if (is_joiner(c) && e + 1 < hlen && is_word_cp(cp_at(hay, hlen, e + 1)) &&
		    !(unit && !is_ascii_digit((int)cp_at(hay, hlen, e + 1))) &&
		    !range_hyphen(hay, hlen, e))
			return 0;
	}
	return 1;
}

static int find_strict(const char *hay, size_t hlen, const char *needle, size_t n, int unit)
{
	const char *p = hay, *end = hay + hlen;

	while (n && (p = memmem(p, (size_t)(end - p), needle, n))) {
		if (whole(hay, hlen, (size_t)(p - hay), n, unit))
			return 1;
		if (++p >= end)
			break;
	}
	return 0;
}

static int is_space_byte(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* A cut near `at`: after the last white space in (at - back, at], else at a
 * character boundary. */
static size_t cut_at(const char *t, size_t at, size_t back)
{
	for (size_t i = at; i > 0 && at - i < back; i--)
		if (is_space_byte(t[i - 1]))
			return i;
	while (at > 0 && ((unsigned char)t[at] & 0xC0) == 0x80)
		at--;
	return at;
}

enum lp_status lp_ground_scan(struct lp_ground *g, const char *text, size_t len,
			      lp_ground_done_fn done, void *ctx, struct lp_diag *d)
{
	size_t start = 0, told = 0;
	int left = 0;

	for (size_t i = 0; i < g->n; i++)
		left |= !g->found[i];
	while (left && start < len) {
		size_t end = len, next;
		if (len - start > LP_GROUND_WINDOW)
			end = cut_at(text, start + LP_GROUND_WINDOW, LP_GROUND_OVERLAP);
		if (end <= start)
			end = start + LP_GROUND_WINDOW; /* no boundary found: never stall */
		lp_buf_reset(&g->win);
		if (lp_match_normalize(text + start, end - start, &g->win))
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
					   "out of memory reading the source for grounding");
		left = 0;
		for (size_t i = 0; i < g->n; i++) {
			const char *k = g->keys.data + g->key_off[i];
			if (g->found[i])
				continue;
			g->found[i] = g->strict[i] ?
				find_strict(g->win.data, g->win.len, k, g->key_len[i],
					    g->strict[i] == 2) :
				lp_match_find_normal(g->win.data, g->win.len, k, g->key_len[i]);
			left |= !g->found[i];
		}
		if (end >= len)
			break;
		/* the next window overlaps this one, so that a token cut by
		 * the boundary is whole in one of them */
		next = cut_at(text, end - LP_GROUND_OVERLAP, LP_GROUND_OVERLAP);
		if (next <= start)
			next = end;
		if (done && next > told) {
			done(ctx, told, next - told);
			told = next;
		}
		start = next;
	}
	if (done && len > told)
		done(ctx, told, len - told);
	return LP_OK;
}
