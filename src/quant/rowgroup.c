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

_Static_assert(LP_RG_Q4_1_BYTES == LP_RG_ROWS * sizeof(struct lp_blk_q4_1), "q4_1 groups");
_Static_assert(LP_RG_Q5_0_BYTES == LP_RG_ROWS * sizeof(struct lp_blk_q5_0), "q5_0 groups");
_Static_assert(LP_RG_Q8_0_BYTES == LP_RG_ROWS * sizeof(struct lp_blk_q8_0), "q8_0 groups");

size_t lp_rowgroup_block_bytes(enum lp_qtype t)
{
	return lp_rowgroup_has(t) ? LP_RG_ROWS * lp_qtype_row_bytes(t, LP_QK) : 0;
}


/*
 * A row's 4 pieces (4 bytes each, one per vector) from the file's 16
 * bytes of nibbles qs, 8 bytes at a time (a = qs[0..7], b = qs[8..15],
 * little endian): piece p holds values 8p + e (low nibbles) and
 * 8p + 4 + e (high), which for p < 2 are the low nibbles of qs[8p + e]
 * and qs[8p + 4 + e], and for p >= 2 the high nibbles of qs[8p - 16 + e]
 * and qs[8p - 12 + e].
 */
static inline void nibbles_to_pieces(const uint8_t *qs, uint32_t piece[4])
{
	uint64_t a, b;

	memcpy(&a, qs, 8);
	memcpy(&b, qs + 8, 8);
	piece[0] = (uint32_t)((a & 0x0F0F0F0Fu) | ((a >> 32) & 0x0F0F0F0Fu) << 4);
	piece[1] = (uint32_t)((b & 0x0F0F0F0Fu) | ((b >> 32) & 0x0F0F0F0Fu) << 4);
	piece[2] = (uint32_t)(((a >> 4) & 0x0F0F0F0Fu) | ((a >> 32) & 0xF0F0F0F0u));
	piece[3] = (uint32_t)(((b >> 4) & 0x0F0F0F0Fu) | ((b >> 32) & 0xF0F0F0F0u));
}

/* The inverse: the file's 16 bytes of nibbles from the 4 pieces. */
static inline void pieces_to_nibbles(const uint32_t piece[4], uint8_t *qs)
{
	for (int h = 0; h < 2; h++) {
		uint64_t lo = piece[h], hi = piece[h + 2];
		uint64_t w = (lo & 0x0F0F0F0Fu) | (hi & 0x0F0F0F0Fu) << 4 |
			     ((lo >> 4) & 0x0F0F0F0Fu) << 32 | (hi & 0xF0F0F0F0u) << 32;
		memcpy(qs + 8 * h, &w, 8);
	}
}

/* Block b of the 16 rows at rows16 (rb bytes apart, the file's layout)
 * into the group block g. */
static void pack_block(enum lp_qtype t, const uint8_t *rows16, size_t rb, size_t b, uint8_t *g)
{
	size_t bb = lp_qtype_row_bytes(t, LP_QK);
	uint64_t masks[8] = { 0 };

	for (int r = 0; r < LP_RG_ROWS; r++) {
		const uint8_t *blk = rows16 + r * rb + b * bb;
		if (t == LP_Q_Q8_0) {
			const struct lp_blk_q8_0 *x = (const void *)blk;
			for (int p = 0; p < 8; p++) {
				uint32_t v;
				memcpy(&v, x->qs + 4 * p, 4);
				v ^= 0x80808080u;
				memcpy(g + 64 * p + 4 * r, &v, 4);
			}
			memcpy(g + LP_RG_Q8_0_D + 2 * r, &x->d, 2);
			continue;
		}
		const uint8_t *qs = t == LP_Q_Q4_1 ? ((const struct lp_blk_q4_1 *)(const void *)blk)->qs
						   : ((const struct lp_blk_q5_0 *)(const void *)blk)->qs;
		uint32_t piece[4];
		nibbles_to_pieces(qs, piece);
		for (int p = 0; p < 4; p++)
			memcpy(g + 64 * p + 4 * r, &piece[p], 4);
		if (t == LP_Q_Q4_1) {
			const struct lp_blk_q4_1 *x = (const void *)blk;
			memcpy(g + LP_RG_Q4_1_D + 2 * r, &x->d, 2);
			memcpy(g + LP_RG_Q4_1_M + 2 * r, &x->m, 2);
		} else {
			/* mask k's bits 4r .. 4r + 3: values 4k .. 4k + 3, which are
			 * bits 4k .. 4k + 3 of qh */
			const struct lp_blk_q5_0 *x = (const void *)blk;
			uint32_t qh;
			memcpy(&qh, x->qh, 4);
			for (int k = 0; k < 8; k++)
				masks[k] |= (uint64_t)((qh >> (4 * k)) & 0xF) << (4 * r);
			memcpy(g + LP_RG_Q5_0_D + 2 * r, &x->d, 2);
		}
	}
	if (t == LP_Q_Q5_0)
		memcpy(g + LP_RG_Q5_0_MASKS, masks, sizeof(masks));
}

void lp_rowgroup_get(enum lp_qtype t, const void *gblk, int r, void *out)
{
	const uint8_t *g = gblk;
	uint32_t piece[4];

	if (t == LP_Q_Q8_0) {
		struct lp_blk_q8_0 *x = out;
		for (int p = 0; p < 8; p++) {
			uint32_t w;
			memcpy(&w, g + 64 * p + 4 * r, 4);
			w ^= 0x80808080u;
			memcpy(x->qs + 4 * p, &w, 4);
		}
		memcpy(&x->d, g + LP_RG_Q8_0_D + 2 * r, 2);
		return;
	}
	for (int p = 0; p < 4; p++)
		memcpy(&piece[p], g + 64 * p + 4 * r, 4);
	if (t == LP_Q_Q4_1) {
		struct lp_blk_q4_1 *x = out;
		pieces_to_nibbles(piece, x->qs);
		memcpy(&x->d, g + LP_RG_Q4_1_D + 2 * r, 2);
		memcpy(&x->m, g + LP_RG_Q4_1_M + 2 * r, 2);
	} else {  /* Q5_0 */
		struct lp_blk_q5_0 *x = out;
		uint32_t qh = 0;
		for (int k = 0; k < 8; k++) {
			uint64_t mk;
			memcpy(&mk, g + LP_RG_Q5_0_MASKS + 8 * k, 8);
			qh |= (uint32_t)((mk >> (4 * r)) & 0xF) << (4 * k);
		}
		pieces_to_nibbles(piece, x->qs);
		memcpy(x->qh, &qh, 4);
		memcpy(&x->d, g + LP_RG_Q5_0_D + 2 * r, 2);
	}
}

/* Group g of the file layout at `rows16` (16 rows of rb bytes) into the
 * group blocks at `out`. */
static void pack_group(enum lp_qtype t, const uint8_t *rows16, size_t rb, size_t nb, uint8_t *out)
{
	size_t gb = lp_rowgroup_block_bytes(t);

	for (size_t b = 0; b < nb; b++)
		pack_block(t, rows16, rb, b, out + b * gb);
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
