/*
 * words.c - content words and held words (words.h).
 */
#include "text/words.h"

#include <strings.h>

int lp_words_is_content(const char *s, const struct lp_token *t)
{
	char low[LP_WORDS_CONTENT_BYTES];
	size_t n;

	if (t->kind != LP_TOKEN_WORD)
		return t->kind == LP_TOKEN_CJK;
	n = lp_match_lower(s + t->off, t->len, low, sizeof(low));
	return n >= 3 && n <= sizeof(low) && !lp_match_is_stopword(low, n);
}

/* Does token t of s count under flags? */
static int counts(const char *s, const struct lp_token *t, unsigned flags)
{
	if (flags & LP_WORDS_CONTENT)
		return lp_words_is_content(s, t);
	return t->kind != LP_TOKEN_PUNCT;
}

int lp_words_same(const char *a, const struct lp_token *ta, const char *b,
		  const struct lp_token *tb)
{
	return ta->len == tb->len && !strncasecmp(a + ta->off, b + tb->off, ta->len);
}

int lp_words_has(const char *a, const struct lp_token *t, const char *b, size_t blen)
{
	struct lp_token u;
	size_t pos = 0;

	while (lp_match_token_next(b, blen, &pos, &u))
		if (lp_words_same(a, t, b, &u))
			return 1;
	return 0;
}

size_t lp_words_held(const char *s, size_t len, unsigned flags, const char *b, size_t blen,
		     size_t *total)
{
	struct lp_token t;
	size_t pos = 0, n = 0, held = 0;

	while (lp_match_token_next(s, len, &pos, &t)) {
		if (!counts(s, &t, flags))
			continue;
		n++;
		held += lp_words_has(s, &t, b, blen);
	}
	if (total)
		*total = n;
	return held;
}

enum lp_status lp_words_held_in(const char *s, size_t len, unsigned flags, struct lp_match *in,
				size_t *held, size_t *total)
{
	struct lp_token t;
	size_t pos = 0, n = 0, h = 0;
	enum lp_status st = LP_OK;

	while (!st && lp_match_token_next(s, len, &pos, &t)) {
		int found = 0;

		if (!counts(s, &t, flags))
			continue;
		n++;
		st = lp_match_contains(in, s + t.off, t.len, &found);
		h += found;
	}
	*held = h;
	if (total)
		*total = n;
	return st;
}
