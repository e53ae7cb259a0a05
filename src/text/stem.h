/*
 * stem.h - English words to their stems, so that a question's "replacing"
 * meets a sentence's "replace" and "keeps" meets "keep".
 *
 * The stems are Snowball's English (Porter2) stemmer's, from libstemmer.
 * Only a term of four or more ASCII letters is stemmed; anything else (a
 * CJK bigram, a number, "x86", a short word) is its own stem. Terms come
 * lower-case, as lp_terms_next gives them.
 *
 * A stemmer is not safe to share between threads: each caller opens its
 * own (a few hundred bytes, from libstemmer's own allocator) for the work
 * at hand and closes it after.
 */
#ifndef LP_TEXT_STEM_H
#define LP_TEXT_STEM_H

#include <stddef.h>

struct lp_stemmer;

/* A stemmer, or NULL when out of memory (callers then compare words as
 * they are). */
struct lp_stemmer *lp_stemmer_open(void);

void lp_stemmer_close(struct lp_stemmer *s);

/*
 * The stem of the lower-case term t[0, n): *out (valid until the next call
 * on s, or t itself) and its length. With s NULL, the term itself.
 */
size_t lp_stem(struct lp_stemmer *s, const char *t, size_t n, const char **out);

#endif
