/* check_quant.c - tensor formats: hand-made blocks, fp16/bf16 edge cases,
 * quantization error bounds, and every matvec kernel against the scalar
 * reference and against float dot products of dequantized rows. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matvec.h"
#include "quant/quant.h"
#include "quant/blocks.h"

static const enum lp_qtype all_types[] = {
	LP_Q_F32, LP_Q_F16, LP_Q_BF16, LP_Q_Q4_0, LP_Q_Q4_1, LP_Q_Q5_0, LP_Q_Q5_1,
	LP_Q_Q8_0, LP_Q_Q4_K, LP_Q_Q5_K, LP_Q_Q6_K,
};
#define N_TYPES (sizeof(all_types) / sizeof(all_types[0]))

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnext(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Uniform in [-1, 1). */
static float frand(void)
{
	return (float)((rnext() >> 11) * 0x1p-53 * 2.0 - 1.0);
}

START_TEST(test_sizes)
{
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q4_0, 64), 36);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q4_1, 576), 18 * 20);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q5_0, 64), 44);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q5_1, 576), 18 * 24);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q5_1, 48), 0);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q8_0, 32), 34);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q4_K, 512), 288);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q5_K, 256), 176);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q6_K, 256), 210);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_F16, 3), 6);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_BF16, 3), 6);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_F32, 3), 12);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q6_K, 255), 0);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_Q4_0, 0), 0);
	ck_assert_uint_eq(lp_qtype_row_bytes(LP_Q_F32, 1ull << 62), 0); /* overflows */
	ck_assert(lp_qtype_supported(14) && !lp_qtype_supported(10) && !lp_qtype_supported(31));
	ck_assert(lp_qtype_supported(6) && lp_qtype_supported(7));
	ck_assert(!lp_qtype_supported(4) && !lp_qtype_supported(5)); /* retired Q4_2/Q4_3 */
	ck_assert_str_eq(lp_qtype_name(LP_Q_Q4_K), "q4_K");
	ck_assert_str_eq(lp_qtype_name(LP_Q_Q5_0), "q5_0");
	ck_assert_str_eq(lp_qtype_name(LP_Q_Q5_1), "q5_1");
}
END_TEST

START_TEST(test_fp16_edges)
{
	/* exact values */
	ck_assert_uint_eq(lp_fp32_to_fp16(1.0f), 0x3C00);
	ck_assert_uint_eq(lp_fp32_to_fp16(-2.0f), 0xC000);
	ck_assert_uint_eq(lp_fp32_to_fp16(65504.0f), 0x7BFF);           /* largest finite */
	ck_assert_uint_eq(lp_fp32_to_fp16(0x1p-24f), 0x0001);           /* smallest subnormal */
	ck_assert_uint_eq(lp_fp32_to_fp16(0x1p-14f), 0x0400);           /* smallest normal */
	ck_assert_uint_eq(lp_fp32_to_fp16(-0.0f), 0x8000);
	/* rounding: ties to even */
	ck_assert_uint_eq(lp_fp32_to_fp16(1.0f + 0x1p-11f), 0x3C00);    /* tie, even stays */
	ck_assert_uint_eq(lp_fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3C02); /* tie, odd goes up */
	ck_assert_uint_eq(lp_fp32_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
	ck_assert_uint_eq(lp_fp32_to_fp16(65519.0f), 0x7BFF);           /* below the halfway */
	ck_assert_uint_eq(lp_fp32_to_fp16(65520.0f), 0x7C00);           /* tie rounds to inf */
	ck_assert_uint_eq(lp_fp32_to_fp16(1e10f), 0x7C00);
	ck_assert_uint_eq(lp_fp32_to_fp16(0x1p-25f), 0x0000);           /* tie to even: 0 */
	ck_assert_uint_eq(lp_fp32_to_fp16(0x1.8p-25f), 0x0001);
	ck_assert_uint_eq(lp_fp32_to_fp16(3 * 0x1p-25f), 0x0002);       /* 1.5 units: to even */
	ck_assert_uint_eq(lp_fp32_to_fp16(0x1.ffcp-15f), 0x0400);       /* subnormal carries */
	ck_assert_uint_eq(lp_fp32_to_fp16(1e-30f), 0x0000);
	ck_assert_uint_eq(lp_fp32_to_fp16(-1e-45f), 0x8000);            /* float subnormal */
	ck_assert_uint_eq(lp_fp32_to_fp16(INFINITY), 0x7C00);
	ck_assert_uint_eq(lp_fp32_to_fp16(-INFINITY), 0xFC00);
	ck_assert((lp_fp32_to_fp16(NAN) & 0x7C00) == 0x7C00 && (lp_fp32_to_fp16(NAN) & 0x3FF));
	ck_assert(lp_fp16_to_fp32(0x0001) == 0x1p-24f);
	ck_assert(lp_fp16_to_fp32(0x03FF) == 1023 * 0x1p-24f);
	ck_assert(lp_fp16_to_fp32(0xFBFF) == -65504.0f);
	ck_assert(isinf(lp_fp16_to_fp32(0x7C00)) && lp_fp16_to_fp32(0xFC00) < 0);
	ck_assert(isnan(lp_fp16_to_fp32(0x7E00)));
	ck_assert(signbit(lp_fp16_to_fp32(0x8000)));
	/* every half survives half -> float -> half */
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = lp_fp16_to_fp32((uint16_t)h);
		if (isnan(f))
			ck_assert(isnan(lp_fp16_to_fp32(lp_fp32_to_fp16(f))));
		else
			ck_assert_uint_eq(lp_fp32_to_fp16(f), h);
	}
}
END_TEST

