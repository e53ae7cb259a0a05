/*
 * forward.c - the transformer, read top to bottom in layer_step:
 * embedding, then per layer RMSNorm -> Q/K/V (+bias) -> RoPE -> cache ->
 * causal grouped-query attention -> output projection -> residual ->
 * RMSNorm -> SwiGLU FFN -> residual, and finally RMSNorm -> logits.
 *
 * Every operation is a whole-step op of a backend (backend/backend.h);
 * this file holds no arithmetic of its own. Activations are row-major
 * (token, feature). The layers are split into at most two parts, each run
 * by one backend with its own activations, KV cache and (on a device)
 * copy of the weights; the residual stream x moves between them.
 */
#include "model/forward.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/threadpool.h"
#include "model/kvcache.h"
#include "quant/rowgroup.h"

/* One layer's weights and cache, in its backend's address space. */
struct layer_w {
	const float *attn_norm;       /* (n_embd) */
	struct lp_backend_mat wq;     /* (n_head*head_dim rows, n_embd cols) */
	struct lp_backend_mat wk;     /* (n_head_kv*head_dim, n_embd) */
	struct lp_backend_mat wv;     /* (n_head_kv*head_dim, n_embd) */
	struct lp_backend_mat wo;     /* (n_embd, n_head*head_dim) */
	const float *bq, *bk, *bv;    /* qwen2's biases, else NULL */
	const float *ffn_norm;        /* (n_embd) */
	struct lp_backend_mat w_gate; /* (n_ff, n_embd) */
	struct lp_backend_mat w_up;   /* (n_ff, n_embd) */
	struct lp_backend_mat w_down; /* (n_embd, n_ff) */
	struct lp_backend_kv kv;      /* (n_ctx, kv_dim) keys and values */
};

/* Layers [l0, l1) on one backend. */
struct part {
	struct lp_backend *be;
	uint32_t l0, l1;
	int streams;        /* reads a streamed model's mapping in place */
	int first, last;    /* embeds the tokens / computes the logits */

	/* activations, one buffer; (n_batch, width) row-major */
	struct lp_backend_buf *act;
	float *x;        /* (n_batch, n_embd) residual stream, at offset 0 */
	float *xb;       /* (n_batch, n_embd) normed input */
	float *xb2;      /* (n_batch, n_embd) projection output */
	float *q;        /* (n_batch, q_dim) */
	float *k;        /* (n_batch, kv_dim) */
	float *v;        /* (n_batch, kv_dim) */
	float *att;      /* (n_batch, q_dim) attention output */
	float *hb;       /* (n_batch, n_ff) gate, then SwiGLU */
	float *hb2;      /* (n_batch, n_ff) up */

	struct lp_backend_buf *kv_buf;  /* (layers, 2, n_ctx, kv row) */
	struct layer_w *w;              /* l1 - l0 */
	struct lp_backend_mat tok_embd; /* first part: (n_vocab, n_embd) */
	struct lp_backend_mat output;   /* last part: (n_vocab, n_embd) */
	const float *output_norm;       /* last part: (n_embd) */
	struct lp_backend_buf *logits_buf; /* last part: (n_vocab) */

	struct lp_backend_buf **imports; /* weights imported */
	size_t n_imports;
};

struct lp_forward {
	const struct lp_model *m;
	struct lp_forward_params p;
	struct lp_backend *own;       /* the CPU backend the context opened */
	struct part parts[2];
	int n_parts;
	struct lp_backend_rope rope;
	uint32_t n_past;

	float *logits;       /* (n_vocab) on the host: the last part's buffer,
			      * or a copy tracked as LP_MEM_LOGITS */
	float *logits_copy;  /* that copy, or NULL */
	float *stage;        /* (n_batch, n_embd) host hop between two device parts */
	uint64_t step_key;   /* names this context's decode step to a backend
			      * that records it (backend.h: step_begin) */
};

/* Decode-step keys: unique per context, so that a backend never replays
 * the step of a context freed since (whose buffers another may reuse). */
static _Atomic uint64_t next_step_key;

struct lp_forward_params lp_forward_default_params(void)
{
	return (struct lp_forward_params){ .n_ctx = 2048, .kv_type = LP_Q_F16,
				       .n_threads = 0, .n_batch = 512, .gemm_min = 16 };
}

