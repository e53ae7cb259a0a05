/*
 * module.c - the entry point of lpipe-cuda.so: opening a backend on a
 * device, listing devices, and the error latch every op reports to.
 */
#include "backend/cuda/cuda.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

static const char *blas_status_name(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "success";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "cuBLAS not initialized";
	case CUBLAS_STATUS_ALLOC_FAILED: return "cuBLAS allocation failed";
	case CUBLAS_STATUS_INVALID_VALUE: return "cuBLAS invalid value";
	case CUBLAS_STATUS_ARCH_MISMATCH: return "cuBLAS architecture mismatch";
	case CUBLAS_STATUS_MAPPING_ERROR: return "cuBLAS mapping error";
	case CUBLAS_STATUS_EXECUTION_FAILED: return "cuBLAS execution failed";
	case CUBLAS_STATUS_INTERNAL_ERROR: return "cuBLAS internal error";
	case CUBLAS_STATUS_NOT_SUPPORTED: return "cuBLAS operation not supported";
	default: return "cuBLAS error";
	}
}

static void latch_status(struct lp_cuda *c, enum lp_status st, const char *op, const char *why)
{
	const char *phase = c->host->mem_phase();

	if (c->err != LP_OK)
		return;
	c->err = st;
	snprintf(c->err_msg, sizeof(c->err_msg), "cuda: %s failed during %s: %s", op,
		 phase ? phase : "run", why);
}

static void latch_msg(struct lp_cuda *c, const char *op, const char *why)
{
	latch_status(c, LP_E_DEVICE, op, why);
}

void lp_cuda_latch(struct lp_cuda *c, const char *op, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	latch_msg(c, op, why);
}

int lp_cuda_check(struct lp_cuda *c, const char *op, cudaError_t e)
{
	c->last_op = op;
	c->last_phase = c->host->mem_phase();
	if (e == cudaSuccess && c->sync_each && !c->recording)
		e = cudaStreamSynchronize(c->stream);
	if (e == cudaSuccess)
		return 0;
	latch_status(c, e == cudaErrorMemoryAllocation ? LP_E_NOMEM : LP_E_DEVICE, op,
		     cudaGetErrorString(e));
	return 1;
}

int lp_cuda_check_blas(struct lp_cuda *c, const char *op, cublasStatus_t s)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return 0;
	latch_msg(c, op, blas_status_name(s));
	return 1;
}

enum lp_status lp_cuda_sync(struct lp_backend *be, struct lp_diag *d)
{
	struct lp_cuda *c = lp_cuda_of(be);
	enum lp_status st;

	if (c->recording) {
		/* a misuse: drop the recording so the stream works again */
		cudaGraph_t g = NULL;
		if (cudaStreamEndCapture(c->stream, &g) == cudaSuccess && g)
			cudaGraphDestroy(g);
		c->recording = 0;
		lp_cuda_latch(c, "sync", "waiting inside a recorded decode step");
	} else {
		cudaError_t e = cudaStreamSynchronize(c->stream);
		if (e != cudaSuccess && c->err == LP_OK) {
			char op[96];
			/* a fault of an op queued earlier: the stream knows no more */
			snprintf(op, sizeof(op), "a step (last op queued: %s)",
				 c->last_op ? c->last_op : "none");
			latch_msg(c, op, cudaGetErrorString(e));
		}
	}
	st = c->err;
	if (st != LP_OK)
		c->host->diag_set(d, st, NULL, 0, 0, "%s", c->err_msg);
	c->err = LP_OK;
	c->err_msg[0] = 0;
	return st;
}

/* ---- devices ---------------------------------------------------------- */

/* LP_E_DEVICE with the reason there is no usable GPU, or LP_OK with the
 * device count. */
static enum lp_status device_count(const struct lp_backend_host *host, int *n, struct lp_diag *d)
{
	cudaError_t e = cudaGetDeviceCount(n);

	if (e == cudaErrorNoDevice || (e == cudaSuccess && *n == 0)) {
		*n = 0;
		return host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "no CUDA device");
	}
	if (e == cudaErrorInsufficientDriver || e == cudaErrorInitializationError) {
		*n = 0;
		return host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "no CUDA driver: %s",
				      cudaGetErrorString(e));
	}
	if (e != cudaSuccess) {
		*n = 0;
		return host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "CUDA is unusable: %s",
				      cudaGetErrorString(e));
	}
	return LP_OK;
}

static int cuda_devices(const struct lp_backend_host *host, struct lp_backend_device *out,
			int max, struct lp_diag *d)
{
	int n = 0, cur = 0;

	if (device_count(host, &n, d) != LP_OK)
		return -1;
	cudaGetDevice(&cur);
	for (int i = 0; i < n && i < max; i++) {
		struct cudaDeviceProp pr;
		size_t fr = 0, tot = 0;

		memset(&out[i], 0, sizeof(out[i]));
		out[i].index = i;
		if (cudaGetDeviceProperties(&pr, i) == cudaSuccess) {
			snprintf(out[i].name, sizeof(out[i].name), "%.100s", pr.name);
			out[i].cc_major = pr.major;
			out[i].cc_minor = pr.minor;
			out[i].mem_total = pr.totalGlobalMem;
		}
		if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&fr, &tot) == cudaSuccess) {
			out[i].mem_free = fr;
			out[i].mem_total = tot;
		}
	}
	cudaSetDevice(cur);
	return n;
}

/* ---- a backend --------------------------------------------------------- */

