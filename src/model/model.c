#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "quant/rowgroup.h"

/* Loader state: the file, the error sink, and where converted vectors go. */
struct loader {
	const struct lp_gguf *g;
	struct lp_diag *d;
	const char *path;
	char arch[32];
	float *store;
	size_t store_used, store_cap;   /* floats */
};

static int get_u32(struct loader *L, const char *suffix, uint32_t *out, int required,
		   enum lp_status *st)
{
	char key[128];
	uint64_t v;

	snprintf(key, sizeof(key), "%s.%s", L->arch, suffix);
	if (!lp_gguf_get_u64(L->g, key, &v)) {
		if (required)
			*st = lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
					  "missing metadata key '%s'", key);
		return 0;
	}
	if (v == 0 || v > (1u << 30)) {
		*st = lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				  "metadata key '%s' has an unusable value %llu",
				  key, (unsigned long long)v);
		return 0;
	}
	*out = (uint32_t)v;
	return 1;
}

/* An optional real hyper-parameter: `dflt` when absent; present, it must
 * be finite and in (lo, hi], or the model is refused (a NaN epsilon or a
 * zero rope base gives nonsense, not an error, once the forward runs). */
static int get_f32(struct loader *L, const char *suffix, float dflt, double lo, double hi,
		   float *out, enum lp_status *st)
{
	char key[128];
	double v;

	snprintf(key, sizeof(key), "%s.%s", L->arch, suffix);
	*out = dflt;
	if (!lp_gguf_find(L->g, key))
		return 1;
	if (!lp_gguf_get_f64(L->g, key, &v) || !isfinite(v) || v <= lo || v > hi) {
		*st = lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				  "metadata key '%s' must be a number above %g and at most %g",
				  key, lo, hi);
		return 0;
	}
	*out = (float)v;
	return 1;
}

static enum lp_status read_hparams(struct loader *L, struct lp_hparams *hp)
{
	enum lp_status st = LP_OK;

	if (!lp_gguf_get_str(L->g, "general.architecture", L->arch, sizeof(L->arch)))
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "missing metadata key 'general.architecture'");
	if (!strcmp(L->arch, "llama")) {
		hp->arch = LP_ARCH_LLAMA;
		hp->rope_mode = LP_ROPE_ADJACENT;
	} else if (!strcmp(L->arch, "qwen2")) {
		hp->arch = LP_ARCH_QWEN2;
		hp->rope_mode = LP_ROPE_NEOX;
	} else {
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "architecture '%s' is not supported", L->arch);
	}
	if (!get_u32(L, "embedding_length", &hp->n_embd, 1, &st) ||
	    !get_u32(L, "block_count", &hp->n_layer, 1, &st) ||
	    !get_u32(L, "feed_forward_length", &hp->n_ff, 1, &st) ||
	    !get_u32(L, "attention.head_count", &hp->n_head, 1, &st))
		return st;
	hp->n_head_kv = hp->n_head;
	hp->n_ctx_train = 2048;
	if ((!get_u32(L, "attention.head_count_kv", &hp->n_head_kv, 0, &st) ||
	     !get_u32(L, "context_length", &hp->n_ctx_train, 0, &st)) && st != LP_OK)
		return st;
	if (hp->n_embd % hp->n_head)
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "embedding length %u is not a multiple of the head count %u",
				   hp->n_embd, hp->n_head);
	if (hp->n_head % hp->n_head_kv)
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "head count %u is not a multiple of the KV head count %u",
				   hp->n_head, hp->n_head_kv);
	hp->head_dim = hp->n_embd / hp->n_head;
	hp->n_rot = hp->head_dim;
	if (!get_u32(L, "rope.dimension_count", &hp->n_rot, 0, &st) && st != LP_OK)
		return st;
	if (hp->n_rot > hp->head_dim || hp->n_rot % 2)
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "rope dimension count %u must be even and at most the head size %u",
				   hp->n_rot, hp->head_dim);
	if (!get_f32(L, "rope.freq_base", 10000.0f, 1.0, 1e12, &hp->rope_base, &st) ||
	    !get_f32(L, "attention.layer_norm_rms_epsilon", 1e-5f, 0.0, 1.0, &hp->norm_eps,
		     &st))
		return st;
	return LP_OK;
}

