/*
 * quant.cu - dequantizing mat-vec, f16 dequantization for GEMM tiles and
 * row gather, for every weight type of quant/quant.h.
 *
 * All three are built on deq8<T>: the 8 consecutive elements 8g..8g+7 of a
 * row, decoded as lp_dequantize_row decodes them. Eight is the largest run
 * that every block-quantized layout keeps within one sub-block, so each
 * group needs one scale (and min) and a handful of bytes, and a warp's
 * lanes walk a row's groups in order: neighbouring lanes read neighbouring
 * bytes. Float types (rows of any length) take per-element paths.
 */
#include "kernels/quant.h"
#include "kernels/common.cuh"

/* ---- decoding 8 elements -------------------------------------------- */

/* The loops below run 8 times, a constant: nvcc unrolls them unasked
 * (and a #pragma unroll would be an unknown pragma to the host compiler,
 * which compiles these for tests/gpu/check_decode.cu). */

static LPK_HD void scale_min_k(const uint8_t *q, int j, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

template <int T> struct qtraits;
template <> struct qtraits<LPK_Q4_0> { enum { bytes = 18, elems = 32 }; };
template <> struct qtraits<LPK_Q4_1> { enum { bytes = 20, elems = 32 }; };
template <> struct qtraits<LPK_Q5_0> { enum { bytes = 22, elems = 32 }; };
template <> struct qtraits<LPK_Q5_1> { enum { bytes = 24, elems = 32 }; };
template <> struct qtraits<LPK_Q8_0> { enum { bytes = 34, elems = 32 }; };
template <> struct qtraits<LPK_Q4_K> { enum { bytes = 144, elems = 256 }; };
template <> struct qtraits<LPK_Q5_K> { enum { bytes = 176, elems = 256 }; };
template <> struct qtraits<LPK_Q6_K> { enum { bytes = 210, elems = 256 }; };

static_assert(sizeof(struct lp_blk_q4_0) == qtraits<LPK_Q4_0>::bytes, "q4_0");
static_assert(sizeof(struct lp_blk_q4_1) == qtraits<LPK_Q4_1>::bytes, "q4_1");
static_assert(sizeof(struct lp_blk_q5_0) == qtraits<LPK_Q5_0>::bytes, "q5_0");
static_assert(sizeof(struct lp_blk_q5_1) == qtraits<LPK_Q5_1>::bytes, "q5_1");
static_assert(sizeof(struct lp_blk_q8_0) == qtraits<LPK_Q8_0>::bytes, "q8_0");
static_assert(sizeof(struct lp_blk_q4_k) == qtraits<LPK_Q4_K>::bytes, "q4_K");
static_assert(sizeof(struct lp_blk_q5_k) == qtraits<LPK_Q5_K>::bytes, "q5_K");
static_assert(sizeof(struct lp_blk_q6_k) == qtraits<LPK_Q6_K>::bytes, "q6_K");

/* Elements 8g..8g+7 of the row at `row`. */
template <int T> LPK_HD void deq8(const uint8_t *row, int g, float v[8]);

template <> LPK_HD void deq8<LPK_Q4_0>(const uint8_t *row, int g, float v[8])
{
	const uint8_t *b = row + (size_t)(g / 4) * 18, *qs = b + 2 + (g & 1) * 8;
	float d = lpk_h2f(lpk_ld16(b));
	int sh = (g & 2) ? 4 : 0;
	for (int i = 0; i < 8; i++)
		v[i] = d * (float)(((qs[i] >> sh) & 0xF) - 8);
}

template <> LPK_HD void deq8<LPK_Q4_1>(const uint8_t *row, int g, float v[8])
{
	/* 20-byte blocks keep 4-byte alignment: read the header and the 8
	 * bytes of nibbles as words */
	const uint8_t *b = row + (size_t)(g / 4) * 20;
	uint32_t dm = *(const uint32_t *)b;
	const uint32_t *qw = (const uint32_t *)(b + 4 + (g & 1) * 8);
	uint32_t w[2] = { qw[0], qw[1] };
	float d = lpk_h2f((uint16_t)dm), m = lpk_h2f((uint16_t)(dm >> 16));
	int sh = (g & 2) ? 4 : 0;
	for (int i = 0; i < 8; i++)
		v[i] = d * (float)((w[i / 4] >> (8 * (i % 4) + sh)) & 0xF) + m;
}

template <> LPK_HD void deq8<LPK_Q5_0>(const uint8_t *row, int g, float v[8])
{
	const uint8_t *b = row + (size_t)(g / 4) * 22;
	const uint8_t *qs = b + 6 + (g & 1) * 8;
	float d = lpk_h2f(lpk_ld16(b));
	int sh = (g & 2) ? 4 : 0, hb = b[2 + (g & 3)];
	for (int i = 0; i < 8; i++)
		v[i] = d * (float)((((qs[i] >> sh) & 0xF) | (((hb >> i) & 1) << 4)) - 16);
}

template <> LPK_HD void deq8<LPK_Q5_1>(const uint8_t *row, int g, float v[8])
{
	const uint8_t *b = row + (size_t)(g / 4) * 24;
	const uint8_t *qs = b + 8 + (g & 1) * 8;
	float d = lpk_h2f(lpk_ld16(b)), m = lpk_h2f(lpk_ld16(b + 2));
	int sh = (g & 2) ? 4 : 0, hb = b[4 + (g & 3)];
	for (int i = 0; i < 8; i++)
		v[i] = d * (float)(((qs[i] >> sh) & 0xF) | (((hb >> i) & 1) << 4)) + m;
}

template <> LPK_HD void deq8<LPK_Q8_0>(const uint8_t *row, int g, float v[8])
{
	const uint8_t *b = row + (size_t)(g / 4) * 34;
	const int8_t *qs = (const int8_t *)(b + 2 + (g & 3) * 8);
	float d = lpk_h2f(lpk_ld16(b));
	for (int i = 0; i < 8; i++)
		v[i] = d * (float)qs[i];
}

/* Q4_K and Q5_K share the nibble layout; Q5_K adds the fifth bits. */
template <bool Q5>
LPK_HD void deq8_k45(const uint8_t *row, int g, float v[8])
{
	const uint8_t *b = row + (size_t)(g / 32) * (Q5 ? 176 : 144);
	int e0 = 8 * (g % 32), c = e0 / 64, l0 = e0 % 32, hi = (e0 / 32) & 1, sc, m;
	const uint8_t *qs = b + (Q5 ? 48 : 16) + 32 * c + l0;
	float d = lpk_h2f(lpk_ld16(b)), dmin = lpk_h2f(lpk_ld16(b + 2));
	scale_min_k(b + 4, e0 / 32, &sc, &m);
	float ds = d * (float)sc, dm = dmin * (float)m;
	for (int i = 0; i < 8; i++) {
		int q = hi ? qs[i] >> 4 : qs[i] & 0xF;
		if (Q5)
			q |= ((b[16 + l0 + i] >> (2 * c + hi)) & 1) << 4;
		v[i] = ds * (float)q - dm;
	}
}

template <> LPK_HD void deq8<LPK_Q4_K>(const uint8_t *row, int g, float v[8])
{
	deq8_k45<false>(row, g, v);
}

template <> LPK_HD void deq8<LPK_Q5_K>(const uint8_t *row, int g, float v[8])
{
	deq8_k45<true>(row, g, v);
}

template <> LPK_HD void deq8<LPK_Q6_K>(const uint8_t *row, int g, float v[8])
{
	const uint8_t *b = row + (size_t)(g / 32) * 210;
	int e0 = 8 * (g % 32), h = e0 / 128, k = (e0 % 128) / 32, l0 = e0 % 32;
	const uint8_t *ql = b + 64 * h + l0 + (k & 1) * 32, *qh = b + 128 + 32 * h + l0;
	float ds = lpk_h2f(lpk_ld16(b + 208)) * (float)(int8_t)b[192 + e0 / 16];
	for (int i = 0; i < 8; i++) {
		int q = k < 2 ? ql[i] & 0xF : ql[i] >> 4;
		q |= ((qh[i] >> (2 * k)) & 3) << 4;
		v[i] = ds * (float)(q - 32);
	}
}

/* Float types: element i of a row. */
template <int T> LPK_HD float ldf(const uint8_t *row, int i);
template <> LPK_HD float ldf<LPK_F32>(const uint8_t *row, int i)
{
	return ((const float *)row)[i];
}
template <> LPK_HD float ldf<LPK_F16>(const uint8_t *row, int i)
{
	return __half2float(((const __half *)row)[i]);
}
template <> LPK_HD float ldf<LPK_BF16>(const uint8_t *row, int i)
{
	return __bfloat162float(((const __nv_bfloat16 *)row)[i]);
}

/* ---- mat-vec --------------------------------------------------------- */

#define MV_WARPS 4

/* 8 activations at x: two 16-byte loads when VEC (x 16-byte aligned). */
template <bool VEC> static __device__ __forceinline__ void ld8(const float *x, float a[8])
{
	if (VEC) {
		float4 u = ((const float4 *)x)[0], w = ((const float4 *)x)[1];
		a[0] = u.x; a[1] = u.y; a[2] = u.z; a[3] = u.w;
		a[4] = w.x; a[5] = w.y; a[6] = w.z; a[7] = w.w;
	} else {
#pragma unroll
		for (int i = 0; i < 8; i++)
			a[i] = x[i];
	}
}

/* One warp per weight row; lanes take the row's groups of 8 in turn. */
template <int T, bool VEC>
static __global__ void __launch_bounds__(MV_WARPS * LPK_WARP)
matvec_q(const uint8_t *__restrict__ W, size_t row_bytes, int n_rows, int n_cols,
	 const float *__restrict__ x, size_t ldx, int n_tok, float *__restrict__ y, size_t ldy)
{
	int r = blockIdx.x * MV_WARPS + threadIdx.x / LPK_WARP, lane = threadIdx.x % LPK_WARP;
	float acc[LP_CUK_MATVEC_MAX_TOK];

	if (r >= n_rows)
		return;
	const uint8_t *row = W + (size_t)r * row_bytes;
#pragma unroll
	for (int t = 0; t < LP_CUK_MATVEC_MAX_TOK; t++)
		acc[t] = 0.0f;
	for (int g = lane; g < n_cols / 8; g += LPK_WARP) {
		float v[8];
		deq8<T>(row, g, v);
#pragma unroll
		for (int t = 0; t < LP_CUK_MATVEC_MAX_TOK; t++) {
			if (t < n_tok) {
				float a[8];
				ld8<VEC>(x + t * ldx + 8 * g, a);
				acc[t] += v[0] * a[0] + v[1] * a[1] + v[2] * a[2] + v[3] * a[3] +
					  v[4] * a[4] + v[5] * a[5] + v[6] * a[6] + v[7] * a[7];
			}
		}
	}
#pragma unroll
	for (int t = 0; t < LP_CUK_MATVEC_MAX_TOK; t++) {
		if (t < n_tok) {
			float s = lpk_warp_sum(acc[t]);
			if (lane == 0)
				y[t * ldy + r] = s;
		}
	}
}

template <int T>
static __global__ void __launch_bounds__(MV_WARPS * LPK_WARP)
matvec_f(const uint8_t *__restrict__ W, size_t row_bytes, int n_rows, int n_cols,
	 const float *__restrict__ x, size_t ldx, int n_tok, float *__restrict__ y, size_t ldy)
{
	int r = blockIdx.x * MV_WARPS + threadIdx.x / LPK_WARP, lane = threadIdx.x % LPK_WARP;
	float acc[LP_CUK_MATVEC_MAX_TOK];

	if (r >= n_rows)
		return;
	const uint8_t *row = W + (size_t)r * row_bytes;
#pragma unroll
	for (int t = 0; t < LP_CUK_MATVEC_MAX_TOK; t++)
		acc[t] = 0.0f;
	for (int i = lane; i < n_cols; i += LPK_WARP) {
		float w = ldf<T>(row, i);
#pragma unroll
		for (int t = 0; t < LP_CUK_MATVEC_MAX_TOK; t++)
			if (t < n_tok)
				acc[t] += w * x[t * ldx + i];
	}
#pragma unroll
	for (int t = 0; t < LP_CUK_MATVEC_MAX_TOK; t++) {
		if (t < n_tok) {
			float s = lpk_warp_sum(acc[t]);
			if (lane == 0)
				y[t * ldy + r] = s;
		}
	}
}

/* ---- dequantization and gather -------------------------------------- */

/* One thread per group of 8: row r = idx / groups; 16-byte store. */
template <int T>
static __global__ void dequant_f16_q(const uint8_t *__restrict__ W, size_t row_bytes, int n_rows,
			      int n_cols, __half *__restrict__ out)
{
	size_t gpr = (size_t)n_cols / 8, i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	float v[8];

	if (i >= gpr * (size_t)n_rows)
		return;
	size_t r = i / gpr;
	int g = (int)(i % gpr);
	deq8<T>(W + r * row_bytes, g, v);
	union { uint4 u; __half2 h[4]; } pk;
#pragma unroll
	for (int k = 0; k < 4; k++)
		pk.h[k] = __floats2half2_rn(v[2 * k], v[2 * k + 1]);
	*(uint4 *)(out + r * n_cols + 8 * g) = pk.u;
}

template <int T>
static __global__ void dequant_f16_f(const uint8_t *__restrict__ W, size_t row_bytes, int n_rows,
			      int n_cols, __half *__restrict__ out)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= (size_t)n_cols * n_rows)
		return;
	size_t r = i / n_cols;
	int c = (int)(i % n_cols);
	out[i] = __float2half_rn(ldf<T>(W + r * row_bytes, c));
}

