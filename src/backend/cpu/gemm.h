/*
 * gemm.h - the float matrix product of batched prefill:
 * Y[t][r] = sum_k X[t][k] * W[r][k] for t < n, r < m (X times W transposed,
 * both row-major with K contiguous), on the calling thread; and the vector
 * pieces of attention.
 *
 * The product is OpenBLAS's sgemm (backend/cpu/blas.h), which loads the
 * library with the kernels the CPU deserves. Measured against the AVX2
 * kernel this file used to hold (4 tokens x 3 rows in registers), one
 * thread on an AVX-512 Xeon, GFLOP/s on the prefill's 64-row blocks of
 * SmolLM2's shapes (tokens x rows x K: 512x576x576, 512x1536x576,
 * 512x576x1536):
 *   OpenBLAS, SkylakeX kernels     85    88    95
 *   OpenBLAS, Haswell kernels      42    45    45
 *   the AVX2 kernel              39-48 36-42 45-46
 * so the library wins or ties everywhere, and the kernel was removed.
 */
#ifndef LP_BACKEND_CPU_GEMM_H
#define LP_BACKEND_CPU_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* ldx, ldw, ldy: elements between consecutive rows (each, and n, m, k,
 * below 2^31). Y is overwritten. */
void lp_gemm_nt(size_t n, size_t m, size_t k, const float *X, size_t ldx,
		const float *W, size_t ldw, float *Y, size_t ldy);
/* The same plus bias[r] in every Y[t][r] (bias NULL: lp_gemm_nt): Y
 * filled with the bias, then the product accumulated into it, which costs
 * what the library's own clearing of Y did. */
void lp_gemm_nt_bias(size_t n, size_t m, size_t k, const float *X, size_t ldx,
		     const float *W, size_t ldw, const float *bias, float *Y, size_t ldy);
/* Attention's vector pieces, AVX2+FMA when the CPU has them:
 * sum a[i]*b[i], and y[i] += a*x[i]. */
float lp_dot_f32(const float *a, const float *b, size_t n);
void lp_axpy_f32(size_t n, float a, const float *x, float *y);
/*
 * Attention of one query head over F16 cache rows (fp16 bits), read in
 * place rather than converted to floats first (a decode step reads each
 * row once per head, so a conversion pass costs more than it saves):
 * score[s] = scale * sum_i q[i] * K[s * ldk + i] for s < n_pos, and
 * out[i] = sum_s p[s] * V[s * ldv + i] for i < hd (out overwritten).
 */
void lp_attn_scores_f16(const float *q, const uint16_t *K, size_t ldk, size_t hd,
			size_t n_pos, float scale, float *score);
void lp_attn_mix_f16(const float *p, const uint16_t *V, size_t ldv, size_t hd,
		     size_t n_pos, float *out);
/* SwiGLU in place: g[i] = silu(g[i]) * u[i] = g[i] / (1 + exp(-g[i])) * u[i]. */
void lp_swiglu_f32(size_t n, float *g, const float *u);
/* Softmax's exponentials in place: x[i] = exp(x[i] - max); returns their
 * sum. With AVX2 both use an 8-lane exp within 2 ulp of expf (arguments
 * clamped to [-87.3, 88.3]), so results differ from the scalar loop's in
 * the last bits. */
float lp_exp_sum_f32(float *x, size_t n, float max);
/* The same over float rows (a converted or F32 cache). */
void lp_attn_scores_f32(const float *q, const float *K, size_t ldk, size_t hd,
			size_t n_pos, float scale, float *score);
void lp_attn_mix_f32(const float *p, const float *V, size_t ldv, size_t hd,
		     size_t n_pos, float *out);

#endif
