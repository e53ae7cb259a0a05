/*
 * cpu.h - the CPU backend: the reference implementation of every op of
 * backend/backend.h, on the dot kernels of kernels.h (scalar and AVX2,
 * chosen at run time), OpenBLAS sgemm for prefill (blas.h) and a thread
 * pool of its own.
 *
 * Buffers are tracked host memory (zeroed and committed when allocated, so
 * that their pages are resident from the start); import aliases the
 * caller's bytes. Ops run synchronously on the calling thread, fanning out
 * to the pool; none can fail once reserve has succeeded, so sync always
 * returns LP_OK. With params.as_device the backend plays a device for
 * tests: buffers say LP_BACKEND_DEVICE and have no host address, import
 * copies into memory counted under the tag given, and the bytes are
 * counted under the GPU tags the caller chooses.
 */
#ifndef LP_BACKEND_CPU_CPU_H
#define LP_BACKEND_CPU_CPU_H

#include <stddef.h>

#include "backend/backend.h"

/* Convert rows [p0, p1) of a cache's keys and values to f32 (k_out and
 * v_out, (p1 - p0, kv_dim) each); F16C for F16 where the CPU has it. */
void lp_backend_cpu_kv_to_f32(const struct lp_backend_kv *kv, uint32_t p0, uint32_t p1,
			      float *k_out, float *v_out);

/* erf(z) to 1.5e-7 (Abramowitz and Stegun 7.1.26), fast: GELU's. */
float lp_backend_cpu_erf(float z);

/* Internal to the CPU backend (cpu.c and attn.c). */
struct lp_pool;
/* A step of fewer than LP_CPU_ATTN_ROWS tokens over an F16 cache reads
 * the rows in place; on the AVX-512 set it splits each token's positions
 * into at most LP_CPU_ATTN_MAX_PARTS parts (attn.c). */
#define LP_CPU_ATTN_ROWS 4
#define LP_CPU_ATTN_MAX_PARTS 16

struct lp_cpu_scratch {
	float *att_tmp;   /* (n_threads, n_ctx) attention scores */
	/* (LP_CPU_ATTN_ROWS - 1, LP_CPU_ATTN_MAX_PARTS) blocks of n_head *
	 * (head_dim + 2): each part's outputs, maxima and sums, or NULL
	 * when the limits gave no head_dim */
	float *att_part;
	float *kf, *vf;   /* (n_ctx, kv_dim) one layer as floats, or NULL for F32 */
	uint32_t n_ctx;
};
void lp_backend_cpu_kv_store(const struct lp_backend_kv *kv, uint32_t pos0, size_t n,
			     const float *k, const float *v);
void lp_backend_cpu_attention(struct lp_pool *pool, const struct lp_cpu_scratch *s,
			      const struct lp_backend_attn *a);

/* Encoder and retrieval ops (encoder.c), on `pool`. enc_attention uses
 * att, `stride` floats per thread (at least L * L). */
int lp_backend_cpu_enc_avx2(void);
void lp_backend_cpu_layernorm(struct lp_pool *pool, float *out, const float *x, const float *w,
			      const float *b, size_t n, size_t width, float eps);
void lp_backend_cpu_gelu(struct lp_pool *pool, float *x, size_t count);
void lp_backend_cpu_add(struct lp_pool *pool, float *y, const float *x, size_t n, size_t width,
			size_t ldx);
void lp_backend_cpu_enc_attention(struct lp_pool *pool, float *att, size_t stride,
				  const struct lp_backend_enc_attn *a);
void lp_backend_cpu_mean_pool(float *out, const float *x, const int32_t *lens, size_t n_seq,
			      size_t L, size_t width);
void lp_backend_cpu_topk(struct lp_pool *pool, const float *scores, size_t lds, size_t n_q,
			 size_t n, size_t k, float *out, int32_t *idx);
void lp_backend_cpu_scatter_l2(float *out, size_t n, size_t dim, const uint32_t *off,
			       const uint32_t *bucket, const float *val);

#endif