template <int T, bool VEC>
static __global__ void get_rows_q(const uint8_t *__restrict__ W, size_t row_bytes, int n_rows,
			   int n_cols, const int32_t *__restrict__ ids, int n,
			   float *__restrict__ out, size_t ldo)
{
	int gpr = n_cols / 8, t = blockIdx.y;
	int g = blockIdx.x * blockDim.x + threadIdx.x;
	float v[8];

	if (g >= gpr || t >= n)
		return;
	int id = ids[t];
	float *o = out + t * ldo + 8 * g;
	if (id < 0 || id >= n_rows) {
#pragma unroll
		for (int k = 0; k < 8; k++)
			o[k] = 0.0f;
		return;
	}
	deq8<T>(W + (size_t)id * row_bytes, g, v);
	if (VEC) {
		((float4 *)o)[0] = make_float4(v[0], v[1], v[2], v[3]);
		((float4 *)o)[1] = make_float4(v[4], v[5], v[6], v[7]);
	} else {
#pragma unroll
		for (int k = 0; k < 8; k++)
			o[k] = v[k];
	}
}

template <int T>
static __global__ void get_rows_f(const uint8_t *__restrict__ W, size_t row_bytes, int n_rows,
			   int n_cols, const int32_t *__restrict__ ids, int n,
			   float *__restrict__ out, size_t ldo)
{
	int t = blockIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;

	if (c >= n_cols || t >= n)
		return;
	int id = ids[t];
	out[t * ldo + c] = id < 0 || id >= n_rows ? 0.0f : ldf<T>(W + (size_t)id * row_bytes, c);
}

