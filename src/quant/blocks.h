/*
 * blocks.h - byte layouts of the quantized blocks (internal to the
 * model and backend modules).
 *
 * Weight blocks follow GGUF exactly (fp16 fields as raw uint16_t, little
 * endian hosts only). Activation blocks are lpipe's own: they never leave
 * memory, so they keep float scales and precomputed sums that make the
 * integer dot products cheap.
 *
 * Element order inside blocks:
 *   Q4_0/Q4_1: element i < 16 in the low nibble of qs[i], i >= 16 in the
 *              high nibble of qs[i - 16].
 *   Q5_0/Q5_1: the low 4 bits as in Q4_0/Q4_1; the fifth bit of element i
 *              is bit i % 8 of qh[i / 8] (qh read as a little-endian 32-bit
 *              word: bit i). Q5_0 stores q - 16, Q5_1 d q + m.
 *   Q4_K/Q5_K: 8 sub-blocks of 32 with 6-bit scale and min each (packed in
 *              12 bytes); chunk c (64 elements) uses qs[32c..32c+31], low
 *              nibbles first; Q5_K's fifth bit of element 64c + l is bit 2c
 *              of qh[l], of element 64c + 32 + l bit 2c + 1.
 *   Q6_K:      16 groups of 16 with int8 scales; element e of half h
 *              (128 each) has its low 4 bits in ql[64h + e % 32 (+32 when
 *              (e / 32) is odd)], low nibble when e / 32 < 2, and its high 2
 *              bits at bit 2 (e / 32) of qh[32h + e % 32]; value q - 32.
 */
#ifndef LP_QUANT_BLOCKS_H
#define LP_QUANT_BLOCKS_H

#include <stdint.h>

#define LP_QK 32     /* legacy block */
#define LP_QK_K 256  /* K super-block */

struct lp_blk_q4_0 { uint16_t d; uint8_t qs[16]; };
struct lp_blk_q4_1 { uint16_t d, m; uint8_t qs[16]; };
struct lp_blk_q5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; };
struct lp_blk_q5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; };
struct lp_blk_q8_0 { uint16_t d; int8_t qs[32]; };
struct lp_blk_q4_k { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; };
struct lp_blk_q5_k { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; };
struct lp_blk_q6_k { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; };

_Static_assert(sizeof(struct lp_blk_q4_0) == 18, "q4_0 layout");
_Static_assert(sizeof(struct lp_blk_q4_1) == 20, "q4_1 layout");
_Static_assert(sizeof(struct lp_blk_q5_0) == 22, "q5_0 layout");
_Static_assert(sizeof(struct lp_blk_q5_1) == 24, "q5_1 layout");
_Static_assert(sizeof(struct lp_blk_q8_0) == 34, "q8_0 layout");
_Static_assert(sizeof(struct lp_blk_q4_k) == 144, "q4_K layout");
_Static_assert(sizeof(struct lp_blk_q5_k) == 176, "q5_K layout");
_Static_assert(sizeof(struct lp_blk_q6_k) == 210, "q6_K layout");

/* Activations for the legacy types: x ~= d * qs, s = d * sum(qs). */
struct lp_act_q8_32 { float d; float s; int8_t qs[32]; };
/* Activations for the K types: x ~= d * qs, bsums[j] = sum of qs[16j..16j+15]. */
struct lp_act_q8_256 { float d; int16_t bsums[16]; int8_t qs[256]; };

/* Quantized value (0..31) of element i (0..31) of a Q5_0/Q5_1 block. */
static inline int lp_q5_get(const uint8_t *qs, const uint8_t *qh, int i)
{
	int lo = i < 16 ? qs[i] & 0xF : qs[i - 16] >> 4;

	return lo | (((qh[i / 8] >> (i % 8)) & 1) << 4);
}

/* Scale and min j (0..7) of a Q4_K/Q5_K block's 12 packed bytes. */
static inline void lp_k_scale_min(const uint8_t *q, int j, uint8_t *sc, uint8_t *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
		*m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
	}
}

#endif
