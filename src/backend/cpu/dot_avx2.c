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

#include "backend/cpu/simd_x86.h"
#include "quant/blocks.h"

static inline __m256i ones16(void)
{
	return _mm256_set1_epi16(1);
}

/* int32 lanes of sum(u * s) for 32 unsigned bytes u and signed bytes s. */
static inline __m256i dot_u8_i8(__m256i u, __m256i s)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), ones16());
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

/* Block i of Q4_0/Q4_1 against its activations: sum q * a as 8 floats. */
static inline __m256 q4_block(const uint8_t *qs, const int8_t *qa)
{
	__m256i p = dot_u8_i8(unpack_nibbles16(qs), _mm256_loadu_si256((const __m256i *)qa));

	return _mm256_cvtepi32_ps(p);
}

/*
 * fp16 -> float by table for the per-block scales of the legacy types:
 * with the value in memory, the broadcast to 8 lanes is a plain load, while
 * converting in a register and broadcasting both need the shuffle port, the
 * bottleneck of these kernels. 256 KiB, filled once (lp_cpu_avx2_init).
 */
float lp_cpu_fp16_tab[1 << 16];

void lp_cpu_avx2_init(void)
{
	for (uint32_t h = 0; h < (1u << 16); h++)
		lp_cpu_fp16_tab[h] = lp_fp16_to_fp32((uint16_t)h);
}

/* d_w * d_a in all 8 lanes. */
static inline __m256 block_scale(uint16_t dw, const float *da)
{
	return _mm256_mul_ps(_mm256_broadcast_ss(&lp_cpu_fp16_tab[dw]), _mm256_broadcast_ss(da));
}

/*
 * Q4_0: sum (q - 8) a = sum q a - 8 sum a, and da * sum a is the
 * activation block's s. Two blocks per step, in two accumulators, so that
 * the multiply-adds do not wait on each other.
 */
static float dot_q4_0(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_0 *x = w;
	const struct lp_act_q8_32 *y = a;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	__m256 corr = _mm256_setzero_ps();  /* every lane holds the same sum */
	size_t nb = n / LP_QK, i = 0;

	for (; i + 2 <= nb; i += 2) {
		prefetch_at(&x[i], PF_AHEAD, 2 * sizeof(x[0]));
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), q4_block(x[i].qs, y[i].qs), acc0);
		acc1 = _mm256_fmadd_ps(block_scale(x[i + 1].d, &y[i + 1].d),
				       q4_block(x[i + 1].qs, y[i + 1].qs), acc1);
		corr = _mm256_add_ps(corr, _mm256_add_ps(block_scale(x[i].d, &y[i].s),
							  block_scale(x[i + 1].d, &y[i + 1].s)));
	}
	for (; i < nb; i++) {
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), q4_block(x[i].qs, y[i].qs), acc0);
		corr = _mm256_add_ps(block_scale(x[i].d, &y[i].s), corr);
	}
	return hsum_ps(_mm256_add_ps(acc0, acc1)) - 8.0f * _mm256_cvtss_f32(corr);
}

/* Q4_1: sum (d q + m) a = d * da * sum q a + m * s. */
static float dot_q4_1(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_1 *x = w;
	const struct lp_act_q8_32 *y = a;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	__m256 mins0 = _mm256_setzero_ps(), mins1 = _mm256_setzero_ps(); /* lanes equal */
	size_t nb = n / LP_QK, i = 0;

	for (; i + 2 <= nb; i += 2) {
		prefetch_at(&x[i], PF_AHEAD, 2 * sizeof(x[0]));
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), q4_block(x[i].qs, y[i].qs), acc0);
		acc1 = _mm256_fmadd_ps(block_scale(x[i + 1].d, &y[i + 1].d),
				       q4_block(x[i + 1].qs, y[i + 1].qs), acc1);
		mins0 = _mm256_fmadd_ps(_mm256_broadcast_ss(&lp_cpu_fp16_tab[x[i].m]),
					_mm256_broadcast_ss(&y[i].s), mins0);
		mins1 = _mm256_fmadd_ps(_mm256_broadcast_ss(&lp_cpu_fp16_tab[x[i + 1].m]),
					_mm256_broadcast_ss(&y[i + 1].s), mins1);
	}
	for (; i < nb; i++) {
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), q4_block(x[i].qs, y[i].qs), acc0);
		mins0 = _mm256_fmadd_ps(_mm256_broadcast_ss(&lp_cpu_fp16_tab[x[i].m]),
					_mm256_broadcast_ss(&y[i].s), mins0);
	}
	return hsum_ps(_mm256_add_ps(acc0, acc1)) + _mm256_cvtss_f32(_mm256_add_ps(mins0, mins1));
}