static __global__ void to_f16(const float *__restrict__ x, __half *__restrict__ o, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		o[i] = __float2half_rn(x[i]);
}

static __global__ void to_bf16(const float *__restrict__ x, __nv_bfloat16 *__restrict__ o, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		o[i] = __float2bfloat16_rn(x[i]);
}

/* ---- launchers ------------------------------------------------------- */

template <int T> constexpr bool is_float_t()
{
	return T == LPK_F32 || T == LPK_F16 || T == LPK_BF16;
}

/* return F<T>(args...) with T the type's template argument. */
#define LPK_DISPATCH(type, F, ...) do { \
	switch (type) { \
	case LPK_F32: return F<LPK_F32>(__VA_ARGS__); \
	case LPK_F16: return F<LPK_F16>(__VA_ARGS__); \
	case LPK_BF16: return F<LPK_BF16>(__VA_ARGS__); \
	case LPK_Q4_0: return F<LPK_Q4_0>(__VA_ARGS__); \
	case LPK_Q4_1: return F<LPK_Q4_1>(__VA_ARGS__); \
	case LPK_Q5_0: return F<LPK_Q5_0>(__VA_ARGS__); \
	case LPK_Q5_1: return F<LPK_Q5_1>(__VA_ARGS__); \
	case LPK_Q8_0: return F<LPK_Q8_0>(__VA_ARGS__); \
	case LPK_Q4_K: return F<LPK_Q4_K>(__VA_ARGS__); \
	case LPK_Q5_K: return F<LPK_Q5_K>(__VA_ARGS__); \
	case LPK_Q6_K: return F<LPK_Q6_K>(__VA_ARGS__); \
	} \
	return cudaErrorInvalidValue; \
} while (0)

