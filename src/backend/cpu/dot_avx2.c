/*
 * dot_avx2.c - AVX2 + FMA + F16C dot products (x86-64 only).
 *
 * Built in its own convenience library with -mavx2 -mfma -mf16c; nothing
 * here runs unless lp_cpu_kernels_avx2() found those features at run time.
 * The integer kernels follow the scalar reference exactly (same integer
 * sums per block, one float multiply-add per block), so they differ from it
 * only by float summation order.
 *
 * 8-bit products use _mm256_maddubs_epi16(unsigned, signed), which sums
 * adjacent pairs into int16: every pair here stays below 32767 (at most
 * 2 * 128 * 127), so no saturation occurs.
 */
#include "backend/cpu/kernels.h"

#include <immintrin.h>
#include <string.h>

#include "model/quant_blocks.h"

static inline float hsum_ps(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* fp16 -> float in one instruction (F16C); same result as lp_fp16_to_fp32. */
static inline float h2f(uint16_t h)
{
	return _cvtsh_ss(h);
}

static inline __m256i ones16(void)
{
	return _mm256_set1_epi16(1);
}

/* int32 lanes of sum(u * s) for 32 unsigned bytes u and signed bytes s. */
static inline __m256i dot_u8_i8(__m256i u, __m256i s)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), ones16());
}

/* 32 nibbles of 16 bytes: low nibbles in bytes 0..15, high in 16..31. */
static inline __m256i unpack_nibbles16(const uint8_t *p)
{
	__m128i b = _mm_loadu_si128((const __m128i *)p);
	__m128i m = _mm_set1_epi8(0x0F);

	return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

/* ---- float weights ---- */

static float dot_f32(const void *w, const void *a, size_t n)
{
	const float *x = w, *y = a;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	size_t i = 0;
	float s;

	for (; i + 16 <= n; i += 16) {
		acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
		acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), acc1);
	}
	for (; i + 8 <= n; i += 8)
		acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
	s = hsum_ps(_mm256_add_ps(acc0, acc1));
	for (; i < n; i++)
		s += x[i] * y[i];
	return s;
}

static float dot_f16(const void *w, const void *a, size_t n)
{
	const uint16_t *x = w;
	const float *y = a;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	size_t i = 0;
	float s;

	for (; i + 16 <= n; i += 16) {
		__m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
		__m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i + 8)));
		acc0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(y + i), acc0);
		acc1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(y + i + 8), acc1);
	}
	s = hsum_ps(_mm256_add_ps(acc0, acc1));
	for (; i < n; i++)
		s += lp_fp16_to_fp32(x[i]) * y[i];
	return s;
}

static inline __m256 load_bf16(const uint16_t *p)
{
	__m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));

	return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

static float dot_bf16(const void *w, const void *a, size_t n)
{
	const uint16_t *x = w;
	const float *y = a;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	size_t i = 0;
	float s;

	for (; i + 16 <= n; i += 16) {
		acc0 = _mm256_fmadd_ps(load_bf16(x + i), _mm256_loadu_ps(y + i), acc0);
		acc1 = _mm256_fmadd_ps(load_bf16(x + i + 8), _mm256_loadu_ps(y + i + 8), acc1);
	}
	s = hsum_ps(_mm256_add_ps(acc0, acc1));
	for (; i < n; i++)
		s += lp_bf16_to_fp32(x[i]) * y[i];
	return s;
}

/* ---- legacy blocks of 32 ---- */

static float dot_q4_0(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_0 *x = w;
	const struct lp_act_q8_32 *y = a;
	__m256 acc = _mm256_setzero_ps();
	float corr = 0;

	for (size_t i = 0; i < n / LP_QK; i++) {
		__m256i q = unpack_nibbles16(x[i].qs);
		__m256i p = dot_u8_i8(q, _mm256_loadu_si256((const __m256i *)y[i].qs));
		float dw = h2f(x[i].d);
		/* sum (q - 8) a = sum q a - 8 sum a, with da * sum a = s */
		acc = _mm256_fmadd_ps(_mm256_set1_ps(dw * y[i].d), _mm256_cvtepi32_ps(p), acc);
		corr += dw * y[i].s;
	}
	return hsum_ps(acc) - 8.0f * corr;
}

static float dot_q4_1(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_1 *x = w;
	const struct lp_act_q8_32 *y = a;
	__m256 acc = _mm256_setzero_ps();
	float mins = 0;

	for (size_t i = 0; i < n / LP_QK; i++) {
		__m256i q = unpack_nibbles16(x[i].qs);
		__m256i p = dot_u8_i8(q, _mm256_loadu_si256((const __m256i *)y[i].qs));
		acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * y[i].d),
				      _mm256_cvtepi32_ps(p), acc);
		mins += h2f(x[i].m) * y[i].s;
	}
	return hsum_ps(acc) + mins;
}

static float dot_q8_0(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q8_0 *x = w;
	const struct lp_act_q8_32 *y = a;
	__m256 acc = _mm256_setzero_ps();

	for (size_t i = 0; i < n / LP_QK; i++) {
		__m256i qw = _mm256_loadu_si256((const __m256i *)x[i].qs);
		__m256i qa = _mm256_loadu_si256((const __m256i *)y[i].qs);
		/* |w| * (a with w's sign): unsigned by signed */
		__m256i p = dot_u8_i8(_mm256_abs_epi8(qw), _mm256_sign_epi8(qa, qw));
		acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * y[i].d),
				      _mm256_cvtepi32_ps(p), acc);
	}
	return hsum_ps(acc);
}

