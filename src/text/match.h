/*
 * match.h - words, normalised matching and regex tests for verification.
 *
 * Three questions the summarizer and the verifier keep asking about text:
 * where are the words, how many are there, and does a phrase occur in it
 * regardless of case and spacing. They are answered here, once, so that the
 * summary length, the verify word count and the keyphrase check agree.
 *
 * A token is one of:
 *  - WORD: a word of text/scan.h read with LP_SCAN_JOIN: a run of Unicode
 *    letters, marks and digits outside the CJK ranges, joined across '_'
 *    and, between two letters or digits, across '-', '.', ',' (digits
 *    only), and apostrophes: "snake_case", "e-mail", "3.5", "1,024",
 *    "don't" are one word each;
 *  - CJK: a single CJK letter (Han, kana, hangul, fullwidth letter). CJK
 *    text has no spaces, so each character counts as a word;
 *  - PUNCT: any other code point that is not white space (an invalid byte
 *    is a one-byte PUNCT).
 *
 * Normal form (for matching): tokens lower-cased (simple Unicode mapping),
 * each white-space run turned into one space, except between two CJK
 * characters where it is dropped (hard-wrapped CJK text), and trimmed.
 * A phrase "occurs" in a text when its normal form is a substring of the
 * text's normal form that does not cut a word in two, '_' binding as in
 * tokens and a hyphen not: "mail" does not occur in "email" nor "snake" in
 * "snake_case", but "context" occurs in "long-context" and "人工" in
 * "人工智能" (CJK has no word boundaries to respect).
 *
 * Everything here is a single forward scan; nothing is kept between calls.
 */
#ifndef LP_TEXT_MATCH_H
#define LP_TEXT_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/status.h"

enum lp_token_kind { LP_TOKEN_WORD, LP_TOKEN_CJK, LP_TOKEN_PUNCT };

struct lp_token {
	size_t off, len;         /* bytes into the text */
	enum lp_token_kind kind;
	unsigned space_before;   /* white space separates it from the previous token */
	unsigned newlines_before; /* '\n' in that white space (2+: paragraph break) */
};

/*
 * Next token of text[0..len) at or after *pos. Returns 1 and fills *t,
 * moving *pos past the token; returns 0 at the end. Start with *pos = 0.
 * Works on any bytes (invalid UTF-8 becomes PUNCT tokens).
 */
int lp_match_token_next(const char *text, size_t len, size_t *pos, struct lp_token *t);

/* WORD plus CJK tokens in text[0..len): the word count used by summary
 * limits and verify's min_words. */
size_t lp_match_count_words(const char *text, size_t len);

/*
 * Lower-case s[0..len) into out (cap bytes). Returns the bytes the lower
 * form needs; the output is complete only when that is <= cap (no NUL is
 * written).
 */
size_t lp_match_lower(const char *s, size_t len, char *out, size_t cap);

/* 1 if the lower-case ASCII word w[0..len) is an English function word
 * (match.c lists them): what retrieval skips. */
int lp_match_is_function_word(const char *w, size_t len);

/* 1 if it is a function word or a weak word ("often", "use", "many"):
 * what keyphrases, focus words and key-word counts skip. */
int lp_match_is_stopword(const char *w, size_t len);

/* Append the normal form of text[0..len) to out. LP_OK or LP_E_NOMEM. */
enum lp_status lp_match_normalize(const char *text, size_t len, struct lp_buf *out);

/*
 * 1 if `needle` (already in normal form, nlen bytes) occurs in `hay` (normal
 * form) without cutting a WORD at either end; 0 otherwise (also when nlen is 0).
 */
int lp_match_find_normal(const char *hay, size_t hlen, const char *needle, size_t nlen);

/* A text prepared once for many containment tests. */
struct lp_match {
	struct lp_buf norm; /* normal form of the text */
	struct lp_buf tmp;  /* scratch for phrases */
};

/* Normalise text[0..len) into m. LP_OK or LP_E_NOMEM (m is then empty but
 * safe to release). */
enum lp_status lp_match_init(struct lp_match *m, const char *text, size_t len,
			     struct lp_diag *d);
/* Does `phrase` (any form) occur in m's text? Sets *found to 0 or 1.
 * LP_OK or LP_E_NOMEM. */
enum lp_status lp_match_contains(struct lp_match *m, const char *phrase, size_t len,
				 int *found);
void lp_match_release(struct lp_match *m);

/*
 * Which of phrases[0..n) (NUL-terminated, any form) text[0..len) holds:
 * bit k of *mask is set for each held phrase k < 64, and *held counts
 * every held phrase (either may be NULL). One normalisation of the text
 * for all of them. LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_match_held(const char *text, size_t len, const char *const *phrases,
			     size_t n, uint64_t *mask, size_t *held, struct lp_diag *d);

/*
 * Check that `pattern` compiles as a PCRE2 pattern (UTF, Unicode classes).
 * Returns 1 when it does; otherwise 0, with the compiler's message in
 * msg (cap bytes) and the byte offset in the pattern where it stopped.
 */
int lp_match_regex_valid(const char *pattern, char *msg, size_t cap, size_t *offset);

/*
 * Does `pattern` match anywhere in text[0..len)? Sets *found. Matching is
 * bounded (PCRE2 match and depth limits), so a pathological pattern fails
 * with LP_E_INPUT instead of running for ever. Returns LP_OK, LP_E_CONFIG
 * (bad pattern), LP_E_INPUT (limit hit or invalid UTF-8) or LP_E_NOMEM.
 */
enum lp_status lp_match_regex_search(const char *pattern, const char *text, size_t len,
				     int *found, struct lp_diag *d);

#endif
