#include "retrieve/bert.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

#include "backend/cpu/blas.h"
#include "backend/cpu/cpu.h"
#include "core/fileio.h"
#include "core/mem.h"
#include "core/threadpool.h"
#include "retrieve/safetensors.h"

/* One encoder layer; W are [out, in] row-major as stored, b are [out]. */
struct bert_layer {
	const float *wq, *bq, *wk, *bk, *wv, *bv; /* [E, E], [E] */
	const float *wo, *bo;                     /* attention output [E, E], [E] */
	const float *ln1_g, *ln1_b;               /* [E] */
	const float *wi, *bi;                     /* intermediate [F, E], [F] */
	const float *wf, *bf;                     /* output [E, F], [E] */
	const float *ln2_g, *ln2_b;               /* [E] */
};

struct lp_bert {
	struct lp_bert_hparams hp;
	struct lp_st *st;               /* mapping that F32 weights point into */
	struct lp_wordpiece *wp;
	const float *tok_emb;           /* [n_vocab, E] */
	const float *pos_emb;           /* [n_pos, E] */
	const float *type_emb;          /* [n_type, E] */
	const float *emb_ln_g, *emb_ln_b; /* [E] */
	struct bert_layer *layers;      /* [n_layer] */
	float **owned;                  /* converted weights to free */
	size_t n_owned;
	size_t window, stride;          /* tokens */
	int n_threads;                  /* per embed call; <= 0: online CPUs */
	int avx2;                       /* the CPU has AVX2 and FMA */
};

/* ---- loading ---- */

static enum lp_status read_json(const char *path, int optional, json_t **out, struct lp_diag *d)
{
	json_error_t e;
	struct lp_mapped m;
	enum lp_status s;

	*out = NULL;
	if (optional && access(path, F_OK))
		return LP_OK;
	/* a model file: a regular file, never a device read without end */
	if ((s = lp_file_map(path, LP_FILE_MODEL, LP_MEM_OTHER, &m, d)))
		return s;
	*out = json_loadb((const char *)m.data, m.len, 0, &e);
	lp_file_unmap(&m);
	if (!*out || !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return lp_diag_set(d, LP_E_MODEL, path, e.line > 0 ? e.line : 0,
				   e.column > 0 ? e.column : 0, "bad JSON: %s", e.text);
	}
	return LP_OK;
}

static enum lp_status get_int(json_t *cfg, const char *path, const char *key, int lo, int hi,
			      int *out, struct lp_diag *d)
{
	json_t *v = json_object_get(cfg, key);

	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return lp_diag_set(d, LP_E_MODEL, path, 0, 0,
				   "'%s' must be an integer in %d..%d", key, lo, hi);
	*out = (int)json_integer_value(v);
	return LP_OK;
}

static enum lp_status parse_config(struct lp_bert *m, const char *path, struct lp_diag *d)
{
	struct lp_bert_hparams *hp = &m->hp;
	json_t *cfg, *act, *eps;
	enum lp_status s;

	if ((s = read_json(path, 0, &cfg, d)))
		return s;
	if ((s = get_int(cfg, path, "hidden_size", 1, 65536, &hp->n_embd, d)) ||
	    (s = get_int(cfg, path, "num_hidden_layers", 1, 1024, &hp->n_layer, d)) ||
	    (s = get_int(cfg, path, "num_attention_heads", 1, 1024, &hp->n_head, d)) ||
	    (s = get_int(cfg, path, "intermediate_size", 1, 1 << 20, &hp->n_ff, d)) ||
	    (s = get_int(cfg, path, "max_position_embeddings", 3, 1 << 20, &hp->n_pos, d)) ||
	    (s = get_int(cfg, path, "type_vocab_size", 1, 1024, &hp->n_type, d)) ||
	    (s = get_int(cfg, path, "vocab_size", 4, 1 << 24, &hp->n_vocab, d)))
		goto out;
	if (hp->n_embd % hp->n_head) {
		s = lp_diag_set(d, LP_E_MODEL, path, 0, 0, "hidden_size %d is not a multiple of num_attention_heads %d",
				hp->n_embd, hp->n_head);
		goto out;
	}
	act = json_object_get(cfg, "hidden_act");
	if (act && (!json_is_string(act) || strcmp(json_string_value(act), "gelu"))) {
		s = lp_diag_set(d, LP_E_MODEL, path, 0, 0, "unsupported hidden_act (only 'gelu')");
		goto out;
	}
	eps = json_object_get(cfg, "layer_norm_eps");
	hp->ln_eps = 1e-12f;
	if (eps && (!json_is_number(eps) || !isfinite(json_number_value(eps)) ||
		    json_number_value(eps) <= 0 || json_number_value(eps) > 1)) {
		s = lp_diag_set(d, LP_E_MODEL, path, 0, 0,
				"'layer_norm_eps' must be a number above 0 and at most 1");
		goto out;
	}
	if (eps)
		hp->ln_eps = (float)json_number_value(eps);
out:
	json_decref(cfg);
	return s;
}