/* ---- K super-blocks of 256 ---- */

/* Scales and the mins term of a Q4_K/Q5_K block. */
static inline int k_scales(const uint8_t *packed, const int16_t *bsums, uint8_t *sc)
{
	int mins = 0;

	for (int j = 0; j < 8; j++) {
		uint8_t m;
		lp_k_scale_min(packed, j, &sc[j], &m);
		mins += m * (bsums[2 * j] + bsums[2 * j + 1]);
	}
	return mins;
}

static float dot_q4_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_k *x = w;
	const struct lp_act_q8_256 *y = a;
	const __m256i m4 = _mm256_set1_epi8(0x0F);
	__m256 acc = _mm256_setzero_ps();
	float mins = 0;

	for (size_t i = 0; i < n / LP_QK_K; i++) {
		uint8_t sc[8];
		int msum = k_scales(x[i].scales, y[i].bsums, sc);
		__m256i sumi = _mm256_setzero_si256();
		float dw = h2f(x[i].d) * y[i].d;

		for (int c = 0; c < 4; c++) {
			__m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * c));
			__m256i lo = _mm256_and_si256(q, m4);
			__m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
			__m256i alo = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c));
			__m256i ahi = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c + 32));
			__m256i plo = _mm256_maddubs_epi16(lo, alo);
			__m256i phi = _mm256_maddubs_epi16(hi, ahi);
			sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(plo, _mm256_set1_epi16(sc[2 * c])));
			sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(phi, _mm256_set1_epi16(sc[2 * c + 1])));
		}
		acc = _mm256_fmadd_ps(_mm256_set1_ps(dw), _mm256_cvtepi32_ps(sumi), acc);
		mins += h2f(x[i].dmin) * y[i].d * (float)msum;
	}
	return hsum_ps(acc) - mins;
}

static float dot_q5_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q5_k *x = w;
	const struct lp_act_q8_256 *y = a;
	const __m256i m4 = _mm256_set1_epi8(0x0F), b4 = _mm256_set1_epi8(0x10);
	__m256 acc = _mm256_setzero_ps();
	float mins = 0;

	for (size_t i = 0; i < n / LP_QK_K; i++) {
		uint8_t sc[8];
		int msum = k_scales(x[i].scales, y[i].bsums, sc);
		__m256i sumi = _mm256_setzero_si256();
		__m256i qh = _mm256_loadu_si256((const __m256i *)x[i].qh);
		float dw = h2f(x[i].d) * y[i].d;

		for (int c = 0; c < 4; c++) {
			__m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * c));
			__m256i mlo = _mm256_set1_epi8((char)(1 << (2 * c)));
			__m256i mhi = _mm256_set1_epi8((char)(1 << (2 * c + 1)));
			/* fifth bit: 0x10 where the qh bit is set */
			__m256i hlo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, mlo), mlo), b4);
			__m256i hhi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, mhi), mhi), b4);
			__m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), hlo);
			__m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), hhi);
			__m256i alo = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c));
			__m256i ahi = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c + 32));
			__m256i plo = _mm256_maddubs_epi16(lo, alo);
			__m256i phi = _mm256_maddubs_epi16(hi, ahi);
			sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(plo, _mm256_set1_epi16(sc[2 * c])));
			sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(phi, _mm256_set1_epi16(sc[2 * c + 1])));
		}
		acc = _mm256_fmadd_ps(_mm256_set1_ps(dw), _mm256_cvtepi32_ps(sumi), acc);
		mins += h2f(x[i].dmin) * y[i].d * (float)msum;
	}
	return hsum_ps(acc) - mins;
}

static float dot_q6_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q6_k *x = w;
	const struct lp_act_q8_256 *y = a;
	const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
	__m256 acc = _mm256_setzero_ps();

	for (size_t i = 0; i < n / LP_QK_K; i++) {
		__m256i sumi = _mm256_setzero_si256();
		int offset = 0;

		/* sum (q - 32) a = sum q a - 32 sum a; the group sums are bsums */
		for (int g = 0; g < 16; g++)
			offset += x[i].scales[g] * y[i].bsums[g];
		for (int h = 0; h < 2; h++) {
			const uint8_t *ql = x[i].ql + 64 * h;
			const int8_t *sc = x[i].scales + 8 * h;
			__m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
			__m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
			__m256i qh = _mm256_loadu_si256((const __m256i *)(x[i].qh + 32 * h));
			__m256i q[4];

			q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4),
					       _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4));
			q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
					       _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4));
			q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
					       _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m2), 4));
			q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
					       _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m2), 4));
			for (int k = 0; k < 4; k++) {
				__m256i qa = _mm256_loadu_si256((const __m256i *)(y[i].qs + 128 * h + 32 * k));
				__m256i p = _mm256_maddubs_epi16(q[k], qa);
				/* int16 lanes 0-7 hold elements 0-15 (scale 2k), 8-15 the rest */
				__m256i s = _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]),
							     _mm_set1_epi16(sc[2 * k]));
				sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, s));
			}
		}
		sumi = _mm256_sub_epi32(sumi, _mm256_setr_epi32(32 * offset, 0, 0, 0, 0, 0, 0, 0));
		acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * y[i].d),
				      _mm256_cvtepi32_ps(sumi), acc);
	}
	return hsum_ps(acc);
}

const struct lp_cpu_kernels lp_cpu_kernels_avx2_set = {
	"avx2", dot_f32, dot_f16, dot_bf16, dot_q4_0, dot_q4_1, dot_q8_0,
	dot_q4_k, dot_q5_k, dot_q6_k,
};
