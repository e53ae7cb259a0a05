/*
 * attn_avx512.c - a decode step's attention over an F16 cache for one
 * group of query heads, those that share a KV head (AVX-512 F), as the
 * AVX-512 set's attn_f16 (kernels.h: struct lp_cpu_attn_f16).
 *
 * Built in the AVX-512 set's convenience library; runs only when
 * lp_cpu_kernels_avx512() found the features.
 *
 * Head by head, a step read every cache row once per query head, and
 * widened it from fp16 each time: 82 cycles a head and position on Zen 4
 * (SmolLM2, 30% of a step at 700 positions). Here each row is widened
 * once for the group (3 heads in SmolLM2, 7 in Qwen2.5-0.5B), and:
 * - scores: 16 positions' rows are widened into a small float block in
 *   L1, and every head's 16 dot products are summed in 16 vectors whose
 *   lanes one transposing tree of 45 shuffles and adds reduces to the 16
 *   scores at once, where a horizontal sum a score cost about 10;
 * - softmax online (running max, sum and output per head, the output
 *   scaled by exp(old max - new max) at each chunk of 64 positions), so
 *   no buffer grows with the context and the rows of V are read while
 *   the chunk's K rows are still near;
 * - mix: V's rows widened once per chunk step for every head, 32 columns
 *   of up to 8 heads' outputs in registers.
 * The exponentials are lp_exp_sum_f32's (2 ulp); the float sums differ
 * from the reference's order, within the tests' tolerance.
 */
#include "backend/cpu/kernels.h"

#include <immintrin.h>
#include <math.h>

#include "backend/cpu/gemm.h"

#define CHUNK 64  /* positions a step of the online softmax takes */

/*
 * r[j] = the sum of the 16 lanes of v[p(j)], j < 16, where p(j) = 4 (j %
 * 4) + j / 4 (the tree's last steps leave lane 4i + k holding vector 4k +
 * i's sum, so the callers store position j's sum at v[p(j)]).
 */
static inline __m512 sum16x16(const __m512 v[16])
{
	__m512 w[8], x[4], y[2];

	/* 256-bit halves: w[k] holds v[2k]'s 8 partial sums, then v[2k+1]'s */
	for (int k = 0; k < 8; k++)
		w[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x44),
				     _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0xEE));
	/* 128-bit lane i of x[k] holds 4 partial sums of v[4k + i] */
	for (int k = 0; k < 4; k++)
		x[k] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * k], w[2 * k + 1], 0x88),
				     _mm512_shuffle_f32x4(w[2 * k], w[2 * k + 1], 0xDD));
	for (int k = 0; k < 2; k++)
		y[k] = _mm512_add_ps(_mm512_unpacklo_ps(x[2 * k], x[2 * k + 1]),
				     _mm512_unpackhi_ps(x[2 * k], x[2 * k + 1]));
	return _mm512_add_ps(
		_mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(y[0]), _mm512_castps_pd(y[1]))),
		_mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(y[0]), _mm512_castps_pd(y[1]))));
}

/*
 * The cache rows come from memory, not from cache (a step reads every
 * layer's, 24 MB at 1024 positions for SmolLM2), and their stride (kv_dim
 * halves) is too long for the hardware's prefetch to keep up: read K
 * PF_ROWS positions ahead of the scores (32 took about 5% longer at 1024
 * positions, SmolLM2, one thread, load 6; 192 no faster), and V's rows of
 * a block while its K rows are widened, so that they are near when the
 * chunk's mix reads them. Into L2 (prefetcht1), as the mat-vecs read
 * ahead: into L1, the whole step at 1024 positions took a seventh longer
 * (0.87-1.05 against 0.75-0.84 CPU seconds for 64 steps, load 4-5).
 * Prefetches never fault, so running past the cache's end is harmless
 * (the addresses are formed as integers).
 */
#define PF_ROWS 96

