/*
 * forward.c - the transformer, read top to bottom in lp_ctx_step:
 * embedding, then per layer RMSNorm -> Q/K/V (+bias) -> RoPE -> cache ->
 * causal grouped-query attention -> output projection -> residual ->
 * RMSNorm -> SwiGLU FFN -> residual, and finally RMSNorm -> logits.
 *
 * Activations are row-major (token, feature). Matrix products quantize the
 * input rows once for the weight type and take lp_matvec over blocks of
 * weight rows, reusing each block for every token of the step while it is
 * in cache; the pool splits the rows between threads.
 */
#include "model/forward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/blas.h"
#include "core/mem.h"
#include "core/threadpool.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/matvec.h"
#include "model/kvcache.h"

struct lp_ctx {
	const struct lp_model *m;
	struct lp_ctx_params p;
	struct lp_kvcache kv;
	struct lp_pool *pool;
	uint32_t n_past;

	/* Scratch, one tracked block; (n_batch, width) row-major. */
	uint8_t *scratch;
	float *x;        /* (n_batch, n_embd) residual stream */
	float *xb;       /* (n_batch, max(n_embd, q_dim)) normed input */
	float *xb2;      /* (n_batch, n_embd) projection output */
	float *q;        /* (n_batch, q_dim) */
	float *k;        /* (n_batch, kv_dim) */
	float *v;        /* (n_batch, kv_dim) */
	float *att;      /* (n_batch, q_dim) attention output */
	float *hb;       /* (n_batch, n_ff) gate, then SwiGLU */
	float *hb2;      /* (n_batch, n_ff) up */
	float *rope_cos; /* (n_batch, n_rot/2) */
	float *rope_sin;
	float *att_tmp;  /* (n_threads, n_ctx) attention scores */
	float *kf, *vf;  /* (n_ctx, kv_dim) one layer's cache as floats, or
			  * NULL when the cache is F32 and is read in place */
	float *wf;       /* (n_threads, GEMM_ROWS, wf_cols) dequantized weights */
	size_t wf_cols;
	uint8_t *act;    /* (n_batch, act_stride) quantized activations */
	size_t act_stride;
	struct lp_q8_act *acts; /* (n_batch) views into act */

	float *logits;   /* (n_vocab) tracked as LP_MEM_LOGITS */
};

struct lp_ctx_params lp_ctx_default_params(void)
{
	return (struct lp_ctx_params){ .n_ctx = 2048, .kv_type = LP_Q_F16,
				       .n_threads = 0, .n_batch = 512, .gemm_min = 16 };
}

static struct lp_ctx_params resolve(const struct lp_model *m, const struct lp_ctx_params *p)
{
	struct lp_ctx_params r = *p;

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
	return r;
}

/* Largest quantized-activation row any matrix of the model needs. */
static size_t act_stride(const struct lp_model *m)
{
	size_t best = 0;
	const struct lp_tensor *ts[2] = { &m->tok_embd, &m->output };

	for (int i = 0; i < 2; i++) {
		size_t b = lp_q8_act_bytes(ts[i]->type, ts[i]->cols);
		best = b > best ? b : best;
	}
	for (uint32_t il = 0; il < m->hp.n_layer; il++) {
		const struct lp_layer *l = &m->layers[il];
		const struct lp_tensor *lt[7] = { &l->wq, &l->wk, &l->wv, &l->wo,
						  &l->w_gate, &l->w_up, &l->w_down };
		for (int i = 0; i < 7; i++) {
			size_t b = lp_q8_act_bytes(lt[i]->type, lt[i]->cols);
			best = b > best ? b : best;
		}
	}
	return (best + 63) & ~(size_t)63;
}

#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

/* Weight rows dequantized at a time for sgemm: 64 rows of 1536 floats
 * are 384 KiB, about what a core's L2 holds. */
#define GEMM_ROWS 64