static enum lp_status parse_sbert_config(struct lp_bert *m, const char *path, struct lp_diag *d)
{
	json_t *cfg, *v;
	enum lp_status s;

	m->window = LP_BERT_DEFAULT_WINDOW;
	if ((s = read_json(path, 1, &cfg, d)) || !cfg)
		goto clamp;
	v = json_object_get(cfg, "max_seq_length");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 3)) {
		json_decref(cfg);
		return lp_diag_set(d, LP_E_MODEL, path, 0, 0, "'max_seq_length' must be an integer >= 3");
	}
	if (v)
		m->window = (size_t)json_integer_value(v);
	json_decref(cfg);
clamp:
	if (m->window > (size_t)m->hp.n_pos)
		m->window = (size_t)m->hp.n_pos;
	if (m->window > LP_BERT_BATCH_TOKENS)
		m->window = LP_BERT_BATCH_TOKENS;
	m->stride = LP_BERT_DEFAULT_STRIDE < m->window - 2 ? LP_BERT_DEFAULT_STRIDE : m->window - 2;
	return s;
}

/* A weight that is not finite turns every embedding into NaN, which
 * cosine scoring then ranks at random: refuse it at load (one pass over
 * the weights, a few ms for MiniLM's 22M floats). */
static enum lp_status check_finite(const struct lp_bert *m, const char *name, const float *w,
				   size_t n, struct lp_diag *d)
{
	(void)m;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(w[i]))
			return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
					   "tensor '%s' holds a value that is not finite at %zu",
					   name, i);
	return LP_OK;
}

/* Look up a tensor of the given shape and return it as float: the mapped
 * bytes when they are aligned F32, else a converted copy. */
static enum lp_status weight(struct lp_bert *m, const char *prefix, const char *name, int n_dims,
			     uint64_t d0, uint64_t d1, const float **out, struct lp_diag *d)
{
	char full[256];
	uint64_t dims[2] = { d0, d1 };
	const struct lp_st_tensor *t;
	enum lp_status s;
	float *w;

	snprintf(full, sizeof(full), "%s%s", prefix, name);
	if ((s = lp_st_expect(m->st, full, n_dims, dims, &t, d)))
		return s;
	if (t->dtype == LP_ST_F32 && ((uintptr_t)t->data & 3) == 0) {
		*out = (const float *)t->data;
		return check_finite(m, full, *out, t->n_elems, d);
	}
	if (!(w = lp_mem_alloc(LP_MEM_WEIGHTS, t->n_elems * sizeof(float), d)))
		return LP_E_NOMEM;
	if ((s = lp_st_read_f32(m->st, t, w, d))) {
		lp_mem_free(w);
		return s;
	}
	m->owned[m->n_owned++] = w;
	*out = w;
	return check_finite(m, full, w, t->n_elems, d);
}

static enum lp_status bind_layer(struct lp_bert *m, const char *pre, int il, struct lp_diag *d)
{
	struct bert_layer *L = &m->layers[il];
	uint64_t E = (uint64_t)m->hp.n_embd, F = (uint64_t)m->hp.n_ff;
	char p[128];
	enum lp_status s;

	snprintf(p, sizeof(p), "%sencoder.layer.%d.", pre, il);
	if ((s = weight(m, p, "attention.self.query.weight", 2, E, E, &L->wq, d)) ||
	    (s = weight(m, p, "attention.self.query.bias", 1, E, 0, &L->bq, d)) ||
	    (s = weight(m, p, "attention.self.key.weight", 2, E, E, &L->wk, d)) ||
	    (s = weight(m, p, "attention.self.key.bias", 1, E, 0, &L->bk, d)) ||
	    (s = weight(m, p, "attention.self.value.weight", 2, E, E, &L->wv, d)) ||
	    (s = weight(m, p, "attention.self.value.bias", 1, E, 0, &L->bv, d)) ||
	    (s = weight(m, p, "attention.output.dense.weight", 2, E, E, &L->wo, d)) ||
	    (s = weight(m, p, "attention.output.dense.bias", 1, E, 0, &L->bo, d)) ||
	    (s = weight(m, p, "attention.output.LayerNorm.weight", 1, E, 0, &L->ln1_g, d)) ||
	    (s = weight(m, p, "attention.output.LayerNorm.bias", 1, E, 0, &L->ln1_b, d)) ||
	    (s = weight(m, p, "intermediate.dense.weight", 2, F, E, &L->wi, d)) ||
	    (s = weight(m, p, "intermediate.dense.bias", 1, F, 0, &L->bi, d)) ||
	    (s = weight(m, p, "output.dense.weight", 2, E, F, &L->wf, d)) ||
	    (s = weight(m, p, "output.dense.bias", 1, E, 0, &L->bf, d)) ||
	    (s = weight(m, p, "output.LayerNorm.weight", 1, E, 0, &L->ln2_g, d)) ||
	    (s = weight(m, p, "output.LayerNorm.bias", 1, E, 0, &L->ln2_b, d)))
		return s;
	return LP_OK;
}

