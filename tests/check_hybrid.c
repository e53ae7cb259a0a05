/* check_hybrid.c - the hashed embedder, the embedder interface, the vector
 * index, score fusion, the embedding cache, and the retrieve stage's
 * embedding scorers. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/pipeline.h"
#include "core/buf.h"
#include "core/mem.h"
#include "core/status.h"
#include "retrieve/embcache.h"
#include "retrieve/embedder.h"
#include "retrieve/embscore.h"
#include "retrieve/fusion.h"
#include "core/hash.h"
#include "retrieve/hashembed.h"
#include "retrieve/vecindex.h"
#include "retrieve/wordpiece.h"
#include "retrieve/topk.h"
#include "stages/doc.h"
#include "stages/stage.h"

extern const struct lp_stage_kind lp_stage_retrieve;

/* ---- hash ---- */

START_TEST(test_hash_bytes)
{
	unsigned char buf[40];
	uint64_t h[17];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 37 + 1);
	/* Every length gives a different hash, and so does the seed. */
	for (size_t n = 0; n <= 16; n++) {
		h[n] = lp_hash_bytes(buf, n, 0);
		for (size_t m = 0; m < n; m++)
			ck_assert(h[m] != h[n]);
		ck_assert(lp_hash_bytes(buf, n, 1) != h[n]);
	}
	/* Alignment does not matter: same bytes at an odd address. */
	memmove(buf + 3, buf, 20);
	ck_assert(lp_hash_bytes(buf + 3, 16, 0) == h[16]);
	/* One flipped bit changes about half the output bits. */
	{
		uint64_t a = lp_hash_bytes("mailbox", 7, 9), b = lp_hash_bytes("mailboy", 7, 9);
		int bits = __builtin_popcountll(a ^ b);
		ck_assert_int_gt(bits, 16);
		ck_assert_int_lt(bits, 48);
	}
}
END_TEST

/* ---- hashed embedder ---- */

enum { DIM = 1024 };

static void embed(struct lp_hashembed *h, const char *text, float *out, size_t *nf)
{
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_hashembed_embed(h, text, strlen(text), out, nf, &d), LP_OK);
}

static double dot(const float *a, const float *b, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)a[i] * b[i];
	return s;
}

START_TEST(test_hashembed_deterministic_normalised)
{
	static const char *const texts[] = {
		"How often does bash check for new mail?",
		"Straße ÉCOLE Αθήνα",
		"内存管理是操作系统的核心",
		"x",
	};
	struct lp_hashembed *h1 = lp_hashembed_new(DIM, NULL), *h2 = lp_hashembed_new(DIM, NULL);
	static float a[DIM], b[DIM];
	size_t nf;

	ck_assert_ptr_nonnull(h1);
	ck_assert_ptr_nonnull(h2);
	ck_assert_uint_eq(lp_hashembed_dim(h1), DIM);
	for (size_t t = 0; t < 4; t++) {
		embed(h1, texts[t], a, &nf);
		ck_assert_uint_gt(nf, 0);
		embed(h2, texts[t], b, NULL);
		ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
		embed(h1, texts[t], b, NULL); /* reused scratch: same result */
		ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
		ck_assert_double_eq_tol(dot(a, a, DIM), 1.0, 1e-5);
	}
	/* Nothing to count: the zero vector. */
	embed(h1, "", a, &nf);
	ck_assert_uint_eq(nf, 0);
	embed(h1, "the of and, is it? -- ...", b, &nf);
	ck_assert_uint_eq(nf, 0);
	ck_assert(dot(a, a, DIM) == 0 && dot(b, b, DIM) == 0);
	lp_hashembed_free(h1);
	lp_hashembed_free(h2);
	lp_hashembed_free(NULL);
}
END_TEST

START_TEST(test_hashembed_features)
{
	struct lp_hashembed *h = lp_hashembed_new(64, NULL);
	static float a[64], b[64];
	size_t nf;

	/* "mail": 1 word + "<mail>" 3-grams (4), 4-grams (3), 5-grams (2). */
	embed(h, "mail", a, &nf);
	ck_assert_uint_eq(nf, 10);
	/* Two words: 2 * 10 + one bigram; the stop word adds nothing. */
	embed(h, "mail of mail", a, &nf);
	ck_assert_uint_eq(nf, 21);
	/* CJK: 2 unigrams + 1 bigram; a separator breaks the bigram. */
	embed(h, "内存", a, &nf);
	ck_assert_uint_eq(nf, 3);
	embed(h, "内，存", a, &nf);
	ck_assert_uint_eq(nf, 2);
	/* Case and fullwidth forms fold. */
	embed(h, "USB Mail", a, NULL);
	embed(h, "ｕｓｂ mAIL", b, NULL);
	ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
	/* Repeats count sublinearly: "mail mail" is not "mail". */
	embed(h, "mail", a, NULL);
	embed(h, "mail mail mail", b, NULL);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);
	lp_hashembed_free(h);

	{
		struct lp_diag d;
		lp_diag_init(&d);
		ck_assert_ptr_null(lp_hashembed_new(8, &d));
		ck_assert_int_eq(d.status, LP_E_USAGE);
		ck_assert_ptr_null(lp_hashembed_new(LP_HASHEMBED_MAX_DIM + 1, NULL));
	}
}
END_TEST

START_TEST(test_hashembed_similarity)
{
	struct lp_hashembed *h = lp_hashembed_new(DIM, NULL);
	static float q[DIM], near[DIM], far[DIM];

	embed(h, "How often does bash check for new mail?", q, NULL);
	embed(h, "Bash checks the mailbox for new mail every 60 seconds.", near, NULL);
	embed(h, "The kernel schedules processes across the available CPUs.", far, NULL);
	ck_assert_double_gt(dot(q, near, DIM), dot(q, far, DIM) + 0.1);
	/* Morphology through character n-grams: no shared word. */
	embed(h, "configuration", q, NULL);
	embed(h, "configured", near, NULL);
	embed(h, "elephant", far, NULL);
	ck_assert_double_gt(dot(q, near, DIM), dot(q, far, DIM) + 0.1);
	/* CJK. */
	embed(h, "如何管理内存", q, NULL);
	embed(h, "内存管理是操作系统的核心功能", near, NULL);
	embed(h, "今天的天气很好，适合散步", far, NULL);
	ck_assert_double_gt(dot(q, near, DIM), dot(q, far, DIM) + 0.1);
	lp_hashembed_free(h);
}
END_TEST

