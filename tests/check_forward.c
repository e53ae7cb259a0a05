/* check_forward.c - the forward pass against the naive reference, on tiny
 * random models written with the test GGUF writer, in every tensor type. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/threadpool.h"
#include "model/forward.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matvec.h"
#include "quant/quant.h"
#include "model/gguf.h"
#include "model/kvcache.h"
#include "model/model.h"
#include "ref_forward.h"
#include "tools/gguf_writer.h"

/* ---- tiny models ----------------------------------------------------- */

struct spec {
	const char *arch;       /* "llama" or "qwen2" */
	enum lp_qtype type;     /* of every matrix */
	uint32_t embd, heads, kv_heads, ffn, vocab, layers;
	int tied;               /* no output.weight */
	int f16_vectors;        /* norms and biases stored as F16 */
	uint32_t meta_ffn;      /* feed_forward_length to claim; 0: ffn */
};

struct tiny {
	unsigned char *bytes;
	size_t len;
	struct lp_gguf *g;
	struct lp_model *m;
};

static uint64_t rng_state;

static float frand(void) /* uniform in [-1, 1) */
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static void add_mat(struct gw *w, const char *name, enum lp_qtype t, uint64_t rows,
		    uint64_t cols, float scale)
{
	float *a = malloc(rows * cols * sizeof(float));

	for (size_t i = 0; i < rows * cols; i++)
		a[i] = frand() * scale;
	gw_add_tensor(w, name, t, 2, (uint64_t[]){ cols, rows }, a);
	free(a);
}

static void add_vec(struct gw *w, const char *name, const struct spec *s, uint64_t n,
		    float base, float noise)
{
	float *a = malloc(n * sizeof(float));

	for (size_t i = 0; i < n; i++)
		a[i] = base + frand() * noise;
	gw_add_tensor(w, name, s->f16_vectors ? LP_Q_F16 : LP_Q_F32, 1, (uint64_t[]){ n }, a);
	free(a);
}

static struct gw *build(const struct spec *s, uint64_t seed)
{
	struct gw *w = gw_new();
	char key[96];
	uint32_t hd = s->embd / s->heads, kv = s->kv_heads * hd;

	rng_state = seed * 2654435761u + 1;
	gw_add_str(w, "general.architecture", s->arch);
#define KEY(k) (snprintf(key, sizeof(key), "%s." k, s->arch), key)
	gw_add_u32(w, KEY("embedding_length"), s->embd);
	gw_add_u32(w, KEY("block_count"), s->layers);
	gw_add_u32(w, KEY("feed_forward_length"), s->meta_ffn ? s->meta_ffn : s->ffn);
	gw_add_u32(w, KEY("attention.head_count"), s->heads);
	gw_add_u32(w, KEY("attention.head_count_kv"), s->kv_heads);
	gw_add_u32(w, KEY("context_length"), 64);
	gw_add_f32(w, KEY("rope.freq_base"), 10000.0f);
	gw_add_f32(w, KEY("attention.layer_norm_rms_epsilon"), 1e-5f);
	gw_add_u32(w, KEY("rope.dimension_count"), hd);
#undef KEY
	add_mat(w, "token_embd.weight", s->type, s->vocab, s->embd, 1.0f);
	add_vec(w, "output_norm.weight", s, s->embd, 1.0f, 0.2f);
	if (!s->tied)
		add_mat(w, "output.weight", s->type, s->vocab, s->embd, 1.0f / sqrtf(s->embd));
	for (uint32_t l = 0; l < s->layers; l++) {
		char n[64];
#define NAME(x) (snprintf(n, sizeof(n), "blk.%u." x, l), n)
		add_vec(w, NAME("attn_norm.weight"), s, s->embd, 1.0f, 0.2f);
		add_mat(w, NAME("attn_q.weight"), s->type, s->embd, s->embd, 2.0f / sqrtf(s->embd));
		add_mat(w, NAME("attn_k.weight"), s->type, kv, s->embd, 2.0f / sqrtf(s->embd));
		add_mat(w, NAME("attn_v.weight"), s->type, kv, s->embd, 1.0f / sqrtf(s->embd));
		add_mat(w, NAME("attn_output.weight"), s->type, s->embd, s->embd,
			1.0f / sqrtf(s->embd));
		if (!strcmp(s->arch, "qwen2")) {
			add_vec(w, NAME("attn_q.bias"), s, s->embd, 0.0f, 0.5f);
			add_vec(w, NAME("attn_k.bias"), s, kv, 0.0f, 0.5f);
			add_vec(w, NAME("attn_v.bias"), s, kv, 0.0f, 0.5f);
		}
		add_vec(w, NAME("ffn_norm.weight"), s, s->embd, 1.0f, 0.2f);
		add_mat(w, NAME("ffn_gate.weight"), s->type, s->ffn, s->embd, 1.0f / sqrtf(s->embd));
		add_mat(w, NAME("ffn_up.weight"), s->type, s->ffn, s->embd, 1.0f / sqrtf(s->embd));
		add_mat(w, NAME("ffn_down.weight"), s->type, s->embd, s->ffn, 1.0f / sqrtf(s->ffn));
#undef NAME
	}
	return w;
}

