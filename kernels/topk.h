/*
 * topk.h - the k best scores of every row of a scores matrix on the device
 * (all queries against all chunks is one GEMM, then this).
 *
 * Order is src/retrieve/topk.h's: the higher score first, equal scores by
 * the lower index, NaN below every number; so the GPU returns the very
 * set, in the very order, that lp_topk_select returns for the same floats.
 * Selection is a radix select on the order-preserving bits of the scores
 * (four 8-bit digits, then the index digits only when the k-th score is
 * tied), a gather of the k winners and a bitonic sort of them: every pass
 * reads the matrix once and keeps nothing per element.
 */
#ifndef LP_KERNELS_TOPK_H
#define LP_KERNELS_TOPK_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LP_CUK_TOPK_MAX 1024

/* Bytes of scratch lp_cuk_topk needs for n_q rows and k. */
size_t lp_cuk_topk_scratch_bytes(int n_q, int k);

/*
 * For each row q < n_q of `scores` (n floats, rows `lds` apart): idx[q * k
 * + j] and out[q * k + j] are the index and score of the j-th best, for
 * j < min(k, n); when k > n the rest are -1 and -inf. 1 <= k <=
 * LP_CUK_TOPK_MAX, n >= 1. `scratch` holds lp_cuk_topk_scratch_bytes.
 */
cudaError_t lp_cuk_topk(const float *scores, size_t lds, int n_q, int n, int k, void *scratch,
			float *out, int32_t *idx, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
