/*
 * wordpiece.h - the BERT (uncased) tokenizer: basic tokenization, then
 * greedy longest-match-first WordPiece over a vocab.txt.
 *
 * Basic tokenization, per code point of the input:
 *   - NUL, U+FFFD and control/format/unassigned/private-use characters are
 *     dropped (tab, LF and CR count as white space);
 *   - white space separates words;
 *   - CJK ideographs become words of their own;
 *   - the rest is decomposed (NFD), combining marks (Mn) are dropped and
 *     letters lower-cased;
 *   - punctuation (ASCII punctuation and Unicode P*) is a word of its own.
 * Each word of more than LP_WORDPIECE_MAX_WORD_CHARS code points is [UNK]; otherwise
 * it is cut greedily into the longest pieces found in the vocabulary, every
 * piece after the first spelled with a "##" prefix; a word that cannot be cut
 * completely is a single [UNK].
 *
 * Invalid UTF-8 bytes are treated as U+FFFD and so dropped. The vocabulary is
 * one token per line, the id being the 0-based line number; it must contain
 * [PAD], [UNK], [CLS] and [SEP].
 */
#ifndef LP_WORDPIECE_H
#define LP_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LP_WORDPIECE_MAX_WORD_CHARS 100

struct lp_wordpiece; /* opaque */

/* Growable id array in tracked memory (LP_MEM_SCRATCH). Zero-initialise. */
struct lp_wordpiece_ids {
	int32_t *ids;
	size_t n, cap;
};
void lp_wordpiece_ids_release(struct lp_wordpiece_ids *v);

/*
 * Load vocab.txt. Returns LP_OK with *out owned by the caller (lp_wordpiece_free),
 * or LP_E_IO, LP_E_NOMEM, LP_E_MODEL (empty vocabulary, a special token
 * missing, a duplicate token, more than 2^31 lines).
 */
enum lp_status lp_wordpiece_load(const char *vocab_path, struct lp_wordpiece **out,
				 struct lp_diag *d);
/* Same from the text of a vocab.txt in memory; `name` is for messages. */
enum lp_status lp_wordpiece_new(const char *text, size_t len, const char *name,
				struct lp_wordpiece **out, struct lp_diag *d);
/* NULL is a no-op. */
void lp_wordpiece_free(struct lp_wordpiece *wp);

/* Id of `token` (exact bytes), or -1. */
int32_t lp_wordpiece_id(const struct lp_wordpiece *wp, const char *token, size_t len);
/* Token of an id (NUL-terminated, owned by wp), or NULL when out of range. */
const char *lp_wordpiece_token(const struct lp_wordpiece *wp, int32_t id);
size_t lp_wordpiece_vocab_size(const struct lp_wordpiece *wp);
/* Ids of the special tokens. */
int32_t lp_wordpiece_cls(const struct lp_wordpiece *wp);
int32_t lp_wordpiece_sep(const struct lp_wordpiece *wp);
int32_t lp_wordpiece_pad(const struct lp_wordpiece *wp);
int32_t lp_wordpiece_unk(const struct lp_wordpiece *wp);

/*
 * Append the ids of text[0..len) (no [CLS]/[SEP], no truncation) to *out.
 * Returns LP_OK or LP_E_NOMEM (then *out holds a prefix).
 */
enum lp_status lp_wordpiece_tokenize(const struct lp_wordpiece *wp, const char *text,
				     size_t len, struct lp_wordpiece_ids *out, struct lp_diag *d);

/*
 * How much of text[0..len) the vocabulary covers: adds to *n_words the
 * words basic tokenization cuts it into (a CJK ideograph is a word, a
 * punctuation mark is not counted) and to *n_unknown those of them that
 * become [UNK] (no cut into vocabulary pieces). Both are sums so that a
 * caller can total them over many texts. Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_wordpiece_coverage(const struct lp_wordpiece *wp, const char *text, size_t len,
				     size_t *n_words, size_t *n_unknown, struct lp_diag *d);

/*
 * [CLS] ids [SEP], the ids truncated so that the whole fits max_len (>= 2)
 * tokens, into ids[max_len]; *n gets the count. Returns LP_OK, LP_E_NOMEM,
 * or LP_E_INTERNAL when max_len < 2.
 */
enum lp_status lp_wordpiece_encode(const struct lp_wordpiece *wp, const char *text, size_t len,
				   size_t max_len, int32_t *ids, size_t *n, struct lp_diag *d);

#endif
