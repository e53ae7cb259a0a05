/*
 * hashembed.h - the hashed n-gram embedder: a text turned into a fixed-size
 * vector without any weights, by hashing its features into buckets.
 *
 * Features of a text (lower-cased, fullwidth ASCII folded to ASCII):
 *
 *  - words: maximal runs of Unicode letters, marks and digits outside the
 *    CJK scripts (as in terms.h). Each word that is not an English stop
 *    word gives a unigram feature, a bigram feature with the previous such
 *    word, and the character 3-, 4- and 5-grams of "<word>" (the angle
 *    brackets mark the word's edges, so "<ma" says "starts with ma"); this
 *    is what lets "mailbox" and "mail" share something.
 *  - CJK characters (lp_utf8_is_cjk letters): each one is a unigram and,
 *    with the CJK character right before it, a bigram, since these scripts
 *    do not separate words with spaces.
 *
 * Each feature is hashed (hash.h) with a per-kind seed; the hash picks a
 * bucket of the `dim` and, from its top bit, a sign (+1/-1), so that
 * collisions cancel on average instead of piling up. A feature seen tf
 * times adds sign * weight * (1 + ln tf): repeated words count, but
 * sublinearly. The vector is then L2-normalised, so the dot product of two
 * embeddings is their cosine. A text without features (empty, only
 * punctuation or stop words) gives the zero vector, whose dot product with
 * anything is 0.
 *
 * The embedding of a text depends only on its bytes and `dim`: it is the
 * same on every run and every machine of the same byte order. An embedder
 * keeps a growable scratch array of feature hashes (LP_MEM_SCRATCH); one
 * embedder must not be used by two threads at once.
 */
#ifndef LP_RETRIEVE_HASHEMBED_H
#define LP_RETRIEVE_HASHEMBED_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LP_HASHEMBED_DEFAULT_DIM 1024
#define LP_HASHEMBED_MIN_DIM 16
#define LP_HASHEMBED_MAX_DIM 65536

struct lp_hashembed;

/* A new embedder of `dim` buckets (LP_HASHEMBED_MIN_DIM .. MAX_DIM), or
 * NULL with `d` set (LP_E_USAGE for a bad dim, LP_E_NOMEM). The caller
 * frees it with lp_hashembed_free. */
struct lp_hashembed *lp_hashembed_new(size_t dim, struct lp_diag *d);
/* NULL is a no-op. */
void lp_hashembed_free(struct lp_hashembed *h);

size_t lp_hashembed_dim(const struct lp_hashembed *h);

/*
 * Embed text[0..len) (UTF-8; invalid bytes separate words) into
 * out[0..dim), unit length or all zeros. *n_features (may be NULL) gets
 * the number of features counted, repeats included. Returns LP_OK or
 * LP_E_NOMEM (out is then unspecified).
 */
enum lp_status lp_hashembed_embed(struct lp_hashembed *h, const char *text, size_t len,
				  float *out, size_t *n_features, struct lp_diag *d);

/*
 * The projection's input for text[0..len): the (bucket, signed weight)
 * pairs that lp_hashembed_embed adds into its vector before normalising,
 * in the order it adds them (the backends' scatter_l2 op makes the same
 * vector from them). *bucket and *val point into the embedder's scratch,
 * valid until its next call; *n pairs (0: the zero vector). Returns LP_OK
 * or LP_E_NOMEM.
 */
enum lp_status lp_hashembed_pairs(struct lp_hashembed *h, const char *text, size_t len,
				  const uint32_t **bucket, const float **val, size_t *n,
				  struct lp_diag *d);

#endif
