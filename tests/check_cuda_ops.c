/*
 * check_cuda_ops.c - every op of the CUDA backend against the CPU backend
 * on random inputs (the backend-ops test).
 *
 * Both backends get the same bytes; each op runs on both; the outputs are
 * compared as max |device - cpu| / max |cpu| over the whole output (the
 * error relative to the output's scale, so that entries near zero do not
 * dominate). Tolerances, stated per test: 1e-5 where both sides compute
 * in f32 on the same values (norms, RoPE, element-wise, f32 weights and
 * caches, row gather), 1e-3 for attention over f16 and q8_0 caches (both
 * sides store the very same rounded values), 1e-2 for products with f16,
 * bf16 or block-quantized weights (the CPU rounds the activations to 8
 * bits below its GEMM threshold; the GPU rounds them to f16 in its GEMM).
 * Each comparison prints "maxerr OP CASE ERR TOL" for tests/gpu/run.sh's
 * table. End to end, a generated six-layer model runs with none, half and
 * all of its layers on the device against the CPU (test_forward). The
 * encoder's ops (masked attention, pooling, the hashed projection, top-k
 * against a sort) likewise; MiniLM end to end when the model is there
 * (LPIPE_EMBED_MODEL): every embedding within cosine 0.9999 of the CPU's,
 * with the device's products on f16 weights and on f32;
 * and retrieval over 20,000 random vectors, the device's top-k equal to
 * the CPU's wherever scores are more than 1e-4 apart.
 *
 * Without a usable CUDA backend (module not built, no driver, no GPU)
 * the suite prints the reason and exits 77 (skipped). With
 * LPIPE_TEST_DEVICE=cpu the device side is a second CPU backend that
 * hides its buffers (as_device), which checks this harness where there
 * is no GPU; with LPIPE_TEST_DEVICE=cpu-matvec that second backend also
 * never switches to sgemm, so quantized products differ as a GPU's do.
 *
 * LPIPE_TEST_SIZE=small (make check on the emulated device of
 * tests/cuda-emu, which runs every CUDA thread on the CPU) shrinks what
 * only costs time there: MiniLM embeds 6 texts instead of 66 (the long
 * one 120 tokens instead of past the model's limit), retrieval ranks
 * 2,000 vectors instead of 20,000, and top-k over 100,000 scores becomes
 * 10,000. Every op and every shape class is still run.
 * LPIPE_TEST_SIZE=ops is small without the end-to-end tests (the forward
 * pass, MiniLM, retrieval): the other thread orders and the sanitizer
 * run of the emulated device, where the ops are what differs. Each test prints its wall time ("time N S").
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "core/mem.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/model.h"
#include "quant/quant.h"
#include "retrieve/bert.h"
#include "retrieve/embedder.h"
#include "retrieve/hashembed.h"
#include "retrieve/vecdev.h"
#include "retrieve/vecindex.h"
#include "tools/tiny_model.h"
#include "ref_rank.h"

static struct lp_backend *ref, *dev;
static int dev_is_cuda;

static int small_run(void)
{
	const char *v = getenv("LPIPE_TEST_SIZE");

	return v && (!strcmp(v, "small") || !strcmp(v, "ops"));
}

/* LPIPE_TEST_SIZE=ops: small, and the ops alone (no end-to-end runs). */
static int ops_only(void)
{
	const char *v = getenv("LPIPE_TEST_SIZE");

	return v && !strcmp(v, "ops");
}

static unsigned long long rng = 0x2545f4914f6cdd1dull;

static float frand(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((rng >> 40) & 0xffffff) / 8388608.0f - 1.0f;
}

static float *randv(size_t n, float scale)
{
	float *v = malloc(n * sizeof(float));

	ck_assert_ptr_nonnull(v);
	for (size_t i = 0; i < n; i++)
		v[i] = frand() * scale;
	return v;
}

/* max |a - b| / max |b|; NaN anywhere is infinite error. */
static double relerr(const float *a, const float *b, size_t n)
{
	double num = 0, den = 0;

	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)a[i] - b[i]);
		if (isnan(a[i]) || isnan(b[i]))
			return INFINITY;
		num = e > num ? e : num;
		den = fabs(b[i]) > den ? fabs(b[i]) : den;
	}
	return den > 0 ? num / den : num;
}

static void expect(const char *op, const char *cs, const float *got, const float *want, size_t n,
		   double tol)
{
	double e = relerr(got, want, n);

	printf("maxerr %s %s %.3g %.0e\n", op, cs, e, tol);
	ck_assert_msg(e <= tol, "%s %s: relative error %.3g above %.0e", op, cs, e, tol);
}

/* ---- one buffer on each side --------------------------------------------- */

struct pair {
	struct lp_backend_buf *r, *d;
	size_t bytes;
};

static struct pair alloc_pair(size_t bytes)
{
	struct lp_diag dg;
	struct pair p = { NULL, NULL, bytes };

	lp_diag_init(&dg);
	p.r = ref->ops->buf_alloc(ref, LP_BACKEND_HOST, LP_MEM_SCRATCH, bytes, &dg);
	ck_assert_msg(p.r != NULL, "cpu buffer: %s", dg.msg);
	p.d = dev->ops->buf_alloc(dev, LP_BACKEND_DEVICE, LP_MEM_GPU_SCRATCH, bytes, &dg);
	ck_assert_msg(p.d != NULL, "device buffer: %s", dg.msg);
	return p;
}

static struct pair put(const void *src, size_t bytes)
{
	struct pair p = alloc_pair(bytes);

	memcpy(p.r->host, src, bytes);
	dev->ops->upload(dev, p.d, 0, src, bytes);
	return p;
}

static struct pair putf(const float *src, size_t n)
{
	return put(src, n * sizeof(float));
}

static void drop(struct pair *p)
{
	ref->ops->buf_free(ref, p->r);
	dev->ops->buf_free(dev, p->d);
	p->r = p->d = NULL;
}

static float *F(struct lp_backend_buf *b)
{
	return (float *)b->data;
}

/* Both sides' contents after their queued ops: *cpu, *gpu (caller frees). */
static void fetch(const struct pair *p, void **cpu, void **gpu)
{
	struct lp_diag dg;
	enum lp_status st;

	lp_diag_init(&dg);
	st = ref->ops->sync(ref, &dg);
	ck_assert_msg(st == LP_OK, "cpu: %s", dg.msg);
	*cpu = malloc(p->bytes);
	*gpu = malloc(p->bytes);
	memcpy(*cpu, p->r->host, p->bytes);
	st = dev->ops->download(dev, *gpu, p->d, 0, p->bytes, &dg);
	ck_assert_msg(st == LP_OK, "device: %s", dg.msg);
}