static inline void prefetch_rows(const uint16_t *base, size_t row0, size_t n, size_t ld,
				 size_t hd)
{
	for (size_t j = row0; j < row0 + n; j++) {
		uintptr_t at = (uintptr_t)base + j * ld * sizeof(uint16_t);
		for (size_t o = 0; o < hd * sizeof(uint16_t); o += 64)
			_mm_prefetch((const char *)(at + o), _MM_HINT_T1);
	}
}

/* Rows [0, nr) of 16 (hd fp16 each, ld apart) as floats into kf (16 rows
 * of hd), rows past nr zeros. */
static void widen16(const uint16_t *src, size_t ld, size_t hd, size_t nr, float *kf)
{
	for (size_t j = 0; j < 16; j++)
		for (size_t c = 0; c < hd; c += 16)
			_mm512_store_ps(kf + j * hd + c,
					j < nr ? _mm512_cvtph_ps(_mm256_loadu_si256(
							 (const __m256i *)(src + j * ld + c)))
					       : _mm512_setzero_ps());
}

/* scale * (q . row j of kf) for the 16 rows of kf, in order. */
static inline __m512 scores16(const float *q, const float *kf, size_t hd, __m512 scale)
{
	__m512 v[16];

#pragma GCC unroll 16
	for (int j = 0; j < 16; j++)
		v[j] = _mm512_setzero_ps();
	for (size_t c = 0; c < hd; c += 16) {
		__m512 qc = _mm512_loadu_ps(q + c);
#pragma GCC unroll 16
		for (int j = 0; j < 16; j++)
			v[4 * (j % 4) + j / 4] = _mm512_fmadd_ps(qc, _mm512_load_ps(kf + j * hd + c),
								 v[4 * (j % 4) + j / 4]);
	}
	return _mm512_mul_ps(sum16x16(v), scale);
}

/*
 * Columns [d, d + 32) of the nh heads' outputs o (rows LP_CPU_ATTN_MAX_HD
 * apart): o = alpha o + sum_j p[j] V[j] over the chunk's nc rows of V.
 * nh is a constant where this is inlined, so the 2 nh sums stay in
 * registers.
 */
static inline __attribute__((always_inline)) void
mix32(int nh, const uint16_t *v, size_t ld, size_t nc, const float *p, float *o,
      const float *alpha, size_t d)
{
	__m512 acc[LP_CPU_ATTN_MAX_HEADS][2];

#pragma GCC unroll 8
	for (int h = 0; h < nh; h++) {
		__m512 a = _mm512_set1_ps(alpha[h]);
		acc[h][0] = _mm512_mul_ps(a, _mm512_load_ps(o + h * LP_CPU_ATTN_MAX_HD + d));
		acc[h][1] = _mm512_mul_ps(a, _mm512_load_ps(o + h * LP_CPU_ATTN_MAX_HD + d + 16));
	}
	for (size_t j = 0; j < nc; j++) {
		const uint16_t *row = v + j * ld + d;
		__m512 v0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)row));
		__m512 v1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 16)));
#pragma GCC unroll 8
		for (int h = 0; h < nh; h++) {
			__m512 pj = _mm512_set1_ps(p[h * CHUNK + j]);
			acc[h][0] = _mm512_fmadd_ps(pj, v0, acc[h][0]);
			acc[h][1] = _mm512_fmadd_ps(pj, v1, acc[h][1]);
		}
	}
#pragma GCC unroll 8
	for (int h = 0; h < nh; h++) {
		_mm512_store_ps(o + h * LP_CPU_ATTN_MAX_HD + d, acc[h][0]);
		_mm512_store_ps(o + h * LP_CPU_ATTN_MAX_HD + d + 16, acc[h][1]);
	}
}