static struct lp_forward_params resolve(const struct lp_model *m, const struct lp_forward_params *p)
{
	struct lp_forward_params r = *p;

	if (r.n_ctx == 0)
		r.n_ctx = m->hp.n_ctx_train;
	if (r.n_batch == 0)
		r.n_batch = 512;
	if (r.n_batch > r.n_ctx)
		r.n_batch = r.n_ctx;
	if (r.n_threads <= 0)
		r.n_threads = lp_pool_default_threads();
	if (r.gemm_min == 0)
		r.gemm_min = 16;
	if (r.gpu_layers > m->hp.n_layer)
		r.gpu_layers = m->hp.n_layer;
	return r;
}

/* Layers offloaded: gpu_layers when an offload backend is given (or asked
 * about, when planning). */
static uint32_t n_offloaded(const struct lp_forward_params *r, int planning)
{
	return r->offload || planning ? r->gpu_layers : 0;
}

#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

static size_t max3(size_t a, size_t b, size_t c)
{
	size_t m = a > b ? a : b;

	return m > c ? m : c;
}

/* Lay out a part's activation buffer; with base == NULL only counts. */
static size_t layout_act(struct part *pt, const struct lp_hparams *hp, size_t nb, float *base)
{
	size_t E = hp->n_embd, Q = (size_t)hp->n_head * hp->head_dim;
	size_t KV = (size_t)hp->n_head_kv * hp->head_dim, F = hp->n_ff, off = 0;
#define TAKE(field, count) do { \
		if (base) pt->field = base + off; \
		off += ALIGN64((count) * sizeof(float)) / sizeof(float); \
	} while (0)
	TAKE(x, nb * E);
	TAKE(xb, nb * (E > Q ? E : Q));
	TAKE(xb2, nb * E);
	TAKE(q, nb * Q);
	TAKE(k, nb * KV);
	TAKE(v, nb * KV);
	TAKE(att, nb * Q);
	TAKE(hb, nb * F);
	TAKE(hb2, nb * F);
#undef TAKE
	return off * sizeof(float);
}

static struct lp_backend_limits limits(const struct lp_model *m, const struct lp_forward_params *r)
{
	const struct lp_hparams *hp = &m->hp;
	size_t Q = (size_t)hp->n_head * hp->head_dim;

	return (struct lp_backend_limits){
		.n_rows = r->n_batch, .max_cols = max3(hp->n_embd, hp->n_ff, Q),
		.max_rows = max3(hp->n_vocab, hp->n_ff, Q), .n_ctx = r->n_ctx,
		.kv_dim = hp->n_head_kv * hp->head_dim, .kv_type = r->kv_type,
		.n_head = hp->n_head, .n_rot = hp->n_rot, .head_dim = hp->head_dim,
	};
}

static size_t tensor_bytes(const struct lp_tensor *t)
{
	return t->rows * t->row_bytes;
}

/* Device bytes of the weights of layers [l0, l1), plus the output
 * (with its norm) when `last` and the embedding when `first`. */
static size_t weight_bytes(const struct lp_model *m, uint32_t l0, uint32_t l1, int first,
			   int last)
{
	size_t E = m->hp.n_embd, b = 0;

	for (uint32_t il = l0; il < l1; il++) {
		const struct lp_layer *l = &m->layers[il];
		const struct lp_tensor *ts[7] = { &l->wq, &l->wk, &l->wv, &l->wo,
						  &l->w_gate, &l->w_up, &l->w_down };
		for (int i = 0; i < 7; i++)
			b += tensor_bytes(ts[i]);
		b += 2 * E * sizeof(float);
		if (l->bq)
			b += (l->wq.rows + 2 * l->wk.rows) * sizeof(float);
	}
	if (first)
		b += tensor_bytes(&m->tok_embd);
	if (last) {
		if (!first || m->output.data != m->tok_embd.data)
			b += tensor_bytes(&m->output);
		b += E * sizeof(float);
	}
	return b;
}