#define TENSORS_PER_LAYER 16

static enum lp_status bind_weights(struct lp_bert *m, struct lp_diag *d)
{
	const struct lp_bert_hparams *hp = &m->hp;
	uint64_t E = (uint64_t)hp->n_embd;
	const char *pre = lp_st_find(m->st, "embeddings.word_embeddings.weight") ? "" : "bert.";
	size_t n_w = 5 + (size_t)hp->n_layer * TENSORS_PER_LAYER;
	enum lp_status s;

	m->layers = lp_mem_calloc(LP_MEM_OTHER, (size_t)hp->n_layer, sizeof(*m->layers), d);
	m->owned = lp_mem_calloc(LP_MEM_OTHER, n_w, sizeof(*m->owned), d);
	if (!m->layers || !m->owned)
		return LP_E_NOMEM;
	if ((s = weight(m, pre, "embeddings.word_embeddings.weight", 2, (uint64_t)hp->n_vocab, E, &m->tok_emb, d)) ||
	    (s = weight(m, pre, "embeddings.position_embeddings.weight", 2, (uint64_t)hp->n_pos, E, &m->pos_emb, d)) ||
	    (s = weight(m, pre, "embeddings.token_type_embeddings.weight", 2, (uint64_t)hp->n_type, E, &m->type_emb, d)) ||
	    (s = weight(m, pre, "embeddings.LayerNorm.weight", 1, E, 0, &m->emb_ln_g, d)) ||
	    (s = weight(m, pre, "embeddings.LayerNorm.bias", 1, E, 0, &m->emb_ln_b, d)))
		return s;
	for (int il = 0; il < hp->n_layer; il++)
		if ((s = bind_layer(m, pre, il, d)))
			return s;
	return LP_OK;
}

/* AVX2 and FMA for the exponentials and norms, unless
 * LPIPE_CPU_KERNELS=scalar asks for the reference code (as for the dot
 * products, backend/cpu/kernels.h). */
static int cpu_has_avx2(void)
{
#ifdef HAVE_X86
	const char *force = getenv("LPIPE_CPU_KERNELS");

	if (force && !strcmp(force, "scalar"))
		return 0;
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return 0;
#endif
}

enum lp_status lp_bert_load(const char *dir, struct lp_bert **out, struct lp_diag *d)
{
	char path[4096];
	struct lp_bert *m;
	enum lp_status s;

	*out = NULL;
	if ((s = lp_blas_load(d)))
		return s;
	if (!(m = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*m), d)))
		return LP_E_NOMEM;
	m->avx2 = cpu_has_avx2();
	snprintf(path, sizeof(path), "%s/config.json", dir);
	if ((s = parse_config(m, path, d)))
		goto fail;
	snprintf(path, sizeof(path), "%s/sentence_bert_config.json", dir);
	if ((s = parse_sbert_config(m, path, d)))
		goto fail;
	snprintf(path, sizeof(path), "%s/vocab.txt", dir);
	if ((s = lp_wp_load(path, &m->wp, d)))
		goto fail;
	if (lp_wp_vocab_size(m->wp) != (size_t)m->hp.n_vocab) {
		s = lp_diag_set(d, LP_E_MODEL, path, 0, 0,
				"vocabulary has %zu tokens, the model (vocab_size) %d",
				lp_wp_vocab_size(m->wp), m->hp.n_vocab);
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/model.safetensors", dir);
	if ((s = lp_st_open(path, &m->st, d)) || (s = bind_weights(m, d)))
		goto fail;
	*out = m;
	return LP_OK;
fail:
	lp_bert_free(m);
	return s;
}

void lp_bert_free(struct lp_bert *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_owned; i++)
		lp_mem_free(m->owned[i]);
	lp_mem_free(m->owned);
	lp_mem_free(m->layers);
	lp_st_free(m->st);
	lp_wp_free(m->wp);
	lp_mem_free(m);
}

