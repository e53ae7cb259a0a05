/* plan.c - predicted bytes per term and the choice of context, KV type and
 * batch under a budget (see plan.h). */
#include "model/plan.h"

#include "core/mem.h"
#include "core/threadpool.h"
#include "model/kvcache.h"

/* Weights with the whole file (0) or the window (1) resident. */
static size_t weight_bytes(const struct lp_model *m, int stream)
{
	const struct lp_gguf *g = m->gguf;
	size_t n = stream ? lp_model_window_bytes(m) : lp_gguf_file_bytes(g);

	/* The loader converts these to float (model.h); the same rule. */
	for (size_t i = 0; i < lp_gguf_n_tensors(g); i++) {
		const struct lp_gguf_tensor *t = lp_gguf_tensor_at(g, i);
		if (t->n_dims == 1 && (t->type != LP_Q_F32 || (uintptr_t)t->data % 4))
			n += (size_t)t->ne[0] * sizeof(float);
	}
	return n;
}

size_t lp_plan_weight_bytes(const struct lp_model *m)
{
	return weight_bytes(m, lp_model_streamed(m));
}

size_t lp_plan_stream_weight_bytes(const struct lp_model *m)
{
	return weight_bytes(m, 1);
}

static void predict(const struct lp_model *m, size_t weights, size_t other,
		    const struct lp_forward_params *p, struct lp_plan_bytes *out)
{
	struct lp_forward_bytes cb;

	lp_forward_plan_bytes(m, p, &cb);
	out->weights = weights;
	out->other = other;
	out->kv = cb.kv;
	out->scratch = cb.scratch;
	out->logits = cb.logits;
	out->total = out->weights + out->other + out->kv + out->scratch + out->logits;
	out->gpu_weights = cb.gpu_weights;
	out->gpu_kv = cb.gpu_kv;
	out->gpu_scratch = cb.gpu_scratch;
	out->gpu_total = cb.gpu_weights + cb.gpu_kv + cb.gpu_scratch;
}

void lp_plan_predict(const struct lp_model *m, size_t other, const struct lp_forward_params *p,
		     struct lp_plan_bytes *out)
{
	predict(m, lp_plan_weight_bytes(m), other, p, out);
}

/* What lp_plan_choose fits: the request, the weights it assumes and the
 * layers it puts on the GPU. */
struct fit {
	const struct lp_plan_request *r;
	size_t weights;
	uint32_t gpu_layers;
	size_t gpu_usable;
};

/* Context lengths tried, ascending: powers of two below 256, then
 * multiples of 256, none above the training context. */
static uint32_t next_ctx(uint32_t n)
{
	return n < 256 ? n * 2 : n + 256;
}

/* The training context; a file that does not say gets 2048. */
static uint32_t ctx_cap(const struct lp_model *m)
{
	return m->hp.n_ctx_train ? m->hp.n_ctx_train : 2048;
}

static uint32_t smallest_ctx(uint32_t cap)
{
	uint32_t n = 64;

	while (n > 1 && n > cap)
		n /= 2;
	return n;
}

static size_t predict_total(const struct lp_model *m, const struct fit *f,
			    uint32_t n_ctx, enum lp_qtype kv, uint32_t n_batch,
			    struct lp_plan_bytes *b)
{
	struct lp_forward_params p = lp_forward_default_params();

	p.n_ctx = n_ctx;
	p.kv_type = kv;
	p.n_threads = f->r->n_threads;
	p.n_batch = n_batch;
	p.gpu_layers = f->gpu_layers;
	predict(m, f->weights, f->r->other, &p, b);
	return b->total;
}

/* 1 when the configuration `b` was predicted for fits both budgets. */
static int fits(const struct fit *f, const struct lp_plan_bytes *b, size_t usable)
{
	return b->total <= usable && (!f->gpu_layers || b->gpu_total <= f->gpu_usable);
}

/* Largest candidate context that fits `usable`, or 0. Totals grow with the
 * context, so the scan stops at the first that does not fit. */