enum lp_status lp_model_read_hparams(const struct lp_gguf *g, struct lp_hparams *hp,
				     struct lp_diag *d)
{
	struct loader L = { .g = g, .d = d, .path = lp_gguf_path(g) };

	memset(hp, 0, sizeof(*hp));
	return read_hparams(&L, hp);
}

/* A norm weight or bias that is not finite poisons every token: refuse it
 * at load, where it costs one pass over a few thousand floats. */
static enum lp_status check_finite(struct loader *L, const char *name, const float *v,
				   uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
					   "tensor '%s' holds a value that is not finite at %llu",
					   name, (unsigned long long)i);
	return LP_OK;
}

/* Find `name` and check it is a (rows, cols) matrix of a supported type;
 * rows == 0 accepts any row count (the vocabulary). */
static enum lp_status get_mat(struct loader *L, const char *name, uint64_t rows,
			      uint64_t cols, struct lp_tensor *t)
{
	const struct lp_gguf_tensor *gt = lp_gguf_find_tensor(L->g, name);

	if (!gt)
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "missing tensor '%s'", name);
	if (gt->n_dims != 2 || gt->ne[0] != cols || (rows && gt->ne[1] != rows))
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "tensor '%s' has shape [%llu, %llu, %llu], expected [%llu, %llu]",
				   name, (unsigned long long)gt->ne[0],
				   (unsigned long long)gt->ne[1],
				   (unsigned long long)gt->ne[2], (unsigned long long)cols,
				   (unsigned long long)(rows ? rows : gt->ne[1]));
	if (!lp_qtype_supported(gt->type) || lp_qtype_row_bytes(gt->type, cols) == 0)
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "tensor '%s' has type %u, which cannot hold rows of %llu",
				   name, (unsigned)gt->type, (unsigned long long)cols);
	/* Real files align tensors to 32; kernels read blocks and floats in
	 * place, so anything less than 4 would mean misaligned loads. */
	if ((uintptr_t)gt->data % 4)
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "tensor '%s' data is not aligned to 4 bytes", name);
	t->name = name;
	t->type = gt->type;
	t->data = gt->data;
	t->rows = gt->ne[1];
	t->cols = cols;
	t->row_bytes = lp_qtype_row_bytes(gt->type, cols);
	t->rowgroups = 0;
	return LP_OK;
}

/* A 1-D tensor of n elements as floats: in place when F32 and aligned,
 * else converted into the loader's store. Absent and optional: NULL. */
static enum lp_status get_vec(struct loader *L, const char *name, uint64_t n,
			      int optional, const float **out)
{
	const struct lp_gguf_tensor *gt = lp_gguf_find_tensor(L->g, name);

	*out = NULL;
	if (!gt)
		return optional ? LP_OK : lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
						      "missing tensor '%s'", name);
	if (gt->n_dims != 1 || gt->ne[0] != n)
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "tensor '%s' has shape [%llu, %llu], expected [%llu]",
				   name, (unsigned long long)gt->ne[0],
				   (unsigned long long)gt->ne[1], (unsigned long long)n);
	if (!lp_qtype_supported(gt->type) || lp_qtype_row_bytes(gt->type, n) == 0)
		return lp_diag_set(L->d, LP_E_MODEL, L->path, 0, 0,
				   "tensor '%s' has type %u, which cannot hold %llu elements",
				   name, (unsigned)gt->type, (unsigned long long)n);
	if (gt->type == LP_Q_F32 && ((uintptr_t)gt->data % sizeof(float)) == 0) {
		*out = gt->data;
		return check_finite(L, name, *out, n);
	}
	if (L->store_used + n > L->store_cap)
		return lp_diag_set(L->d, LP_E_INTERNAL, L->path, 0, 0,
				   "vector store too small for '%s'", name);
	lp_dequantize_row(gt->type, gt->data, L->store + L->store_used, n);
	*out = L->store + L->store_used;
	L->store_used += n;
	return check_finite(L, name, *out, n);
}

/* Floats needed to convert every 1-D tensor that is not usable in place. */
static size_t store_need(const struct lp_gguf *g)
{
	size_t need = 0;

	for (size_t i = 0; i < lp_gguf_n_tensors(g); i++) {
		const struct lp_gguf_tensor *t = lp_gguf_tensor_at(g, i);
		if (t->n_dims == 1 && (t->type != LP_Q_F32 || (uintptr_t)t->data % 4))
			need += t->ne[0];
	}
	return need;
}