size_t lp_bert_dim(const struct lp_bert *m) { return (size_t)m->hp.n_embd; }
const struct lp_bert_hparams *lp_bert_hparams(const struct lp_bert *m) { return &m->hp; }
const struct lp_wordpiece *lp_bert_tokenizer(const struct lp_bert *m) { return m->wp; }
size_t lp_bert_window(const struct lp_bert *m) { return m->window; }
size_t lp_bert_stride(const struct lp_bert *m) { return m->stride; }
void lp_bert_set_threads(struct lp_bert *m, int n_threads) { m->n_threads = n_threads; }

enum lp_status lp_bert_set_window(struct lp_bert *m, size_t window, size_t stride,
				  struct lp_diag *d)
{
	size_t w = window ? window : m->window, s = stride ? stride : m->stride;

	if (w < 3 || w > (size_t)m->hp.n_pos || w > LP_BERT_BATCH_TOKENS)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0, "window %zu out of range 3..%d", w,
				   m->hp.n_pos);
	if (!stride && s > w - 2)
		s = w - 2;
	if (s < 1 || s > w - 2)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0, "stride %zu out of range 1..%zu", s, w - 2);
	m->window = w;
	m->stride = s;
	return LP_OK;
}

/* ---- forward pass ---- */

/*
 * Activations for up to `cap` rows (tokens), allocated once per embed call,
 * with the pool that runs it (the caller's, or one made for the call). Work is split three ways per layer: the Q/K/V
 * products by blocks of rows, attention by (sequence, head), and the rest
 * of the layer (output projection, the feed-forward block, both layer
 * norms), which never mixes rows, by blocks of rows again. Blocks write
 * disjoint rows, so the workers share every buffer but `att`.
 */
struct scratch {
	size_t cap;         /* rows */
	float *x;           /* [cap, E] hidden state */
	float *q, *k, *v;   /* [cap, E]; q is reused after attention */
	float *ctx;         /* [cap, E] attention output before projection */
	float *h;           /* [cap, F] intermediate */
	float *att;         /* [workers, att_stride] one head's scores each */
	size_t att_stride;  /* window * window floats */
	struct lp_pool *pool;
	int own_pool;       /* pool made for this call, freed with the scratch */
	/* the sequences of the current batch */
	int32_t *ids;       /* [cap] */
	size_t *start, *len, *owner; /* [cap] per sequence */
	size_t n_seq, n_tok;
};

static void scratch_release(struct scratch *s)
{
	void *p[] = { s->x, s->q, s->k, s->v, s->ctx, s->h, s->att, s->ids, s->start, s->len,
		      s->owner };

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		lp_mem_free(p[i]);
	if (s->own_pool)
		lp_pool_free(s->pool);
	memset(s, 0, sizeof(*s));
}

/* Scratch for `cap` rows, run on `pool`, or on a pool of m->n_threads
 * made here when pool is NULL. */
static enum lp_status scratch_init(struct scratch *s, const struct lp_bert *m,
				   struct lp_pool *pool, size_t cap, struct lp_diag *d)
{
	size_t E = (size_t)m->hp.n_embd, F = (size_t)m->hp.n_ff;
	size_t W = m->window < cap ? m->window : cap, workers;
	enum lp_status st;

	memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->pool = pool;
	if (!pool) {
		if ((st = lp_pool_new(m->n_threads, &s->pool, d)))
			return st;
		s->own_pool = 1;
	}
	workers = (size_t)lp_pool_size(s->pool);
	s->att_stride = W * W;
	if (!(s->x = lp_mem_alloc(LP_MEM_SCRATCH, cap * E * sizeof(float), d)) ||
	    !(s->q = lp_mem_alloc(LP_MEM_SCRATCH, cap * E * sizeof(float), d)) ||
	    !(s->k = lp_mem_alloc(LP_MEM_SCRATCH, cap * E * sizeof(float), d)) ||
	    !(s->v = lp_mem_alloc(LP_MEM_SCRATCH, cap * E * sizeof(float), d)) ||
	    !(s->ctx = lp_mem_alloc(LP_MEM_SCRATCH, cap * E * sizeof(float), d)) ||
	    !(s->h = lp_mem_alloc(LP_MEM_SCRATCH, cap * F * sizeof(float), d)) ||
	    !(s->att = lp_mem_alloc(LP_MEM_SCRATCH, workers * W * W * sizeof(float), d)) ||
	    !(s->ids = lp_mem_alloc(LP_MEM_SCRATCH, cap * sizeof(int32_t), d)) ||
	    !(s->start = lp_mem_alloc(LP_MEM_SCRATCH, cap * sizeof(size_t), d)) ||
	    !(s->len = lp_mem_alloc(LP_MEM_SCRATCH, cap * sizeof(size_t), d)) ||
	    !(s->owner = lp_mem_alloc(LP_MEM_SCRATCH, cap * sizeof(size_t), d))) {
		scratch_release(s);
		return LP_E_NOMEM;
	}
	return LP_OK;
}

