/*
 * fusion.h - combining the rankings of two scorers, and forcing chunks
 * into a selection.
 *
 * Reciprocal-rank fusion (RRF) looks only at ranks, so scorers whose
 * scores live on different scales (BM25's unbounded sums, cosines in
 * [-1, 1]) mix without calibration: fused(i) = sum over lists of
 * 1 / (k + rank(i)). Ranks are 1-based, higher score first; equal scores
 * share the best rank of their group ("1, 2, 2, 4"), so the many chunks a
 * lexical scorer leaves at 0 all get the same small share and none is
 * favoured by its position in the document.
 *
 * Weighted fusion min-max normalises each list to [0, 1] (a list whose
 * scores are all equal becomes all 0) and sums them with weights
 * (1 - w, w): it keeps score gaps that RRF throws away, at the price of a
 * weight to tune.
 *
 * NaN scores rank last and count as the minimum.
 */
#ifndef LP_RETRIEVE_FUSION_H
#define LP_RETRIEVE_FUSION_H

#include <stddef.h>

#include "core/status.h"

/*
 * rank[i] (caller-owned, room for n) = 1-based rank of scores[i] as above.
 * Needs n indices of LP_MEM_SCRATCH. Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_fusion_ranks(const double *scores, size_t n, size_t *rank,
			       struct lp_diag *d);

/*
 * out[i] = sum over l < n_lists of 1 / (k + rank_l(i)), where rank_l ranks
 * lists[l][0..n). k > 0 (60 is usual: it damps the difference between the
 * very first ranks). out is caller-owned (room for n) and may not alias a
 * list. Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_fusion_rrf(const double *const *lists, size_t n_lists, size_t n,
			     double k, double *out, struct lp_diag *d);

/*
 * As lp_fusion_rrf, each list's share multiplied by its weight:
 * out[i] = sum over l of weights[l] / (k + rank_l(i)). weights NULL means
 * all 1. A list of weight 0 is not ranked, so with every other weight 0
 * the fused order is exactly the order of the remaining list.
 */
enum lp_status lp_fusion_rrf_weighted(const double *const *lists, const double *weights,
				      size_t n_lists, size_t n, double k, double *out,
				      struct lp_diag *d);

/*
 * Vocabulary coverage. A dense embedder whose vocabulary does not know a
 * text's words (an English model on Chinese: most Han characters become
 * [UNK]) ranks by noise, and fusion would let that noise outvote a good
 * lexical ranking. The coverage of a text is 1 - unknown / words (words
 * and unknown as embedder.h lp_embedder_coverage counts them; a text
 * without words has coverage 1). The dense list's weight is scaled by
 *
 *     s(c) = 0 for c <= 0.5, 2c - 1 for 0.5 < c < 1, 1 for c >= 1
 *
 * so that full coverage changes nothing and half the words unknown or
 * more leave the lexical ranking alone. Returns s(c); NaN gives 0.
 */
double lp_fusion_coverage_scale(double coverage);

/* Coverage 1 - unknown / words, or 1 when words is 0. */
double lp_fusion_coverage(size_t n_words, size_t n_unknown);

/* out[i] = (1 - w) * norm(a)[i] + w * norm(b)[i], w in [0, 1]. out may
 * alias a or b. */
void lp_fusion_weighted(const double *a, const double *b, size_t n, double w, double *out);

/*
 * Force chunks into a selection. sel[0..n_sel) holds indices into
 * scores[0..n) (distinct, best first); forced[i] != 0 marks chunk i as one
 * that must be kept. Forced chunks missing from sel take the places of the
 * lowest-ranked unforced ones, best forced chunk first, while there are
 * such places; sel is then sorted by score again (ties: lower index
 * first). The count n_sel is unchanged, so when more chunks are forced than
 * fit, the best-scoring forced ones are kept. Returns how many chunks were
 * brought in.
 */
size_t lp_fusion_force(const double *scores, size_t n, const unsigned char *forced,
		       size_t *sel, size_t n_sel);

#endif