/* Lay out the scratch block; with base == NULL only counts bytes. */
static size_t layout(struct lp_ctx *c, const struct lp_model *m,
		     const struct lp_ctx_params *p, uint8_t *base)
{
	const struct lp_hparams *hp = &m->hp;
	size_t nb = p->n_batch, E = hp->n_embd, Q = (size_t)hp->n_head * hp->head_dim;
	size_t KV = (size_t)hp->n_head_kv * hp->head_dim, F = hp->n_ff;
	size_t off = 0, stride = act_stride(m);
#define TAKE(field, count) do { \
		if (base) c->field = (void *)(base + off); \
		off += ALIGN64((count) * sizeof(*c->field)); \
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
	TAKE(rope_cos, nb * (hp->n_rot / 2));
	TAKE(rope_sin, nb * (hp->n_rot / 2));
	TAKE(att_tmp, (size_t)p->n_threads * p->n_ctx);
	TAKE(kf, p->kv_type == LP_Q_F32 ? 0 : (size_t)p->n_ctx * KV);
	TAKE(vf, p->kv_type == LP_Q_F32 ? 0 : (size_t)p->n_ctx * KV);
	TAKE(wf, p->gemm_min <= nb ? (size_t)p->n_threads * GEMM_ROWS *
					     (E > F ? (E > Q ? E : Q) : (F > Q ? F : Q)) : 0);
	TAKE(act, nb * stride);
	TAKE(acts, nb);
#undef TAKE
	if (c) {
		c->act_stride = stride;
		c->wf_cols = E > F ? (E > Q ? E : Q) : (F > Q ? F : Q);
	}
	return off;
}

void lp_ctx_plan_bytes(const struct lp_model *m, const struct lp_ctx_params *p,
		       struct lp_ctx_bytes *out)
{
	struct lp_ctx_params r = resolve(m, p);
	const struct lp_hparams *hp = &m->hp;

	out->kv = (size_t)r.n_ctx * lp_kvcache_bytes_per_token(
		hp->n_layer, hp->n_head_kv * hp->head_dim, hp->head_dim, r.kv_type);
	out->scratch = layout(NULL, m, &r, NULL);
	out->logits = (size_t)hp->n_vocab * sizeof(float);
}

enum lp_status lp_ctx_new(const struct lp_model *m, const struct lp_ctx_params *p,
			  struct lp_ctx **out, struct lp_diag *d)
{
	const struct lp_hparams *hp = &m->hp;
	struct lp_ctx *c;
	size_t scratch_bytes;
	enum lp_status st;

	*out = NULL;
	lp_mem_set_phase("load");
	c = calloc(1, sizeof(*c));
	if (!c)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate a context");
	c->m = m;
	c->p = resolve(m, p);
	st = lp_kvcache_init(&c->kv, hp->n_layer, c->p.n_ctx, hp->n_head_kv * hp->head_dim,
			     hp->head_dim, c->p.kv_type, d);
	if (st)
		goto fail;
	scratch_bytes = layout(NULL, m, &c->p, NULL);
	c->scratch = lp_mem_alloc(LP_MEM_SCRATCH, scratch_bytes, d);
	if (!c->scratch) {
		st = LP_E_NOMEM;
		goto fail;
	}
	lp_mem_commit(c->scratch, scratch_bytes);
	layout(c, m, &c->p, c->scratch);
	if (c->p.kv_type == LP_Q_F32)
		c->kf = c->vf = NULL;
	c->logits = lp_mem_calloc(LP_MEM_LOGITS, hp->n_vocab, sizeof(float), d);
	if (!c->logits) {
		st = LP_E_NOMEM;
		goto fail;
	}
	if ((st = lp_blas_load(d)) || (st = lp_pool_new(c->p.n_threads, &c->pool, d)))
		goto fail;
	/* sgemm runs inside our own workers, one block each: OpenBLAS must
	 * not start threads of its own on top. */
	lp_blas_set_threads(1);
	*out = c;
	return LP_OK;
fail:
	lp_ctx_free(c);
	return st;
}