static enum lp_status tiny_open_gw(struct gw *w, struct tiny *t, struct lp_diag *d)
{
	enum lp_status st;

	memset(t, 0, sizeof(*t));
	gw_write_mem(w, &t->bytes, &t->len);
	gw_free(w);
	st = lp_gguf_open_bytes("tiny.gguf", t->bytes, t->len, &t->g, d);
	if (st)
		return st;
	return lp_model_load(t->g, &t->m, d);
}

static void tiny_open(const struct spec *s, struct tiny *t)
{
	struct lp_diag d;

	lp_diag_init(&d);
	if (tiny_open_gw(build(s, 42), t, &d))
		ck_abort_msg("tiny model: %s", d.msg);
}

static void tiny_close(struct tiny *t)
{
	lp_model_free(t->m);
	lp_gguf_close(t->g);
	free(t->bytes);
}

static uint32_t gemm_min = UINT32_MAX; /* lp_matvec everywhere unless a test says */

static struct lp_forward *ctx_new(const struct lp_model *m, enum lp_qtype kv, int threads,
				  uint32_t n_batch)
{
	struct lp_forward_params p = lp_forward_default_params();
	struct lp_forward *c;
	struct lp_diag d;

	p.n_ctx = 32;
	p.kv_type = kv;
	p.n_threads = threads;
	p.n_batch = n_batch;
	p.gemm_min = gemm_min;
	lp_diag_init(&d);
	if (lp_forward_new(m, &p, &c, &d))
		ck_abort_msg("context: %s", d.msg);
	return c;
}

/* ---- comparisons ----------------------------------------------------- */

#define N_TOK 12
#define N_PREFILL 8

static void tokens_for(const struct lp_model *m, int32_t *tok, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tok[i] = (int32_t)((i * 7919u + 13u) % m->hp.n_vocab);
}

/* Largest |a - b| over one position's logits, relative to max |b|. */
static double rel_err_f(const float *a, const double *b, size_t n)
{
	double num = 0, den = 0;

	for (size_t i = 0; i < n; i++) {
		double e = fabs(a[i] - b[i]);
		num = e > num ? e : num;
		den = fabs(b[i]) > den ? fabs(b[i]) : den;
	}
	return num / (den > 0 ? den : 1);
}

static double rel_err_ff(const float *a, const float *b, size_t n)
{
	double num = 0, den = 0;

	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)a[i] - b[i]);
		num = e > num ? e : num;
		den = fabs(b[i]) > den ? fabs(b[i]) : den;
	}
	return num / (den > 0 ? den : 1);
}

/* Engine logits for positions 0..N_TOK-1: a prefill of N_PREFILL tokens,
 * then single decode steps. */
static void engine_logits(struct lp_forward *c, const int32_t *tok, float *out)
{
	size_t V = lp_forward_model(c)->hp.n_vocab;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_forward_eval_all(c, tok, N_PREFILL, 0, out, &d), LP_OK);
	for (uint32_t p = N_PREFILL; p < N_TOK; p++)
		ck_assert_int_eq(lp_forward_eval(c, tok + p, 1, p, out + p * V, &d), LP_OK);
	ck_assert_uint_eq(lp_forward_n_past(c), N_TOK);
}

/* Worst relative error of the engine against the reference over all
 * positions, for the model `s` (KV cache f32, 2 threads). */
static double engine_vs_ref(const struct spec *s)
{
	struct tiny t;
	struct lp_forward *c;
	int32_t tok[N_TOK];
	size_t V;
	float *eng;
	double *ref, worst = 0;

	tiny_open(s, &t);
	V = t.m->hp.n_vocab;
	eng = malloc(N_TOK * V * sizeof(float));
	ref = malloc(N_TOK * V * sizeof(double));
	tokens_for(t.m, tok, N_TOK);
	c = ctx_new(t.m, LP_Q_F32, 2, 8);
	engine_logits(c, tok, eng);
	ck_assert_int_eq(ref_forward(t.g, &t.m->hp, tok, N_TOK, ref), 0);
	for (size_t p = 0; p < N_TOK; p++) {
		double e = rel_err_f(eng + p * V, ref + p * V, V);
		worst = e > worst ? e : worst;
	}
	free(eng);
	free(ref);
	lp_forward_free(c);
	tiny_close(&t);
	return worst;
}

