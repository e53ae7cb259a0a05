/*
 * cublas.cc - the cuBLAS entry points lpipe calls, on the emulated device:
 * handles, their stream, workspace and math mode, cublasGemmEx and
 * cublasSgemmStridedBatched as column-major reference products that sum
 * in double.
 *
 * Arguments are checked in the order and with the status codes the
 * cuBLAS documentation gives: a handle not created (or destroyed)
 * CUBLAS_STATUS_NOT_INITIALIZED; m, n, k or batchCount < 0, an operation
 * that is not N/T/C, lda < max(1, transa == N ? m : k), ldb < max(1,
 * transb == N ? k : n), ldc < max(1, m), NULL alpha or beta
 * CUBLAS_STATUS_INVALID_VALUE; a type and compute-type pair it does not
 * list CUBLAS_STATUS_NOT_SUPPORTED. Beyond the documentation, every
 * matrix the product reads or writes must lie in one device allocation:
 * anything else would read or write what it should not on a GPU, so it
 * is reported and fails as the fault it would be
 * (CUBLAS_STATUS_EXECUTION_FAILED, and the device error is sticky). The
 * product is queued on the handle's stream like the real one.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "emu_rt.h"

#include <stdio.h>
#include <string.h>

#include <set>
#include <vector>

using namespace lp_emu;

struct cublasContext {
	cudaStream_t stream = nullptr;
	void *ws = nullptr;
	size_t ws_bytes = 0;
	cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

static std::set<cublasHandle_t> &handles()
{
	static std::set<cublasHandle_t> h;
	return h;
}

static bool valid(cublasHandle_t h)
{
	return h && handles().count(h);
}

#define LOCK std::lock_guard<std::recursive_mutex> lock_(lock())

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
	LOCK;
	if (!h)
		return CUBLAS_STATUS_INVALID_VALUE;
	*h = new cublasContext;
	handles().insert(*h);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
	LOCK;
	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	drain(stream_of(h->stream));
	handles().erase(h);
	delete h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
	if (!value)
		return CUBLAS_STATUS_INVALID_VALUE;
	switch (type) {
	case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
	case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
	case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
	default: return CUBLAS_STATUS_INVALID_VALUE;
	}
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
	LOCK;
	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->stream = s;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
	LOCK;
	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *ws, size_t bytes)
{
	LOCK;
	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	/* the documentation: the workspace is device memory aligned to 256
	 * bytes, else CUBLAS_STATUS_INVALID_VALUE */
	if (bytes && (!ws || ((uintptr_t)ws & 255) || !find(ws, bytes) ||
		      find(ws, bytes)->kind != MEM_DEVICE)) {
		report("cublasSetWorkspace: %p (%zu bytes) is not aligned device memory", ws, bytes);
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	h->ws = ws;
	h->ws_bytes = bytes;
	return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"

static size_t type_size(cudaDataType t)
{
	switch (t) {
	case CUDA_R_32F: return 4;
	case CUDA_R_16F: case CUDA_R_16BF: return 2;
	default: return 0;
	}
}

static double load(const void *p, cudaDataType t, size_t i)
{
	switch (t) {
	case CUDA_R_32F: return ((const float *)p)[i];
	case CUDA_R_16F: return (double)__half2float(((const __half *)p)[i]);
	case CUDA_R_16BF: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
	default: return 0;
	}
}

static void store(void *p, cudaDataType t, size_t i, double v)
{
	switch (t) {
	case CUDA_R_32F: ((float *)p)[i] = (float)v; break;
	case CUDA_R_16F: ((__half *)p)[i] = __float2half((float)v); break;
	case CUDA_R_16BF: ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v); break;
	default: break;
	}
}

struct gemm {
	cublasOperation_t ta, tb;
	int m, n, k;
	float alpha, beta;
	const void *A, *B;
	void *C;
	cudaDataType at, bt, ct;
	long long lda, ldb, ldc, sa, sb, sc;
	int batch;
};

/* Bytes spanned by a column-major (rows x cols) matrix with leading
 * dimension ld, of elements of es bytes. */
