/*
 * points.c - parse, clean, check and select a model's points (points.h).
 */
#include "text/points.h"

#include "text/ground.h"
#include "text/sentence.h"
#include "text/words.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "core/utf8.h"

/* Length of a list marker at s (a line's first non-blank byte), with the
 * white space after it; 0 when the line is not a list item. */
static size_t marker_len(const char *s, size_t len)
{
	size_t i = 0;

	if (len >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && (s[1] == ' ' || s[1] == '\t'))
		return 2;
	if (len >= 2 && !memcmp(s, "\xc2\xb7", 2)) /* · */
		return 2;
	if (len >= 3 && !memcmp(s, "\xe2\x80\xa2", 3)) /* • */
		return 3;
	while (i < len && i < 3 && s[i] >= '0' && s[i] <= '9')
		i++;
	if (!i || i == len)
		return 0;
	if ((s[i] == '.' || s[i] == ')') && (i + 1 == len || s[i + 1] == ' ' || s[i + 1] == '\t'))
		return i + 1;
	if (len - i >= 3 && (!memcmp(s + i, "\xe3\x80\x81", 3) || /* 、 */
			     !memcmp(s + i, "\xef\xbc\x8e", 3)))  /* ． */
		return i + 3;
	return 0;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Trim span [a, b) of s and append it to out when it holds 3+ words. */
static size_t add_point(const char *s, size_t a, size_t b, struct lp_span *out, size_t n,
			size_t cap)
{
	while (a < b && blank(s[a]))
		a++;
	while (b > a && blank(s[b - 1]))
		b--;
	if (n < cap && lp_match_count_words(s + a, b - a) >= 3) {
		out[n].off = a;
		out[n].len = b - a;
		n++;
	}
	return n;
}

size_t lp_points_parse(const char *gen, size_t len, struct lp_span *out, size_t cap)
{
	size_t n = 0, pos = 0, items = 0;
	struct lp_span sp;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t line = 0; line < len;) {
			size_t end = line, a = line;
			while (end < len && gen[end] != '\n')
				end++;
			while (a < end && (gen[a] == ' ' || gen[a] == '\t'))
				a++;
			size_t m = marker_len(gen + a, end - a);
			if (m && !pass)
				items++;
			else if (m)
				n = add_point(gen, a + m, end, out, n, cap);
			line = end + 1;
		}
		if (!items)
			break;
	}
	if (items)
		return n;
	while (lp_sentence_next(gen, len, &pos, &sp))
		n = add_point(gen, sp.off, sp.off + sp.len, out, n, cap);
	return n;
}

/* Openers that are talk about the text whatever follows. */
static const char *const meta_always[] = {
	"this text", "this passage", "this document", "this article", "this summary",
	"this chapter", "this section", "this manual", "this manpage", "this man page",
	"this manual page", "this guide", "this tutorial", "this book", "this page", "in summary", "to summarize", "to summarise",
	"to sum up", "in conclusion", "here are", "here is", "here's", "according to the",
	"in this text", "in this passage", "in this document", "in the text", "in the passage",
	"the main points", "the key points", "the key facts", "the main facts",
	"the most important", "the above", "the given text", "the provided text", "summary:",
	"sure,", "sure!", "i hope", "let me know", "note that the text", "overall, the text",
	NULL};

/* A document naming itself, anywhere in a sentence: the sentence is about
 * the document ("If any discrepancies occur between this manpage and the
 * manual, ..."), not its subject. */
static const char *const meta_self[] = {
	"this manpage", "this man page", "this manual page", "this manual", "this document",
	"this guide", NULL};

/* "the <subject>" openers are meta only before a verb of talk: "The text
 * describes", not "The text editor". */
static const char *const meta_subjects[] = {
	"the text", "the passage", "the document", "the article", "the summary", "the author",
	"the section", "the chapter", "the writer", NULL};