#ifdef __FLT16_MAX__
/* The compiler's own conversion (correctly rounded) on random bit patterns. */
START_TEST(test_fp16_matches_compiler)
{
	for (int i = 0; i < 1000000; i++) {
		uint32_t u = (uint32_t)rnext();
		float f;
		_Float16 h;
		uint16_t hb;
		memcpy(&f, &u, 4);
		if (isnan(f))
			continue;
		h = (_Float16)f;
		memcpy(&hb, &h, 2);
		ck_assert_msg(lp_fp32_to_fp16(f) == hb, "%a: %04x != %04x", f, lp_fp32_to_fp16(f), hb);
	}
}
END_TEST
#endif

START_TEST(test_bf16_edges)
{
	ck_assert_uint_eq(lp_fp32_to_bf16(1.0f), 0x3F80);
	ck_assert_uint_eq(lp_fp32_to_bf16(1.0f + 0x1p-8f), 0x3F80);        /* tie, even */
	ck_assert_uint_eq(lp_fp32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);    /* tie, up */
	ck_assert_uint_eq(lp_fp32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
	ck_assert_uint_eq(lp_fp32_to_bf16(-INFINITY), 0xFF80);
	ck_assert_uint_eq(lp_fp32_to_bf16(FLT_MAX), 0x7F80);              /* rounds to inf */
	ck_assert_uint_eq(lp_fp32_to_bf16(0x1p-130f), 0x0008);            /* subnormal kept */
	ck_assert(isnan(lp_bf16_to_fp32(lp_fp32_to_bf16(NAN))));
	/* a NaN whose payload sits only in the low bits stays a NaN */
	{
		uint32_t u = 0x7F800001;
		float f;
		memcpy(&f, &u, 4);
		ck_assert(isnan(lp_bf16_to_fp32(lp_fp32_to_bf16(f))));
	}
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = lp_bf16_to_fp32((uint16_t)h);
		if (!isnan(f))
			ck_assert_uint_eq(lp_fp32_to_bf16(f), h);
	}
}
END_TEST

/* Hand-made blocks; the expected values are worked out in the comments. */
START_TEST(test_dequant_legacy_blocks)
{
	struct lp_blk_q4_0 a;
	struct lp_blk_q4_1 b;
	struct lp_blk_q8_0 c;
	float y[32];

	memset(&a, 0x88, sizeof(a));    /* every nibble 8: value 0 */
	a.d = 0x3800;                   /* 0.5 */
	a.qs[0] = 0x1F;                 /* e0 = (15-8)*0.5 = 3.5, e16 = (1-8)*0.5 = -3.5 */
	lp_dequantize_row(LP_Q_Q4_0, &a, y, 32);
	ck_assert(y[0] == 3.5f && y[16] == -3.5f && y[1] == 0.0f && y[31] == 0.0f);

	memset(&b, 0, sizeof(b));
	b.d = 0x3400;                   /* 0.25 */
	b.m = 0xBC00;                   /* -1 */
	b.qs[3] = 0xA2;                 /* e3 = 2*0.25-1 = -0.5, e19 = 10*0.25-1 = 1.5 */
	lp_dequantize_row(LP_Q_Q4_1, &b, y, 32);
	ck_assert(y[3] == -0.5f && y[19] == 1.5f && y[0] == -1.0f);

	memset(&c, 0, sizeof(c));
	c.d = 0x4000;                   /* 2 */
	c.qs[5] = -3;                   /* e5 = -6 */
	c.qs[31] = 127;                 /* e31 = 254 */
	lp_dequantize_row(LP_Q_Q8_0, &c, y, 32);
	ck_assert(y[5] == -6.0f && y[31] == 254.0f && y[0] == 0.0f);
}
END_TEST