static int span_cmp(const void *a, const void *b)
{
	const struct lp_span *x = a, *y = b;

	return (uintptr_t)x->p < (uintptr_t)y->p ? -1 : (uintptr_t)x->p > (uintptr_t)y->p;
}

/* The file bytes of a layer's tensors (converted vectors included: their
 * source is read once at load, and a few bytes more do no harm), sorted,
 * with neighbours merged across the alignment padding, so that a layer
 * stored in one piece, as converters write it, takes one call. */
static void collect_spans(const struct lp_gguf *g, char names[][64], int n,
			  struct lp_layer *ly)
{
	size_t gap = lp_gguf_alignment(g);
	int k = 0;

	for (int i = 0; i < n; i++) {
		const struct lp_gguf_tensor *t = lp_gguf_find_tensor(g, names[i]);
		if (t && t->bytes)
			ly->spans[k++] = (struct lp_span){ t->data, (size_t)t->bytes };
	}
	qsort(ly->spans, (size_t)k, sizeof(ly->spans[0]), span_cmp);
	ly->n_spans = 0;
	for (int i = 0; i < k; i++) {
		struct lp_span *last = ly->n_spans ? &ly->spans[ly->n_spans - 1] : NULL;
		const char *end = last ? (const char *)last->p + last->len : NULL;
		if (last && (const char *)ly->spans[i].p <= end + gap) {
			const char *e = (const char *)ly->spans[i].p + ly->spans[i].len;
			if (e > end)
				last->len = (size_t)(e - (const char *)last->p);
		} else {
			ly->spans[ly->n_spans++] = ly->spans[i];
		}
	}
}

static enum lp_status load_layer(struct loader *L, const struct lp_hparams *hp,
				 uint32_t il, struct lp_layer *ly)
{
	/* Names live in a per-layer static-sized table so tensor views can
	 * keep pointers to them for messages. */
	static const char *const fmt[] = {
		"blk.%u.attn_norm.weight", "blk.%u.attn_q.weight", "blk.%u.attn_k.weight",
		"blk.%u.attn_v.weight", "blk.%u.attn_output.weight", "blk.%u.attn_q.bias",
		"blk.%u.attn_k.bias", "blk.%u.attn_v.bias", "blk.%u.ffn_norm.weight",
		"blk.%u.ffn_gate.weight", "blk.%u.ffn_up.weight", "blk.%u.ffn_down.weight",
	};
	char nm[12][64];
	uint64_t E = hp->n_embd, Q = (uint64_t)hp->n_head * hp->head_dim;
	uint64_t KV = (uint64_t)hp->n_head_kv * hp->head_dim, F = hp->n_ff;
	int bias_optional = hp->arch != LP_ARCH_QWEN2;
	enum lp_status st;

	for (int i = 0; i < 12; i++)
		snprintf(nm[i], sizeof(nm[i]), fmt[i], il);
	if ((st = get_vec(L, nm[0], E, 0, &ly->attn_norm)) ||
	    (st = get_mat(L, nm[1], Q, E, &ly->wq)) ||
	    (st = get_mat(L, nm[2], KV, E, &ly->wk)) ||
	    (st = get_mat(L, nm[3], KV, E, &ly->wv)) ||
	    (st = get_mat(L, nm[4], E, Q, &ly->wo)) ||
	    (st = get_vec(L, nm[5], Q, bias_optional, &ly->bq)) ||
	    (st = get_vec(L, nm[6], KV, bias_optional, &ly->bk)) ||
	    (st = get_vec(L, nm[7], KV, bias_optional, &ly->bv)) ||
	    (st = get_vec(L, nm[8], E, 0, &ly->ffn_norm)) ||
	    (st = get_mat(L, nm[9], F, E, &ly->w_gate)) ||
	    (st = get_mat(L, nm[10], F, E, &ly->w_up)) ||
	    (st = get_mat(L, nm[11], E, F, &ly->w_down)))
		return st;
	collect_spans(L->g, nm, 12, ly);
	/* The names were on the stack: keep only the generic label. */
	ly->wq.name = "attn_q"; ly->wk.name = "attn_k"; ly->wv.name = "attn_v";
	ly->wo.name = "attn_output"; ly->w_gate.name = "ffn_gate";
	ly->w_up.name = "ffn_up"; ly->w_down.name = "ffn_down";
	return LP_OK;
}

