#include "retrieve/bert.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include "backend/backend.h"
#include "core/fileio.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/threadpool.h"
#include "quant/quant.h"
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
	int n_threads;                  /* the own CPU backend's; <= 0: online CPUs */
	struct bert_run *run;           /* the backend and the weights on it */
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
	/* and per layer the fused Q/K/V weights and biases, and the position
	 * table with the token type folded in */
	size_t n_w = 6 + (size_t)hp->n_layer * (TENSORS_PER_LAYER + 2);
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

static enum lp_status run_new(struct lp_bert *m, struct lp_backend *be, struct lp_diag *d);
static void run_free(struct bert_run *r);

enum lp_status lp_bert_load(const char *dir, struct lp_bert **out, struct lp_diag *d)
{
	return lp_bert_load_on(dir, NULL, out, d);
}

enum lp_status lp_bert_load_on(const char *dir, struct lp_backend *be, struct lp_bert **out,
			       struct lp_diag *d)
{
	char path[4096];
	struct lp_bert *m;
	enum lp_status s;

	*out = NULL;
	if (!(m = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*m), d)))
		return LP_E_NOMEM;
	snprintf(path, sizeof(path), "%s/config.json", dir);
	if ((s = parse_config(m, path, d)))
		goto fail;
	snprintf(path, sizeof(path), "%s/sentence_bert_config.json", dir);
	if ((s = parse_sbert_config(m, path, d)))
		goto fail;
	snprintf(path, sizeof(path), "%s/vocab.txt", dir);
	if ((s = lp_wordpiece_load(path, &m->wp, d)))
		goto fail;
	if (lp_wordpiece_vocab_size(m->wp) != (size_t)m->hp.n_vocab) {
		s = lp_diag_set(d, LP_E_MODEL, path, 0, 0,
				"vocabulary has %zu tokens, the model (vocab_size) %d",
				lp_wordpiece_vocab_size(m->wp), m->hp.n_vocab);
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/model.safetensors", dir);
	if ((s = lp_st_open(path, &m->st, d)) || (s = bind_weights(m, d)) ||
	    (s = run_new(m, be, d)))
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
	run_free(m->run);
	for (size_t i = 0; i < m->n_owned; i++)
		lp_mem_free(m->owned[i]);
	lp_mem_free(m->owned);
	lp_mem_free(m->layers);
	lp_st_free(m->st);
	lp_wordpiece_free(m->wp);
	lp_mem_free(m);
}

size_t lp_bert_dim(const struct lp_bert *m) { return (size_t)m->hp.n_embd; }
const struct lp_bert_hparams *lp_bert_hparams(const struct lp_bert *m) { return &m->hp; }
const struct lp_wordpiece *lp_bert_tokenizer(const struct lp_bert *m) { return m->wp; }
size_t lp_bert_window(const struct lp_bert *m) { return m->window; }
size_t lp_bert_stride(const struct lp_bert *m) { return m->stride; }

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

/* ---- the backend ---- */

/* One layer's weights in the backend's address space. */
struct run_layer {
	/* [3E, E], [E, E], [F, E], [E, F]; biases [3E], [E], [F], [E] */
	struct lp_backend_mat qkv, o, in, out;
	const float *ln1_g, *ln1_b, *ln2_g, *ln2_b;
};

/*
 * What runs the model: the backend (the caller's, or a CPU backend of the
 * model's own, reopened when the thread count changes), the weights
 * imported into it (the CPU aliases the host floats, a device copies
 * them), and a lock, since a backend serves one thread at a time.
 */
struct bert_run {
	pthread_mutex_t lock;
	struct lp_backend *be;
	int own_be, be_threads;
	struct lp_backend_buf **bufs;   /* imported weights */
	size_t n_bufs, cap_bufs;
	struct lp_backend_mat tok, pos;  /* [n_vocab, E], [n_pos, E] (+ type 0) */
	const float *emb_ln_g, *emb_ln_b;
	struct run_layer *layers;
	int f16;                        /* the products' weights as f16 */
	uint16_t **h16;                 /* host f16 copies the CPU aliases */
	size_t n_h16;
};