START_TEST(test_dequant_q5_blocks)
{
	struct lp_blk_q5_0 a;
	struct lp_blk_q5_1 b;
	float y[32];

	/* Q5_0: d = 0.5; nibbles 0 and fifth bits 1 everywhere: q = 16, value 0 */
	memset(&a, 0, sizeof(a));
	memset(a.qh, 0xFF, 4);
	a.d = 0x3800;
	a.qs[0] = 0x3F;                 /* e0: q = 15|16 = 31 -> (31-16)*0.5 = 7.5
					 * e16: q = 3|16 = 19 -> 1.5 */
	a.qh[2] = 0xFE;                 /* e16 loses its fifth bit: q = 3 -> -6.5 */
	a.qs[9] = 0x02;
	a.qh[1] = 0xFD;                 /* e9: fifth bit (qh[1] bit 1) off: q = 2 -> -7 */
	a.qh[3] = 0x7F;                 /* e31: q = 0 -> -16*0.5 = -8 */
	lp_dequantize_row(LP_Q_Q5_0, &a, y, 32);
	ck_assert_float_eq(y[0], 7.5f);
	ck_assert_float_eq(y[16], -6.5f);
	ck_assert_float_eq(y[9], -7.0f);
	ck_assert_float_eq(y[31], -8.0f);
	ck_assert_float_eq(y[1], 0.0f);
	ck_assert_float_eq(y[17], 0.0f);  /* qh[2] bit 1 still set: q = 16 */

	/* Q5_1: d = 0.25, m = -2; value 0.25 q - 2 */
	memset(&b, 0, sizeof(b));
	b.d = 0x3400;
	b.m = 0xC000;
	b.qs[4] = 0xA7;                 /* e4 low nibble 7, e20 high nibble 10 */
	b.qs[5] = 0x0F;
	b.qh[0] = 0x30;                 /* e4: q = 7+16 = 23 -> 3.75; e5: q = 31 -> 5.75 */
	b.qh[2] = 0x10;                 /* e20: q = 10+16 = 26 -> 4.5 */
	b.qh[3] = 0x80;                 /* e31: q = 16 -> 2 */
	lp_dequantize_row(LP_Q_Q5_1, &b, y, 32);
	ck_assert_float_eq(y[4], 3.75f);
	ck_assert_float_eq(y[5], 5.75f);
	ck_assert_float_eq(y[20], 4.5f);
	ck_assert_float_eq(y[31], 2.0f);
	ck_assert_float_eq(y[0], -2.0f);
	ck_assert_float_eq(y[15], -2.0f);

	/* the reference quantizer round-trips these blocks exactly: they use
	 * the extreme levels (Q5_0: -16 at e31; Q5_1: 0 and 31), so it finds
	 * the same d (and m) */
	{
		struct lp_blk_q5_0 a2;
		struct lp_blk_q5_1 b2;
		float z[32];
		lp_dequantize_row(LP_Q_Q5_0, &a, y, 32);
		lp_quantize_row(LP_Q_Q5_0, y, &a2, 32);
		lp_dequantize_row(LP_Q_Q5_0, &a2, z, 32);
		for (int j = 0; j < 32; j++)
			ck_assert_float_eq(z[j], y[j]);
		lp_dequantize_row(LP_Q_Q5_1, &b, y, 32);
		lp_quantize_row(LP_Q_Q5_1, y, &b2, 32);
		lp_dequantize_row(LP_Q_Q5_1, &b2, z, 32);
		for (int j = 0; j < 32; j++)
			ck_assert_float_eq(z[j], y[j]);
	}
}
END_TEST