/*
 * The fifth bits of a Q5_0/Q5_1 block as 0x10 in byte i when bit i of the
 * little-endian word qh is set: each byte gets its qh byte (i / 8) by a
 * shuffle, then keeps only its own bit.
 */
static inline __m256i q5_high_bits(const uint8_t *qh)
{
	uint32_t u;
	__m256i v, bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);

	memcpy(&u, qh, 4);
	v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)u),
				_mm256_set_epi64x(0x0303030303030303ll, 0x0202020202020202ll,
						  0x0101010101010101ll, 0));
	v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
	return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

/* Block of Q5_0/Q5_1 (values 0..31) against its activations, as 8 floats. */
static inline __m256 q5_block(const uint8_t *qs, const uint8_t *qh, const int8_t *qa)
{
	__m256i q = _mm256_or_si256(unpack_nibbles16(qs), q5_high_bits(qh));

	return _mm256_cvtepi32_ps(dot_u8_i8(q, _mm256_loadu_si256((const __m256i *)qa)));
}

/* Q5_0: sum (q - 16) a = sum q a - 16 sum a, as Q4_0 does with 8. */
static float dot_q5_0(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q5_0 *x = w;
	const struct lp_act_q8_32 *y = a;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	__m256 corr = _mm256_setzero_ps();  /* every lane holds the same sum */
	size_t nb = n / LP_QK, i = 0;

	for (; i + 2 <= nb; i += 2) {
		prefetch_at(&x[i], PF_AHEAD, 2 * sizeof(x[0]));
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d),
				       q5_block(x[i].qs, x[i].qh, y[i].qs), acc0);
		acc1 = _mm256_fmadd_ps(block_scale(x[i + 1].d, &y[i + 1].d),
				       q5_block(x[i + 1].qs, x[i + 1].qh, y[i + 1].qs), acc1);
		corr = _mm256_add_ps(corr, _mm256_add_ps(block_scale(x[i].d, &y[i].s),
							  block_scale(x[i + 1].d, &y[i + 1].s)));
	}
	for (; i < nb; i++) {
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d),
				       q5_block(x[i].qs, x[i].qh, y[i].qs), acc0);
		corr = _mm256_add_ps(block_scale(x[i].d, &y[i].s), corr);
	}
	return hsum_ps(_mm256_add_ps(acc0, acc1)) - 16.0f * _mm256_cvtss_f32(corr);
}

/* Q5_1: sum (d q + m) a = d * da * sum q a + m * s, as Q4_1. */
static float dot_q5_1(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q5_1 *x = w;
	const struct lp_act_q8_32 *y = a;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	__m256 mins0 = _mm256_setzero_ps(), mins1 = _mm256_setzero_ps(); /* lanes equal */
	size_t nb = n / LP_QK, i = 0;

	for (; i + 2 <= nb; i += 2) {
		prefetch_at(&x[i], PF_AHEAD, 2 * sizeof(x[0]));
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d),
				       q5_block(x[i].qs, x[i].qh, y[i].qs), acc0);
		acc1 = _mm256_fmadd_ps(block_scale(x[i + 1].d, &y[i + 1].d),
				       q5_block(x[i + 1].qs, x[i + 1].qh, y[i + 1].qs), acc1);
		mins0 = _mm256_fmadd_ps(_mm256_broadcast_ss(&lp_cpu_fp16_tab[x[i].m]),
					_mm256_broadcast_ss(&y[i].s), mins0);
		mins1 = _mm256_fmadd_ps(_mm256_broadcast_ss(&lp_cpu_fp16_tab[x[i + 1].m]),
					_mm256_broadcast_ss(&y[i + 1].s), mins1);
	}
	for (; i < nb; i++) {
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d),
				       q5_block(x[i].qs, x[i].qh, y[i].qs), acc0);
		mins0 = _mm256_fmadd_ps(_mm256_broadcast_ss(&lp_cpu_fp16_tab[x[i].m]),
					_mm256_broadcast_ss(&y[i].s), mins0);
	}
	return hsum_ps(_mm256_add_ps(acc0, acc1)) + _mm256_cvtss_f32(_mm256_add_ps(mins0, mins1));
}

