/*
 * vecdev.h - a flat index of embeddings resident on a backend's device,
 * scored there: the GPU half of vecindex.h.
 *
 * Rows are stored as f16 ([cap, dim], counted under LP_MEM_GPU_EMBED
 * against memory.gpu_budget, like the model's weights); they are appended
 * from host floats a block at a time, so a large corpus is streamed to
 * the device and never needs a second host copy. Scoring nq queries is one
 * matrix product (f16 inputs, f32 accumulation: the backend's matmul on
 * F16 weights, cublasGemmEx on CUDA) into an [nq, n] f32 score block,
 * then the backend's top-k; queries are taken in tiles so the score block
 * stays under LP_VECDEV_SCORE_BYTES.
 *
 * Results are those of vecindex.h on the same vectors up to f16 rounding
 * (scores within about 1e-4 for unit vectors), so the top-k sets agree
 * wherever scores are not that close. On a CPU backend the same code runs
 * on the host (for tests). Not thread-safe.
 */
#ifndef LP_RETRIEVE_VECDEV_H
#define LP_RETRIEVE_VECDEV_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/status.h"

/* Largest block of scores held on the device at once (queries are tiled). */
#define LP_VECDEV_SCORE_BYTES ((size_t)1 << 30)

struct lp_vecdev;

/* An empty index for up to `cap` rows of `dim` on `be` (borrowed; it must
 * outlive the index). NULL with d filled (LP_E_NOMEM: the budget or the
 * device refused). */
struct lp_vecdev *lp_vecdev_new(struct lp_backend *be, size_t dim, size_t cap,
				struct lp_diag *d);
/* NULL is a no-op. */
void lp_vecdev_free(struct lp_vecdev *v);
size_t lp_vecdev_size(const struct lp_vecdev *v);

/* Append `count` rows of host floats ([count, dim]). LP_OK, LP_E_USAGE
 * past the capacity, or the backend's error. */
enum lp_status lp_vecdev_append(struct lp_vecdev *v, const float *rows, size_t count,
				struct lp_diag *d);

/* scores[q * n + i] = dot(queries[q], row i) for q < nq, i < n (host
 * arrays). Same returns. */
enum lp_status lp_vecdev_scores(struct lp_vecdev *v, const float *queries, size_t nq,
				float *scores, struct lp_diag *d);

/*
 * The k best rows of each query (1 <= k <= LP_BACKEND_TOPK_MAX), as
 * lp_vecindex_topk: idx[q * k + j], score[q * k + j] (may be NULL) for j <
 * min(k, n), best first, *kept = min(k, n). Same returns.
 */
enum lp_status lp_vecdev_topk(struct lp_vecdev *v, const float *queries, size_t nq, size_t k,
			      size_t *idx, float *score, size_t *kept, struct lp_diag *d);

#endif