START_TEST(test_dequant_k_blocks)
{
	struct lp_blk_q4_k a;
	struct lp_blk_q5_k b;
	struct lp_blk_q6_k c;
	float y[256];

	/* Q4_K: d = 1, dmin = 0.5. Sub-block 0: scale 2, min 4 (bytes 0 and 4).
	 * Sub-block 5: scale 33 = 0b100001, min 17 = 0b010001: low nibbles in
	 * byte 9 (0x11), top two bits of the scale in byte 1 bits 6-7 (0x80),
	 * of the min in byte 5 bits 6-7 (0x40). */
	memset(&a, 0, sizeof(a));
	a.d = 0x3C00;
	a.dmin = 0x3800;
	a.scales[0] = 2;
	a.scales[4] = 4;
	a.scales[9] = 0x11;
	a.scales[1] = 0x80;
	a.scales[5] = 0x40;
	a.qs[0] = 0x07;    /* e0 (sub-block 0, low nibble) = 2*7 - 0.5*4 = 12 */
	a.qs[65] = 0x30;   /* e161 (chunk 2, high nibble: sub-block 5) = 33*3 - 0.5*17 = 90.5 */
	lp_dequantize_row(LP_Q_Q4_K, &a, y, 256);
	ck_assert_float_eq(y[0], 12.0f);
	ck_assert_float_eq(y[161], 90.5f);
	ck_assert_float_eq(y[1], -2.0f);        /* q 0 in sub-block 0: -0.5*4 */
	ck_assert_float_eq(y[160], -8.5f);
	ck_assert_float_eq(y[32], 0.0f);        /* sub-block 1: scale 0, min 0 */

	/* Q5_K: the same scales; e161 also gets its fifth bit from bit 2*2+1 of
	 * qh[1]: q = 3 + 16 = 19, 33*19 - 8.5 = 618.5. */
	memset(&b, 0, sizeof(b));
	b.d = a.d;
	b.dmin = a.dmin;
	memcpy(b.scales, a.scales, 12);
	b.qs[65] = 0x30;
	b.qh[1] = 1 << 5;
	b.qh[0] = 1 << 0;  /* e0: q = 16, 2*16 - 2 = 30 */
	lp_dequantize_row(LP_Q_Q5_K, &b, y, 256);
	ck_assert_float_eq(y[161], 618.5f);
	ck_assert_float_eq(y[0], 30.0f);
	ck_assert_float_eq(y[1], -2.0f);

	/* Q6_K: d = 0.5. e200: half 1, quarter k = (200-128)/32 = 2, l = 8:
	 * low nibble from the high half of ql[64+8], high bits 4-5 of qh[32+8];
	 * q = 5 | 2<<4 = 37, value 37-32 = 5, scale[200/16 = 12] = -3:
	 * 0.5 * -3 * 5 = -7.5. e0: q 0 -> -32 * 0.5 * scale[0] (4) = -64. */
	memset(&c, 0, sizeof(c));
	c.d = 0x3800;
	c.ql[72] = 0x50;
	c.qh[40] = 2 << 4;
	c.scales[12] = -3;
	c.scales[0] = 4;
	c.ql[32] = 0x0F;   /* e32 (k = 1, l = 0): q = 15, (15-32)*0.5*scale[2] */
	c.scales[2] = 1;
	lp_dequantize_row(LP_Q_Q6_K, &c, y, 256);
	ck_assert_float_eq(y[200], -7.5f);
	ck_assert_float_eq(y[0], -64.0f);
	ck_assert_float_eq(y[32], -8.5f);
	ck_assert_float_eq(y[199], 48.0f);  /* q 0: (0-32)*0.5*-3 */
}
END_TEST

/* Max |error| of quantize -> dequantize on uniform [-1, 1) data. */
static float roundtrip_error(enum lp_qtype t, size_t n, float scale)
{
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	void *q = malloc(lp_qtype_row_bytes(t, n));
	float err = 0;

	for (size_t i = 0; i < n; i++)
		x[i] = frand() * scale;
	lp_quantize_row(t, x, q, n);
	lp_dequantize_row(t, q, y, n);
	for (size_t i = 0; i < n; i++)
		err = fmaxf(err, fabsf(x[i] - y[i]));
	free(x);
	free(y);
	free(q);
	return err / scale;
}

