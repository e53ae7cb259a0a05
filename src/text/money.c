#include "text/money.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Before the number. */
static const char *const signs[] = { "US$", "$", "\xE2\x82\xAC" /* € */, "\xC2\xA3" /* £ */,
				     "\xC2\xA5" /* ¥ */, "\xEF\xBF\xA5" /* ￥ */, NULL };
/* Before or after it, whole words. */
static const char *const codes[] = { "USD", "EUR", "GBP", "JPY", "CNY", "RMB", "CHF", NULL };
/* After it: English words (whole, any case), Chinese ones. */
static const char *const words[] = { "dollars", "dollar", "euros", "euro", "pounds", "cents",
				     "yuan", NULL };
static const char *const han[] = { "\xE7\xBE\x8E\xE5\x85\x83" /* 美元 */,
				   "\xE6\xAC\xA7\xE5\x85\x83" /* 欧元 */,
				   "\xE6\x97\xA5\xE5\x85\x83" /* 日元 */,
				   "\xE8\x8B\xB1\xE9\x95\x91" /* 英镑 */, "\xE5\x85\x83" /* 元 */,
				   NULL };

static int word_char(unsigned char c)
{
	return isalnum(c) || c == '_';
}

/* The length of the entry of list that text[at..len) starts with as a
 * whole word (`whole`) or as bytes; 0 when none. `fold`: any case. */
static size_t starts(const char *text, size_t len, size_t at, const char *const *list, int whole,
		     int fold)
{
	for (size_t k = 0; list[k]; k++) {
		size_t n = strlen(list[k]);

		if (at + n > len)
			continue;
		if (fold ? strncasecmp(text + at, list[k], n) : memcmp(text + at, list[k], n))
			continue;
		if (whole && ((at + n < len && word_char((unsigned char)text[at + n])) ||
			      (at && word_char((unsigned char)text[at - 1]))))
			continue;
		return n;
	}
	return 0;
}

/* The length of the entry of list that text[0..end) ends with, as a
 * whole word when `whole` (no word character before it); 0 when none. */
static size_t ends(const char *text, size_t end, const char *const *list, int whole)
{
	for (size_t k = 0; list[k]; k++) {
		size_t n = strlen(list[k]);

		if (n > end || memcmp(text + end - n, list[k], n))
			continue;
		if (whole && end > n && word_char((unsigned char)text[end - n - 1]))
			continue;
		return n;
	}
	return 0;
}

int lp_money_price(const char *text, size_t len, size_t off, size_t n, struct lp_span *price)
{
	size_t end = off + n, lo, n_mark;

	if (!n || end > len)
		return 0;
	/* before: "$25", "US$ 25", "EUR 25" */
	lo = off && text[off - 1] == ' ' ? off - 1 : off;
	if ((n_mark = ends(text, lo, signs, 0)) || (n_mark = ends(text, lo, codes, 1))) {
		/* a bare "$" and one digit is a shell's "$1", not a price */
		if (n_mark == 1 && text[lo - 1] == '$' && n == 1)
			return 0;
		*price = (struct lp_span){ lo - n_mark, end - (lo - n_mark) };
		return 1;
	}
	/* after: "25 EUR", "25 dollars", "25元" */
	{
		size_t at = end < len && text[end] == ' ' ? end + 1 : end;

		if ((n_mark = starts(text, len, at, codes, 1, 0)) ||
		    (n_mark = starts(text, len, at, words, 1, 1)) ||
		    (n_mark = starts(text, len, at, han, 0, 0))) {
			*price = (struct lp_span){ off, at + n_mark - off };
			return 1;
		}
	}
	return 0;
}

int lp_money_named(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (starts(text, len, i, signs, 0, 0) || starts(text, len, i, codes, 1, 0) ||
		    starts(text, len, i, words, 1, 1) || starts(text, len, i, han, 0, 0))
			return 1;
	return 0;
}