void lp_forward_plan_bytes(const struct lp_model *m, const struct lp_forward_params *p,
			   struct lp_forward_bytes *out)
{
	struct lp_forward_params r = resolve(m, p);
	const struct lp_hparams *hp = &m->hp;
	struct lp_backend_limits lim = limits(m, &r);
	uint32_t g = n_offloaded(&r, 1), L = hp->n_layer;
	size_t act = layout_act(NULL, hp, r.n_batch, NULL);
	size_t kv_layer = lp_kvcache_bytes_per_token(1, lim.kv_dim, hp->head_dim, r.kv_type) *
			  (size_t)r.n_ctx;
	size_t logits = (size_t)hp->n_vocab * sizeof(float);

	memset(out, 0, sizeof(*out));
	out->logits = logits;
	if (g < L) {
		const struct lp_backend *be = r.backend;
		out->kv = kv_layer * (L - g);
		out->scratch = act + (be ? be->ops->scratch_bytes(be, &lim) :
				      lp_backend_cpu_scratch_bytes(r.n_threads, r.gemm_min, &lim));
	}
	if (g > 0) {
		const struct lp_backend *be = r.offload;
		out->gpu_kv = kv_layer * g;
		out->gpu_scratch = act + (be ? be->ops->scratch_bytes(be, &lim) :
					  lp_backend_cpu_scratch_bytes(1, r.gemm_min, &lim));
		if (g == L)
			out->gpu_scratch += logits;
		out->gpu_weights = weight_bytes(m, 0, g, 1, g == L);
	}
}

/* ---- making a context -------------------------------------------------- */

static enum lp_mem_tag tag_for(const struct lp_backend *be, enum lp_mem_tag host,
			       enum lp_mem_tag device)
{
	return be->place == LP_BACKEND_HOST ? host : device;
}

/* Make `bytes` at host address `src` readable by the part's backend;
 * NULL (d filled) on failure. */
static const void *import(struct part *pt, const void *src, size_t bytes, struct lp_diag *d)
{
	struct lp_backend_buf *b;

	if (!src)
		return NULL;
	b = pt->be->ops->import(pt->be, src, bytes, LP_MEM_GPU_WEIGHTS, d);
	if (!b)
		return NULL;
	pt->imports[pt->n_imports++] = b;
	return b->data;
}

/* Tensor t, laid out in row groups (groups 1) or as the file has it
 * (0), whichever it is not now, for a backend that copies what it
 * imports: converted in a host block first. */
static const void *import_converted(struct part *pt, const struct lp_tensor *t, int groups,
				    struct lp_diag *d)
{
	size_t bytes = tensor_bytes(t);
	uint8_t *conv = lp_mem_alloc(LP_MEM_SCRATCH, bytes + (groups ? LP_RG_ROWS * t->row_bytes : 0),
				     d);
	const void *out;

	if (!conv)
		return NULL;
	if (groups) {
		memcpy(conv, t->data, bytes);
		lp_rowgroup_pack(t->type, conv, t->rows, t->cols, conv + bytes);
	} else {
		lp_rowgroup_unpack(t->type, t->data, t->rows, t->cols, conv);
	}
	out = import(pt, conv, bytes, d);
	lp_mem_free(conv);
	return out;
}

/*
 * Import a weight matrix. A layer's (groups: 1) is laid out in row groups
 * where the part's backend multiplies those faster: in place when the
 * backend reads the host's bytes (so every part and context after this
 * one finds it so), else in the copy it is given. A backend that does
 * not take row groups is given the file's layout back.
 */
static enum lp_status import_mat(const struct lp_model *m, struct part *pt, struct lp_tensor *t,
				 int groups, struct lp_backend_mat *out, struct lp_diag *d)
{
	const struct lp_backend_ops *ops = pt->be->ops;
	int host = pt->be->place == LP_BACKEND_HOST;
	int takes = ops->takes_rowgroups && ops->takes_rowgroups(pt->be, t->type, t->rows, t->cols);
	int want = groups && takes && !pt->streams;

	if (!ops->supports(pt->be, t->type))
		return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
				   "the %s backend cannot multiply %s weights ('%s')",
				   pt->be->name, lp_qtype_name(t->type), t->name);
	*out = (struct lp_backend_mat){ t->type, NULL, t->rows, t->cols, t->row_bytes, 0, NULL,
					LP_MAT_ROWS };
	if (host && want)
		want = lp_model_rowgroup(m, t);
	if (host && t->rowgroups && !takes)
		return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
				   "the %s backend cannot multiply '%s' in row groups",
				   pt->be->name, t->name);
	if (host || want == t->rowgroups) {
		out->layout = t->rowgroups ? LP_MAT_ROWGROUPS : LP_MAT_ROWS;
		out->data = import(pt, t->data, tensor_bytes(t), d);
	} else {
		out->layout = want ? LP_MAT_ROWGROUPS : LP_MAT_ROWS;
		out->data = import_converted(pt, t, want, d);
	}
	return out->data ? LP_OK : LP_E_NOMEM;
}