START_TEST(test_quantize_error_bounds)
{
	/* bounds for values in [-1, 1]: half a step of the format, plus fp16
	 * scale rounding; Q4_0 and Q6_K allow a whole step at the clamped end
	 * (+8 and +32 do not exist); K formats also round 6/8-bit scales */
	static const struct { enum lp_qtype t; float bound; } b[] = {
		{ LP_Q_F32, 0.0f },    { LP_Q_F16, 0x1p-11f }, { LP_Q_BF16, 0x1p-8f },
		{ LP_Q_Q8_0, 0.0042f }, { LP_Q_Q4_0, 0.126f },  { LP_Q_Q4_1, 0.0675f },
		{ LP_Q_Q5_0, 0.0635f }, { LP_Q_Q5_1, 0.0325f },
		{ LP_Q_Q4_K, 0.075f }, { LP_Q_Q5_K, 0.037f },  { LP_Q_Q6_K, 0.036f },
	};
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		float e = roundtrip_error(b[i].t, 256 * 64, 1.0f);
		ck_assert_msg(e <= b[i].bound, "%s: error %g > %g", lp_qtype_name(b[i].t), e,
			      b[i].bound);
		/* the scale of the data does not matter (within fp16 range) */
		e = roundtrip_error(b[i].t, 256 * 16, 100.0f);
		ck_assert_msg(e <= b[i].bound * 1.01f, "%s x100: error %g", lp_qtype_name(b[i].t), e);
	}
	/* but a non-trivial format must lose something: the test can fail */
	ck_assert_float_gt(roundtrip_error(LP_Q_Q4_K, 256, 1.0f), 0.001f);
}
END_TEST

/* Weights of type t, [n_rows, n_cols], from random floats. */
static void *random_matrix(enum lp_qtype t, size_t n_rows, size_t n_cols)
{
	size_t rb = lp_qtype_row_bytes(t, n_cols);
	unsigned char *w = malloc(rb * n_rows);
	float *row = malloc(n_cols * sizeof(float));

	for (size_t r = 0; r < n_rows; r++) {
		/* rows of different scales and some outliers */
		float s = 0.05f + (float)(r % 7);
		for (size_t c = 0; c < n_cols; c++)
			row[c] = frand() * s + (rnext() % 61 == 0 ? 3 * s : 0);
		lp_quantize_row(t, row, w + r * rb, n_cols);
	}
	free(row);
	return w;
}

/* One matvec check: kernels vs reference vs float. */
static void check_matvec(enum lp_qtype t, size_t n_rows, size_t n_cols,
			 const struct lp_cpu_kernels *fast)
{
	size_t rb = lp_qtype_row_bytes(t, n_cols);
	void *w = random_matrix(t, n_rows, n_cols);
	float *x = malloc(n_cols * sizeof(float)), *y_ref = malloc(n_rows * sizeof(float));
	float *y = malloc(n_rows * sizeof(float)), *y_rows = malloc(n_rows * sizeof(float));
	float *deq = malloc(n_cols * sizeof(float));
	struct lp_q8_act a;
	lp_dot_fn dot = lp_cpu_dot(fast, t);

	for (size_t c = 0; c < n_cols; c++)
		x[c] = frand() * 2.0f + 0.3f;
	a.cap_bytes = lp_q8_act_bytes(t, n_cols);
	a.blocks = malloc(a.cap_bytes ? a.cap_bytes : 1);
	lp_q8_act_quantize(t, x, n_cols, &a);
	lp_matvec_ref(t, w, n_rows, n_cols, x, &a, y_ref);
	lp_matvec(t, w, n_rows, n_cols, x, &a, y);
	for (size_t r = 0; r < n_rows; r++)
		y_rows[r] = NAN;
	lp_matvec_rows(t, w, n_cols, x, &a, y_rows, n_rows / 3, n_rows);
	for (size_t r = 0; r < n_rows; r++) {
		const void *row = (const unsigned char *)w + r * rb;
		double exact = 0, mag = 0, xmax = 0;
		float yk = dot(row, t <= LP_Q_F16 || t == LP_Q_BF16 ? (const void *)x : a.blocks,
			       n_cols);
		lp_dequantize_row(t, row, deq, n_cols);
		for (size_t c = 0; c < n_cols; c++) {
			exact += (double)deq[c] * x[c];
			mag += fabs((double)deq[c] * x[c]);
			xmax = fmax(xmax, fabs(x[c]));
		}
		/* fast vs reference: float rounding only */
		ck_assert_msg(fabs(yk - y_ref[r]) <= 1e-5 * mag + 1e-6,
			      "%s %s %zux%zu row %zu: %.9g vs ref %.9g", fast->name,
			      lp_qtype_name(t), n_rows, n_cols, r, yk, y_ref[r]);
		ck_assert(fabs(y[r] - y_ref[r]) <= 1e-5 * mag + 1e-6);
		/* reference vs float: the 8-bit activations err by at most half a
		 * step (xmax/254) per element */
		{
			double sum_w = 0;
			for (size_t c = 0; c < n_cols; c++)
				sum_w += fabs(deq[c]);
			ck_assert_msg(fabs(y_ref[r] - exact) <= sum_w * xmax / 254 * 1.01 + 1e-5 * mag,
				      "%s row %zu: ref %.9g vs float %.9g", lp_qtype_name(t), r,
				      y_ref[r], exact);
		}
		if (r < n_rows / 3)
			ck_assert(isnan(y_rows[r]));
		else
			ck_assert(y_rows[r] == y[r]);
	}
	free(w);
	free(x);
	free(y);
	free(y_ref);
	free(y_rows);
	free(deq);
	free(a.blocks);
}