static void compare(const char *op, const char *cs, const struct pair *p, double tol)
{
	void *c, *g;

	fetch(p, &c, &g);
	expect(op, cs, g, c, p->bytes / sizeof(float), tol);
	free(c);
	free(g);
}

/* Weights of `type`, rows x cols, on both sides (ref aliases, dev copies). */
struct wpair {
	struct lp_backend_buf *r, *d;
	struct lp_backend_mat mr, md;
	void *bytes;
};

static struct wpair weights(enum lp_qtype type, uint64_t rows, uint64_t cols)
{
	struct wpair w;
	struct lp_diag dg;
	size_t rb = lp_qtype_row_bytes(type, cols);
	float *x = randv(cols, 1.0f);

	lp_diag_init(&dg);
	ck_assert_uint_gt(rb, 0);
	w.bytes = malloc(rb * rows);
	for (uint64_t r = 0; r < rows; r++) {
		for (uint64_t i = 0; i < cols; i++)
			x[i] = frand();
		lp_quantize_row(type, x, (uint8_t *)w.bytes + r * rb, cols);
	}
	free(x);
	w.r = ref->ops->import(ref, w.bytes, rb * rows, LP_MEM_WEIGHTS, &dg);
	ck_assert_msg(w.r != NULL, "cpu import: %s", dg.msg);
	w.d = dev->ops->import(dev, w.bytes, rb * rows, LP_MEM_GPU_WEIGHTS, &dg);
	ck_assert_msg(w.d != NULL, "device import: %s", dg.msg);
	w.mr = (struct lp_backend_mat){ type, w.r->data, rows, cols, rb, 0, NULL };
	w.md = (struct lp_backend_mat){ type, w.d->data, rows, cols, rb, 0, NULL };
	return w;
}

static void drop_weights(struct wpair *w)
{
	ref->ops->buf_free(ref, w->r);
	dev->ops->buf_free(dev, w->d);
	free(w->bytes);
}

/* ---- matmul and get_rows -------------------------------------------------- */

static const enum lp_qtype all_types[] = {
	LP_Q_F32, LP_Q_F16, LP_Q_BF16, LP_Q_Q4_0, LP_Q_Q4_1, LP_Q_Q5_0,
	LP_Q_Q5_1, LP_Q_Q8_0, LP_Q_Q4_K, LP_Q_Q5_K, LP_Q_Q6_K,
};
#define N_TYPES (sizeof(all_types) / sizeof(all_types[0]))

/* Two (rows, cols) shapes per type: odd rows, and odd columns where the
 * type allows any. */
static void shapes(enum lp_qtype t, uint64_t sh[2][2])
{
	size_t be = lp_qtype_block_elems(t);

	if (be == 1) {
		sh[0][0] = 37; sh[0][1] = 97;
		sh[1][0] = 130; sh[1][1] = 1001;
	} else if (be == 32) {
		sh[0][0] = 37; sh[0][1] = 96;
		sh[1][0] = 130; sh[1][1] = 576;
	} else {
		sh[0][0] = 37; sh[0][1] = 256;
		sh[1][0] = 66; sh[1][1] = 768;
	}
}

START_TEST(test_matmul)
{
	enum lp_qtype t = all_types[_i];
	static const size_t ns[] = { 1, 3, 8, 9, 33 };
	uint64_t sh[2][2];
	double tol = t == LP_Q_F32 ? 1e-5 : 1e-2;

	shapes(t, sh);
	for (int s = 0; s < 2; s++) {
		struct wpair w = weights(t, sh[s][0], sh[s][1]);
		for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
			size_t n = ns[k], ldy = sh[s][0] + 3;
			float *xv = randv(n * sh[s][1], 1.0f);
			struct pair X = putf(xv, n * sh[s][1]);
			struct pair Y = alloc_pair(n * ldy * sizeof(float));
			char cs[64];

			/* the 3 padding columns of Y must come back as they went */
			float *y0 = randv(n * ldy, 1.0f);
			memcpy(Y.r->host, y0, Y.bytes);
			dev->ops->upload(dev, Y.d, 0, y0, Y.bytes);
			ref->ops->matmul(ref, &w.mr, F(X.r), n, F(Y.r), ldy);
			dev->ops->matmul(dev, &w.md, F(X.d), n, F(Y.d), ldy);
			snprintf(cs, sizeof(cs), "%s_%llux%llu_n%zu", lp_qtype_name(t),
				 (unsigned long long)sh[s][0], (unsigned long long)sh[s][1], n);
			compare("matmul", cs, &Y, tol);
			drop(&X);
			drop(&Y);
			free(xv);
			free(y0);
		}
		{ /* a linear layer's bias, added as the product is written */
			size_t n = 9, rows = sh[s][0];
			float *xv = randv(n * sh[s][1], 1.0f), *bv = randv(rows, 1.0f);
			struct pair X = putf(xv, n * sh[s][1]), B = putf(bv, rows);
			struct pair Y = alloc_pair(n * rows * sizeof(float));
			char cs[64];

			w.mr.bias = F(B.r);
			w.md.bias = F(B.d);
			ref->ops->matmul(ref, &w.mr, F(X.r), n, F(Y.r), rows);
			dev->ops->matmul(dev, &w.md, F(X.d), n, F(Y.d), rows);
			snprintf(cs, sizeof(cs), "%s_%llux%llu_bias", lp_qtype_name(t),
				 (unsigned long long)rows, (unsigned long long)sh[s][1]);
			compare("matmul", cs, &Y, tol);
			w.mr.bias = w.md.bias = NULL;
			drop(&X);
			drop(&B);
			drop(&Y);
			free(xv);
			free(bv);
		}
		drop_weights(&w);
	}
}
END_TEST

START_TEST(test_get_rows)
{
	enum lp_qtype t = all_types[_i];
	static const int32_t ids[] = { 0, 36, 5, 5, 17, 1, 30 };
	uint64_t sh[2][2];

	shapes(t, sh);
	for (int s = 0; s < 2; s++) {
		struct wpair w = weights(t, sh[s][0], sh[s][1]);
		for (size_t n = 1; n <= 7; n += 6) {
			struct pair O = alloc_pair(n * sh[s][1] * sizeof(float));
			char cs[64];

			ref->ops->get_rows(ref, &w.mr, ids, n, F(O.r));
			dev->ops->get_rows(dev, &w.md, ids, n, F(O.d));
			snprintf(cs, sizeof(cs), "%s_%llu_n%zu", lp_qtype_name(t),
				 (unsigned long long)sh[s][1], n);
			compare("get_rows", cs, &O, 1e-5);
			drop(&O);
		}
		drop_weights(&w);
	}
}
END_TEST

