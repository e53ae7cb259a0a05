/*
 * membw.cu - the bandwidth yardstick: 16-byte copies, two per thread in
 * flight, enough blocks for every multiprocessor several times over.
 */
#include "kernels/membw.h"
#include "kernels/common.cuh"

static __global__ void copy16(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	for (; i + stride < n; i += 2 * stride) {
		uint4 a = src[i], b = src[i + stride];
		dst[i] = a;
		dst[i + stride] = b;
	}
	if (i < n)
		dst[i] = src[i];
}

extern "C" cudaError_t lp_cuk_copy(const void *src, void *dst, size_t bytes, cudaStream_t stream)
{
	int dev = 0, sms = 0;
	cudaError_t e;

	if (bytes % 16 || ((uintptr_t)src | (uintptr_t)dst) % 16)
		return cudaErrorInvalidValue;
	if (bytes == 0)
		return cudaSuccess;
	if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
	    (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
		return e;
	size_t n = bytes / 16;
	unsigned blocks = lpk_blocks(n, 512);
	if (blocks > (unsigned)sms * 8)
		blocks = (unsigned)sms * 8;
	copy16<<<blocks, 512, 0, stream>>>((const uint4 *)src, (uint4 *)dst, n);
	return lpk_launched();
}
