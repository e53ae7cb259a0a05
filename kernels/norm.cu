/*
 * norm.cu - RMSNorm, one block per row. The sum of squares is taken in
 * double, as the CPU reference takes it, so that the scale agrees to the
 * last bits whatever the row length.
 */
#include "kernels/norm.h"
#include "kernels/common.cuh"

static __global__ void rmsnorm_rows(const float *x, size_t ldx, const float *__restrict__ w,
				    float *out, size_t ldo, int n, float eps)
{
	__shared__ double red[32];
	const float *xr = x + blockIdx.x * ldx;
	float *o = out + blockIdx.x * ldo;
	double ss = 0;

	for (int i = threadIdx.x; i < n; i += blockDim.x)
		ss += (double)xr[i] * xr[i];
	ss = lpk_block_sum_d(ss, red);
	float scale = (float)(1.0 / sqrt(ss / (double)n + eps));
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		o[i] = xr[i] * scale * w[i];
}

extern "C" cudaError_t lp_cuk_rmsnorm(const float *x, size_t ldx, const float *w, float *out,
				      size_t ldo, int n_rows, int n, float eps,
				      cudaStream_t stream)
{
	int bs = n >= 1024 ? 512 : n >= 256 ? 256 : 128;

	if (n_rows < 0 || n <= 0)
		return cudaErrorInvalidValue;
	if (n_rows == 0)
		return cudaSuccess;
	rmsnorm_rows<<<n_rows, bs, 0, stream>>>(x, ldx, w, out, ldo, n, eps);
	return lpk_launched();
}