static void mix(size_t nh, const uint16_t *v, size_t ld, size_t hd, size_t nc, const float *p,
		float *o, const float *alpha)
{
	for (size_t d = 0; d < hd; d += 32) {
		switch (nh) {
		case 1: mix32(1, v, ld, nc, p, o, alpha, d); break;
		case 2: mix32(2, v, ld, nc, p, o, alpha, d); break;
		case 3: mix32(3, v, ld, nc, p, o, alpha, d); break;
		case 4: mix32(4, v, ld, nc, p, o, alpha, d); break;
		case 5: mix32(5, v, ld, nc, p, o, alpha, d); break;
		case 6: mix32(6, v, ld, nc, p, o, alpha, d); break;
		case 7: mix32(7, v, ld, nc, p, o, alpha, d); break;
		default: mix32(8, v, ld, nc, p, o, alpha, d); break;
		}
	}
}

/* max of x[0..n), n <= CHUNK */
static float max_of(const float *x, size_t n)
{
	__m512 m = _mm512_set1_ps(-INFINITY);

	for (size_t i = 0; i < n; i += 16) {
		__mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
		m = _mm512_max_ps(m, _mm512_mask_loadu_ps(m, k, x + i));
	}
	return _mm512_reduce_max_ps(m);
}

void lp_cpu_attn_f16_avx512(const struct lp_cpu_attn_f16 *a)
{
	float kf[16 * LP_CPU_ATTN_MAX_HD] __attribute__((aligned(64)));
	float o[LP_CPU_ATTN_MAX_HEADS * LP_CPU_ATTN_MAX_HD] __attribute__((aligned(64)));
	float p[LP_CPU_ATTN_MAX_HEADS * CHUNK] __attribute__((aligned(64)));
	float m[LP_CPU_ATTN_MAX_HEADS], l[LP_CPU_ATTN_MAX_HEADS], alpha[LP_CPU_ATTN_MAX_HEADS];
	const __m512 scale = _mm512_set1_ps(a->scale);
	size_t hd = a->head_dim, nh = a->n_q;

	for (size_t h = 0; h < nh; h++) {
		m[h] = -INFINITY;
		l[h] = 0.0f;
		for (size_t c = 0; c < hd; c += 16)
			_mm512_store_ps(o + h * LP_CPU_ATTN_MAX_HD + c, _mm512_setzero_ps());
	}
	for (size_t c0 = 0; c0 < a->n_pos; c0 += CHUNK) {
		size_t nc = a->n_pos - c0 < CHUNK ? a->n_pos - c0 : CHUNK;
		for (size_t b = 0; b < nc; b += 16) {
			prefetch_rows(a->k, c0 + b + PF_ROWS, 16, a->ld, hd);
			prefetch_rows(a->v, c0 + b, 16, a->ld, hd);
			widen16(a->k + (c0 + b) * a->ld, a->ld, hd, nc - b < 16 ? nc - b : 16, kf);
			for (size_t h = 0; h < nh; h++)
				_mm512_store_ps(p + h * CHUNK + b, scores16(a->q + h * hd, kf, hd, scale));
		}
		for (size_t h = 0; h < nh; h++) {
			float mx = max_of(p + h * CHUNK, nc), mnew = mx > m[h] ? mx : m[h];
			alpha[h] = expf(m[h] - mnew);  /* 0 at the first chunk */
			l[h] = l[h] * alpha[h] + lp_exp_sum_f32(p + h * CHUNK, nc, mnew);
			m[h] = mnew;
		}
		mix(nh, a->v + c0 * a->ld, a->ld, hd, nc, p, o, alpha);
	}
	for (size_t h = 0; h < nh; h++) {
		__m512 inv = _mm512_set1_ps(a->m ? 1.0f : 1.0f / l[h]);
		if (a->m) {
			a->m[h] = m[h];
			a->l[h] = l[h];
		}
		for (size_t c = 0; c < hd; c += 16)
			_mm512_storeu_ps(a->out + h * hd + c,
					 _mm512_mul_ps(inv, _mm512_load_ps(o + h * LP_CPU_ATTN_MAX_HD + c)));
	}
}