static struct lp_backend_mat mat_f32(const float *data, uint64_t rows, uint64_t cols)
{
	return (struct lp_backend_mat){ LP_Q_F32, data, rows, cols, cols * sizeof(float), 0, NULL,
					LP_MAT_ROWS };
}

/* A layer's products, as bits of bf16_products(). */
enum { PROD_QKV = 1, PROD_O = 2, PROD_IN = 4, PROD_OUT = 8 };

/*
 * The products whose F32 weights the backend may run in BF16
 * (lp_backend_mat.bf16: the CPU on AVX-512 BF16, about twice the float
 * rate): every one with LPIPE_ENCODER_WEIGHTS=bf16, none with =f32, and
 * by default the feed-forward output product alone. Each product in BF16
 * moves MiniLM's vectors by about as much as the share of the work it
 * holds: all four by 2.0e-5 of cosine at worst from sentence-transformers
 * (on bench/embed's 200 chunks), the output product (a third of the
 * work) by 4.9e-6 (5.4e-6 on 500 chunks), the input one by 6.7e-6, Q/K/V
 * by 6.7e-6, both feed-forward products of the first three layers (half
 * the work) by 1.1e-5 on 500 chunks. So the default keeps the output
 * product alone, within 1e-5 with room to spare, for a tenth of the time.
 */
static int bf16_products(void)
{
	const char *e = getenv("LPIPE_ENCODER_WEIGHTS");

	if (e && !strcmp(e, "bf16"))
		return PROD_QKV | PROD_O | PROD_IN | PROD_OUT;
	if (e && !strcmp(e, "f32"))
		return 0;
	return PROD_OUT;
}

/* Import n host floats into the run's backend; NULL with d filled. */
static const float *import(struct bert_run *r, const float *host, size_t n, struct lp_diag *d)
{
	struct lp_backend_buf *b;

	if (r->n_bufs == r->cap_bufs)
		return NULL; /* sized by bind_run: cannot happen */
	b = r->be->ops->import(r->be, host, n * sizeof(float), LP_MEM_WEIGHTS, d);
	if (!b)
		return NULL;
	r->bufs[r->n_bufs++] = b;
	return b->data;
}

/* A product's weights, rows x cols floats at `host`: imported as they are
 * (allowed BF16 when `bf16`), or as f16 when r->f16 (a device then
 * multiplies f16 by f16 into f32 sums: cublasGemmEx on the tensor cores). */
static enum lp_status import_mat(struct bert_run *r, const float *host, uint64_t rows,
				 uint64_t cols, int bf16, struct lp_backend_mat *out,
				 struct lp_diag *d)
{
	size_t n = (size_t)(rows * cols);
	struct lp_backend_buf *b;
	uint16_t *h;

	if (!r->f16) {
		const float *p = import(r, host, n, d);
		if (!p)
			return d && d->status ? d->status : LP_E_NOMEM;
		*out = mat_f32(p, rows, cols);
		out->bf16 = bf16;
		return LP_OK;
	}
	if (r->n_bufs == r->cap_bufs || !(h = lp_mem_alloc(LP_MEM_WEIGHTS, n * 2, d)))
		return LP_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		h[i] = lp_fp32_to_fp16(host[i]);
	if (!(b = r->be->ops->import(r->be, h, n * 2, LP_MEM_WEIGHTS, d))) {
		lp_mem_free(h);
		return d && d->status ? d->status : LP_E_NOMEM;
	}
	r->bufs[r->n_bufs++] = b;
	if (b->place == LP_BACKEND_DEVICE)
		lp_mem_free(h); /* copied */
	else
		r->h16[r->n_h16++] = h; /* aliased: kept as long as the buffer */
	*out = (struct lp_backend_mat){ LP_Q_F16, b->data, rows, cols, (size_t)cols * 2, 0, NULL,
					LP_MAT_ROWS };
	return LP_OK;
}

