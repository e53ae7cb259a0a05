/*
 * emu.h - forced-include header (g++ -include) that lets the unchanged
 * kernels/ .cu files compile as host C++ and run on the emulated device
 * (tests/cuda-emu/runtime.cc).
 *
 * The CUDA headers, read by g++ rather than nvcc, already make __global__
 * and __device__ empty and give the host halves of half/bf16; what a
 * kernel body needs beyond that is here: the built-in indices, per-block
 * __shared__ storage, the barrier, the warp shuffles (32 lanes, a mask),
 * atomicAdd, and the few device intrinsics the kernels call. A launch
 * `k<<<g, b, sh, s>>>(args)` is turned by the build rule (local.mk) into
 * `lp_emu_launch(k, "k", g, b, sh, s)(args)`.
 *
 * Invariants: one block runs at a time, each of its threads a fiber on
 * the calling host thread, so `__shared__` can be a static in a section
 * of its own (refilled with 0xFF before every block) and atomics are plain
 * read-modify-writes. A thread leaves its fiber only at a barrier or a
 * shuffle; the scheduler resumes a warp's lanes only when all lanes of
 * the mask wait at the same shuffle, a block's threads only when all live
 * threads wait at the same barrier, and reports anything else.
 */
#ifndef LP_CUDA_EMU_H
#define LP_CUDA_EMU_H

#ifndef __cplusplus
#error "emu.h is for the kernels compiled as C++"
#endif

/* one static per kernel, in the section the scheduler refills per block */
#define __shared__ static __attribute__((section("lp_emu_shared"), used))
#define __launch_bounds__(...)

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

/* ---- the running thread ------------------------------------------------- */

struct lp_emu_thread;
extern "C" {
extern __attribute__((visibility("hidden"))) uint3 lp_emu_tid_cur, lp_emu_bid_cur;
extern __attribute__((visibility("hidden"))) dim3 lp_emu_bdim_cur, lp_emu_gdim_cur;
}
#define threadIdx ((const uint3)lp_emu_tid_cur)
#define blockIdx ((const uint3)lp_emu_bid_cur)
#define blockDim ((const dim3)lp_emu_bdim_cur)
#define gridDim ((const dim3)lp_emu_gdim_cur)
static constexpr int warpSize = 32;

enum lp_emu_shfl_op { LP_EMU_SHFL_IDX, LP_EMU_SHFL_UP, LP_EMU_SHFL_DOWN, LP_EMU_SHFL_XOR };

extern "C" void lp_emu_barrier(const char *file, int line);
/* Exchange 8 bytes with the lanes of `mask`; returns the source lane's. */
extern "C" uint64_t lp_emu_shuffle(int op, const char *file, int line, unsigned mask,
				  uint64_t v, int arg, int width);
extern "C" void lp_emu_syncwarp(const char *file, int line, unsigned mask);

#define __syncthreads() lp_emu_barrier(__FILE__, __LINE__)
#define __syncwarp(...) lp_emu_syncwarp(__FILE__, __LINE__, lp_emu_mask_or_full(__VA_ARGS__))
static inline unsigned lp_emu_mask_or_full(unsigned m = 0xffffffffu) { return m; }

template <class T> static inline T lp_emu_shfl(int op, const char *f, int l, unsigned mask, T v,
					      int arg, int width = 32)
{
	static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
		      "shuffles move at most 8 bytes");
	uint64_t u = 0;
	T r;

	memcpy(&u, &v, sizeof(T));
	u = lp_emu_shuffle(op, f, l, mask, u, arg, width);
	memcpy(&r, &u, sizeof(T));
	return r;
}
#define __shfl_sync(m, v, ...) lp_emu_shfl(LP_EMU_SHFL_IDX, __FILE__, __LINE__, m, v, __VA_ARGS__)
#define __shfl_up_sync(m, v, ...) lp_emu_shfl(LP_EMU_SHFL_UP, __FILE__, __LINE__, m, v, __VA_ARGS__)
#define __shfl_down_sync(m, v, ...) \
	lp_emu_shfl(LP_EMU_SHFL_DOWN, __FILE__, __LINE__, m, v, __VA_ARGS__)
#define __shfl_xor_sync(m, v, ...) lp_emu_shfl(LP_EMU_SHFL_XOR, __FILE__, __LINE__, m, v, __VA_ARGS__)

/* ---- atomics: one fiber runs at a time, so a plain update is atomic ------ */

