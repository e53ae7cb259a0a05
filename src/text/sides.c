/*
 * sides.c - the sides of a sentence and the shape of a name (sides.h).
 */
#include "text/sides.h"

#include <ctype.h>
#include <string.h>

/* Does a side end with s[i] (the cut is after it), or does one start at
 * s[i] (", or ": the cut is before the comma's space)? The position just
 * past the side that ends here, or 0. */
static size_t cut_after(const char *s, size_t n, size_t i)
{
	if (s[i] == ';')
		return i + 1;
	if (s[i] == ',' && i + 4 <= n && !memcmp(s + i, ", or", 4) && (i + 4 == n || s[i + 4] == ' '))
		return i + 1;
	if (s[i] == '.' || s[i] == '!' || s[i] == '?') {
		size_t w = i + 1;
		while (w < n && isspace((unsigned char)s[w]))
			w++;
		if (w > i + 1 && w < n && (isupper((unsigned char)s[w]) || s[w] == '\''))
			return i + 1;
	}
	return 0;
}

size_t lp_sides_of(const char *s, size_t n, struct lp_span *side, size_t max)
{
	size_t k = 0, from = 0;

	if (!max)
		return 0;
	for (size_t i = 0; i < n && k + 1 < max; i++) {
		size_t cut = cut_after(s, n, i);
		if (cut > from) {
			side[k++] = (struct lp_span){ from, cut - from };
			from = cut;
		}
	}
	if (from < n)
		side[k++] = (struct lp_span){ from, n - from };
	return k;
}

unsigned lp_name_shape(const char *s, size_t at, size_t n)
{
	unsigned sh = 0;
	size_t upper = 0, lower = 0;

	if (at && s[at - 1] && strchr("'`\"", s[at - 1]))
		sh |= LP_SHAPE_QUOTED;
	if (n > 1 && s[at] == '-')
		sh |= LP_SHAPE_OPTION;
	for (size_t i = at; i < at + n; i++) {
		if (s[i] == '/' && i > at && i + 1 < at + n)
			sh |= LP_SHAPE_SLASH;
		if (s[i] == '_')
			sh |= LP_SHAPE_SNAKE;
		upper += isupper((unsigned char)s[i]) != 0;
		lower += islower((unsigned char)s[i]) != 0;
	}
	return sh | (upper >= 2 && !lower ? LP_SHAPE_CAPS : 0);
}

int lp_sides_holds_like(const char *s, size_t n, unsigned shape)
{
	static const char cuts[] = " \t\n,;:()'`\"";

	for (size_t i = 0; i < n; i++) {
		size_t b = i;
		while (i < n && !memchr(cuts, s[i], sizeof(cuts) - 1))
			i++;
		if (i > b && (lp_name_shape(s, b, i - b - (s[i - 1] == '.')) & shape))
			return 1;
	}
	return 0;
}