static void unbind_run(struct bert_run *r)
{
	for (size_t i = 0; i < r->n_bufs; i++)
		r->be->ops->buf_free(r->be, r->bufs[i]);
	r->n_bufs = 0;
	for (size_t i = 0; i < r->n_h16; i++)
		lp_mem_free(r->h16[i]);
	r->n_h16 = 0;
}

/* A host array of n floats owned by the model (freed with it). */
static float *owned_floats(struct lp_bert *m, size_t n, struct lp_diag *d)
{
	float *p = lp_mem_alloc(LP_MEM_WEIGHTS, n * sizeof(float), d);

	if (p)
		m->owned[m->n_owned++] = p;
	return p;
}

/* Host tables the backend gets: per layer Q, K and V stacked into one
 * [3E, E] matrix (one product instead of three) with their biases; the
 * position table with token type 0 added (BERT's single-segment input). */
static enum lp_status fuse_host(struct lp_bert *m, float ***qkv, float **pos,
				struct lp_diag *d)
{
	size_t E = (size_t)m->hp.n_embd, P = (size_t)m->hp.n_pos;

	if (!(*qkv = lp_mem_calloc(LP_MEM_OTHER, (size_t)m->hp.n_layer * 2, sizeof(float *), d)))
		return LP_E_NOMEM;
	for (int il = 0; il < m->hp.n_layer; il++) {
		const struct bert_layer *L = &m->layers[il];
		float *w = owned_floats(m, 3 * E * E, d), *b = owned_floats(m, 3 * E, d);
		if (!w || !b)
			return LP_E_NOMEM;
		memcpy(w, L->wq, E * E * sizeof(float));
		memcpy(w + E * E, L->wk, E * E * sizeof(float));
		memcpy(w + 2 * E * E, L->wv, E * E * sizeof(float));
		memcpy(b, L->bq, E * sizeof(float));
		memcpy(b + E, L->bk, E * sizeof(float));
		memcpy(b + 2 * E, L->bv, E * sizeof(float));
		(*qkv)[2 * il] = w;
		(*qkv)[2 * il + 1] = b;
	}
	if (!(*pos = owned_floats(m, P * E, d)))
		return LP_E_NOMEM;
	for (size_t p = 0; p < P; p++)
		for (size_t j = 0; j < E; j++)
			(*pos)[p * E + j] = m->pos_emb[p * E + j] + m->type_emb[j];
	return LP_OK;
}

/* Import every weight into r->be. */
static enum lp_status bind_run(struct lp_bert *m, struct bert_run *r, float **qkv,
			       const float *pos, struct lp_diag *d)
{
	size_t E = (size_t)m->hp.n_embd, F = (size_t)m->hp.n_ff;
	int bf16 = bf16_products();
	const float *p;

#define IMP(dst, src, n) do { if (!((dst) = import(r, (src), (n), d))) return d && d->status ? d->status : LP_E_NOMEM; } while (0)
	IMP(p, m->tok_emb, (size_t)m->hp.n_vocab * E);
	r->tok = mat_f32(p, (uint64_t)m->hp.n_vocab, E);
	IMP(p, pos, (size_t)m->hp.n_pos * E);
	r->pos = mat_f32(p, (uint64_t)m->hp.n_pos, E);
	IMP(r->emb_ln_g, m->emb_ln_g, E);
	IMP(r->emb_ln_b, m->emb_ln_b, E);
	for (int il = 0; il < m->hp.n_layer; il++) {
		const struct bert_layer *L = &m->layers[il];
		struct run_layer *R = &r->layers[il];
		enum lp_status st;
		if ((st = import_mat(r, qkv[2 * il], 3 * E, E, bf16 & PROD_QKV, &R->qkv, d)) ||
		    (st = import_mat(r, L->wo, E, E, bf16 & PROD_O, &R->o, d)) ||
		    (st = import_mat(r, L->wi, F, E, bf16 & PROD_IN, &R->in, d)) ||
		    (st = import_mat(r, L->wf, E, F, bf16 & PROD_OUT, &R->out, d)))
			return st;
		IMP(R->qkv.bias, qkv[2 * il + 1], 3 * E);
		IMP(R->o.bias, L->bo, E);
		IMP(R->in.bias, L->bi, F);
		IMP(R->out.bias, L->bf, E);
		IMP(R->ln1_g, L->ln1_g, E);
		IMP(R->ln1_b, L->ln1_b, E);
		IMP(R->ln2_g, L->ln2_g, E);
		IMP(R->ln2_b, L->ln2_b, E);
	}
#undef IMP
	return LP_OK;
}

