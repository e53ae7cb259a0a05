/*
 * dequant_avx2.c - AVX2 + F16C dequantization of weight rows (x86-64 only).
 *
 * Batched prefill turns blocks of weight rows into floats before the float
 * matrix product, once per block of rows per batch, so this runs over every
 * weight of the model for each batch; the scalar reference decodes one
 * element at a time and measured about an eighth of a prefill's time on
 * Qwen2.5-0.5B's Q5_0/Q8_0/Q4_K/Q6_K mix. Here a block's quantized values
 * are first decoded to 32 signed bytes, then widened to floats eight at a
 * time.
 *
 * Each value is computed with the reference's own float operations in the
 * reference's order (scale products first, a multiply then an add, no
 * fused multiply-add), so the result is the reference's bit for bit.
 *
 * Built with the AVX2 kernels (-mavx2 -mfma -mf16c); reached only through
 * lp_cpu_kernels_avx2_set once the CPU was found to have those features.
 */
#include "backend/cpu/kernels.h"

#include <immintrin.h>

#include "quant/blocks.h"

static inline float fp16(uint16_t h)
{
	return _cvtsh_ss(h);
}

/* y[0..31] = d * q[0..31] (q signed bytes). */
static inline void store_scaled32(float *y, __m256i q, float d)
{
	__m256 vd = _mm256_set1_ps(d);
	__m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);

	_mm256_storeu_ps(y, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
	_mm256_storeu_ps(y + 8, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(
		_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
	_mm256_storeu_ps(y + 16, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
	_mm256_storeu_ps(y + 24, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(
		_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
}

/* y[0..15] = d * q[0..15] + m (q unsigned bytes, 16 of them in q). */
static inline void store_affine16(float *y, __m128i q, float d, float m)
{
	__m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);

	_mm256_storeu_ps(y, _mm256_add_ps(_mm256_mul_ps(vd, _mm256_cvtepi32_ps(
		_mm256_cvtepu8_epi32(q))), vm));
	_mm256_storeu_ps(y + 8, _mm256_add_ps(_mm256_mul_ps(vd, _mm256_cvtepi32_ps(
		_mm256_cvtepu8_epi32(_mm_srli_si128(q, 8)))), vm));
}

/* Low nibbles of 16 bytes in bytes 0..15, high nibbles in 16..31. */
static inline __m256i nibbles32(const uint8_t *p)
{
	__m128i b = _mm_loadu_si128((const __m128i *)p);
	__m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(b),
					       _mm_srli_epi16(b, 4), 1);

	return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

/* Byte i (0..31) = 0x10 when bit i of the little-endian word at qh is set. */
static inline __m256i fifth_bits(const uint8_t *qh)
{
	uint32_t w;
	__m256i spread, sel;

	__builtin_memcpy(&w, qh, 4);
	/* byte i gets byte i / 8 of w, then keeps bit i % 8 */
	spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int)w),
				     _mm256_setr_epi64x(0x0000000000000000LL, 0x0101010101010101LL,
							0x0202020202020202LL, 0x0303030303030303LL));
	sel = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
	spread = _mm256_cmpeq_epi8(_mm256_and_si256(spread, sel), sel);
	return _mm256_and_si256(spread, _mm256_set1_epi8(0x10));
}

static void deq_q4_0(const struct lp_blk_q4_0 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK)
		store_scaled32(y, _mm256_sub_epi8(nibbles32(b[i].qs), _mm256_set1_epi8(8)),
			       fp16(b[i].d));
}

static void deq_q4_1(const struct lp_blk_q4_1 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK) {
		__m256i q = nibbles32(b[i].qs);
		float d = fp16(b[i].d), m = fp16(b[i].m);
		store_affine16(y, _mm256_castsi256_si128(q), d, m);
		store_affine16(y + 16, _mm256_extracti128_si256(q, 1), d, m);
	}
}

static void deq_q5_0(const struct lp_blk_q5_0 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK) {
		__m256i q = _mm256_or_si256(nibbles32(b[i].qs), fifth_bits(b[i].qh));
		store_scaled32(y, _mm256_sub_epi8(q, _mm256_set1_epi8(16)), fp16(b[i].d));
	}
}

static void deq_q5_1(const struct lp_blk_q5_1 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK) {
		__m256i q = _mm256_or_si256(nibbles32(b[i].qs), fifth_bits(b[i].qh));
		float d = fp16(b[i].d), m = fp16(b[i].m);
		store_affine16(y, _mm256_castsi256_si128(q), d, m);
		store_affine16(y + 16, _mm256_extracti128_si256(q, 1), d, m);
	}
}

static void deq_q8_0(const struct lp_blk_q8_0 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK)
		store_scaled32(y, _mm256_loadu_si256((const __m256i *)b[i].qs), fp16(b[i].d));
}

