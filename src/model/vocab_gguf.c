/* vocab_gguf.c - the vocabulary from a GGUF file's tokenizer.* metadata. */
#include "model/vocab.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "model/gguf.h"
#include "model/tokenizer.h"

/* Arrays lp_vocab_new reads, filled from the file. */
struct gguf_arrays {
	const char **tokens;
	size_t *token_lens;
	float *scores;
	int32_t *types;
	const char **merges;
	size_t *merge_lens;
	char *chat_template;
};

static void arrays_free(struct gguf_arrays *a)
{
	lp_mem_free(a->tokens);
	lp_mem_free(a->token_lens);
	lp_mem_free(a->scores);
	lp_mem_free(a->types);
	lp_mem_free(a->merges);
	lp_mem_free(a->merge_lens);
	lp_mem_free(a->chat_template);
}

static const struct lp_gguf_kv *find_array(const struct lp_gguf *g, const char *key,
					   enum lp_gguf_type elem, int required,
					   struct lp_diag *d, enum lp_status *st)
{
	const struct lp_gguf_kv *kv = lp_gguf_find(g, key);

	*st = LP_OK;
	if (!kv) {
		if (required)
			*st = lp_diag_set(d, LP_E_MODEL, lp_gguf_path(g), 0, 0,
					  "missing key '%s'", key);
		return NULL;
	}
	if (kv->type != LP_GGUF_ARRAY ||
	    (elem == LP_GGUF_STRING) != (kv->v.arr.elem_type == LP_GGUF_STRING)) {
		*st = lp_diag_set(d, LP_E_MODEL, lp_gguf_path(g), 0, 0,
				  "key '%s' has the wrong type", key);
		return NULL;
	}
	return kv;
}

static enum lp_status read_strings(const struct lp_gguf *g, const struct lp_gguf_kv *kv,
				   const char ***ptrs, size_t **lens, struct lp_diag *d)
{
	size_t n = (size_t)kv->v.arr.n;

	*ptrs = lp_mem_alloc(LP_MEM_OTHER, (n ? n : 1) * sizeof(char *), d);
	*lens = lp_mem_alloc(LP_MEM_OTHER, (n ? n : 1) * sizeof(size_t), d);
	if (!*ptrs || !*lens)
		return LP_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		struct lp_gguf_str s;

		if (!lp_gguf_arr_str(kv, i, &s))
			return lp_diag_set(d, LP_E_MODEL, lp_gguf_path(g), 0, 0,
					   "unreadable element %zu of '%.*s'", i,
					   (int)kv->key.len, kv->key.ptr);
		(*ptrs)[i] = s.ptr;
		(*lens)[i] = (size_t)s.len;
	}
	return LP_OK;
}

/* Per-token scores and types: optional, but when present one per token. */
static enum lp_status read_per_token(const struct lp_gguf *g, size_t n,
				     struct gguf_arrays *a, struct lp_diag *d)
{
	enum lp_status st;
	const struct lp_gguf_kv *sc, *ty;

	sc = find_array(g, "tokenizer.ggml.scores", LP_GGUF_FLOAT32, 0, d, &st);
	if (st)
		return st;
	ty = find_array(g, "tokenizer.ggml.token_type", LP_GGUF_INT32, 0, d, &st);
	if (st)
		return st;
	if ((sc && sc->v.arr.n != n) || (ty && ty->v.arr.n != n))
		return lp_diag_set(d, LP_E_MODEL, lp_gguf_path(g), 0, 0,
				   "tokenizer scores or types do not match %zu tokens", n);
	if (sc && !(a->scores = lp_mem_alloc(LP_MEM_OTHER, n * sizeof(float), d)))
		return LP_E_NOMEM;
	if (ty && !(a->types = lp_mem_alloc(LP_MEM_OTHER, n * sizeof(int32_t), d)))
		return LP_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		double f;
		int64_t t;

		if (sc && !lp_gguf_arr_f64(sc, i, &f))
			return lp_diag_set(d, LP_E_MODEL, lp_gguf_path(g), 0, 0,
					   "tokenizer.ggml.scores is not numeric");
		if (ty && (!lp_gguf_arr_i64(ty, i, &t) || t < 0 || t > LP_TOKEN_BYTE))
			return lp_diag_set(d, LP_E_MODEL, lp_gguf_path(g), 0, 0,
					   "token %zu has a bad type in tokenizer.ggml.token_type", i);
		if (sc)
			a->scores[i] = (float)f;
		if (ty)
			a->types[i] = (int32_t)t;
	}
	return LP_OK;
}

/* Special id or -1; ids too large to be tokens become INT32_MAX so that the
 * range check names them. */