/* Q8_0: |w| * (a with w's sign) makes the product unsigned by signed. */
static inline __m256 q8_block(const int8_t *qw, const int8_t *qa)
{
	__m256i w = _mm256_loadu_si256((const __m256i *)qw);
	__m256i v = _mm256_loadu_si256((const __m256i *)qa);

	return _mm256_cvtepi32_ps(dot_u8_i8(_mm256_abs_epi8(w), _mm256_sign_epi8(v, w)));
}

static float dot_q8_0(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q8_0 *x = w;
	const struct lp_act_q8_32 *y = a;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	size_t nb = n / LP_QK, i = 0;

	for (; i + 2 <= nb; i += 2) {
		prefetch_at(&x[i], PF_AHEAD, 2 * sizeof(x[0]));
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), q8_block(x[i].qs, y[i].qs), acc0);
		acc1 = _mm256_fmadd_ps(block_scale(x[i + 1].d, &y[i + 1].d),
				       q8_block(x[i + 1].qs, y[i + 1].qs), acc1);
	}
	for (; i < nb; i++)
		acc0 = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), q8_block(x[i].qs, y[i].qs), acc0);
	return hsum_ps(_mm256_add_ps(acc0, acc1));
}

/* acc + d_w d_a * (w . a) for one Q8_0 block of one row: the steps of
 * dot_q8_0 in the same order, with the activations already loaded. */
static inline __m256 q8_row_step(const struct lp_blk_q8_0 *x, __m256i v, __m256 da, __m256 acc)
{
	__m256i w = _mm256_loadu_si256((const __m256i *)x->qs);
	__m256 p = _mm256_cvtepi32_ps(dot_u8_i8(_mm256_abs_epi8(w), _mm256_sign_epi8(v, w)));

	return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_broadcast_ss(&lp_cpu_fp16_tab[x->d]), da), p, acc);
}

/*
 * Four Q8_0 rows: each activation block is loaded once for all of them.
 * Every row keeps dot_q8_0's two accumulators (even and odd blocks), so
 * the sums are the same bit for bit.
 */
