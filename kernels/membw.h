/*
 * membw.h - a plain device-to-device copy kernel, the yardstick for the
 * decode floor: model bytes / the bandwidth it reaches is the least time
 * a decode step that reads every weight once can take.
 */
#ifndef LP_KERNELS_MEMBW_H
#define LP_KERNELS_MEMBW_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copy `bytes` (a multiple of 16; both pointers 16-byte aligned) from src
 * to dst with 16-byte loads and stores over a grid-stride loop. */
cudaError_t lp_cuk_copy(const void *src, void *dst, size_t bytes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
