/*
 * gemm_bf16.c - the float product Y = X W^T with X and W rounded to BF16
 * and the products summed in float, on AVX-512 BF16 (vdpbf16ps), for the
 * encoder's projections and feed-forward products (x86-64 only).
 *
 * Built in the AVX-512 convenience library; the functions carry the
 * avx512bf16 target themselves and run only when avx512_init found the
 * feature (kernels.c), so the rest of the set runs on CPUs without it.
 *
 * vdpbf16ps sums two BF16 products into each float lane: 32 multiplies
 * an instruction where an FMA does 16, and half the bytes to read. Both
 * operands are rounded to the nearest BF16 (even on ties), which is 8
 * bits of mantissa; the sums stay in float. MiniLM's vectors move by a
 * cosine of about 1e-6 (tests/check_embed.c states what it checks).
 *
 * Layout: W is packed per call, as many rows as the scratch holds (all of
 * a thread's rows for the encoder), into panels of 32 rows where the pair
 * (c, c+1) of the 32 rows is one 128-byte run: two vectors, lane j the
 * pair of row j. X is rounded into BF16 pairs 128 rows at a time, once per
 * packed block of W, and each panel (under 100 KiB) runs against all
 * of those rows while it stays in L2: each (8 rows, 32 rows) tile of Y is
 * 16 accumulators, started from the bias, one broadcast pair of X against
 * two vectors of W per step. Rounding X once per block rather than once
 * per L2-sized block of W matters: X is the product's largest operand
 * (the feed-forward output's 1536 columns), and its rounding took 5% of
 * the encoder when it was read three times. Packing costs one pass over
 * W per call, under 1% of a call of a few hundred rows of X; the weights
 * stay mapped as float.
 */
#include "backend/cpu/kernels.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define TILE_X 8      /* X rows a tile */
#define PANEL 32      /* W rows a panel: two vectors of pairs */
#define X_BLOCK 128   /* X rows rounded at a time, and run against each panel */

/* x[0..k) as k2 = ceil(k/2) pairs of BF16 (to nearest even), the last
 * one's high half 0 when k is odd. */
TGT static void to_bf16(const float *x, size_t k, uint32_t *out)
{
	size_t i = 0;

	for (; i + 32 <= k; i += 32) {
		__m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
		_mm512_storeu_si512(out + i / 2, (__m512i)v);
	}
	if (i < k) {
		size_t r = k - i;
		__mmask16 lo = (__mmask16)(r >= 16 ? 0xffff : (1u << r) - 1);
		__mmask16 hi = (__mmask16)(r <= 16 ? 0 : (1u << (r - 16)) - 1);
		__m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x + i + 16),
						 _mm512_maskz_loadu_ps(lo, x + i));
		/* zeros past k: the odd element's pair and nothing after it */
		_mm512_mask_storeu_epi32(out + i / 2, (__mmask16)((1u << ((r + 1) / 2)) - 1),
					 (__m512i)v);
	}
}

/* Pack rows [0, rows) of W (k columns, ldw apart) into panels of PANEL
 * rows at wp, rows past `rows` zero; tmp holds k2 pairs. */
TGT static void pack_w(const float *W, size_t ldw, size_t rows, size_t k, uint32_t *wp,
		       uint32_t *tmp)
{
	size_t k2 = (k + 1) / 2, panels = (rows + PANEL - 1) / PANEL;

	for (size_t r = 0; r < panels * PANEL; r++) {
		uint32_t *dst = wp + (r / PANEL) * k2 * PANEL + r % PANEL;
		if (r < rows)
			to_bf16(W + r * ldw, k, tmp);
		for (size_t p = 0; p < k2; p++)
			dst[p * PANEL] = r < rows ? tmp[p] : 0;
	}
}

/* Y[t][j] = bias[j] + sum over pairs of xb[t] . panel lane j, for t < NR
 * rows of the tile (xb rows k2 pairs apart) and j < cols (<= PANEL) of the
 * panel; the sums start from the bias (NULL: from 0). */
#define TILE_BODY(NR)                                                                     \
	__m512 acc[NR][2];                                                                \
	__m512 b0 = bias ? _mm512_maskz_loadu_ps(m0, bias) : _mm512_setzero_ps();         \
	__m512 b1 = bias ? _mm512_maskz_loadu_ps(m1, bias + 16) : _mm512_setzero_ps();    \
	_Pragma("GCC unroll 8") for (size_t t = 0; t < NR; t++) {                         \
		acc[t][0] = b0;                                                           \
		acc[t][1] = b1;                                                           \
	}                                                                                 \
	for (size_t p = 0; p < k2; p++) {                                                 \
		__m512bh w0 = (__m512bh)_mm512_load_si512(wp + p * PANEL);                \
		__m512bh w1 = (__m512bh)_mm512_load_si512(wp + p * PANEL + 16);           \
		_Pragma("GCC unroll 8") for (size_t t = 0; t < NR; t++) {                 \
			__m512bh x = (__m512bh)_mm512_set1_epi32((int)xb[t * k2 + p]);    \
			acc[t][0] = _mm512_dpbf16_ps(acc[t][0], x, w0);                   \
			acc[t][1] = _mm512_dpbf16_ps(acc[t][1], x, w1);                   \
		}                                                                         \
	}                                                                                 \
	_Pragma("GCC unroll 8") for (size_t t = 0; t < NR; t++) {                         \
		_mm512_mask_storeu_ps(Y + t * ldy, m0, acc[t][0]);                        \
		_mm512_mask_storeu_ps(Y + t * ldy + 16, m1, acc[t][1]);                   \
	}