static void drop_layer(const struct lp_model *m, uint32_t il);

/* A span and the layer it belongs to (UINT32_MAX: always resident). */
struct owned_span {
	uintptr_t p;
	size_t len;
	uint32_t owner;
};

static int owned_cmp(const void *a, const void *b)
{
	const struct owned_span *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p;
}

static void add_neighbour(struct lp_model *m, uint32_t owner, uint32_t nb)
{
	uint32_t *ids = owner == UINT32_MAX ? m->neighbours : m->layers[owner].neighbours;
	int *n = owner == UINT32_MAX ? &m->n_neighbours : &m->layers[owner].n_neighbours;

	if (nb == UINT32_MAX || nb == owner)
		return;
	for (int i = 0; i < *n; i++)
		if (ids[i] == nb)
			return;
	/* past the cap a neighbour keeps a few stray pages: memory, not
	 * correctness */
	if (*n < LP_MAX_NEIGHBOURS)
		ids[(*n)++] = nb;
}

/* Which layers lie next to each layer, and next to the always-resident
 * tensors, in the file. */
static enum lp_status find_neighbours(struct lp_model *m, struct lp_diag *d)
{
	const struct lp_tensor *keep[2] = { &m->tok_embd, &m->output };
	const struct lp_gguf_tensor *norm = lp_gguf_find_tensor(m->gguf, "output_norm.weight");
	size_t n = 0, cap = 3 + (size_t)m->hp.n_layer * LP_LAYER_MAX_SPANS;
	struct owned_span *all = malloc(cap * sizeof(*all));

	if (!all)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate the span table");
	for (int i = 0; i < (m->tied_output ? 1 : 2); i++)
		all[n++] = (struct owned_span){ (uintptr_t)keep[i]->data,
						(size_t)keep[i]->rows * keep[i]->row_bytes,
						UINT32_MAX };
	if (norm)
		all[n++] = (struct owned_span){ (uintptr_t)norm->data, (size_t)norm->bytes,
						UINT32_MAX };
	for (uint32_t il = 0; il < m->hp.n_layer; il++)
		for (int i = 0; i < m->layers[il].n_spans; i++)
			all[n++] = (struct owned_span){ (uintptr_t)m->layers[il].spans[i].p,
							m->layers[il].spans[i].len, il };
	qsort(all, n, sizeof(*all), owned_cmp);
	for (size_t i = 1; i < n; i++) {
		add_neighbour(m, all[i - 1].owner, all[i].owner);
		add_neighbour(m, all[i].owner, all[i - 1].owner);
	}
	free(all);
	return LP_OK;
}

/* Reserve the window and drop whatever loading touched of the layers. */
static enum lp_status start_streaming(struct lp_model *m, struct lp_diag *d)
{
	size_t window = lp_model_window_bytes(m);
	enum lp_status st = find_neighbours(m, d);

	if (st || (st = lp_mem_reserve(LP_MEM_WEIGHTS, window, d)))
		return st;
	m->window_reserved = window;
	m->streamed = 1;
	for (uint32_t il = 0; il < m->hp.n_layer; il++)
		drop_layer(m, il);
	return LP_OK;
}

enum lp_status lp_model_load(const struct lp_gguf *g, struct lp_model **out,
			     struct lp_diag *d)
{
	struct loader L = { .g = g, .d = d, .path = lp_gguf_path(g) };
	struct lp_model *m;
	struct lp_hparams *hp;
	enum lp_status st;

