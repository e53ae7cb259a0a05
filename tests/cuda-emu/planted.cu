/*
 * planted.cu - kernels with planted bugs, and their correct twins, for
 * tests/check_cuda_emu.c: built by the same rule as kernels/ (launches
 * rewritten, emu.h force-included), so what the emulator catches here it
 * catches there. Each launcher queues one kernel on `s` and returns the
 * launch's error; faults show at the next synchronisation.
 */
#include <cuda_runtime.h>

#define WARP 32

/* out[i] = the neighbour's value, through shared memory. */
static __global__ void neighbour(const float *in, float *out, int n, int barrier)
{
	__shared__ float s[256];
	int t = threadIdx.x;

	s[t] = in[t];
	if (barrier)
		__syncthreads();
	out[t] = s[(t + 1) % n];
}

/* A warp sum; `half` leaves lanes 16..31 out of the first shuffle (they
 * go on to the barrier), which a warp of 32 full-mask lanes must not. */
static __global__ void warp_sum(const float *in, float *out, int half)
{
	int lane = threadIdx.x % WARP;
	float v = in[threadIdx.x];

	if (!half || lane < 16)
		for (int o = WARP / 2; o > 0; o >>= 1)
			v += __shfl_xor_sync(0xffffffffu, v, o);
	__syncthreads();
	out[threadIdx.x] = v;
}

/* Barriers at two places: threads of one half at each. */
static __global__ void split_barrier(float *out)
{
	if (threadIdx.x < 16)
		__syncthreads();
	else
		__syncthreads();
	out[threadIdx.x] = 1.0f;
}

/* out[0..n) = i, and with `past` out[n] as well: one past the end. */
static __global__ void fill(float *out, int n, int past)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n + past)
		out[i] = (float)i;
}

/* A block sum over shared memory, with the barriers it needs. */
static __global__ void block_sum(const float *in, float *out, int n)
{
	__shared__ float red[WARP];
	int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
	float v = threadIdx.x < (unsigned)n ? in[threadIdx.x] : 0.0f;

	for (int o = WARP / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if (lane == 0)
		red[w] = v;
	__syncthreads();
	if (w == 0) {
		v = lane < (int)(blockDim.x / WARP) ? red[lane] : 0.0f;
		for (int o = WARP / 2; o > 0; o >>= 1)
			v += __shfl_xor_sync(0xffffffffu, v, o);
		if (lane == 0)
			out[blockIdx.x] = v;
	}
}

/* y[i] += *scale for n elements (reads a device scalar at run time). */
static __global__ void add_scalar(float *y, const float *scale, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] += *scale;
}

extern "C" {

cudaError_t planted_neighbour(const float *in, float *out, int n, int barrier, cudaStream_t s)
{
	neighbour<<<1, n, 0, s>>>(in, out, n, barrier);
	return cudaGetLastError();
}

cudaError_t planted_warp_sum(const float *in, float *out, int half, cudaStream_t s)
{
	warp_sum<<<1, 64, 0, s>>>(in, out, half);
	return cudaGetLastError();
}

cudaError_t planted_split_barrier(float *out, cudaStream_t s)
{
	split_barrier<<<1, 32, 0, s>>>(out);
	return cudaGetLastError();
}

cudaError_t planted_fill(float *out, int n, int past, cudaStream_t s)
{
	fill<<<(n + 127) / 128, 128, 0, s>>>(out, n, past);
	return cudaGetLastError();
}

cudaError_t planted_block_sum(const float *in, float *out, int n, int blocks, cudaStream_t s)
{
	block_sum<<<blocks, 256, 0, s>>>(in, out, n);
	return cudaGetLastError();
}

cudaError_t planted_add_scalar(float *y, const float *scale, int n, cudaStream_t s)
{
	add_scalar<<<(n + 63) / 64, 64, 0, s>>>(y, scale, n);
	return cudaGetLastError();
}

}
