/*
 * matvec.c - the matrix-vector entry points: walk the rows of a weight
 * matrix with the dot kernels of the chosen set (kernels.h).
 */
#include "backend/cpu/matvec.h"

#include "backend/cpu/kernels.h"
#include "quant/blocks.h"
#include "quant/rowgroup.h"

static int is_k_type(enum lp_qtype t)
{
	return t == LP_Q_Q4_K || t == LP_Q_Q5_K || t == LP_Q_Q6_K;
}

static int is_float_type(enum lp_qtype t)
{
	return t == LP_Q_F32 || t == LP_Q_F16 || t == LP_Q_BF16;
}

void lp_q8_act_quantize(enum lp_qtype t, const float *x, size_t n, struct lp_q8_act *a)
{
	const struct lp_cpu_kernels *k = lp_cpu_kernels();
	void (*fast)(const float *, size_t, void *) = is_k_type(t) ? k->act_q8_256 : k->act_q8_32;

	if (is_float_type(t) || !fast) {
		lp_q8_act_quantize_ref(t, x, n, a);
		return;
	}
	a->n = n;
	fast(x, n, a->blocks);
}

/* ---- matrix-vector ---- */

static void matvec_rows(const struct lp_cpu_kernels *k, enum lp_qtype t, const void *W,
			size_t n_cols, const float *x, const struct lp_q8_act *xq, float *y,
			size_t row_begin, size_t row_end)
{
	size_t rb = lp_qtype_row_bytes(t, n_cols), r = row_begin;
	lp_dot_fn dot = lp_cpu_dot(k, t);
	lp_dot4_fn dot4 = lp_cpu_dot4(k, t);
	const void *act = is_float_type(t) ? (const void *)x : xq->blocks;

	if (dot4)
		for (; r + 4 <= row_end; r += 4)
			dot4((const unsigned char *)W + r * rb, rb, act, n_cols, y + r);
	for (; r < row_end; r++)
		y[r] = dot((const unsigned char *)W + r * rb, act, n_cols);
}

void lp_matvec_rows(enum lp_qtype t, const void *W, size_t n_cols, const float *x,
		    const struct lp_q8_act *xq, float *y, size_t row_begin, size_t row_end)
{
	matvec_rows(lp_cpu_kernels(), t, W, n_cols, x, xq, y, row_begin, row_end);
}

void lp_matvec(enum lp_qtype t, const void *W, size_t n_rows, size_t n_cols,
	       const float *x, const struct lp_q8_act *xq, float *y)
{
	matvec_rows(lp_cpu_kernels(), t, W, n_cols, x, xq, y, 0, n_rows);
}

void lp_matvec_ref(enum lp_qtype t, const void *W, size_t n_rows, size_t n_cols,
		   const float *x, const struct lp_q8_act *xq, float *y)
{
	matvec_rows(lp_cpu_kernels_scalar(), t, W, n_cols, x, xq, y, 0, n_rows);
}

void lp_matvec_groups(enum lp_qtype t, const void *W, size_t n_cols, const struct lp_q8_act *xq,
		      float *y, size_t row_begin, size_t row_end)
{
	lp_dot16_fn dot16 = lp_cpu_dot16(lp_cpu_kernels(), t);
	size_t group = (n_cols / LP_QK) * lp_rowgroup_block_bytes(t);

	for (size_t r = row_begin; r < row_end; r += LP_RG_ROWS)
		dot16((const unsigned char *)W + r / LP_RG_ROWS * group, xq->blocks, n_cols, y + r);
}

int lp_matvec_takes_groups(enum lp_qtype t)
{
	return lp_cpu_dot16(lp_cpu_kernels(), t) != NULL;
}

const char *lp_matvec_kernel_name(void)
{
	return lp_cpu_kernels()->name;
}
