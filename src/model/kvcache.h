/*
 * kvcache.h - the attention key/value cache of one context.
 *
 * For every layer and every position < n_ctx the cache holds the rotated
 * key row and the value row of all KV heads (kv_dim = n_head_kv*head_dim
 * elements each), stored as F32, F16 or Q8_0. The whole cache is allocated
 * once, at init, under LP_MEM_KV, so its size is known before the first
 * token: bytes = n_ctx * lp_kvcache_bytes_per_token(...), i.e.
 * 2 * n_layer * kv_dim * bytes(type) per token.
 *
 * Q8_0 blocks of 32 elements must not straddle two heads, so Q8_0 needs
 * head_dim to be a multiple of 32. Attention reads a layer's rows back as
 * floats (lp_kvcache_to_f32) once per step, not once per query head.
 */
#ifndef LP_MODEL_KVCACHE_H
#define LP_MODEL_KVCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "quant/quant.h"

struct lp_kvcache {
	enum lp_qtype type;   /* LP_Q_F32, LP_Q_F16 or LP_Q_Q8_0 */
	uint32_t n_layer, n_ctx, kv_dim;
	size_t row_bytes;     /* one key (or value) row */
	uint8_t *k;           /* (n_layer, n_ctx, row_bytes) */
	uint8_t *v;           /* (n_layer, n_ctx, row_bytes) */
};

/* Parse "f32", "f16" or "q8_0"; returns 1 and sets *t, else 0. */
int lp_kv_type_parse(const char *s, enum lp_qtype *t);
/* Bytes one token takes in the cache (keys and values of every layer);
 * 0 when the type cannot hold rows of kv_dim or heads of head_dim. */
size_t lp_kvcache_bytes_per_token(uint32_t n_layer, uint32_t kv_dim, uint32_t head_dim,
				  enum lp_qtype type);

/* Allocate the cache. Returns LP_OK, LP_E_NOMEM (budget; phase as set by
 * the caller) or LP_E_USAGE (type unusable for this head size). */
enum lp_status lp_kvcache_init(struct lp_kvcache *c, uint32_t n_layer, uint32_t n_ctx,
			       uint32_t kv_dim, uint32_t head_dim, enum lp_qtype type,
			       struct lp_diag *d);
void lp_kvcache_release(struct lp_kvcache *c);

/* Store the key and value rows (kv_dim floats each) of `pos` in `layer`. */
void lp_kvcache_store(struct lp_kvcache *c, uint32_t layer, uint32_t pos,
		      const float *k, const float *v);
/* Stored rows (in the cache's type). */
static inline const void *lp_kvcache_k(const struct lp_kvcache *c, uint32_t layer, uint32_t pos)
{
	return c->k + ((size_t)layer * c->n_ctx + pos) * c->row_bytes;
}
static inline const void *lp_kvcache_v(const struct lp_kvcache *c, uint32_t layer, uint32_t pos)
{
	return c->v + ((size_t)layer * c->n_ctx + pos) * c->row_bytes;
}
/* Rows [p0, p1) of `layer` as floats: keys to k_out and values to v_out,
 * each (p1 - p0, kv_dim) row-major. Uses F16C for F16 when the CPU has it. */
void lp_kvcache_to_f32(const struct lp_kvcache *c, uint32_t layer, uint32_t p0, uint32_t p1,
		       float *k_out, float *v_out);

#endif
