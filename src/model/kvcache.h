/*
 * kvcache.h - the size and types of the attention key/value cache.
 *
 * For every layer and every position < n_ctx the cache holds the rotated
 * key row and the value row of all KV heads (kv_dim = n_head_kv*head_dim
 * elements each), stored as F32, F16 or Q8_0. A context allocates the
 * whole cache once, in the buffers of the backends that run its layers
 * (struct lp_backend_kv, backend/backend.h), under LP_MEM_KV or
 * LP_MEM_GPU_KV, so its size is known before the first token:
 * bytes = n_ctx * lp_kvcache_bytes_per_token(...), i.e.
 * 2 * n_layer * kv_dim * bytes(type) per token.
 *
 * Q8_0 blocks of 32 elements must not straddle two heads, so Q8_0 needs
 * head_dim to be a multiple of 32.
 */
#ifndef LP_MODEL_KVCACHE_H
#define LP_MODEL_KVCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "quant/quant.h"

/* Parse "f32", "f16" or "q8_0"; returns 1 and sets *t, else 0. */
int lp_kv_type_parse(const char *s, enum lp_qtype *t);
/* Bytes one token takes in the cache (keys and values of every layer);
 * 0 when the type cannot hold rows of kv_dim or heads of head_dim. */
size_t lp_kvcache_bytes_per_token(uint32_t n_layer, uint32_t kv_dim, uint32_t head_dim,
				  enum lp_qtype type);

#endif
