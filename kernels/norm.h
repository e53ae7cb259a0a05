/*
 * norm.h - RMSNorm on the device (the decoder's norm; LayerNorm, the
 * encoder's, is in bert.h).
 *
 * Launchers enqueue on `stream`, never synchronize, and return
 * cudaSuccess, the launch error, or cudaErrorInvalidValue for a bad shape.
 */
#ifndef LP_KERNELS_NORM_H
#define LP_KERNELS_NORM_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * out[r * ldo + i] = x[r * ldx + i] * s_r * w[i] for r < n_rows, i < n, with
 * s_r = 1 / sqrt(mean_i(x[r, i]^2) + eps). `out` may be `x`.
 */
cudaError_t lp_cuk_rmsnorm(const float *x, size_t ldx, const float *w, float *out, size_t ldo,
			   int n_rows, int n, float eps, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