/* Block elements of a type, 0 if unknown. */
static int block_elems(int type)
{
	switch (type) {
	case LPK_F32: case LPK_F16: case LPK_BF16: return 1;
	case LPK_Q4_0: case LPK_Q4_1: case LPK_Q5_0: case LPK_Q5_1: case LPK_Q8_0: return 32;
	case LPK_Q4_K: case LPK_Q5_K: case LPK_Q6_K: return 256;
	}
	return 0;
}

extern "C" int lp_cuk_type_supported(int type)
{
	return block_elems(type) != 0;
}

static bool shape_ok(int type, int n_rows, int n_cols)
{
	int be = block_elems(type);

	return be && n_rows >= 0 && n_cols > 0 && n_cols % be == 0;
}

/* 1 if every row base p + t * ld (floats) is 16-byte aligned. */
static bool aligned16(const float *p, size_t ld)
{
	return (uintptr_t)p % 16 == 0 && ld % 4 == 0;
}

template <int T> static cudaError_t launch_matvec(const void *W, size_t rb, int nr, int nc,
						 const float *x, size_t ldx, int nt, float *y,
						 size_t ldy, cudaStream_t s)
{
	dim3 grid(lpk_blocks((size_t)nr, MV_WARPS)), block(MV_WARPS * LPK_WARP);

	if constexpr (is_float_t<T>())
		matvec_f<T><<<grid, block, 0, s>>>((const uint8_t *)W, rb, nr, nc, x, ldx, nt, y, ldy);
	else if (aligned16(x, ldx))
		matvec_q<T, true><<<grid, block, 0, s>>>((const uint8_t *)W, rb, nr, nc, x, ldx, nt,
							 y, ldy);
	else
		matvec_q<T, false><<<grid, block, 0, s>>>((const uint8_t *)W, rb, nr, nc, x, ldx,
							  nt, y, ldy);
	return lpk_launched();
}