/*
 * Tolerances per weight type. The reference dequantizes the same weights,
 * so for quantized types the only difference is that the engine quantizes
 * the activations to 8 bits before each product (and accumulates in
 * float): per-product relative errors near 0.4%, compounded over 2
 * layers, measured at 0.3% to 1.2% of the largest logit; the tolerance is
 * 3%. Float types (the engine keeps float activations) differ by rounding
 * only: measured near 1.5e-7.
 */
struct type_case {
	enum lp_qtype type;
	double tol;
};
static const struct type_case type_cases[] = {
	{ LP_Q_F32, 1e-4 },  { LP_Q_F16, 1e-5 },  { LP_Q_BF16, 1e-5 },
	{ LP_Q_Q4_0, 3e-2 }, { LP_Q_Q4_1, 3e-2 }, { LP_Q_Q5_0, 3e-2 },
	{ LP_Q_Q5_1, 3e-2 }, { LP_Q_Q8_0, 3e-2 },
	{ LP_Q_Q4_K, 3e-2 }, { LP_Q_Q5_K, 3e-2 }, { LP_Q_Q6_K, 3e-2 },
};

static int is_k_quant(enum lp_qtype t)
{
	return t == LP_Q_Q4_K || t == LP_Q_Q5_K || t == LP_Q_Q6_K;
}

/* llama, untied output, GQA (4 heads, 2 KV heads). */
START_TEST(test_llama_every_type)
{
	const struct type_case *tc = &type_cases[_i];
	struct spec s = { "llama", tc->type, 64, 4, 2, 96, 300, 2, 0, 0, 0 };
	double e;

	if (is_k_quant(tc->type)) {
		s.embd = 256;
		s.ffn = 512;
	}
	e = engine_vs_ref(&s);
	printf("forward llama %-5s rel err %.3g (tol %.3g)\n", lp_qtype_name(tc->type), e, tc->tol);
	ck_assert_msg(e < tc->tol, "%s: relative error %g over %g", lp_qtype_name(tc->type), e,
		      tc->tol);
}
END_TEST

/* qwen2 with Q/K/V biases and neox RoPE, tied output. */
START_TEST(test_qwen2_every_type)
{
	const struct type_case *tc = &type_cases[_i];
	struct spec s = { "qwen2", tc->type, 64, 4, 2, 96, 300, 2, 1, 0, 0 };
	double e;

	if (is_k_quant(tc->type)) {
		s.embd = 256;
		s.ffn = 512;
	}
	e = engine_vs_ref(&s);
	printf("forward qwen2 %-5s rel err %.3g (tol %.3g)\n", lp_qtype_name(tc->type), e, tc->tol);
	ck_assert_msg(e < tc->tol, "%s: relative error %g over %g", lp_qtype_name(tc->type), e,
		      tc->tol);
}
END_TEST

/*
 * Prefill through dequantize + sgemm: float activations against the same
 * dequantized weights, so even quantized types match the reference up to
 * float rounding (positions 0..7; 8..11 are lp_matvec decode steps and
 * keep the per-type tolerance). Measured 3e-7 to 5e-7; tolerance 1e-5.
 * Where the kernel set has an int8 batch product for the type (the
 * AVX-512 set: the legacy types, Q4_K and Q6_K, kernels.h), prefill
 * takes the decode steps' 8-bit activations, and their tolerance.
 */
START_TEST(test_gemm_prefill_every_type)
{
	const struct type_case *tc = &type_cases[_i];
	struct spec s = { "qwen2", tc->type, 64, 4, 2, 96, 300, 2, 0, 0, 0 };
	struct tiny t;
	struct lp_forward *c;
	int32_t tok[N_TOK];
	float *eng;
	double *ref, worst = 0;

	if (is_k_quant(tc->type)) {
		s.embd = 256;
		s.ffn = 512;
	}
	tiny_open(&s, &t);
	eng = malloc(N_TOK * 300 * sizeof(float));
	ref = malloc(N_TOK * 300 * sizeof(double));
	tokens_for(t.m, tok, N_TOK);
	gemm_min = 2;
	c = ctx_new(t.m, LP_Q_F32, 2, 8);
	engine_logits(c, tok, eng);
	ck_assert_int_eq(ref_forward(t.g, &t.m->hp, tok, N_TOK, ref), 0);
	for (size_t p = 0; p < N_PREFILL; p++)
		worst = fmax(worst, rel_err_f(eng + p * 300, ref + p * 300, 300));
	{
		const struct lp_q8_gemm *q8 = lp_cpu_kernels()->q8_gemm;
		double tol = q8 && q8->has(tc->type) ? tc->tol : 1e-5;
		printf("forward gemm prefill %-5s rel err %.3g (tol %.3g)\n",
		       lp_qtype_name(tc->type), worst, tol);
		ck_assert_double_lt(worst, tol);
	}
	for (size_t p = N_PREFILL; p < N_TOK; p++)
		ck_assert_double_lt(rel_err_f(eng + p * 300, ref + p * 300, 300), tc->tol);
	free(eng);
	free(ref);
	lp_forward_free(c);
	tiny_close(&t);
}
END_TEST