/* Import a vector of n floats (NULL stays NULL). */
static enum lp_status import_vec(struct part *pt, const float *v, size_t n, const float **out,
				 struct lp_diag *d)
{
	*out = v ? import(pt, v, n * sizeof(float), d) : NULL;
	return v && !*out ? LP_E_NOMEM : LP_OK;
}

static enum lp_status import_layer(struct lp_forward *c, struct part *pt, uint32_t il,
				   struct lp_diag *d)
{
	const struct lp_model *m = c->m;
	struct lp_layer *l = &m->layers[il];
	struct layer_w *w = &pt->w[il - pt->l0];
	size_t E = c->m->hp.n_embd;
	enum lp_status st;

	if ((st = import_vec(pt, l->attn_norm, E, &w->attn_norm, d)) ||
	    (st = import_mat(m, pt, &l->wq, 1, &w->wq, d)) ||
	    (st = import_mat(m, pt, &l->wk, 1, &w->wk, d)) ||
	    (st = import_mat(m, pt, &l->wv, 1, &w->wv, d)) ||
	    (st = import_mat(m, pt, &l->wo, 1, &w->wo, d)) ||
	    (st = import_vec(pt, l->bq, l->wq.rows, &w->bq, d)) ||
	    (st = import_vec(pt, l->bk, l->wk.rows, &w->bk, d)) ||
	    (st = import_vec(pt, l->bv, l->wv.rows, &w->bv, d)) ||
	    (st = import_vec(pt, l->ffn_norm, E, &w->ffn_norm, d)) ||
	    (st = import_mat(m, pt, &l->w_gate, 1, &w->w_gate, d)) ||
	    (st = import_mat(m, pt, &l->w_up, 1, &w->w_up, d)) ||
	    (st = import_mat(m, pt, &l->w_down, 1, &w->w_down, d)))
		return st;
	return LP_OK;
}

/* Set up part `pt` (its be, l0, l1, first, last already set). */
static enum lp_status part_init(struct lp_forward *c, struct part *pt, struct lp_diag *d)
{
	const struct lp_model *m = c->m;
	const struct lp_hparams *hp = &m->hp;
	const struct lp_backend_ops *ops = pt->be->ops;
	struct lp_backend_limits lim = limits(m, &c->p);
	uint32_t n_layers = pt->l1 - pt->l0;
	size_t kv_row = lp_qtype_row_bytes(c->p.kv_type, lim.kv_dim);
	size_t kv_half = (size_t)n_layers * c->p.n_ctx * kv_row;
	size_t act_bytes = layout_act(NULL, hp, c->p.n_batch, NULL);
	struct lp_tensor embd, head;
	enum lp_status st;

