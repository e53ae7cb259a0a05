#include "text/keyphrase.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hash.h"
#include "core/buf.h"
#include "core/mem.h"
#include "core/table.h"
#include "core/utf8.h"
#include "text/ground.h"
#include "text/match.h"

enum kind { K_RAKE, K_NUMBER, K_IDENT, K_QUOTED, K_CJK, K_N };

#define RAKE_MAX_WORDS 4
#define QUOTE_MAX_WORDS 6
#define QUOTE_MAX_BYTES 80
#define UNIT_MAX_BYTES 16
#define COMMON_WORD_WEIGHT 0.25 /* with parts: see keyphrase.h */

struct entry {
	uint64_t h;          /* 0: empty slot */
	size_t key_off;      /* normal form, in table.keys */
	size_t src_off, src_len; /* first occurrence in the text */
	uint32_t key_len;
	uint32_t units;      /* words (RAKE) or characters (CJK) */
	uint32_t freq[K_N];
	uint32_t toc;        /* occurrences in list-like lines (see keyphrase.h) */
	uint32_t caps;       /* one-word RAKE occurrences written capitalised */
	uint32_t parts;      /* parts of the scanned text it occurs in */
	uint32_t last_part;  /* the last of them, 1-based (0: none yet) */
	double degree;       /* word table: summed lengths of its phrases */
	double score;
};

/* Entries in a core table (core/table.h; an entry opens with its hash),
 * at most LP_KEYPHRASE_MAX_CANDIDATES keys, their bytes in `keys`. */
struct table {
	struct lp_table slots; /* of struct entry */
	struct lp_buf keys;
};

/* Candidates added on one line, and what the line looks like, for the
 * list-like line test (line_is_toc). */
#define LINE_MAX_CANDS 48
#define LINE_MAX_WORDS 12
struct line_state {
	size_t cand[LINE_MAX_CANDS]; /* key_off of each phrase entry added */
	uint32_t cand_len[LINE_MAX_CANDS];
	uint64_t cand_h[LINE_MAX_CANDS];
	size_t n_cand;
	size_t n_tokens, n_words;
	int numbered;      /* starts with a section number ("2.2.", "Chapter 3") */
	int menu;          /* starts with '*' (an Info menu or index entry) */
	int colon;         /* holds ':' glued to a word ("* name: ...") */
	int node_labels;   /* "Node:", "Next:", "Prev:", "Up:" seen */
	uint32_t punct_cp; /* the one punctuation character of the line so far */
	int only_punct;    /* every token is punct_cp (an underline) */
	size_t dots_run, max_dots; /* dotted leader: longest run of '.' */
	uint32_t last_cp;  /* first code point of the last token */
	struct lp_token last;
};

struct extractor {
	const char *text;
	size_t len;
	struct table phrases, words;
	struct lp_buf norm;
	struct lp_diag *d;
	enum lp_status st;
	lp_keyphrase_done_fn done; /* may be NULL */
	void *ctx;
	struct lp_token rake[RAKE_MAX_WORDS];
	size_t n_rake;
	struct lp_token cjk[3]; /* the last CJK letters of the current run */
	size_t n_cjk;
	struct lp_token prev, prev2;
	uint32_t prev_cp, prev2_cp;
	size_t n_seen;
	int have_num;
	struct lp_token num;
	uint32_t quote_close; /* 0: not inside a quote */
	int quote_symmetric;
	size_t q_first, q_end, q_words;
	struct line_state line, prev_line; /* the current and the last line */
	unsigned xref;        /* tokens left in a cross-reference, 0: none */
	size_t n_parts;       /* > 1: phrases are weighed by their spread */
	size_t part_bytes;    /* bytes of scanned text a part */
	size_t piece_off, piece_at; /* the piece being scanned starts at piece_off
				     * in the text, piece_at in the scanned bytes */
};

static uint64_t hash_key(const char *s, size_t n)
{
	uint64_t h = lp_hash_fnv1a(LP_HASH_FNV_BASIS, s, n);

	return h ? h : 1;
}

/* A key being looked up: its bytes, and the table that holds entries'. */
struct key {
	const struct table *t;
	const char *s;
	size_t len;
};

static int same_key(const void *slot, void *ctx)
{
	const struct entry *e = slot;
	const struct key *k = ctx;

	return e->key_len == k->len && !memcmp(k->t->keys.data + e->key_off, k->s, k->len);
}

/* The entry of key[0..klen) (hash h), or the empty one where it would go. */
static struct entry *slot(struct table *t, uint64_t h, const char *key, size_t klen)
{
	struct key k = { t, key, klen };

	return lp_table_find(&t->slots, h, same_key, &k);
}

static void table_init(struct table *t)
{
	lp_table_init(&t->slots, sizeof(struct entry), 256, LP_MEM_SCRATCH);
	lp_buf_init(&t->keys);
}

/* The entry for key, created if there is room; NULL when the table is
 * full (not an error) or on LP_E_NOMEM (*st set). */
static struct entry *table_add(struct table *t, const char *key, size_t klen,
			       enum lp_status *st, struct lp_diag *d)
{
	uint64_t h = hash_key(key, klen);
	struct entry *e;