static void dot4_q8_0(const void *w, size_t rb, const void *a, size_t n, float y[4])
{
	const struct lp_blk_q8_0 *x0 = w, *x1 = (const void *)((const char *)w + rb);
	const struct lp_blk_q8_0 *x2 = (const void *)((const char *)w + 2 * rb);
	const struct lp_blk_q8_0 *x3 = (const void *)((const char *)w + 3 * rb);
	const struct lp_act_q8_32 *ya = a;
	__m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00;
	__m256 a20 = a00, a21 = a00, a30 = a00, a31 = a00;
	size_t nb = n / LP_QK, i = 0;
	/* the four rows advance together: read ahead of all of them, two
	 * groups of rows on, as far as the four rows read at each step */
	size_t pf = 0;

	for (; i + 2 <= nb; i += 2, pf += 4 * 2 * sizeof(*x0)) {
		__m256i v = _mm256_loadu_si256((const __m256i *)ya[i].qs);
		__m256 da = _mm256_broadcast_ss(&ya[i].d);

		prefetch_at(w, 8 * rb + pf, 4 * 2 * sizeof(*x0));
		a00 = q8_row_step(&x0[i], v, da, a00);
		a10 = q8_row_step(&x1[i], v, da, a10);
		a20 = q8_row_step(&x2[i], v, da, a20);
		a30 = q8_row_step(&x3[i], v, da, a30);
		v = _mm256_loadu_si256((const __m256i *)ya[i + 1].qs);
		da = _mm256_broadcast_ss(&ya[i + 1].d);
		a01 = q8_row_step(&x0[i + 1], v, da, a01);
		a11 = q8_row_step(&x1[i + 1], v, da, a11);
		a21 = q8_row_step(&x2[i + 1], v, da, a21);
		a31 = q8_row_step(&x3[i + 1], v, da, a31);
	}
	if (i < nb) {
		__m256i v = _mm256_loadu_si256((const __m256i *)ya[i].qs);
		__m256 da = _mm256_broadcast_ss(&ya[i].d);

		a00 = q8_row_step(&x0[i], v, da, a00);
		a10 = q8_row_step(&x1[i], v, da, a10);
		a20 = q8_row_step(&x2[i], v, da, a20);
		a30 = q8_row_step(&x3[i], v, da, a30);
	}
	y[0] = hsum_ps(_mm256_add_ps(a00, a01));
	y[1] = hsum_ps(_mm256_add_ps(a10, a11));
	y[2] = hsum_ps(_mm256_add_ps(a20, a21));
	y[3] = hsum_ps(_mm256_add_ps(a30, a31));
}

/* ---- K super-blocks of 256 ---- */

/* Shuffle masks broadcasting int16 lane j of a 128-bit lane to all 16. */
static inline __m256i lane16_mask(int j)
{
	return _mm256_set1_epi16((short)((2 * j) | ((2 * j + 1) << 8)));
}

/* int32 lanes of sum_j m_j * (bsums[2j] + bsums[2j+1]). */
static inline __m256i k_mins(const uint8_t m[8], const int16_t *bsums)
{
	__m256i b = _mm256_loadu_si256((const __m256i *)bsums);
	__m256i pair = _mm256_madd_epi16(b, ones16());
	__m256i m32 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)m));

	return _mm256_mullo_epi32(pair, m32);
}

/* Scales as int16 in both 128-bit lanes, ready for lane16_mask shuffles. */
static inline __m256i k_scales16(const uint8_t sc[8])
{
	return _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)sc)));
}

static float dot_q4_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_k *x = w;
	const struct lp_act_q8_256 *y = a;
	const __m256i m4 = _mm256_set1_epi8(0x0F);
	__m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();

	for (size_t i = 0; i < n / LP_QK_K; i++) {
		uint8_t sc[8], m[8];
		__m256i sumi = _mm256_setzero_si256(), s16;

		prefetch_at(&x[i], PF_AHEAD, sizeof(x[0]));

		k_unpack(x[i].scales, sc, m);
		s16 = k_scales16(sc);
		for (int c = 0; c < 4; c++) {
			__m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * c));
			__m256i lo = _mm256_and_si256(q, m4);
			__m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
			__m256i alo = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c));
			__m256i ahi = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c + 32));
			__m256i slo = _mm256_shuffle_epi8(s16, lane16_mask(2 * c));
			__m256i shi = _mm256_shuffle_epi8(s16, lane16_mask(2 * c + 1));
			sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(lo, alo), slo));
			sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(hi, ahi), shi));
		}
		acc = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), _mm256_cvtepi32_ps(sumi), acc);
		accm = _mm256_fmadd_ps(block_scale(x[i].dmin, &y[i].d),
				       _mm256_cvtepi32_ps(k_mins(m, y[i].bsums)), accm);
	}
	return hsum_ps(_mm256_sub_ps(acc, accm));
}