START_TEST(test_embedder_hash)
{
	const char *texts[] = { "check mail", "", "内存管理" };
	size_t lens[] = { 10, 0, strlen(texts[2]) };
	struct lp_embedder *e = NULL, *e2 = NULL;
	struct lp_hashembed *h = lp_hashembed_new(256, NULL);
	static float out[3 * 256], one[256];
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_embedder_new_hash(256, &e, &d), LP_OK);
	ck_assert_uint_eq(lp_embedder_dim(e), 256);
	ck_assert_str_eq(lp_embedder_name(e), "hash");
	ck_assert_int_eq(lp_embedder_embed(e, texts, lens, 3, out, &d), LP_OK);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(lp_hashembed_embed(h, texts[i], lens[i], one, NULL, &d), LP_OK);
		ck_assert_int_eq(memcmp(out + i * 256, one, sizeof(one)), 0);
	}
	/* The id follows the dim. */
	ck_assert_int_eq(lp_embedder_new_hash(512, &e2, &d), LP_OK);
	ck_assert(lp_embedder_id(e) != lp_embedder_id(e2));
	lp_embedder_free(e2);
	ck_assert_int_eq(lp_embedder_new_hash(256, &e2, &d), LP_OK);
	ck_assert(lp_embedder_id(e) == lp_embedder_id(e2));
	lp_embedder_free(e2);
	ck_assert_int_eq(lp_embedder_new_hash(4, &e2, &d), LP_E_USAGE);
	ck_assert_ptr_null(e2);
	lp_embedder_free(e);
	lp_embedder_free(NULL);
	lp_hashembed_free(h);
}
END_TEST

START_TEST(test_embedder_dense_missing)
{
	struct lp_embedder *e = (struct lp_embedder *)1;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_embedder_new_dense("/nonexistent/lpipe-model", &e, &d), LP_E_MODEL);
	ck_assert_ptr_null(e);
	ck_assert_str_eq(d.msg, "dense scorer needs the MiniLM model: run "
			 "scripts/fetch-embedder (or make models)");
	/* The default directory follows the environment. */
	{
		char buf[256];
		setenv("LPIPE_EMBED_MODEL", "/x/y", 1);
		ck_assert_str_eq(lp_embedder_dense_dir(buf, sizeof(buf)), "/x/y");
		unsetenv("LPIPE_EMBED_MODEL");
		setenv("LPIPE_MODEL_DIR", "/m", 1);
		ck_assert_str_eq(lp_embedder_dense_dir(buf, sizeof(buf)), "/m/all-MiniLM-L6-v2");
		unsetenv("LPIPE_MODEL_DIR");
		setenv("HOME", "/h", 1);
		ck_assert_str_eq(lp_embedder_dense_dir(buf, sizeof(buf)),
				 "/h/.cache/lpipe/models/all-MiniLM-L6-v2");
		ck_assert_ptr_null(lp_embedder_dense_dir(buf, 8));
	}
}
END_TEST

/* ---- vector index ---- */

static float frand(void)
{
	/* Never 0: (0, 1] shifted to (-0.5, 0.5] minus a gap around zero. */
	float x = ((float)(rand() % 10000) + 1.0f) / 10000.0f - 0.5f;
	return x >= 0 ? x + 0.01f : x - 0.01f;
}

/* Naive reference: k passes, each taking the best row not yet taken. */
static void naive_topk(const float *s, size_t n, size_t k, size_t *out)
{
	unsigned char taken[1000] = { 0 };

	for (size_t j = 0; j < k && j < n; j++) {
		size_t best = n;
		for (size_t i = 0; i < n; i++)
			if (!taken[i] && (best == n || s[i] > s[best]))
				best = i;
		taken[best] = 1;
		out[j] = best;
	}
}

START_TEST(test_vecindex_topk_vs_naive)
{
	enum { N = 300, D = 37, NQ = 3 };
	struct lp_vecindex *ix;
	static float q[NQ * D], scores[NQ * N], ref[NQ * N], got_s[NQ * (N + 5)];
	static size_t got[NQ * (N + 5)], want[N + 5];
	struct lp_diag d;
	float *rows;

	srand(777);
	lp_diag_init(&d);
	ix = lp_vecindex_new(D, N, &d);
	ck_assert_ptr_nonnull(ix);
	ck_assert_uint_eq(lp_vecindex_dim(ix), D);
	rows = lp_vecindex_append(ix, N - 1);
	ck_assert_ptr_nonnull(rows);
	ck_assert_ptr_null(lp_vecindex_append(ix, 2)); /* past the capacity */
	for (size_t i = 0; i < (N - 1) * D; i++)
		rows[i] = frand();
	rows = lp_vecindex_append(ix, 1);
	for (size_t i = 0; i < D; i++)
		rows[i] = frand();
	ck_assert_uint_eq(lp_vecindex_size(ix), N);
	for (size_t i = 0; i < NQ * D; i++)
		q[i] = frand();
	/* A tie: row 7 equals row 200, so they score alike; 7 must come first. */
	memcpy((float *)lp_vecindex_row(ix, 200), lp_vecindex_row(ix, 7), D * sizeof(float));

	ck_assert_int_eq(lp_vecindex_scores(ix, q, NQ, scores, &d), LP_OK);
	for (size_t a = 0; a < NQ; a++)
		for (size_t i = 0; i < N; i++) {
			double s = dot(q + a * D, lp_vecindex_row(ix, i), D);
			ref[a * N + i] = (float)s;
			ck_assert_double_eq_tol(scores[a * N + i], s, 1e-4);
		}
	for (size_t k = 0; k <= N + 5; k += (k < 10 ? 1 : 37)) {
		size_t kept;
		ck_assert_int_eq(lp_vecindex_topk(ix, q, NQ, k, got, got_s, &kept, &d), LP_OK);
		ck_assert_uint_eq(kept, k < N ? k : N);
		for (size_t a = 0; a < NQ; a++) {
			/* The reference ranks the GEMM's own scores (rounding
			 * of the two products may differ in the last bit). */
			naive_topk(scores + a * N, N, k, want);
			for (size_t j = 0; j < kept; j++) {
				ck_assert_uint_eq(got[a * k + j], want[j]);
				ck_assert(got_s[a * k + j] == scores[a * N + want[j]]);
			}
		}
	}
	(void)ref;
	lp_vecindex_free(ix);
	lp_vecindex_free(NULL);
}
END_TEST