	if (lp_table_needs_room(&t->slots) && t->slots.n < LP_KEYPHRASE_MAX_CANDIDATES &&
	    (*st = lp_table_grow(&t->slots, d)))
		return NULL;
	e = slot(t, h, key, klen);
	if (e->h)
		return e;
	if (t->slots.n >= LP_KEYPHRASE_MAX_CANDIDATES)
		return NULL;
	e->key_off = t->keys.len;
	if ((*st = lp_buf_add(&t->keys, key, klen))) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory collecting keyphrases");
		return NULL;
	}
	e->key_len = (uint32_t)klen;
	lp_table_put(&t->slots, e, h);
	return e;
}

static void table_release(struct table *t)
{
	lp_table_release(&t->slots);
	lp_buf_release(&t->keys);
}

static struct entry *add_span(struct extractor *x, struct table *t, size_t off, size_t len)
{
	struct entry *e;

	if (x->st || len > 1024)
		return NULL;
	lp_buf_reset(&x->norm);
	if (lp_match_normalize(x->text + off, len, &x->norm)) {
		x->st = lp_diag_set(x->d, LP_E_NOMEM, NULL, 0, 0,
				    "out of memory collecting keyphrases");
		return NULL;
	}
	if (!x->norm.len)
		return NULL;
	e = table_add(t, x->norm.data, x->norm.len, &x->st, x->d);
	if (e && !e->src_len) {
		e->src_off = off;
		e->src_len = len;
	}
	return e;
}

static void add_candidate(struct extractor *x, enum kind k, size_t off, size_t end,
			  uint32_t units)
{
	struct entry *e = add_span(x, &x->phrases, off, end - off);
	struct line_state *l = &x->line;

	if (!e)
		return;
	e->freq[k]++;
	if (k == K_RAKE && units == 1 && x->text[off] >= 'A' && x->text[off] <= 'Z')
		e->caps++;
	if (x->n_parts > 1) {
		size_t part = (x->piece_at + off - x->piece_off) / x->part_bytes + 1;
		if (part != e->last_part) { /* parts are met in order */
			e->parts++;
			e->last_part = (uint32_t)part;
		}
	}
	if (units > e->units)
		e->units = units;
	if (x->xref) {
		e->toc++; /* the title a cross-reference points at */
	} else if (l->n_cand < LINE_MAX_CANDS) {
		l->cand[l->n_cand] = e->key_off;
		l->cand_len[l->n_cand] = e->key_len;
		l->cand_h[l->n_cand++] = e->h;
	}
}

static void rake_flush(struct extractor *x)
{
	size_t n = x->n_rake;

	if (!n)
		return;
	add_candidate(x, K_RAKE, x->rake[0].off, x->rake[n - 1].off + x->rake[n - 1].len,
		      (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		struct entry *w = add_span(x, &x->words, x->rake[i].off, x->rake[i].len);
		if (w) {
			w->freq[K_RAKE]++;
			w->degree += (double)n;
		}
	}
	x->n_rake = 0;
}

static uint32_t first_cp(const char *s, size_t len)
{
	uint32_t cp;

	if (lp_utf8_decode((const unsigned char *)s, len, &cp) <= 0)
		return 0xFFFD;
	return cp;
}

static int is_number(const char *s, size_t len)
{
	if (!len || s[0] < '0' || s[0] > '9')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == ','))
			return 0;
	return 1;
}

struct letter_counts {
	size_t upper, lower, other;
	int camel; /* starts lower-case, and a lower-case letter is directly
		    * followed by an upper-case one: getValue, not GiB */
	int underscore;
};

static struct letter_counts count_letters(const char *s, size_t len)
{
	struct letter_counts c = {0};
	size_t i = 0;
	int prev_lower = 0, first_lower = 0;

	while (i < len) {
		uint32_t cp;
		int n = lp_utf8_decode((const unsigned char *)s + i, len - i, &cp);
		int up = 0, low = 0;
		if (n <= 0)
			n = 1, cp = 0xFFFD;
		if (cp == '_')
			c.underscore = 1;
		if (lp_utf8_tolower(cp) != cp)
			up = 1;
		else if (lp_utf8_is_alnum(cp) && !(cp >= '0' && cp <= '9'))
			low = 1;
		c.upper += up;
		c.lower += low;
		c.other += !up && !low;
		if (prev_lower && up && first_lower)
			c.camel = 1;
		if (i == 0)
			first_lower = low;
		prev_lower = low;
		i += (size_t)n;
	}
	return c;
}

/* CAPS (HISTFILE, UTF8), snake_case or camelCase. */
static int is_identifier(const char *s, size_t len)
{
	struct letter_counts c = count_letters(s, len);

	if (c.underscore)
		return 1;
	if (c.upper >= 2 && !c.lower)
		return 1;
	return c.camel;
}

/* A unit after a number: a short word without digits that is not a stop
 * word; capitalised only when short (GiB, MB, Hz), so that "1989 Brian"
 * is not taken as a quantity. */