extern "C" cudaError_t lp_cuk_matvec(int type, const void *W, size_t row_bytes, int n_rows,
				     int n_cols, const float *x, size_t ldx, int n_tok, float *y,
				     size_t ldy, cudaStream_t stream)
{
	if (!shape_ok(type, n_rows, n_cols) || n_tok < 1 || n_tok > LP_CUK_MATVEC_MAX_TOK)
		return cudaErrorInvalidValue;
	if (n_rows == 0)
		return cudaSuccess;
	LPK_DISPATCH(type, launch_matvec, W, row_bytes, n_rows, n_cols, x, ldx, n_tok, y, ldy,
		     stream);
}

template <int T> static cudaError_t launch_dequant(const void *W, size_t rb, int nr, int nc,
						  void *out, cudaStream_t s)
{
	const int bs = 256;

	if constexpr (T == LPK_BF16)
		return cudaErrorInvalidValue;
	else if constexpr (is_float_t<T>())
		dequant_f16_f<T><<<lpk_blocks((size_t)nr * nc, bs), bs, 0, s>>>(
			(const uint8_t *)W, rb, nr, nc, (__half *)out);
	else
		dequant_f16_q<T><<<lpk_blocks((size_t)nr * (nc / 8), bs), bs, 0, s>>>(
			(const uint8_t *)W, rb, nr, nc, (__half *)out);
	return lpk_launched();
}

