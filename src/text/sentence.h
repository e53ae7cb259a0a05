/*
 * sentence.h - sentence segmentation for English-like and CJK text.
 *
 * A sentence ends at . ! ? (optionally followed by closing quotes or
 * brackets) when white space and then an upper-case letter, digit, quote or
 * the end follows, except after common abbreviations ("e.g.", "Dr.",
 * "etc." before a lower-case word), initials and inside decimals ("3.14");
 * at the CJK terminators 。！？； (no space needed after them); and at a
 * blank line (paragraph break). Segmentation is a single forward scan,
 * linear in the input, with no allocation.
 */
#ifndef LP_TEXT_SENTENCE_H
#define LP_TEXT_SENTENCE_H

#include <stddef.h>

/* A byte range [off, off + len) of a text. */
struct lp_span {
	size_t off, len;
};

/*
 * Find the next sentence in text[0..len) at or after *pos. Returns 1 and
 * sets *s to the sentence without leading or trailing white space, moving
 * *pos past it; returns 0 when only white space remains. Start with
 * *pos = 0. `text` must be valid UTF-8.
 */
int lp_sentence_next(const char *text, size_t len, size_t *pos, struct lp_span *s);

/*
 * Same contract for paragraphs: runs of text separated by a blank line (a
 * line holding only white space). A paragraph break is also a sentence
 * break, so every paragraph is a whole number of sentences.
 */
int lp_paragraph_next(const char *text, size_t len, size_t *pos, struct lp_span *p);

/*
 * The bytes of the sentence-end mark that ends right before s[i] (0 < i):
 * an ASCII . ! ? (1) or a CJK terminator (3), the marks this segmenter
 * ends sentences at; 0 when s[i - 1] ends none. A check of where a
 * sentence ends ("does this reply end with a whole sentence?") asks this,
 * so that it agrees with lp_sentence_next on what a sentence end is.
 */
size_t lp_sentence_mark_before(const char *s, size_t i);

/*
 * The bytes of the sentence end that ends right before s[i] (0 < i <=
 * len) when only s[0..len) is known, as a cut "after a whole sentence"
 * needs it: a CJK terminator (3) anywhere, an ASCII . ! ? (1) before
 * white space or the end of s; 0 elsewhere. "3.14" and "e.g" end none.
 */
size_t lp_sentence_end_at(const char *s, size_t len, size_t i);

/*
 * The length of s[0..len) without the closing quotes and brackets the
 * segmenter keeps with a sentence ("... it.\")", "...了。」") and the
 * white space after them: where its last sentence's end mark, if any,
 * ends.
 */
size_t lp_sentence_trim_closers(const char *s, size_t len);

#endif
