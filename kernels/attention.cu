/*
 * attention.cu - KV cache stores and split-KV causal attention.
 *
 * In the split kernel each block owns one (query, head) and one run of
 * positions; its warps take the run's positions in turn, lanes holding
 * head_dim / 32 elements each, so a key row is read by one coalesced warp
 * load and the score is a warp sum. Each warp keeps the online-softmax
 * triple (max, sum, weighted values); the block merges its warps, the
 * combine kernel merges the runs.
 */
#include "kernels/attention.h"
#include "kernels/common.cuh"

#define AT_WARPS 4

template <int KT> __device__ __forceinline__ float ldkv(const uint8_t *row, int off);
template <> __device__ __forceinline__ float ldkv<LPK_F32>(const uint8_t *row, int off)
{
	return ((const float *)row)[off];
}
template <> __device__ __forceinline__ float ldkv<LPK_F16>(const uint8_t *row, int off)
{
	return __half2float(((const __half *)row)[off]);
}
template <> __device__ __forceinline__ float ldkv<LPK_Q8_0>(const uint8_t *row, int off)
{
	const uint8_t *b = row + (off / 32) * 34;
	return lpk_h2f(lpk_ld16(b)) * (float)(int8_t)b[2 + off % 32];
}

/* Partial of one run: part[0] max, part[1] sum, part[2 + d] values. */
template <int KT, int DPL>
static __global__ void __launch_bounds__(AT_WARPS * LPK_WARP)
attn_split(const float *__restrict__ q, size_t ldq, int n_head, int group, int hd,
	   const uint8_t *__restrict__ kc, const uint8_t *__restrict__ vc, size_t rb,
	   const int32_t *__restrict__ pos, float scale, int n_split, float *__restrict__ part)
{
	__shared__ float sm[AT_WARPS], sl[AT_WARPS], sacc[AT_WARPS][DPL * LPK_WARP];
	int qh = blockIdx.x, t = qh / n_head, h = qh % n_head, split = blockIdx.y;
	int lane = threadIdx.x % LPK_WARP, w = threadIdx.x / LPK_WARP;
	int len = pos[0] + t + 1, per = (len + n_split - 1) / n_split;
	int s0 = split * per, s1 = min(len, s0 + per), koff = (h / group) * hd;
	const float *qp = q + t * ldq + (size_t)h * hd;
	float qv[DPL], acc[DPL], m = -INFINITY, l = 0.0f;

#pragma unroll
	for (int j = 0; j < DPL; j++) {
		int d = lane + LPK_WARP * j;
		qv[j] = d < hd ? qp[d] : 0.0f;
		acc[j] = 0.0f;
	}
	for (int s = s0 + w; s < s1; s += AT_WARPS) {
		const uint8_t *kr = kc + (size_t)s * rb, *vr = vc + (size_t)s * rb;
		float dot = 0.0f;
#pragma unroll
		for (int j = 0; j < DPL; j++) {
			int d = lane + LPK_WARP * j;
			if (d < hd)
				dot += qv[j] * ldkv<KT>(kr, koff + d);
		}
		dot = lpk_warp_sum(dot) * scale;
		float mn = fmaxf(m, dot), corr = expf(m - mn), p = expf(dot - mn);
		l = l * corr + p;
#pragma unroll
		for (int j = 0; j < DPL; j++) {
			int d = lane + LPK_WARP * j;
			acc[j] = acc[j] * corr + (d < hd ? p * ldkv<KT>(vr, koff + d) : 0.0f);
		}
		m = mn;
	}
	if (lane == 0) {
		sm[w] = m;
		sl[w] = l;
	}
#pragma unroll
	for (int j = 0; j < DPL; j++)
		sacc[w][lane + LPK_WARP * j] = acc[j];
	__syncthreads();
	if (w != 0)
		return;
	float M = -INFINITY, L = 0.0f, A[DPL];
	for (int i = 0; i < AT_WARPS; i++)
		M = fmaxf(M, sm[i]);
#pragma unroll
	for (int j = 0; j < DPL; j++)
		A[j] = 0.0f;
	if (M != -INFINITY)
		for (int i = 0; i < AT_WARPS; i++) {
			if (sm[i] == -INFINITY)
				continue;
			float c = expf(sm[i] - M);
			L += sl[i] * c;
#pragma unroll
			for (int j = 0; j < DPL; j++)
				A[j] += sacc[i][lane + LPK_WARP * j] * c;
		}
	float *pp = part + ((size_t)qh * n_split + split) * (hd + 2);
	if (lane == 0) {
		pp[0] = M;
		pp[1] = L;
	}
#pragma unroll
	for (int j = 0; j < DPL; j++) {
		int d = lane + LPK_WARP * j;
		if (d < hd)
			pp[2 + d] = A[j];
	}
}