void lp_ctx_free(struct lp_ctx *c)
{
	if (!c)
		return;
	lp_pool_free(c->pool);
	lp_mem_free(c->logits);
	lp_mem_free(c->scratch);
	lp_kvcache_release(&c->kv);
	free(c);
}

const float *lp_ctx_logits(const struct lp_ctx *c) { return c->logits; }
void lp_ctx_reset(struct lp_ctx *c) { c->n_past = 0; }
uint32_t lp_ctx_n_past(const struct lp_ctx *c) { return c->n_past; }
uint32_t lp_ctx_n_ctx(const struct lp_ctx *c) { return c->p.n_ctx; }
int lp_ctx_n_threads(const struct lp_ctx *c) { return lp_pool_size(c->pool); }
const struct lp_model *lp_ctx_model(const struct lp_ctx *c) { return c->m; }

/* ---- matrix products ------------------------------------------------- */

struct matmul_job {
	const struct lp_tensor *W;
	const float *X;              /* (n, W->cols) */
	const struct lp_q8_act *xq;  /* (n) or NULL for float weights */
	float *Y;                    /* (n, ldy), columns [0, W->rows) */
	size_t n, ldy;
};

static int is_float_type(enum lp_qtype t)
{
	return t == LP_Q_F32 || t == LP_Q_F16 || t == LP_Q_BF16;
}

static void quantize_task(void *arg, size_t b, size_t e, int tid)
{
	struct matmul_job *j = arg;
	struct lp_q8_act *xq = (struct lp_q8_act *)j->xq;

	for (size_t i = b; i < e; i++)
		lp_q8_act_quantize(j->W->type, j->X + i * j->W->cols, j->W->cols, &xq[i]);
}

/* Rows [r0, r1) for every token, a cache-sized block of rows at a time. */
static void matmul_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct matmul_job *j = arg;
	const struct lp_tensor *W = j->W;
	size_t block = j->n == 1 ? r1 - r0 : 32768 / W->row_bytes + 1;

	for (size_t b = r0; b < r1; b += block) {
		size_t e = b + block < r1 ? b + block : r1;
		const uint8_t *w = (const uint8_t *)W->data + b * W->row_bytes;
		for (size_t t = 0; t < j->n; t++)
			lp_matvec(W->type, w, e - b, W->cols, j->X + t * W->cols,
				  j->xq ? &j->xq[t] : NULL, j->Y + t * j->ldy + b);
	}
}

struct gemm_job {
	struct lp_ctx *c;
	const struct lp_tensor *W;
	const float *X;
	float *Y;
	size_t n, ldy;
};

/* Rows [r0, r1) (a multiple of GEMM_ROWS apart): dequantize a block to
 * float, then Y[:, block] = X W_block^T. */
static void gemm_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct gemm_job *j = arg;
	const struct lp_tensor *W = j->W;
	size_t cols = W->cols;
	float *wf = j->c->wf + (size_t)tid * GEMM_ROWS * (j->c->wf_cols);

	for (size_t b = r0; b < r1; b += GEMM_ROWS) {
		size_t rb = r1 - b < GEMM_ROWS ? r1 - b : GEMM_ROWS;
		const float *blk = wf;
		if (W->type == LP_Q_F32)
			blk = (const float *)((const uint8_t *)W->data + b * W->row_bytes);
		else
			for (size_t r = 0; r < rb; r++)
				lp_dequantize_row(W->type, (const uint8_t *)W->data +
						  (b + r) * W->row_bytes, wf + r * cols, cols);
		lp_gemm_nt(j->n, rb, cols, j->X, cols, blk, cols, j->Y + b, j->ldy);
	}
}

