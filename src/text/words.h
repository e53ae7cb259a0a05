/*
 * words.h - content words, and how many of one text's words another text
 * holds: the support that a summary point (stages/summarize_points.c) and
 * a model's rewrite or a repeat (points.h) are judged by.
 *
 * Words are the matcher's tokens (match.h): WORD tokens and single CJK
 * characters; punctuation is no word. A content word is a CJK character or
 * a WORD of 3 to LP_WORDS_CONTENT_BYTES bytes whose lower-case form is no
 * stop word (lp_match_is_stopword): "is", "use" and the "v" of "-v" say
 * nothing about where a sentence came from, and a longer run is a hash or
 * a URL, not a word.
 *
 * A word is held by a text one of two ways, and the caller says which:
 *  - as a word (lp_words_has, lp_words_held): the text has a token equal
 *    to it, ASCII case aside. "context" is not held by "long-context",
 *    which is one word. A rewrite must use the source's own words.
 *  - as a phrase (lp_words_held_in): lp_match_contains finds it, case
 *    (Unicode) and spacing aside, a hyphen's parts counting: "context" is
 *    held by "long-context". A point is the model's, which may take a
 *    compound apart.
 *
 * Two other measures of support are different on purpose and stay with
 * their users:
 *  - lp_evidence_support (evidence.h) counts the distinct retrieval terms
 *    (terms.h: lower-case, CJK bigrams, function words skipped) of an
 *    answer that a passage holds, leaving out the question's own terms: a
 *    citation is found by the terms retrieval found the passage by.
 *  - lp_points_faithful (points.h) asks for the words in the same order: a
 *    shortened sentence must be its original with words deleted.
 *
 * Nothing here allocates except through lp_match_contains.
 */
#ifndef LP_TEXT_WORDS_H
#define LP_TEXT_WORDS_H

#include <stddef.h>

#include "core/status.h"
#include "text/match.h"

/* Longest WORD, in bytes of its lower-case form, that counts as content. */
#define LP_WORDS_CONTENT_BYTES 64

enum lp_words_flags {
	LP_WORDS_CONTENT = 1 << 0, /* count content words only, not every word */
};

/* 1 when token t of s is a content word; 0 otherwise (also for PUNCT). */
int lp_words_is_content(const char *s, const struct lp_token *t);

/* 1 when token ta of a and token tb of b are the same word (ASCII case
 * aside); else 0. */
int lp_words_same(const char *a, const struct lp_token *ta, const char *b,
		  const struct lp_token *tb);

/* 1 when b[0..blen) has a token equal to token t of a (ASCII case aside);
 * else 0. */
int lp_words_has(const char *a, const struct lp_token *t, const char *b, size_t blen);

/*
 * How many words of s[0..len) (with LP_WORDS_CONTENT, content words only;
 * a word counted once for each time it occurs) b[0..blen) holds as words.
 * *total (may be NULL) gets how many words were counted.
 */
size_t lp_words_held(const char *s, size_t len, unsigned flags, const char *b, size_t blen,
		     size_t *total);

/*
 * The same, held as phrases of the prepared text `in` (lp_match_init).
 * Sets *held and *total (may be NULL). Returns LP_OK, or LP_E_NOMEM with
 * *held and *total then unspecified.
 */
enum lp_status lp_words_held_in(const char *s, size_t len, unsigned flags, struct lp_match *in,
				size_t *held, size_t *total);

#endif