extern "C" cudaError_t lp_cuk_dequant_f16(int type, const void *W, size_t row_bytes, int n_rows,
					  int n_cols, void *out, cudaStream_t stream)
{
	if (!shape_ok(type, n_rows, n_cols))
		return cudaErrorInvalidValue;
	if (n_rows == 0)
		return cudaSuccess;
	LPK_DISPATCH(type, launch_dequant, W, row_bytes, n_rows, n_cols, out, stream);
}

template <int T> static cudaError_t launch_get_rows(const void *W, size_t rb, int nr, int nc,
						   const int32_t *ids, int n, float *out,
						   size_t ldo, cudaStream_t s)
{
	const int bs = 128;

	if constexpr (is_float_t<T>())
		get_rows_f<T><<<dim3(lpk_blocks((size_t)nc, bs), n), bs, 0, s>>>(
			(const uint8_t *)W, rb, nr, nc, ids, n, out, ldo);
	else if (aligned16(out, ldo))
		get_rows_q<T, true><<<dim3(lpk_blocks((size_t)nc / 8, bs), n), bs, 0, s>>>(
			(const uint8_t *)W, rb, nr, nc, ids, n, out, ldo);
	else
		get_rows_q<T, false><<<dim3(lpk_blocks((size_t)nc / 8, bs), n), bs, 0, s>>>(
			(const uint8_t *)W, rb, nr, nc, ids, n, out, ldo);
	return lpk_launched();
}

extern "C" cudaError_t lp_cuk_get_rows(int type, const void *W, size_t row_bytes, int n_rows,
				       int n_cols, const int32_t *ids, int n, float *out,
				       size_t ldo, cudaStream_t stream)
{
	if (!shape_ok(type, n_rows, n_cols) || n < 0 || n > 65535)
		return cudaErrorInvalidValue;
	if (n == 0)
		return cudaSuccess;
	LPK_DISPATCH(type, launch_get_rows, W, row_bytes, n_rows, n_cols, ids, n, out, ldo, stream);
}

extern "C" cudaError_t lp_cuk_f32_to_f16(const float *x, void *out, size_t n, cudaStream_t stream)
{
	if (n == 0)
		return cudaSuccess;
	to_f16<<<lpk_blocks(n, 256), 256, 0, stream>>>(x, (__half *)out, n);
	return lpk_launched();
}

extern "C" cudaError_t lp_cuk_f32_to_bf16(const float *x, void *out, size_t n, cudaStream_t stream)
{
	if (n == 0)
		return cudaSuccess;
	to_bf16<<<lpk_blocks(n, 256), 256, 0, stream>>>(x, (__nv_bfloat16 *)out, n);
	return lpk_launched();
}
