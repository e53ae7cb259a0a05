/*
 * dot_scalar.c - the reference dot products: plain C, integer sums per
 * block, one float multiply-add per block. Every faster kernel is tested
 * against these.
 */
#include "backend/cpu/kernels.h"

#include <math.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/rowgroup.h"

static float dot_f32(const void *w, const void *a, size_t n)
{
	const float *x = w, *y = a;
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)x[i] * y[i];
	return (float)s;
}

static float dot_f16(const void *w, const void *a, size_t n)
{
	const uint16_t *x = w;
	const float *y = a;
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)lp_fp16_to_fp32(x[i]) * y[i];
	return (float)s;
}

static float dot_bf16(const void *w, const void *a, size_t n)
{
	const uint16_t *x = w;
	const float *y = a;
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)lp_bf16_to_fp32(x[i]) * y[i];
	return (float)s;
}

static float dot_q4_0(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_0 *x = w;
	const struct lp_act_q8_32 *y = a;
	float s = 0;

	for (size_t i = 0; i < n / LP_QK; i++) {
		int isum = 0;
		for (int j = 0; j < 16; j++)
			isum += ((x[i].qs[j] & 0xF) - 8) * y[i].qs[j] +
				((x[i].qs[j] >> 4) - 8) * y[i].qs[j + 16];
		s += lp_fp16_to_fp32(x[i].d) * y[i].d * (float)isum;
	}
	return s;
}

static float dot_q4_1(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_1 *x = w;
	const struct lp_act_q8_32 *y = a;
	float s = 0;

	for (size_t i = 0; i < n / LP_QK; i++) {
		int isum = 0;
		for (int j = 0; j < 16; j++)
			isum += (x[i].qs[j] & 0xF) * y[i].qs[j] + (x[i].qs[j] >> 4) * y[i].qs[j + 16];
		/* sum (d q + m) a = d * da * isum + m * (da * sum qa) */
		s += lp_fp16_to_fp32(x[i].d) * y[i].d * (float)isum +
		     lp_fp16_to_fp32(x[i].m) * y[i].s;
	}
	return s;
}

/* Sum of q * a over a Q5_0/Q5_1 block's 32 values (0..31); the fifth bits
 * are read as one little-endian word, byte by byte so the host's order does
 * not matter. */
static int q5_isum(const uint8_t *qs, const uint8_t *qh, const int8_t *qa)
{
	uint32_t h = qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
	int isum = 0;

	for (int j = 0; j < 16; j++)
		isum += ((qs[j] & 0xF) | (int)((h >> j) & 1) << 4) * qa[j] +
			((qs[j] >> 4) | (int)((h >> (j + 16)) & 1) << 4) * qa[j + 16];
	return isum;
}

static float dot_q5_0(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q5_0 *x = w;
	const struct lp_act_q8_32 *y = a;
	float s = 0;

	for (size_t i = 0; i < n / LP_QK; i++) {
		int asum = 0, isum;
		for (int j = 0; j < LP_QK; j++)
			asum += y[i].qs[j];
		/* sum (q - 16) a = sum q a - 16 sum a, in integers: exact */
		isum = q5_isum(x[i].qs, x[i].qh, y[i].qs) - 16 * asum;
		s += lp_fp16_to_fp32(x[i].d) * y[i].d * (float)isum;
	}
	return s;
}

static float dot_q5_1(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q5_1 *x = w;
	const struct lp_act_q8_32 *y = a;
	float s = 0;

	for (size_t i = 0; i < n / LP_QK; i++) {
		int isum = q5_isum(x[i].qs, x[i].qh, y[i].qs);
		/* as in Q4_1: the min meets the activation block's sum */
		s += lp_fp16_to_fp32(x[i].d) * y[i].d * (float)isum +
		     lp_fp16_to_fp32(x[i].m) * y[i].s;
	}
	return s;
}

static float dot_q8_0(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q8_0 *x = w;
	const struct lp_act_q8_32 *y = a;
	float s = 0;

	for (size_t i = 0; i < n / LP_QK; i++) {
		int isum = 0;
		for (int j = 0; j < 32; j++)
			isum += x[i].qs[j] * y[i].qs[j];
		s += lp_fp16_to_fp32(x[i].d) * y[i].d * (float)isum;
	}
	return s;
}

/* Sum over the 8 sub-blocks of min_j * (sum of the activations in j). */
static int k_min_sum(const uint8_t *scales, const int16_t *bsums)
{
	int s = 0;

	for (int j = 0; j < 8; j++) {
		uint8_t sc, m;
		lp_k_scale_min(scales, j, &sc, &m);
		s += m * (bsums[2 * j] + bsums[2 * j + 1]);
	}
	return s;
}

/*
 * One Q4_K/Q5_K super-block against its activations: the two formats share
 * scales, mins and nibble layout; Q5_K adds a fifth bit per element from
 * `qh` (NULL for Q4_K).
 */
static float k_block_dot(uint16_t d, uint16_t dmin, const uint8_t *scales,
			 const uint8_t *qs, const uint8_t *qh, const struct lp_act_q8_256 *y)
{
	int isum = 0;

	for (int j = 0; j < 8; j++) {
		const uint8_t *q = qs + 32 * (j / 2);
		const int8_t *qa = y->qs + 32 * j;
		int shift = (j & 1) * 4, sub = 0;
		uint8_t sc, m;
		for (int l = 0; l < 32; l++) {
			int v = (q[l] >> shift) & 0xF;
			if (qh)
				v |= ((qh[l] >> j) & 1) << 4;
			sub += v * qa[l];
		}
		lp_k_scale_min(scales, j, &sc, &m);
		isum += sc * sub;
	}
	return y->d * (lp_fp16_to_fp32(d) * (float)isum -
		       lp_fp16_to_fp32(dmin) * (float)k_min_sum(scales, y->bsums));
}