static void cuda_destroy(struct lp_backend *be)
{
	struct lp_cuda *c;

	if (!be)
		return;
	c = lp_cuda_of(be);
	cudaSetDevice(c->dev);
	if (c->stream)
		cudaStreamSynchronize(c->stream);
	if (c->graph)
		cudaGraphExecDestroy(c->graph);
	lp_cuda_release_scratch(c);
	if (c->step_pos)
		cudaFree(c->step_pos);
	if (c->h_step_pos)
		cudaFreeHost(c->h_step_pos);
	if (c->ids_done)
		cudaEventDestroy(c->ids_done);
	if (c->pos_done)
		cudaEventDestroy(c->pos_done);
	if (c->blas)
		cublasDestroy(c->blas);
	if (c->stream)
		cudaStreamDestroy(c->stream);
	free(c);
}

static int env_flag(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) != 0 : dflt;
}

static enum lp_status fail_open(struct lp_cuda *c, const struct lp_backend_host *host,
				struct lp_diag *d, const char *what, const char *why)
{
	cuda_destroy(c ? &c->pub : NULL);
	return host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "unable to %s: %s", what, why);
}

static enum lp_status cuda_open(const struct lp_backend_host *host,
				const struct lp_backend_params *p, struct lp_backend **out,
				struct lp_diag *d)
{
	struct cudaDeviceProp pr;
	struct lp_cuda *c;
	cudaError_t e;
	cublasStatus_t bs;
	int n = 0;

	*out = NULL;
	if (!host || host->abi != LP_BACKEND_ABI_VERSION)
		return LP_E_DEVICE;
	if (device_count(host, &n, d) != LP_OK)
		return LP_E_DEVICE;
	if (p->device_index < 0 || p->device_index >= n)
		return host->diag_set(d, LP_E_DEVICE, NULL, 0, 0,
				      "no CUDA device %d (%d found)", p->device_index, n);
	c = calloc(1, sizeof(*c));
	if (!c)
		return host->diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate the CUDA backend");
	c->host = host;
	c->dev = p->device_index;
	c->pub.ops = &lp_cuda_ops;
	c->pub.name = "cuda";
	c->pub.place = LP_BACKEND_DEVICE;
	c->pub.impl = c;
	c->sync_each = env_flag("LPIPE_CUDA_SYNC", 0);
	c->graphs = env_flag("LPIPE_CUDA_GRAPH", 1);
	if ((e = cudaSetDevice(c->dev)) != cudaSuccess ||
	    (e = cudaGetDeviceProperties(&pr, c->dev)) != cudaSuccess)
		return fail_open(c, host, d, "select the CUDA device", cudaGetErrorString(e));
	c->n_sm = pr.multiProcessorCount;
	snprintf(c->pub.device, sizeof(c->pub.device), "%.100s (sm_%d%d, %d SMs)", pr.name, pr.major,
		 pr.minor, pr.multiProcessorCount);
	if ((e = cudaMemGetInfo(&c->pub.mem_free, &c->pub.mem_total)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess ||
	    (e = cudaEventCreateWithFlags(&c->ids_done, cudaEventDisableTiming)) != cudaSuccess ||
	    (e = cudaEventCreateWithFlags(&c->pos_done, cudaEventDisableTiming)) != cudaSuccess ||
	    (e = cudaMalloc((void **)&c->step_pos, sizeof(int32_t))) != cudaSuccess ||
	    (e = cudaMallocHost((void **)&c->h_step_pos, sizeof(int32_t))) != cudaSuccess)
		return fail_open(c, host, d, "set up the CUDA device", cudaGetErrorString(e));
	if ((bs = cublasCreate(&c->blas)) != CUBLAS_STATUS_SUCCESS ||
	    (bs = cublasSetStream(c->blas, c->stream)) != CUBLAS_STATUS_SUCCESS ||
	    /* f32 products stay f32: no TF32 behind the caller's back */
	    (bs = cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS)
		return fail_open(c, host, d, "start cuBLAS", blas_status_name(bs));
	host->log_verbose("cuda: %s, %zu MiB free of %zu MiB", c->pub.device,
			  c->pub.mem_free >> 20, c->pub.mem_total >> 20);
	*out = &c->pub;
	return LP_OK;
}

/* Keeps the destroy op reachable from the table in ops.c. */
void lp_cuda_destroy(struct lp_backend *be)
{
	cuda_destroy(be);
}

static char version[64] = "CUDA";
static struct lp_backend_module module = {
	.abi = LP_BACKEND_ABI_VERSION,
	.name = "cuda",
	.version = version,
	.open = cuda_open,
	.devices = cuda_devices,
};

__attribute__((visibility("default")))
const struct lp_backend_module *lp_backend_cuda_entry(uint32_t abi)
{
	int rt = 0, bmaj = 0, bmin = 0;

	if (abi != LP_BACKEND_ABI_VERSION)
		return NULL;
	/* the versions of the libraries loaded, not of the headers */
	if (cudaRuntimeGetVersion(&rt) == cudaSuccess &&
	    cublasGetProperty(MAJOR_VERSION, &bmaj) == CUBLAS_STATUS_SUCCESS &&
	    cublasGetProperty(MINOR_VERSION, &bmin) == CUBLAS_STATUS_SUCCESS)
		snprintf(version, sizeof(version), "CUDA %d.%d, cuBLAS %d.%d", rt / 1000,
			 rt % 1000 / 10, bmaj, bmin);
	return &module;
}