/* Tied output, multi-head attention (no GQA), F16 norms and biases. */
START_TEST(test_tied_mha_f16_vectors)
{
	struct spec s = { "llama", LP_Q_F32, 64, 4, 4, 96, 300, 2, 1, 1, 0 };
	struct spec q = { "qwen2", LP_Q_F32, 64, 4, 1, 96, 300, 2, 0, 1, 0 };

	ck_assert_double_lt(engine_vs_ref(&s), 1e-4);
	ck_assert_double_lt(engine_vs_ref(&q), 1e-4);
}
END_TEST

/* The wrong RoPE pairing must be caught: the same weights read as the
 * other architecture give clearly different logits. */
START_TEST(test_rope_mode_matters)
{
	struct spec s = { "llama", LP_Q_F32, 64, 4, 2, 96, 300, 2, 0, 0, 0 };
	struct tiny t;
	int32_t tok[N_TOK];
	double *a = malloc(N_TOK * 300 * sizeof(double));
	double *b = malloc(N_TOK * 300 * sizeof(double));
	double diff = 0;

	tiny_open(&s, &t);
	tokens_for(t.m, tok, N_TOK);
	ck_assert_int_eq(ref_forward(t.g, &t.m->hp, tok, N_TOK, a), 0);
	t.m->hp.rope_mode = LP_ROPE_NEOX;
	ck_assert_int_eq(ref_forward(t.g, &t.m->hp, tok, N_TOK, b), 0);
	for (size_t i = 300 * (N_TOK - 1); i < 300 * N_TOK; i++)
		diff = fmax(diff, fabs(a[i] - b[i]));
	ck_assert_double_gt(diff, 1e-3);
	free(a);
	free(b);
	tiny_close(&t);
}
END_TEST

/* A prompt evaluated at once (over two n_batch steps) and token by token
 * give the same logits, on Q4_K weights and a q8_0 cache; so do 1 and 3
 * threads. */
START_TEST(test_prefill_equals_decode)
{
	struct spec s = { "llama", LP_Q_Q4_K, 256, 4, 2, 512, 300, 2, 0, 0, 0 };
	struct tiny t;
	struct lp_forward *a, *b, *c1;
	int32_t tok[N_TOK];
	float *la = malloc(N_TOK * 300 * sizeof(float)), *lb = malloc(N_TOK * 300 * sizeof(float));
	float *lc = malloc(N_TOK * 300 * sizeof(float));
	struct lp_diag d;

	lp_diag_init(&d);
	tiny_open(&s, &t);
	tokens_for(t.m, tok, N_TOK);
	a = ctx_new(t.m, LP_Q_Q8_0, 3, 5);
	b = ctx_new(t.m, LP_Q_Q8_0, 3, 5);
	c1 = ctx_new(t.m, LP_Q_Q8_0, 1, 5);
	ck_assert_int_eq(lp_forward_eval_all(a, tok, N_TOK, 0, la, &d), LP_OK);
	for (uint32_t p = 0; p < N_TOK; p++)
		ck_assert_int_eq(lp_forward_eval(b, tok + p, 1, p, lb + p * 300, &d), LP_OK);
	ck_assert_int_eq(lp_forward_eval_all(c1, tok, N_TOK, 0, lc, &d), LP_OK);
	for (uint32_t p = 0; p < N_TOK; p++) {
		ck_assert_double_lt(rel_err_ff(la + p * 300, lb + p * 300, 300), 1e-5);
		ck_assert_double_lt(rel_err_ff(la + p * 300, lc + p * 300, 300), 1e-5);
	}
	/* lp_forward_eval returns the last row of lp_forward_eval_all */
	ck_assert_double_lt(rel_err_ff(lp_forward_logits(a), la + 11 * 300, 300), 1e-7);
	/* reset and evaluate again: the same logits */
	lp_forward_reset(b);
	ck_assert_int_eq(lp_forward_eval(b, tok, N_TOK, 0, lb, &d), LP_OK);
	ck_assert_double_lt(rel_err_ff(lb, la + 11 * 300, 300), 1e-5);
	lp_forward_free(a);
	lp_forward_free(b);
	lp_forward_free(c1);
	tiny_close(&t);
	free(la);
	free(lb);
	free(lc);
}
END_TEST