static uint32_t largest_fit(const struct lp_model *m, const struct fit *r,
			    enum lp_qtype kv, uint32_t n_batch, size_t usable)
{
	uint32_t cap = ctx_cap(m), best = 0;
	struct lp_plan_bytes b;

	for (uint32_t n = smallest_ctx(cap); n <= cap; n = next_ctx(n)) {
		predict_total(m, r, n, kv, n_batch, &b);
		if (!fits(r, &b, usable))
			break;
		best = n;
	}
	return best;
}

static const uint32_t batches[] = { 512, 256, 128, 64, 32 };

/* The largest context for `kv`. A smaller batch (slower prefill) is taken
 * only when it buys a quarter more context, or when nothing fits at 512.
 * Sets *n_batch; returns 0 when nothing fits at all. */
static uint32_t fit_kv(const struct lp_model *m, const struct fit *r,
		       enum lp_qtype kv, size_t usable, uint32_t *n_batch)
{
	uint32_t best = 0;

	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		uint32_t n = largest_fit(m, r, kv, batches[i], usable);
		if (n && (uint64_t)n * 4 >= (uint64_t)best * 5) {
			best = n;
			*n_batch = batches[i];
		}
	}
	return best;
}

static int kv_usable(const struct lp_model *m, enum lp_qtype kv)
{
	const struct lp_hparams *hp = &m->hp;

	return lp_kvcache_bytes_per_token(hp->n_layer, hp->n_head_kv * hp->head_dim,
					  hp->head_dim, kv) != 0;
}

static enum lp_status too_small(const struct lp_model *m, const struct fit *f,
				enum lp_qtype kv, size_t usable, struct lp_diag *d)
{
	const struct lp_plan_request *r = f->r;
	uint32_t n = smallest_ctx(ctx_cap(m));
	struct lp_plan_bytes b;
	char need[32], have[32], margin[32];
	size_t weights;

	predict_total(m, f, n, kv, batches[sizeof(batches) / sizeof(batches[0]) - 1], &b);
	weights = b.weights + b.other;
	lp_mem_format_size(r->budget, have, sizeof(have));
	lp_mem_format_size(r->budget - usable, margin, sizeof(margin));
	if (weights >= r->budget)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				   "the weights alone need %s, more than the budget %s",
				   lp_mem_format_size(weights, need, sizeof(need)), have);
	if (weights >= usable)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				   "the weights alone need %s, more than the budget %s less "
				   "its margin of %s", lp_mem_format_size(weights, need, sizeof(need)),
				   have, margin);
	return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
			   "the smallest context (%u tokens, kv %s) needs %s, more than the "
			   "budget %s less its margin of %s", n, lp_qtype_name(kv),
			   lp_mem_format_size(b.total, need, sizeof(need)), have, margin);
}

/* Chunk = context less the template and the generated text (at most half
 * the context), in steps of 16 tokens; overlap about 12% of it. */
static void chunking(struct lp_plan *p)
{
	uint32_t reserve = LP_PLAN_TEMPLATE_TOKENS + LP_PLAN_MAX_TOKENS;

	if (reserve > p->n_ctx / 2)
		reserve = p->n_ctx / 2;
	p->chunk = (p->n_ctx - reserve) / 16 * 16;
	if (!p->chunk)
		p->chunk = p->n_ctx - reserve;
	p->overlap = (uint32_t)((p->chunk * 12ull + 400) / 800) * 8;
}

/* The largest context and its KV type and batch for the weights in `f`;
 * 0 when nothing fits. */
static uint32_t choose(const struct lp_model *m, const struct fit *f, size_t usable,
		       enum lp_qtype *kv, uint32_t *n_batch)
{
	uint32_t n = fit_kv(m, f, *kv, usable, n_batch);

	if (f->r->kv_auto && n != ctx_cap(m) && kv_usable(m, LP_Q_Q8_0)) {
		uint32_t b8 = 0, n8 = fit_kv(m, f, LP_Q_Q8_0, usable, &b8);
		if (n8 > n) {
			n = n8;
			*n_batch = b8;
			*kv = LP_Q_Q8_0;
		}
	}
	return n;
}