START_TEST(test_matvec_random)
{
	static const size_t shapes[][2] = { { 7, 256 }, { 33, 512 }, { 5, 1536 }, { 3, 2816 } };
	const struct lp_cpu_kernels *sets[3] = { lp_cpu_kernels_scalar(), lp_cpu_kernels_avx2(),
						 lp_cpu_kernels_avx512() };

	for (int s = 0; s < 3; s++) {
		if (!sets[s])
			continue;
		for (size_t i = 0; i < N_TYPES; i++)
			for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
				check_matvec(all_types[i], shapes[k][0], shapes[k][1], sets[s]);
	}
}
END_TEST

/* Legacy formats and floats also take widths that are not multiples of 256. */
START_TEST(test_matvec_legacy_widths)
{
	static const enum lp_qtype t[] = { LP_Q_Q4_0, LP_Q_Q4_1, LP_Q_Q5_0, LP_Q_Q5_1,
					   LP_Q_Q8_0, LP_Q_F32, LP_Q_F16, LP_Q_BF16 };
	const struct lp_cpu_kernels *sets[3] = { lp_cpu_kernels_scalar(), lp_cpu_kernels_avx2(),
						 lp_cpu_kernels_avx512() };

	for (int s = 0; s < 3; s++) {
		if (!sets[s])
			continue;
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			check_matvec(t[i], 9, 32, sets[s]);
			check_matvec(t[i], 9, 96, sets[s]);
			check_matvec(t[i], 4, 576, sets[s]);
			check_matvec(t[i], 3, 160, sets[s]);  /* an odd number of blocks */
		}
	}
	{
		const struct lp_cpu_kernels *fast = lp_cpu_kernels();
		check_matvec(LP_Q_F32, 3, 7, fast);
		check_matvec(LP_Q_F16, 3, 13, fast);
	}
}
END_TEST

/* Every four-row kernel gives each row bit for bit what the one-row kernel
 * of its set gives, for odd and even block counts. */
START_TEST(test_dot4_matches_dot)
{
	const struct lp_cpu_kernels *sets[3] = { lp_cpu_kernels_scalar(), lp_cpu_kernels_avx2(),
						 lp_cpu_kernels_avx512() };
	static const size_t widths[] = { 256, 288, 576, 1536 };
	int checked = 0;

	for (int s = 0; s < 3; s++) {
		if (!sets[s])
			continue;
		for (size_t i = 0; i < N_TYPES; i++) {
			enum lp_qtype t = all_types[i];
			lp_dot4_fn dot4 = lp_cpu_dot4(sets[s], t);
			lp_dot_fn dot = lp_cpu_dot(sets[s], t);
			if (!dot4)
				continue;
			for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
				size_t n = widths[k], rb = lp_qtype_row_bytes(t, n);
				void *w;
				float *x = malloc(n * sizeof(float)), y[4];
				struct lp_q8_act a;
				if (!rb)
					continue;
				w = random_matrix(t, 4, n);
				for (size_t c = 0; c < n; c++)
					x[c] = frand() * 3.0f - 0.2f;
				a.cap_bytes = lp_q8_act_bytes(t, n);
				a.blocks = malloc(a.cap_bytes);
				lp_q8_act_quantize(t, x, n, &a);
				dot4(w, rb, a.blocks, n, y);
				for (int r = 0; r < 4; r++)
					ck_assert_msg(y[r] == dot((const char *)w + r * rb, a.blocks, n),
						      "%s %s n %zu row %d", sets[s]->name,
						      lp_qtype_name(t), n, r);
				checked++;
				free(w);
				free(x);
				free(a.blocks);
			}
		}
	}
	if (lp_cpu_kernels_avx2())
		ck_assert_int_gt(checked, 0);
}
END_TEST

/* The SIMD activation quantizers write the reference's bytes: random
 * blocks of several magnitudes, an all-zero block, a subnormal one, and
 * values on rounding ties (integers and halves of d = 1). */