	*out = NULL;
	lp_mem_set_phase("load");
	m = calloc(1, sizeof(*m));
	if (!m)
		return lp_diag_set(d, LP_E_NOMEM, L.path, 0, 0, "cannot allocate the model");
	m->gguf = g;
	hp = &m->hp;
	if ((st = read_hparams(&L, hp)))
		goto fail;
	m->layers = calloc(hp->n_layer, sizeof(*m->layers));
	if (!m->layers) {
		st = lp_diag_set(d, LP_E_NOMEM, L.path, 0, 0, "cannot allocate the layer table");
		goto fail;
	}
	L.store_cap = store_need(g);
	if (L.store_cap) {
		L.store = lp_mem_alloc(LP_MEM_WEIGHTS, L.store_cap * sizeof(float), d);
		if (!L.store) {
			st = LP_E_NOMEM;
			goto fail;
		}
		m->vec_store = L.store;
	}
	if ((st = get_mat(&L, "token_embd.weight", 0, hp->n_embd, &m->tok_embd)))
		goto fail;
	if (m->tok_embd.rows == 0 || m->tok_embd.rows > (1u << 24)) {
		st = lp_diag_set(d, LP_E_MODEL, L.path, 0, 0,
				 "tensor 'token_embd.weight' has %llu rows, expected 1 to 16777216",
				 (unsigned long long)m->tok_embd.rows);
		goto fail;
	}
	hp->n_vocab = (uint32_t)m->tok_embd.rows;
	if ((st = get_vec(&L, "output_norm.weight", hp->n_embd, 0, &m->output_norm)))
		goto fail;
	if (lp_gguf_find_tensor(g, "output.weight")) {
		if ((st = get_mat(&L, "output.weight", hp->n_vocab, hp->n_embd, &m->output)))
			goto fail;
	} else {
		m->output = m->tok_embd;
		m->tied_output = 1;
	}
	for (uint32_t il = 0; il < hp->n_layer; il++)
		if ((st = load_layer(&L, hp, il, &m->layers[il])))
			goto fail;
	if (lp_gguf_streamed(g) && (st = start_streaming(m, d)))
		goto fail;
	*out = m;
	return LP_OK;
fail:
	lp_model_free(m);
	return st;
}

void lp_model_free(struct lp_model *m)
{
	if (!m)
		return;
	lp_mem_free(m->vec_store);
	lp_mem_unreserve(LP_MEM_WEIGHTS, m->window_reserved);
	free(m->layers);
	free(m);
}

int lp_model_streamed(const struct lp_model *m)
{
	return m->streamed;
}

/* Whole pages that bytes [p, p + len) touch. */
static size_t page_bytes(const void *p, size_t len, size_t page)
{
	uintptr_t a = (uintptr_t)p;

	if (!len)
		return 0;
	return ((a + len + page - 1) / page - a / page) * page;
}

size_t lp_model_window_bytes(const struct lp_model *m)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), layer = 0, n, file;
	const struct lp_gguf *g = m->gguf;
	const struct lp_gguf_tensor *norm = lp_gguf_find_tensor(g, "output_norm.weight");

	/* the metadata: the tokenizer and tensor lookups read it */
	n = (lp_gguf_data_offset(g) + page - 1) / page * page;
	n += page_bytes(m->tok_embd.data, (size_t)m->tok_embd.rows * m->tok_embd.row_bytes,
			page);
	if (!m->tied_output)
		n += page_bytes(m->output.data, (size_t)m->output.rows * m->output.row_bytes,
				page);
	if (norm)
		n += page_bytes(norm->data, (size_t)norm->bytes, page);
	for (uint32_t il = 0; il < m->hp.n_layer; il++) {
		const struct lp_layer *l = &m->layers[il];
		size_t b = 0;
		for (int i = 0; i < l->n_spans; i++) {
			uintptr_t a = (uintptr_t)l->spans[i].p, e = a + l->spans[i].len;
			b += page_bytes(l->spans[i].p, l->spans[i].len, page);
			/* the edge pages drop_layer leaves */
			n += (a % page ? page : 0) + (e % page ? page : 0);
		}
		layer = b > layer ? b : layer;
	}
	/* the layer being computed, and room for its neighbours' folios */
	n += layer * (m->hp.n_layer > 1 ? 2 : 1);
	file = (lp_gguf_file_bytes(g) + page - 1) / page * page;
	return n < file ? n : file;
}

static void advise_layer(const struct lp_model *m, uint32_t il, enum lp_file_advice a)
{
	const struct lp_layer *l = &m->layers[il];

	for (int i = 0; i < l->n_spans; i++)
		lp_gguf_advise(m->gguf, l->spans[i].p, l->spans[i].len, a);
}

/* Drop the pages that lie wholly inside a layer's spans: a page shared
 * with a neighbouring tensor may be in use, and dropping it would make the
 * next touch map its whole folio back, pages of this layer included. */
