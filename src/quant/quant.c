/*
 * quant.c - element formats: sizes, fp16/bf16, reference (de)quantizers
 * and the reference activation quantizer.
 *
 * The dot products and the matrix-vector entry points that use them live
 * in src/backend/cpu/ (matvec.c; a scalar reference and SIMD variants
 * chosen at run time).
 */
#include "quant/quant.h"

#include <math.h>
#include <string.h>

#include "quant/blocks.h"

int lp_qtype_supported(uint32_t t)
{
	switch (t) {
	case LP_Q_F32: case LP_Q_F16: case LP_Q_BF16: case LP_Q_Q4_0: case LP_Q_Q4_1:
	case LP_Q_Q5_0: case LP_Q_Q5_1: case LP_Q_Q8_0: case LP_Q_Q4_K: case LP_Q_Q5_K: case LP_Q_Q6_K:
		return 1;
	}
	return 0;
}

const char *lp_qtype_name(enum lp_qtype t)
{
	switch (t) {
	case LP_Q_F32: return "f32";
	case LP_Q_F16: return "f16";
	case LP_Q_BF16: return "bf16";
	case LP_Q_Q4_0: return "q4_0";
	case LP_Q_Q4_1: return "q4_1";
	case LP_Q_Q5_0: return "q5_0";
	case LP_Q_Q5_1: return "q5_1";
	case LP_Q_Q8_0: return "q8_0";
	case LP_Q_Q4_K: return "q4_K";
	case LP_Q_Q5_K: return "q5_K";
	case LP_Q_Q6_K: return "q6_K";
	}
	return "unknown";
}

size_t lp_qtype_block_elems(enum lp_qtype t)
{
	switch (t) {
	case LP_Q_F32: case LP_Q_F16: case LP_Q_BF16: return 1;
	case LP_Q_Q4_0: case LP_Q_Q4_1: case LP_Q_Q5_0: case LP_Q_Q5_1: case LP_Q_Q8_0:
		return LP_QK;
	case LP_Q_Q4_K: case LP_Q_Q5_K: case LP_Q_Q6_K: return LP_QK_K;
	}
	return 0;
}

size_t lp_qtype_block_bytes(enum lp_qtype t)
{
	switch (t) {
	case LP_Q_F32: return 4;
	case LP_Q_F16: case LP_Q_BF16: return 2;
	case LP_Q_Q4_0: return sizeof(struct lp_blk_q4_0);
	case LP_Q_Q4_1: return sizeof(struct lp_blk_q4_1);
	case LP_Q_Q5_0: return sizeof(struct lp_blk_q5_0);
	case LP_Q_Q5_1: return sizeof(struct lp_blk_q5_1);
	case LP_Q_Q8_0: return sizeof(struct lp_blk_q8_0);
	case LP_Q_Q4_K: return sizeof(struct lp_blk_q4_k);
	case LP_Q_Q5_K: return sizeof(struct lp_blk_q5_k);
	case LP_Q_Q6_K: return sizeof(struct lp_blk_q6_k);
	}
	return 0;
}

size_t lp_qtype_row_bytes(enum lp_qtype t, uint64_t n)
{
	uint64_t be = lp_qtype_block_elems(t), bb = lp_qtype_block_bytes(t);

	if (!be || n == 0 || n % be || n / be > SIZE_MAX / bb)
		return 0;
	return (size_t)(n / be * bb);
}

/* ---- fp16 / bf16 ---- */

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

float lp_fp16_to_fp32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;

	if (exp == 0x1f)
		return bits_f32(sign | 0x7f800000u | (mant << 13));
	if (exp == 0) {
		/* zero or subnormal: mant * 2^-24, exact in float */
		float v = (float)mant * 0x1p-24f;
		return sign ? -v : v;
	}
	return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