/* Y[t] = W X[t] for t < n; Y rows are `ldy` floats apart. */
static void matmul(struct lp_ctx *c, const struct lp_tensor *W, const float *X, size_t n,
		   float *Y, size_t ldy)
{
	struct matmul_job j = { W, X, NULL, Y, n, ldy };

	if (n >= c->p.gemm_min) {
		struct gemm_job g = { c, W, X, Y, n, ldy };
		lp_pool_for(c->pool, W->rows, GEMM_ROWS, gemm_task, &g);
		return;
	}
	if (!is_float_type(W->type)) {
		for (size_t t = 0; t < n; t++)
			c->acts[t] = (struct lp_q8_act){ 0, c->act + t * c->act_stride,
							 c->act_stride };
		j.xq = c->acts;
		lp_pool_for(c->pool, n, 4, quantize_task, &j);
	}
	lp_pool_for(c->pool, W->rows, 8, matmul_task, &j);
}

/* ---- element-wise pieces --------------------------------------------- */

static void rmsnorm(float *out, const float *x, const float *w, size_t n, float eps)
{
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		ss += (double)x[i] * x[i];
	float scale = (float)(1.0 / sqrt(ss / (double)n + eps));
	for (size_t i = 0; i < n; i++)
		out[i] = x[i] * scale * w[i];
}

/* cos/sin of pos*base^(-2i/n_rot) for every token of the step, shared by
 * all layers and heads. */
static void rope_tables(struct lp_ctx *c, uint32_t pos, size_t n)
{
	const struct lp_hparams *hp = &c->m->hp;
	size_t half = hp->n_rot / 2;

	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < half; i++) {
			double theta = (double)(pos + t) *
				       pow(hp->rope_base, -2.0 * (double)i / hp->n_rot);
			c->rope_cos[t * half + i] = (float)cos(theta);
			c->rope_sin[t * half + i] = (float)sin(theta);
		}
}

/* Rotate the first n_rot elements of each of `n_heads` heads of one token. */
static void rope(const struct lp_hparams *hp, float *vec, size_t n_heads,
		 const float *cs, const float *sn)
{
	size_t half = hp->n_rot / 2;

	for (size_t h = 0; h < n_heads; h++) {
		float *x = vec + h * hp->head_dim;
		for (size_t i = 0; i < half; i++) {
			/* adjacent: (x[2i], x[2i+1]); neox: (x[i], x[i+half]) */
			size_t a = hp->rope_mode == LP_ROPE_ADJACENT ? 2 * i : i;
			size_t b = hp->rope_mode == LP_ROPE_ADJACENT ? 2 * i + 1 : i + half;
			float x0 = x[a], x1 = x[b];
			x[a] = x0 * cs[i] - x1 * sn[i];
			x[b] = x0 * sn[i] + x1 * cs[i];
		}
	}
}

static void add_bias(float *y, const float *b, size_t n, size_t width)
{
	if (!b)
		return;
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < width; i++)
			y[t * width + i] += b[i];
}

/* ---- attention ------------------------------------------------------- */

struct attn_job {
	struct lp_ctx *c;
	const float *K, *V;   /* (positions, kv_dim) floats of this layer */
	uint32_t pos;
	const uint16_t *K16, *V16;  /* or the F16 cache rows read in place */
};