/* ---- norms and element-wise ----------------------------------------------- */

static const size_t widths[] = { 1, 33, 576, 1001 };

START_TEST(test_norms)
{
	for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); k++)
		for (size_t n = 1; n <= 7; n += 6) {
			size_t wd = widths[k];
			float *xv = randv(n * wd, 3.0f), *wv = randv(wd, 1.0f), *bv = randv(wd, 1.0f);
			struct pair X = putf(xv, n * wd), W = putf(wv, wd), B = putf(bv, wd);
			struct pair O = alloc_pair(n * wd * sizeof(float));
			char cs[64];

			snprintf(cs, sizeof(cs), "%zux%zu", n, wd);
			ref->ops->rmsnorm(ref, F(O.r), F(X.r), F(W.r), n, wd, 1e-5f);
			dev->ops->rmsnorm(dev, F(O.d), F(X.d), F(W.d), n, wd, 1e-5f);
			compare("rmsnorm", cs, &O, 1e-5);
			/* in place (out == x) */
			ref->ops->layernorm(ref, F(X.r), F(X.r), F(W.r), F(B.r), n, wd, 1e-12f);
			dev->ops->layernorm(dev, F(X.d), F(X.d), F(W.d), F(B.d), n, wd, 1e-12f);
			compare("layernorm", cs, &X, 1e-5);
			drop(&X);
			drop(&W);
			drop(&B);
			drop(&O);
			free(xv);
			free(wv);
			free(bv);
		}
}
END_TEST

START_TEST(test_elementwise)
{
	static const size_t counts[] = { 1, 31, 1536 * 3 + 7 };

	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		size_t c = counts[k];
		float *g = randv(c, 6.0f), *u = randv(c, 2.0f);
		struct pair G = putf(g, c), U = putf(u, c), O = alloc_pair(c * sizeof(float));
		char cs[32];

		snprintf(cs, sizeof(cs), "%zu", c);
		ref->ops->swiglu(ref, F(O.r), F(G.r), F(U.r), c);
		dev->ops->swiglu(dev, F(O.d), F(G.d), F(U.d), c);
		compare("swiglu", cs, &O, 1e-5);
		ref->ops->gelu(ref, F(G.r), c);
		dev->ops->gelu(dev, F(G.d), c);
		compare("gelu", cs, &G, 1e-5);
		drop(&G);
		drop(&U);
		drop(&O);
		free(g);
		free(u);
	}
	/* the residual (ldx == width) and a broadcast bias (ldx == 0) */
	for (size_t n = 1; n <= 5; n += 4) {
		size_t wd = 577;
		float *y = randv(n * wd, 1.0f), *x = randv(n * wd, 1.0f);
		struct pair Y = putf(y, n * wd), X = putf(x, n * wd);
		char cs[32];

		snprintf(cs, sizeof(cs), "%zux%zu", n, wd);
		ref->ops->add(ref, F(Y.r), F(X.r), n, wd, wd);
		dev->ops->add(dev, F(Y.d), F(X.d), n, wd, wd);
		compare("add", cs, &Y, 1e-5);
		ref->ops->add(ref, F(Y.r), F(X.r), n, wd, 0);
		dev->ops->add(dev, F(Y.d), F(X.d), n, wd, 0);
		compare("add_bias", cs, &Y, 1e-5);
		drop(&Y);
		drop(&X);
		free(y);
		free(x);
	}
}
END_TEST

/* ---- rope, cache, attention ------------------------------------------------ */

START_TEST(test_rope)
{
	static const uint32_t cfg[][3] = { { 3, 64, 64 }, { 2, 48, 32 }, { 9, 64, 64 } };
	static const uint32_t pos[] = { 0, 7, 1000 };

	for (int m = 0; m < 2; m++)
		for (size_t c = 0; c < 3; c++)
			for (size_t p = 0; p < 3; p++)
				for (size_t n = 1; n <= 5; n += 4) {
					struct lp_backend_rope r = { m ? LP_ROPE_NEOX : LP_ROPE_ADJACENT,
								     cfg[c][1], cfg[c][2], 10000.0f };
					size_t cnt = n * cfg[c][0] * cfg[c][1];
					float *x = randv(cnt, 1.0f);
					struct pair X = putf(x, cnt);
					char cs[64];

					snprintf(cs, sizeof(cs), "%s_h%u_d%u_rot%u_pos%u_n%zu",
						 m ? "neox" : "adjacent", cfg[c][0], cfg[c][1],
						 cfg[c][2], pos[p], n);
					ref->ops->rope(ref, F(X.r), n, cfg[c][0], pos[p], &r);
					dev->ops->rope(dev, F(X.d), n, cfg[c][0], pos[p], &r);
					compare("rope", cs, &X, 1e-5);
					drop(&X);
					free(x);
				}
}
END_TEST

#define N_CTX 300

struct cache {
	struct lp_backend_kv r, d;
	struct pair k, v;
};

static struct cache make_cache(enum lp_qtype t, uint32_t kv_dim)
{
	struct cache c;
	size_t rb = lp_qtype_row_bytes(t, kv_dim);

	c.k = alloc_pair(rb * N_CTX);
	c.v = alloc_pair(rb * N_CTX);
	c.r = (struct lp_backend_kv){ t, N_CTX, kv_dim, rb, c.k.r->data, c.v.r->data };
	c.d = (struct lp_backend_kv){ t, N_CTX, kv_dim, rb, c.k.d->data, c.v.d->data };
	return c;
}

/* The cached keys of positions [0, n) on both sides, as floats. */
static void compare_cache(const struct cache *c, uint32_t n, const char *cs)
{
	void *cr, *cg;
	float *fr = malloc((size_t)n * c->r.kv_dim * sizeof(float));
	float *fg = malloc((size_t)n * c->r.kv_dim * sizeof(float));

	fetch(&c->k, &cr, &cg);
	for (uint32_t p = 0; p < n; p++) {
		lp_dequantize_row(c->r.type, (uint8_t *)cr + p * c->r.row_bytes,
				  fr + (size_t)p * c->r.kv_dim, c->r.kv_dim);
		lp_dequantize_row(c->r.type, (uint8_t *)cg + p * c->r.row_bytes,
				  fg + (size_t)p * c->r.kv_dim, c->r.kv_dim);
	}
	expect("kv_store", cs, fg, fr, (size_t)n * c->r.kv_dim, 1e-3);
	free(cr);
	free(cg);
	free(fr);
	free(fg);
}

