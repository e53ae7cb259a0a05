/*
 * bert.cu - LayerNorm, GELU, masked softmax and pooling for the encoder,
 * one block per row (or per sequence), matching src/retrieve/bert.c:
 * reductions that the CPU takes in double are taken in double here.
 */
#include "kernels/bert.h"
#include "kernels/common.cuh"

static __global__ void layernorm_rows(float *out, size_t ldo, const float *x, size_t ldx,
				      const float *r, size_t ldr, const float *__restrict__ g,
				      const float *__restrict__ b, int n, float eps)
{
	__shared__ double red[32];
	const float *xr = x + blockIdx.x * ldx, *rr = r ? r + blockIdx.x * ldr : NULL;
	float *o = out + blockIdx.x * ldo;
	double s = 0, v = 0;

	for (int j = threadIdx.x; j < n; j += blockDim.x)
		s += rr ? xr[j] + rr[j] : xr[j];
	double mean = lpk_block_sum_d(s, red) / (double)n;
	for (int j = threadIdx.x; j < n; j += blockDim.x) {
		float e = rr ? xr[j] + rr[j] : xr[j];
		v += (e - mean) * (e - mean);
	}
	float inv = (float)(1.0 / sqrt(lpk_block_sum_d(v, red) / (double)n + eps));
	/* each thread reads back only the elements it writes: out may be x */
	for (int j = threadIdx.x; j < n; j += blockDim.x) {
		float e = rr ? xr[j] + rr[j] : xr[j];
		o[j] = ((float)(e - mean)) * inv * g[j] + b[j];
	}
}

static __device__ __forceinline__ float erf_as(float z)
{
	float a = fabsf(z), t = 1.0f / (1.0f + 0.3275911f * a);
	float p = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f +
		  t * (-1.453152027f + t * 1.061405429f))));
	float r = 1.0f - p * expf(-a * a);

	return z < 0 ? -r : r;
}

static __global__ void gelu_k(float *x, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = 0.5f * x[i] * (1.0f + erf_as(x[i] * 0.70710678118654752440f));
}

static __global__ void softmax_masked_rows(float *a, int n_head, int L,
					   const int32_t *__restrict__ lens, float scale)
{
	__shared__ float red[32];
	size_t row = blockIdx.x;
	int s = (int)(row / ((size_t)n_head * L)), len = min(max(lens[s], 1), L);
	float *r = a + row * L, mx = -INFINITY, sum = 0.0f;

	for (int j = threadIdx.x; j < len; j += blockDim.x)
		mx = fmaxf(mx, r[j]);
	mx = lpk_block_max(mx, red);
	for (int j = threadIdx.x; j < len; j += blockDim.x)
		sum += expf((r[j] - mx) * scale);
	sum = 1.0f / lpk_block_sum(sum, red);
	for (int j = threadIdx.x; j < L; j += blockDim.x)
		r[j] = j < len ? expf((r[j] - mx) * scale) * sum : 0.0f;
}

static __global__ void mean_pool_l2_k(const float *__restrict__ x, int L, int E,
				      const int32_t *__restrict__ lens, float *__restrict__ out)
{
	__shared__ double red[32];
	int s = blockIdx.x, len = min(max(lens[s], 0), L);
	const float *xs = x + (size_t)s * L * E;
	float *o = out + (size_t)s * E;
	double ss = 0;

	for (int j = threadIdx.x; j < E; j += blockDim.x) {
		float v = 0.0f;
		for (int t = 0; t < len; t++)
			v += xs[(size_t)t * E + j];
		o[j] = v;
		ss += (double)v * v;
	}
	ss = lpk_block_sum_d(ss, red);
	if (ss > 0) {
		float inv = (float)(1.0 / sqrt(ss));
		for (int j = threadIdx.x; j < E; j += blockDim.x)
			o[j] *= inv;
	}
}

/* One block per row: zero it, add the features in order (one thread: the
 * order of the additions is the CPU's), normalise. */
static __global__ void scatter_l2_k(float *out, int dim, const uint32_t *__restrict__ off,
				    const uint32_t *__restrict__ bucket,
				    const float *__restrict__ val)
{
	__shared__ double red[32];
	float *o = out + (size_t)blockIdx.x * dim;
	double ss = 0;

	for (int j = threadIdx.x; j < dim; j += blockDim.x)
		o[j] = 0.0f;
	__syncthreads();
	if (threadIdx.x == 0)
		for (uint32_t j = off[blockIdx.x]; j < off[blockIdx.x + 1]; j++)
			o[bucket[j]] += val[j];
	__syncthreads();
	for (int j = threadIdx.x; j < dim; j += blockDim.x)
		ss += (double)o[j] * o[j];
	ss = lpk_block_sum_d(ss, red);
	if (ss > 0) {
		float inv = (float)(1.0 / sqrt(ss));
		for (int j = threadIdx.x; j < dim; j += blockDim.x)
			o[j] *= inv;
	}
}

static int row_threads(int n)
{
	return n >= 1024 ? 512 : n >= 256 ? 256 : n >= 64 ? 128 : 32;
}

extern "C" cudaError_t lp_cuk_layernorm(float *out, size_t ldo, const float *x, size_t ldx,
					const float *r, size_t ldr, const float *g, const float *b,
					int n_rows, int n, float eps, cudaStream_t stream)
{
	if (n_rows < 0 || n <= 0)
		return cudaErrorInvalidValue;
	if (n_rows == 0)
		return cudaSuccess;
	layernorm_rows<<<n_rows, row_threads(n), 0, stream>>>(out, ldo, x, ldx, r, ldr, g, b, n,
							      eps);
	return lpk_launched();
}

extern "C" cudaError_t lp_cuk_gelu(float *x, size_t n, cudaStream_t stream)
{
	if (n == 0)
		return cudaSuccess;
	gelu_k<<<lpk_blocks(n, 256), 256, 0, stream>>>(x, n);
	return lpk_launched();
}

extern "C" cudaError_t lp_cuk_softmax_masked(float *a, int n_seq, int n_head, int L,
					     const int32_t *lens, float scale, cudaStream_t stream)
{
	size_t rows = (size_t)n_seq * n_head * L;

	if (n_seq < 0 || n_head <= 0 || L <= 0 || !(scale > 0) || rows > 0x7fffffffu)
		return cudaErrorInvalidValue;
	if (rows == 0)
		return cudaSuccess;
	softmax_masked_rows<<<(unsigned)rows, row_threads(L), 0, stream>>>(a, n_head, L, lens,
									   scale);
	return lpk_launched();
}

extern "C" cudaError_t lp_cuk_mean_pool_l2(const float *x, int n_seq, int L, int E,
					   const int32_t *lens, float *out, cudaStream_t stream)
{
	if (n_seq < 0 || L <= 0 || E <= 0)
		return cudaErrorInvalidValue;
	if (n_seq == 0)
		return cudaSuccess;
	mean_pool_l2_k<<<n_seq, row_threads(E), 0, stream>>>(x, L, E, lens, out);
	return lpk_launched();
}

extern "C" cudaError_t lp_cuk_scatter_l2(float *out, int n, int dim, const uint32_t *off,
					 const uint32_t *bucket, const float *val,
					 cudaStream_t stream)
{
	if (n < 0 || dim <= 0)
		return cudaErrorInvalidValue;
	if (n == 0)
		return cudaSuccess;
	scatter_l2_k<<<n, row_threads(dim), 0, stream>>>(out, dim, off, bucket, val);
	return lpk_launched();
}
