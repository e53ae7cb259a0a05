/*
 * scan.h - what a word is: the one scan that every word iterator of the
 * text layer stands on (the retrieval terms of terms.h, the matcher's
 * tokens of match.h, the hashed embedder's words).
 *
 * Each character is one of four classes:
 *  - WORD: a Unicode letter, mark or digit (lp_utf8_is_alnum) outside the
 *    CJK ranges (lp_utf8_is_cjk);
 *  - CJK: a letter inside them (Han, kana, hangul, fullwidth forms);
 *  - SPACE: white space (lp_utf8_is_space);
 *  - OTHER: anything else, punctuation and symbols. An invalid byte is a
 *    one-byte OTHER that reads as U+FFFD, so a scan never stalls.
 * A word is a maximal run of WORD characters.
 *
 * The iterators read text two ways, and the differences are these options,
 * not second copies of the rule:
 *  - LP_SCAN_FOLD_WIDTH: fullwidth ASCII (U+FF01..U+FF5E) reads as the
 *    ASCII it stands for before it is classed, so "ＵＳＢ" is the word
 *    "USB" and "，" is OTHER. Retrieval folds, so that a query typed in
 *    either width finds the other; the matcher keeps the text's own
 *    characters, where a fullwidth letter is CJK.
 *  - LP_SCAN_JOIN: a word also goes on across a connector between two WORD
 *    characters: '_', '-', '.', an apostrophe (' or U+2019) and, between
 *    two digits, ','. "don't", "e-mail", "3.5", "1,024" and "snake_case"
 *    are one word each; without it "don't" is "don" and "t". The matcher
 *    joins (its words are what a reader counts and quotes); retrieval does
 *    not (a query for "mail" finds "e-mail").
 *
 * Nothing here allocates or keeps state between calls.
 */
#ifndef LP_TEXT_SCAN_H
#define LP_TEXT_SCAN_H

#include <stddef.h>
#include <stdint.h>

enum lp_scan_class { LP_SCAN_SPACE, LP_SCAN_WORD, LP_SCAN_CJK, LP_SCAN_OTHER };

enum lp_scan_flags {
	LP_SCAN_FOLD_WIDTH = 1 << 0, /* fullwidth ASCII reads as ASCII */
	LP_SCAN_JOIN = 1 << 1,       /* words go on across connectors */
};

/* The class of code point cp, as it stands (no folding). */
enum lp_scan_class lp_scan_class_of(uint32_t cp);

/*
 * The character at text[i] (i < len), read with `flags` (enum
 * lp_scan_flags): sets *cp to its code point (folded with
 * LP_SCAN_FOLD_WIDTH; U+FFFD for an invalid byte) and *cls to its class.
 * Returns its length in bytes, at least 1.
 */
size_t lp_scan_char(const char *text, size_t len, size_t i, unsigned flags, uint32_t *cp,
		    enum lp_scan_class *cls);

/*
 * The end of the word that starts at text[i], a WORD character read with
 * the same flags: the byte after its last character. Returns i when
 * text[i] starts no word.
 */
size_t lp_scan_word_end(const char *text, size_t len, size_t i, unsigned flags);

#endif