/* Store n new rows at pos0 and attend: both sides, then compare. */
static void attend(struct cache *c, uint32_t pos0, uint32_t n, uint32_t nh, uint32_t nkv,
		   uint32_t hd, double tol, const char *tcase)
{
	size_t q_dim = (size_t)nh * hd, kv_dim = (size_t)nkv * hd;
	float *q = randv(n * q_dim, 1.0f), *k = randv(n * kv_dim, 1.0f), *v = randv(n * kv_dim, 1.0f);
	struct pair Q = putf(q, n * q_dim), K = putf(k, n * kv_dim), V = putf(v, n * kv_dim);
	struct pair O = alloc_pair(n * q_dim * sizeof(float));
	struct lp_backend_attn ar = { F(Q.r), F(O.r), &c->r, n, pos0, nh, nkv, hd,
				      1.0f / sqrtf((float)hd) };
	struct lp_backend_attn ad = ar;
	char cs[96];

	ad.q = F(Q.d);
	ad.out = F(O.d);
	ad.kv = &c->d;
	ref->ops->kv_store(ref, &c->r, pos0, n, F(K.r), F(V.r));
	dev->ops->kv_store(dev, &c->d, pos0, n, F(K.d), F(V.d));
	ref->ops->attention(ref, &ar);
	dev->ops->attention(dev, &ad);
	snprintf(cs, sizeof(cs), "%s_len%u_n%u", tcase, pos0 + n, n);
	compare("attention", cs, &O, tol);
	drop(&Q);
	drop(&K);
	drop(&V);
	drop(&O);
	free(q);
	free(k);
	free(v);
}

START_TEST(test_attention)
{
	static const enum lp_qtype kvt[] = { LP_Q_F32, LP_Q_F16, LP_Q_Q8_0 };
	static const uint32_t cfg[][3] = { { 6, 2, 64 }, { 4, 4, 32 }, { 9, 3, 64 }, { 4, 1, 40 } };
	enum lp_qtype t = kvt[_i];
	double tol = t == LP_Q_F32 ? 1e-5 : 1e-3;

	for (size_t g = 0; g < sizeof(cfg) / sizeof(cfg[0]); g++) {
		uint32_t nh = cfg[g][0], nkv = cfg[g][1], hd = cfg[g][2], pos = 0;
		struct cache c;
		char tc[64];

		if (hd % lp_qtype_block_elems(t))
			continue;
		c = make_cache(t, nkv * hd);
		snprintf(tc, sizeof(tc), "%s_h%u_kv%u_d%u", lp_qtype_name(t), nh, nkv, hd);
		/* a prompt, one token, a short chunk, long chunks, one token */
		attend(&c, pos, 37, nh, nkv, hd, tol, tc), pos += 37;
		attend(&c, pos, 1, nh, nkv, hd, tol, tc), pos += 1;
		attend(&c, pos, 5, nh, nkv, hd, tol, tc), pos += 5;
		while (pos + 64 < N_CTX - 2)
			attend(&c, pos, 64, nh, nkv, hd, tol, tc), pos += 64;
		attend(&c, pos, 1, nh, nkv, hd, tol, tc), pos += 1;
		compare_cache(&c, pos, tc);
		drop(&c.k);
		drop(&c.v);
	}
}
END_TEST

/* ---- errors and recorded steps (the CUDA backend's own) --------------------- */

START_TEST(test_errors)
{
	struct lp_backend_mat bad = { (enum lp_qtype)99, NULL, 4, 32, 64 };
	struct lp_diag dg;
	enum lp_status st;
	float x = 1.0f;
	struct pair X = putf(&x, 1);

	if (!dev_is_cuda) {
		drop(&X);
		return;
	}
	lp_diag_init(&dg);
	ck_assert_int_eq(dev->ops->supports(dev, (enum lp_qtype)99), 0);
	dev->ops->matmul(dev, &bad, F(X.d), 1, F(X.d), 4);
	/* latched ops after the failure do nothing */
	dev->ops->gelu(dev, F(X.d), 1);
	st = dev->ops->sync(dev, &dg);
	ck_assert_int_eq(st, LP_E_DEVICE);
	ck_assert_msg(strstr(dg.msg, "matmul") != NULL, "message '%s' names no op", dg.msg);
	/* cleared by sync */
	lp_diag_init(&dg);
	ck_assert_int_eq(dev->ops->sync(dev, &dg), LP_OK);
	drop(&X);
}
END_TEST

START_TEST(test_step_record)
{
	const uint32_t nh = 6, nkv = 2, hd = 64, q_dim = nh * hd, kv_dim = nkv * hd;
	struct lp_backend_rope r = { LP_ROPE_NEOX, hd, hd, 10000.0f };
	struct cache c = make_cache(LP_Q_F16, kv_dim);
	struct pair Q = alloc_pair(q_dim * sizeof(float)), K = alloc_pair(kv_dim * sizeof(float));
	struct pair V = alloc_pair(kv_dim * sizeof(float)), O = alloc_pair(q_dim * sizeof(float));
	int replays = 0;

	attend(&c, 0, 37, nh, nkv, hd, 1e-3, "prompt");
	for (uint32_t pos = 37; pos < 42; pos++) {
		float *q = randv(q_dim, 1.0f), *k = randv(kv_dim, 1.0f), *v = randv(kv_dim, 1.0f);
		struct lp_backend_attn ar = { F(Q.r), F(O.r), &c.r, 1, pos, nh, nkv, hd, 0.125f };
		struct lp_backend_attn ad = { F(Q.d), F(O.d), &c.d, 1, pos, nh, nkv, hd, 0.125f };
		char cs[32];

		/* the inputs change outside the recorded step, as a token's do */
		memcpy(Q.r->host, q, Q.bytes);
		memcpy(K.r->host, k, K.bytes);
		memcpy(V.r->host, v, V.bytes);
		dev->ops->upload(dev, Q.d, 0, q, Q.bytes);
		dev->ops->upload(dev, K.d, 0, k, K.bytes);
		dev->ops->upload(dev, V.d, 0, v, V.bytes);
		ref->ops->rope(ref, F(Q.r), 1, nh, pos, &r);
		ref->ops->rope(ref, F(K.r), 1, nkv, pos, &r);
		ref->ops->kv_store(ref, &c.r, pos, 1, F(K.r), F(V.r));
		ref->ops->attention(ref, &ar);
		if (dev->ops->step_begin(dev, 42, pos)) {
			replays++;
		} else {
			dev->ops->rope(dev, F(Q.d), 1, nh, pos, &r);
			dev->ops->rope(dev, F(K.d), 1, nkv, pos, &r);
			dev->ops->kv_store(dev, &c.d, pos, 1, F(K.d), F(V.d));
			dev->ops->attention(dev, &ad);
			dev->ops->step_end(dev);
		}
		snprintf(cs, sizeof(cs), "pos%u", pos);
		compare("step_record", cs, &O, 1e-3);
		free(q);
		free(k);
		free(v);
	}
	if (dev_is_cuda && (!getenv("LPIPE_CUDA_GRAPH") || atoi(getenv("LPIPE_CUDA_GRAPH"))))
		ck_assert_int_eq(replays, 4);
	drop(&Q);
	drop(&K);
	drop(&V);
	drop(&O);
	drop(&c.k);
	drop(&c.v);
}
END_TEST