static float dot_q5_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q5_k *x = w;
	const struct lp_act_q8_256 *y = a;
	const __m256i m4 = _mm256_set1_epi8(0x0F), b4 = _mm256_set1_epi8(0x10);
	__m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();

	for (size_t i = 0; i < n / LP_QK_K; i++) {
		uint8_t sc[8], m[8];
		__m256i sumi = _mm256_setzero_si256(), s16;
		__m256i qh = _mm256_loadu_si256((const __m256i *)x[i].qh);

		prefetch_at(&x[i], PF_AHEAD, sizeof(x[0]));

		k_unpack(x[i].scales, sc, m);
		s16 = k_scales16(sc);
		for (int c = 0; c < 4; c++) {
			__m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * c));
			/* fifth bits: bit 2c of qh[l] (low half), bit 2c+1 (high half),
			 * moved to bit 4 */
			__m256i hlo = _mm256_and_si256(_mm256_slli_epi16(qh, 4), b4);
			__m256i hhi = _mm256_and_si256(_mm256_slli_epi16(qh, 3), b4);
			__m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), hlo);
			__m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), hhi);
			__m256i alo = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c));
			__m256i ahi = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c + 32));
			__m256i slo = _mm256_shuffle_epi8(s16, lane16_mask(2 * c));
			__m256i shi = _mm256_shuffle_epi8(s16, lane16_mask(2 * c + 1));
			sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(lo, alo), slo));
			sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(hi, ahi), shi));
			qh = _mm256_srli_epi16(qh, 2);
		}
		acc = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), _mm256_cvtepi32_ps(sumi), acc);
		accm = _mm256_fmadd_ps(block_scale(x[i].dmin, &y[i].d),
				       _mm256_cvtepi32_ps(k_mins(m, y[i].bsums)), accm);
	}
	return hsum_ps(_mm256_sub_ps(acc, accm));
}

static float dot_q6_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q6_k *x = w;
	const struct lp_act_q8_256 *y = a;
	const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
	__m256 acc = _mm256_setzero_ps();
	__m256i sel[4];

	/* int16 lanes 0-7 of a product hold elements 0-15 of quarter k (scale
	 * 2k), lanes 8-15 the rest (scale 2k+1): sel[k] picks them per 128-bit
	 * lane from this half's 8 scales */
	for (int k = 0; k < 4; k++)
		sel[k] = _mm256_set_m128i(_mm_set1_epi16((short)((4 * k + 2) | ((4 * k + 3) << 8))),
					  _mm_set1_epi16((short)((4 * k) | ((4 * k + 1) << 8))));
	for (size_t i = 0; i < n / LP_QK_K; i++) {
		__m256i sc_all = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)x[i].scales));
		/* sum (q - 32) a = sum q a - 32 sum a; the group sums are bsums */
		__m256i offset = _mm256_madd_epi16(sc_all, _mm256_loadu_si256((const __m256i *)y[i].bsums));
		__m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));

		prefetch_at(&x[i], PF_AHEAD, sizeof(x[0]));

		for (int h = 0; h < 2; h++) {
			const uint8_t *ql = x[i].ql + 64 * h;
			const int8_t *qa = y[i].qs + 128 * h;
			__m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
			__m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
			__m256i qh = _mm256_loadu_si256((const __m256i *)(x[i].qh + 32 * h));
			/* this half's 8 scales as int16 in both 128-bit lanes */
			__m256i s16 = _mm256_broadcastsi128_si256(
				_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(x[i].scales + 8 * h))));
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
				__m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256((const __m256i *)(qa + 32 * k)));
				sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, _mm256_shuffle_epi8(s16, sel[k])));
			}
		}
		acc = _mm256_fmadd_ps(block_scale(x[i].d, &y[i].d), _mm256_cvtepi32_ps(sumi), acc);
	}
	return hsum_ps(acc);
}

/* ---- activation quantization ---- */

/*
 * The reference (act_q8_32 / act_q8_256 in model/quant.c) rounds x / d to
 * the nearest integer, ties to even, with d = amax / 127 and 0 for d = 0:
 * the same IEEE division and the default rounding of vcvtps2dq give the
 * same bytes.
 */