/* Round-to-nearest-even of `m >> shift` (shift >= 1). */
static uint32_t shift_rne(uint32_t m, int shift)
{
	uint32_t q, rem, half;

	if (shift >= 32)
		return 0;
	q = m >> shift;
	rem = m & ((1u << shift) - 1);
	half = 1u << (shift - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	return q;
}

uint16_t lp_fp32_to_fp16(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	int exp = (int)((u >> 23) & 0xff);
	uint32_t mant = u & 0x7fffff;
	int e = exp - 127 + 15;

	if (exp == 0xff) /* inf, or NaN kept quiet with its top payload bits */
		return sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0);
	if (e >= 31)
		return sign | 0x7c00;
	if (e <= 0) {
		if (exp == 0) /* float subnormals are far below half's range */
			return sign;
		return sign | (uint16_t)shift_rne(mant | 0x800000, 14 - e);
	}
	/* a carry out of the mantissa rolls into the exponent, up to inf */
	return sign | (uint16_t)(((uint32_t)e << 10) + shift_rne(mant | 0x800000, 13) - 0x400);
}

float lp_bf16_to_fp32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}

uint16_t lp_fp32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);

	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/* ---- reference dequantizers ---- */

static void deq_q4_0(const struct lp_blk_q4_0 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK) {
		float d = lp_fp16_to_fp32(b[i].d);
		for (int j = 0; j < 16; j++) {
			y[j] = d * (float)((b[i].qs[j] & 0xF) - 8);
			y[j + 16] = d * (float)((b[i].qs[j] >> 4) - 8);
		}
	}
}

static void deq_q4_1(const struct lp_blk_q4_1 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK) {
		float d = lp_fp16_to_fp32(b[i].d), m = lp_fp16_to_fp32(b[i].m);
		for (int j = 0; j < 16; j++) {
			y[j] = d * (float)(b[i].qs[j] & 0xF) + m;
			y[j + 16] = d * (float)(b[i].qs[j] >> 4) + m;
		}
	}
}

static void deq_q5_0(const struct lp_blk_q5_0 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK) {
		float d = lp_fp16_to_fp32(b[i].d);
		for (int j = 0; j < LP_QK; j++)
			y[j] = d * (float)(lp_q5_get(b[i].qs, b[i].qh, j) - 16);
	}
}

static void deq_q5_1(const struct lp_blk_q5_1 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK) {
		float d = lp_fp16_to_fp32(b[i].d), m = lp_fp16_to_fp32(b[i].m);
		for (int j = 0; j < LP_QK; j++)
			y[j] = d * (float)lp_q5_get(b[i].qs, b[i].qh, j) + m;
	}
}

static void deq_q8_0(const struct lp_blk_q8_0 *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK) {
		float d = lp_fp16_to_fp32(b[i].d);
		for (int j = 0; j < 32; j++)
			y[j] = d * (float)b[i].qs[j];
	}
}

static void deq_q4_k(const struct lp_blk_q4_k *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK_K) {
		float d = lp_fp16_to_fp32(b[i].d), dmin = lp_fp16_to_fp32(b[i].dmin);
		for (int e = 0; e < LP_QK_K; e++) {
			int c = e / 64, l = e % 32, hi = (e / 32) & 1;
			uint8_t sc, m;
			int q = hi ? b[i].qs[32 * c + l] >> 4 : b[i].qs[32 * c + l] & 0xF;
			lp_k_scale_min(b[i].scales, e / 32, &sc, &m);
			y[e] = d * sc * (float)q - dmin * m;
		}
	}
}

static void deq_q5_k(const struct lp_blk_q5_k *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK_K) {
		float d = lp_fp16_to_fp32(b[i].d), dmin = lp_fp16_to_fp32(b[i].dmin);
		for (int e = 0; e < LP_QK_K; e++) {
			int c = e / 64, l = e % 32, hi = (e / 32) & 1;
			uint8_t sc, m;
			int q = hi ? b[i].qs[32 * c + l] >> 4 : b[i].qs[32 * c + l] & 0xF;
			q |= ((b[i].qh[l] >> (2 * c + hi)) & 1) << 4;
			lp_k_scale_min(b[i].scales, e / 32, &sc, &m);
			y[e] = d * sc * (float)q - dmin * m;
		}
	}
}