#define TILE_FN(NR)                                                                       \
	TGT static void tile_##NR(const uint32_t *xb, const uint32_t *wp, size_t k2, float *Y, \
				  size_t ldy, __mmask16 m0, __mmask16 m1, const float *bias) \
	{                                                                                 \
		TILE_BODY(NR)                                                             \
	}
TILE_FN(1) TILE_FN(2) TILE_FN(3) TILE_FN(4) TILE_FN(5) TILE_FN(6) TILE_FN(7) TILE_FN(8)
#undef TILE_FN
#undef TILE_BODY

typedef void (*tile_fn)(const uint32_t *, const uint32_t *, size_t, float *, size_t, __mmask16,
			__mmask16, const float *);
static const tile_fn tiles[TILE_X + 1] = {
	NULL, tile_1, tile_2, tile_3, tile_4, tile_5, tile_6, tile_7, tile_8,
};

#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

size_t lp_cpu_bf16_gemm_scratch(size_t k)
{
	size_t k2 = (k + 1) / 2;

	return ALIGN64(X_BLOCK * k2 * 4) + k2 * PANEL * 4 + 64;
}

/* Y rows [t0, t0 + nb) of one packed block of np panels (`rows` rows of W
 * from r0): X rounded once into xb, then each panel against every tile of
 * the rows while it stays in L2. */
TGT static void block_rows(const float *X, size_t ldx, size_t k, size_t t0, size_t nb,
			   const uint32_t *wp, size_t rows, size_t r0, const float *bias,
			   float *Y, size_t ldy, uint32_t *xb)
{
	size_t k2 = (k + 1) / 2, np = (rows + PANEL - 1) / PANEL;

	for (size_t t = 0; t < nb; t++)
		to_bf16(X + (t0 + t) * ldx, k, xb + t * k2);
	for (size_t p = 0; p < np; p++) {
		size_t cols = rows - p * PANEL < PANEL ? rows - p * PANEL : PANEL;
		__mmask16 m0 = (__mmask16)(cols >= 16 ? 0xffff : (1u << cols) - 1);
		__mmask16 m1 = (__mmask16)(cols >= 32 ? 0xffff :
					  cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
		const float *b = bias ? bias + r0 + p * PANEL : NULL;
		for (size_t t = 0; t < nb; t += TILE_X) {
			size_t nr = nb - t < TILE_X ? nb - t : TILE_X;
			tiles[nr](xb + t * k2, wp + p * k2 * PANEL, k2,
				  Y + (t0 + t) * ldy + r0 + p * PANEL, ldy, m0, m1, b);
		}
	}
}

TGT void lp_cpu_bf16_gemm_avx512(size_t n, size_t m, size_t k, const float *X, size_t ldx,
				 const float *W, size_t ldw, const float *bias, float *Y, size_t ldy,
				 void *scratch, size_t scratch_bytes)
{
	size_t k2 = (k + 1) / 2, panel_bytes = k2 * PANEL * 4;
	uint8_t *base = (uint8_t *)ALIGN64((uintptr_t)scratch);
	uint32_t *xb = (uint32_t *)base;
	uint32_t *wp = (uint32_t *)(base + ALIGN64(X_BLOCK * k2 * 4));
	size_t room = scratch_bytes - (size_t)((uint8_t *)wp - (uint8_t *)scratch);
	size_t panels = room / panel_bytes;

	if (!panels)
		panels = 1;  /* the caller gave lp_cpu_bf16_gemm_scratch(k) at least */
	for (size_t r0 = 0; r0 < m; r0 += panels * PANEL) {
		size_t rows = m - r0 < panels * PANEL ? m - r0 : panels * PANEL;
		pack_w(W + r0 * ldw, ldw, rows, k, wp, xb);
		for (size_t t0 = 0; t0 < n; t0 += X_BLOCK)
			block_rows(X, ldx, k, t0, n - t0 < X_BLOCK ? n - t0 : X_BLOCK, wp, rows, r0,
				   bias, Y, ldy, xb);
	}
}

int lp_cpu_has_avx512bf16(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512bf16");
}
#endif