START_TEST(test_act_quantize_simd)
{
	const struct lp_cpu_kernels *k = lp_cpu_kernels_avx2();
	enum { N = 1024 };
	float *x = malloc(N * sizeof(float));
	size_t bytes = lp_q8_act_bytes(LP_Q_Q8_0, N) > lp_q8_act_bytes(LP_Q_Q6_K, N) ?
		lp_q8_act_bytes(LP_Q_Q8_0, N) : lp_q8_act_bytes(LP_Q_Q6_K, N);
	unsigned char *ref = calloc(1, bytes), *fast = calloc(1, bytes);
	struct lp_q8_act a = { 0, ref, bytes };

	if (!k || !k->act_q8_32 || !k->act_q8_256)
		goto out;
	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < N; i++)
			x[i] = frand() * ldexpf(1.0f, (int)(rnext() % 40) - 20);
		for (int i = 256; i < 512; i++)
			x[i] = 0.0f;
		for (int i = 512; i < 544; i++)
			x[i] = frand() * 1e-43f;
		for (int i = 768; i < 1024; i++)  /* amax 127: d = 1, ties at halves */
			x[i] = (float)((int)(rnext() % 509) - 254) / 2.0f;
		x[768] = 127.0f;
		for (int t = 0; t < 2; t++) {
			enum lp_qtype ty = t ? LP_Q_Q6_K : LP_Q_Q8_0;
			size_t nb = lp_q8_act_bytes(ty, N);
			memset(ref, 0, bytes);
			memset(fast, 0, bytes);
			a.blocks = ref;
			lp_q8_act_quantize_ref(ty, x, N, &a);
			(t ? k->act_q8_256 : k->act_q8_32)(x, N, fast);
			/* struct padding aside: lp_act_q8_32 and lp_act_q8_256 have none */
			ck_assert_msg(!memcmp(ref, fast, nb), "%s round %d", lp_qtype_name(ty), round);
		}
	}
out:
	free(x);
	free(ref);
	free(fast);
}
END_TEST

/* Random bytes as a weight row of type t, each block's fp16 scale fields
 * overwritten with finite values (every quantized value pattern occurs,
 * not only those a quantizer would write). */
static void random_blocks(enum lp_qtype t, unsigned char *w, size_t n)
{
	size_t bb = lp_qtype_block_bytes(t), nb = lp_qtype_row_bytes(t, n) / bb;

	for (size_t i = 0; i < nb * bb; i++)
		w[i] = (unsigned char)rnext();
	for (size_t b = 0; b < nb; b++) {
		unsigned char *p = w + b * bb;
		uint16_t d = lp_fp32_to_fp16(frand() * 0.1f), m = lp_fp32_to_fp16(frand());
		switch (t) {
		case LP_Q_Q6_K: memcpy(p + offsetof(struct lp_blk_q6_k, d), &d, 2); break;
		case LP_Q_Q4_1: case LP_Q_Q5_1: case LP_Q_Q4_K: case LP_Q_Q5_K:
			memcpy(p, &d, 2);
			memcpy(p + 2, &m, 2);
			break;
		default: memcpy(p, &d, 2); break;
		}
	}
}

/* The SIMD dequantizers give the reference's floats bit for bit, on
 * quantized random rows and on random block bytes, for every type. */
START_TEST(test_dequant_simd)
{
	const struct lp_cpu_kernels *k = lp_cpu_kernels_avx2();
	enum { N = 1536 };
	float *ref = malloc(N * sizeof(float)), *fast = malloc(N * sizeof(float));
	int checked = 0;

	if (!k || !k->dequant)
		goto out;
	for (size_t i = 0; i < N_TYPES; i++) {
		enum lp_qtype t = all_types[i];
		unsigned char *w = malloc(lp_qtype_row_bytes(t, N) * 4);
		for (int round = 0; round < 8; round++) {
			if (round < 4) {
				void *m = random_matrix(t, 4, N);
				memcpy(w, m, lp_qtype_row_bytes(t, N) * 4);
				free(m);
			} else {
				random_blocks(t, w, 4 * N);
			}
			for (int r = 0; r < 4; r++) {
				const unsigned char *row = w + r * lp_qtype_row_bytes(t, N);
				memset(fast, 0xFF, N * sizeof(float));
				lp_dequantize_row_ref(t, row, ref, N);
				if (!k->dequant(t, row, fast, N)) {
					ck_assert_msg(t == LP_Q_F32 || t == LP_Q_F16 || t == LP_Q_BF16,
						      "no SIMD dequant for %s", lp_qtype_name(t));
					continue;
				}
				ck_assert_msg(!memcmp(ref, fast, N * sizeof(float)),
					      "%s round %d row %d", lp_qtype_name(t), round, r);
				lp_dequantize_row(t, row, fast, N);
				ck_assert(!memcmp(ref, fast, N * sizeof(float)));
				checked++;
			}
		}
		free(w);
	}
	ck_assert_int_eq(checked, 8 * 8 * 4);
out:
	free(ref);
	free(fast);
}
END_TEST