/* f16 and q8_0 caches stay close to f32 (F32 weights, so that no
 * activation quantization amplifies the difference). */
START_TEST(test_kv_types_close_to_f32)
{
	struct spec s = { "qwen2", LP_Q_F32, 256, 4, 2, 512, 300, 2, 0, 0, 0 };
	enum lp_qtype kinds[3] = { LP_Q_F32, LP_Q_F16, LP_Q_Q8_0 };
	double tol[3] = { 0, 1e-3, 1.5e-2 };
	float *l[3];
	struct tiny t;
	int32_t tok[N_TOK];

	tiny_open(&s, &t);
	tokens_for(t.m, tok, N_TOK);
	for (int k = 0; k < 3; k++) {
		struct lp_forward *c = ctx_new(t.m, kinds[k], 2, 8);
		l[k] = malloc(N_TOK * 300 * sizeof(float));
		engine_logits(c, tok, l[k]);
		lp_forward_free(c);
	}
	for (int k = 1; k < 3; k++) {
		double worst = 0;
		for (size_t p = 0; p < N_TOK; p++)
			worst = fmax(worst, rel_err_ff(l[k] + p * 300, l[0] + p * 300, 300));
		printf("forward kv %s vs f32: rel err %.3g (tol %.3g)\n",
		       lp_qtype_name(kinds[k]), worst, tol[k]);
		ck_assert_double_lt(worst, tol[k]);
		ck_assert_double_gt(worst, 0); /* the cache type really changed */
	}
	for (int k = 0; k < 3; k++)
		free(l[k]);
	tiny_close(&t);
}
END_TEST

START_TEST(test_kv_bytes_per_token)
{
	/* 2 * layers * kv_heads * head_dim * bytes */
	ck_assert_uint_eq(lp_kvcache_bytes_per_token(30, 3 * 64, 64, LP_Q_F16), 2 * 30 * 192 * 2);
	ck_assert_uint_eq(lp_kvcache_bytes_per_token(30, 3 * 64, 64, LP_Q_F32), 2 * 30 * 192 * 4);
	ck_assert_uint_eq(lp_kvcache_bytes_per_token(30, 3 * 64, 64, LP_Q_Q8_0),
			  2 * 30 * 6 * 34);
	ck_assert_uint_eq(lp_kvcache_bytes_per_token(2, 32, 16, LP_Q_Q8_0), 0);
}
END_TEST

/* The context's tracked memory is what lp_forward_plan_bytes predicts. */
START_TEST(test_plan_bytes_match)
{
	struct spec s = { "llama", LP_Q_Q4_0, 64, 4, 2, 96, 300, 2, 0, 0, 0 };
	struct tiny t;
	struct lp_forward_params p = lp_forward_default_params();
	struct lp_forward_bytes b;
	struct lp_forward *c;
	struct lp_diag d;
	size_t kv0, sc0, lg0;

	tiny_open(&s, &t);
	p.n_ctx = 40;
	p.n_threads = 2;
	lp_forward_plan_bytes(t.m, &p, &b);
	kv0 = lp_mem_current(LP_MEM_KV);
	sc0 = lp_mem_current(LP_MEM_SCRATCH);
	lg0 = lp_mem_current(LP_MEM_LOGITS);
	ck_assert_int_eq(lp_forward_new(t.m, &p, &c, &d), LP_OK);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_KV) - kv0, b.kv);
	ck_assert_uint_eq(b.kv, 40 * lp_kvcache_bytes_per_token(2, 32, 16, LP_Q_F16));
	ck_assert_uint_eq(lp_mem_current(LP_MEM_SCRATCH) - sc0, b.scratch);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_LOGITS) - lg0, b.logits);
	lp_forward_free(c);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_KV), kv0);
	tiny_close(&t);
}
END_TEST

/* A budget too small for the context fails with LP_E_NOMEM naming the
 * phase; nothing stays allocated. */