static size_t span(long long rows, long long cols, long long ld, size_t es)
{
	if (rows <= 0 || cols <= 0)
		return 0;
	return ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * es;
}

static bool in_device(const char *api, const char *what, const void *p, size_t bytes)
{
	const alloc *a;

	if (bytes == 0)
		return true;
	a = find(p, bytes);
	if (a && a->kind == MEM_DEVICE)
		return true;
	a = find(p, 0);
	if (a && a->kind == MEM_DEVICE)
		report("%s: %s spans %zu bytes from offset %zu of a device buffer of %zu bytes", api,
		       what, bytes, (size_t)((uintptr_t)p - a->base), a->size);
	else
		report("%s: %s (%p) is not device memory", api, what, p);
	return false;
}

static cublasStatus_t run_gemm(cublasHandle_t h, const char *api, const gemm &g)
{
	long long ar = g.ta == CUBLAS_OP_N ? g.m : g.k, ac = g.ta == CUBLAS_OP_N ? g.k : g.m;
	long long br = g.tb == CUBLAS_OP_N ? g.k : g.n, bc = g.tb == CUBLAS_OP_N ? g.n : g.k;
	size_t ea = type_size(g.at), eb = type_size(g.bt), ec = type_size(g.ct);
	bool ok = true;

	if (g.m == 0 || g.n == 0 || g.batch == 0)
		return CUBLAS_STATUS_SUCCESS;
	/* every batch's matrices, checked where the first and last lie */
	for (int b = 0; b < g.batch && ok; b += g.batch > 1 ? g.batch - 1 : 1) {
		ok = (g.k == 0 || in_device(api, "A", (const char *)g.A + (size_t)(b * g.sa) * ea,
					    span(ar, ac, g.lda, ea))) &&
		     (g.k == 0 || in_device(api, "B", (const char *)g.B + (size_t)(b * g.sb) * eb,
					    span(br, bc, g.ldb, eb))) &&
		     in_device(api, "C", (const char *)g.C + (size_t)(b * g.sc) * ec,
			       span(g.m, g.n, g.ldc, ec));
	}
	if (!ok) {
		sticky = set_error(cudaErrorIllegalAddress);
		return CUBLAS_STATUS_EXECUTION_FAILED;
	}
	enqueue(h->stream, [g, ea, eb, ec] {
		/* op(A) row by row and op(B) column by column in double, so that
		 * the inner product runs over contiguous values */
		std::vector<double> a((size_t)g.m * g.k), bcol((size_t)g.k * 4);
		for (int b = 0; b < g.batch; b++) {
			const char *A = (const char *)g.A + (size_t)(b * g.sa) * ea;
			const char *B = (const char *)g.B + (size_t)(b * g.sb) * eb;
			char *C = (char *)g.C + (size_t)(b * g.sc) * ec;
			for (int i = 0; i < g.m; i++)
				for (int l = 0; l < g.k; l++)
					a[(size_t)i * g.k + l] =
						load(A, g.at, g.ta == CUBLAS_OP_N ? (size_t)l * g.lda + i
										 : (size_t)i * g.lda + l);
			/* four columns of op(B) at a time, interleaved, so that each
			 * row of op(A) is read once per four products */
			for (int j0 = 0; j0 < g.n; j0 += 4) {
				int nj = g.n - j0 < 4 ? g.n - j0 : 4;
				for (int l = 0; l < g.k; l++)
					for (int jj = 0; jj < 4; jj++) {
						int j = j0 + (jj < nj ? jj : 0);
						bcol[(size_t)l * 4 + jj] =
							load(B, g.bt, g.tb == CUBLAS_OP_N
									      ? (size_t)j * g.ldb + l
									      : (size_t)l * g.ldb + j);
					}
				for (int i = 0; i < g.m; i++) {
					const double *ar = &a[(size_t)i * g.k], *bc = bcol.data();
					double s[4] = { 0, 0, 0, 0 };
					for (int l = 0; l < g.k; l++, bc += 4) {
						s[0] += ar[l] * bc[0];
						s[1] += ar[l] * bc[1];
						s[2] += ar[l] * bc[2];
						s[3] += ar[l] * bc[3];
					}
					for (int jj = 0; jj < nj; jj++) {
						size_t ic = (size_t)(j0 + jj) * g.ldc + i;
						/* beta == 0: C is not read (it may hold NaN) */
						double v = g.alpha * s[jj];
						if (g.beta != 0.0f)
							v += g.beta * load(C, g.ct, ic);
						store(C, g.ct, ic, v);
					}
				}
			}
		}
	});
	return CUBLAS_STATUS_SUCCESS;
}

