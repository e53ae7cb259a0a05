/*
 * rowgroup.h - weights laid out in groups of 16 rows, for kernels that
 * take 16 rows at once with one vector lane per row.
 *
 * A mat-vec over a file's layout (each row's blocks in order, one row
 * after the other) reads one row's 32 weights per block and must shuffle
 * them against the activations; with 16 rows interleaved, one 64-byte
 * load holds 4 weights of each of 16 rows, and a broadcast of 4
 * activations multiplies them all (vpdpbusd), one integer sum per lane
 * and row. The scales of the 16 rows lie side by side, so each is
 * widened once per 16 rows.
 *
 * A matrix of `rows` rows (a multiple of LP_RG_ROWS) keeps its bytes and
 * its size: group g (rows 16g .. 16g + 15) is the nb = cols / 32 group
 * blocks of column block b = 0 .. nb - 1, in that order, each
 * lp_rowgroup_block_bytes(t) bytes (16 times the type's block), at
 * (g * nb + b) * that. Within a group block, for row r < 16 and the
 * element values q[r][j] (j < 32, as blocks.h orders them):
 *
 *   Q4_1 (320 bytes): 4 vectors of 64 bytes; byte 4r + e (e < 4) of
 *        vector p holds q[r][8p + e] in its low nibble and q[r][8p + 4 + e]
 *        in its high one. Then the 16 rows' d (fp16), then their m.
 *   Q5_0 (352 bytes): the low 4 bits as Q4_1's vectors; then 8 64-bit
 *        masks, mask 2p + h having bit 4r + e set when element 8p + 4h + e
 *        of row r has its fifth bit; then the 16 rows' d.
 *   Q8_0 (544 bytes): 8 vectors of 64 bytes; byte 4r + e of vector p is
 *        element 4p + e of row r plus 128 (unsigned). Then the 16 d.
 *
 * The values are the file's: packing then unpacking gives the file's
 * bytes back, bit for bit.
 */
#ifndef LP_QUANT_ROWGROUP_H
#define LP_QUANT_ROWGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "quant/quant.h"

#define LP_RG_ROWS 16

/* Where the parts of a group block lie (bytes from its start), and its
 * size, by type, as above: the vectors start at 0. */
#define LP_RG_Q4_1_D 256
#define LP_RG_Q4_1_M 288
#define LP_RG_Q4_1_BYTES 320
#define LP_RG_Q5_0_MASKS 256
#define LP_RG_Q5_0_D 320
#define LP_RG_Q5_0_BYTES 352
#define LP_RG_Q8_0_D 512
#define LP_RG_Q8_0_BYTES 544

/* 1 when t has a row-group layout (Q4_1, Q5_0, Q8_0). */
int lp_rowgroup_has(enum lp_qtype t);

/* Bytes of one group block of t (16 of its blocks); 0 for other types. */
size_t lp_rowgroup_block_bytes(enum lp_qtype t);

/*
 * Rewrite, in place, the `rows` x `cols` matrix of type t at W (rows
 * contiguous, lp_qtype_row_bytes apart; rows a multiple of LP_RG_ROWS)
 * as row groups. `tmp` holds LP_RG_ROWS rows (16 * row bytes).
 */
void lp_rowgroup_pack(enum lp_qtype t, void *W, uint64_t rows, uint64_t cols, void *tmp);

/* The inverse of lp_rowgroup_pack, from `src` into `dst` (not in place). */
void lp_rowgroup_unpack(enum lp_qtype t, const void *src, uint64_t rows, uint64_t cols,
			void *dst);

/* Row r's block (the file's bytes, one block of t) of the group block
 * `gblk`, into `blk`. */
void lp_rowgroup_get(enum lp_qtype t, const void *gblk, int r, void *blk);

/* Row r of the row-group matrix W (cols columns) in the file's layout,
 * lp_qtype_row_bytes(t, cols) bytes at `row`. */
void lp_rowgroup_row(enum lp_qtype t, const void *W, uint64_t cols, uint64_t r, void *row);

#endif