static const char *const meta_verbs[] = {
	"describes", "discusses", "explains", "provides", "is", "covers", "mentions", "talks",
	"introduces", "highlights", "states", "says", "outlines", "presents", "focuses",
	"contains", "emphasizes", "emphasises", "suggests", "notes", "shows", "gives", "lists",
	"deals", "also", "aims", "seems", "begins", "starts", "concludes", "refers", "includes",
	"appears", "goes", "then", "was", "will", "can", "should", "does", "has", "offers",
	"details", "summarizes", "summarises", "touches", "argues", "above", "provided",
	"given", NULL};

static const char *const meta_cjk[] = {
	"本文", "本节", "本章", "这段文字", "这段文本", "这段话", "这篇文章", "该文本", "该文章",
	"该段", "文本描述", "文本介绍", "文本讨论", "文本提到", "文本说明", "文本主要", "文章描述",
	"文章介绍", "文章讨论", "文章提到", "文章主要", "上文", "原文", "总结", "摘要", "以下是",
	"综上", "总之", "总而言之", NULL};

/* Does the lower-case ASCII text t[0..n) start with the word(s) w, ending
 * at a word boundary? */
static int starts_word(const char *t, size_t n, const char *w)
{
	size_t k = strlen(w);
	char c;

	if (k > n || memcmp(t, w, k))
		return 0;
	c = k < n ? t[k] : ' ';
	return !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
}

/* Does s[0..len) hold the lower-case words w as whole words, case aside? */
static int holds_words(const char *s, size_t len, const char *w)
{
	size_t k = strlen(w);

	for (size_t i = 0; i + k <= len; i++)
		if (!strncasecmp(s + i, w, k) && (i == 0 || !isalnum((unsigned char)s[i - 1])) &&
		    (i + k == len || !isalnum((unsigned char)s[i + k])))
			return 1;
	return 0;
}

int lp_points_is_meta(const char *s, size_t len)
{
	char low[64];
	size_t n = 0, a = 0;

	while (a < len && (blank(s[a]) || s[a] == '"' || s[a] == '\'' || s[a] == '*'))
		a++;
	for (size_t k = 0; meta_cjk[k]; k++)
		if (len - a >= strlen(meta_cjk[k]) && !memcmp(s + a, meta_cjk[k], strlen(meta_cjk[k])))
			return 1;
	for (; a < len && n < sizeof(low); a++, n++)
		low[n] = (s[a] >= 'A' && s[a] <= 'Z') ? (char)(s[a] - 'A' + 'a') : s[a];
	for (size_t k = 0; meta_always[k]; k++)
		if (starts_word(low, n, meta_always[k]))
			return 1;
	for (size_t k = 0; meta_self[k]; k++)
		if (holds_words(s, len, meta_self[k]))
			return 1;
	for (size_t k = 0; meta_subjects[k]; k++) {
		size_t m = strlen(meta_subjects[k]);
		if (!starts_word(low, n, meta_subjects[k]) || m + 1 >= n)
			continue;
		for (size_t v = 0; meta_verbs[v]; v++)
			if (starts_word(low + m + 1, n - m - 1, meta_verbs[v]))
				return 1;
	}
	return 0;
}

/* Bytes of the white space code point at s[i] (no-break space too), 0
 * when there is none. */
static size_t space_at(const char *s, size_t end, size_t i)
{
	uint32_t cp;
	int k;

	if (i >= end)
		return 0;
	if (blank(s[i]))
		return 1;
	k = lp_utf8_decode((const unsigned char *)s + i, end - i, &cp);
	return k > 1 && lp_utf8_is_space(cp) ? (size_t)k : 0;
}

