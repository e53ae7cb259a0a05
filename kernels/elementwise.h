/*
 * elementwise.h - the decoder's element-wise kernels: SiLU-gate and the
 * residual (or bias) add.
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
/* y[t * width + i] += x[t * ldx + i] for t < n, i < width: ldx == width
 * adds a matrix (the residual), ldx == 0 broadcasts one row (a bias). */
cudaError_t lp_cuk_add_rows(float *y, const float *x, size_t n, size_t width, size_t ldx,
			    cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