#ifdef HAVE_X86
/*
 * exp for the softmax and GELU in AVX2, when the CPU has it: libm's expf,
 * one element at a time, took a tenth of the encoder once the products
 * were fast. e^x = 2^n e^r with n = round(x / ln 2), |r| <= ln2/2,
 * and e^r from its Taylor series to degree 6 (relative error about 1e-7).
 * Only x <= 0 is asked for; below -87 the result is clamped near 2^-126.
 */
#define TGT __attribute__((target("avx2,fma")))

TGT static __m256 exp_nonpos(__m256 x)
{
	__m256 n, r, p;
	__m256i e;

	x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
	n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
			    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	/* ln 2 in two parts so that r keeps its low bits */
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
	p = _mm256_set1_ps(1.0f / 720);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
	return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* r[j] = exp((r[j] - mx) * scale) for j < n8 (a multiple of 8); returns
 * their sum. */
TGT static float exp_shift_avx2(float *r, size_t n8, float mx, float scale)
{
	__m256 vm = _mm256_set1_ps(mx), vs = _mm256_set1_ps(scale), acc = _mm256_setzero_ps();
	float lanes[8], sum = 0;

	for (size_t j = 0; j < n8; j += 8) {
		__m256 v = exp_nonpos(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(r + j), vm), vs));
		_mm256_storeu_ps(r + j, v);
		acc = _mm256_add_ps(acc, v);
	}
	_mm256_storeu_ps(lanes, acc);
	for (int i = 0; i < 8; i++)
		sum += lanes[i];
	return sum;
}

/* The GELU below, 8 elements at a time, for i < n8 (a multiple of 8). */
TGT static void gelu_avx2(float *x, size_t n8)
{
	const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);

	for (size_t i = 0; i < n8; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);
		__m256 z = _mm256_mul_ps(v, _mm256_set1_ps((float)M_SQRT1_2));
		__m256 a = _mm256_andnot_ps(sign, z);
		__m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(a, _mm256_set1_ps(0.3275911f), one));
		__m256 p = _mm256_set1_ps(1.061405429f), r;
		p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
		p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
		p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
		p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
		p = _mm256_mul_ps(p, t);
		r = _mm256_fnmadd_ps(p, exp_nonpos(_mm256_mul_ps(_mm256_xor_ps(a, sign), a)), one);
		r = _mm256_or_ps(r, _mm256_and_ps(sign, z));   /* erf is odd */
		_mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
						      _mm256_add_ps(one, r)));
	}
}

TGT static float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* The largest of r[0..n8) (n8 a positive multiple of 8). */
TGT static float max_avx2(const float *r, size_t n8)
{
	__m256 m = _mm256_loadu_ps(r);
	__m128 h;

	for (size_t j = 8; j < n8; j += 8)
		m = _mm256_max_ps(m, _mm256_loadu_ps(r + j));
	h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
	h = _mm_max_ps(h, _mm_movehl_ps(h, h));
	h = _mm_max_ss(h, _mm_movehdup_ps(h));
	return _mm_cvtss_f32(h);
}

/* r[j] *= a for j < n8 (a multiple of 8). */
TGT static void scale_avx2(float *r, size_t n8, float a)
{
	__m256 va = _mm256_set1_ps(a);

	for (size_t j = 0; j < n8; j += 8)
		_mm256_storeu_ps(r + j, _mm256_mul_ps(_mm256_loadu_ps(r + j), va));
}

/* One row of add_layernorm below, E a multiple of 8. The sums are float,
 * not double as in the scalar version, but spread over 8 lanes of E/8
 * terms each, and the variance is taken from the centred values in a
 * second pass, so the rounding stays far below what the real-model test
 * against sentence-transformers (cosine >= 0.999) would notice. */
TGT static void layernorm_row_avx2(float *x, const float *r, size_t E, const float *g,
				   const float *b, float eps)
{
	__m256 sum = _mm256_setzero_ps(), sq = sum, vm, vi;
	float mean;

	for (size_t j = 0; j < E; j += 8) {
		__m256 v = _mm256_loadu_ps(x + j);
		if (r) {
			v = _mm256_add_ps(v, _mm256_loadu_ps(r + j));
			_mm256_storeu_ps(x + j, v);
		}
		sum = _mm256_add_ps(sum, v);
	}
	mean = hsum8(sum) / (float)E;
	vm = _mm256_set1_ps(mean);
	for (size_t j = 0; j < E; j += 8) {
		__m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + j), vm);
		sq = _mm256_fmadd_ps(d, d, sq);
	}
	vi = _mm256_set1_ps(1.0f / sqrtf(hsum8(sq) / (float)E + eps));
	for (size_t j = 0; j < E; j += 8) {
		__m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), vm), vi);
		_mm256_storeu_ps(x + j, _mm256_fmadd_ps(d, _mm256_loadu_ps(g + j),
							_mm256_loadu_ps(b + j)));
	}
}
#endif