size_t lp_points_clean(const char *s, size_t len, char *out)
{
	size_t pos = 0, n = 0;
	struct lp_span sp;

	while (lp_sentence_next(s, len, &pos, &sp)) {
		if (lp_points_is_meta(s + sp.off, sp.len))
			continue;
		if (n && (unsigned char)out[n - 1] < 0x80)
			out[n++] = ' ';
		for (size_t i = sp.off; i < sp.off + sp.len; i++) {
			if (s[i] == '*' && i + 1 < sp.off + sp.len && s[i + 1] == '*') {
				i++;
				continue;
			}
			if (space_at(s, sp.off + sp.len, i)) { /* one space, none in CJK */
				size_t k;
				while ((k = space_at(s, sp.off + sp.len, i)))
					i += k;
				if (!(n && (unsigned char)out[n - 1] >= 0x80 && i < sp.off + sp.len &&
				      (unsigned char)s[i] >= 0x80))
					out[n++] = ' ';
				i--;
				continue;
			}
			out[n++] = s[i];
		}
	}
	while (n && blank(out[n - 1]))
		n--;
	out[n] = '\0';
	return n;
}

/* Tokens checked per point; a point holding more is refused whole. */
#define POINT_MAX_FACTS 128

enum lp_status lp_points_check(struct lp_match *src, const char *s, size_t len,
			       size_t *n_facts, size_t *n_missing)
{
	struct lp_ground_token tok[POINT_MAX_FACTS];
	size_t n = lp_ground_tokens(s, len, tok, POINT_MAX_FACTS);
	enum lp_status st = LP_OK;

	*n_facts = n;
	*n_missing = n > POINT_MAX_FACTS ? n - POINT_MAX_FACTS : 0;
	for (size_t i = 0; i < n && i < POINT_MAX_FACTS && !st; i++) {
		int found = 0;
		st = lp_match_contains(src, s + tok[i].off, tok[i].len, &found);
		*n_missing += !found;
	}
	return st;
}

/* Does s[0..len) end as a sentence (text/sentence.h), and not in an
 * ellipsis: "[JOBSPEC ...]" is a synopsis? */
static int ends_sentence(const char *s, size_t len)
{
	len = lp_sentence_trim_closers(s, len);
	if (len >= 2 && s[len - 1] == '.' && s[len - 2] == '.')
		return 0;
	return lp_sentence_mark_before(s, len) != 0;
}

/* Bytes of s[0..len) inside "..." or “...” (a cross-reference such as
 * 'See Section 3.5, “System management”' is mostly titles). */
static size_t quoted_bytes(const char *s, size_t len)
{
	size_t in = 0, open = 0, ascii = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"') {
			ascii = !ascii;
		} else if (len - i >= 3 && !memcmp(s + i, "\xe2\x80\x9c", 3)) {
			open = 1;
			i += 2;
		} else if (len - i >= 3 && !memcmp(s + i, "\xe2\x80\x9d", 3)) {
			open = 0;
			i += 2;
		} else {
			in += ascii || open;
		}
	}
	return in;
}

/* Does s[0..len) end by pointing at what comes next ("... provides the
 * following.", "... as shown below.", "...如下。")? Alone, it says nothing. */
static int points_ahead(const char *s, size_t len)
{
	static const char *const ends[] = { "following.", "following:", "below.", "below:",
					    "\xe5\xa6\x82\xe4\xb8\x8b\xe3\x80\x82", /* 如下。 */
					    NULL };

	while (len && blank(s[len - 1]))
		len--;
	for (size_t k = 0; ends[k]; k++) {
		size_t n = strlen(ends[k]);
		if (len >= n && !strncasecmp(s + len - n, ends[k], n) &&
		    (len == n || (unsigned char)s[len - n - 1] >= 0x80 || blank(s[len - n - 1])))
			return 1;
	}
	return 0;
}

/* Does s[0..len) open with a lower-case function word ("should give you
 * access to ...", "and then ...")? It is the rest of a sentence an example
 * or a line cut in two, not one of its own. */
static int continues(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] >= 'a' && s[n] <= 'z')
		n++;
	return n && (n == len || !isalnum((unsigned char)s[n])) && lp_match_is_stopword(s, n);
}