/* With a device budget: the layers to offload and the context they
 * leave (see plan.h); *n_batch and *kv as choose() sets them. */
static uint32_t choose_gpu(const struct lp_model *m, struct fit *f, size_t usable,
			   enum lp_qtype kv0, enum lp_qtype *kv, uint32_t *n_batch)
{
	uint32_t want = ctx_cap(m) < LP_PLAN_GPU_CTX ? ctx_cap(m) : LP_PLAN_GPU_CTX;
	uint32_t best_n = 0, best_g = 0, best_b = 0;
	enum lp_qtype best_kv = kv0;

	for (uint32_t g = m->hp.n_layer + 1; g-- > 0;) {
		enum lp_qtype k = kv0;
		uint32_t b = 0, n;
		f->gpu_layers = g;
		n = choose(m, f, usable, &k, &b);
		if (n > best_n) {
			best_n = n;
			best_g = g;
			best_b = b;
			best_kv = k;
		}
		if (n >= want)
			break;
	}
	f->gpu_layers = best_g;
	*kv = best_kv;
	*n_batch = best_b;
	return best_n;
}

static size_t margin_of(size_t budget)
{
	size_t margin = (size_t)((double)budget * LP_PLAN_MARGIN);

	return margin < LP_PLAN_MARGIN_MIN ? LP_PLAN_MARGIN_MIN : margin;
}

/* The context, KV type and batch for the weights in `f` (and the GPU
 * layers with a device budget); 0 when nothing fits. */
static uint32_t choose_all(const struct lp_model *m, struct fit *f, size_t usable,
			   enum lp_qtype kv0, enum lp_qtype *kv, uint32_t *n_batch)
{
	*kv = kv0;
	if (f->r->gpu_budget)
		return choose_gpu(m, f, usable, kv0, kv, n_batch);
	return choose(m, f, usable, kv, n_batch);
}

enum lp_status lp_plan_choose(const struct lp_model *m, const struct lp_plan_request *r,
			      struct lp_plan *out, struct lp_diag *d)
{
	const struct lp_hparams *hp = &m->hp;
	size_t margin = margin_of(r->budget), gm = margin_of(r->gpu_budget);
	size_t usable;
	enum lp_qtype kv0 = r->kv_auto ? LP_Q_F16 : r->kv_type, kv = kv0;
	uint32_t n_batch = 0, n;
	struct fit f = { r, lp_plan_weight_bytes(m), 0,
			 r->gpu_budget > gm ? r->gpu_budget - gm : 0 };
	int stream = lp_model_streamed(m);

	usable = r->budget > margin ? r->budget - margin : 0;
	if (!kv_usable(m, kv))
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "kv type '%s' cannot hold heads of %u elements",
				   lp_qtype_name(kv), hp->head_dim);
	n = choose_all(m, &f, usable, kv0, &kv, &n_batch);
	if (!n && r->allow_stream && !lp_model_streamed(m)) {
		f.weights = lp_plan_stream_weight_bytes(m);
		n = choose_all(m, &f, usable, kv0, &kv, &n_batch);
		stream = 1;
	}
	if (!n) {
		f.gpu_layers = 0;
		return too_small(m, &f, r->kv_auto && kv_usable(m, LP_Q_Q8_0) ? LP_Q_Q8_0 : kv,
				 usable, d);
	}
	out->n_ctx = n;
	out->kv_type = kv;
	out->n_batch = n_batch > n ? n : n_batch;
	out->usable = usable;
	out->stream = stream;
	out->gpu_layers = f.gpu_layers;
	out->gpu_usable = f.gpu_usable;
	out->kv_per_token = lp_kvcache_bytes_per_token(hp->n_layer,
							hp->n_head_kv * hp->head_dim,
							hp->head_dim, kv);
	predict_total(m, &f, n, kv, n_batch, &out->bytes);
	out->n_threads = r->n_threads > 0 ? r->n_threads : lp_pool_default_threads();
	chunking(out);
	return LP_OK;
}
