/*
 * bert.h - the sentence encoder's kernels: LayerNorm (with the residual
 * add folded in), GELU, masked softmax over padded attention scores, and
 * mean pooling with L2 normalisation.
 *
 * A batch is n_seq sequences padded to L tokens; lens[s] (on the device)
 * is sequence s's real length, 1 <= lens[s] <= L. Padding rows are worked
 * like the others (finite, never read back). Launchers enqueue on
 * `stream`, never synchronize, and return cudaSuccess, the launch error,
 * or cudaErrorInvalidValue for a bad shape.
 */
#ifndef LP_KERNELS_BERT_H
#define LP_KERNELS_BERT_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * out[i, :] = LayerNorm(x[i, :] + r[i, :]) * g + b for i < n_rows, rows of
 * n floats `ldo` (`ldx`, `ldr`) apart; r may be NULL (no residual), out
 * may be x. Mean and variance are taken in double, as the CPU encoder
 * takes them.
 */
cudaError_t lp_cuk_layernorm(float *out, size_t ldo, const float *x, size_t ldx, const float *r,
			     size_t ldr, const float *g, const float *b, int n_rows, int n,
			     float eps, cudaStream_t stream);

/* x[i] = x/2 (1 + erf(x / sqrt 2)), with the CPU's erf (Abramowitz and
 * Stegun 7.1.26), i < n. */
cudaError_t lp_cuk_gelu(float *x, size_t n, cudaStream_t stream);

/*
 * Attention scores a, (n_seq, n_head, L, L) contiguous: each row (s, h, i)
 * becomes softmax_j(scale * a[j]) over the keys j < lens[s], and 0 for the
 * padding keys. scale > 0.
 */
cudaError_t lp_cuk_softmax_masked(float *a, int n_seq, int n_head, int L, const int32_t *lens,
				  float scale, cudaStream_t stream);

/*
 * out[s, :] = v / |v| with v = sum over t < lens[s] of x[s, t, :]; x is
 * (n_seq, L, E) contiguous, out (n_seq, E). A zero sum stays zero.
 */
cudaError_t lp_cuk_mean_pool_l2(const float *x, int n_seq, int L, int E, const int32_t *lens,
				float *out, cudaStream_t stream);

/*
 * The hashed projection: row r < n of out (dim floats) = the L2-normalised
 * sum of val[j] into bucket[j] for off[r] <= j < off[r+1], added in j
 * order (as the CPU adds them, so equal floats come out); a zero row stays
 * zero. off (n + 1), bucket, val on the device.
 */
cudaError_t lp_cuk_scatter_l2(float *out, int n, int dim, const uint32_t *off,
			      const uint32_t *bucket, const float *val, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