START_TEST(test_budget_failure)
{
	struct spec s = { "llama", LP_Q_Q8_0, 64, 4, 2, 96, 300, 2, 0, 0, 0 };
	struct tiny t;
	struct lp_forward_params p = lp_forward_default_params();
	struct lp_forward_bytes b;
	struct lp_forward *c = NULL;
	struct lp_diag d;
	size_t base;

	tiny_open(&s, &t);
	p.n_ctx = 32;
	p.n_threads = 1;
	lp_forward_plan_bytes(t.m, &p, &b);
	base = lp_mem_current_total();
	/* just short of each of the three allocations in turn */
	size_t caps[3] = { b.kv - 1, b.kv + b.scratch - 1, b.kv + b.scratch + b.logits - 1 };
	for (int i = 0; i < 3; i++) {
		lp_diag_init(&d);
		lp_mem_set_budget(base + caps[i]);
		ck_assert_int_eq(lp_forward_new(t.m, &p, &c, &d), LP_E_NOMEM);
		ck_assert_ptr_null(c);
		ck_assert_ptr_nonnull(strstr(d.msg, "load"));
		ck_assert_uint_eq(lp_mem_current_total(), base);
	}
	lp_mem_set_budget(base + b.kv + b.scratch + b.logits);
	ck_assert_int_eq(lp_forward_new(t.m, &p, &c, &d), LP_OK);
	lp_mem_set_budget(0);
	lp_forward_free(c);
	tiny_close(&t);
}
END_TEST

/* Every allocation site of load + context + eval fails cleanly. */
START_TEST(test_fault_injection_sweep)
{
	struct spec s = { "qwen2", LP_Q_F16, 64, 4, 2, 96, 300, 2, 0, 1, 0 };
	int failed_somewhere = 0;

	for (int n = 1; n <= 12; n++) {
		pid_t pid = fork();
		int status;

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			char v[16];
			struct tiny t;
			struct lp_forward *c;
			struct lp_diag d;
			int32_t tok[3] = { 1, 2, 3 };
			enum lp_status st;

			snprintf(v, sizeof(v), "%d", n);
			setenv("LPIPE_FAIL_ALLOC", v, 1);
			lp_diag_init(&d);
			st = tiny_open_gw(build(&s, 1), &t, &d);
			if (!st) {
				struct lp_forward_params p = lp_forward_default_params();
				p.n_ctx = 16;
				p.n_threads = 2;
				st = lp_forward_new(t.m, &p, &c, &d);
				if (!st) {
					st = lp_forward_eval(c, tok, 3, 0, NULL, &d);
					lp_forward_free(c);
				}
			}
			_exit(st == LP_OK ? 0 : st == LP_E_NOMEM ? 10 : 20);
		}
		waitpid(pid, &status, 0);
		ck_assert_msg(WIFEXITED(status), "crash with LPIPE_FAIL_ALLOC=%d", n);
		ck_assert_msg(WEXITSTATUS(status) != 20, "wrong status with LPIPE_FAIL_ALLOC=%d", n);
		failed_somewhere |= WEXITSTATUS(status) == 10;
	}
	ck_assert(failed_somewhere);
}
END_TEST

/* ---- errors ---------------------------------------------------------- */

START_TEST(test_unsupported_arch)
{
	struct spec s = { "gpt2", LP_Q_F32, 64, 4, 2, 96, 300, 1, 0, 0, 0 };
	struct tiny t;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(tiny_open_gw(build(&s, 3), &t, &d), LP_E_MODEL);
	ck_assert_str_eq(d.msg, "architecture 'gpt2' is not supported");
	ck_assert_ptr_null(t.m);
	lp_gguf_close(t.g);
	free(t.bytes);
}
END_TEST

START_TEST(test_bad_shape_names_tensor)
{
	/* claim a wider FFN than the tensors have */
	struct spec s = { "llama", LP_Q_F32, 64, 4, 2, 96, 300, 1, 0, 0, 128 };
	struct gw *w = build(&s, 4);
	struct tiny t;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(tiny_open_gw(w, &t, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "blk.0.ffn_gate.weight"));
	ck_assert_ptr_nonnull(strstr(d.msg, "expected [64, 128]"));
	lp_gguf_close(t.g);
	free(t.bytes);
}
END_TEST

START_TEST(test_eval_errors)
{
	struct spec s = { "llama", LP_Q_F32, 64, 4, 2, 96, 300, 1, 0, 0, 0 };
	struct tiny t;
	struct lp_forward *c;
	struct lp_diag d;
	int32_t tok[40] = { 0 };

	tiny_open(&s, &t);
	c = ctx_new(t.m, LP_Q_F16, 1, 8);
	lp_diag_init(&d);
	tok[1] = 300;
	ck_assert_int_eq(lp_forward_eval(c, tok, 2, 0, NULL, &d), LP_E_INPUT);
	ck_assert_ptr_nonnull(strstr(d.msg, "token id 300"));
	tok[1] = 1;
	ck_assert_int_eq(lp_forward_eval(c, tok, 33, 0, NULL, &d), LP_E_INPUT);
	ck_assert_int_eq(lp_forward_eval(c, tok, 2, 1, NULL, &d), LP_E_USAGE);
	ck_assert_int_eq(lp_forward_eval(c, tok, 32, 0, NULL, &d), LP_OK);
	ck_assert_int_eq(lp_forward_eval(c, tok, 1, 32, NULL, &d), LP_E_INPUT);
	ck_assert_ptr_nonnull(strstr(d.msg, "full"));
	lp_forward_free(c);
	tiny_close(&t);
}
END_TEST