static void drop_layer(const struct lp_model *m, uint32_t il)
{
	const struct lp_layer *l = &m->layers[il];
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (int i = 0; i < l->n_spans; i++) {
		uintptr_t a = ((uintptr_t)l->spans[i].p + page - 1) / page * page;
		uintptr_t e = ((uintptr_t)l->spans[i].p + l->spans[i].len) / page * page;
		if (e > a)
			lp_gguf_advise(m->gguf, (const void *)a, (size_t)(e - a), LP_ADVISE_DROP);
	}
}

static void drop_list(const struct lp_model *m, const uint32_t *ids, int n, uint32_t keep)
{
	for (int i = 0; i < n; i++)
		if (ids[i] != keep)
			drop_layer(m, ids[i]);
}

/*
 * The kernel may map a whole large folio of the page cache on one fault,
 * so mapping layer il also maps pages of the tensors stored next to it in
 * the file (which need not be layer il - 1: files list "blk.10" before
 * "blk.2"). Those neighbours are dropped after il is mapped, so that such
 * pages cannot pile up layer after layer; what stays between two calls is
 * one layer and the pages shared at its edges.
 */
void lp_model_stream_layer(const struct lp_model *m, uint32_t il)
{
	const struct lp_layer *l = &m->layers[il];

	if (!m->streamed)
		return;
	if (il > 0)
		drop_layer(m, il - 1);
	advise_layer(m, il, LP_ADVISE_POPULATE);
	drop_list(m, l->neighbours, l->n_neighbours, il);
	advise_layer(m, (il + 1) % m->hp.n_layer, LP_ADVISE_PREFETCH);
}

void lp_model_stream_done(const struct lp_model *m)
{
	if (!m->streamed)
		return;
	drop_layer(m, m->hp.n_layer - 1);
	drop_list(m, m->neighbours, m->n_neighbours, UINT32_MAX);
}

/* The aligned window a row's page fault maps: the kernel maps around a
 * fault (fault_around_bytes, 64 KiB by default) and whole large folios of
 * the page cache. Measured on Qwen2.5-Coder-0.5B's embedding (kernel
 * 6.18): 64 KiB windows gave back 36 of the 60 MB its 512-token prompt
 * brought in, 256 KiB all of it. */
#define LP_EMBD_WINDOW ((uintptr_t)256 << 10)

void lp_model_embd_release(const struct lp_model *m, int32_t id)
{
	const struct lp_tensor *t = &m->tok_embd;
	uintptr_t b = (uintptr_t)t->data, e = b + (uintptr_t)(t->rows * t->row_bytes);
	uintptr_t row = b + (uintptr_t)id * t->row_bytes, lo, hi;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	if (m->tied_output || m->streamed || id < 0 || (uint64_t)id >= t->rows)
		return;
	lo = row & ~(LP_EMBD_WINDOW - 1);
	hi = (row + t->row_bytes + LP_EMBD_WINDOW - 1) & ~(LP_EMBD_WINDOW - 1);
	lo = lo > b ? lo : b;
	hi = hi < e ? hi : e;
	/* whole pages of the embedding only: a page it shares with another
	 * tensor may hold that tensor's row groups, which dropping would lose */
	lo = (lo + page - 1) & ~(page - 1);
	hi &= ~(page - 1);
	if (lo < hi)
		lp_gguf_release(m->gguf, (const void *)lo, hi - lo);
}

int lp_model_rowgroup(const struct lp_model *m, struct lp_tensor *t)
{
	size_t bytes = (size_t)t->rows * t->row_bytes;
	void *tmp;

	if (t->rowgroups)
		return 1;
	if (m->streamed || !lp_rowgroup_has(t->type) || t->rows % LP_RG_ROWS || t->cols % 32 ||
	    !bytes)
		return 0;
	if (!(tmp = lp_mem_alloc(LP_MEM_SCRATCH, LP_RG_ROWS * t->row_bytes, NULL)))
		return 0;
	if (lp_gguf_protect(m->gguf, t->data, bytes, 1) == 0) {
		lp_rowgroup_pack(t->type, (void *)(uintptr_t)t->data, t->rows, t->cols, tmp);
		lp_gguf_protect(m->gguf, t->data, bytes, 0);
		t->rowgroups = 1;
	}
	lp_mem_free(tmp);
	return t->rowgroups;
}
