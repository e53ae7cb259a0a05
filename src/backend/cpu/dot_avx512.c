/*
 * dot_avx512.c - AVX-512 (F, BW, VL, VNNI) dot products (x86-64 only).
 *
 * Built in its own convenience library with -mavx512f -mavx512bw
 * -mavx512vl -mavx512vnni (and the AVX2 set's -mavx2 -mfma -mf16c) when the
 * compiler takes them; nothing here runs unless lp_cpu_kernels_avx512()
 * found those features at run time.
 *
 * What AVX-512 brings to these kernels, beyond the AVX2 set:
 * - vpdpbusd (VNNI) sums four u8 x s8 products into each int32 lane in
 *   one instruction, where AVX2 needs vpmaddubsw then vpmaddwd; it sums
 *   in 32 bits, so there is no int16 saturation to keep below.
 * - byte masks (BW): the fifth bits of Q5_0/Q5_1 are a 32-bit mask that
 *   adds 16 to the bytes it selects, one instruction instead of five.
 * - masked loads finish a float row of any length without a scalar tail.
 *
 * Not every type gains. Q8_0 (signed by signed: |w| and a with w's sign,
 * or w + 128 and a correction per block) and the K types (whose 6-bit
 * sub-block scales multiply int16 pair sums: vpdpwssd) were written with
 * VNNI and measured slower than the AVX2 set's vpmaddubsw + vpmaddwd on
 * this project's Zen 4 (one thread, 1536 x 1536 in cache: Q8_0 0.76x,
 * Q4_K 0.78x, Q6_K 0.86x of the AVX2 kernel, also with two and four
 * vpdpwssd chains), vpdpbusd there taking about 1.6 cycles a ymm
 * instruction; so this set takes the AVX2 kernels for Q8_0, Q4_K, Q5_K
 * and Q6_K (and the AVX2 activation quantizers and dequantizer), and its
 * own where they won: the legacy types and the float types.
 *
 * The integer kernels compute the scalar reference's integer sums per
 * block exactly (the order of integer additions does not matter) and then
 * one float multiply-add per block, as the AVX2 set does; they differ from
 * the reference only by the order of the float sums.
 *
 * The quantized kernels stay 256 bits wide: a block of 32 8-bit
 * activations is one ymm register, and on Zen 4 (which runs a 512-bit
 * operation as two 256-bit halves) wider vectors would only add the
 * shuffles that pair two blocks' scales. The float kernels, whose rows
 * are contiguous, take 512 bits.
 *
 * AVX-512 BF16 (vdpbf16ps) is not used: it multiplies bf16 by bf16, so the
 * float activations would be rounded to 8 bits of mantissa first, and no
 * weight type here is computed with that loss; a bf16 weight widens to
 * float exactly with a shift, as in the AVX2 set.
 */
#include "backend/cpu/kernels.h"

#include <immintrin.h>
#include <string.h>

#include "quant/blocks.h"

/* Read ahead of the rows, as the AVX2 kernels do (see dot_avx2.c). */
#define PF_AHEAD 4096

static inline void prefetch_at(const void *p, size_t ahead, size_t bytes)
{
	uintptr_t a = (uintptr_t)p + ahead;

	for (size_t o = 0; o < bytes; o += 64)
		_mm_prefetch((const char *)(a + o), _MM_HINT_T0);
}

static inline float hsum256(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* Lanes [0, n) of 16 (n <= 16). */
static inline __mmask16 first16(size_t n)
{
	return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

/* ---- float weights: 16 lanes, the tail by a masked load ---- */

static float dot_f32(const void *w, const void *a, size_t n)
{
	const float *x = w, *y = a;
	__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), acc0);
		acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16),
				       acc1);
	}
	for (; i < n; i += 16) {
		__mmask16 m = first16(n - i);
		acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i),
				       _mm512_maskz_loadu_ps(m, y + i), acc0);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