START_TEST(test_vecindex_select_ties_nan)
{
	/* The index ranks rows with the shared lp_topk_select. */
	double s[] = { 1, NAN, 3, 3, -1, 2 };
	size_t out[6];

	ck_assert_uint_eq(lp_topk_select(s, 6, 6, out), 6);
	ck_assert_uint_eq(out[0], 2);
	ck_assert_uint_eq(out[1], 3);
	ck_assert_uint_eq(out[2], 5);
	ck_assert_uint_eq(out[3], 0);
	ck_assert_uint_eq(out[4], 4);
	ck_assert_uint_eq(out[5], 1);
	ck_assert_uint_eq(lp_topk_select(s, 6, 0, out), 0);
	ck_assert_uint_eq(lp_topk_select(s, 0, 3, out), 0);
}
END_TEST

/* ---- fusion ---- */

START_TEST(test_fusion_ranks_rrf)
{
	const double a[] = { 3, 1, 2, 0 }, b[] = { 0, 0, 5, 1 };
	const double *lists[] = { a, b };
	const double t[] = { 5, 7, 7, 1, NAN, 7 };
	size_t rank[6];
	double out[4];
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_fusion_ranks(t, 6, rank, &d), LP_OK);
	ck_assert_uint_eq(rank[1], 1);
	ck_assert_uint_eq(rank[2], 1);
	ck_assert_uint_eq(rank[5], 1);
	ck_assert_uint_eq(rank[0], 4);
	ck_assert_uint_eq(rank[3], 5);
	ck_assert_uint_eq(rank[4], 6);

	/* a ranks 0,2,1,3 -> 1,3,2,4; b ranks 2,3 then 0 and 1 tied at 3. */
	ck_assert_int_eq(lp_fusion_rrf(lists, 2, 4, 60, out, &d), LP_OK);
	ck_assert_double_eq_tol(out[0], 1.0 / 61 + 1.0 / 63, 1e-15);
	ck_assert_double_eq_tol(out[1], 1.0 / 63 + 1.0 / 63, 1e-15);
	ck_assert_double_eq_tol(out[2], 1.0 / 62 + 1.0 / 61, 1e-15);
	ck_assert_double_eq_tol(out[3], 1.0 / 64 + 1.0 / 62, 1e-15);
	/* k = 1 changes the order of 0 and 3 the way the sums say. */
	ck_assert_int_eq(lp_fusion_rrf(lists, 2, 4, 1, out, &d), LP_OK);
	ck_assert_double_eq_tol(out[0], 1.0 / 2 + 1.0 / 4, 1e-15);
	ck_assert_double_eq_tol(out[3], 1.0 / 5 + 1.0 / 3, 1e-15);
	/* One list: order kept. */
	ck_assert_int_eq(lp_fusion_rrf(lists, 1, 4, 60, out, &d), LP_OK);
	ck_assert(out[0] > out[2] && out[2] > out[1] && out[1] > out[3]);
	ck_assert_int_eq(lp_fusion_rrf(lists, 2, 0, 60, out, &d), LP_OK);
}
END_TEST

START_TEST(test_fusion_weighted)
{
	const double a[] = { 0, 5, 10 }, flat[] = { 1, 1, 1 }, b[] = { 2, 4, 0 };
	double out[3];

	lp_fusion_weighted(a, flat, 3, 0.25, out);
	ck_assert_double_eq_tol(out[0], 0, 1e-12);
	ck_assert_double_eq_tol(out[1], 0.375, 1e-12);
	ck_assert_double_eq_tol(out[2], 0.75, 1e-12);
	lp_fusion_weighted(a, b, 3, 0.5, out);
	ck_assert_double_eq_tol(out[0], 0.25, 1e-12);
	ck_assert_double_eq_tol(out[1], 0.75, 1e-12);
	ck_assert_double_eq_tol(out[2], 0.5, 1e-12);
	lp_fusion_weighted(a, b, 3, 1.0, out); /* dense only */
	ck_assert_double_eq_tol(out[1], 1.0, 1e-12);
	ck_assert_double_eq_tol(out[2], 0.0, 1e-12);
}
END_TEST

/* The vocabulary coverage rule of fusion.h, and the words the tokenizer
 * counts for it. */
START_TEST(test_fusion_coverage_scale)
{
	ck_assert_double_eq(lp_fusion_coverage(0, 0), 1.0);
	ck_assert_double_eq_tol(lp_fusion_coverage(8, 2), 0.75, 1e-15);
	ck_assert_double_eq(lp_fusion_coverage(5, 5), 0.0);
	ck_assert_double_eq(lp_fusion_coverage_scale(0.0), 0.0);
	ck_assert_double_eq(lp_fusion_coverage_scale(0.3), 0.0);
	ck_assert_double_eq(lp_fusion_coverage_scale(0.5), 0.0);
	ck_assert_double_eq_tol(lp_fusion_coverage_scale(0.75), 0.5, 1e-15);
	ck_assert_double_eq_tol(lp_fusion_coverage_scale(0.99), 0.98, 1e-12);
	ck_assert_double_eq(lp_fusion_coverage_scale(1.0), 1.0);
	ck_assert_double_eq(lp_fusion_coverage_scale(NAN), 0.0);
}
END_TEST

static const char cov_vocab[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\nfox\nquick\n##ly\n,\n中\n";

START_TEST(test_wordpiece_coverage)
{
	struct lp_wordpiece *wp;
	struct lp_diag d;
	size_t words = 0, unknown = 0;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_wordpiece_new(cov_vocab, strlen(cov_vocab), "vocab.txt", &wp, &d),
			 LP_OK);
	/* quickly = quick ##ly: one word; the comma is not a word, known or
	 * not (。 is not in the vocabulary); 中 known, 狐 and 狸 not; "zebra"
	 * cannot be cut. */
	ck_assert_int_eq(lp_wordpiece_coverage(wp, "The quickly, fox。中狐狸 zebra!", 35, &words,
					       &unknown, &d), LP_OK);
	ck_assert_uint_eq(words, 7);
	ck_assert_uint_eq(unknown, 3);
	/* Counts add up over calls. */
	ck_assert_int_eq(lp_wordpiece_coverage(wp, "fox fox", 7, &words, &unknown, &d), LP_OK);
	ck_assert_uint_eq(words, 9);
	ck_assert_uint_eq(unknown, 3);
	lp_wordpiece_free(wp);
}
END_TEST