static int32_t get_id(const struct lp_gguf *g, const char *key)
{
	uint64_t v;

	if (!lp_gguf_get_u64(g, key, &v))
		return -1;
	return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

static int get_flag(const struct lp_gguf *g, const char *key)
{
	uint64_t v;

	return lp_gguf_get_u64(g, key, &v) ? v != 0 : -1;
}

static enum lp_status read_template(const struct lp_gguf *g, struct gguf_arrays *a,
				    struct lp_diag *d)
{
	const struct lp_gguf_kv *kv = lp_gguf_find(g, "tokenizer.chat_template");

	if (!kv || kv->type != LP_GGUF_STRING)
		return LP_OK;
	a->chat_template = lp_mem_alloc(LP_MEM_OTHER, (size_t)kv->v.str.len + 1, d);
	if (!a->chat_template)
		return LP_E_NOMEM;
	memcpy(a->chat_template, kv->v.str.ptr, (size_t)kv->v.str.len);
	a->chat_template[kv->v.str.len] = '\0';
	return LP_OK;
}

static enum lp_status fill_spec(const struct lp_gguf *g, struct lp_vocab_spec *s,
				struct gguf_arrays *a, char *pre, size_t pre_cap,
				struct lp_diag *d)
{
	char model[32];
	const struct lp_gguf_kv *toks, *merges;
	enum lp_status st;

	if (!lp_gguf_get_str(g, "tokenizer.ggml.model", model, sizeof(model)))
		return lp_diag_set(d, LP_E_MODEL, lp_gguf_path(g), 0, 0,
				   "missing key 'tokenizer.ggml.model'");
	if (!strcmp(model, "gpt2"))
		lp_vocab_spec_init(s, LP_VOCAB_BPE);
	else if (!strcmp(model, "llama"))
		lp_vocab_spec_init(s, LP_VOCAB_SPM);
	else
		return lp_diag_set(d, LP_E_MODEL, lp_gguf_path(g), 0, 0,
				   "unsupported tokenizer model '%s' (gpt2 or llama)", model);
	if (lp_gguf_get_str(g, "tokenizer.ggml.pre", pre, pre_cap))
		s->pre = pre;
	toks = find_array(g, "tokenizer.ggml.tokens", LP_GGUF_STRING, 1, d, &st);
	if (st)
		return st;
	if ((st = read_strings(g, toks, &a->tokens, &a->token_lens, d)) ||
	    (st = read_per_token(g, (size_t)toks->v.arr.n, a, d)))
		return st;
	s->n_tokens = (size_t)toks->v.arr.n;
	s->tokens = a->tokens;
	s->token_lens = a->token_lens;
	s->scores = a->scores;
	s->types = a->types;
	merges = find_array(g, "tokenizer.ggml.merges", LP_GGUF_STRING, 0, d, &st);
	if (st)
		return st;
	if (merges && s->kind == LP_VOCAB_BPE) {
		if ((st = read_strings(g, merges, &a->merges, &a->merge_lens, d)))
			return st;
		s->n_merges = (size_t)merges->v.arr.n;
		s->merges = a->merges;
		s->merge_lens = a->merge_lens;
	}
	s->bos = get_id(g, "tokenizer.ggml.bos_token_id");
	s->eos = get_id(g, "tokenizer.ggml.eos_token_id");
	s->eot = get_id(g, "tokenizer.ggml.eot_token_id");
	s->unk = get_id(g, "tokenizer.ggml.unknown_token_id");
	s->pad = get_id(g, "tokenizer.ggml.padding_token_id");
	s->add_bos = get_flag(g, "tokenizer.ggml.add_bos_token");
	s->add_eos = get_flag(g, "tokenizer.ggml.add_eos_token");
	s->add_space_prefix = get_flag(g, "tokenizer.ggml.add_space_prefix");
	if ((st = read_template(g, a, d)))
		return st;
	s->chat_template = a->chat_template;
	return LP_OK;
}

enum lp_status lp_vocab_from_gguf(const struct lp_gguf *g, struct lp_vocab **out,
				  struct lp_diag *d)
{
	struct lp_vocab_spec spec;
	struct gguf_arrays a;
	char pre[64];
	enum lp_status st;

	*out = NULL;
	memset(&a, 0, sizeof(a));
	st = fill_spec(g, &spec, &a, pre, sizeof(pre), d);
	if (!st)
		st = lp_vocab_new(&spec, out, d);
	arrays_free(&a);
	if (st && d && !d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", lp_gguf_path(g));
	return st;
}

enum lp_status lp_tok_from_gguf(const struct lp_gguf *g, struct lp_tok **out,
				struct lp_diag *d)
{
	struct lp_vocab *v;
	enum lp_status st = lp_vocab_from_gguf(g, &v, d);

	*out = NULL;
	if (st)
		return st;
	return lp_tok_new(v, out, d);
}