static inline __m512 load_f16(const uint16_t *p, __mmask16 m)
{
	return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

static float dot_f16(const void *w, const void *a, size_t n)
{
	const uint16_t *x = w;
	const float *y = a;
	__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		prefetch_at(x + i, PF_AHEAD, 64);
		acc0 = _mm512_fmadd_ps(load_f16(x + i, 0xFFFF), _mm512_loadu_ps(y + i), acc0);
		acc1 = _mm512_fmadd_ps(load_f16(x + i + 16, 0xFFFF), _mm512_loadu_ps(y + i + 16),
				       acc1);
	}
	for (; i < n; i += 16) {
		__mmask16 m = first16(n - i);
		acc0 = _mm512_fmadd_ps(load_f16(x + i, m), _mm512_maskz_loadu_ps(m, y + i), acc0);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* bf16 is the top half of a float: widening is exact. */
static inline __m512 load_bf16(const uint16_t *p, __mmask16 m)
{
	__m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));

	return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}

static float dot_bf16(const void *w, const void *a, size_t n)
{
	const uint16_t *x = w;
	const float *y = a;
	__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		prefetch_at(x + i, PF_AHEAD, 64);
		acc0 = _mm512_fmadd_ps(load_bf16(x + i, 0xFFFF), _mm512_loadu_ps(y + i), acc0);
		acc1 = _mm512_fmadd_ps(load_bf16(x + i + 16, 0xFFFF), _mm512_loadu_ps(y + i + 16),
				       acc1);
	}
	for (; i < n; i += 16) {
		__mmask16 m = first16(n - i);
		acc0 = _mm512_fmadd_ps(load_bf16(x + i, m), _mm512_maskz_loadu_ps(m, y + i), acc0);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* ---- legacy blocks of 32 ---- */

/* The AVX2 set's fp16 table (dot_avx2.c): a scale's broadcast is a load. */
#define FP16(h) (&lp_cpu_fp16_tab[(h)])

/* d_w * d_a in all 8 lanes. */
static inline __m256 block_scale(uint16_t dw, const float *da)
{
	return _mm256_mul_ps(_mm256_broadcast_ss(FP16(dw)), _mm256_broadcast_ss(da));
}

/* 32 nibbles of 16 bytes: element j < 16 is the low nibble of byte j,
 * element 16 + j its high nibble (the legacy layout). */
static inline __m256i nibbles(const uint8_t *p)
{
	__m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
	__m256i both = _mm256_blend_epi32(b, _mm256_srli_epi16(b, 4), 0xF0);

	return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

/* Q5 values 0..31: the nibbles plus 16 where bit j of the little-endian
 * word qh is set, the word itself being the byte mask. */
static inline __m256i q5_values(const uint8_t *qs, const uint8_t *qh)
{
	uint32_t h;
	__m256i q = nibbles(qs);

	memcpy(&h, qh, 4);
	return _mm256_mask_add_epi8(q, (__mmask32)h, q, _mm256_set1_epi8(0x10));
}

/* sum over the block of u[j] * s[j], u unsigned, s signed, as 8 floats */
static inline __m256 udot(__m256i u, const int8_t *s)
{
	__m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), u,
					_mm256_loadu_si256((const __m256i *)s));

	return _mm256_cvtepi32_ps(p);
}

/*
 * The four legacy formats, one kernel: a block is d (fp16), then m (fp16,
 * Q4_1/Q5_1), then qh (4 bytes, Q5_0/Q5_1), then 16 bytes of nibbles.
 * Q4_0/Q5_0: sum (q - o) a = sum q a - o sum a, where da * sum a is the
 * activation block's s (o = 8 or 16); Q4_1/Q5_1: sum (d q + m) a =
 * d * da * sum q a + m * s. Each row takes two blocks per step into two
 * accumulators, so the multiply-adds do not wait on each other, and a
 * side sum (the offsets' or the mins', every lane the same).
 *
 * Inlined with constant arguments, the branches on the format fold
 * away. (A four-row form sharing the activation loads, as dot4_q8_0 in
 * the AVX2 set, measured slower here: 0.87x on Q4_1.)
 */
struct legacy {
	size_t bytes;    /* of a block */
	int has_min;     /* Q4_1, Q5_1 */
	int has_qh;      /* Q5_0, Q5_1 */
	float offset;    /* 8 or 16 for Q4_0, Q5_0 */
};