/* A query whose every word is [UNK] leaves the BM25 order exactly, ties
 * included, with both fusions; full coverage lets the dense list in. */
START_TEST(test_fusion_unknown_query_is_bm25)
{
	const double bm25[] = { 1.5, 0, 4.0, 0, 2.5, 2.5, 0.1, 0 };
	const double dense[] = { 0.9, 0.8, -0.1, 0.7, 0.0, 0.2, 0.95, 0.6 };
	const double *lists[] = { bm25, dense };
	struct lp_wordpiece *wp;
	struct lp_diag d;
	size_t words = 0, unknown = 0, want[8], got[8];
	double w[2], out[8];

	lp_diag_init(&d);
	ck_assert_int_eq(lp_wordpiece_new(cov_vocab, strlen(cov_vocab), "vocab.txt", &wp, &d),
			 LP_OK);
	ck_assert_int_eq(lp_wordpiece_coverage(wp, "狐狸怎么跳？", 18, &words, &unknown, &d), LP_OK);
	ck_assert_uint_eq(words, 5);
	ck_assert_uint_eq(unknown, 5);
	lp_wordpiece_free(wp);
	w[0] = 1;
	w[1] = lp_fusion_coverage_scale(lp_fusion_coverage(words, unknown));
	ck_assert_double_eq(w[1], 0.0);

	ck_assert_uint_eq(lp_topk_select(bm25, 8, 8, want), 8);
	ck_assert_int_eq(lp_fusion_rrf_weighted(lists, w, 2, 8, 60, out, &d), LP_OK);
	ck_assert_uint_eq(lp_topk_select(out, 8, 8, got), 8);
	for (size_t i = 0; i < 8; i++)
		ck_assert_uint_eq(got[i], want[i]);
	lp_fusion_weighted(bm25, dense, 8, 0.5 * w[1], out);
	ck_assert_uint_eq(lp_topk_select(out, 8, 8, got), 8);
	for (size_t i = 0; i < 8; i++)
		ck_assert_uint_eq(got[i], want[i]);

	/* Full coverage: plain RRF, and the dense list moves chunk 6 up. */
	w[1] = lp_fusion_coverage_scale(1.0);
	ck_assert_int_eq(lp_fusion_rrf_weighted(lists, w, 2, 8, 60, out, &d), LP_OK);
	ck_assert_uint_eq(lp_topk_select(out, 8, 8, got), 8);
	ck_assert(memcmp(got, want, sizeof(got)) != 0);
	{
		double plain[8];
		ck_assert_int_eq(lp_fusion_rrf(lists, 2, 8, 60, plain, &d), LP_OK);
		for (size_t i = 0; i < 8; i++)
			ck_assert_double_eq(out[i], plain[i]);
	}
}
END_TEST

START_TEST(test_fusion_force)
{
	const double s[] = { 9, 8, 7, 6, 5, 4 };
	unsigned char f[6] = { 0 };
	size_t sel[3] = { 0, 1, 2 };

	/* Nothing forced: unchanged. */
	ck_assert_uint_eq(lp_fusion_force(s, 6, f, sel, 3), 0);
	ck_assert(sel[0] == 0 && sel[1] == 1 && sel[2] == 2);
	/* 4 and 5 take the places of 2 and 1, then all sort by score. */
	f[4] = f[5] = 1;
	ck_assert_uint_eq(lp_fusion_force(s, 6, f, sel, 3), 2);
	ck_assert(sel[0] == 0 && sel[1] == 4 && sel[2] == 5);
	/* Already in: nothing to do. */
	ck_assert_uint_eq(lp_fusion_force(s, 6, f, sel, 3), 0);
	/* More forced than places: the best forced ones win. */
	memset(f, 0, sizeof(f));
	f[3] = f[4] = f[5] = 1;
	sel[0] = 0;
	sel[1] = 1;
	ck_assert_uint_eq(lp_fusion_force(s, 6, f, sel, 2), 2);
	ck_assert(sel[0] == 3 && sel[1] == 4);
	/* A forced chunk in the selection keeps its place. */
	memset(f, 0, sizeof(f));
	f[1] = f[5] = 1;
	sel[0] = 0;
	sel[1] = 1;
	sel[2] = 2;
	ck_assert_uint_eq(lp_fusion_force(s, 6, f, sel, 3), 1);
	ck_assert(sel[0] == 0 && sel[1] == 1 && sel[2] == 5);
}
END_TEST

/* ---- embedding cache ---- */

static char cache_dir[256];

static void make_cache_dir(void)
{
	snprintf(cache_dir, sizeof(cache_dir), "/tmp/lpipe-check-hybrid-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(cache_dir));
}

static void remove_cache_dir(void)
{
	DIR *dir = opendir(cache_dir);
	struct dirent *e;
	char path[512];

	/* The cache writes into a sub-directory: clean both levels. */
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", cache_dir, e->d_name);
		if (unlink(path) != 0) {
			DIR *sub = opendir(path);
			struct dirent *f;
			char p2[800];
			while (sub && (f = readdir(sub)))
				if (f->d_name[0] != '.') {
					snprintf(p2, sizeof(p2), "%s/%s", path, f->d_name);
					unlink(p2);
				}
			if (sub)
				closedir(sub);
			rmdir(path);
		}
	}
	if (dir)
		closedir(dir);
	rmdir(cache_dir);
}

static size_t count_files(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	size_t n = 0;

	while (dir && (e = readdir(dir)))
		n += e->d_name[0] != '.';
	if (dir)
		closedir(dir);
	return n;
}

enum { CD = 8 };

static struct lp_embcache *open_cache(const char *dir, size_t dim)
{
	struct lp_embcache *c = NULL;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_embcache_open(dir, 0x1234, 0xabcd, dim, &c, &d), LP_OK);
	ck_assert_ptr_nonnull(c);
	return c;
}

static void vec_of(int i, float *v)
{
	for (int j = 0; j < CD; j++)
		v[j] = (float)(i * 10 + j) + 0.5f;
}

/* Three records, keys 101..103, saved in a fresh file in `dir` (created
 * by the save when missing). */
