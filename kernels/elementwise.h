/*
 * elementwise.h - C launchers of the element-wise kernels.
 *
 * Every launcher queues its kernel on `stream` and returns the launch's
 * cudaError_t as an int (0 on success); pointers are device memory.
 */
#ifndef LP_KERNELS_ELEMENTWISE_H
#define LP_KERNELS_ELEMENTWISE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[t * width + i] += x[t * ldx + i] for t < n, i < width (ldx 0: one
 * row broadcast, a bias). */
int lp_cuk_add_rows(float *y, const float *x, size_t n, size_t width, size_t ldx,
		    void *stream);

#ifdef __cplusplus
}
#endif

#endif
