/*
 * matvec.h - the CPU's matrix-vector products over every weight type, on
 * the dot kernels of kernels.h (the fastest set the CPU supports, chosen
 * once at run time), and the fast activation quantizer they take.
 */
#ifndef LP_BACKEND_CPU_MATVEC_H
#define LP_BACKEND_CPU_MATVEC_H

#include <stddef.h>

#include "quant/quant.h"

/* Same bytes as lp_q8_act_quantize_ref (quant/quant.h), with the SIMD
 * quantizer of the chosen kernel set where it has one. Reentrant. */
void lp_q8_act_quantize(enum lp_qtype t, const float *x, size_t n, struct lp_q8_act *a);

/*
 * y[r] = dot(row r of W, x) for r in [0, n_rows). W has type `t`, `n_cols`
 * elements per row (a multiple of t's block), rows contiguous
 * (lp_qtype_row_bytes apart). `xq` is x quantized for `t` by
 * lp_q8_act_quantize (ignored, and may be NULL, for float types; `x` is
 * then used). Uses the fastest kernel the CPU supports (checked at run
 * time; LPIPE_CPU=avx2|scalar in the environment forces a slower one, see
 * kernels.h);
 * lp_matvec_ref is the scalar reference with the same semantics. Both are
 * single-threaded and reentrant.
 */
void lp_matvec(enum lp_qtype t, const void *W, size_t n_rows, size_t n_cols,
	       const float *x, const struct lp_q8_act *xq, float *y);
void lp_matvec_ref(enum lp_qtype t, const void *W, size_t n_rows, size_t n_cols,
		   const float *x, const struct lp_q8_act *xq, float *y);

/*
 * Rows [row_begin, row_end) of lp_matvec: y[r] for those r only (W and y are
 * the whole matrix and output), so that threads can split the rows. Same
 * kernels as lp_matvec; reentrant.
 */
void lp_matvec_rows(enum lp_qtype t, const void *W, size_t n_cols, const float *x,
		    const struct lp_q8_act *xq, float *y, size_t row_begin, size_t row_end);

/*
 * The same rows of a matrix laid out in row groups (quant/rowgroup.h), by
 * the chosen set's row-group kernel (kernels.h: lp_dot16_fn): row_begin
 * and row_end are multiples of LP_RG_ROWS. Only for a type that
 * lp_matvec_takes_groups takes; reentrant.
 */
void lp_matvec_groups(enum lp_qtype t, const void *W, size_t n_cols, const struct lp_q8_act *xq,
		      float *y, size_t row_begin, size_t row_end);
/* 1 when the chosen kernel set multiplies row groups of type t. */
int lp_matvec_takes_groups(enum lp_qtype t);

/* Name of the kernel set lp_matvec dispatches to ("avx512", "avx2", "scalar"). */
const char *lp_matvec_kernel_name(void);

#endif