static __global__ void attn_combine(const float *__restrict__ part, int n_split, int hd,
				    int n_head, float *__restrict__ out, size_t ldo)
{
	int qh = blockIdx.x, t = qh / n_head, h = qh % n_head;
	const float *pp = part + (size_t)qh * n_split * (hd + 2);
	float M = -INFINITY;

	for (int s = 0; s < n_split; s++)
		M = fmaxf(M, pp[(size_t)s * (hd + 2)]);
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float L = 0.0f, A = 0.0f;
		for (int s = 0; s < n_split; s++) {
			const float *p = pp + (size_t)s * (hd + 2);
			if (p[0] == -INFINITY)
				continue;
			float c = expf(p[0] - M);
			L += p[1] * c;
			A += p[2 + d] * c;
		}
		out[t * ldo + (size_t)h * hd + d] = A / L;
	}
}

/* ---- stores ---------------------------------------------------------- */

template <int KT>
static __global__ void kv_store_el(const float *__restrict__ k, const float *__restrict__ v,
				   size_t ld, int kv_dim, uint8_t *kc, uint8_t *vc, size_t rb,
				   const int32_t *__restrict__ pos)
{
	int t = blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= kv_dim)
		return;
	size_t at = (size_t)(pos[0] + t) * rb;
	if (KT == LPK_F32) {
		((float *)(kc + at))[i] = k[t * ld + i];
		((float *)(vc + at))[i] = v[t * ld + i];
	} else {
		((__half *)(kc + at))[i] = __float2half_rn(k[t * ld + i]);
		((__half *)(vc + at))[i] = __float2half_rn(v[t * ld + i]);
	}
}

/* One warp per block of 32: d = f16(amax / 127), q = clamp(rint(x / d)). */
static __global__ void kv_store_q8(const float *__restrict__ k, const float *__restrict__ v,
				   size_t ld, int kv_dim, uint8_t *kc, uint8_t *vc, size_t rb,
				   const int32_t *__restrict__ pos)
{
	int t = blockIdx.y, lane = threadIdx.x % LPK_WARP;
	int wb = blockIdx.x * (blockDim.x / LPK_WARP) + threadIdx.x / LPK_WARP, nb = kv_dim / 32;

	if (wb >= 2 * nb)
		return;
	int which = wb / nb, b = wb % nb;
	float x = (which ? v : k)[t * ld + 32 * b + lane];
	uint8_t *dst = (which ? vc : kc) + (size_t)(pos[0] + t) * rb + 34 * b;
	float amax = lpk_warp_max(fabsf(x));
	__half dh = __float2half_rn(amax / 127.0f);
	float d = __half2float(dh);
	int qv = d != 0.0f ? __float2int_rn(x / d) : 0;
	dst[2 + lane] = (uint8_t)(int8_t)max(-127, min(127, qv));
	if (lane == 0) {
		uint16_t u = __half_as_ushort(dh);
		dst[0] = (uint8_t)u;
		dst[1] = (uint8_t)(u >> 8);
	}
}

/* ---- launchers ------------------------------------------------------- */

extern "C" int lp_cuk_kv_type_ok(int kv_type, int head_dim)
{
	if (head_dim <= 0 || head_dim > 256)
		return 0;
	return kv_type == LPK_F32 || kv_type == LPK_F16 || (kv_type == LPK_Q8_0 && head_dim % 32 == 0);
}

extern "C" cudaError_t lp_cuk_kv_store(int kv_type, const float *k, const float *v, size_t ld,
				       int n_tok, int kv_dim, void *k_cache, void *v_cache,
				       size_t row_bytes, const int32_t *pos, cudaStream_t stream)
{
	uint8_t *kc = (uint8_t *)k_cache, *vc = (uint8_t *)v_cache;

	if (n_tok < 0 || n_tok > 65535 || kv_dim <= 0)
		return cudaErrorInvalidValue;
	if (n_tok == 0)
		return cudaSuccess;
	switch (kv_type) {
	case LPK_F32:
		kv_store_el<LPK_F32><<<dim3(lpk_blocks((size_t)kv_dim, 128), n_tok), 128, 0, stream>>>(
			k, v, ld, kv_dim, kc, vc, row_bytes, pos);
		break;
	case LPK_F16:
		kv_store_el<LPK_F16><<<dim3(lpk_blocks((size_t)kv_dim, 128), n_tok), 128, 0, stream>>>(
			k, v, ld, kv_dim, kc, vc, row_bytes, pos);
		break;
	case LPK_Q8_0:
		if (kv_dim % 32)
			return cudaErrorInvalidValue;
		kv_store_q8<<<dim3(lpk_blocks((size_t)2 * kv_dim / 32, 4), n_tok), 128, 0, stream>>>(
			k, v, ld, kv_dim, kc, vc, row_bytes, pos);
		break;
	default:
		return cudaErrorInvalidValue;
	}
	return lpk_launched();
}