	pt->streams = lp_model_streamed(m) && pt->be->place == LP_BACKEND_HOST;
	pt->w = calloc(n_layers ? n_layers : 1, sizeof(*pt->w));
	pt->imports = calloc((size_t)n_layers * 12 + 4, sizeof(*pt->imports));
	if (!pt->w || !pt->imports)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate a context");
	if (!lp_kvcache_bytes_per_token(1, lim.kv_dim, hp->head_dim, c->p.kv_type))
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "KV cache type '%s' needs a head size that is a multiple of %zu, not %u",
				   lp_qtype_name(c->p.kv_type), lp_qtype_block_elems(c->p.kv_type),
				   hp->head_dim);
	pt->kv_buf = ops->buf_alloc(pt->be, pt->be->place,
				    tag_for(pt->be, LP_MEM_KV, LP_MEM_GPU_KV), 2 * kv_half, d);
	if (!pt->kv_buf)
		return LP_E_NOMEM;
	pt->act = ops->buf_alloc(pt->be, pt->be->place,
				 tag_for(pt->be, LP_MEM_SCRATCH, LP_MEM_GPU_SCRATCH), act_bytes, d);
	if (!pt->act)
		return LP_E_NOMEM;
	layout_act(pt, hp, c->p.n_batch, pt->act->data);
	if (pt->last) {
		pt->logits_buf = ops->buf_alloc(pt->be, pt->be->place,
						tag_for(pt->be, LP_MEM_LOGITS, LP_MEM_GPU_SCRATCH),
						(size_t)hp->n_vocab * sizeof(float), d);
		if (!pt->logits_buf)
			return LP_E_NOMEM;
	}
	if ((st = ops->reserve(pt->be, &lim, d)))
		return st;
	for (uint32_t il = pt->l0; il < pt->l1; il++) {
		struct lp_backend_kv *kv = &pt->w[il - pt->l0].kv;
		size_t at = (size_t)(il - pt->l0) * c->p.n_ctx * kv_row;
		*kv = (struct lp_backend_kv){ c->p.kv_type, c->p.n_ctx, lim.kv_dim, kv_row,
					      lp_backend_at(pt->kv_buf, at),
					      lp_backend_at(pt->kv_buf, kv_half + at) };
		if ((st = import_layer(c, pt, il, d)))
			return st;
	}
	/* the embedding and the output head keep the file's layout (copies of
	 * their views, which import_mat does not change with groups 0) */
	embd = m->tok_embd;
	head = m->output;
	if (pt->first && (st = import_mat(m, pt, &embd, 0, &pt->tok_embd, d)))
		return st;
	if (pt->last) {
		if (pt->first && m->output.data == m->tok_embd.data)
			pt->output = pt->tok_embd;
		else if ((st = import_mat(m, pt, &head, 0, &pt->output, d)))
			return st;
		if ((st = import_vec(pt, m->output_norm, hp->n_embd, &pt->output_norm, d)))
			return st;
	}
	return LP_OK;
}

static void part_release(struct part *pt)
{
	if (!pt->be)
		return;
	for (size_t i = 0; i < pt->n_imports; i++)
		pt->be->ops->buf_free(pt->be, pt->imports[i]);
	pt->be->ops->buf_free(pt->be, pt->logits_buf);
	pt->be->ops->buf_free(pt->be, pt->act);
	pt->be->ops->buf_free(pt->be, pt->kv_buf);
	free(pt->imports);
	free(pt->w);
}

/* Split the layers between the offload backend and the host one. */
static enum lp_status plan_parts(struct lp_forward *c, struct lp_diag *d)
{
	uint32_t L = c->m->hp.n_layer, g = n_offloaded(&c->p, 0);
	struct lp_backend *host = c->p.backend;
	enum lp_status st;

	if (g > 0)
		c->parts[c->n_parts++] = (struct part){ .be = c->p.offload, .l0 = 0, .l1 = g };
	if (g < L) {
		if (!host) {
			struct lp_backend_params bp = lp_backend_default_params();
			bp.n_threads = c->p.n_threads;
			bp.gemm_min = c->p.gemm_min;
			if ((st = lp_backend_cpu_open(&bp, &c->own, d)))
				return st;
			host = c->own;
		}
		c->parts[c->n_parts++] = (struct part){ .be = host, .l0 = g, .l1 = L };
	}
	c->parts[0].first = 1;
	c->parts[c->n_parts - 1].last = 1;
	return LP_OK;
}

enum lp_status lp_forward_new(const struct lp_model *m, const struct lp_forward_params *p,
			      struct lp_forward **out, struct lp_diag *d)
{
	const struct lp_hparams *hp = &m->hp;
	struct lp_forward *c;
	struct part *last;
	enum lp_status st;