/* The model's own CPU backend of m->n_threads threads, weights bound. */
static enum lp_status open_own(struct lp_bert *m, struct bert_run *r, struct lp_diag *d)
{
	struct lp_backend_params p = lp_backend_default_params();
	enum lp_status st;

	p.n_threads = m->n_threads;
	if ((st = lp_backend_cpu_open(&p, &r->be, d)))
		return st;
	r->own_be = 1;
	r->be_threads = m->n_threads;
	return LP_OK;
}

/*
 * Whether the products take f16 weights: on a device, unless
 * LPIPE_ENCODER_WEIGHTS=f32 (f16 halves the bytes and runs on the tensor
 * cores; the sums stay f32, and embeddings stay within cosine 0.9999 of
 * the CPU's); on the CPU f32, unless LPIPE_ENCODER_WEIGHTS=f16 (tests).
 * On the CPU some or all products may round their f32 weights to BF16
 * (bf16_products).
 */
static int want_f16(const struct lp_backend *be)
{
	const char *e = getenv("LPIPE_ENCODER_WEIGHTS");

	if (e && !strcmp(e, "f16"))
		return 1;
	if (e && !strcmp(e, "f32"))
		return 0;
	return strcmp(be->name, "cpu") != 0;
}

static enum lp_status bind_all(struct lp_bert *m, struct bert_run *r, struct lp_diag *d)
{
	r->f16 = want_f16(r->be);
	/* the fused tables are the last ones owned: find them again */
	size_t L = (size_t)m->hp.n_layer, first = m->n_owned - (2 * L + 1);
	float **qkv = m->owned + first;

	return bind_run(m, r, qkv, m->owned[m->n_owned - 1], d);
}

static enum lp_status run_new(struct lp_bert *m, struct lp_backend *be, struct lp_diag *d)
{
	struct bert_run *r;
	float **qkv = NULL, *pos = NULL;
	enum lp_status st;

	if (!(r = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*r), d)))
		return LP_E_NOMEM;
	pthread_mutex_init(&r->lock, NULL);
	m->run = r;
	r->cap_bufs = 4 + (size_t)m->hp.n_layer * 14;
	if (!(r->bufs = lp_mem_calloc(LP_MEM_OTHER, r->cap_bufs, sizeof(*r->bufs), d)) ||
	    !(r->h16 = lp_mem_calloc(LP_MEM_OTHER, r->cap_bufs, sizeof(*r->h16), d)) ||
	    !(r->layers = lp_mem_calloc(LP_MEM_OTHER, (size_t)m->hp.n_layer, sizeof(*r->layers), d)))
		return LP_E_NOMEM;
	st = fuse_host(m, &qkv, &pos, d);
	lp_mem_free(qkv); /* the arrays stay in m->owned */
	if (st)
		return st;
	if (be)
		r->be = be;
	else if ((st = open_own(m, r, d)))
		return st;
	return bind_all(m, r, d);
}

static void run_free(struct bert_run *r)
{
	if (!r)
		return;
	if (r->be) {
		unbind_run(r);
		if (r->own_be)
			lp_backend_free(r->be);
	}
	pthread_mutex_destroy(&r->lock);
	lp_mem_free(r->h16);
	lp_mem_free(r->bufs);
	lp_mem_free(r->layers);
	lp_mem_free(r);
}

void lp_bert_set_threads(struct lp_bert *m, int n_threads)
{
	m->n_threads = n_threads;
}

