/*
 * host.c - the fast paths of the host for code that runs outside a
 * backend (loading a model's small tensors, the flat vector index): the
 * CPU backend's kernels and its BLAS, behind declarations in backend.h,
 * so that formats (quant/) and retrieval (retrieve/) name no backend.
 * They are the CPU backend's code, so they live in its folder; backend/
 * itself names no backend (src/LAYERS).
 */
#include "backend/backend.h"

#include "backend/cpu/blas.h"
#include "backend/cpu/kernels.h"

void lp_dequantize_row(enum lp_qtype t, const void *src, float *dst, size_t n)
{
	const struct lp_cpu_kernels *k = lp_cpu_kernels();

	if (k->dequant && k->dequant(t, src, dst, n))
		return;
	lp_dequantize_row_ref(t, src, dst, n);
}

void lp_backend_host_sgemm_nt(int nq, int n, int dim, const float *a, const float *b,
			      float *scores)
{
	lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_TRANS, nq, n, dim, 1.0f, a, dim,
		      b, dim, 0.0f, scores, n);
}
