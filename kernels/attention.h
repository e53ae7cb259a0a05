/*
 * attention.h - the KV cache on the device and causal grouped-query
 * attention over it.
 *
 * One layer's cache is two arrays (keys, values) of n_ctx rows; a row
 * holds the kv_dim = n_head_kv * head_dim elements of one position in the
 * cache's type: F32 (0), F16 (1) or Q8_0 (8, blocks of 32 that never
 * straddle a head, so head_dim is a multiple of 32), `row_bytes` apart, as
 * model/kvcache.h lays out the CPU's.
 *
 * Positions come from device memory (token t of a call sits at *pos + t),
 * so that a decode step captured once as a CUDA graph replays at every
 * position. Launchers enqueue on `stream`, never synchronize, and return
 * cudaSuccess, the launch error, or cudaErrorInvalidValue.
 */
#ifndef LP_KERNELS_ATTENTION_H
#define LP_KERNELS_ATTENTION_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if `kv_type` (a GGUF type number) can hold a cache with this head size. */
int lp_cuk_kv_type_ok(int kv_type, int head_dim);

/*
 * Store the key and value rows of n_tok tokens (k + t * ld, v + t * ld,
 * kv_dim floats each) at positions *pos + t of one layer's cache, rounded
 * as lp_kvcache_store rounds them (f16 to nearest even; q8_0 as
 * lp_quantize_row: the same bytes).
 */
cudaError_t lp_cuk_kv_store(int kv_type, const float *k, const float *v, size_t ld, int n_tok,
			    int kv_dim, void *k_cache, void *v_cache, size_t row_bytes,
			    const int32_t *pos, cudaStream_t stream);

/* Bytes of the scratch lp_cuk_attention needs for these sizes. */
size_t lp_cuk_attention_scratch_bytes(int n_tok, int n_head, int head_dim, int n_split);

/*
 * Causal attention of n_tok queries (q + t * ldq, n_head heads of
 * head_dim floats) over one layer's cache: query t sees positions
 * 0..*pos + t, query head h reads KV head h / (n_head / n_head_kv).
 * out[t * ldo + h * head_dim + d] = sum_s softmax_s(scale * q.k_s) v_s[d].
 *
 * Flash-decoding: the positions of each query are cut into n_split equal
 * runs (1 to 256) worked by separate blocks, each keeping a running max,
 * sum and weighted values; a second kernel combines the runs. The split
 * count is fixed by the caller while the length is read on the device,
 * so one captured launch serves every length. `scratch` holds
 * lp_cuk_attention_scratch_bytes(n_tok, n_head, head_dim, n_split).
 * head_dim is at most 256.
 */
cudaError_t lp_cuk_attention(const float *q, size_t ldq, int n_tok, int n_head, int n_head_kv,
			     int head_dim, int kv_type, const void *k_cache, const void *v_cache,
			     size_t row_bytes, const int32_t *pos, float scale, int n_split,
			     void *scratch, float *out, size_t ldo, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
