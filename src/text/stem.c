/*
 * stem.c - English stems through libstemmer (see stem.h).
 */
#include "text/stem.h"

#include <libstemmer.h>

/* Below this many letters a word is left as it is: "uses" and "used"
 * still meet "use", and short names ("ls", "cp", "tar") are not words. */
#define LP_STEM_MIN 4

struct lp_stemmer *lp_stemmer_open(void)
{
	return (struct lp_stemmer *)sb_stemmer_new("english", "UTF_8");
}

void lp_stemmer_close(struct lp_stemmer *s)
{
	if (s)
		sb_stemmer_delete((struct sb_stemmer *)s);
}

static int ascii_word(const char *t, size_t n)
{
	if (n < LP_STEM_MIN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (t[i] < 'a' || t[i] > 'z')
			return 0;
	return 1;
}

size_t lp_stem(struct lp_stemmer *s, const char *t, size_t n, const char **out)
{
	const sb_symbol *stem;
	int len;

	*out = t;
	if (!s || !ascii_word(t, n))
		return n;
	stem = sb_stemmer_stem((struct sb_stemmer *)s, (const sb_symbol *)t, (int)n);
	len = stem ? sb_stemmer_length((struct sb_stemmer *)s) : 0;
	if (len <= 0)
		return n;
	*out = (const char *)stem;
	return (size_t)len;
}
