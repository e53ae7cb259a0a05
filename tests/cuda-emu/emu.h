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
 * `lpemu_launch(k, "k", g, b, sh, s)(args)`.
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
#define __shared__ static __attribute__((section("lpemu_shared"), used))
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

struct lpemu_thread;
extern "C" {
extern __attribute__((visibility("hidden"))) uint3 lpemu_tid_cur, lpemu_bid_cur;
extern __attribute__((visibility("hidden"))) dim3 lpemu_bdim_cur, lpemu_gdim_cur;
}
#define threadIdx ((const uint3)lpemu_tid_cur)
#define blockIdx ((const uint3)lpemu_bid_cur)
#define blockDim ((const dim3)lpemu_bdim_cur)
#define gridDim ((const dim3)lpemu_gdim_cur)
static constexpr int warpSize = 32;

enum lpemu_shfl_op { LPEMU_SHFL_IDX, LPEMU_SHFL_UP, LPEMU_SHFL_DOWN, LPEMU_SHFL_XOR };

extern "C" void lpemu_barrier(const char *file, int line);
/* Exchange 8 bytes with the lanes of `mask`; returns the source lane's. */
extern "C" uint64_t lpemu_shuffle(int op, const char *file, int line, unsigned mask,
				  uint64_t v, int arg, int width);
extern "C" void lpemu_syncwarp(const char *file, int line, unsigned mask);

#define __syncthreads() lpemu_barrier(__FILE__, __LINE__)
#define __syncwarp(...) lpemu_syncwarp(__FILE__, __LINE__, lpemu_mask_or_full(__VA_ARGS__))
static inline unsigned lpemu_mask_or_full(unsigned m = 0xffffffffu) { return m; }

template <class T> static inline T lpemu_shfl(int op, const char *f, int l, unsigned mask, T v,
					      int arg, int width = 32)
{
	static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
		      "shuffles move at most 8 bytes");
	uint64_t u = 0;
	T r;

	memcpy(&u, &v, sizeof(T));
	u = lpemu_shuffle(op, f, l, mask, u, arg, width);
	memcpy(&r, &u, sizeof(T));
	return r;
}
#define __shfl_sync(m, v, ...) lpemu_shfl(LPEMU_SHFL_IDX, __FILE__, __LINE__, m, v, __VA_ARGS__)
#define __shfl_up_sync(m, v, ...) lpemu_shfl(LPEMU_SHFL_UP, __FILE__, __LINE__, m, v, __VA_ARGS__)
#define __shfl_down_sync(m, v, ...) \
	lpemu_shfl(LPEMU_SHFL_DOWN, __FILE__, __LINE__, m, v, __VA_ARGS__)
#define __shfl_xor_sync(m, v, ...) lpemu_shfl(LPEMU_SHFL_XOR, __FILE__, __LINE__, m, v, __VA_ARGS__)

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

static inline float lpemuexpf_(float x) { return expf(x); }
static inline float lpemufdividef_(float a, float b) { return a / b; }
static inline int lpemufloat2int_rn_(float x) { return (int)nearbyintf(x); }
static inline unsigned lpemufloat_as_uint_(float x) { unsigned u; memcpy(&u, &x, 4); return u; }
static inline float lpemuuint_as_float_(unsigned u) { float x; memcpy(&x, &u, 4); return x; }
static inline int lpemufloat_as_int_(float x) { int u; memcpy(&u, &x, 4); return u; }
static inline float lpemuint_as_float_(int u) { float x; memcpy(&x, &u, 4); return x; }
static inline float lpemursqrtf_(float x) { return 1.0f / sqrtf(x); }
static inline double lpemursqrt_(double x) { return 1.0 / sqrt(x); }
static inline int lpemupopc_(unsigned x) { return __builtin_popcount(x); }
static inline int lpemuclz_(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int lpemuffs_(int x) { return __builtin_ffs(x); }
template <class T> static inline T __ldg(const T *p) { return *p; }
#define __expf lpemuexpf_
#define __fdividef lpemufdividef_
#define __float2int_rn lpemufloat2int_rn_
#define __float_as_uint lpemufloat_as_uint_
#define __uint_as_float lpemuuint_as_float_
#define __float_as_int lpemufloat_as_int_
#define __int_as_float lpemuint_as_float_
#define rsqrtf lpemursqrtf_
#define rsqrt lpemursqrt_
#define __popc lpemupopc_
#define __clz lpemuclz_
#define __ffs lpemuffs_
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
struct lpemu_body {
	virtual ~lpemu_body() {}
	virtual void run() = 0;
};
extern "C" cudaError_t lpemu_enqueue_kernel(const char *name, dim3 grid, dim3 block,
					    size_t shmem, cudaStream_t stream,
					    lpemu_body *body, const void *const *ptrs, int n_ptrs);

template <class F, class Tup> struct lpemu_call : lpemu_body {
	F fn;
	Tup args;
	lpemu_call(F f, Tup a) : fn(f), args(a) {}
	void run() override { std::apply(fn, args); }
};

template <class T> static inline void lpemu_ptr_of(const T &v, const void **out, int *n)
{
	if constexpr (std::is_pointer<T>::value)
		out[(*n)++] = (const void *)v;
}

template <class... P> struct lpemu_cfg {
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

		std::apply([&](const auto &...x) { (lpemu_ptr_of(x, ptrs, &n), ...); }, args);
		lpemu_enqueue_kernel(name, grid, block, shmem, stream,
				     new lpemu_call<void (*)(P...), Tup>(fn, args), ptrs, n);
	}
};

template <class... P>
static inline lpemu_cfg<P...> lpemu_launch(void (*fn)(P...), const char *name, dim3 grid,
					   dim3 block, size_t shmem = 0, cudaStream_t stream = 0)
{
	return lpemu_cfg<P...>{ fn, name, grid, block, shmem, stream };
}

#endif