static inline float hmax_ps(__m256 v)
{
	__m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	m = _mm_max_ps(m, _mm_movehl_ps(m, m));
	m = _mm_max_ss(m, _mm_movehdup_ps(m));
	return _mm_cvtss_f32(m);
}

static inline int hsum_epi32(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
	return _mm_cvtsi128_si32(s);
}

/* max |x[i]| over 8k floats */
static inline float amax8(const float *x, size_t n)
{
	const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	__m256 m = _mm256_setzero_ps();

	for (size_t i = 0; i < n; i += 8)
		m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(x + i), abs));
	return hmax_ps(m);
}

/* round(x[j] / d) clamped to +-127, as int32, for 8 floats */
static inline __m256i q8_round(const float *x, __m256 d)
{
	__m256i q = _mm256_cvtps_epi32(_mm256_div_ps(_mm256_loadu_ps(x), d));

	return _mm256_max_epi32(_mm256_min_epi32(q, _mm256_set1_epi32(127)),
				_mm256_set1_epi32(-127));
}

/* 32 values as int8 in order, from four vectors of 8 int32; returns their sum
 * in every lane's total (as int32 lanes to add up). */
static inline __m256i q8_store32(int8_t *out, __m256i q0, __m256i q1, __m256i q2, __m256i q3)
{
	__m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));

	/* the packs interleave 128-bit lanes: dwords 0 4 1 5 2 6 3 7 */
	p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
	_mm256_storeu_si256((__m256i *)out, p);
	return _mm256_add_epi32(_mm256_add_epi32(q0, q1), _mm256_add_epi32(q2, q3));
}

static void act_q8_32(const float *x, size_t n, void *blocks)
{
	struct lp_act_q8_32 *b = blocks;

	for (size_t i = 0; i < n / LP_QK; i++, x += LP_QK) {
		float d = amax8(x, LP_QK) / 127.0f;
		__m256 vd = _mm256_set1_ps(d);
		__m256i s;

		b[i].d = d;
		if (d == 0.0f) {
			memset(b[i].qs, 0, sizeof(b[i].qs));
			b[i].s = 0.0f;
			continue;
		}
		s = q8_store32(b[i].qs, q8_round(x, vd), q8_round(x + 8, vd), q8_round(x + 16, vd),
			       q8_round(x + 24, vd));
		b[i].s = d * (float)hsum_epi32(s);
	}
}

static void act_q8_256(const float *x, size_t n, void *blocks)
{
	struct lp_act_q8_256 *b = blocks;

	for (size_t i = 0; i < n / LP_QK_K; i++, x += LP_QK_K) {
		float d = amax8(x, LP_QK_K) / 127.0f;
		__m256 vd = _mm256_set1_ps(d);

		b[i].d = d;
		if (d == 0.0f) {
			memset(b[i].qs, 0, sizeof(b[i].qs));
			memset(b[i].bsums, 0, sizeof(b[i].bsums));
			continue;
		}
		for (int g = 0; g < 16; g += 2) {
			const float *xg = x + 16 * g;
			__m256i q0 = q8_round(xg, vd), q1 = q8_round(xg + 8, vd);
			__m256i q2 = q8_round(xg + 16, vd), q3 = q8_round(xg + 24, vd);

			q8_store32(b[i].qs + 16 * g, q0, q1, q2, q3);
			b[i].bsums[g] = (int16_t)hsum_epi32(_mm256_add_epi32(q0, q1));
			b[i].bsums[g + 1] = (int16_t)hsum_epi32(_mm256_add_epi32(q2, q3));
		}
	}
}

const struct lp_cpu_kernels lp_cpu_kernels_avx2_set = {
	"avx2", dot_f32, dot_f16, dot_bf16, dot_q4_0, dot_q4_1, dot_q5_0, dot_q5_1, dot_q8_0,
	dot_q4_k, dot_q5_k, dot_q6_k, dot4_q8_0, NULL, NULL, NULL, NULL, NULL, act_q8_32,
	act_q8_256, lp_cpu_avx2_dequant, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};