static inline __m256i legacy_values(const struct legacy *f, const uint8_t *blk)
{
	const uint8_t *qh = blk + 2 + 2 * f->has_min;

	return f->has_qh ? q5_values(qh + 4, qh) : nibbles(qh);
}

/* One block of one row: acc += d_w d_a (q . a), side += m s or d_w s. */
static inline __attribute__((always_inline)) void
legacy_step(const struct legacy *f, const uint8_t *blk, const struct lp_act_q8_32 *y,
	    __m256 *acc, __m256 *side)
{
	uint16_t d, m;

	memcpy(&d, blk, 2);
	*acc = _mm256_fmadd_ps(block_scale(d, &y->d), udot(legacy_values(f, blk), y->qs), *acc);
	if (f->has_min) {
		memcpy(&m, blk + 2, 2);
		*side = _mm256_fmadd_ps(_mm256_broadcast_ss(FP16(m)), _mm256_broadcast_ss(&y->s),
					*side);
	}
}

/* The offset formats' side sum adds two blocks' d_w s at once, as the
 * AVX2 kernels do; the min formats keep one sum per accumulator. */
static inline __attribute__((always_inline)) void
legacy_pair(const struct legacy *f, const uint8_t *blk, const struct lp_act_q8_32 *y,
	    __m256 acc[2], __m256 side[2])
{
	uint16_t d0, d1;

	legacy_step(f, blk, y, &acc[0], &side[0]);
	legacy_step(f, blk + f->bytes, y + 1, &acc[1], &side[1]);
	if (!f->has_min) {
		memcpy(&d0, blk, 2);
		memcpy(&d1, blk + f->bytes, 2);
		side[0] = _mm256_add_ps(side[0], _mm256_add_ps(block_scale(d0, &y[0].s),
							       block_scale(d1, &y[1].s)));
	}
}

static inline __attribute__((always_inline)) float
legacy_dot(const struct legacy *f, const void *w, const void *a, size_t n)
{
	const struct lp_act_q8_32 *y = a;
	const uint8_t *x = w;
	__m256 acc[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() }, side[2] = { acc[0], acc[1] };
	size_t nb = n / LP_QK, i = 0;
	float dot;

	for (; i + 2 <= nb; i += 2) {
		prefetch_at(x + i * f->bytes, PF_AHEAD, 2 * f->bytes);
		legacy_pair(f, x + i * f->bytes, &y[i], acc, side);
	}
	if (i < nb) {
		uint16_t d;
		legacy_step(f, x + i * f->bytes, &y[i], &acc[0], &side[0]);
		if (!f->has_min) {
			memcpy(&d, x + i * f->bytes, 2);
			side[0] = _mm256_add_ps(block_scale(d, &y[i].s), side[0]);
		}
	}
	dot = hsum256(_mm256_add_ps(acc[0], acc[1]));
	return f->has_min ? dot + _mm256_cvtss_f32(_mm256_add_ps(side[0], side[1]))
			  : dot - f->offset * _mm256_cvtss_f32(side[0]);
}

static const struct legacy f_q4_0 = { sizeof(struct lp_blk_q4_0), 0, 0, 8.0f };
static const struct legacy f_q4_1 = { sizeof(struct lp_blk_q4_1), 1, 0, 0.0f };
static const struct legacy f_q5_0 = { sizeof(struct lp_blk_q5_0), 0, 1, 16.0f };
static const struct legacy f_q5_1 = { sizeof(struct lp_blk_q5_1), 1, 1, 0.0f };

#define LEGACY(name, fmt) \
	static float dot_##name(const void *w, const void *a, size_t n) \
	{ \
		return legacy_dot(&fmt, w, a, n); \
	}
LEGACY(q4_0, f_q4_0)
LEGACY(q4_1, f_q4_1)
LEGACY(q5_0, f_q5_0)
LEGACY(q5_1, f_q5_1)
#undef LEGACY

/* NULL fields are the AVX2 set's, filled in by lp_cpu_kernels_avx512()
 * (kernels.c): see the top of this file for why. */
struct lp_cpu_kernels lp_cpu_kernels_avx512_set = {
	"avx512", dot_f32, dot_f16, dot_bf16, dot_q4_0, dot_q4_1, dot_q5_0, dot_q5_1, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};
