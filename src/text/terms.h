/*
 * terms.h - the words retrieval counts: a text cut into lower-case terms.
 *
 * Both the index and the query go through this iterator with the same
 * flags, so a query term matches a span term exactly when their bytes match.
 * The rules:
 *
 *  - A term is a word of text/scan.h read with LP_SCAN_FOLD_WIDTH and
 *    without LP_SCAN_JOIN: a maximal run of Unicode letters, marks and
 *    digits, fullwidth ASCII (U+FF01..U+FF5E) folded to ASCII first;
 *    anything else separates terms. "Don't" gives "don" and "t";
 *    "x86_64" gives "x86" and "64"; "ＵＳＢ" matches "usb".
 *  - Letters are lower-cased (utf8proc simple mapping).
 *  - CJK scripts (ideographs, kana, hangul: lp_utf8_is_cjk) are not
 *    separated by spaces, so a run of them is indexed as overlapping
 *    character bigrams: "内存管理" gives "内存", "存管", "管理". A run of one
 *    CJK character gives that character alone. A CJK character also ends a
 *    non-CJK word: "USB设备" gives "usb", "设备".
 *  - With LP_TERMS_STOPWORDS, common English function words ("the", "of",
 *    "is", ...: lp_match_is_function_word, text/match.h) are skipped, and
 *    so are the CJK bigrams of Chinese question words (any with 什, 么,
 *    哪, 怎, 谁, 吗, 呢 or 何; 多少), whose rarity in a document
 *    would weigh them high while no answer holds them. There is no other
 *    CJK stop-word list: bigrams of function characters are common enough
 *    that BM25's idf discounts them.
 *  - A term longer than LP_TERMS_MAX_BYTES is cut at the last whole
 *    character that fits (such runs are URLs or hashes, not words).
 *
 * The iterator never allocates: the current term lives in the iterator and
 * is valid until the next call. Invalid UTF-8 bytes separate terms.
 */
#ifndef LP_TEXT_TERMS_H
#define LP_TEXT_TERMS_H

#include <stddef.h>
#include <stdint.h>

#define LP_TERMS_MAX_BYTES 64

enum lp_terms_flags {
	LP_TERMS_STOPWORDS = 1 << 0, /* skip English stop words */
};

struct lp_terms {
	const unsigned char *s;  /* text being cut */
	size_t len, pos;         /* bytes; pos: next byte to read */
	unsigned flags;          /* enum lp_terms_flags */
	uint32_t cjk_prev;       /* last CJK character of the current run */
	int cjk_run;             /* characters of that run seen so far */
	char term[LP_TERMS_MAX_BYTES + 1]; /* current term, NUL-terminated */
};

/* Start cutting text[0..len) (need not be NUL-terminated). */
void lp_terms_init(struct lp_terms *it, const char *text, size_t len, unsigned flags);

/*
 * Next term. Returns 1 and sets *term (NUL-terminated, owned by the
 * iterator, valid until the next call) and *len (bytes, > 0); returns 0
 * when the text is exhausted (and on every later call).
 */
int lp_terms_next(struct lp_terms *it, const char **term, size_t *len);


#endif