static float dot_q4_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q4_k *x = w;
	const struct lp_act_q8_256 *y = a;
	float s = 0;

	for (size_t i = 0; i < n / LP_QK_K; i++)
		s += k_block_dot(x[i].d, x[i].dmin, x[i].scales, x[i].qs, NULL, &y[i]);
	return s;
}

static float dot_q5_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q5_k *x = w;
	const struct lp_act_q8_256 *y = a;
	float s = 0;

	for (size_t i = 0; i < n / LP_QK_K; i++)
		s += k_block_dot(x[i].d, x[i].dmin, x[i].scales, x[i].qs, x[i].qh, &y[i]);
	return s;
}

static float dot_q6_k(const void *w, const void *a, size_t n)
{
	const struct lp_blk_q6_k *x = w;
	const struct lp_act_q8_256 *y = a;
	float s = 0;

	for (size_t i = 0; i < n / LP_QK_K; i++) {
		int isum = 0;
		for (int h = 0; h < 2; h++) {
			const uint8_t *ql = x[i].ql + 64 * h, *qh = x[i].qh + 32 * h;
			const int8_t *qa = y[i].qs + 128 * h;
			const int8_t *sc = x[i].scales + 8 * h;
			for (int k = 0; k < 4; k++) {
				for (int half = 0; half < 2; half++) {
					int sub = 0;
					for (int l = 16 * half; l < 16 * half + 16; l++) {
						uint8_t lo = ql[l + (k & 1) * 32];
						int q = (k < 2 ? lo & 0xF : lo >> 4) |
							(((qh[l] >> (2 * k)) & 3) << 4);
						sub += (q - 32) * qa[32 * k + l];
					}
					isum += sc[2 * k + half] * sub;
				}
			}
		}
		s += lp_fp16_to_fp32(x[i].d) * y[i].d * (float)isum;
	}
	return s;
}

/* ---- row groups (kernels.h: lp_dot16_fn) ---- */

/* The integer sum of one block of row weights (the file's bytes) with the
 * activations' 32 values, offsets included, as the one-row kernels above
 * take it. */
static int32_t block_isum(enum lp_qtype t, const uint8_t *blk, const int8_t *qa)
{
	int32_t isum = 0;

	for (int j = 0; j < 32; j++) {
		int q;
		if (t == LP_Q_Q8_0) {
			q = ((const struct lp_blk_q8_0 *)(const void *)blk)->qs[j];
		} else if (t == LP_Q_Q5_0) {
			const struct lp_blk_q5_0 *x = (const void *)blk;
			q = lp_q5_get(x->qs, x->qh, j) - 16;
		} else {
			const struct lp_blk_q4_1 *x = (const void *)blk;
			q = j < 16 ? x->qs[j] & 0xF : x->qs[j - 16] >> 4;
		}
		isum += q * qa[j];
	}
	return isum;
}

static void dot16_ref(enum lp_qtype t, const void *w, const void *a, size_t n, float y[16])
{
	const struct lp_act_q8_32 *x = a;
	size_t gb = lp_rowgroup_block_bytes(t);
	float acc[LP_RG_ROWS] = { 0 }, side[LP_RG_ROWS] = { 0 };
	uint8_t blk[sizeof(struct lp_blk_q8_0)];

	for (size_t b = 0; b < n / LP_QK; b++)
		for (int r = 0; r < LP_RG_ROWS; r++) {
			uint16_t d, m;
			lp_rowgroup_get(t, (const uint8_t *)w + b * gb, r, blk);
			memcpy(&d, blk, 2);
			acc[r] = fmaf(lp_fp16_to_fp32(d) * x[b].d,
				      (float)block_isum(t, blk, x[b].qs), acc[r]);
			if (t == LP_Q_Q4_1) {
				memcpy(&m, blk + 2, 2);
				side[r] = fmaf(lp_fp16_to_fp32(m), x[b].s, side[r]);
			}
		}
	for (int r = 0; r < LP_RG_ROWS; r++)
		y[r] = acc[r] + side[r];
}

static void dot16_q4_1(const void *w, const void *a, size_t n, float y[16])
{
	dot16_ref(LP_Q_Q4_1, w, a, n, y);
}

static void dot16_q5_0(const void *w, const void *a, size_t n, float y[16])
{
	dot16_ref(LP_Q_Q5_0, w, a, n, y);
}

static void dot16_q8_0(const void *w, const void *a, size_t n, float y[16])
{
	dot16_ref(LP_Q_Q8_0, w, a, n, y);
}

lp_dot16_fn lp_cpu_dot16_ref(enum lp_qtype t)
{
	switch (t) {
	case LP_Q_Q4_1: return dot16_q4_1;
	case LP_Q_Q5_0: return dot16_q5_0;
	case LP_Q_Q8_0: return dot16_q8_0;
	default: return NULL;
	}
}

static const struct lp_cpu_kernels scalar_set = {
	"scalar", dot_f32, dot_f16, dot_bf16, dot_q4_0, dot_q4_1, dot_q5_0, dot_q5_1, dot_q8_0,
	dot_q4_k, dot_q5_k, dot_q6_k, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

const struct lp_cpu_kernels *lp_cpu_kernels_scalar(void)
{
	return &scalar_set;
}