static void fill_cache(const char *dir)
{
	struct lp_embcache *c;
	struct lp_diag d;
	float v[CD];
	char path[400];

	snprintf(path, sizeof(path), "%s/0000000000001234-000000000000abcd.emb", dir);
	unlink(path);
	c = open_cache(dir, CD);
	lp_diag_init(&d);
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 0);
	ck_assert_int_eq(lp_embcache_get(c, 101, v), 0);
	for (int i = 1; i <= 3; i++) {
		vec_of(i, v);
		ck_assert_int_eq(lp_embcache_put(c, (uint64_t)(100 + i), v, &d), LP_OK);
	}
	ck_assert_int_eq(lp_embcache_save(c, &d), LP_OK);
	lp_embcache_free(c);
}

static void check_record(struct lp_embcache *c, int i, int present)
{
	float v[CD], want[CD];

	vec_of(i, want);
	ck_assert_int_eq(lp_embcache_get(c, (uint64_t)(100 + i), v), present);
	if (present)
		ck_assert_int_eq(memcmp(v, want, sizeof(v)), 0);
}

/* A record that is a link to a device is no record: the cache starts
 * empty at once instead of reading /dev/zero without end. */
START_TEST(test_embcache_device_record)
{
	char dir[300], path[400];
	struct lp_embcache *c;
	float v[CD];

	make_cache_dir();
	snprintf(dir, sizeof(dir), "%s/dev", cache_dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/0000000000001234-000000000000abcd.emb", dir);
	ck_assert_int_eq(symlink("/dev/zero", path), 0);
	c = open_cache(dir, CD);
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 0);
	ck_assert_int_eq(lp_embcache_get(c, 101, v), 0);
	lp_embcache_free(c);
}
END_TEST

START_TEST(test_embcache_round_trip)
{
	char dir[300];
	struct lp_embcache *c;
	struct lp_diag d;

	make_cache_dir();
	snprintf(dir, sizeof(dir), "%s/emb", cache_dir);
	fill_cache(dir);
	ck_assert_uint_eq(count_files(dir), 1); /* no temporary left behind */
	c = open_cache(dir, CD);
	ck_assert_str_eq(strrchr(lp_embcache_path(c), '/'),
			 "/0000000000001234-000000000000abcd.emb");
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 3);
	ck_assert_uint_eq(lp_embcache_stats(c).corrupt, 0);
	for (int i = 1; i <= 3; i++)
		check_record(c, i, 1);
	ck_assert_uint_eq(lp_embcache_stats(c).hits, 3);
	/* Replace one, save, read again. */
	{
		float v[CD];
		lp_diag_init(&d);
		vec_of(7, v);
		ck_assert_int_eq(lp_embcache_put(c, 102, v, &d), LP_OK);
		ck_assert_int_eq(lp_embcache_save(c, &d), LP_OK);
		lp_embcache_free(c);
		c = open_cache(dir, CD);
		ck_assert_uint_eq(lp_embcache_stats(c).loaded, 3);
		ck_assert_int_eq(lp_embcache_get(c, 102, v), 1);
		ck_assert(v[0] == 70.5f);
	}
	lp_embcache_free(c);
	/* Many records: the table grows. */
	c = open_cache(dir, CD);
	lp_diag_init(&d);
	for (int i = 10; i < 1000; i++) {
		float v[CD];
		vec_of(i, v);
		ck_assert_int_eq(lp_embcache_put(c, (uint64_t)(100 + i), v, &d), LP_OK);
	}
	for (int i = 10; i < 1000; i += 97)
		check_record(c, i, 1);
	lp_embcache_free(c);
	lp_embcache_free(NULL);
	remove_cache_dir();
}
END_TEST

static void patch_file(const char *path, long off, unsigned char x)
{
	FILE *fp = fopen(path, "r+b");
	int c;

	ck_assert_ptr_nonnull(fp);
	fseek(fp, off, SEEK_SET);
	c = fgetc(fp);
	fseek(fp, off, SEEK_SET);
	fputc(c ^ x, fp);
	fclose(fp);
}

START_TEST(test_embcache_corruption)
{
	const long rec = 16 + CD * 4, hdr = 32;
	char dir[300], path[400];
	struct lp_embcache *c;
	struct lp_diag d;
	float v[CD];

	make_cache_dir();
	snprintf(dir, sizeof(dir), "%s/emb", cache_dir);
	fill_cache(dir);
	snprintf(path, sizeof(path), "%s/0000000000001234-000000000000abcd.emb", dir);

	/* A flipped bit in the second record's floats. */
	patch_file(path, hdr + rec + 8 + 5, 0x10);
	c = open_cache(dir, CD);
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 2);
	ck_assert_uint_eq(lp_embcache_stats(c).corrupt, 1);
	check_record(c, 1, 1);
	check_record(c, 2, 0);
	check_record(c, 3, 1);
	/* Recompute, put back, save: clean again. */
	lp_diag_init(&d);
	vec_of(2, v);
	ck_assert_int_eq(lp_embcache_put(c, 102, v, &d), LP_OK);
	ck_assert_int_eq(lp_embcache_save(c, &d), LP_OK);
	lp_embcache_free(c);
	c = open_cache(dir, CD);
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 3);
	ck_assert_uint_eq(lp_embcache_stats(c).corrupt, 0);
	check_record(c, 2, 1);
	lp_embcache_free(c);

	/* A flipped bit in a key is caught too. */
	patch_file(path, hdr + 2, 0x01);
	c = open_cache(dir, CD);
	ck_assert_uint_eq(lp_embcache_stats(c).corrupt, 1);
	check_record(c, 1, 0);
	lp_embcache_free(c);

	/* Truncated inside the last record. */
	fill_cache(dir);
	ck_assert_int_eq(truncate(path, hdr + 3 * rec - 10), 0);
	c = open_cache(dir, CD);
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 2);
	ck_assert_uint_eq(lp_embcache_stats(c).truncated, 1);
	check_record(c, 3, 0);
	lp_embcache_free(c);

	/* Another dim: the header does not match; everything is discarded. */
	fill_cache(dir);
	c = open_cache(dir, CD * 2);
	ck_assert_int_eq(lp_embcache_stats(c).discarded, 1);
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 0);
	lp_embcache_free(c);
	/* A damaged header, and an empty file, likewise. */
	patch_file(path, 20, 0x80);
	c = open_cache(dir, CD);
	ck_assert_int_eq(lp_embcache_stats(c).discarded, 1);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_embcache_save(c, &d), LP_OK); /* rewrites a clean, empty file */
	lp_embcache_free(c);
	c = open_cache(dir, CD);
	ck_assert_int_eq(lp_embcache_stats(c).discarded, 0);
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 0);
	lp_embcache_free(c);
	ck_assert_int_eq(truncate(path, 0), 0);
	c = open_cache(dir, CD);
	ck_assert_int_eq(lp_embcache_stats(c).discarded, 1);
	lp_embcache_free(c);
	remove_cache_dir();
}
END_TEST