/* Quantized value (0..63) of element e (0..255) of a Q6_K block. */
static int q6_k_get(const struct lp_blk_q6_k *b, int e)
{
	int h = e / 128, k = (e % 128) / 32, l = e % 32;
	uint8_t lo = b->ql[64 * h + l + (k & 1) * 32];
	int q = k < 2 ? lo & 0xF : lo >> 4;

	return q | (((b->qh[32 * h + l] >> (2 * k)) & 3) << 4);
}

static void deq_q6_k(const struct lp_blk_q6_k *b, float *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++, y += LP_QK_K) {
		float d = lp_fp16_to_fp32(b[i].d);
		for (int e = 0; e < LP_QK_K; e++)
			y[e] = d * b[i].scales[e / 16] * (float)(q6_k_get(&b[i], e) - 32);
	}
}

void lp_dequantize_row_ref(enum lp_qtype t, const void *src, float *dst, size_t n)
{
	const uint16_t *h = src;

	switch (t) {
	case LP_Q_F32: memcpy(dst, src, n * sizeof(float)); break;
	case LP_Q_F16: for (size_t i = 0; i < n; i++) dst[i] = lp_fp16_to_fp32(h[i]); break;
	case LP_Q_BF16: for (size_t i = 0; i < n; i++) dst[i] = lp_bf16_to_fp32(h[i]); break;
	case LP_Q_Q4_0: deq_q4_0(src, dst, n / LP_QK); break;
	case LP_Q_Q4_1: deq_q4_1(src, dst, n / LP_QK); break;
	case LP_Q_Q5_0: deq_q5_0(src, dst, n / LP_QK); break;
	case LP_Q_Q5_1: deq_q5_1(src, dst, n / LP_QK); break;
	case LP_Q_Q8_0: deq_q8_0(src, dst, n / LP_QK); break;
	case LP_Q_Q4_K: deq_q4_k(src, dst, n / LP_QK_K); break;
	case LP_Q_Q5_K: deq_q5_k(src, dst, n / LP_QK_K); break;
	case LP_Q_Q6_K: deq_q6_k(src, dst, n / LP_QK_K); break;
	}
}

/* ---- reference quantizers ---- */

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Nearest integer of a/b, 0 when b is 0. */
static int qround(float a, float b)
{
	return b != 0.0f ? (int)lrintf(a / b) : 0;
}

static void quant_q4_0(const float *x, struct lp_blk_q4_0 *b, size_t nb)
{
	for (size_t i = 0; i < nb; i++, x += LP_QK) {
		float max = 0, amax = 0, d;
		for (int j = 0; j < LP_QK; j++)
			if (fabsf(x[j]) > amax) {
				amax = fabsf(x[j]);
				max = x[j];
			}
		/* the extreme value maps to -8, the one level without a mirror */
		b[i].d = lp_fp32_to_fp16(max / -8.0f);
		d = lp_fp16_to_fp32(b[i].d);
		for (int j = 0; j < 16; j++) {
			int q0 = clampi(qround(x[j], d) + 8, 0, 15);
			int q1 = clampi(qround(x[j + 16], d) + 8, 0, 15);
			b[i].qs[j] = (uint8_t)(q0 | (q1 << 4));
		}
	}
}

static void quant_q4_1(const float *x, struct lp_blk_q4_1 *b, size_t nb)
{
	for (size_t i = 0; i < nb; i++, x += LP_QK) {
		float mn = x[0], mx = x[0], d, m;
		for (int j = 1; j < LP_QK; j++) {
			mn = fminf(mn, x[j]);
			mx = fmaxf(mx, x[j]);
		}
		b[i].d = lp_fp32_to_fp16((mx - mn) / 15.0f);
		b[i].m = lp_fp32_to_fp16(mn);
		d = lp_fp16_to_fp32(b[i].d);
		m = lp_fp16_to_fp32(b[i].m);
		for (int j = 0; j < 16; j++) {
			int q0 = clampi(qround(x[j] - m, d), 0, 15);
			int q1 = clampi(qround(x[j + 16] - m, d), 0, 15);
			b[i].qs[j] = (uint8_t)(q0 | (q1 << 4));
		}
	}
}

