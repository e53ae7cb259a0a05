#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

const char *lp_arch_name(enum lp_arch a)
{
	return a == LP_ARCH_QWEN2 ? "qwen2" : "llama";
}

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

static float get_f32(struct loader *L, const char *suffix, float dflt)
{
	char key[128];
	double v;

	snprintf(key, sizeof(key), "%s.%s", L->arch, suffix);
	return lp_gguf_get_f64(L->g, key, &v) && v > 0 ? (float)v : dflt;
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
	hp->rope_base = get_f32(L, "rope.freq_base", 10000.0f);
	hp->norm_eps = get_f32(L, "attention.layer_norm_rms_epsilon", 1e-5f);
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
		return LP_OK;
	}
	if (L->store_used + n > L->store_cap)
		return lp_diag_set(L->d, LP_E_INTERNAL, L->path, 0, 0,
				   "vector store too small for '%s'", name);
	lp_dequantize_row(gt->type, gt->data, L->store + L->store_used, n);
	*out = L->store + L->store_used;
	L->store_used += n;
	return LP_OK;
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
	/* The names were on the stack: keep only the generic label. */
	ly->wq.name = "attn_q"; ly->wk.name = "attn_k"; ly->wv.name = "attn_v";
	ly->wo.name = "attn_output"; ly->w_gate.name = "ffn_gate";
	ly->w_up.name = "ffn_up"; ly->w_down.name = "ffn_down";
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
	free(m->layers);
	free(m);
}

static size_t mat_bytes(const struct lp_tensor *t)
{
	return (size_t)t->rows * t->row_bytes;
}

size_t lp_model_weight_bytes(const struct lp_model *m)
{
	size_t n = mat_bytes(&m->tok_embd) + (m->tied_output ? 0 : mat_bytes(&m->output));

	for (uint32_t il = 0; il < m->hp.n_layer; il++) {
		const struct lp_layer *l = &m->layers[il];
		n += mat_bytes(&l->wq) + mat_bytes(&l->wk) + mat_bytes(&l->wv) +
		     mat_bytes(&l->wo) + mat_bytes(&l->w_gate) + mat_bytes(&l->w_up) +
		     mat_bytes(&l->w_down);
	}
	return n;
}