/* y[R, out] = x[R, in] W^T + b, with W stored [out, in]: OpenBLAS's sgemm
 * on the calling worker (backend/cpu/blas.h chose its kernels). The bias
 * is copied in first and added by the product (beta 1): one pass over y
 * fewer than adding it after, which with beta 0 also clears y first. */
static void linear(const float *x, size_t R, size_t in, const float *W, const float *b,
		   size_t out, float *y)
{
	for (size_t r = 0; r < R; r++)
		memcpy(y + r * out, b, out * sizeof(float));
	lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_TRANS, (int)R, (int)out,
		      (int)in, 1.0f, x, (int)in, W, (int)in, 1.0f, y, (int)out);
}

/* x = LayerNorm(x + r) row by row; r may be NULL. */
static void add_layernorm(const struct lp_bert *m, float *x, const float *r, size_t R,
			  size_t E, const float *g, const float *b, float eps)
{
#ifdef HAVE_X86
	if (m->avx2 && E % 8 == 0) {
		for (size_t i = 0; i < R; i++)
			layernorm_row_avx2(x + i * E, r ? r + i * E : NULL, E, g, b, eps);
		return;
	}
#endif
	for (size_t i = 0; i < R; i++) {
		float *row = x + i * E;
		double mean = 0, var = 0;
		if (r)
			for (size_t j = 0; j < E; j++)
				row[j] += r[i * E + j];
		for (size_t j = 0; j < E; j++)
			mean += row[j];
		mean /= (double)E;
		for (size_t j = 0; j < E; j++)
			var += (row[j] - mean) * (row[j] - mean);
		float inv = (float)(1.0 / sqrt(var / (double)E + eps));
		for (size_t j = 0; j < E; j++)
			row[j] = ((float)(row[j] - mean)) * inv * g[j] + b[j];
	}
}

static void embed_tokens(const struct lp_bert *m, struct scratch *s)
{
	size_t E = (size_t)m->hp.n_embd;

	for (size_t q = 0; q < s->n_seq; q++)
		for (size_t t = 0; t < s->len[q]; t++) {
			size_t row = s->start[q] + t;
			const float *w = m->tok_emb + (size_t)s->ids[row] * E;
			const float *p = m->pos_emb + t * E;
			float *x = s->x + row * E;
			for (size_t j = 0; j < E; j++)
				x[j] = w[j] + p[j] + m->type_emb[j];
		}
	add_layernorm(m, s->x, NULL, s->n_tok, E, m->emb_ln_g, m->emb_ln_b, m->hp.ln_eps);
}


/* a = softmax(scale * a) row by row (scale > 0). */
static void softmax_rows(const struct lp_bert *m, float *a, size_t rows, size_t cols,
			 float scale)
{
	for (size_t i = 0; i < rows; i++) {
		float *r = a + i * cols, mx = r[0], sum = 0;
		size_t j = 0, n8 = 0;
#ifdef HAVE_X86
		if (m->avx2 && cols >= 8) {
			n8 = cols & ~(size_t)7;
			mx = max_avx2(r, n8);
		}
#endif
		for (j = n8; j < cols; j++)
			mx = r[j] > mx ? r[j] : mx;
#ifdef HAVE_X86
		if (n8)
			sum = exp_shift_avx2(r, n8, mx, scale);
#endif
		for (j = n8; j < cols; j++)
			sum += (r[j] = expf((r[j] - mx) * scale));
		sum = 1.0f / sum;
#ifdef HAVE_X86
		if (n8)
			scale_avx2(r, n8, sum);
#endif
		for (j = n8; j < cols; j++)
			r[j] *= sum;
	}
}

static void gelu(const struct lp_bert *m, float *x, size_t n)
{
	size_t i = 0;

#ifdef HAVE_X86
	if (m->avx2) {
		i = n & ~(size_t)7;
		gelu_avx2(x, i);
	}
#endif
	for (; i < n; i++)
		x[i] = 0.5f * x[i] * (1.0f + lp_backend_cpu_erf(x[i] * (float)M_SQRT1_2));
}

struct layer_job {
	const struct lp_bert *m;
	const struct bert_layer *L;
	struct scratch *s;
};

/* Rows [r0, r1): q, k, v = x W^T + b. */
static void qkv_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct layer_job *j = arg;
	const struct bert_layer *L = j->L;
	size_t E = (size_t)j->m->hp.n_embd, R = r1 - r0, at = r0 * E;

	linear(j->s->x + at, R, E, L->wq, L->bq, E, j->s->q + at);
	linear(j->s->x + at, R, E, L->wk, L->bk, E, j->s->k + at);
	linear(j->s->x + at, R, E, L->wv, L->bv, E, j->s->v + at);
}