START_TEST(test_act_quantize)
{
	float x[256];
	struct lp_act_q8_256 k;
	struct lp_act_q8_32 l[8];
	struct lp_q8_act a = { 0, &k, sizeof(k) };

	for (int i = 0; i < 256; i++)
		x[i] = frand();
	x[77] = -4.0f;
	lp_q8_act_quantize(LP_Q_Q4_K, x, 256, &a);
	ck_assert_uint_eq(a.n, 256);
	ck_assert_float_eq_tol(k.d, 4.0f / 127, 1e-7);
	ck_assert_int_eq(k.qs[77], -127);
	for (int g = 0; g < 16; g++) {
		int s = 0;
		for (int j = 0; j < 16; j++)
			s += k.qs[16 * g + j];
		ck_assert_int_eq(k.bsums[g], s);
	}
	a.blocks = l;
	lp_q8_act_quantize(LP_Q_Q8_0, x, 256, &a);
	ck_assert_float_eq_tol(l[2].d * l[2].qs[13], 4.0f * -1, 1e-6); /* x[77] = e13 of block 2 */
	for (int b = 0; b < 8; b++) {
		int s = 0;
		for (int j = 0; j < 32; j++) {
			s += l[b].qs[j];
			ck_assert(fabsf(l[b].d * l[b].qs[j] - x[32 * b + j]) <= l[b].d / 2 * 1.001f);
		}
		ck_assert_float_eq_tol(l[b].s, l[b].d * s, 1e-5);
	}
	ck_assert_uint_eq(lp_q8_act_bytes(LP_Q_F32, 100), 0);
	ck_assert_uint_eq(lp_q8_act_bytes(LP_Q_Q6_K, 512), 2 * sizeof(struct lp_act_q8_256));
	ck_assert_uint_eq(lp_q8_act_bytes(LP_Q_Q4_1, 64), 2 * sizeof(struct lp_act_q8_32));
	ck_assert_uint_eq(lp_q8_act_bytes(LP_Q_Q5_0, 64), 2 * sizeof(struct lp_act_q8_32));
	ck_assert_uint_eq(lp_q8_act_bytes(LP_Q_Q5_1, 96), 3 * sizeof(struct lp_act_q8_32));
}
END_TEST

START_TEST(test_kernel_names)
{
	const char *n = lp_matvec_kernel_name();

	int forced = getenv("LPIPE_CPU") || getenv("LPIPE_CPU_KERNELS");

	ck_assert(!strcmp(n, "scalar") || !strcmp(n, "avx2") || !strcmp(n, "avx512"));
	ck_assert_str_eq(lp_cpu_kernels_scalar()->name, "scalar");
	if (lp_cpu_kernels_avx2())
		ck_assert_str_eq(lp_cpu_kernels_avx2()->name, "avx2");
	if (lp_cpu_kernels_avx512())
		ck_assert_str_eq(lp_cpu_kernels_avx512()->name, "avx512");
	/* unforced, the fastest set the CPU runs */
	if (!forced)
		ck_assert_str_eq(n, lp_cpu_kernels_avx512() ? "avx512" :
				    lp_cpu_kernels_avx2() ? "avx2" : "scalar");
}
END_TEST

static Suite *quant_suite(void)
{
	Suite *s = suite_create("quant");
	TCase *tc = tcase_create("quant");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_fp16_edges);
#ifdef __FLT16_MAX__
	tcase_add_test(tc, test_fp16_matches_compiler);
#endif
	tcase_add_test(tc, test_bf16_edges);
	tcase_add_test(tc, test_dequant_legacy_blocks);
	tcase_add_test(tc, test_dequant_q5_blocks);
	tcase_add_test(tc, test_dequant_k_blocks);
	tcase_add_test(tc, test_quantize_error_bounds);
	tcase_add_test(tc, test_matvec_random);
	tcase_add_test(tc, test_matvec_legacy_widths);
	tcase_add_test(tc, test_dot4_matches_dot);
	tcase_add_test(tc, test_act_quantize);
	tcase_add_test(tc, test_act_quantize_simd);
	tcase_add_test(tc, test_dequant_simd);
	tcase_add_test(tc, test_kernel_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(quant_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
