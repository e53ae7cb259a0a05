/*
 * rowgroup.c - packing weights into groups of 16 rows and back
 * (rowgroup.h gives the layouts).
 */
#include "quant/rowgroup.h"

#include <string.h>

#include "quant/blocks.h"

int lp_rowgroup_has(enum lp_qtype t)
{
	return t == LP_Q_Q4_1 || t == LP_Q_Q5_0 || t == LP_Q_Q8_0;
}

size_t lp_rowgroup_block_bytes(enum lp_qtype t)
{
	return lp_rowgroup_has(t) ? LP_RG_ROWS * lp_qtype_row_bytes(t, LP_QK) : 0;
}

/* Offsets in a group block (rowgroup.h). */
#define RG_Q4_D 256
#define RG_Q4_M 288
#define RG_Q5_MASKS 256
#define RG_Q5_D 320
#define RG_Q8_D 512

/* Row r's block `blk` (the file's bytes) into the group block g. */
static void put_block(enum lp_qtype t, const uint8_t *blk, int r, uint8_t *g)
{
	uint8_t q[32];

	if (t == LP_Q_Q8_0) {
		const struct lp_blk_q8_0 *x = (const void *)blk;
		for (int j = 0; j < 32; j++)
			g[64 * (j / 4) + 4 * r + j % 4] = (uint8_t)(x->qs[j] ^ 0x80);
		memcpy(g + RG_Q8_D + 2 * r, &x->d, 2);
		return;
	}
	if (t == LP_Q_Q4_1) {
		const struct lp_blk_q4_1 *x = (const void *)blk;
		for (int j = 0; j < 16; j++) {
			q[j] = x->qs[j] & 0xF;
			q[j + 16] = x->qs[j] >> 4;
		}
		memcpy(g + RG_Q4_D + 2 * r, &x->d, 2);
		memcpy(g + RG_Q4_M + 2 * r, &x->m, 2);
	} else {  /* Q5_0 */
		const struct lp_blk_q5_0 *x = (const void *)blk;
		for (int j = 0; j < 32; j++) {
			q[j] = (uint8_t)lp_q5_get(x->qs, x->qh, j);
			if (q[j] & 0x10)
				g[RG_Q5_MASKS + 8 * (2 * (j / 8) + (j % 8) / 4) + (4 * r + j % 4) / 8] |=
					(uint8_t)(1u << ((4 * r + j % 4) % 8));
		}
		memcpy(g + RG_Q5_D + 2 * r, &x->d, 2);
	}
	for (int p = 0; p < 4; p++)
		for (int e = 0; e < 4; e++)
			g[64 * p + 4 * r + e] = (uint8_t)((q[8 * p + e] & 0xF) |
							  (q[8 * p + 4 + e] & 0xF) << 4);
}

void lp_rowgroup_get(enum lp_qtype t, const void *gblk, int r, void *out)
{
	const uint8_t *g = gblk;
	uint8_t *blk = out;
	uint8_t q[32];

	if (t == LP_Q_Q8_0) {
		struct lp_blk_q8_0 *x = (void *)blk;
		for (int j = 0; j < 32; j++)
			x->qs[j] = (int8_t)(g[64 * (j / 4) + 4 * r + j % 4] ^ 0x80);
		memcpy(&x->d, g + RG_Q8_D + 2 * r, 2);
		return;
	}
	for (int p = 0; p < 4; p++)
		for (int e = 0; e < 4; e++) {
			uint8_t v = g[64 * p + 4 * r + e];
			q[8 * p + e] = v & 0xF;
			q[8 * p + 4 + e] = v >> 4;
		}
	if (t == LP_Q_Q4_1) {
		struct lp_blk_q4_1 *x = (void *)blk;
		for (int j = 0; j < 16; j++)
			x->qs[j] = (uint8_t)(q[j] | q[j + 16] << 4);
		memcpy(&x->d, g + RG_Q4_D + 2 * r, 2);
		memcpy(&x->m, g + RG_Q4_M + 2 * r, 2);
	} else {  /* Q5_0 */
		struct lp_blk_q5_0 *x = (void *)blk;
		uint32_t h = 0;
		for (int j = 0; j < 32; j++) {
			int bit = 4 * r + j % 4;
			if (g[RG_Q5_MASKS + 8 * (2 * (j / 8) + (j % 8) / 4) + bit / 8] >> (bit % 8) & 1)
				h |= 1u << j;
		}
		for (int j = 0; j < 16; j++)
			x->qs[j] = (uint8_t)(q[j] | q[j + 16] << 4);
		memcpy(x->qh, &h, 4);
		memcpy(&x->d, g + RG_Q5_D + 2 * r, 2);
	}
}

/* Group g of the file layout at `rows16` (16 rows of rb bytes) into the
 * group blocks at `out`. */
static void pack_group(enum lp_qtype t, const uint8_t *rows16, size_t rb, size_t nb, uint8_t *out)
{
	size_t bb = lp_qtype_row_bytes(t, LP_QK), gb = lp_rowgroup_block_bytes(t);

	memset(out, 0, nb * gb);
	for (size_t b = 0; b < nb; b++)
		for (int r = 0; r < LP_RG_ROWS; r++)
			put_block(t, rows16 + r * rb + b * bb, r, out + b * gb);
}

void lp_rowgroup_pack(enum lp_qtype t, void *W, uint64_t rows, uint64_t cols, void *tmp)
{
	size_t rb = lp_qtype_row_bytes(t, cols), nb = cols / LP_QK;
	uint8_t *w = W;

	for (uint64_t g = 0; g < rows / LP_RG_ROWS; g++) {
		uint8_t *at = w + g * LP_RG_ROWS * rb;
		memcpy(tmp, at, LP_RG_ROWS * rb);
		pack_group(t, tmp, rb, nb, at);
	}
}

void lp_rowgroup_unpack(enum lp_qtype t, const void *src, uint64_t rows, uint64_t cols,
			void *dst)
{
	size_t rb = lp_qtype_row_bytes(t, cols);

	for (uint64_t r = 0; r < rows; r++)
		lp_rowgroup_row(t, src, cols, r, (uint8_t *)dst + r * rb);
}

void lp_rowgroup_row(enum lp_qtype t, const void *W, uint64_t cols, uint64_t r, void *row)
{
	size_t nb = cols / LP_QK, bb = lp_qtype_row_bytes(t, LP_QK);
	size_t gb = lp_rowgroup_block_bytes(t);
	const uint8_t *g = (const uint8_t *)W + (r / LP_RG_ROWS) * nb * gb;

	for (size_t b = 0; b < nb; b++)
		lp_rowgroup_get(t, g + b * gb, (int)(r % LP_RG_ROWS), (uint8_t *)row + b * bb);
}