START_TEST(test_embcache_dirs_and_keys)
{
	char buf[256];
	struct lp_embcache *c;
	struct lp_diag d;
	float v[CD] = { 1 };

	setenv("LPIPE_CACHE_DIR", "/c/emb", 1);
	ck_assert_str_eq(lp_embcache_default_dir(buf, sizeof(buf)), "/c/emb");
	unsetenv("LPIPE_CACHE_DIR");
	setenv("HOME", "/h", 1);
	ck_assert_str_eq(lp_embcache_default_dir(buf, sizeof(buf)), "/h/.cache/lpipe/embeddings");
	ck_assert_ptr_null(lp_embcache_default_dir(buf, 10));
	ck_assert(lp_embcache_key("abc", 3) == lp_embcache_key("abc", 3));
	ck_assert(lp_embcache_key("abc", 3) != lp_embcache_key("abd", 3));
	ck_assert(lp_embcache_key("abc", 3) != lp_embcache_key("abc", 2));

	/* A directory that cannot be created: save fails with LP_E_IO. */
	c = open_cache("/proc/lpipe-no/such", CD);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_embcache_put(c, 1, v, &d), LP_OK);
	ck_assert_int_eq(lp_embcache_save(c, &d), LP_E_IO);
	lp_embcache_free(c);
}
END_TEST

/* ---- embscore: embedding through the cache ---- */

static const char *const spans[] = {
	"the prompt is printed.",
	"bash can check mail.",
	"history is saved on exit.",
	"mail check mail check interval.",
	"check the spelling.",
};

static void span_scores(struct lp_embedder *e, struct lp_embcache *c, double *scores,
			struct lp_embscore_stats *st)
{
	size_t lens[5];
	struct lp_diag d;

	for (size_t i = 0; i < 5; i++)
		lens[i] = strlen(spans[i]);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_embscore(e, c, spans, lens, 5, "mail check", 10, scores, st, &d),
			 LP_OK);
}

START_TEST(test_embscore_cache_recompute)
{
	struct lp_embedder *e = NULL;
	struct lp_embcache *c;
	struct lp_embscore_stats st;
	struct lp_diag d;
	double ref[5], got[5];
	char path[400];

	make_cache_dir();
	lp_diag_init(&d);
	ck_assert_int_eq(lp_embedder_new_hash(64, &e, &d), LP_OK);
	/* Without a cache: every span embedded; "mail check" ranks 3, 1, 4. */
	span_scores(e, NULL, ref, &st);
	ck_assert_uint_eq(st.embedded, 5);
	ck_assert_uint_eq(st.cached, 0);
	ck_assert_int_eq(st.query_empty, 0);
	ck_assert(ref[3] > ref[1] && ref[1] > ref[4] && ref[4] > ref[0]);
	ck_assert_double_eq_tol(ref[2], 0.0, 0.3);

	/* First run fills the cache, the second reads it back. */
	ck_assert_int_eq(lp_embcache_open(cache_dir, lp_embedder_id(e), 7, 64, &c, &d), LP_OK);
	span_scores(e, c, got, &st);
	ck_assert_uint_eq(st.embedded, 5);
	ck_assert_int_eq(lp_embcache_save(c, &d), LP_OK);
	snprintf(path, sizeof(path), "%s", lp_embcache_path(c));
	lp_embcache_free(c);
	ck_assert_int_eq(lp_embcache_open(cache_dir, lp_embedder_id(e), 7, 64, &c, &d), LP_OK);
	span_scores(e, c, got, &st);
	ck_assert_uint_eq(st.embedded, 0);
	ck_assert_uint_eq(st.cached, 5);
	ck_assert_int_eq(memcmp(got, ref, sizeof(ref)), 0);
	lp_embcache_free(c);

	/* A damaged record is recomputed; the scores do not change. */
	patch_file(path, 32 + (16 + 64 * 4) * 2 + 40, 0x04);
	ck_assert_int_eq(lp_embcache_open(cache_dir, lp_embedder_id(e), 7, 64, &c, &d), LP_OK);
	ck_assert_uint_eq(lp_embcache_stats(c).corrupt, 1);
	span_scores(e, c, got, &st);
	ck_assert_uint_eq(st.embedded, 1);
	ck_assert_uint_eq(st.cached, 4);
	ck_assert_int_eq(memcmp(got, ref, sizeof(ref)), 0);
	ck_assert_int_eq(lp_embcache_save(c, &d), LP_OK);
	lp_embcache_free(c);
	ck_assert_int_eq(lp_embcache_open(cache_dir, lp_embedder_id(e), 7, 64, &c, &d), LP_OK);
	ck_assert_uint_eq(lp_embcache_stats(c).corrupt, 0);
	ck_assert_uint_eq(lp_embcache_stats(c).loaded, 5);
	lp_embcache_free(c);

	/* A query with nothing to embed says so. */
	{
		size_t lens[5] = { 1, 1, 1, 1, 1 };
		ck_assert_int_eq(lp_embscore(e, NULL, spans, lens, 5, "the of", 6, got, &st, &d),
				 LP_OK);
		ck_assert_int_eq(st.query_empty, 1);
	}
	lp_embedder_free(e);
	remove_cache_dir();
}
END_TEST

/* ---- the retrieve stage ---- */

static struct lp_pipeline *load(const char *yaml)
{
	struct lp_pipeline *p = NULL;
	struct lp_diag d;
	enum lp_status st;

	lp_diag_init(&d);
	st = lp_pipeline_load_text("r.yaml", yaml, strlen(yaml), NULL, NULL, 0, &p, &d);
	ck_assert_msg(st == LP_OK, "%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
	return p;
}

static void describe_is(const char *retrieval, const char *opts, const char *want)
{
	char yaml[512];
	struct lp_pipeline *p;
	struct lp_buf b;

	snprintf(yaml, sizeof(yaml), "version: 1\nretrieval: %s\nstages:\n  - retrieve: %s\n",
		 retrieval, opts);
	p = load(yaml);
	lp_buf_init(&b);
	p->stages[0].kind->describe(p->stages[0].opts, &b);
	ck_assert_str_eq(b.data, want);
	lp_buf_release(&b);
	lp_pipeline_free(p);
}

static void load_fails(const char *yaml, const char *frag)
{
	struct lp_pipeline *p = NULL;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_pipeline_load_text("r.yaml", yaml, strlen(yaml), NULL, NULL, 0,
					       &p, &d), LP_E_CONFIG);
	ck_assert_msg(strstr(d.msg, frag), "expected '...%s...', got '%s'", frag, d.msg);
}