template <class T> static inline T atomicAdd(T *p, T v)
{
	static_assert(sizeof(T) == 4 || sizeof(T) == 8, "32- and 64-bit atomicAdd only");
	T old = *p;
	*p = old + v;
	return old;
}
template <class T> static inline T atomicMax(T *p, T v)
{
	T old = *p;
	*p = old < v ? v : old;
	return old;
}

/* ---- device intrinsics the kernels use ------------------------------------ */

static inline float lp_emu_expf_(float x) { return expf(x); }
static inline float lp_emu_fdividef_(float a, float b) { return a / b; }
static inline int lp_emu_float2int_rn_(float x) { return (int)nearbyintf(x); }
static inline unsigned lp_emu_float_as_uint_(float x) { unsigned u; memcpy(&u, &x, 4); return u; }
static inline float lp_emu_uint_as_float_(unsigned u) { float x; memcpy(&x, &u, 4); return x; }
static inline int lp_emu_float_as_int_(float x) { int u; memcpy(&u, &x, 4); return u; }
static inline float lp_emu_int_as_float_(int u) { float x; memcpy(&x, &u, 4); return x; }
static inline float lp_emu_rsqrtf_(float x) { return 1.0f / sqrtf(x); }
static inline double lp_emu_rsqrt_(double x) { return 1.0 / sqrt(x); }
static inline int lp_emu_popc_(unsigned x) { return __builtin_popcount(x); }
static inline int lp_emu_clz_(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int lp_emu_ffs_(int x) { return __builtin_ffs(x); }
template <class T> static inline T __ldg(const T *p) { return *p; }
#define __expf lp_emu_expf_
#define __fdividef lp_emu_fdividef_
#define __float2int_rn lp_emu_float2int_rn_
#define __float_as_uint lp_emu_float_as_uint_
#define __uint_as_float lp_emu_uint_as_float_
#define __float_as_int lp_emu_float_as_int_
#define __int_as_float lp_emu_int_as_float_
#define rsqrtf lp_emu_rsqrtf_
#define rsqrt lp_emu_rsqrt_
#define __popc lp_emu_popc_
#define __clz lp_emu_clz_
#define __ffs lp_emu_ffs_
/* CUDA's integer min/max overloads (the device ones are not host code) */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long min(unsigned long long a, unsigned long long b)
{
	return a < b ? a : b;
}
static inline unsigned long long max(unsigned long long a, unsigned long long b)
{
	return a > b ? a : b;
}


/* ---- the launch ------------------------------------------------------------ */

/* Queue `body` run by every thread of the grid on `stream` (runtime.cc);
 * `ptrs` are the pointer arguments, checked against the device memory
 * registry. Returns the launch's error (also kept for cudaGetLastError). */
struct lp_emu_body {
	virtual ~lp_emu_body() {}
	virtual void run() = 0;
};
extern "C" cudaError_t lp_emu_enqueue_kernel(const char *name, dim3 grid, dim3 block,
					    size_t shmem, cudaStream_t stream,
					    lp_emu_body *body, const void *const *ptrs, int n_ptrs);

template <class F, class Tup> struct lp_emu_call : lp_emu_body {
	F fn;
	Tup args;
	lp_emu_call(F f, Tup a) : fn(f), args(a) {}
	void run() override { std::apply(fn, args); }
};

template <class T> static inline void lp_emu_ptr_of(const T &v, const void **out, int *n)
{
	if constexpr (std::is_pointer<T>::value)
		out[(*n)++] = (const void *)v;
}

template <class... P> struct lp_emu_cfg {
	void (*fn)(P...);
	const char *name;
	dim3 grid, block;
	size_t shmem;
	cudaStream_t stream;

	template <class... A> void operator()(A &&...a) const
	{
		using Tup = std::tuple<typename std::decay<P>::type...>;
		Tup args(static_cast<P>(a)...);
		const void *ptrs[sizeof...(P) + 1];
		int n = 0;

		std::apply([&](const auto &...x) { (lp_emu_ptr_of(x, ptrs, &n), ...); }, args);
		lp_emu_enqueue_kernel(name, grid, block, shmem, stream,
				     new lp_emu_call<void (*)(P...), Tup>(fn, args), ptrs, n);
	}
};

template <class... P>
static inline lp_emu_cfg<P...> lp_emu_launch(void (*fn)(P...), const char *name, dim3 grid,
					   dim3 block, size_t shmem = 0, cudaStream_t stream = 0)
{
	return lp_emu_cfg<P...>{ fn, name, grid, block, shmem, stream };
}

#endif
