/*
 * vecindex.h - a flat index of embeddings and its cosine top-k.
 *
 * Rows are dim floats each, stored contiguously ([cap, dim], row i is span
 * i) under LP_MEM_INDEX. Capacity is fixed when the index is made, so a
 * row pointer stays valid for the life of the index and embedders can write
 * straight into it. Rows are expected to be L2-normalised (both embedders
 * do), so a dot product is a cosine; the index does not check.
 *
 * Scoring a batch of queries is one matrix product, queries [nq, dim] times
 * rows^T [dim, n] -> scores [nq, n], on the host through the CPU
 * backend's BLAS (lp_backend_host_sgemm_nt, which still computes it,
 * slowly, when OpenBLAS cannot be loaded), followed
 * by a top-k selection per query with a heap of k entries (O(n log k)).
 * Selection ranks by higher score; equal scores rank the lower row first;
 * NaN ranks below every number.
 */
#ifndef LP_RETRIEVE_VECINDEX_H
#define LP_RETRIEVE_VECINDEX_H

#include <stddef.h>

#include "core/status.h"

struct lp_vecindex;

/* A new, empty index for up to `cap` rows of `dim` floats (both > 0), or
 * NULL with `d` set (LP_E_NOMEM). Free with lp_vecindex_free. */
struct lp_vecindex *lp_vecindex_new(size_t dim, size_t cap, struct lp_diag *d);
/* NULL is a no-op. */
void lp_vecindex_free(struct lp_vecindex *ix);

size_t lp_vecindex_dim(const struct lp_vecindex *ix);
size_t lp_vecindex_size(const struct lp_vecindex *ix); /* rows added */

/*
 * Add `count` rows and return a pointer to the first of them
 * ([count, dim], owned by the index, contents unspecified until the
 * caller writes them), or NULL when that would pass the capacity.
 */
float *lp_vecindex_append(struct lp_vecindex *ix, size_t count);
/* Row i (< size), owned by the index. */
const float *lp_vecindex_row(const struct lp_vecindex *ix, size_t i);

/*
 * scores[q * n + i] = dot(queries[q], row i) for q < nq, i < n = size,
 * in one GEMM. queries is [nq, dim]; scores (caller-owned) has room for
 * nq * n. Returns LP_OK (also when the index or nq is empty).
 */
enum lp_status lp_vecindex_scores(const struct lp_vecindex *ix, const float *queries,
				  size_t nq, float *scores, struct lp_diag *d);

/*
 * The k best rows for each of nq queries: idx[q * k + j] and (if not
 * NULL) score[q * k + j] for j < min(k, n), best first. Scratch for the
 * nq * n scores comes from LP_MEM_SCRATCH. Returns the count per query
 * (min(k, n)) in *kept, and LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_vecindex_topk(const struct lp_vecindex *ix, const float *queries,
				size_t nq, size_t k, size_t *idx, float *score,
				size_t *kept, struct lp_diag *d);

#endif
