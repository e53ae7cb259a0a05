#include "model/kvcache.h"

#include <string.h>

#include "core/mem.h"

int lp_kv_type_parse(const char *s, enum lp_qtype *t)
{
	if (!strcmp(s, "f32"))
		*t = LP_Q_F32;
	else if (!strcmp(s, "f16"))
		*t = LP_Q_F16;
	else if (!strcmp(s, "q8_0"))
		*t = LP_Q_Q8_0;
	else
		return 0;
	return 1;
}

size_t lp_kvcache_bytes_per_token(uint32_t n_layer, uint32_t kv_dim, uint32_t head_dim,
				  enum lp_qtype type)
{
	if (type != LP_Q_F32 && type != LP_Q_F16 && type != LP_Q_Q8_0)
		return 0;
	if (head_dim % lp_qtype_block_elems(type))
		return 0;
	return 2 * (size_t)n_layer * lp_qtype_row_bytes(type, kv_dim);
}

enum lp_status lp_kvcache_init(struct lp_kvcache *c, uint32_t n_layer, uint32_t n_ctx,
			       uint32_t kv_dim, uint32_t head_dim, enum lp_qtype type,
			       struct lp_diag *d)
{
	size_t per_tok = lp_kvcache_bytes_per_token(n_layer, kv_dim, head_dim, type);
	size_t half;

	memset(c, 0, sizeof(*c));
	if (!per_tok)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "KV cache type '%s' needs a head size that is a multiple of %zu, not %u",
				   lp_qtype_name(type), lp_qtype_block_elems(type), head_dim);
	c->type = type;
	c->n_layer = n_layer;
	c->n_ctx = n_ctx;
	c->kv_dim = kv_dim;
	c->row_bytes = lp_qtype_row_bytes(type, kv_dim);
	half = per_tok / 2 * n_ctx;
	c->k = lp_mem_alloc(LP_MEM_KV, half, d);
	if (!c->k)
		return LP_E_NOMEM;
	c->v = lp_mem_alloc(LP_MEM_KV, half, d);
	if (!c->v) {
		lp_mem_free(c->k);
		c->k = NULL;
		return LP_E_NOMEM;
	}
	lp_mem_commit(c->k, half);
	lp_mem_commit(c->v, half);
	return LP_OK;
}

void lp_kvcache_release(struct lp_kvcache *c)
{
	lp_mem_free(c->k);
	lp_mem_free(c->v);
	c->k = c->v = NULL;
}

static void put_row(enum lp_qtype t, const float *src, void *dst, uint32_t n)
{
	if (t == LP_Q_F32)
		memcpy(dst, src, n * sizeof(float));
	else if (t == LP_Q_F16)
		for (uint32_t i = 0; i < n; i++)
			((uint16_t *)dst)[i] = lp_fp32_to_fp16(src[i]);
	else
		lp_quantize_row(t, src, dst, n);
}

void lp_kvcache_store(struct lp_kvcache *c, uint32_t layer, uint32_t pos,
		      const float *k, const float *v)
{
	size_t at = ((size_t)layer * c->n_ctx + pos) * c->row_bytes;

	put_row(c->type, k, c->k + at, c->kv_dim);
	put_row(c->type, v, c->v + at, c->kv_dim);
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("f16c,avx"))) static void f16_row_f16c(const uint16_t *h, float *out,
							     uint32_t n)
{
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
	for (; i < n; i++)
		out[i] = lp_fp16_to_fp32(h[i]);
}

static int have_f16c(void)
{
	static int cached = -1;

	if (cached < 0)
		cached = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
	return cached;
}
#endif

static void get_row(enum lp_qtype t, const void *src, float *dst, uint32_t n)
{
	if (t == LP_Q_F32) {
		memcpy(dst, src, n * sizeof(float));
	} else if (t == LP_Q_F16) {
#if defined(__x86_64__)
		if (have_f16c()) {
			f16_row_f16c(src, dst, n);
			return;
		}
#endif
		for (uint32_t i = 0; i < n; i++)
			dst[i] = lp_fp16_to_fp32(((const uint16_t *)src)[i]);
	} else {
		lp_dequantize_row(t, src, dst, n);
	}
}

void lp_kvcache_to_f32(const struct lp_kvcache *c, uint32_t layer, uint32_t p0, uint32_t p1,
		       float *k_out, float *v_out)
{
	for (uint32_t p = p0; p < p1; p++) {
		get_row(c->type, lp_kvcache_k(c, layer, p), k_out + (size_t)(p - p0) * c->kv_dim,
			c->kv_dim);
		get_row(c->type, lp_kvcache_v(c, layer, p), v_out + (size_t)(p - p0) * c->kv_dim,
			c->kv_dim);
	}
}