/*
 * Self-attention of each sequence with itself, one (sequence, head) per
 * index: ctx = softmax(Q K^T / sqrt(dh)) V. Sequences are packed without
 * padding, so no mask is needed.
 */
static void attention_task(void *arg, size_t i0, size_t i1, int tid)
{
	const struct layer_job *j = arg;
	struct scratch *s = j->s;
	size_t E = (size_t)j->m->hp.n_embd, H = (size_t)j->m->hp.n_head, dh = E / H;
	float scale = 1.0f / sqrtf((float)dh), *att = s->att + (size_t)tid * s->att_stride;

	for (size_t i = i0; i < i1; i++) {
		size_t q = i / H, h = i % H, L = s->len[q], off = s->start[q] * E + h * dh;
		lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_TRANS, (int)L, (int)L,
			      (int)dh, 1.0f, s->q + off, (int)E, s->k + off, (int)E, 0.0f, att,
			      (int)L);
		softmax_rows(j->m, att, L, L, scale);
		lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_NO_TRANS, (int)L,
			      (int)dh, (int)L, 1.0f, att, (int)L, s->v + off, (int)E, 0.0f,
			      s->ctx + off, (int)E);
	}
}

/* Rows [r0, r1), after attention: the output projection, the residual and
 * norm, the feed-forward block, the residual and norm again. */
static void ffn_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct layer_job *j = arg;
	const struct bert_layer *L = j->L;
	const struct lp_bert *m = j->m;
	struct scratch *s = j->s;
	size_t E = (size_t)m->hp.n_embd, F = (size_t)m->hp.n_ff, R = r1 - r0;
	float *x = s->x + r0 * E, *t = s->q + r0 * E, *h = s->h + r0 * F;

	linear(s->ctx + r0 * E, R, E, L->wo, L->bo, E, t);
	add_layernorm(m, x, t, R, E, L->ln1_g, L->ln1_b, m->hp.ln_eps);
	linear(x, R, E, L->wi, L->bi, F, h);
	gelu(m, h, R * F);
	linear(h, R, F, L->wf, L->bf, E, t);
	add_layernorm(m, x, t, R, E, L->ln2_g, L->ln2_b, m->hp.ln_eps);
}

static void layer_forward(const struct lp_bert *m, const struct bert_layer *L, struct scratch *s)
{
	struct layer_job j = { m, L, s };
	size_t R = s->n_tok, workers = (size_t)lp_pool_size(s->pool);
	/* one block of rows per worker: sgemm is most efficient on big blocks */
	size_t grain = (R + workers - 1) / workers;

	lp_pool_for(s->pool, R, grain, qkv_task, &j);
	lp_pool_for(s->pool, s->n_seq * (size_t)m->hp.n_head, 1, attention_task, &j);
	lp_pool_for(s->pool, R, grain, ffn_task, &j);
}

static void l2_normalize(float *v, size_t n)
{
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		ss += (double)v[i] * v[i];
	if (ss > 0) {
		float inv = (float)(1.0 / sqrt(ss));
		for (size_t i = 0; i < n; i++)
			v[i] *= inv;
	}
}

/* Run the packed batch and add each sequence's normalised mean-pooled
 * embedding into out[owner]. */
static void run_batch(const struct lp_bert *m, struct scratch *s, float *out)
{
	size_t E = (size_t)m->hp.n_embd;
	float pooled[E];

	if (!s->n_seq)
		return;
	embed_tokens(m, s);
	for (int il = 0; il < m->hp.n_layer; il++)
		layer_forward(m, &m->layers[il], s);
	for (size_t q = 0; q < s->n_seq; q++) {
		memset(pooled, 0, sizeof(pooled));
		for (size_t t = 0; t < s->len[q]; t++) {
			const float *x = s->x + (s->start[q] + t) * E;
			for (size_t j = 0; j < E; j++)
				pooled[j] += x[j];
		}
		l2_normalize(pooled, E);
		for (size_t j = 0; j < E; j++)
			out[s->owner[q] * E + j] += pooled[j];
	}
	s->n_seq = s->n_tok = 0;
}

/* Queue [CLS] ids[0..n) [SEP] (or the ids as given when `raw`) for text
 * `owner`, running the batch first when it is full. */