/* A model of its own CPU backend follows lp_bert_set_threads: reopen it
 * when the count changed (weights are aliased, so binding is cheap). */
static enum lp_status follow_threads(struct lp_bert *m, struct lp_diag *d)
{
	struct bert_run *r = m->run;

	if (!r->own_be || r->be_threads == m->n_threads)
		return LP_OK;
	unbind_run(r);
	lp_backend_free(r->be);
	r->be = NULL;
	r->own_be = 0;
	enum lp_status st = open_own(m, r, d);
	return st ? st : bind_all(m, r, d);
}

/* ---- forward pass ---- */

/* One window of one text: `len` ids at `at` of the call's id array. */
struct win {
	size_t owner, at, len, order;
};

/*
 * A step's buffers in the backend for `cap` rows (n_seq * L, sequences
 * padded to L rows): x the hidden state, t a second [cap, E], qkv the
 * fused projections, ctx attention's output, h the intermediate, pooled
 * the sequences' embeddings, lens their lengths; and host staging.
 */
struct step {
	struct lp_backend *be;
	size_t cap, n_seq_cap;
	struct lp_backend_buf *x, *t, *qkv, *ctx, *h, *pooled, *lens;
	int32_t *ids, *pos, *hlens;   /* host: [cap], [cap], [cap] */
	float *hpooled;               /* host: [cap, E] */
};

static void step_release(struct step *s)
{
	struct lp_backend_buf *b[] = { s->x, s->t, s->qkv, s->ctx, s->h, s->pooled, s->lens };

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		if (b[i])
			s->be->ops->buf_free(s->be, b[i]);
	lp_mem_free(s->ids);
	lp_mem_free(s->pos);
	lp_mem_free(s->hlens);
	lp_mem_free(s->hpooled);
	memset(s, 0, sizeof(*s));
}

static enum lp_status step_init(struct step *s, const struct lp_bert *m, struct lp_backend *be,
				size_t cap, size_t max_len, struct lp_diag *d)
{
	size_t E = (size_t)m->hp.n_embd, F = (size_t)m->hp.n_ff;
	struct lp_backend_limits lim = { 0 };
	const struct lp_backend_ops *o = be->ops;
	enum lp_mem_tag tag = LP_MEM_SCRATCH;
	enum lp_status st;

	memset(s, 0, sizeof(*s));
	s->be = be;
	s->cap = cap;
	lim.n_rows = (uint32_t)cap;
	lim.max_cols = F > E ? F : E;
	lim.max_rows = 3 * E > F ? 3 * E : F;
	lim.n_head = (uint32_t)m->hp.n_head;
	lim.enc_len = (uint32_t)max_len;
	if ((st = o->reserve(be, &lim, d)))
		return st;
#define BUF(b, bytes) (((b) = o->buf_alloc(be, be->place, tag, (bytes), d)) != NULL)
	if (!BUF(s->x, cap * E * sizeof(float)) || !BUF(s->t, cap * E * sizeof(float)) ||
	    !BUF(s->qkv, cap * 3 * E * sizeof(float)) || !BUF(s->ctx, cap * E * sizeof(float)) ||
	    !BUF(s->h, cap * F * sizeof(float)) || !BUF(s->pooled, cap * E * sizeof(float)) ||
	    !BUF(s->lens, cap * sizeof(int32_t)) ||
	    !(s->ids = lp_mem_alloc(LP_MEM_SCRATCH, cap * sizeof(int32_t), d)) ||
	    !(s->pos = lp_mem_alloc(LP_MEM_SCRATCH, cap * sizeof(int32_t), d)) ||
	    !(s->hlens = lp_mem_alloc(LP_MEM_SCRATCH, cap * sizeof(int32_t), d)) ||
	    !(s->hpooled = lp_mem_alloc(LP_MEM_SCRATCH, cap * E * sizeof(float), d))) {
		step_release(s);
		return LP_E_NOMEM;
	}
#undef BUF
	return LP_OK;
}