/* ---- end to end: a generated model, all, half or none of it offloaded ------- */

static int argmax(const float *v, uint32_t n)
{
	int b = 0;

	for (uint32_t i = 1; i < n; i++)
		if (v[i] > v[b])
			b = (int)i;
	return b;
}

/* The gap between the best and second-best logit, relative to max |logit|. */
static double top2_gap(const float *v, uint32_t n)
{
	float a = -INFINITY, b = -INFINITY, m = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (v[i] > a) {
			b = a;
			a = v[i];
		} else if (v[i] > b) {
			b = v[i];
		}
		m = fabsf(v[i]) > m ? fabsf(v[i]) : m;
	}
	return m > 0 ? (a - b) / m : 0;
}

/*
 * Prompts of 1, 17 and 40 tokens, then 64 greedy tokens (32 with
 * LPIPE_TEST_SIZE=small), on the CPU and
 * with gpu_layers 0, 3 and 6 of 6 on the device: the prompt's last logits
 * within the tolerance (1e-3 for f32 weights, 3e-2 for Q4_1, relative to
 * max |logit|: the CPU's int8 batch product, where its kernel set has one,
 * gives a prompt of 16 tokens or more the decode's 8-bit activations, as
 * check_forward's per-type tolerance allows, and measured 0.0202 against
 * the device at 17 tokens; 2e-2 before), and the same greedy tokens,
 * except that decoding may part
 * at a near tie (the CPU's best two logits closer than half the tolerance
 * times max |logit|), after which the rest is not compared.
 */
START_TEST(test_forward)
{
	static const enum lp_qtype types[] = { LP_Q_F32, LP_Q_Q4_1 };
	static const uint32_t prompts[] = { 1, 17, 40 }, layers[] = { 0, 3, 6 };
	enum lp_qtype t = types[_i];
	struct tiny_spec spec = tiny_layered_spec();
	char path[] = "/tmp/lpipe-cuda-ops-XXXXXX";
	int fd = mkstemp(path);
	struct lp_gguf *g = NULL;
	struct lp_model *m = NULL;
	struct lp_diag dg;
	double tol = t == LP_Q_F32 ? 1e-3 : 3e-2;

	ck_assert_int_ge(fd, 0);
	close(fd);
	spec.type = t;
	lp_diag_init(&dg);
	ck_assert_int_eq(tiny_model_write(path, &spec, 11), 0);
	ck_assert_msg(lp_gguf_open(path, &g, &dg) == LP_OK && lp_model_load(g, &m, &dg) == LP_OK,
		      "%s", dg.msg);
	for (size_t pi = 0; pi < 3; pi++) {
		uint32_t np = prompts[pi], V = m->hp.n_vocab;
		int32_t prompt[40], cpu_tok[64];
		float *ref_logits = malloc(V * sizeof(float)), *logits = malloc(V * sizeof(float));
		const int steps = small_run() ? 32 : 64;
		int part_at = steps;

		for (uint32_t i = 0; i < np; i++)
			prompt[i] = (int32_t)((i * 37 + 5) % V);
		for (size_t li = 0; li <= 3; li++) {
			/* li == 0: the CPU reference; then the device with layers[li - 1] */
			struct lp_forward_params p = lp_forward_default_params();
			struct lp_forward *c;
			char cs[64];

			p.n_ctx = 128;
			p.n_threads = 2;
			if (li > 0) {
				p.offload = dev;
				p.gpu_layers = layers[li - 1];
			}
			ck_assert_msg(lp_forward_new(m, &p, &c, &dg) == LP_OK, "%s", dg.msg);
			ck_assert_msg(lp_forward_eval(c, prompt, np, 0, logits, &dg) == LP_OK, "%s",
				      dg.msg);
			snprintf(cs, sizeof(cs), "%s_prompt%u_gpu%u", lp_qtype_name(t), np,
				 li ? layers[li - 1] : 0);
			if (li == 0)
				memcpy(ref_logits, logits, V * sizeof(float));
			else
				expect("forward", cs, logits, ref_logits, V, tol);
			for (int k = 0; k < steps; k++) {
				int32_t tok = argmax(logits, V);
				if (li == 0) {
					cpu_tok[k] = tok;
					if (k < part_at && top2_gap(logits, V) < tol / 2)
						part_at = k; /* a near tie: compare up to here */
				} else if (k < part_at) {
					ck_assert_msg(tok == cpu_tok[k],
						      "%s: greedy token %d is %d, the CPU's %d", cs, k,
						      tok, cpu_tok[k]);
				}
				ck_assert_msg(lp_forward_eval(c, &tok, 1, np + (uint32_t)k, logits,
							      &dg) == LP_OK, "%s", dg.msg);
			}
			lp_forward_free(c);
		}
		printf("greedy %s prompt %u: %d of %d tokens compared\n", lp_qtype_name(t), np,
		       part_at, steps);
		free(ref_logits);
		free(logits);
	}
	lp_model_free(m);
	lp_gguf_close(g);
	unlink(path);
}
END_TEST


/* ---- encoder and retrieval ops ------------------------------------------------ */

static int reserve_both(struct lp_diag *dg);

