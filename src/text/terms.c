#include "text/terms.h"

#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "text/match.h"

enum char_class { CLASS_SEP, CLASS_WORD, CLASS_CJK };

void lp_terms_init(struct lp_terms *it, const char *text, size_t len, unsigned flags)
{
	memset(it, 0, sizeof(*it));
	it->s = (const unsigned char *)text;
	it->len = len;
	it->flags = flags;
}

/* Decode the character at it->pos, folded to the form terms are made of.
 * Returns its byte length (an invalid byte counts as a 1-byte separator). */
static size_t peek(const struct lp_terms *it, uint32_t *cp, enum char_class *cls)
{
	unsigned char c = it->s[it->pos];
	int n;

	if (c < 0x80) {
		/* ASCII fast path: most text is mostly ASCII. */
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		*cp = c;
		*cls = ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? CLASS_WORD : CLASS_SEP;
		return 1;
	}
	n = lp_utf8_decode(it->s + it->pos, it->len - it->pos, cp);
	if (n == 0) {
		*cls = CLASS_SEP;
		return 1;
	}
	if (*cp >= 0xFF01 && *cp <= 0xFF5E)
		*cp -= 0xFEE0; /* fullwidth ASCII variant */
	if (!lp_utf8_is_alnum(*cp))
		*cls = CLASS_SEP;
	else if (lp_utf8_is_cjk(*cp))
		*cls = CLASS_CJK;
	else {
		*cls = CLASS_WORD;
		*cp = lp_utf8_tolower(*cp);
	}
	return (size_t)n;
}

static size_t put_cjk(struct lp_terms *it, size_t at, uint32_t cp)
{
	return at + (size_t)lp_utf8_encode(cp, (unsigned char *)it->term + at);
}

/* Append the ASCII letters and digits at it->pos, lower-cased, while the
 * term is shorter than `cap`; returns the new length. Most text is mostly
 * ASCII, so this loop does most of the work. */
static size_t read_ascii(struct lp_terms *it, size_t blen, size_t cap)
{
	while (it->pos < it->len) {
		unsigned char c = it->s[it->pos];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			break;
		if (blen < cap)
			it->term[blen++] = (char)c;
		it->pos++;
	}
	return blen;
}

/* Read a run of word characters into it->term; returns its length. */
static size_t read_word(struct lp_terms *it)
{
	size_t blen = 0, cap = LP_TERMS_MAX_BYTES; /* cap drops once a character is cut */
	uint32_t cp;
	enum char_class cls;

	for (;;) {
		blen = read_ascii(it, blen, cap);
		if (it->pos >= it->len)
			break;
		size_t n = peek(it, &cp, &cls);
		unsigned char enc[4];
		int k;

		if (cls != CLASS_WORD)
			break;
		it->pos += n;
		k = lp_utf8_encode(cp, enc);
		if (blen + (size_t)k <= cap) {
			memcpy(it->term + blen, enc, (size_t)k);
			blen += (size_t)k;
		} else {
			cap = blen;
		}
	}
	it->term[blen] = '\0';
	return blen;
}

/* End the current CJK run; a run of one character becomes a unigram.
 * Returns that unigram's length, or 0 when nothing is to be emitted. */
static size_t end_cjk_run(struct lp_terms *it)
{
	size_t blen = 0;

	if (it->cjk_run == 1)
		blen = put_cjk(it, 0, it->cjk_prev);
	it->cjk_run = 0;
	it->term[blen] = '\0';
	return blen;
}

int lp_terms_next(struct lp_terms *it, const char **term, size_t *len)
{
	uint32_t cp;
	enum char_class cls;
	size_t blen;

	for (;;) {
		if (it->pos >= it->len) {
			if ((blen = end_cjk_run(it)))
				goto emit;
			return 0;
		}
		size_t n = peek(it, &cp, &cls);
		if (cls == CLASS_CJK) {
			it->pos += n;
			if (it->cjk_run++ == 0) {
				it->cjk_prev = cp;
				continue;
			}
			blen = put_cjk(it, put_cjk(it, 0, it->cjk_prev), cp);
			it->term[blen] = '\0';
			it->cjk_prev = cp;
			goto emit;
		}
		/* The run ends here; the character is read on the next call. */
		if ((blen = end_cjk_run(it)))
			goto emit;
		if (cls == CLASS_SEP) {
			it->pos += n;
			continue;
		}
		blen = read_word(it);
		if ((it->flags & LP_TERMS_STOPWORDS) && lp_match_is_function_word(it->term, blen))
			continue;
		goto emit;
	}
emit:
	*term = it->term;
	*len = blen;
	return 1;
}