static int is_unit(const char *s, size_t len)
{
	char low[UNIT_MAX_BYTES];
	size_t n;
	struct letter_counts c;

	if (len > UNIT_MAX_BYTES)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] >= '0' && s[i] <= '9')
			return 0;
	n = lp_match_lower(s, len, low, sizeof(low));
	if (n > sizeof(low) || lp_match_is_stopword(low, n))
		return 0;
	c = count_letters(s, len);
	return !c.upper || len <= 4 || !c.lower;
}

/* 1 if the lower-case word low[0..n) is one of the NULL-terminated `list`. */
static int word_in(const char *low, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && !memcmp(*list, low, n))
			return 1;
	return 0;
}

/* Words that point at the structure of a document rather than say
 * anything: "see Section 2.3", "*note Bash Builtins::". */
static const char *const structure_words[] = { "see", "note", "section", "chapter",
					       "appendix", NULL };
/* A first word that makes a line a numbered heading with a number after it. */
static const char *const heading_words[] = { "chapter", "section", "appendix", "part",
					     "table", "figure", "example", NULL };

static int is_rake_break(const char *s, size_t len)
{
	char low[16];
	size_t n;

	if (lp_utf8_count((const unsigned char *)s, len) == 1)
		return 1; /* a lone letter carries no topic */
	n = lp_match_lower(s, len, low, sizeof(low));
	return n <= sizeof(low) &&
	       (lp_match_is_stopword(low, n) || word_in(low, n, structure_words));
}

static uint32_t closing_quote(uint32_t cp, int *symmetric)
{
	*symmetric = 0;
	switch (cp) {
	case '"': case '\'': case '`':
		*symmetric = 1;
		return cp;
	case 0x201C: return 0x201D; /* “ ” */
	case 0x2018: return 0x2019; /* ‘ ’ */
	case 0x00AB: return 0x00BB; /* « » */
	case 0x300C: return 0x300D; /* 「 」 */
	case 0x300E: return 0x300F; /* 『 』 */
	default: return 0;
	}
}

/* Feed one token to the quote detector; returns 1 when it closed a quote
 * (the token is then not an opener). */
static int quote_step(struct extractor *x, const struct lp_token *t, uint32_t cp)
{
	int sym;
	uint32_t close;

	if (x->quote_close) {
		if (t->newlines_before)
			x->quote_close = 0;
		else if (t->kind == LP_TOKEN_PUNCT && cp == x->quote_close &&
			 !(x->quote_symmetric && t->space_before)) {
			/* a lone quoted letter ('p') is an option letter or a
			 * variable, not a term */
			if (x->q_words && (x->q_words > 1 ||
					   lp_utf8_count((const unsigned char *)x->text + x->q_first,
							 x->q_end - x->q_first) > 1))
				add_candidate(x, K_QUOTED, x->q_first, x->q_end,
					      (uint32_t)x->q_words);
			x->quote_close = 0;
			return 1;
		} else {
			if (t->kind != LP_TOKEN_PUNCT) {
				if (!x->q_words++)
					x->q_first = t->off;
				x->q_end = t->off + t->len;
			}
			if (x->q_words > QUOTE_MAX_WORDS ||
			    (x->q_words && x->q_end - x->q_first > QUOTE_MAX_BYTES))
				x->quote_close = 0;
			return 0;
		}
	}
	if (t->kind != LP_TOKEN_PUNCT || !(close = closing_quote(cp, &sym)))
		return 0;
	/* a straight quote glued to a word is an apostrophe or a closer */
	if (sym && x->n_seen && !t->space_before && x->prev.kind != LP_TOKEN_PUNCT)
		return 0;
	x->quote_close = close;
	x->quote_symmetric = sym;
	x->q_words = 0;
	return 0;
}

/* Chinese function characters (particles, pronouns, prepositions): an
 * n-gram that starts or ends with one is a fragment of grammar, not a term
 * ("的软件包", "软件包的"). Sorted by code point for bsearch. */