/* Masked attention of a padded batch (lengths 20, 7, 1 of L = 20, 4 heads
 * of 16 in q/k/v rows of 3E), mean pooling, the hashed projection. */
START_TEST(test_encoder_ops)
{
	enum { S = 3, L = 20, H = 4, DH = 16, E = H * DH, W = 40 };
	int32_t lens[S] = { 20, 7, 1 };
	float *qkv = randv(S * L * 3 * E, 1.0f);
	struct pair Q = putf(qkv, S * L * 3 * E), N = put(lens, sizeof(lens));
	struct pair O = alloc_pair(S * L * E * sizeof(float)), P = alloc_pair(S * E * sizeof(float));
	struct lp_backend_enc_attn a = { NULL, NULL, NULL, 3 * E, NULL, NULL, S, L, H, DH, 0.25f };
	uint32_t off[S + 1] = { 0, 5, 5, 9 }, bucket[9] = { 3, 39, 3, 0, 17, 2, 2, 8, 39 };
	float val[9] = { 1.5f, -2, 0.25f, 3, 1, -1, 0.5f, 2, -4 };
	struct pair OF = put(off, sizeof(off)), BK = put(bucket, sizeof(bucket));
	struct pair VL = putf(val, 9), HX = alloc_pair(S * W * sizeof(float));
	void *c, *g;

	a.q = F(Q.r), a.k = F(Q.r) + E, a.v = F(Q.r) + 2 * E, a.out = F(O.r);
	a.lens = (const int32_t *)N.r->data;
	ref->ops->enc_attention(ref, &a);
	a.q = F(Q.d), a.k = F(Q.d) + E, a.v = F(Q.d) + 2 * E, a.out = F(O.d);
	a.lens = (const int32_t *)N.d->data;
	dev->ops->enc_attention(dev, &a);
	/* the real rows only: padding rows are unspecified */
	fetch(&O, &c, &g);
	for (int s = 0; s < S; s++)
		expect("enc_attention", s == 0 ? "full" : s == 1 ? "7/20" : "1/20",
		       (float *)g + (size_t)s * L * E, (float *)c + (size_t)s * L * E,
		       (size_t)lens[s] * E, 1e-5);
	free(c);
	free(g);
	ref->ops->mean_pool(ref, F(P.r), F(O.r), (const int32_t *)N.r->data, S, L, E);
	dev->ops->mean_pool(dev, F(P.d), F(O.d), (const int32_t *)N.d->data,
			    S, L, E);
	compare("mean_pool", "3x20", &P, 1e-5);
	ref->ops->scatter_l2(ref, F(HX.r), S, W, (const uint32_t *)OF.r->data,
			     (const uint32_t *)BK.r->data, F(VL.r));
	dev->ops->scatter_l2(dev, F(HX.d), S, W, (const uint32_t *)OF.d->data,
			     (const uint32_t *)BK.d->data, F(VL.d));
	compare("scatter_l2", "3x40", &HX, 1e-6);
	drop(&Q), drop(&N), drop(&O), drop(&P), drop(&OF), drop(&BK), drop(&VL), drop(&HX);
	free(qkv);
}
END_TEST


/* The hashed embedder's projection on the device against its CPU vectors. */
START_TEST(test_hash_projection)
{
	enum { N = 40, DIM = 1024 };
	struct lp_hashembed *h = lp_hashembed_new(DIM, NULL);
	uint32_t off[N + 1] = { 0 }, *bucket = malloc(200000 * sizeof(uint32_t));
	float *val = malloc(200000 * sizeof(float)), *want = malloc(N * DIM * sizeof(float));
	struct pair OF, BK, VL, O;
	char text[2048];
	void *c, *g;

	for (int i = 0; i < N; i++) {
		const uint32_t *b;
		const float *v;
		size_t n, at = 0;
		for (int w = 0; w < 5 + i * 3; w++)
			at += (size_t)snprintf(text + at, sizeof(text) - at, "word%d 文%d ", (w * 7 + i) % 53,
					       w % 5);
		ck_assert_int_eq(lp_hashembed_pairs(h, text, at, &b, &v, &n, NULL), LP_OK);
		memcpy(bucket + off[i], b, n * sizeof(*b));
		memcpy(val + off[i], v, n * sizeof(*v));
		off[i + 1] = off[i] + (uint32_t)n;
		ck_assert_int_eq(lp_hashembed_embed(h, text, at, want + (size_t)i * DIM, NULL, NULL),
				 LP_OK);
	}
	OF = put(off, sizeof(off));
	BK = put(bucket, off[N] * sizeof(uint32_t));
	VL = putf(val, off[N]);
	O = alloc_pair((size_t)N * DIM * sizeof(float));
	dev->ops->scatter_l2(dev, F(O.d), N, DIM, (const uint32_t *)OF.d->data,
			     (const uint32_t *)BK.d->data, F(VL.d));
	fetch(&O, &c, &g);
	expect("hash_projection", "40x1024", g, want, (size_t)N * DIM, 1e-6);
	free(c), free(g), free(bucket), free(val), free(want);
	drop(&OF), drop(&BK), drop(&VL), drop(&O);
	lp_hashembed_free(h);
}
END_TEST

/* Top-k of both backends against a sort: rows with ties, NaN and -0. */
START_TEST(test_topk)
{
	static const int cases[][3] = { { 4, 3000, 10 }, { 2, 100000, 1000 }, { 3, 50, 64 },
					{ 64, 777, 1 } };
	int nq = cases[_i][0], n = cases[_i][1], k = cases[_i][2];

	if (small_run() && n > 10000)
		n = 10000;
	float *sc = malloc((size_t)nq * n * sizeof(float));
	struct ranked *r = malloc((size_t)n * sizeof(*r));
	struct pair S, OR, IX;
	int32_t *ic, *ig;
	char cs[48];

	for (size_t i = 0; i < (size_t)nq * n; i++) {
		sc[i] = (float)(int)(frand() * 200) / 64.0f;
		if (i % 101 == 7)
			sc[i] = NAN;
		if (i % 83 == 2)
			sc[i] = -0.0f;
	}
	S = putf(sc, (size_t)nq * n);
	OR = alloc_pair((size_t)nq * k * sizeof(float));
	IX = alloc_pair((size_t)nq * k * sizeof(int32_t));
	ref->ops->topk(ref, F(S.r), (size_t)n, (size_t)nq, (size_t)n, (size_t)k, F(OR.r),
		       (int32_t *)IX.r->data);
	dev->ops->topk(dev, F(S.d), (size_t)n, (size_t)nq, (size_t)n, (size_t)k, F(OR.d),
		       (int32_t *)IX.d->data);
	fetch(&IX, (void **)&ic, (void **)&ig);
	snprintf(cs, sizeof(cs), "%dx%d k%d", nq, n, k);
	for (int q = 0; q < nq; q++) {
		for (int i = 0; i < n; i++)
			r[i] = (struct ranked){ sc[(size_t)q * n + i], i };
		qsort(r, (size_t)n, sizeof(*r), rank_cmp);
		for (int j = 0; j < k && j < n; j++) {
			ck_assert_msg(ic[q * k + j] == r[j].i, "cpu topk %s q%d rank %d", cs, q, j);
			ck_assert_msg(ig[q * k + j] == r[j].i, "device topk %s q%d rank %d: %d, want %d",
				      cs, q, j, ig[q * k + j], r[j].i);
		}
	}
	printf("topk_check %s ok\n", cs);
	free(ic), free(ig), free(sc), free(r);
	drop(&S), drop(&OR), drop(&IX);
}
END_TEST