START_TEST(test_stage_parse_scorers)
{
	describe_is("{scorer: hash}", "{query: q}",
		    "{query: \"q\", top_k: 8, order: score, cache: off}");
	describe_is("{scorer: hash, hash_dim: 256}", "{query: q, cache: on}",
		    "{query: \"q\", top_k: 8, order: score, cache: on}");
	describe_is("{scorer: dense}", "{query: q, top_k: 3}",
		    "{query: \"q\", top_k: 3, order: score, cache: on}");
	describe_is("{scorer: hybrid, rrf_k: 20}", "{query: q, cache: off}",
		    "{query: \"q\", top_k: 8, order: score, cache: off}");
	describe_is("{scorer: bm25}", "{query: q, must_include: [Mail, \"a: b\"]}",
		    "{query: \"q\", top_k: 8, order: score, must_include: [Mail, \"a: b\"]}");
	describe_is("{}", "{query: q, must_include: history}",
		    "{query: \"q\", top_k: 8, order: score, must_include: [history]}");
	/* The retrieval keys reach the stage. */
	{
		struct lp_pipeline *p = load("version: 1\nretrieval: {scorer: hybrid, fusion: weighted, "
					     "weight: 0.3}\n"
					     "stages:\n  - retrieve: {query: q}\n");
		ck_assert_int_eq(p->retrieval.fusion, LP_FUSION_WEIGHTED);
		ck_assert_double_eq(p->retrieval.weight, 0.3);
		lp_pipeline_free(p);
		p = load("version: 1\nretrieval: {scorer: hybrid, rrf_k: 7}\n"
			 "stages:\n  - retrieve: {query: q}\n");
		ck_assert_int_eq(p->retrieval.rrf_k, 7);
		lp_pipeline_free(p);
		p = load("version: 1\nretrieval: {scorer: hash, hash_dim: 64}\n"
			 "stages:\n  - retrieve: {query: q}\n");
		ck_assert_int_eq(p->retrieval.hash_dim, 64);
		lp_pipeline_free(p);
	}

	load_fails("version: 1\nretrieval: {fusion: max}\nstages:\n  - retrieve: {query: q}\n",
		   "'fusion' must be one of rrf, weighted");
	load_fails("version: 1\nretrieval: {weight: 2}\nstages:\n  - retrieve: {query: q}\n",
		   "weight");
	load_fails("version: 1\nretrieval: {hash_dim: 8}\nstages:\n  - retrieve: {query: q}\n",
		   "hash_dim");
	/* a key its scorer does not read is refused, not ignored */
	load_fails("version: 1\nretrieval: {scorer: hybrid, hash_dim: 64}\n"
		   "stages:\n  - retrieve: {query: q}\n",
		   "key 'hash_dim' is not used by scorer 'hybrid' (only by scorer hash)");
	load_fails("version: 1\nretrieval: {scorer: hybrid, fusion: weighted, weight: 0.3, "
		   "rrf_k: 7}\nstages:\n  - retrieve: {query: q}\n",
		   "key 'rrf_k' is not used by fusion 'weighted'");
	load_fails("version: 1\nstages:\n  - retrieve: {query: q, must_include: ['']}\n",
		   "empty keyphrase");
	load_fails("version: 1\nstages:\n  - retrieve: {query: q, cache: maybe}\n", "cache");
}
END_TEST

/* Five one-line chunks, as in check_retrieve. */
static const char stage_text[] =
	"the prompt is printed.\n"
	"bash can check mail.\n"
	"history is\n  saved on exit.\n"
	"mail check mail check interval.\n"
	"check the spelling.\n";

static const size_t stage_lines[] = { 23, 21, 28, 32, 20 };

static enum lp_status run_stage(const char *retrieval, const char *opts, struct lp_doc *doc,
				struct lp_pipeline **p, struct lp_diag *d)
{
	char yaml[512];
	size_t off = 0;

	snprintf(yaml, sizeof(yaml), "version: 1\nretrieval: %s\nstages:\n  - retrieve: %s\n",
		 retrieval, opts);
	*p = load(yaml);
	lp_doc_init(doc, *p);
	doc->text = stage_text;
	doc->len = strlen(stage_text);
	doc->chunks = lp_arena_alloc(&doc->arena, 5 * sizeof(*doc->chunks));
	for (size_t i = 0; i < 5; i++) {
		doc->chunks[i].off = off;
		doc->chunks[i].len = stage_lines[i];
		off += stage_lines[i];
	}
	ck_assert_uint_eq(off, doc->len);
	doc->n_chunks = 5;
	doc->trace = lp_arena_alloc(&doc->arena, sizeof(*doc->trace));
	memset(doc->trace, 0, sizeof(*doc->trace));
	doc->n_trace = 1;
	lp_diag_init(d);
	return (*p)->stages[0].kind->run(doc, (*p)->stages[0].opts, d);
}

static void selection_is(const struct lp_doc *doc, size_t n, const size_t *want)
{
	ck_assert_uint_eq(doc->n_selection, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(doc->selection[i], want[i]);
		ck_assert_int_eq(doc->chunks[want[i]].selected, 1);
	}
}

START_TEST(test_stage_run_hash)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;

	make_cache_dir();
	setenv("LPIPE_CACHE_DIR", cache_dir, 1);
	ck_assert_int_eq(run_stage("{scorer: hash}", "{query: mail check, top_k: 3}",
				   &doc, &p, &d), LP_OK);
	selection_is(&doc, 3, (const size_t[]){ 3, 1, 4 });
	ck_assert(doc.chunks[3].score > doc.chunks[1].score);
	ck_assert_str_eq(doc.trace[0].note, "kept 3 of 5 chunks");
	ck_assert_uint_eq(count_files(cache_dir), 0); /* cache off by default */
	lp_doc_release(&doc);
	lp_pipeline_free(p);

	/* cache: on writes one file for this document and embedder. */
	ck_assert_int_eq(run_stage("{scorer: hash, hash_dim: 64}",
				   "{query: mail check, top_k: 3, cache: on}", &doc, &p, &d), LP_OK);
	selection_is(&doc, 3, (const size_t[]){ 3, 1, 4 });
	ck_assert_uint_eq(count_files(cache_dir), 1);
	lp_doc_release(&doc);
	lp_pipeline_free(p);

	ck_assert_int_eq(run_stage("{scorer: hash}", "{query: 'the, of'}", &doc, &p, &d),
			 LP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(d.msg, "no words"));
	lp_doc_release(&doc);
	lp_pipeline_free(p);
	unsetenv("LPIPE_CACHE_DIR");
	remove_cache_dir();
}
END_TEST