	*out = NULL;
	lp_mem_set_phase("load");
	c = calloc(1, sizeof(*c));
	if (c)
		c->step_key = atomic_fetch_add(&next_step_key, 1) + 1;
	if (!c)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate a context");
	c->m = m;
	c->p = resolve(m, p);
	c->rope = (struct lp_backend_rope){ hp->rope_mode, hp->head_dim, hp->n_rot,
					    hp->rope_base };
	if ((st = plan_parts(c, d)))
		goto fail;
	for (int i = 0; i < c->n_parts; i++)
		if ((st = part_init(c, &c->parts[i], d)))
			goto fail;
	last = &c->parts[c->n_parts - 1];
	if (last->logits_buf->host) {
		c->logits = last->logits_buf->host;
	} else {
		c->logits_copy = lp_mem_calloc(LP_MEM_LOGITS, hp->n_vocab, sizeof(float), d);
		if (!c->logits_copy) {
			st = LP_E_NOMEM;
			goto fail;
		}
		c->logits = c->logits_copy;
	}
	if (c->n_parts == 2 && !c->parts[0].act->host && !c->parts[1].act->host) {
		c->stage = lp_mem_alloc(LP_MEM_SCRATCH, (size_t)c->p.n_batch * hp->n_embd *
					sizeof(float), d);
		if (!c->stage) {
			st = LP_E_NOMEM;
			goto fail;
		}
	}
	*out = c;
	return LP_OK;
fail:
	lp_forward_free(c);
	return st;
}

void lp_forward_free(struct lp_forward *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n_parts; i++)
		part_release(&c->parts[i]);
	lp_mem_free(c->logits_copy);
	lp_mem_free(c->stage);
	lp_backend_free(c->own);
	free(c);
}

const float *lp_forward_logits(const struct lp_forward *c) { return c->logits; }
void lp_forward_reset(struct lp_forward *c) { c->n_past = 0; }
uint32_t lp_forward_n_past(const struct lp_forward *c) { return c->n_past; }
uint32_t lp_forward_n_ctx(const struct lp_forward *c) { return c->p.n_ctx; }
int lp_forward_n_threads(const struct lp_forward *c)
{
	return c->parts[c->n_parts - 1].be->n_threads;
}
const struct lp_model *lp_forward_model(const struct lp_forward *c) { return c->m; }

uint32_t lp_forward_gpu_layers(const struct lp_forward *c)
{
	return n_offloaded(&c->p, 0);
}

/* ---- the step -------------------------------------------------------- */

static void layer_step(struct lp_forward *c, struct part *pt, uint32_t il, uint32_t pos, size_t n)
{
	const struct lp_hparams *hp = &c->m->hp;
	const struct layer_w *w = &pt->w[il - pt->l0];
	struct lp_backend *be = pt->be;
	const struct lp_backend_ops *op = be->ops;
	size_t E = hp->n_embd, Q = (size_t)hp->n_head * hp->head_dim;
	size_t KV = (size_t)hp->n_head_kv * hp->head_dim, F = hp->n_ff;
	struct lp_backend_attn attn = {
		.q = pt->q, .out = pt->att, .kv = &w->kv, .n = (uint32_t)n, .pos0 = pos,
		.n_head = hp->n_head, .n_head_kv = hp->n_head_kv, .head_dim = hp->head_dim,
		.scale = 1.0f / sqrtf((float)hp->head_dim),
	};
	const struct lp_backend_mm qkv[3] = {
		{ &w->wq, pt->q, Q }, { &w->wk, pt->k, KV }, { &w->wv, pt->v, KV },
	};
	const struct lp_backend_mm ffn[2] = { { &w->w_gate, pt->hb, F }, { &w->w_up, pt->hb2, F } };

	/* attention block */
	op->rmsnorm(be, pt->xb, pt->x, w->attn_norm, n, E, hp->norm_eps);
	op->matmul_many(be, pt->xb, n, qkv, 3);
	if (w->bq) {
		op->add(be, pt->q, w->bq, n, Q, 0);
		op->add(be, pt->k, w->bk, n, KV, 0);
		op->add(be, pt->v, w->bv, n, KV, 0);
	}
	op->rope(be, pt->q, n, hp->n_head, pos, &c->rope);
	op->rope(be, pt->k, n, hp->n_head_kv, pos, &c->rope);
	op->kv_store(be, &w->kv, pos, n, pt->k, pt->v);
	op->attention(be, &attn);
	op->matmul(be, &w->wo, pt->att, n, pt->xb2, E);
	op->add(be, pt->x, pt->xb2, n, E, E);

	/* feed-forward block: down(silu(gate x) * up x) */
	op->rmsnorm(be, pt->xb, pt->x, w->ffn_norm, n, E, hp->norm_eps);
	op->matmul_many(be, pt->xb, n, ffn, 2);
	op->swiglu(be, pt->hb, pt->hb, pt->hb2, n * F);
	op->matmul(be, &w->w_down, pt->hb, n, pt->xb2, E);
	op->add(be, pt->x, pt->xb2, n, E, E);
}