static bool op_ok(cublasOperation_t t)
{
	return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C;
}

/* The documented argument checks shared by both products. */
static cublasStatus_t check_args(const char *api, cublasOperation_t ta, cublasOperation_t tb,
				 long long m, long long n, long long k, const void *alpha,
				 const void *beta, long long lda, long long ldb, long long ldc)
{
	long long need_a = ta == CUBLAS_OP_N ? m : k, need_b = tb == CUBLAS_OP_N ? k : n;

	if (m < 0 || n < 0 || k < 0 || !op_ok(ta) || !op_ok(tb) ||
	    lda < (need_a > 1 ? need_a : 1) || ldb < (need_b > 1 ? need_b : 1) ||
	    ldc < (m > 1 ? m : 1) || !alpha || !beta) {
		report("%s: invalid value (m %lld n %lld k %lld, lda %lld ldb %lld ldc %lld, "
		       "ops %d %d)", api, m, n, k, lda, ldb, ldc, (int)ta, (int)tb);
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	return CUBLAS_STATUS_SUCCESS;
}

extern "C" {

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
			    int n, int k, const void *alpha, const void *A, cudaDataType at, int lda,
			    const void *B, cudaDataType bt, int ldb, const void *beta, void *C,
			    cudaDataType ct, int ldc, cublasComputeType_t compute,
			    cublasGemmAlgo_t algo)
{
	LOCK;
	cublasStatus_t s;
	gemm g;

	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if ((s = check_args("cublasGemmEx", ta, tb, m, n, k, alpha, beta, lda, ldb, ldc)))
		return s;
	/* the pairs of the documentation's table with a 32F compute type
	 * and real operands; others are not emulated */
	bool c32 = compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_PEDANTIC;
	bool pair = at == bt && (at == CUDA_R_32F || at == CUDA_R_16F || at == CUDA_R_16BF) &&
		    (ct == CUDA_R_32F || ct == at);
	if (!c32 || !pair) {
		report("cublasGemmEx: types A %d B %d C %d with compute type %d not supported",
		       (int)at, (int)bt, (int)ct, (int)compute);
		return CUBLAS_STATUS_NOT_SUPPORTED;
	}
	if (sticky != cudaSuccess)
		return CUBLAS_STATUS_EXECUTION_FAILED;
	g = gemm{ ta, tb, m, n, k, *(const float *)alpha, *(const float *)beta, A, B, C, at, bt, ct,
		  lda, ldb, ldc, 0, 0, 0, 1 };
	return run_gemm(h, "cublasGemmEx", g);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
					 cublasOperation_t tb, int m, int n, int k,
					 const float *alpha, const float *A, int lda, long long sa,
					 const float *B, int ldb, long long sb, const float *beta,
					 float *C, int ldc, long long sc, int batch)
{
	LOCK;
	cublasStatus_t s;

	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if ((s = check_args("cublasSgemmStridedBatched", ta, tb, m, n, k, alpha, beta, lda, ldb,
			    ldc)))
		return s;
	if (batch < 0) {
		report("cublasSgemmStridedBatched: batchCount %d", batch);
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	if (sticky != cudaSuccess)
		return CUBLAS_STATUS_EXECUTION_FAILED;
	return run_gemm(h, "cublasSgemmStridedBatched",
			gemm{ ta, tb, m, n, k, *alpha, *beta, A, B, C, CUDA_R_32F, CUDA_R_32F,
			      CUDA_R_32F, lda, ldb, ldc, sa, sb, sc, batch });
}

} // extern "C"