/* Pack 32 five-bit values into a Q5_0/Q5_1 block's nibbles and fifth bits. */
static void pack_q5(const int q[LP_QK], uint8_t qs[16], uint8_t qh[4])
{
	memset(qh, 0, 4);
	for (int j = 0; j < 16; j++)
		qs[j] = (uint8_t)((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
	for (int j = 0; j < LP_QK; j++)
		qh[j / 8] |= (uint8_t)((q[j] >> 4) << (j % 8));
}

static void quant_q5_0(const float *x, struct lp_blk_q5_0 *b, size_t nb)
{
	for (size_t i = 0; i < nb; i++, x += LP_QK) {
		float max = 0, amax = 0, d;
		int q[LP_QK];
		for (int j = 0; j < LP_QK; j++)
			if (fabsf(x[j]) > amax) {
				amax = fabsf(x[j]);
				max = x[j];
			}
		/* as in Q4_0: the extreme value takes -16, the level without a mirror */
		b[i].d = lp_fp32_to_fp16(max / -16.0f);
		d = lp_fp16_to_fp32(b[i].d);
		for (int j = 0; j < LP_QK; j++)
			q[j] = clampi(qround(x[j], d) + 16, 0, 31);
		pack_q5(q, b[i].qs, b[i].qh);
	}
}

static void quant_q5_1(const float *x, struct lp_blk_q5_1 *b, size_t nb)
{
	for (size_t i = 0; i < nb; i++, x += LP_QK) {
		float mn = x[0], mx = x[0], d, m;
		int q[LP_QK];
		for (int j = 1; j < LP_QK; j++) {
			mn = fminf(mn, x[j]);
			mx = fmaxf(mx, x[j]);
		}
		b[i].d = lp_fp32_to_fp16((mx - mn) / 31.0f);
		b[i].m = lp_fp32_to_fp16(mn);
		d = lp_fp16_to_fp32(b[i].d);
		m = lp_fp16_to_fp32(b[i].m);
		for (int j = 0; j < LP_QK; j++)
			q[j] = clampi(qround(x[j] - m, d), 0, 31);
		pack_q5(q, b[i].qs, b[i].qh);
	}
}

static void quant_q8_0(const float *x, struct lp_blk_q8_0 *b, size_t nb)
{
	for (size_t i = 0; i < nb; i++, x += LP_QK) {
		float amax = 0, d;
		for (int j = 0; j < LP_QK; j++)
			amax = fmaxf(amax, fabsf(x[j]));
		b[i].d = lp_fp32_to_fp16(amax / 127.0f);
		d = lp_fp16_to_fp32(b[i].d);
		for (int j = 0; j < LP_QK; j++)
			b[i].qs[j] = (int8_t)clampi(qround(x[j], d), -127, 127);
	}
}

/* Pack eight 6-bit scales and mins into the 12 bytes lp_k_scale_min reads. */
static void pack_k_scales(const uint8_t *sc, const uint8_t *m, uint8_t *q)
{
	for (int j = 0; j < 4; j++) {
		q[j] = (uint8_t)((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
		q[j + 4] = (uint8_t)((m[j] & 63) | ((m[j + 4] >> 4) << 6));
		q[j + 8] = (uint8_t)((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
	}
}

/*
 * Shared by Q4_K (levels 15) and Q5_K (31): per 32-element sub-block an
 * affine map min + scale * q; scales and mins are then quantized to 6 bits
 * against the super-block's d and dmin. Writes d, dmin, packed scales and
 * the quantized values q[256].
 */
static void quant_k_affine(const float *x, int levels, uint16_t *d16, uint16_t *dmin16,
			   uint8_t *scales, uint8_t *q)
{
	float scale[8], mins[8], smax = 0, mmax = 0, d, dmin;
	uint8_t sc[8], m[8];

	for (int j = 0; j < 8; j++) {
		float mn = 0, mx = x[32 * j];
		for (int l = 0; l < 32; l++) {
			mn = fminf(mn, x[32 * j + l]);
			mx = fmaxf(mx, x[32 * j + l]);
		}
		scale[j] = (mx - mn) / (float)levels;
		mins[j] = -mn;
		smax = fmaxf(smax, scale[j]);
		mmax = fmaxf(mmax, mins[j]);
	}
	*d16 = lp_fp32_to_fp16(smax / 63.0f);
	*dmin16 = lp_fp32_to_fp16(mmax / 63.0f);
	d = lp_fp16_to_fp32(*d16);
	dmin = lp_fp16_to_fp32(*dmin16);
	for (int j = 0; j < 8; j++) {
		/* round the scale up so the top of the range still fits */
		sc[j] = (uint8_t)clampi(d > 0 ? (int)ceilf(scale[j] / d - 1e-4f) : 0, 0, 63);
		m[j] = (uint8_t)clampi(qround(mins[j], dmin), 0, 63);
		for (int l = 0; l < 32; l++)
			q[32 * j + l] = (uint8_t)clampi(qround(x[32 * j + l] + dmin * m[j],
							       d * sc[j]), 0, levels);
	}
	pack_k_scales(sc, m, scales);
}

static void quant_q4_k(const float *x, struct lp_blk_q4_k *b, size_t nb)
{
	uint8_t q[LP_QK_K];

	for (size_t i = 0; i < nb; i++, x += LP_QK_K) {
		quant_k_affine(x, 15, &b[i].d, &b[i].dmin, b[i].scales, q);
		for (int c = 0; c < 4; c++)
			for (int l = 0; l < 32; l++)
				b[i].qs[32 * c + l] = (uint8_t)(q[64 * c + l] |
								(q[64 * c + 32 + l] << 4));
	}
}

static void quant_q5_k(const float *x, struct lp_blk_q5_k *b, size_t nb)
{
	uint8_t q[LP_QK_K];

	for (size_t i = 0; i < nb; i++, x += LP_QK_K) {
		quant_k_affine(x, 31, &b[i].d, &b[i].dmin, b[i].scales, q);
		memset(b[i].qh, 0, sizeof(b[i].qh));
		for (int c = 0; c < 4; c++)
			for (int l = 0; l < 32; l++) {
				int lo = q[64 * c + l], hi = q[64 * c + 32 + l];
				b[i].qs[32 * c + l] = (uint8_t)((lo & 0xF) | ((hi & 0xF) << 4));
				b[i].qh[l] |= (uint8_t)(((lo >> 4) << (2 * c)) |
							((hi >> 4) << (2 * c + 1)));
			}
	}
}

static void quant_q6_k(const float *x, struct lp_blk_q6_k *b, size_t nb)
{
	for (size_t i = 0; i < nb; i++, x += LP_QK_K) {
		float scale[16], smax = 0, d;
		for (int g = 0; g < 16; g++) {
			float amax = 0, max = 0;
			for (int l = 0; l < 16; l++)
				if (fabsf(x[16 * g + l]) > amax) {
					amax = fabsf(x[16 * g + l]);
					max = x[16 * g + l];
				}
			scale[g] = max / -32.0f;
			smax = fmaxf(smax, fabsf(scale[g]));
		}
		b[i].d = lp_fp32_to_fp16(smax / 127.0f);
		d = lp_fp16_to_fp32(b[i].d);
		memset(b[i].ql, 0, sizeof(b[i].ql));
		memset(b[i].qh, 0, sizeof(b[i].qh));
		for (int g = 0; g < 16; g++)
			b[i].scales[g] = (int8_t)clampi(qround(scale[g], d), -127, 127);
		for (int e = 0; e < LP_QK_K; e++) {
			int h = e / 128, k = (e % 128) / 32, l = e % 32;
			int q = clampi(qround(x[e], d * b[i].scales[e / 16]) + 32, 0, 63);
			b[i].ql[64 * h + l + (k & 1) * 32] |= (uint8_t)((q & 0xF) << (k < 2 ? 0 : 4));
			b[i].qh[32 * h + l] |= (uint8_t)((q >> 4) << (2 * k));
		}
	}
}

void lp_quantize_row(enum lp_qtype t, const float *src, void *dst, size_t n)
{
	uint16_t *h = dst;

	switch (t) {
	case LP_Q_F32: memcpy(dst, src, n * sizeof(float)); break;
	case LP_Q_F16: for (size_t i = 0; i < n; i++) h[i] = lp_fp32_to_fp16(src[i]); break;
	case LP_Q_BF16: for (size_t i = 0; i < n; i++) h[i] = lp_fp32_to_bf16(src[i]); break;
	case LP_Q_Q4_0: quant_q4_0(src, dst, n / LP_QK); break;
	case LP_Q_Q4_1: quant_q4_1(src, dst, n / LP_QK); break;
	case LP_Q_Q5_0: quant_q5_0(src, dst, n / LP_QK); break;
	case LP_Q_Q5_1: quant_q5_1(src, dst, n / LP_QK); break;
	case LP_Q_Q8_0: quant_q8_0(src, dst, n / LP_QK); break;
	case LP_Q_Q4_K: quant_q4_k(src, dst, n / LP_QK_K); break;
	case LP_Q_Q5_K: quant_q5_k(src, dst, n / LP_QK_K); break;
	case LP_Q_Q6_K: quant_q6_k(src, dst, n / LP_QK_K); break;
	}
}

/* ---- activations ---- */

static int is_k_type(enum lp_qtype t)
{
	return t == LP_Q_Q4_K || t == LP_Q_Q5_K || t == LP_Q_Q6_K;
}

static int is_float_type(enum lp_qtype t)
{
	return t == LP_Q_F32 || t == LP_Q_F16 || t == LP_Q_BF16;
}

size_t lp_q8_act_bytes(enum lp_qtype t, size_t n)
{
	if (is_float_type(t))
		return 0;
	if (is_k_type(t))
		return (n + LP_QK_K - 1) / LP_QK_K * sizeof(struct lp_act_q8_256);
	return (n + LP_QK - 1) / LP_QK * sizeof(struct lp_act_q8_32);
}

static void act_q8_32(const float *x, size_t n, struct lp_act_q8_32 *b)
{
	for (size_t i = 0; i < n / LP_QK; i++, x += LP_QK) {
		float amax = 0;
		int sum = 0;
		for (int j = 0; j < LP_QK; j++)
			amax = fmaxf(amax, fabsf(x[j]));
		b[i].d = amax / 127.0f;
		for (int j = 0; j < LP_QK; j++) {
			b[i].qs[j] = (int8_t)clampi(qround(x[j], b[i].d), -127, 127);
			sum += b[i].qs[j];
		}
		b[i].s = b[i].d * (float)sum;
	}
}

static void act_q8_256(const float *x, size_t n, struct lp_act_q8_256 *b)
{
	for (size_t i = 0; i < n / LP_QK_K; i++, x += LP_QK_K) {
		float amax = 0;
		for (int j = 0; j < LP_QK_K; j++)
			amax = fmaxf(amax, fabsf(x[j]));
		b[i].d = amax / 127.0f;
		for (int g = 0; g < 16; g++) {
			int sum = 0;
			for (int l = 0; l < 16; l++) {
				int q = clampi(qround(x[16 * g + l], b[i].d), -127, 127);
				b[i].qs[16 * g + l] = (int8_t)q;
				sum += q;
			}
			b[i].bsums[g] = (int16_t)sum;
		}
	}
}

void lp_q8_act_quantize_ref(enum lp_qtype t, const float *x, size_t n, struct lp_q8_act *a)
{
	a->n = n;
	if (is_float_type(t))
		return;
	if (is_k_type(t))
		act_q8_256(x, n, a->blocks);
	else
		act_q8_32(x, n, a->blocks);
}