/* One (token, head) pair: causal softmax attention over the cache. */
static void attn_one(const struct attn_job *j, size_t t, size_t h, int tid)
{
	const struct lp_ctx *c = j->c;
	const struct lp_hparams *hp = &c->m->hp;
	size_t hd = hp->head_dim, Q = (size_t)hp->n_head * hd;
	size_t KV = (size_t)hp->n_head_kv * hd;
	size_t kvo = h / (hp->n_head / hp->n_head_kv) * hd;
	uint32_t n_pos = j->pos + (uint32_t)t + 1;
	float *score = c->att_tmp + (size_t)tid * c->p.n_ctx;
	const float *q = c->q + t * Q + h * hd;
	float *out = c->att + t * Q + h * hd;
	float scale = 1.0f / sqrtf((float)hd), max = -INFINITY, sum = 0;

	if (j->K16)
		lp_attn_scores_f16(q, j->K16 + kvo, KV, hd, n_pos, scale, score);
	else
		for (uint32_t s = 0; s < n_pos; s++)
			score[s] = lp_dot_f32(q, j->K + s * KV + kvo, hd) * scale;
	for (uint32_t s = 0; s < n_pos; s++)
		max = score[s] > max ? score[s] : max;
	for (uint32_t s = 0; s < n_pos; s++) {
		score[s] = expf(score[s] - max);
		sum += score[s];
	}
	if (j->V16) {
		for (uint32_t s = 0; s < n_pos; s++)
			score[s] /= sum;
		lp_attn_mix_f16(score, j->V16 + kvo, KV, hd, n_pos, out);
		return;
	}
	memset(out, 0, hd * sizeof(float));
	for (uint32_t s = 0; s < n_pos; s++) {
		lp_axpy_f32(hd, score[s] / sum, j->V + s * KV + kvo, out);
	}
}

static void attn_task(void *arg, size_t b, size_t e, int tid)
{
	const struct attn_job *j = arg;
	size_t n_head = j->c->m->hp.n_head;

	for (size_t i = b; i < e; i++)
		attn_one(j, i / n_head, i % n_head, tid);
}

struct kv_job {
	struct lp_ctx *c;
	uint32_t layer;
};

static void kv_convert_task(void *arg, size_t b, size_t e, int tid)
{
	const struct kv_job *j = arg;
	size_t KV = j->c->kv.kv_dim;

	lp_kvcache_to_f32(&j->c->kv, j->layer, (uint32_t)b, (uint32_t)e, j->c->kf + b * KV,
			  j->c->vf + b * KV);
}

/* Attention of the step's n tokens (their K/V already cached). */
static void attention(struct lp_ctx *c, uint32_t il, uint32_t pos, size_t n)
{
	struct attn_job aj = { c, NULL, NULL, pos, NULL, NULL };

	if (c->kv.type == LP_Q_F16 && n < 4) {
		/* a few tokens read each row once per head: in place beats a
		 * conversion pass over the whole layer */
		aj.K16 = lp_kvcache_k(&c->kv, il, 0);
		aj.V16 = lp_kvcache_v(&c->kv, il, 0);
	} else if (c->kf) {
		struct kv_job kj = { c, il };
		lp_pool_for(c->pool, pos + n, 16, kv_convert_task, &kj);
		aj.K = c->kf;
		aj.V = c->vf;
	} else {
		aj.K = lp_kvcache_k(&c->kv, il, 0);
		aj.V = lp_kvcache_v(&c->kv, il, 0);
	}
	lp_pool_for(c->pool, n * c->m->hp.n_head, 1, attn_task, &aj);
}

/* ---- the step -------------------------------------------------------- */

