/*
 * rope.h - rotary position embedding on the device, in both pairings.
 *
 * Positions come from device memory, so that one captured decode step
 * replays at every position: token t of the call sits at *pos + t.
 * The launcher enqueues on `stream`, never synchronizes, and returns
 * cudaSuccess, the launch error, or cudaErrorInvalidValue.
 */
#ifndef LP_KERNELS_ROPE_H
#define LP_KERNELS_ROPE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lp_cuk_rope_mode {
	LP_CUK_ROPE_ADJACENT = 0, /* pairs (x[2i], x[2i+1]), GGUF llama */
	LP_CUK_ROPE_NEOX = 1,     /* pairs (x[i], x[i + n_rot/2]), qwen2 */
};

/*
 * Rotate in place the first n_rot elements (even, <= head_dim) of each of
 * `n_heads` heads of `head_dim` elements, for n_tok tokens `ldx` floats
 * apart: pair i turns by (*pos + t) * base^(-2i / n_rot), the angle and
 * its sine and cosine taken in double as the CPU takes them.
 */
cudaError_t lp_cuk_rope(float *x, size_t ldx, int n_tok, int n_heads, int head_dim, int n_rot,
			int mode, float base, const int32_t *pos, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
