/*
 * common.cuh - device helpers shared by the kernel families (internal to
 * kernels/; never included from C).
 *
 * The weight block layouts are GGUF's, taken from src/quant/blocks.h
 * so that the CPU and the GPU read the same bytes the same way; that header
 * is C11 and spells its layout checks _Static_assert, which C++ calls
 * static_assert. Its inline helpers are host code: the device versions are
 * below, written to match them element for element.
 */
#ifndef LP_KERNELS_COMMON_CUH
#define LP_KERNELS_COMMON_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

#define _Static_assert static_assert
#include "quant/blocks.h"
#undef _Static_assert

/* GGUF type numbers (enum lp_qtype in quant/quant.h). */
enum {
	LPK_F32 = 0, LPK_F16 = 1, LPK_Q4_0 = 2, LPK_Q4_1 = 3, LPK_Q5_0 = 6, LPK_Q5_1 = 7,
	LPK_Q8_0 = 8, LPK_Q4_K = 12, LPK_Q5_K = 13, LPK_Q6_K = 14, LPK_BF16 = 30,
};

#define LPK_WARP 32

/* Decoders are host code too, so that a host program can check them
 * against the CPU reference without a GPU (tests/gpu/check_decode.cu). */
#define LPK_HD __host__ __device__ __forceinline__

static LPK_HD float lpk_h2f(uint16_t h)
{
	return __half2float(__ushort_as_half(h));
}

/* Unaligned little-endian 16-bit read (blocks of 18, 22 or 34 bytes put
 * their fields at odd multiples of 2 only; Q6_K's d sits at byte 208). */
static LPK_HD uint16_t lpk_ld16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static __device__ __forceinline__ float lpk_warp_sum(float v)
{
	for (int o = LPK_WARP / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

static __device__ __forceinline__ float lpk_warp_max(float v)
{
	for (int o = LPK_WARP / 2; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* Sum over the block (blockDim.x a multiple of 32, at most 1024); every
 * thread gets the total. `red` is 32 floats of shared memory. */
static __device__ __forceinline__ float lpk_block_sum(float v, float *red)
{
	int lane = threadIdx.x % LPK_WARP, w = threadIdx.x / LPK_WARP;
	int nw = (blockDim.x + LPK_WARP - 1) / LPK_WARP;

	v = lpk_warp_sum(v);
	__syncthreads();
	if (lane == 0)
		red[w] = v;
	__syncthreads();
	v = lane < nw ? red[lane] : 0.0f;
	return lpk_warp_sum(v);
}

static __device__ __forceinline__ float lpk_block_max(float v, float *red)
{
	int lane = threadIdx.x % LPK_WARP, w = threadIdx.x / LPK_WARP;
	int nw = (blockDim.x + LPK_WARP - 1) / LPK_WARP;

	v = lpk_warp_max(v);
	__syncthreads();
	if (lane == 0)
		red[w] = v;
	__syncthreads();
	v = lane < nw ? red[lane] : -INFINITY;
	return lpk_warp_max(v);
}

/* Double sum over the block (blockDim.x a multiple of 32), for the norms
 * whose CPU reference sums in double; every thread gets the total. */
static __device__ __forceinline__ double lpk_block_sum_d(double v, double *red)
{
	int lane = threadIdx.x % LPK_WARP, w = threadIdx.x / LPK_WARP;
	int nw = blockDim.x / LPK_WARP;

	for (int o = LPK_WARP / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	__syncthreads();
	if (lane == 0)
		red[w] = v;
	__syncthreads();
	v = lane < nw ? red[lane] : 0.0;
	for (int o = LPK_WARP / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

/* The launch's own error, or the sticky one of an earlier kernel. */
static inline cudaError_t lpk_launched(void)
{
	return cudaGetLastError();
}

static inline unsigned lpk_blocks(size_t n, unsigned per)
{
	size_t b = (n + per - 1) / per;
	return (unsigned)(b > 0x7fffffffu ? 0x7fffffffu : b);
}

#endif