static void layer_step(struct lp_ctx *c, uint32_t il, uint32_t pos, size_t n)
{
	const struct lp_hparams *hp = &c->m->hp;
	const struct lp_layer *l = &c->m->layers[il];
	size_t E = hp->n_embd, Q = (size_t)hp->n_head * hp->head_dim;
	size_t KV = (size_t)hp->n_head_kv * hp->head_dim, F = hp->n_ff, half = hp->n_rot / 2;
	/* attention block */
	for (size_t t = 0; t < n; t++)
		rmsnorm(c->xb + t * E, c->x + t * E, l->attn_norm, E, hp->norm_eps);
	matmul(c, &l->wq, c->xb, n, c->q, Q);
	matmul(c, &l->wk, c->xb, n, c->k, KV);
	matmul(c, &l->wv, c->xb, n, c->v, KV);
	add_bias(c->q, l->bq, n, Q);
	add_bias(c->k, l->bk, n, KV);
	add_bias(c->v, l->bv, n, KV);
	for (size_t t = 0; t < n; t++) {
		rope(hp, c->q + t * Q, hp->n_head, c->rope_cos + t * half, c->rope_sin + t * half);
		rope(hp, c->k + t * KV, hp->n_head_kv, c->rope_cos + t * half,
		     c->rope_sin + t * half);
		lp_kvcache_store(&c->kv, il, pos + (uint32_t)t, c->k + t * KV, c->v + t * KV);
	}
	attention(c, il, pos, n);
	matmul(c, &l->wo, c->att, n, c->xb2, E);
	for (size_t i = 0; i < n * E; i++)
		c->x[i] += c->xb2[i];

	/* feed-forward block: down(silu(gate x) * up x) */
	for (size_t t = 0; t < n; t++)
		rmsnorm(c->xb + t * E, c->x + t * E, l->ffn_norm, E, hp->norm_eps);
	matmul(c, &l->w_gate, c->xb, n, c->hb, F);
	matmul(c, &l->w_up, c->xb, n, c->hb2, F);
	for (size_t i = 0; i < n * F; i++) {
		float g = c->hb[i];
		c->hb[i] = g / (1.0f + expf(-g)) * c->hb2[i];
	}
	matmul(c, &l->w_down, c->hb, n, c->xb2, E);
	for (size_t i = 0; i < n * E; i++)
		c->x[i] += c->xb2[i];
}

/* n <= n_batch tokens at pos; logits of all (all != 0) or the last. */
static void step(struct lp_ctx *c, const int32_t *tokens, size_t n, uint32_t pos,
		 float *logits, int all)
{
	const struct lp_model *m = c->m;
	const struct lp_hparams *hp = &m->hp;
	size_t E = hp->n_embd;

	for (size_t t = 0; t < n; t++)
		lp_dequantize_row(m->tok_embd.type, (const uint8_t *)m->tok_embd.data +
				  (size_t)tokens[t] * m->tok_embd.row_bytes, c->x + t * E, E);
	rope_tables(c, pos, n);
	for (uint32_t il = 0; il < hp->n_layer; il++) {
		lp_model_stream_layer(m, il);
		layer_step(c, il, pos, n);
	}
	if (all) {
		for (size_t t = 0; t < n; t++)
			rmsnorm(c->xb + t * E, c->x + t * E, m->output_norm, E, hp->norm_eps);
		matmul(c, &m->output, c->xb, n, logits, hp->n_vocab);
		memcpy(c->logits, logits + (n - 1) * hp->n_vocab, hp->n_vocab * sizeof(float));
	} else {
		rmsnorm(c->xb, c->x + (n - 1) * E, m->output_norm, E, hp->norm_eps);
		matmul(c, &m->output, c->xb, 1, c->logits, hp->n_vocab);
	}
	/* after the output: its norm may share pages with the last layer */
	lp_model_stream_done(m);
}

static enum lp_status eval(struct lp_ctx *c, const int32_t *tokens, size_t n, uint32_t pos,
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
		step(c, tokens + done, k, pos + (uint32_t)done,
		     all ? logits + done * n_vocab : NULL, all);
		c->n_past = pos + (uint32_t)(done + k);
	}
	if (!all && logits)
		memcpy(logits, c->logits, n_vocab * sizeof(float));
	return LP_OK;
}

enum lp_status lp_ctx_eval(struct lp_ctx *c, const int32_t *tokens, size_t n, uint32_t pos,
			   float *logits_last, struct lp_diag *d)
{
	return eval(c, tokens, n, pos, logits_last, 0, d);
}

enum lp_status lp_ctx_eval_all(struct lp_ctx *c, const int32_t *tokens, size_t n,
			       uint32_t pos, float *logits, struct lp_diag *d)
{
	return eval(c, tokens, n, pos, logits, 1, d);
}