START_TEST(test_stage_run_dense_without_model)
{
	static const char *const scorers[] = { "{scorer: dense}", "{scorer: hybrid}" };
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;

	setenv("LPIPE_EMBED_MODEL", "/nonexistent/lpipe-minilm", 1);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(run_stage(scorers[i], "{query: mail}", &doc, &p, &d), LP_E_MODEL);
		ck_assert_str_eq(d.msg, "dense scorer needs the MiniLM model: run "
				 "scripts/fetch-embedder (or make models)");
		lp_doc_release(&doc);
		lp_pipeline_free(p);
	}
	unsetenv("LPIPE_EMBED_MODEL");
}
END_TEST

START_TEST(test_stage_must_include)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;

	/* BM25 alone keeps 3 and 1; "HISTORY is saved" (other case, other
	 * white space) forces chunk 2 in, in the place of 1. */
	ck_assert_int_eq(run_stage("{}", "{query: mail check, top_k: 2, "
				   "must_include: ['HISTORY is saved']}", &doc, &p, &d), LP_OK);
	selection_is(&doc, 2, (const size_t[]){ 3, 2 });
	ck_assert_int_eq(doc.chunks[1].selected, 0);
	ck_assert_str_eq(doc.trace[0].note, "kept 2 of 5 chunks, 1 by must_include");
	lp_doc_release(&doc);
	lp_pipeline_free(p);

	/* Already selected, or found nowhere: nothing changes. */
	ck_assert_int_eq(run_stage("{}", "{query: mail check, top_k: 2, "
				   "must_include: [interval, zebra]}", &doc, &p, &d), LP_OK);
	selection_is(&doc, 2, (const size_t[]){ 3, 1 });
	ck_assert_str_eq(doc.trace[0].note, "kept 2 of 5 chunks");
	lp_doc_release(&doc);
	lp_pipeline_free(p);

	/* Two forced into one place: the better-scoring one wins; document order. */
	ck_assert_int_eq(run_stage("{}", "{query: mail check, top_k: 1, order: document, "
				   "must_include: [spelling, prompt]}", &doc, &p, &d), LP_OK);
	selection_is(&doc, 1, (const size_t[]){ 4 });
	lp_doc_release(&doc);
	lp_pipeline_free(p);
}
END_TEST

/* The real MiniLM, when it is installed: dense ranks the mail chunks
 * first, and hybrid agrees with both on the best chunk. */
START_TEST(test_stage_run_dense_model)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;

	make_cache_dir();
	setenv("LPIPE_CACHE_DIR", cache_dir, 1);
	ck_assert_int_eq(run_stage("{scorer: dense}", "{query: how often is mail checked, "
				   "top_k: 2}", &doc, &p, &d), LP_OK);
	ck_assert(doc.selection[0] == 1 || doc.selection[0] == 3);
	ck_assert(doc.selection[1] == 1 || doc.selection[1] == 3);
	ck_assert_uint_eq(count_files(cache_dir), 2); /* embeddings, model id memo */
	lp_doc_release(&doc);
	lp_pipeline_free(p);
	ck_assert_int_eq(run_stage("{scorer: hybrid}", "{query: mail check, top_k: 1}",
				   &doc, &p, &d), LP_OK);
	selection_is(&doc, 1, (const size_t[]){ 3 });
	lp_doc_release(&doc);
	lp_pipeline_free(p);
	unsetenv("LPIPE_CACHE_DIR");
	remove_cache_dir();
}
END_TEST

static int have_dense_model(void)
{
	char dir[4096], path[4200];

	if (!lp_embedder_dense_dir(dir, sizeof(dir)))
		return 0;
	snprintf(path, sizeof(path), "%s/model.safetensors", dir);
	return access(path, R_OK) == 0;
}

int main(void)
{
	Suite *s = suite_create("hybrid");
	TCase *tc = tcase_create("hash");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_hash_bytes);
	tcase_add_test(tc, test_hashembed_deterministic_normalised);
	tcase_add_test(tc, test_hashembed_features);
	tcase_add_test(tc, test_hashembed_similarity);
	tcase_add_test(tc, test_embedder_hash);
	tcase_add_test(tc, test_embedder_dense_missing);
	suite_add_tcase(s, tc);

	tc = tcase_create("vecindex");
	tcase_add_test(tc, test_vecindex_topk_vs_naive);
	tcase_add_test(tc, test_vecindex_select_ties_nan);
	suite_add_tcase(s, tc);

	tc = tcase_create("fusion");
	tcase_add_test(tc, test_fusion_ranks_rrf);
	tcase_add_test(tc, test_fusion_weighted);
	tcase_add_test(tc, test_fusion_force);
	tcase_add_test(tc, test_fusion_coverage_scale);
	tcase_add_test(tc, test_wordpiece_coverage);
	tcase_add_test(tc, test_fusion_unknown_query_is_bm25);
	suite_add_tcase(s, tc);

	tc = tcase_create("embcache");
	tcase_add_test(tc, test_embcache_round_trip);
	tcase_add_test(tc, test_embcache_device_record);
	tcase_add_test(tc, test_embcache_corruption);
	tcase_add_test(tc, test_embcache_dirs_and_keys);
	tcase_add_test(tc, test_embscore_cache_recompute);
	suite_add_tcase(s, tc);

	tc = tcase_create("stage");
	tcase_add_test(tc, test_stage_parse_scorers);
	tcase_add_test(tc, test_stage_run_hash);
	tcase_add_test(tc, test_stage_run_dense_without_model);
	tcase_add_test(tc, test_stage_must_include);
	/* Only with the model on disk (scripts/fetch-embedder). */
	if (have_dense_model())
		tcase_add_test(tc, test_stage_run_dense_model);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