extern "C" size_t lp_cuk_attention_scratch_bytes(int n_tok, int n_head, int head_dim, int n_split)
{
	return (size_t)n_tok * n_head * n_split * (head_dim + 2) * sizeof(float);
}

template <int KT, int DPL>
static void launch_split(dim3 grid, cudaStream_t s, const float *q, size_t ldq, int n_head,
			 int group, int hd, const void *kc, const void *vc, size_t rb,
			 const int32_t *pos, float scale, int n_split, float *part)
{
	attn_split<KT, DPL><<<grid, AT_WARPS * LPK_WARP, 0, s>>>(
		q, ldq, n_head, group, hd, (const uint8_t *)kc, (const uint8_t *)vc, rb, pos,
		scale, n_split, part);
}

template <int KT>
static void launch_kt(int dpl, dim3 grid, cudaStream_t s, const float *q, size_t ldq,
		      int n_head, int group, int hd, const void *kc, const void *vc, size_t rb,
		      const int32_t *pos, float scale, int n_split, float *part)
{
	switch (dpl) {
	case 1: launch_split<KT, 1>(grid, s, q, ldq, n_head, group, hd, kc, vc, rb, pos, scale, n_split, part); break;
	case 2: launch_split<KT, 2>(grid, s, q, ldq, n_head, group, hd, kc, vc, rb, pos, scale, n_split, part); break;
	case 4: launch_split<KT, 4>(grid, s, q, ldq, n_head, group, hd, kc, vc, rb, pos, scale, n_split, part); break;
	default: launch_split<KT, 8>(grid, s, q, ldq, n_head, group, hd, kc, vc, rb, pos, scale, n_split, part); break;
	}
}

extern "C" cudaError_t lp_cuk_attention(const float *q, size_t ldq, int n_tok, int n_head,
					int n_head_kv, int head_dim, int kv_type,
					const void *k_cache, const void *v_cache, size_t row_bytes,
					const int32_t *pos, float scale, int n_split, void *scratch,
					float *out, size_t ldo, cudaStream_t stream)
{
	float *part = (float *)scratch;
	int dpl;

	if (n_tok < 0 || n_head <= 0 || n_head_kv <= 0 || n_head % n_head_kv ||
	    !lp_cuk_kv_type_ok(kv_type, head_dim) || n_split < 1 || n_split > 256 ||
	    (size_t)n_tok * n_head > 0x7fffffffu)
		return cudaErrorInvalidValue;
	if (n_tok == 0)
		return cudaSuccess;
	dpl = head_dim <= 32 ? 1 : head_dim <= 64 ? 2 : head_dim <= 128 ? 4 : 8;
	dim3 grid((unsigned)(n_tok * n_head), n_split);
	int group = n_head / n_head_kv;
	switch (kv_type) {
	case LPK_F32:
		launch_kt<LPK_F32>(dpl, grid, stream, q, ldq, n_head, group, head_dim, k_cache,
				   v_cache, row_bytes, pos, scale, n_split, part);
		break;
	case LPK_F16:
		launch_kt<LPK_F16>(dpl, grid, stream, q, ldq, n_head, group, head_dim, k_cache,
				   v_cache, row_bytes, pos, scale, n_split, part);
		break;
	default:
		launch_kt<LPK_Q8_0>(dpl, grid, stream, q, ldq, n_head, group, head_dim, k_cache,
				    v_cache, row_bytes, pos, scale, n_split, part);
		break;
	}
	cudaError_t e = lpk_launched();
	if (e != cudaSuccess)
		return e;
	attn_combine<<<n_tok * n_head, head_dim <= 128 ? 128 : 256, 0, stream>>>(
		part, n_split, head_dim, n_head, out, ldo);
	return lpk_launched();
}
