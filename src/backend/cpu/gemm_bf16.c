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
 * Layout: W is packed per call, a block of rows at a time that stays in
 * L2, into panels of 32 rows where the pair (c, c+1) of the 32 rows is
 * one 128-byte run: two vectors, lane j the pair of row j. An X tile of 8
 * rows is rounded into BF16 pairs, and each (8 rows, 32 rows) tile of Y
 * is 16 accumulators, one broadcast pair of X against two vectors of W
 * per step. Packing costs one pass over W per call, under 1% of a
 * call of a few hundred rows of X; the weights stay mapped as float.
 */
#include "backend/cpu/kernels.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define TILE_X 8      /* X rows a tile */
#define PANEL 32      /* W rows a panel: two vectors of pairs */
#define BLOCK_BYTES ((size_t)512 * 1024)   /* packed W block: about half of Zen 4's L2 */

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

	return ALIGN64(TILE_X * k2 * 4) + k2 * PANEL * 4 + 64;
}

TGT void lp_cpu_bf16_gemm_avx512(size_t n, size_t m, size_t k, const float *X, size_t ldx,
				 const float *W, size_t ldw, const float *bias, float *Y, size_t ldy,
				 void *scratch, size_t scratch_bytes)
{
	size_t k2 = (k + 1) / 2, panel_bytes = k2 * PANEL * 4;
	uint8_t *base = (uint8_t *)ALIGN64((uintptr_t)scratch);
	uint32_t *xb = (uint32_t *)base;
	uint32_t *wp = (uint32_t *)(base + ALIGN64(TILE_X * k2 * 4));
	size_t room = scratch_bytes - (size_t)((uint8_t *)wp - (uint8_t *)scratch);
	size_t panels = (room < BLOCK_BYTES ? room : BLOCK_BYTES) / panel_bytes;

	if (!panels)
		panels = 1;  /* the caller gave lp_cpu_bf16_gemm_scratch(k) at least */
	for (size_t r0 = 0; r0 < m; r0 += panels * PANEL) {
		size_t rows = m - r0 < panels * PANEL ? m - r0 : panels * PANEL;
		size_t np = (rows + PANEL - 1) / PANEL;
		pack_w(W + r0 * ldw, ldw, rows, k, wp, xb);
		for (size_t t0 = 0; t0 < n; t0 += TILE_X) {
			size_t nr = n - t0 < TILE_X ? n - t0 : TILE_X;
			for (size_t t = 0; t < nr; t++)
				to_bf16(X + (t0 + t) * ldx, k, xb + t * k2);
			for (size_t p = 0; p < np; p++) {
				size_t cols = rows - p * PANEL < PANEL ? rows - p * PANEL : PANEL;
				__mmask16 m0 = (__mmask16)(cols >= 16 ? 0xffff : (1u << cols) - 1);
				__mmask16 m1 = (__mmask16)(cols >= 32 ? 0xffff :
							  cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
				tiles[nr](xb, wp + p * k2 * PANEL, k2, Y + t0 * ldy + r0 + p * PANEL,
					  ldy, m0, m1, bias ? bias + r0 + p * PANEL : NULL);
			}
		}
	}
}

int lp_cpu_has_avx512bf16(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512bf16");
}
#endif