/* Move the residual stream (n rows) from part `a` to part `b`. */
static enum lp_status move_x(struct lp_forward *c, struct part *a, struct part *b, size_t n,
			     struct lp_diag *d)
{
	size_t bytes = n * c->m->hp.n_embd * sizeof(float);
	enum lp_status st;

	if (b->act->host)
		return a->be->ops->download(a->be, b->act->host, a->act, 0, bytes, d);
	if (a->act->host) {
		b->be->ops->upload(b->be, b->act, 0, a->act->host, bytes);
		return LP_OK;
	}
	if ((st = a->be->ops->download(a->be, c->stage, a->act, 0, bytes, d)))
		return st;
	b->be->ops->upload(b->be, b->act, 0, c->stage, bytes);
	return LP_OK;
}

/*
 * The logits of the step's last row into c->logits, and with `all` those
 * of every row into all[t * n_vocab ..]. Every row is multiplied at once
 * where the FFN scratch (free once the layers are done) holds them, so
 * that the output takes the same path (mat-vec or GEMM) as the layers.
 */
static enum lp_status output(struct lp_forward *c, struct part *pt, size_t n, float *all,
			     struct lp_diag *d)
{
	const struct lp_hparams *hp = &c->m->hp;
	const struct lp_backend_ops *op = pt->be->ops;
	size_t E = hp->n_embd, V = hp->n_vocab, row = V * sizeof(float);
	size_t off = (size_t)((uint8_t *)pt->hb - (uint8_t *)pt->act->data);
	size_t fit = (pt->act->bytes - off) / row, t0 = all ? 0 : n - 1, r = 1;
	const struct lp_backend_buf *dst = pt->logits_buf;
	enum lp_status st;

	if (all && fit > 1) {
		dst = pt->act;
		r = fit;
	} else {
		off = 0;
	}
	for (; t0 < n; t0 += r) {
		r = n - t0 < r ? n - t0 : r;
		op->rmsnorm(pt->be, pt->xb, pt->x + t0 * E, pt->output_norm, r, E, hp->norm_eps);
		op->matmul(pt->be, &pt->output, pt->xb, r, lp_backend_at(dst, off), V);
		if (all && (st = op->download(pt->be, all + t0 * V, dst, off, r * row, d)))
			return st;
	}
	if (dst == pt->logits_buf && !c->logits_copy)
		return LP_OK;   /* c->logits is that buffer */
	return op->download(pt->be, c->logits, dst, off + (r - 1) * row, row, d);
}

/*
 * One decode token on a single device part, the layers and the output
 * product between step_begin and step_end, so that a backend that records
 * the step (CUDA graphs) replays it at the next tokens; the lookup of the
 * token stays outside (its id is read when queued).
 */
static enum lp_status decode_recorded(struct lp_forward *c, struct part *pt, uint32_t pos,
				      struct lp_diag *d)
{
	const struct lp_hparams *hp = &c->m->hp;
	struct lp_backend *be = pt->be;
	const struct lp_backend_ops *op = be->ops;
	enum lp_status st;

	if (!op->step_begin(be, c->step_key, pos)) {
		for (uint32_t il = pt->l0; il < pt->l1; il++)
			layer_step(c, pt, il, pos, 1);
		op->rmsnorm(be, pt->xb, pt->x, pt->output_norm, 1, hp->n_embd, hp->norm_eps);
		op->matmul(be, &pt->output, pt->xb, 1, lp_backend_at(pt->logits_buf, 0),
			   hp->n_vocab);
		op->step_end(be);
	}
	if (c->logits_copy)
		st = op->download(be, c->logits, pt->logits_buf, 0, hp->n_vocab * sizeof(float), d);
	else
		st = LP_OK;
	return st ? st : op->sync(be, d);
}

/* The tokens' embedding rows into the first part's x. Where that part
 * reads the mapping in place, a row at a time, each row's pages given
 * back as soon as it is read (lp_model_embd_release says why). */
