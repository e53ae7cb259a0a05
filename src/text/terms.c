#include "text/terms.h"

#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "text/match.h"
#include "text/scan.h"

/* Terms are read with fullwidth ASCII folded and words not joined
 * across connectors: "don't" gives "don" and "t" (text/scan.h). */
#define TERMS_SCAN LP_SCAN_FOLD_WIDTH

void lp_terms_init(struct lp_terms *it, const char *text, size_t len, unsigned flags)
{
	memset(it, 0, sizeof(*it));
	it->s = (const unsigned char *)text;
	it->len = len;
	it->flags = flags;
}

static size_t put_cjk(struct lp_terms *it, size_t at, uint32_t cp)
{
	return at + (size_t)lp_utf8_encode(cp, (unsigned char *)it->term + at);
}

/* Read the word at it->pos (text/scan.h) into it->term, lower-cased and
 * cut at the last whole character that fits; returns its length. */
static size_t read_word(struct lp_terms *it)
{
	const char *s = (const char *)it->s;
	size_t end = lp_scan_word_end(s, it->len, it->pos, TERMS_SCAN), blen = 0;
	enum lp_scan_class cls;
	unsigned char enc[4];
	uint32_t cp;
	int k;

	while (it->pos < end) {
		unsigned char c = it->s[it->pos];

		if (c < 0x80) {
			/* most words are ASCII: no decoding */
			if (blen >= LP_TERMS_MAX_BYTES)
				break;
			it->term[blen++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
			it->pos++;
			continue;
		}
		it->pos += lp_scan_char(s, it->len, it->pos, TERMS_SCAN, &cp, &cls);
		k = lp_utf8_encode(lp_utf8_tolower(cp), enc);
		if (blen + (size_t)k > LP_TERMS_MAX_BYTES)
			break;
		memcpy(it->term + blen, enc, (size_t)k);
		blen += (size_t)k;
	}
	it->pos = end;
	it->term[blen] = '\0';
	return blen;
}

/* Is cp a Chinese question word's character (什么, 哪, 怎, 谁, 吗, 呢,
 * 何 of 如何 and 为何)? */
static int zh_asking(uint32_t cp)
{
	return cp == 0x4EC0 || cp == 0x4E48 || cp == 0x54EA || cp == 0x600E || cp == 0x8C01 ||
	       cp == 0x5417 || cp == 0x5462 || cp == 0x4F55;
}

/* Is the bigram a..b of a question word (one of the characters above, or
 * 多少)? A question's words are rare in a document, so their idf is high,
 * yet no sentence that answers holds them. */
static int zh_question_pair(uint32_t a, uint32_t b)
{
	return zh_asking(a) || zh_asking(b) || (a == 0x591A && b == 0x5C11);
}

/* End the current CJK run; a run of one character becomes a unigram.
 * Returns that unigram's length, or 0 when nothing is to be emitted. */
static size_t end_cjk_run(struct lp_terms *it)
{
	size_t blen = 0;

	if (it->cjk_run == 1 && !((it->flags & LP_TERMS_STOPWORDS) && zh_asking(it->cjk_prev)))
		blen = put_cjk(it, 0, it->cjk_prev);
	it->cjk_run = 0;
	it->term[blen] = '\0';
	return blen;
}

int lp_terms_next(struct lp_terms *it, const char **term, size_t *len)
{
	uint32_t cp;
	enum lp_scan_class cls;
	size_t blen;

	for (;;) {
		if (it->pos >= it->len) {
			if ((blen = end_cjk_run(it)))
				goto emit;
			return 0;
		}
		size_t n = lp_scan_char((const char *)it->s, it->len, it->pos, TERMS_SCAN, &cp, &cls);
		if (cls == LP_SCAN_CJK) {
			it->pos += n;
			if (it->cjk_run++ == 0) {
				it->cjk_prev = cp;
				continue;
			}
			if ((it->flags & LP_TERMS_STOPWORDS) && zh_question_pair(it->cjk_prev, cp)) {
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
		if (cls != LP_SCAN_WORD) {
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