static const uint32_t cjk_function_chars[] = {
	0x4E0E, /* 与 */ 0x4E2A, /* 个 */ 0x4E3A, /* 为 */ 0x4E48, /* 么 */
	0x4E4B, /* 之 */ 0x4E5F, /* 也 */ 0x4E86, /* 了 */ 0x4ECE, /* 从 */
	0x4EE5, /* 以 */ 0x5176, /* 其 */ 0x5230, /* 到 */ 0x53CA, /* 及 */
	0x5417, /* 吗 */ 0x5427, /* 吧 */ 0x5462, /* 呢 */ 0x548C, /* 和 */
	0x554A, /* 啊 */ 0x5728, /* 在 */ 0x5BF9, /* 对 */ 0x5C31, /* 就 */
	0x6216, /* 或 */ 0x628A, /* 把 */ 0x662F, /* 是 */ 0x7684, /* 的 */
	0x7740, /* 着 */ 0x7B49, /* 等 */ 0x800C, /* 而 */ 0x88AB, /* 被 */
	0x8FC7, /* 过 */ 0x8FD9, /* 这 */ 0x90A3, /* 那 */ 0x90FD, /* 都 */
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int is_cjk_function(const char *s, size_t len)
{
	uint32_t cp;

	if (lp_utf8_decode((const unsigned char *)s, len, &cp) <= 0)
		return 0;
	return bsearch(&cp, cjk_function_chars,
		       sizeof(cjk_function_chars) / sizeof(cjk_function_chars[0]),
		       sizeof(uint32_t), cmp_u32) != NULL;
}

static void cjk_step(struct extractor *x, const struct lp_token *t)
{
	const struct lp_token *last = x->n_cjk ? &x->cjk[x->n_cjk - 1] : NULL;
	int ends_badly = is_cjk_function(x->text + t->off, t->len);

	if (last && (t->space_before || last->off + last->len != t->off))
		x->n_cjk = 0;
	for (size_t k = 1; k <= x->n_cjk && !ends_badly; k++) {
		const struct lp_token *first = &x->cjk[x->n_cjk - k];
		if (!is_cjk_function(x->text + first->off, first->len))
			add_candidate(x, K_CJK, first->off, t->off + t->len, (uint32_t)(k + 1));
	}
	if (x->n_cjk == 3) {
		memmove(x->cjk, x->cjk + 1, 2 * sizeof(*x->cjk));
		x->n_cjk = 2;
	}
	x->cjk[x->n_cjk++] = *t;
}

/* "--name": two glued dashes after a space (or at the start) and a word. */
static int is_long_option(const struct extractor *x, const struct lp_token *t)
{
	return x->n_seen >= 2 && !t->space_before && x->prev_cp == '-' &&
	       !x->prev.space_before && x->prev2_cp == '-' &&
	       (x->prev2.space_before || x->prev2.off == 0);
}

/*
 * A word in capitals that stands for what the user writes, not a name:
 * glued after "=" or "[" ("--file=ARCHIVE", "[OPTIONS]"), or after an
 * option and a space ("-C DIR", "--exclude PATTERN"). Man pages and
 * usage lines are full of them, and they are no more a topic than the
 * words "file" and "name" they stand for.
 */
static int is_placeholder(const struct extractor *x, const struct lp_token *t)
{
	struct letter_counts c = count_letters(x->text + t->off, t->len);

	if (c.upper < 2 || c.lower || c.underscore || !x->n_seen)
		return 0;
	if (!t->space_before && (x->prev_cp == '=' || x->prev_cp == '['))
		return 1;
	/* the word before is an option: it follows "-" or "--" glued */
	return t->space_before && !t->newlines_before && x->n_seen >= 2 &&
	       x->prev.kind == LP_TOKEN_WORD && !x->prev.space_before && x->prev2_cp == '-';
}

static void word_step(struct extractor *x, const struct lp_token *t)
{
	const char *s = x->text + t->off;

	if (is_placeholder(x, t)) {
		rake_flush(x);
	} else if (is_number(s, t->len)) {
		rake_flush(x);
		x->have_num = 1;
		x->num = *t;
	} else if (is_long_option(x, t)) {
		rake_flush(x);
		add_candidate(x, K_IDENT, x->prev2.off, t->off + t->len, 1);
	} else if (is_identifier(s, t->len)) {
		rake_flush(x);
		add_candidate(x, K_IDENT, t->off, t->off + t->len, 1);
	} else if (is_rake_break(s, t->len)) {
		rake_flush(x);
	} else {
		if (x->n_rake == RAKE_MAX_WORDS)
			rake_flush(x);
		x->rake[x->n_rake++] = *t;
	}
}

/* Returns 1 when t was the unit of the pending number (it is then used up). */
static int number_step(struct extractor *x, const struct lp_token *t, uint32_t cp)
{
	size_t end = t->off + t->len;

	x->have_num = 0;
	if (t->newlines_before)
		return 0;
	if ((t->kind == LP_TOKEN_WORD && is_unit(x->text + t->off, t->len)) ||
	    (t->kind == LP_TOKEN_PUNCT && cp == '%' && !t->space_before)) {
		add_candidate(x, K_NUMBER, x->num.off, end, 2);
		return 1;
	}
	return 0;
}

/* Is the lower-cased word at t one of `list`? */
static int token_in(const struct extractor *x, const struct lp_token *t,
		    const char *const *list)
{
	char low[16];
	size_t n;

	if (t->kind != LP_TOKEN_WORD)
		return 0;
	n = lp_match_lower(x->text + t->off, t->len, low, sizeof(low));
	return n <= sizeof(low) && word_in(low, n, list);
}

/* What token t adds to the shape of its line. */
static void line_step(struct extractor *x, const struct lp_token *t, uint32_t cp)
{
	static const char *const labels[] = { "node", "next", "prev", "up", NULL };
	struct line_state *l = &x->line;
	int glued = l->n_tokens && !t->space_before;
	int word = t->kind != LP_TOKEN_PUNCT;

	if (!l->n_tokens) {
		l->numbered = t->kind == LP_TOKEN_WORD && is_number(x->text + t->off, t->len);
		l->menu = cp == '*';
		l->only_punct = !word;
		l->punct_cp = cp;
	} else if (l->n_tokens == 1 && token_in(x, &l->last, heading_words) &&
		   t->kind == LP_TOKEN_WORD && is_number(x->text + t->off, t->len)) {
		l->numbered = 1;
	}
	if (word || cp != l->punct_cp)
		l->only_punct = 0;
	if (cp == ':' && glued && l->last.kind == LP_TOKEN_WORD)
		l->colon = 1;
	if (cp == ':' && glued && token_in(x, &l->last, labels))
		l->node_labels++;
	l->dots_run = cp == '.' ? l->dots_run + 1 : 0;
	if (l->dots_run > l->max_dots)
		l->max_dots = l->dots_run;
	l->n_words += word;
	l->n_tokens++;
	l->last = *t;
	l->last_cp = cp;
}

/* A list-like line: a dotted leader, an Info menu or index entry ("* name:
 * Title.") or node line, or a
 * short line that starts with a section number (a heading, or its entry in
 * a table of contents). */
static int line_is_toc(const struct line_state *l)
{
	if (l->max_dots >= 4 || (l->menu && l->colon) || l->node_labels >= 2)
		return 1;
	return l->numbered && l->n_words >= 2 && l->n_words <= LINE_MAX_WORDS + 1 &&
	       l->last_cp != '.';
}

/* A line of one repeated character under a heading: "*****", "=====". */
static int line_is_underline(const struct line_state *l)
{
	return l->only_punct && l->n_tokens >= 3 &&
	       (l->punct_cp == '*' || l->punct_cp == '=' || l->punct_cp == '-' ||
		l->punct_cp == '~' || l->punct_cp == '#');
}

/* Count the candidates of line l as list-like occurrences. */
static void line_mark(struct extractor *x, struct line_state *l)
{
	for (size_t i = 0; i < l->n_cand; i++) {
		struct entry *e = slot(&x->phrases, l->cand_h[i], x->phrases.keys.data + l->cand[i],
				       l->cand_len[i]);
		if (e->h)
			e->toc++;
	}
	l->n_cand = 0;
}

static void line_end(struct extractor *x)
{
	int toc = line_is_toc(&x->line), under = line_is_underline(&x->line);

	if (toc)
		rake_flush(x); /* a heading does not run on into the next line */
	if (toc || under)
		line_mark(x, &x->line);
	if (under)
		line_mark(x, &x->prev_line);
	x->prev_line = x->line;
	memset(&x->line, 0, sizeof(x->line));
}

/* Cross-references: "see Section 1.5.8, “Typical command sequences”",
 * "*note Bash Builtins::". The title they point at is a heading quoted
 * again, so what is found until the reference ends counts as list-like. */
static void xref_step(struct extractor *x, const struct lp_token *t, uint32_t cp)
{
	static const char *const see[] = { "see", "in", NULL };
	static const char *const targets[] = { "section", "chapter", "appendix", NULL };

	if (x->xref) {
		x->xref--;
		if (cp == ')' || (cp == ':' && x->prev_cp == ':' && !t->space_before))
			x->xref = 0;
	}
	if (token_in(x, t, targets) && x->n_seen && token_in(x, &x->prev, see))
		x->xref = 24;
	else if (t->kind == LP_TOKEN_WORD && x->n_seen && x->prev_cp == '*' &&
		 !t->space_before && token_in(x, t, structure_words))
		x->xref = 16;
}

static void on_token(struct extractor *x, const struct lp_token *t)
{
	uint32_t cp = first_cp(x->text + t->off, t->len);
	int unit = 0;

	if (t->newlines_before && x->n_seen)
		line_end(x);
	if (t->newlines_before >= 2) { /* paragraph break */
		rake_flush(x);
		x->n_cjk = 0;
	}
	if (x->have_num)
		unit = number_step(x, t, cp);
	quote_step(x, t, cp);
	if (t->kind == LP_TOKEN_WORD) {
		if (unit)
			rake_flush(x);
		else
			word_step(x, t);
		x->n_cjk = 0;
	} else {
		rake_flush(x);
		if (t->kind == LP_TOKEN_CJK)
			cjk_step(x, t);
		else
			x->n_cjk = 0;
	}
	line_step(x, t, cp);
	xref_step(x, t, cp);
	x->prev2 = x->prev;
	x->prev2_cp = x->prev_cp;
	x->prev = *t;
	x->prev_cp = cp;
	x->n_seen++;
}

/* Classic RAKE: the phrase's words' degree / frequency, summed. A word that
 * mostly stands alone scores about 1, one that always comes in a 3-word
 * term about 3. */
static double rake_weight(struct extractor *x, const struct entry *e)
{
	const char *key = x->phrases.keys.data + e->key_off, *end = key + e->key_len;
	double sum = 0;

	while (key < end) {
		const char *sp = memchr(key, ' ', (size_t)(end - key));
		size_t wl = sp ? (size_t)(sp - key) : (size_t)(end - key);
		struct entry *w = slot(&x->words, hash_key(key, wl), key, wl);
		if (w->h && w->freq[K_RAKE])
			sum += w->degree / (double)w->freq[K_RAKE];
		key += wl + (sp != NULL);
	}
	return sum;
}

static double best(double a, double b)
{
	return a > b ? a : b;
}

/* log2(1 + frequency) times the weight of its kind: frequency matters,
 * but slowly enough that a frequent generic word ("line", 2000 times)
 * does not bury a specific term seen 50 times. */
static double kind_score(uint32_t freq, double share, double weight)
{
	return freq ? log2(1.0 + (double)freq * share) * weight : 0;
}

static void score_entry(struct extractor *x, struct entry *e)
{
	uint32_t total = 0;
	double s = 0, share;

	/* only the occurrences in running text count: a phrase met in list-like
	 * lines (headings, their table of contents, cross-references) names a
	 * part of the document, it does not say what the document says */
	for (int k = 0; k < K_N; k++)
		total += e->freq[k];
	share = total > e->toc ? (double)(total - e->toc) / (double)total : 0.0;
	/* a RAKE phrase seen once counts half: long one-off phrases, which
	 * RAKE weighs highest, are its known weakness as a keyphrase */
	if (e->freq[K_RAKE] == 1)
		s = 0.5 * share * rake_weight(x, e);
	else if (e->freq[K_RAKE])
		s = kind_score(e->freq[K_RAKE], share, rake_weight(x, e));
	s = best(s, kind_score(e->freq[K_NUMBER], share, 3.0));
	s = best(s, kind_score(e->freq[K_QUOTED], share, 4.0));
	s = best(s, kind_score(e->freq[K_IDENT], share, 4.0));
	if (e->freq[K_CJK] >= 2)
		s = best(s, kind_score(e->freq[K_CJK], share, (double)e->units - 0.5));
	if (x->n_parts > 1) { /* a document's topics: see keyphrase.h */
		s *= (double)e->parts / (double)x->n_parts;
		if (e->units == 1 && e->freq[K_RAKE] >= 4 * (e->freq[K_IDENT] + e->freq[K_QUOTED]) &&
		    e->caps * 5 < e->freq[K_RAKE] * 4)
			s *= COMMON_WORD_WEIGHT;
	}
	e->score = s;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = *(const struct entry *const *)a;
	const struct entry *y = *(const struct entry *const *)b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->src_off < y->src_off ? -1 : x->src_off > y->src_off;
}

/* Does the normal form of e overlap (contain or sit inside) a chosen one? */
static int overlaps(const struct extractor *x, const struct entry *e,
		    struct entry *const *chosen, size_t n)
{
	const char *k = x->phrases.keys.data + e->key_off;

	for (size_t i = 0; i < n; i++) {
		const char *c = x->phrases.keys.data + chosen[i]->key_off;
		if (lp_match_find_normal(c, chosen[i]->key_len, k, e->key_len) ||
		    lp_match_find_normal(k, e->key_len, c, chosen[i]->key_len))
			return 1;
	}
	return 0;
}

/* The source form of a phrase with white space collapsed, in the arena. */
static const char *surface(struct extractor *x, const struct entry *e, struct lp_arena *a)
{
	const char *s = x->text + e->src_off;
	char *out = lp_arena_alloc(a, e->src_len + 1);
	size_t o = 0;
	int space = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < e->src_len; i++) {
		char c = s[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
			space = 1;
			continue;
		}
		if (space && o)
			out[o++] = ' ';
		space = 0;
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

static enum lp_status rank(struct extractor *x, size_t n, struct lp_arena *arena,
			   const char ***out, size_t *n_out)
{
	struct entry **v = NULL, **chosen;
	const char **res;
	size_t m = 0, k = 0;

	if (!x->phrases.slots.n || !n)
		return LP_OK;
	v = lp_mem_alloc(LP_MEM_SCRATCH, (x->phrases.slots.n + n) * sizeof(*v), x->d);
	res = lp_arena_alloc(arena, n * sizeof(*res));
	if (!v || !res) {
		lp_mem_free(v);
		return lp_diag_set(x->d, LP_E_NOMEM, NULL, 0, 0, "out of memory ranking keyphrases");
	}
	for (size_t i = 0; i < x->phrases.slots.cap; i++) {
		struct entry *e = lp_table_slot(&x->phrases.slots, i);
		if (!e->h)
			continue;
		score_entry(x, e);
		if (e->score > 0)
			v[m++] = e;
	}
	qsort(v, m, sizeof(*v), cmp_entry);
	chosen = v + m; /* room for n after the candidates */
	for (size_t i = 0; i < m && k < n; i++) {
		if (overlaps(x, v[i], chosen, k))
			continue;
		chosen[k] = v[i];
		if (!(res[k] = surface(x, v[i], arena))) {
			lp_mem_free(v);
			return lp_diag_set(x->d, LP_E_NOMEM, NULL, 0, 0,
					   "out of memory ranking keyphrases");
		}
		if (x->done) /* the occurrence was read again to copy it */
			x->done(x->ctx, v[i]->src_off, v[i]->src_len);
		k++;
	}
	lp_mem_free(v);
	*out = k ? res : NULL;
	*n_out = k;
	return LP_OK;
}

/* Between two pieces: nothing carries over from one to the next. */
static void piece_break(struct extractor *x)
{
	line_end(x);
	x->xref = 0;
	rake_flush(x);
	x->n_cjk = 0;
	x->have_num = 0;
	x->quote_close = 0;
	x->n_seen = 0;
}

/* Scan text[off, off + len), telling `done` about each step behind. */
static void scan_piece(struct extractor *x, size_t off, size_t len, lp_keyphrase_done_fn done,
		       void *ctx)
{
	size_t pos = off, end = off + len, told = off;
	struct lp_token t;

	while (!x->st && lp_match_token_next(x->text, end, &pos, &t)) {
		on_token(x, &t);
		if (done && t.off - told >= LP_KEYPHRASE_STEP) {
			done(ctx, told, t.off - told);
			told = t.off;
		}
	}
	if (done)
		done(ctx, told, end - told);
}

enum lp_status lp_keyphrase_extract(const char *text, size_t len, size_t n,
				    struct lp_arena *arena, const char ***out,
				    size_t *n_out, struct lp_diag *d)
{
	struct lp_span whole = { 0, len };

	return lp_keyphrase_extract_spans(text, &whole, 1, 0, n, arena, out, n_out, NULL, NULL, d);
}

enum lp_status lp_keyphrase_extract_spans(const char *text, const struct lp_span *spans,
					  size_t n_spans, size_t parts, size_t n,
					  struct lp_arena *arena,
					  const char ***out, size_t *n_out,
					  lp_keyphrase_done_fn done, void *ctx,
					  struct lp_diag *d)
{
	struct extractor x;
	enum lp_status st;

	*out = NULL;
	*n_out = 0;
	memset(&x, 0, sizeof(x));
	x.text = text;
	x.d = d;
	x.done = done;
	x.ctx = ctx;
	lp_buf_init(&x.norm);
	table_init(&x.phrases);
	table_init(&x.words);
	if (!(x.st = lp_table_grow(&x.phrases.slots, d)))
		x.st = lp_table_grow(&x.words.slots, d);
	if (parts > 1) {
		size_t total = 0;
		for (size_t i = 0; i < n_spans; i++)
			total += spans[i].len;
		x.n_parts = parts;
		x.part_bytes = total / parts + 1;
	}
	for (size_t i = 0; i < n_spans && !x.st; i++) {
		if (i)
			piece_break(&x);
		x.len = spans[i].off + spans[i].len;
		x.piece_off = spans[i].off;
		x.piece_at += i ? spans[i - 1].len : 0;
		scan_piece(&x, spans[i].off, spans[i].len, done, ctx);
	}
	line_end(&x);
	rake_flush(&x);
	st = x.st ? x.st : rank(&x, n, arena, out, n_out);
	table_release(&x.phrases);
	table_release(&x.words);
	lp_buf_release(&x.norm);
	return st;
}

/* ---- names a text repeats (lp_keyphrase_terms) ---------------------- */

struct term {
	size_t key, key_len; /* lower-case form, in the table's keys */
	size_t off, len;     /* first occurrence */
	size_t count;
};

struct terms {
	struct lp_buf keys;
	struct term t[LP_KEYPHRASE_TERMS_MAX];
	size_t n;
};

/* Bytes of an opening (open) or closing quote at s[0..len); 0: none. */
static size_t quote_len(const char *s, size_t len, int open)
{
	static const char *const q[2][5] = {
		{ "\xe2\x80\x9d", "\xe2\x80\x99", "\xe3\x80\x8d", "\xe3\x80\x8f", NULL },
		{ "\xe2\x80\x9c", "\xe2\x80\x98", "\xe3\x80\x8c", "\xe3\x80\x8e", NULL },
	};

	if (len && (s[0] == '\'' || s[0] == '"' || s[0] == '`'))
		return 1;
	for (size_t i = 0; q[open][i]; i++)
		if (len >= 3 && !memcmp(s, q[open][i], 3))
			return 3;
	return 0;
}

/* Count text[off, off + len) as one occurrence of a name. */
static enum lp_status term_add(struct terms *ts, const char *text, size_t off, size_t len,
			       struct lp_diag *d)
{
	char low[LP_GROUND_MAX_TOKEN];
	size_t n = len <= sizeof(low) ? lp_match_lower(text + off, len, low, sizeof(low)) : 0;

	if (n < 3 || n > sizeof(low))
		return LP_OK;
	for (size_t i = 0; i < ts->n; i++)
		if (ts->t[i].key_len == n && !memcmp(ts->keys.data + ts->t[i].key, low, n)) {
			ts->t[i].count++;
			return LP_OK;
		}
	if (ts->n == LP_KEYPHRASE_TERMS_MAX)
		return LP_OK;
	ts->t[ts->n] = (struct term){ ts->keys.len, n, off, len, 1 };
	if (lp_buf_add(&ts->keys, low, n))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for names");
	ts->n++;
	return LP_OK;
}

/* Is s[0..len) a word of letters, digits, '_' and '-' (a command)? */
static int command_name(const char *s, size_t len)
{
	int alpha = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!(c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') ||
		      ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')))
			return 0;
		alpha |= (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
	}
	return alpha;
}

/* Does byte c belong to a name (letters, digits, '_', '-')? */
static int name_byte(char c)
{
	return c == '_' || c == '-' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* The names of text[0..len) (see keyphrase.h) into ts. */
static enum lp_status term_scan(struct terms *ts, const char *text, size_t len,
				struct lp_diag *d)
{
	size_t cap = lp_ground_tokens(text, len, NULL, 0), n;
	struct lp_ground_token *tok = lp_mem_alloc(LP_MEM_SCRATCH, (cap + 1) * sizeof(*tok), d);
	enum lp_status st = tok ? LP_OK : LP_E_NOMEM;

	n = tok ? lp_ground_tokens(text, len, tok, cap) : 0;
	for (size_t i = 0; i < n && i < cap && !st; i++) {
		size_t off = tok[i].off, l = tok[i].len, q;
		if (tok[i].kind == LP_GROUND_NUMBER)
			continue;
		if (tok[i].kind == LP_GROUND_QUOTED) {
			if ((q = quote_len(text + off, l, 1)) != 0) {
				off += q;
				l -= q;
			}
			for (size_t k = 1; k <= 3 && k <= l; k++)
				if (quote_len(text + off + l - k, k, 0) == k) {
					l -= k;
					break;
				}
			if (!command_name(text + off, l) &&
			    !(l && (text[off] == '/' || text[off] == '~' || text[off] == '-')))
				continue; /* several words, or not a name */
			for (size_t k = 0; k < l; k++)
				if (text[off + k] == ' ')
					l = 0;
		}
		st = term_add(ts, text, off, l, d);
	}
	lp_mem_free(tok);
	/* "journalctl(1)": a command with its manual section */
	for (size_t i = 0; i + 3 <= len && !st; i++) {
		size_t b = i;
		if (text[i] != '(' || !i || text[i + 1] < '1' || text[i + 1] > '9' ||
		    text[i + 2] != ')')
			continue;
		while (b > 0 && command_name(text + b - 1, 1))
			b--;
		while (b < i && (text[b] == '-' || text[b] == '.'))
			b++;
		if (i - b >= 2 && command_name(text + b, i - b))
			st = term_add(ts, text, b, i - b, d);
	}
	/* a name counts wherever its word occurs ("journalctl -b" in a table
	 * after "journalctl(1)" in the text), as a whole word, case aside */
	for (size_t t = 0; t < ts->n && !st; t++) {
		const char *key = ts->keys.data + ts->t[t].key;
		size_t kl = ts->t[t].key_len, c = 0;
		for (size_t i = 0; i + kl <= len; i++)
			if (!strncasecmp(text + i, key, kl) && (!i || !name_byte(text[i - 1])) &&
			    (i + kl == len || !name_byte(text[i + kl])))
				c++;
		ts->t[t].count = c > ts->t[t].count ? c : ts->t[t].count;
	}
	return st ? lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for names") : LP_OK;
}

/* Is name t's lower-case form inside one of chosen[0..k)? */
static int part_of_chosen(const struct terms *ts, size_t t, const char **chosen, size_t k)
{
	const char *key = ts->keys.data + ts->t[t].key;
	size_t kl = ts->t[t].key_len;

	for (size_t j = 0; j < k; j++)
		for (size_t i = 0; i + kl <= strlen(chosen[j]); i++)
			if (!strncasecmp(chosen[j] + i, key, kl))
				return 1;
	return 0;
}

enum lp_status lp_keyphrase_terms(const char *text, size_t len, size_t n,
				  struct lp_arena *arena, const char ***out, size_t *n_out,
				  struct lp_diag *d)
{
	struct terms *ts = lp_mem_calloc(LP_MEM_SCRATCH, 1, sizeof(*ts), d);
	enum lp_status st = ts ? LP_OK : LP_E_NOMEM;
	const char **res = NULL;
	size_t k = 0;

	*out = NULL;
	*n_out = 0;
	if (!st) {
		lp_buf_init(&ts->keys);
		st = term_scan(ts, text, len, d);
	}
	/* the most frequent first, ties in the order seen (a stable
	 * selection: the table is small) */
	if (!st && n && !(res = lp_arena_alloc(arena, n * sizeof(*res))))
		st = LP_E_NOMEM;
	while (!st && k < n) {
		size_t best = ts->n;
		for (size_t i = 0; i < ts->n; i++)
			if (ts->t[i].count >= 2 && (best == ts->n || ts->t[i].count > ts->t[best].count))
				best = i;
		if (best == ts->n)
			break;
		ts->t[best].count = 0;
		if (part_of_chosen(ts, best, res, k))
			continue; /* "bashrc" after "~/.bashrc" */
		if (!(res[k++] = lp_arena_strndup(arena, text + ts->t[best].off, ts->t[best].len)))
			st = LP_E_NOMEM;
	}
	if (ts) {
		lp_buf_release(&ts->keys);
		lp_mem_free(ts);
	}
	if (st)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for names");
	*out = k ? res : NULL;
	*n_out = k;
	return LP_OK;
}
