/*
 * module.c - the entry point of lpipe-cuda.so (see the module ABI in
 * backend/backend.h): find the CUDA driver and devices, list them, and
 * say why a backend cannot be opened.
 *
 * This module carries the device discovery only: opening a backend fails
 * with LP_E_DEVICE, naming the reason (no driver, no device, or, on a
 * machine with a GPU, that the module has no ops for the model), so a
 * pipeline with device: auto falls back to the CPU and one with
 * device: cuda stops with exit code 3.
 */
#include "backend/backend.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* The number of devices, or -1 with d filled (LP_E_DEVICE). */
static int count_devices(const struct lp_backend_host *host, struct lp_diag *d)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
		host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "no CUDA device");
		return -1;
	}
	if (e == cudaErrorInsufficientDriver || e == cudaErrorInitializationError) {
		host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "no CUDA driver: %s",
			       cudaGetErrorString(e));
		return -1;
	}
	if (e != cudaSuccess) {
		host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "CUDA is unusable: %s",
			       cudaGetErrorString(e));
		return -1;
	}
	return n;
}

static int cuda_devices(const struct lp_backend_host *host, struct lp_backend_device *out,
			int max, struct lp_diag *d)
{
	int n = count_devices(host, d);

	for (int i = 0; i < n && i < max; i++) {
		struct cudaDeviceProp prop;
		size_t free_b = 0, total_b = 0;
		cudaError_t e = cudaGetDeviceProperties(&prop, i);

		if (e == cudaSuccess)
			e = cudaSetDevice(i);
		if (e == cudaSuccess)
			e = cudaMemGetInfo(&free_b, &total_b);
		if (e != cudaSuccess) {
			host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "CUDA device %d: %s", i,
				       cudaGetErrorString(e));
			return -1;
		}
		memset(&out[i], 0, sizeof(out[i]));
		out[i].index = i;
		snprintf(out[i].name, sizeof(out[i].name), "%.127s", prop.name);
		out[i].cc_major = prop.major;
		out[i].cc_minor = prop.minor;
		out[i].mem_total = total_b;
		out[i].mem_free = free_b;
	}
	return n;
}

static enum lp_status cuda_open(const struct lp_backend_host *host,
				const struct lp_backend_params *p, struct lp_backend **out,
				struct lp_diag *d)
{
	int n = count_devices(host, d);

	*out = NULL;
	if (n < 0)
		return LP_E_DEVICE;
	if (p->device_index < 0 || p->device_index >= n)
		return host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "no CUDA device %d (%d found)",
				      p->device_index, n);
	return host->diag_set(d, LP_E_DEVICE, NULL, 0, 0,
			      "this lpipe-cuda.so lists devices only: it has no ops to run a model");
}

static const struct lp_backend_module cuda_module = {
	.abi = LP_BACKEND_ABI_VERSION,
	.name = "cuda",
	.version = "CUDA runtime " STR(CUDART_VERSION),
	.open = cuda_open,
	.devices = cuda_devices,
};

const struct lp_backend_module *lp_backend_cuda_entry(uint32_t abi)
{
	return abi == LP_BACKEND_ABI_VERSION ? &cuda_module : NULL;
}