/* y[0..31] = ds * q - dm for 32 unsigned values q, the reference's order. */
static inline void store_k32(float *y, __m256i q, float ds, float dm)
{
	__m256 vd = _mm256_set1_ps(ds), vm = _mm256_set1_ps(dm);
	__m128i h[2] = { _mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1) };

	for (int k = 0; k < 2; k++) {
		__m256 a = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(h[k]));
		__m256 c = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(h[k], 8)));
		_mm256_storeu_ps(y + 16 * k, _mm256_sub_ps(_mm256_mul_ps(vd, a), vm));
		_mm256_storeu_ps(y + 16 * k + 8, _mm256_sub_ps(_mm256_mul_ps(vd, c), vm));
	}
}

/* Chunk c's 32 low (hi = 0) or high (hi = 1) nibbles of qs[32c..32c+31]. */
static inline __m256i k_nibbles(const uint8_t *qs, int c, int hi)
{
	__m256i b = _mm256_loadu_si256((const __m256i *)(qs + 32 * c));

	if (hi)
		b = _mm256_srli_epi16(b, 4);
	return _mm256_and_si256(b, _mm256_set1_epi8(0x0F));
}

static void deq_q4_k(const struct lp_blk_q4_k *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++) {
		float d = fp16(b[i].d), dmin = fp16(b[i].dmin);
		for (int j = 0; j < 8; j++, y += 32) {
			uint8_t sc, m;
			lp_k_scale_min(b[i].scales, j, &sc, &m);
			store_k32(y, k_nibbles(b[i].qs, j / 2, j & 1), d * sc, dmin * m);
		}
	}
}

static void deq_q5_k(const struct lp_blk_q5_k *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++) {
		float d = fp16(b[i].d), dmin = fp16(b[i].dmin);
		__m256i qh = _mm256_loadu_si256((const __m256i *)b[i].qh);
		for (int j = 0; j < 8; j++, y += 32) {
			uint8_t sc, m;
			/* bit j of qh[l] is the fifth bit of sub-block j's element l */
			__m256i bit = _mm256_and_si256(_mm256_srli_epi16(qh, j),
						       _mm256_set1_epi8(1));
			__m256i q = _mm256_or_si256(k_nibbles(b[i].qs, j / 2, j & 1),
						    _mm256_slli_epi16(bit, 4));
			lp_k_scale_min(b[i].scales, j, &sc, &m);
			store_k32(y, q, d * sc, dmin * m);
		}
	}
}

/* y[0..15] = (d * sc) * q[0..15] for 16 signed bytes q. */
static inline void store_q6(float *y, __m128i q, float ds)
{
	__m256 vd = _mm256_set1_ps(ds);

	_mm256_storeu_ps(y, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q))));
	_mm256_storeu_ps(y + 8, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(
		_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8)))));
}

static void deq_q6_k(const struct lp_blk_q6_k *b, float *y, size_t nb)
{
	const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(3);

	for (size_t i = 0; i < nb; i++) {
		float d = fp16(b[i].d);
		for (int h = 0; h < 2; h++) {
			const uint8_t *ql = b[i].ql + 64 * h, *qhp = b[i].qh + 32 * h;
			__m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
			__m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
			__m256i qh = _mm256_loadu_si256((const __m256i *)qhp);
			/* k = 0..3: the 32 values of elements 128h + 32k + l */
			__m256i lo[4] = { _mm256_and_si256(l0, m4), _mm256_and_si256(l1, m4),
					  _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
					  _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4) };
			for (int k = 0; k < 4; k++, y += 32) {
				__m256i hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), m2);
				__m256i q = _mm256_sub_epi8(_mm256_or_si256(lo[k],
							    _mm256_slli_epi16(hi, 4)),
							    _mm256_set1_epi8(32));
				int g = 8 * h + 2 * k;   /* group of 16: element / 16 */
				store_q6(y, _mm256_castsi256_si128(q), d * b[i].scales[g]);
				store_q6(y + 16, _mm256_extracti128_si256(q, 1),
					 d * b[i].scales[g + 1]);
			}
		}
	}
}

int lp_cpu_avx2_dequant(enum lp_qtype t, const void *src, float *dst, size_t n)
{
	switch (t) {
	case LP_Q_Q4_0: deq_q4_0(src, dst, n / LP_QK); return 1;
	case LP_Q_Q4_1: deq_q4_1(src, dst, n / LP_QK); return 1;
	case LP_Q_Q5_0: deq_q5_0(src, dst, n / LP_QK); return 1;
	case LP_Q_Q5_1: deq_q5_1(src, dst, n / LP_QK); return 1;
	case LP_Q_Q8_0: deq_q8_0(src, dst, n / LP_QK); return 1;
	case LP_Q_Q4_K: deq_q4_k(src, dst, n / LP_QK_K); return 1;
	case LP_Q_Q5_K: deq_q5_k(src, dst, n / LP_QK_K); return 1;
	case LP_Q_Q6_K: deq_q6_k(src, dst, n / LP_QK_K); return 1;
	default: return 0;
	}
}