#define F32(b) ((float *)(b)->data)

/* One encoder layer over the n = n_seq * L rows of the step. */
static void layer_forward(const struct lp_bert *m, const struct run_layer *R, struct step *s,
			  size_t n_seq, size_t L)
{
	struct lp_backend *be = s->be;
	const struct lp_backend_ops *o = be->ops;
	size_t E = (size_t)m->hp.n_embd, F = (size_t)m->hp.n_ff, n = n_seq * L;
	size_t H = (size_t)m->hp.n_head;
	float *x = F32(s->x), *t = F32(s->t), *qkv = F32(s->qkv), *ctx = F32(s->ctx);
	float *h = F32(s->h);
	struct lp_backend_enc_attn a = {
		.q = qkv, .k = qkv + E, .v = qkv + 2 * E, .ld = 3 * E, .out = ctx,
		.lens = (const int32_t *)s->lens->data, .n_seq = (uint32_t)n_seq,
		.L = (uint32_t)L, .n_head = (uint32_t)H, .head_dim = (uint32_t)(E / H),
		.scale = 1.0f / sqrtf((float)(E / H)),
	};

	/* the products add their biases (lp_backend_mat.bias) */
	o->matmul(be, &R->qkv, x, n, qkv, 3 * E);
	o->enc_attention(be, &a);
	o->matmul(be, &R->o, ctx, n, t, E);
	o->add(be, t, x, n, E, E);
	o->layernorm(be, x, t, R->ln1_g, R->ln1_b, n, E, m->hp.ln_eps);
	o->matmul(be, &R->in, x, n, h, F);
	o->gelu(be, h, n * F);
	o->matmul(be, &R->out, h, n, t, E);
	o->add(be, t, x, n, E, E);
	o->layernorm(be, x, t, R->ln2_g, R->ln2_b, n, E, m->hp.ln_eps);
}

/* Run windows w[0..n_seq) (all at most L tokens) padded to L rows, and
 * add each one's normalised mean-pooled embedding into out[owner]. */
static enum lp_status run_batch(const struct lp_bert *m, struct step *s, const int32_t *ids,
				const struct win *w, size_t n_seq, size_t L, float *out,
				struct lp_diag *d)
{
	const struct bert_run *r = m->run;
	struct lp_backend *be = s->be;
	const struct lp_backend_ops *o = be->ops;
	size_t E = (size_t)m->hp.n_embd, n = n_seq * L;
	enum lp_status st;

	for (size_t q = 0; q < n_seq; q++) {
		for (size_t t = 0; t < L; t++) {
			/* padding rows take id 0 ([PAD]): finite, masked, never pooled */
			s->ids[q * L + t] = t < w[q].len ? ids[w[q].at + t] : 0;
			s->pos[q * L + t] = (int32_t)t;
		}
		s->hlens[q] = (int32_t)w[q].len;
	}
	o->upload(be, s->lens, 0, s->hlens, n_seq * sizeof(int32_t));
	o->get_rows(be, &r->tok, s->ids, n, F32(s->x));
	o->get_rows(be, &r->pos, s->pos, n, F32(s->t));
	o->add(be, F32(s->x), F32(s->t), n, E, E);
	o->layernorm(be, F32(s->x), F32(s->x), r->emb_ln_g, r->emb_ln_b, n, E, m->hp.ln_eps);
	for (int il = 0; il < m->hp.n_layer; il++)
		layer_forward(m, &r->layers[il], s, n_seq, L);
	o->mean_pool(be, F32(s->pooled), F32(s->x), (const int32_t *)s->lens->data, n_seq, L, E);
	if ((st = o->download(be, s->hpooled, s->pooled, 0, n_seq * E * sizeof(float), d)))
		return st;
	for (size_t q = 0; q < n_seq; q++)
		for (size_t j = 0; j < E; j++)
			out[w[q].owner * E + j] += s->hpooled[q * E + j];
	return LP_OK;
}