/* The dense model's directory, or NULL (the end-to-end tests then skip). */
static const char *model_dir(char *buf, size_t cap)
{
	char probe[4200];

	if (!lp_embedder_dense_dir(buf, cap))
		return NULL;
	snprintf(probe, sizeof(probe), "%s/model.safetensors", buf);
	return access(probe, R_OK) ? NULL : buf;
}

/* Lines of tests/data/minilm/sentences.txt (texts point into *blob). */
static size_t fixture_sentences(const char **texts, size_t *lens, size_t max, char **blob)
{
	const char *top = getenv("top_srcdir");
	char path[1024];
	size_t n = 0, len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/minilm/sentences.txt", top ? top : ".");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	*blob = malloc(1 << 16);
	len = fread(*blob, 1, (1 << 16) - 1, f);
	fclose(f);
	(*blob)[len] = 0;
	for (char *p = *blob; *p && n < max;) {
		char *nl = strchr(p, '\n');
		texts[n] = p;
		lens[n] = nl ? (size_t)(nl - p) : strlen(p);
		n++;
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
	return n;
}

/* MiniLM end to end: the fixture sentences, and texts long enough for
 * several windows, embedded on the device and on the CPU: cosine >=
 * 0.9999 each. */
START_TEST(test_encoder_e2e)
{
	char buf[4096], *blob, *longtext;
	const char *dir = model_dir(buf, sizeof(buf)), *texts[70];
	size_t lens[70], n, E;
	struct lp_bert *mc, *md;
	struct lp_diag dg;
	float *ec, *ed;
	double worst = 1;

	if (!dir) {
		printf("skip: encoder end to end: no MiniLM model (LPIPE_EMBED_MODEL)\n");
		return;
	}
	lp_diag_init(&dg);
	n = fixture_sentences(texts, lens, small_run() ? 4 : 64, &blob);
	longtext = malloc(20000);
	for (size_t i = 0, at = 0; i < (small_run() ? 40u : 600u); i++)
		at += (size_t)snprintf(longtext + at, 20000 - at, "word%zu sentence ", i % 37);
	texts[n] = longtext;
	lens[n++] = strlen(longtext);
	texts[n] = "";
	lens[n++] = 0;
	ck_assert_msg(lp_bert_load_on(dir, ref, &mc, &dg) == LP_OK, "cpu: %s", dg.msg);
	E = lp_bert_dim(mc);
	ec = malloc(n * E * sizeof(float));
	ed = malloc(n * E * sizeof(float));
	ck_assert_msg(lp_bert_embed(mc, texts, lens, n, ec, &dg) == LP_OK, "cpu: %s", dg.msg);
	/* the device's products on f16 weights (its default) and on f32 */
	for (int mode = 0; mode < 2; mode++) {
		setenv("LPIPE_ENCODER_WEIGHTS", mode ? "f32" : "f16", 1);
		ck_assert_msg(lp_bert_load_on(dir, dev, &md, &dg) == LP_OK, "device: %s", dg.msg);
		ck_assert_msg(lp_bert_embed(md, texts, lens, n, ed, &dg) == LP_OK, "device: %s",
			      dg.msg);
		worst = 1;
		for (size_t i = 0; i < n; i++) {
			double dot = 0, a = 0, b = 0;
			for (size_t j = 0; j < E; j++) {
				dot += (double)ec[i * E + j] * ed[i * E + j];
				a += (double)ec[i * E + j] * ec[i * E + j];
				b += (double)ed[i * E + j] * ed[i * E + j];
			}
			dot = a > 0 && b > 0 ? dot / sqrt(a * b) : 1;
			worst = dot < worst ? dot : worst;
			ck_assert_msg(dot >= 0.9999, "%s weights, text %zu: cosine %.6f",
				      mode ? "f32" : "f16", i, dot);
		}
		printf("maxerr encoder_cosine %s %.3g %g\n", mode ? "f32" : "f16", 1 - worst, 1e-4);
		lp_bert_free(md);
	}
	unsetenv("LPIPE_ENCODER_WEIGHTS");
	lp_bert_free(mc);
	free(ec), free(ed), free(blob), free(longtext);
	/* the device backends' scratch: back to the suite's limits */
	ck_assert_msg(reserve_both(&dg) == LP_OK, "reserve: %s", dg.msg);
}
END_TEST

/* Retrieval: random unit vectors, scored on the device (f16 rows, f32
 * sums) and on the CPU (f32): at every rank the device's pick scores,
 * on the CPU, within 1e-4 of the CPU's own pick at that rank, so the
 * top-k sets differ only among scores closer than that. */
START_TEST(test_retrieval_e2e)
{
	enum { D = 384, NQ = 9, K = 100 };
	const size_t N = small_run() ? 2000 : 20000;
	float *rows = malloc((size_t)N * D * sizeof(float)), *q = malloc(NQ * D * sizeof(float));
	size_t *ic = malloc(NQ * K * sizeof(size_t)), *ig = malloc(NQ * K * sizeof(size_t));
	float *sc = malloc(NQ * K * sizeof(float)), *all = malloc((size_t)NQ * N * sizeof(float));
	struct lp_vecindex *ix;
	struct lp_vecdev *dv;
	struct lp_diag dg;
	size_t kept;
	double worst = 0;

	lp_diag_init(&dg);
	for (size_t r = 0; r < N + NQ; r++) {
		float *v = r < N ? rows + r * D : q + (r - N) * D;
		double ss = 0;
		for (int j = 0; j < D; j++) {
			v[j] = frand();
			ss += (double)v[j] * v[j];
		}
		for (int j = 0; j < D; j++)
			v[j] = (float)(v[j] / sqrt(ss));
	}
	ix = lp_vecindex_new(D, N, &dg);
	ck_assert_ptr_nonnull(ix);
	memcpy(lp_vecindex_append(ix, N), rows, (size_t)N * D * sizeof(float));
	dv = lp_vecdev_new(dev, D, N, &dg);
	ck_assert_msg(dv != NULL, "%s", dg.msg);
	ck_assert_msg(lp_vecdev_append(dv, rows, N, &dg) == LP_OK, "%s", dg.msg);
	ck_assert_int_eq(lp_vecindex_topk(ix, q, NQ, K, ic, sc, &kept, &dg), LP_OK);
	ck_assert_msg(lp_vecdev_topk(dv, q, NQ, K, ig, NULL, &kept, &dg) == LP_OK, "%s", dg.msg);
	ck_assert_uint_eq(kept, K);
	ck_assert_int_eq(lp_vecindex_scores(ix, q, NQ, all, &dg), LP_OK);
	for (int qq = 0; qq < NQ; qq++)
		for (int j = 0; j < K; j++) {
			double e = fabs(all[(size_t)qq * N + ig[qq * K + j]] - sc[qq * K + j]);
			worst = e > worst ? e : worst;
			ck_assert_msg(e <= 1e-4, "query %d rank %d: device picks %zu, cpu %zu (%.6f)", qq,
				      j, ig[qq * K + j], ic[qq * K + j], e);
		}
	printf("maxerr retrieval_rank_score %zux384 %.3g %g\n", N, worst, 1e-4);
	lp_vecdev_free(dv);
	lp_vecindex_free(ix);
	free(rows), free(q), free(ic), free(ig), free(sc), free(all);
	ck_assert_msg(reserve_both(&dg) == LP_OK, "reserve: %s", dg.msg);
}
END_TEST

/* ---- setup ------------------------------------------------------------------ */

static int reserve_both(struct lp_diag *dg)
{
	struct lp_backend_limits lim = {
		.n_rows = 64, .max_cols = 1024, .max_rows = 1024, .n_ctx = 1100,
		.kv_dim = 256, .kv_type = LP_Q_F16, .n_head = 9, .n_rot = 64,
		.enc_len = 64, .topk = 1024,
	};

	return ref->ops->reserve(ref, &lim, dg) || dev->ops->reserve(dev, &lim, dg);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static double test_t0;
static int test_no;

static void setup(void)
{
	struct lp_backend_params p = lp_backend_default_params();
	const char *which = getenv("LPIPE_TEST_DEVICE");
	struct lp_diag dg;

	lp_diag_init(&dg);
	p.n_threads = 2;
	ck_assert_int_eq(lp_backend_cpu_open(&p, &ref, &dg), LP_OK);
	if (which && !strncmp(which, "cpu", 3)) {
		p.as_device = 1;
		/* cpu-matvec: 8-bit activations at every size, against the
		 * reference's sgemm from 16 rows on: a difference of the size a
		 * GPU's f16 GEMM makes, to see the tolerances hold */
		if (!strcmp(which, "cpu-matvec"))
			p.gemm_min = UINT32_MAX;
		ck_assert_int_eq(lp_backend_cpu_open(&p, &dev, &dg), LP_OK);
	} else {
		ck_assert_msg(lp_backend_open("cuda", &p, &dev, &dg) == LP_OK, "%s", dg.msg);
	}
	ck_assert_msg(reserve_both(&dg) == LP_OK, "reserve: %s", dg.msg);
	test_t0 = now_s();
}

static void teardown(void)
{
	printf("time %d %.1f\n", test_no++, now_s() - test_t0);
	fflush(stdout);
	lp_backend_free(dev);
	lp_backend_free(ref);
	dev = ref = NULL;
}

int main(void)
{
	struct lp_backend_params p = lp_backend_default_params();
	const char *which = getenv("LPIPE_TEST_DEVICE"), *bd = getenv("top_builddir");
	struct lp_backend *probe = NULL;
	struct lp_diag dg;
	char dir[4096] = "";
	SRunner *sr;
	Suite *s;
	TCase *tc;
	int failed;

	/* the module as built (build/.libs; this program is build/tests/),
	 * unless the caller points elsewhere */
	if (!getenv("LPIPE_MODULE_DIR")) {
		ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 16);
		char *slash;
		if (bd) {
			snprintf(dir, sizeof(dir), "%s/.libs", bd);
		} else if (n > 0 && (dir[n] = 0, slash = strrchr(dir, '/'))) {
			*slash = 0;
			snprintf(slash, sizeof(dir) - (size_t)(slash - dir), "/../.libs");
		} else {
			dir[0] = 0;
		}
		if (dir[0])
			setenv("LPIPE_MODULE_DIR", dir, 1);
	}
	dev_is_cuda = !(which && !strncmp(which, "cpu", 3));
	if (dev_is_cuda) {
		lp_diag_init(&dg);
		if (lp_backend_open("cuda", &p, &probe, &dg) != LP_OK) {
			printf("skip: no usable CUDA backend: %s\n", dg.msg);
			return 77;
		}
		printf("device: %s\n", probe->device);
		lp_backend_free(probe);
	}
	s = suite_create("cuda_ops");
	tc = tcase_create("ops");
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_matmul, 0, (int)N_TYPES);
	tcase_add_loop_test(tc, test_get_rows, 0, (int)N_TYPES);
	tcase_add_test(tc, test_norms);
	tcase_add_test(tc, test_elementwise);
	tcase_add_test(tc, test_rope);
	tcase_add_loop_test(tc, test_attention, 0, 3);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_step_record);
	if (!ops_only())
		tcase_add_loop_test(tc, test_forward, 0, 2);
	tcase_add_test(tc, test_encoder_ops);
	tcase_add_test(tc, test_hash_projection);
	tcase_add_loop_test(tc, test_topk, 0, 4);
	if (!ops_only()) {
		tcase_add_test(tc, test_encoder_e2e);
		tcase_add_test(tc, test_retrieval_e2e);
	} else {
		printf("ops only (LPIPE_TEST_SIZE=ops): no forward pass, no end-to-end tests\n");
	}
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* CUDA does not survive fork() once initialized (the probe above did) */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