/* lp_gemm_nt (X W^T through the BLAS module) agrees with double sums on
 * random data, odd sizes and padded rows included. */
START_TEST(test_gemm_matches_loop)
{
	size_t sizes[][3] = { { 1, 1, 1 }, { 7, 11, 37 }, { 4, 3, 64 }, { 13, 70, 576 } };

	for (size_t z = 0; z < 4; z++) {
		size_t n = sizes[z][0], m = sizes[z][1], k = sizes[z][2];
		float *X = malloc(n * (k + 1) * sizeof(float)), *W = malloc(m * k * sizeof(float));
		float *a = malloc(n * (m + 2) * sizeof(float));

		rng_state = 99 + z;
		for (size_t i = 0; i < n * (k + 1); i++)
			X[i] = frand();
		for (size_t i = 0; i < m * k; i++)
			W[i] = frand();
		lp_gemm_nt(n, m, k, X, k + 1, W, k, a, m + 2);
		for (size_t t = 0; t < n; t++)
			for (size_t r = 0; r < m; r++) {
				double want = 0;
				for (size_t i = 0; i < k; i++)
					want += (double)X[t * (k + 1) + i] * W[r * k + i];
				ck_assert_double_le(fabs(a[t * (m + 2) + r] - want), 1e-5 * k);
			}
		free(X);
		free(W);
		free(a);
	}
}
END_TEST

/* The in-place F16 attention kernels agree with double sums over the
 * converted rows: head sizes with 32-wide, 8-wide and scalar parts. */
START_TEST(test_attn_f16_kernels)
{
	static const size_t hds[] = { 64, 40, 12 };
	enum { NPOS = 37 };

	for (size_t z = 0; z < 3; z++) {
		size_t hd = hds[z], ld = 3 * hd + 4;
		uint16_t *K = malloc(NPOS * ld * sizeof(uint16_t));
		float q[64], p[NPOS], score[NPOS], out[64];

		rng_state = 7 + z;
		for (size_t i = 0; i < NPOS * ld; i++)
			K[i] = lp_fp32_to_fp16(frand() * 4.0f);
		for (size_t i = 0; i < hd; i++)
			q[i] = frand();
		for (size_t s = 0; s < NPOS; s++)
			p[s] = frand() * 0.1f;
		lp_attn_scores_f16(q, K + hd, ld, hd, NPOS, 0.125f, score);
		lp_attn_mix_f16(p, K + 2 * hd, ld, hd, NPOS, out);
		for (size_t s = 0; s < NPOS; s++) {
			double e = 0;
			for (size_t i = 0; i < hd; i++)
				e += (double)q[i] * lp_fp16_to_fp32(K[s * ld + hd + i]);
			ck_assert_double_le(fabs(score[s] - 0.125 * e), 1e-5 * hd);
		}
		for (size_t i = 0; i < hd; i++) {
			double e = 0;
			for (size_t s = 0; s < NPOS; s++)
				e += (double)p[s] * lp_fp16_to_fp32(K[s * ld + 2 * hd + i]);
			ck_assert_double_le(fabs(out[i] - e), 1e-5 * NPOS);
		}
		free(K);
	}
}
END_TEST

/* The float attention kernels agree with double sums: head sizes with
 * 32-wide, 8-wide and scalar parts, position counts with and without a
 * remainder of the four-at-a-time loop. */
START_TEST(test_attn_f32_kernels)
{
	static const size_t hds[] = { 64, 40, 12 }, npos[] = { 37, 4, 3 };

	for (size_t z = 0; z < 3; z++)
		for (size_t y = 0; y < 3; y++) {
			size_t hd = hds[z], ld = 3 * hd + 4, np = npos[y];
			float *K = malloc(np * ld * sizeof(float));
			float q[64], p[37], score[37], out[64];

			rng_state = 11 + z + 3 * y;
			for (size_t i = 0; i < np * ld; i++)
				K[i] = frand() * 4.0f;
			for (size_t i = 0; i < hd; i++)
				q[i] = frand();
			for (size_t s = 0; s < np; s++)
				p[s] = frand() * 0.1f;
			lp_attn_scores_f32(q, K + hd, ld, hd, np, 0.125f, score);
			lp_attn_mix_f32(p, K + 2 * hd, ld, hd, np, out);
			for (size_t s = 0; s < np; s++) {
				double e = 0;
				for (size_t i = 0; i < hd; i++)
					e += (double)q[i] * K[s * ld + hd + i];
				ck_assert_double_le(fabs(score[s] - 0.125 * e), 1e-5 * hd);
			}
			for (size_t i = 0; i < hd; i++) {
				double e = 0;
				for (size_t s = 0; s < np; s++)
					e += (double)p[s] * K[s * ld + 2 * hd + i];
				ck_assert_double_le(fabs(out[i] - e), 1e-5 * 37);
			}
			free(K);
		}
}
END_TEST

