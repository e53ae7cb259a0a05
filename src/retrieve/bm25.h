/*
 * bm25.h - an Okapi BM25 index over the spans (chunks) of one text.
 *
 * Spans are added one at a time, numbered 0, 1, ... in the order added;
 * lp_bm25_score then ranks every span against a query. Terms come from
 * terms.h with LP_TERMS_STOPWORDS, for spans and queries alike. The index
 * never keeps the text: it holds a dictionary of distinct terms (an
 * open-addressing hash table over a pool of term bytes) and, per span, the
 * distinct terms it contains with their frequencies (postings). Building is
 * O(total terms); memory is O(distinct terms + postings + spans), all under
 * the tracked tag LP_MEM_INDEX, about 8 bytes per posting.
 *
 * Two ways to query: as built, a query reads every posting once, which is
 * the cheapest way to answer a single query. lp_bm25_finish regroups the
 * postings by term (a counting sort that briefly holds both copies, so the
 * peak doubles), after which a query reads only the postings of its own
 * terms: worth it when many queries hit one index. Both give the same
 * scores, up to the order in which floating-point sums are added.
 *
 * Score of span D for query Q, summing over the distinct terms t of Q:
 *
 *     idf(t) * tf(t,D) * (k1 + 1) / (tf(t,D) + k1 * (1 - b + b * |D| / avgdl))
 *     idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
 *
 * N: spans; df(t): spans containing t; |D|: terms in D (after stop words);
 * avgdl: mean |D| (when every span is empty, |D| / avgdl is taken as 1).
 * This idf (as in Lucene) stays positive for terms in more than half the
 * spans, so a common word never pushes a span below one without it.
 * k1 >= 0 sets how fast repeated terms saturate (0: presence only); b in
 * [0, 1] sets how much long spans are penalised (0: not at all).
 *
 * Limits: fewer than 2^32 spans, distinct terms and postings.
 */
#ifndef LP_RETRIEVE_BM25_H
#define LP_RETRIEVE_BM25_H

#include <stddef.h>

#include "core/status.h"

struct lp_bm25;

struct lp_bm25_params {
	double k1; /* term-frequency saturation, >= 0 */
	double b;  /* length normalisation, 0..1 */
};

/* k1 = 1.2, b = 0.75. */
struct lp_bm25_params lp_bm25_default_params(void);

/* A new, empty index, or NULL with `d` set (LP_E_NOMEM). The caller frees
 * it with lp_bm25_free. */
struct lp_bm25 *lp_bm25_new(const struct lp_bm25_params *params, struct lp_diag *d);
/* Free the index and its tracked memory; NULL is a no-op. */
void lp_bm25_free(struct lp_bm25 *ix);

/*
 * Index text[0..len) as the next span (its number is the count of spans
 * added before it). The text is read, not kept. Returns LP_OK, LP_E_NOMEM
 * (the index is then unusable; free it), or LP_E_INTERNAL after finish.
 */
enum lp_status lp_bm25_add(struct lp_bm25 *ix, const char *text, size_t len,
			   struct lp_diag *d);

/* Freeze the index for many queries: group the postings by term and drop
 * build-only buffers; no span can be added after. Returns LP_OK or
 * LP_E_NOMEM (the index is then still usable as built). Calling it twice
 * is harmless. */
enum lp_status lp_bm25_finish(struct lp_bm25 *ix, struct lp_diag *d);

/*
 * Score every span against query[0..len): scores[i] (caller-owned, room
 * for lp_bm25_n_spans) gets span i's BM25 score, 0 for a span sharing no
 * term with the query. *n_terms (may be NULL) gets the number of terms in
 * the query, repeats included, so callers can tell an empty query (0) from
 * one that simply matches nothing. A term repeated in the query counts once
 * in the score. Returns LP_OK or LP_E_NOMEM. Works finished or not (see
 * above).
 */
enum lp_status lp_bm25_score(const struct lp_bm25 *ix, const char *query, size_t len,
			     double *scores, size_t *n_terms, struct lp_diag *d);

/* Counts for reports. */
size_t lp_bm25_n_spans(const struct lp_bm25 *ix);
/* Distinct terms in the dictionary, the stop words met included. */
size_t lp_bm25_n_terms(const struct lp_bm25 *ix);
size_t lp_bm25_n_postings(const struct lp_bm25 *ix); /* (term, span) pairs */
size_t lp_bm25_bytes(const struct lp_bm25 *ix);      /* tracked bytes held now */
/* Spans containing `term` (already in term form, see terms.h), 0 if none. */
size_t lp_bm25_df(const struct lp_bm25 *ix, const char *term, size_t len);

#endif