static void embed(struct lp_forward *c, struct part *pt, const int32_t *tokens, size_t n)
{
	const struct lp_backend_ops *op = pt->be->ops;
	size_t E = c->m->hp.n_embd;

	if (pt->be->place != LP_BACKEND_HOST || c->m->tied_output || pt->streams) {
		op->get_rows(pt->be, &pt->tok_embd, tokens, n, pt->x);
		return;
	}
	for (size_t t = 0; t < n; t++) {
		op->get_rows(pt->be, &pt->tok_embd, tokens + t, 1, pt->x + t * E);
		lp_model_embd_release(c->m, tokens[t]);
	}
}

/* n <= n_batch tokens at pos; the logits of every row into `all`
 * (n_vocab floats each) when not NULL, of the last into c->logits. */
static enum lp_status step(struct lp_forward *c, const int32_t *tokens, size_t n, uint32_t pos,
			   float *all, struct lp_diag *d)
{
	const struct lp_model *m = c->m;
	struct part *pt = &c->parts[0];
	enum lp_status st = LP_OK;

	embed(c, pt, tokens, n);
	if (n == 1 && !all && c->n_parts == 1 && !pt->streams &&
	    pt->be->place == LP_BACKEND_DEVICE)
		return decode_recorded(c, pt, pos, d);
	for (int i = 0; i < c->n_parts; i++) {
		pt = &c->parts[i];
		if (i > 0 && (st = move_x(c, &c->parts[i - 1], pt, n, d)))
			goto done;
		for (uint32_t il = pt->l0; il < pt->l1; il++) {
			if (pt->streams)
				lp_model_stream_layer(m, il);
			layer_step(c, pt, il, pos, n);
		}
	}
	if ((st = output(c, pt, n, all, d)))
		goto done;
	for (int i = 0; !st && i < c->n_parts; i++)
		st = c->parts[i].be->ops->sync(c->parts[i].be, d);
done:
	/* after the output: its norm may share pages with the last layer */
	for (int i = 0; i < c->n_parts; i++)
		if (c->parts[i].streams) {
			lp_model_stream_done(m);
			break;
		}
	return st;
}

static enum lp_status eval(struct lp_forward *c, const int32_t *tokens, size_t n, uint32_t pos,
			   float *logits, int all, struct lp_diag *d)
{
	uint32_t n_vocab = c->m->hp.n_vocab;

	if (n == 0)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0, "no tokens to evaluate");
	if (pos > c->n_past)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "position %u is past the %u cached tokens", pos, c->n_past);
	if (n > c->p.n_ctx || pos > c->p.n_ctx - n)
		return lp_diag_set(d, LP_E_INPUT, NULL, 0, 0,
				   "context of %u tokens is full (%u cached, %zu more)",
				   c->p.n_ctx, pos, n);
	for (size_t i = 0; i < n; i++)
		if (tokens[i] < 0 || (uint32_t)tokens[i] >= n_vocab)
			return lp_diag_set(d, LP_E_INPUT, NULL, 0, 0,
					   "token id %d is out of range (vocabulary of %u)",
					   tokens[i], n_vocab);
	lp_mem_set_phase(n > 1 ? "prefill" : "decode");
	for (size_t done = 0; done < n; done += c->p.n_batch) {
		size_t k = n - done < c->p.n_batch ? n - done : c->p.n_batch;
		enum lp_status st = step(c, tokens + done, k, pos + (uint32_t)done,
					 all ? logits + done * n_vocab : NULL, d);
		if (st) {
			c->n_past = pos + (uint32_t)done;
			return st;
		}
		c->n_past = pos + (uint32_t)(done + k);
	}
	if (!all && logits)
		memcpy(logits, c->logits, n_vocab * sizeof(float));
	return LP_OK;
}

enum lp_status lp_forward_eval(struct lp_forward *c, const int32_t *tokens, size_t n, uint32_t pos,
			       float *logits_last, struct lp_diag *d)
{
	return eval(c, tokens, n, pos, logits_last, 0, d);
}

enum lp_status lp_forward_eval_all(struct lp_forward *c, const int32_t *tokens, size_t n,
				   uint32_t pos, float *logits, struct lp_diag *d)
{
	return eval(c, tokens, n, pos, logits, 1, d);
}
