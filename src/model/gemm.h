/*
 * gemm.h - the float matrix product of batched prefill:
 * Y[t][r] = sum_k X[t][k] * W[r][k] for t < n, r < m (X times W transposed,
 * both row-major with K contiguous), one thread.
 *
 * An AVX2+FMA kernel (4 tokens x 3 rows of accumulators in registers) is
 * used when the CPU has those features; otherwise CBLAS sgemm. The kernel
 * exists because the CBLAS a distribution ships may not know a newer CPU
 * and fall back to an SSE3 kernel several times slower.
 */
#ifndef LP_MODEL_GEMM_H
#define LP_MODEL_GEMM_H

#include <stddef.h>

/* ldx, ldw, ldy: elements between consecutive rows. Y is overwritten. */
void lp_gemm_nt(size_t n, size_t m, size_t k, const float *X, size_t ldx,
		const float *W, size_t ldw, float *Y, size_t ldy);
/* The CBLAS path alone (tests compare the two). */
void lp_gemm_nt_blas(size_t n, size_t m, size_t k, const float *X, size_t ldx,
		     const float *W, size_t ldw, float *Y, size_t ldy);
/* Attention's vector pieces, with the same dispatch:
 * sum a[i]*b[i], and y[i] += a*x[i]. */
float lp_dot_f32(const float *a, const float *b, size_t n);
void lp_axpy_f32(size_t n, float a, const float *x, float *y);
/* "avx2" or "blas". */
const char *lp_gemm_kernel_name(void);

#endif
