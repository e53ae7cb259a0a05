/*
 * elementwise.h - the decoder's element-wise kernels: SiLU-gate, residual
 * add, bias add.
 *
 * Arrays are f32 on the device; `out` may alias an input. Launchers
 * enqueue on `stream`, never synchronize, and return cudaSuccess or the
 * launch error.
 */
#ifndef LP_KERNELS_ELEMENTWISE_H
#define LP_KERNELS_ELEMENTWISE_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = silu(gate[i]) * up[i] = gate[i] / (1 + e^-gate[i]) * up[i], i < n. */
cudaError_t lp_cuk_swiglu(const float *gate, const float *up, float *out, size_t n,
			  cudaStream_t stream);
/* out[i] = a[i] + b[i], i < n. */
cudaError_t lp_cuk_add(const float *a, const float *b, float *out, size_t n, cudaStream_t stream);
/* y[r * ldy + i] += bias[i] for r < n_rows, i < width. */
cudaError_t lp_cuk_add_bias(float *y, size_t ldy, const float *bias, int n_rows, int width,
			    cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
