/*
 * topk.h - the k best of n scores, for every retrieval scorer.
 *
 * "Best" is the higher score; equal scores rank the lower index first, so
 * the result is deterministic whatever the input order of work. NaN scores
 * rank below every number. Selection keeps a heap of k entries: O(n log k)
 * time and no allocation.
 */
#ifndef LP_RETRIEVE_TOPK_H
#define LP_RETRIEVE_TOPK_H

#include <stddef.h>

/*
 * Write to out[] (caller-owned, room for k) the indices of the min(k, n)
 * best scores, best first. Returns that count.
 */
size_t lp_topk_select(const double *scores, size_t n, size_t k, size_t *out);

#endif