/* Does s[0..len) send the reader elsewhere for what it is about ("For a
 * detailed discussion, refer to the GNU Tar Manual.", "See the FAQ for
 * more.")? An opener of the kind, then "see", "refer to" or "consult":
 * it says where to read, not what. */
static int points_away(const char *s, size_t len)
{
	static const char *const opens[] = { "see ", "refer to ", "consult ", "for more",
					     "for a detailed", "for details", "for further",
					     "for a full", "for a complete", NULL };
	static const char *const verbs[] = { " see ", " refer to ", " consult ", NULL };
	char low[160];
	size_t n = len < sizeof(low) - 1 ? len : sizeof(low) - 1;

	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[n] = '\0';
	for (size_t k = 0; opens[k]; k++) {
		if (strncmp(low, opens[k], strlen(opens[k])))
			continue;
		if (k < 3)
			return 1;
		for (size_t v = 0; verbs[v]; v++)
			if (strstr(low, verbs[v]))
				return 1;
	}
	return 0;
}

int lp_points_is_prose(const char *s, size_t len)
{
	size_t a = 0, i = 0, bars = 0, brackets = 0, letters = 0, ink = 0, words = 0, cjk = 0;
	size_t pos = 0;
	struct lp_token t;

	while (a < len && blank(s[a]))
		a++;
	if (a == len || strchr("#$%>|*+", s[a]))
		return 0;
	for (i = a; i < len && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'); i++)
		;
	if (i > a && i < len && s[i - 1] == '.' && blank(s[i])) /* "1.2.3. Title" */
		return 0;
	for (i = a; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		bars += c == '|';
		brackets += c == '[' || c == '{' || c == '<';
		ink += !blank((char)c);
		letters += c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
	}
	while (lp_match_token_next(s, len, &pos, &t)) {
		words += t.kind == LP_TOKEN_WORD;
		cjk += t.kind == LP_TOKEN_CJK;
	}
	return bars <= 1 && brackets <= 3 && letters * 10 >= ink * 6 && (words >= 6 || cjk >= 12) &&
	       quoted_bytes(s + a, len - a) * 3 <= len - a && ends_sentence(s, len) &&
	       !points_ahead(s, len) && !points_away(s + a, len - a) && !continues(s + a, len - a);
}

/* Is token t of s a negation? */
static int negation(const char *s, const struct lp_token *t)
{
	static const char *const neg[] = {"not", "no", "never", "without", "cannot", "nor",
					  "none", "if", "unless", "only", "except", NULL};
	static const char *const neg_cjk[] = {"\xe4\xb8\x8d", "\xe6\xb2\xa1", "\xe6\x97\xa0",
					      "\xe9\x9d\x9e", "\xe6\x9c\xaa", "\xe5\x88\xab",
					      NULL}; /* 不 没 无 非 未 别 */
	const char *w = s + t->off;

	if (t->kind == LP_TOKEN_CJK) {
		for (size_t k = 0; neg_cjk[k]; k++)
			if (t->len == 3 && !memcmp(w, neg_cjk[k], 3))
				return 1;
		return 0;
	}
	if (t->kind != LP_TOKEN_WORD)
		return 0;
	if ((t->len >= 3 && !strncmp(w + t->len - 3, "n't", 3)) ||
	    (t->len >= 5 && !strncmp(w + t->len - 5, "n\xe2\x80\x99t", 5)))
		return 1;
	for (size_t k = 0; neg[k]; k++)
		if (strlen(neg[k]) == t->len && !strncasecmp(w, neg[k], t->len))
			return 1;
	return 0;
}

int lp_points_faithful(const char *short_, size_t slen, const char *orig, size_t olen)
{
	struct lp_token t, u;
	size_t pos = 0, opos = 0, total = 0, matched = 0;

	while (lp_match_token_next(short_, slen, &pos, &t)) {
		size_t p = opos;
		if (t.kind == LP_TOKEN_PUNCT)
			continue;
		total++;
		while (lp_match_token_next(orig, olen, &p, &u))
			if (lp_words_same(short_, &t, orig, &u)) {
				matched++;
				opos = p;
				break;
			}
	}
	if (!total || (double)matched < LP_POINTS_IN_ORDER * (double)total)
		return 0;
	for (pos = 0; lp_match_token_next(orig, olen, &pos, &u);)
		if (negation(orig, &u) && !lp_words_has(orig, &u, short_, slen))
			return 0;
	return 1;
}

/* Share (x 100) of the words of a that b holds as words (text/words.h). */
static size_t words_in(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t total, found = lp_words_held(a, alen, 0, b, blen, &total);

	return total ? 100 * found / total : 100;
}

/* Whether s[0..len) holds a word (or a CJK character). */
static int has_words(const char *s, size_t len)
{
	struct lp_token t;
	size_t pos = 0;

	while (lp_match_token_next(s, len, &pos, &t))
		if (t.kind != LP_TOKEN_PUNCT)
			return 1;
	return 0;
}

/* Whether every negation of a occurs in b as a word. */
static int negations_in(const char *a, size_t alen, const char *b, size_t blen)
{
	struct lp_token t;
	size_t pos = 0;

	while (lp_match_token_next(a, alen, &pos, &t))
		if (negation(a, &t) && !lp_words_has(a, &t, b, blen))
			return 0;
	return 1;
}

int lp_points_backed(const char *s, size_t len, const char *src, size_t srclen)
{
	size_t pos = 0;
	struct lp_span a, b;
	int more;

	if (!has_words(s, len))
		return 0;
	more = lp_sentence_next(src, srclen, &pos, &a);
	while (more) {
		size_t end = a.off + a.len;

		more = lp_sentence_next(src, srclen, &pos, &b);
		for (int with_next = 0; with_next <= more; with_next++) {
			const char *w = src + a.off;
			size_t wl = (with_next ? b.off + b.len : end) - a.off;

			if (words_in(s, len, w, wl) >= LP_POINTS_BACKED &&
			    negations_in(s, len, w, wl) && negations_in(w, wl, s, len))
				return 1;
		}
		a = b;
	}
	return 0;
}

int lp_points_similar(const char *a, size_t alen, const char *b, size_t blen)
{
	return words_in(a, alen, b, blen) >= 80 && words_in(b, blen, a, alen) >= 80;
}

size_t lp_points_cost(const char *s, size_t len)
{
	struct lp_token t;
	size_t pos = 0, words = 0, han = 0;

	while (lp_match_token_next(s, len, &pos, &t)) {
		words += t.kind == LP_TOKEN_WORD;
		han += t.kind == LP_TOKEN_CJK;
	}
	return (size_t)(LP_POINTS_TOKENS_PER_WORD *
			((double)words + (double)han / LP_POINTS_HAN_PER_WORD) + 0.5);
}

/* The weight of the topics point i holds that *covered does not. */
static double gain(const struct lp_points_cover *c, size_t i, uint64_t covered)
{
	uint64_t fresh;
	double g = 0;

	if (!c)
		return 0;
	fresh = c->holds[i] & ~covered;
	for (size_t k = 0; k < c->n && k < 64; k++)
		if (fresh >> k & 1)
			g += c->w[k];
	return g;
}

/* Index of the best point of pts[a..b) that fits `left` (its score plus
 * the weight of the topics it adds); n when none does. *g: that weight. */
static size_t best_in(const struct lp_point *pts, size_t a, size_t b, size_t left, size_t n,
		      const struct lp_points_cover *c, uint64_t covered, double *g)
{
	size_t best = n;
	double best_v = 0;

	*g = 0;
	for (size_t i = a; i < b; i++) {
		double gi = gain(c, i, covered), v = pts[i].score + gi;
		if (pts[i].cost <= left && (best == n || v > best_v)) {
			best = i;
			best_v = v;
			*g = gi;
		}
	}
	return best;
}

static void take(const struct lp_point *pts, size_t i, const struct lp_points_cover *c,
		 unsigned char *keep, size_t *used, size_t *kept, uint64_t *covered)
{
	keep[i] |= 1;
	*used += pts[i].cost;
	(*kept)++;
	if (c)
		*covered |= c->holds[i];
}

/* The round that does not fit whole: its points one at a time, the one
 * that adds the most topics first (then the better scored, then the
 * earlier), while any fits. */
static void last_round(const struct lp_point *pts, size_t n, size_t r, size_t budget,
		       const struct lp_points_cover *c, unsigned char *keep, size_t *used,
		       size_t *kept, uint64_t *covered)
{
	for (;;) {
		size_t best = n;
		double best_g = 0;
		for (size_t i = 0; i < n; i++) {
			double g;
			if (pts[i].rank != r || keep[i] || *used + pts[i].cost > budget)
				continue;
			g = gain(c, i, *covered);
			if (best == n || g > best_g ||
			    (c && g == best_g && pts[i].score > pts[best].score))
				best = i, best_g = g;
		}
		if (best == n)
			return;
		take(pts, best, c, keep, used, kept, covered);
	}
}

/* The end of the group of `per` consecutive inputs that starts at a. */
static size_t group_end(const struct lp_point *pts, size_t n, size_t a, size_t per)
{
	size_t b = a, seen = 0;

	while (b < n && (seen < per || pts[b].input == pts[b - 1].input)) {
		seen += b == a || pts[b].input != pts[b - 1].input;
		b++;
	}
	return b;
}

#define SERVED 2 /* in keep[]: see lp_points_select */

size_t lp_points_select(const struct lp_point *pts, size_t n, size_t budget,
			const struct lp_points_cover *c, unsigned char *keep)
{
	size_t used = 0, kept = 0, rank0 = 0, n_rank0 = 0, n_inputs = 0, room, per;
	uint64_t covered = 0;

	memset(keep, 0, n);
	for (size_t i = 0; i < n; i++) {
		n_inputs += !i || pts[i].input != pts[i - 1].input;
		if (pts[i].rank == 0) {
			rank0 += pts[i].cost;
			n_rank0++;
		}
	}
	if (!n)
		return 0;
	if (rank0 <= budget) {
		for (size_t r = 0;; r++) {
			size_t cost = 0, met = 0;
			for (size_t i = 0; i < n; i++)
				if (pts[i].rank == r) {
					cost += pts[i].cost;
					met++;
				}
			if (!met)
				return kept;
			if (used + cost > budget) {
				last_round(pts, n, r, budget, c, keep, &used, &kept, &covered);
				return kept;
			}
			for (size_t i = 0; i < n; i++)
				if (pts[i].rank == r)
					take(pts, i, c, keep, &used, &kept, &covered);
		}
	}
	/* groups of `per` consecutive inputs, one point each */
	per = (rank0 + n_rank0 - 1) / (n_rank0 ? n_rank0 : 1); /* average cost */
	room = budget / (per ? per : 1);
	room = room ? room : 1;
	per = (n_inputs + room - 1) / room;
	/* each group its best point; the group whose point adds the most
	 * topics goes first, so that the budget runs out on the others. A
	 * group whose turn is over has SERVED set on its first point. */
	for (;;) {
		size_t best_a = n, best_i = n;
		double best_gain = -1;
		for (size_t a = 0, b; a < n; a = b) {
			double g;
			size_t i;
			b = group_end(pts, n, a, per);
			if (keep[a] & SERVED)
				continue;
			i = best_in(pts, a, b, budget - used, n, c, covered, &g);
			if (best_a == n || g > best_gain) {
				best_a = a;
				best_i = i;
				best_gain = g;
			}
		}
		if (best_a == n)
			break;
		if (best_i < n)
			take(pts, best_i, c, keep, &used, &kept, &covered);
		keep[best_a] |= SERVED;
	}
	for (size_t i = 0; i < n; i++)
		keep[i] &= (unsigned char)~SERVED;
	return kept;
}