static void queue(const struct lp_bert *m, struct scratch *s, const int32_t *ids, size_t n,
		  int raw, size_t owner, float *out)
{
	size_t need = raw ? n : n + 2;
	int32_t *dst;

	if (s->n_tok + need > s->cap || s->n_seq == s->cap)
		run_batch(m, s, out);
	dst = s->ids + s->n_tok;
	if (raw) {
		memcpy(dst, ids, n * sizeof(*ids));
	} else {
		dst[0] = lp_wp_cls(m->wp);
		memcpy(dst + 1, ids, n * sizeof(*ids));
		dst[n + 1] = lp_wp_sep(m->wp);
	}
	s->start[s->n_seq] = s->n_tok;
	s->len[s->n_seq] = need;
	s->owner[s->n_seq] = owner;
	s->n_seq++;
	s->n_tok += need;
}

/* Queue the windows of one text's ids. */
static void queue_windows(const struct lp_bert *m, struct scratch *s, const int32_t *ids,
			  size_t n, size_t owner, float *out)
{
	size_t body = m->window - 2;

	if (n <= body) {
		queue(m, s, ids, n, 0, owner, out);
		return;
	}
	for (size_t at = 0;; at += m->stride) {
		if (at + body >= n) {
			queue(m, s, ids + (n - body), body, 0, owner, out);
			break;
		}
		queue(m, s, ids + at, body, 0, owner, out);
	}
}

/*
 * Rows of scratch for texts of lens[0..n) bytes: all of them when they fit
 * one batch, else a full batch. A text yields at most 2 tokens per byte (a
 * Hangul syllable of 3 bytes decomposes into at most 3 jamo; everything else
 * needs a byte per token), so its longest window has at most
 * min(2 * len, window - 2) + 2 rows, which this never undercuts.
 */
static size_t rows_needed(const size_t *lens, size_t n)
{
	size_t rows = 0;

	for (size_t i = 0; i < n; i++) {
		size_t b = lens[i] < LP_BERT_BATCH_TOKENS ? 2 * lens[i] + 2 : LP_BERT_BATCH_TOKENS;
		if (b >= LP_BERT_BATCH_TOKENS - rows)
			return LP_BERT_BATCH_TOKENS;
		rows += b;
	}
	return rows;
}

enum lp_status lp_bert_embed(const struct lp_bert *m, const char *const *texts,
			     const size_t *lens, size_t n, float *out, struct lp_diag *d)
{
	return lp_bert_embed_on(m, NULL, texts, lens, n, out, d);
}

enum lp_status lp_bert_embed_on(const struct lp_bert *m, struct lp_pool *pool,
				const char *const *texts, const size_t *lens, size_t n,
				float *out, struct lp_diag *d)
{
	size_t E = (size_t)m->hp.n_embd;
	struct lp_wp_ids ids = { 0 };
	struct scratch s;
	enum lp_status st;

	if (!n)
		return LP_OK;
	if ((st = scratch_init(&s, m, pool, rows_needed(lens, n), d)))
		return st;
	memset(out, 0, n * E * sizeof(float));
	for (size_t i = 0; i < n; i++) {
		ids.n = 0;
		if ((st = lp_wp_tokenize(m->wp, texts[i], lens[i], &ids, d)))
			goto done;
		queue_windows(m, &s, ids.ids, ids.n, i, out);
	}
	run_batch(m, &s, out);
	for (size_t i = 0; i < n; i++)
		l2_normalize(out + i * E, E);
done:
	lp_wp_ids_release(&ids);
	scratch_release(&s);
	return st;
}

enum lp_status lp_bert_embed_ids(const struct lp_bert *m, const int32_t *const *ids,
				 const size_t *n_ids, size_t n, float *out, struct lp_diag *d)
{
	size_t E = (size_t)m->hp.n_embd, rows = 0;
	struct scratch s;
	enum lp_status st;

	for (size_t i = 0; i < n; i++) {
		if (n_ids[i] < 1 || n_ids[i] > m->window)
			return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
					   "sequence %zu has %zu tokens, allowed 1..%zu", i, n_ids[i], m->window);
		for (size_t t = 0; t < n_ids[i]; t++)
			if (ids[i][t] < 0 || ids[i][t] >= m->hp.n_vocab)
				return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
						   "token id %d out of range", (int)ids[i][t]);
	}
	if (!n)
		return LP_OK;
	for (size_t i = 0; i < n && rows < LP_BERT_BATCH_TOKENS; i++)
		rows += n_ids[i];
	if ((st = scratch_init(&s, m, NULL, rows < LP_BERT_BATCH_TOKENS ? rows : LP_BERT_BATCH_TOKENS, d)))
		return st;
	memset(out, 0, n * E * sizeof(float));
	for (size_t i = 0; i < n; i++)
		queue(m, &s, ids[i], n_ids[i], 1, i, out);
	run_batch(m, &s, out);
	for (size_t i = 0; i < n; i++)
		l2_normalize(out + i * E, E);
	scratch_release(&s);
	return LP_OK;
}