/* SwiGLU and softmax's exponentials agree with double precision within a
 * few float ulps, on random inputs of every magnitude up to past the
 * clamp, at lengths with and without an 8-lane remainder. */
START_TEST(test_swiglu_exp_kernels)
{
	enum { N = 203 };
	float g[N], u[N], x[N], x0[N];

	rng_state = 99;
	for (int round = 0; round < 20; round++) {
		size_t n = round % 2 ? N : 64;
		float mag = round < 10 ? 4.0f : 120.0f, max = -INFINITY, sum;
		double want_sum = 0;
		for (size_t i = 0; i < n; i++) {
			g[i] = frand() * mag;
			u[i] = frand();
			x[i] = x0[i] = frand() * mag;
			max = x[i] > max ? x[i] : max;
		}
		float g0[N];
		memcpy(g0, g, sizeof(g));
		lp_swiglu_f32(n, g, u);
		for (size_t i = 0; i < n; i++) {
			double want = g0[i] / (1.0 + exp(-(double)g0[i])) * u[i];
			ck_assert_msg(fabs(g[i] - want) <= 4e-7 * fabs(want) + 1e-30,
				      "swiglu(%g, %g) = %g, want %g", g0[i], u[i], g[i], want);
		}
		sum = lp_exp_sum_f32(x, n, max);
		for (size_t i = 0; i < n; i++) {
			double want = exp((double)(x0[i] - max));  /* the float difference */
			want_sum += want;
			/* below the clamp the reference underflows too */
			if (x0[i] - max > -87.0f)
				ck_assert_msg(fabs(x[i] - want) <= 4e-7 * want,
					      "exp(%g) = %g, want %g", x0[i] - max, x[i], want);
			else
				ck_assert(x[i] < 1e-37f);
		}
		ck_assert(fabs(sum - want_sum) <= 1e-5 * want_sum);
	}
}
END_TEST

/* ---- thread pool ----------------------------------------------------- */

static void mark(void *arg, size_t b, size_t e, int tid)
{
	int *hits = arg;
	for (size_t i = b; i < e; i++)
		__atomic_fetch_add(&hits[i], 1 + tid * 0, __ATOMIC_RELAXED);
}

START_TEST(test_pool_covers_range_once)
{
	struct lp_pool *p;
	struct lp_diag d;
	static int hits[10007];

	ck_assert_int_eq(lp_pool_new(4, &p, &d), LP_OK);
	ck_assert_int_eq(lp_pool_size(p), 4);
	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)(round * 50) % 10007 + 1;
		memset(hits, 0, sizeof(hits));
		lp_pool_for(p, n, 3, mark, hits);
		for (size_t i = 0; i < 10007; i++)
			ck_assert_int_eq(hits[i], i < n ? 1 : 0);
	}
	lp_pool_free(p);
	lp_pool_free(NULL);
}
END_TEST

static Suite *forward_suite(void)
{
	Suite *s = suite_create("forward");
	TCase *tc = tcase_create("reference");
	int n_types = sizeof(type_cases) / sizeof(type_cases[0]);

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_llama_every_type, 0, n_types);
	tcase_add_loop_test(tc, test_qwen2_every_type, 0, n_types);
	tcase_add_loop_test(tc, test_gemm_prefill_every_type, 0, n_types);
	tcase_add_test(tc, test_tied_mha_f16_vectors);
	tcase_add_test(tc, test_rope_mode_matters);
	tcase_add_test(tc, test_prefill_equals_decode);
	tcase_add_test(tc, test_kv_types_close_to_f32);
	suite_add_tcase(s, tc);
	tc = tcase_create("memory");
	tcase_add_test(tc, test_kv_bytes_per_token);
	tcase_add_test(tc, test_plan_bytes_match);
	tcase_add_test(tc, test_budget_failure);
	tcase_add_test(tc, test_fault_injection_sweep);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, test_unsupported_arch);
	tcase_add_test(tc, test_bad_shape_names_tensor);
	tcase_add_test(tc, test_eval_errors);
	tcase_add_test(tc, test_pool_covers_range_once);
	tcase_add_test(tc, test_gemm_matches_loop);
	tcase_add_test(tc, test_attn_f16_kernels);
	tcase_add_test(tc, test_attn_f32_kernels);
	tcase_add_test(tc, test_swiglu_exp_kernels);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(forward_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