/* Longest first; equal lengths in the order queued (a stable sort). */
static int by_len_desc(const void *a, const void *b)
{
	const struct win *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Rows a step takes at most: a device runs large batches (launches and
 * transfers are paid per step), the CPU batches that stay in cache. */
static size_t step_tokens(const struct lp_backend *be)
{
	return strcmp(be->name, "cpu") ? LP_BERT_DEVICE_BATCH_TOKENS : LP_BERT_BATCH_TOKENS;
}

/*
 * Run windows w[0..nw) (ids in `ids`), bucketed by length: sorted longest
 * first, then cut into steps of at most `cap` rows where every window is
 * padded to the step's first (longest) one, so padding stays small.
 */
static enum lp_status run_windows(const struct lp_bert *m, const int32_t *ids, struct win *w,
				  size_t nw, float *out, struct lp_diag *d)
{
	struct lp_backend *be = m->run->be;
	size_t cap = step_tokens(be), need = 0, tokens = 0, rows = 0, steps = 0;
	struct step s;
	enum lp_status st = LP_OK;

	if (!nw)
		return LP_OK;
	qsort(w, nw, sizeof(*w), by_len_desc);
	if (cap < m->window)
		cap = m->window;
	/* the largest step these windows make, so few short texts stay cheap */
	for (size_t i = 0; i < nw;) {
		size_t L = w[i].len, k = cap / L;
		if (k > nw - i)
			k = nw - i;
		if (k * L > need)
			need = k * L;
		i += k;
	}
	if ((st = step_init(&s, m, be, need, w[0].len, d)))
		return st;
	for (size_t i = 0; i < nw && st == LP_OK; steps++) {
		size_t L = w[i].len, k = need / L;
		if (k > nw - i)
			k = nw - i;
		for (size_t j = i; j < i + k; j++)
			tokens += w[j].len;
		rows += k * L;
		st = run_batch(m, &s, ids, w + i, k, L, out, d);
		i += k;
	}
	step_release(&s);
	lp_debug("encoder: %zu windows, %zu tokens in %zu steps of %zu rows with padding (%s)",
		 nw, tokens, steps, rows, be->name);
	return st;
}

/* Append n ids to v. */
static enum lp_status push_ids(struct lp_wordpiece_ids *v, const int32_t *ids, size_t n,
			       struct lp_diag *d)
{
	if (v->n + n > v->cap) {
		size_t cap = v->cap ? v->cap : 1024;
		while (cap < v->n + n)
			cap *= 2;
		int32_t *p = lp_mem_realloc(LP_MEM_SCRATCH, v->ids, cap * sizeof(*p), d);
		if (!p)
			return LP_E_NOMEM;
		v->ids = p;
		v->cap = cap;
	}
	memcpy(v->ids + v->n, ids, n * sizeof(*ids));
	v->n += n;
	return LP_OK;
}

/* The windows of a text of n ids, queued at ids->n: each [CLS] + a stretch
 * of at most window-2 ids + [SEP]. */
static enum lp_status queue_windows(const struct lp_bert *m, struct lp_wordpiece_ids *all,
				    const int32_t *ids, size_t n, size_t owner, struct win **w,
				    size_t *nw, size_t *cap_w, struct lp_diag *d)
{
	size_t body = m->window - 2;

	for (size_t at = 0;; at += m->stride) {
		size_t from = n <= body ? 0 : at + body >= n ? n - body : at;
		size_t len = n - from < body ? n - from : body;
		int32_t cls = lp_wordpiece_cls(m->wp), sep = lp_wordpiece_sep(m->wp);
		enum lp_status st;
		if (*nw == *cap_w) {
			size_t nc = *cap_w ? 2 * *cap_w : 64;
			struct win *g = lp_mem_realloc(LP_MEM_SCRATCH, *w, nc * sizeof(**w), d);
			if (!g)
				return LP_E_NOMEM;
			*w = g;
			*cap_w = nc;
		}
		(*w)[*nw] = (struct win){ owner, all->n, len + 2, *nw };
		(*nw)++;
		if ((st = push_ids(all, &cls, 1, d)) || (st = push_ids(all, ids + from, len, d)) ||
		    (st = push_ids(all, &sep, 1, d)))
			return st;
		if (n <= body || at + body >= n)
			return LP_OK;
	}
}

static void normalize_rows(float *out, size_t n, size_t E)
{
	for (size_t i = 0; i < n; i++) {
		float *v = out + i * E;
		double ss = 0;
		for (size_t j = 0; j < E; j++)
			ss += (double)v[j] * v[j];
		if (ss > 0) {
			float inv = (float)(1.0 / sqrt(ss));
			for (size_t j = 0; j < E; j++)
				v[j] *= inv;
		}
	}
}

/* Ids held per group of texts: windows are bucketed within a group. */
#define GROUP_IDS (1u << 18)

enum lp_status lp_bert_embed(const struct lp_bert *m, const char *const *texts,
			     const size_t *lens, size_t n, float *out, struct lp_diag *d)
{
	size_t E = (size_t)m->hp.n_embd, nw = 0, cap_w = 0;
	struct lp_wordpiece_ids ids = { 0 }, all = { 0 };
	struct win *w = NULL;
	struct bert_run *r = m->run;
	enum lp_status st;

	if (!n)
		return LP_OK;
	pthread_mutex_lock(&r->lock);
	if ((st = follow_threads((struct lp_bert *)m, d)))
		goto done;
	memset(out, 0, n * E * sizeof(float));
	for (size_t i = 0; i < n; i++) {
		ids.n = 0;
		if ((st = lp_wordpiece_tokenize(m->wp, texts[i], lens[i], &ids, d)) ||
		    (st = queue_windows(m, &all, ids.ids, ids.n, i, &w, &nw, &cap_w, d)))
			goto done;
		if (all.n >= GROUP_IDS || i + 1 == n) {
			if ((st = run_windows(m, all.ids, w, nw, out, d)))
				goto done;
			all.n = 0;
			nw = 0;
		}
	}
	normalize_rows(out, n, E);
done:
	pthread_mutex_unlock(&r->lock);
	lp_wordpiece_ids_release(&ids);
	lp_wordpiece_ids_release(&all);
	lp_mem_free(w);
	return st;
}

enum lp_status lp_bert_embed_ids(const struct lp_bert *m, const int32_t *const *ids,
				 const size_t *n_ids, size_t n, float *out, struct lp_diag *d)
{
	size_t E = (size_t)m->hp.n_embd, total = 0;
	struct win *w = NULL;
	int32_t *flat = NULL;
	struct bert_run *r = m->run;
	enum lp_status st;

	for (size_t i = 0; i < n; i++) {
		if (n_ids[i] < 1 || n_ids[i] > m->window)
			return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
					   "sequence %zu has %zu tokens, allowed 1..%zu", i, n_ids[i], m->window);
		for (size_t t = 0; t < n_ids[i]; t++)
			if (ids[i][t] < 0 || ids[i][t] >= m->hp.n_vocab)
				return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
						   "token id %d out of range", (int)ids[i][t]);
		total += n_ids[i];
	}
	if (!n)
		return LP_OK;
	if (!(w = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*w), d)) ||
	    !(flat = lp_mem_alloc(LP_MEM_SCRATCH, total * sizeof(*flat), d))) {
		lp_mem_free(w);
		return LP_E_NOMEM;
	}
	total = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(flat + total, ids[i], n_ids[i] * sizeof(*flat));
		w[i] = (struct win){ i, total, n_ids[i], i };
		total += n_ids[i];
	}
	pthread_mutex_lock(&r->lock);
	memset(out, 0, n * E * sizeof(float));
	if (!(st = follow_threads((struct lp_bert *)m, d)) &&
	    !(st = run_windows(m, flat, w, n, out, d)))
		normalize_rows(out, n, E);
	pthread_mutex_unlock(&r->lock);
	lp_mem_free(w);
	lp_mem_free(flat);
	return st;
}
