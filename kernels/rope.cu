/*
 * rope.cu - RoPE, one thread per rotated pair. The angle is computed in
 * double (as forward.c's table is), then the rotation in float.
 */
#include "kernels/rope.h"
#include "kernels/common.cuh"

static __global__ void rope_pairs(float *x, size_t ldx, int n_heads, int head_dim, int n_rot,
				  int neox, double base, const int32_t *pos)
{
	int half = n_rot / 2, t = blockIdx.y;
	int j = blockIdx.x * blockDim.x + threadIdx.x;

	if (j >= n_heads * half)
		return;
	int h = j / half, i = j % half;
	double theta = (double)(pos[0] + t) * pow(base, -2.0 * (double)i / n_rot), s, c;
	sincos(theta, &s, &c);
	float cs = (float)c, sn = (float)s;
	float *v = x + t * ldx + (size_t)h * head_dim;
	int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
	float x0 = v[a], x1 = v[b];
	v[a] = x0 * cs - x1 * sn;
	v[b] = x0 * sn + x1 * cs;
}

extern "C" cudaError_t lp_cuk_rope(float *x, size_t ldx, int n_tok, int n_heads, int head_dim,
				   int n_rot, int mode, float base, const int32_t *pos,
				   cudaStream_t stream)
{
	if (n_tok < 0 || n_tok > 65535 || n_heads <= 0 || n_rot <= 0 || n_rot % 2 ||
	    n_rot > head_dim || (mode != LP_CUK_ROPE_ADJACENT && mode != LP_CUK_ROPE_NEOX))
		return cudaErrorInvalidValue;
	if (n_tok == 0)
		return cudaSuccess;
	dim3 grid(lpk_blocks((size_t)n_heads * (n_rot / 2), 128), n_tok);
	rope_pairs<<<grid, 128, 0, stream>>>(x, ldx, n_heads, head_dim, n_rot,
					     mode == LP_CUK_ROPE_NEOX, (double)base, pos);
	return lpk_launched();
}
