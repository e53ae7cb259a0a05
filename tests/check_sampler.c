/* check_sampler.c - token sampling and stop conditions. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "model/sampler.h"
#include "model/vocab.h"

static struct lp_sampler *make(float temp, int32_t top_k, float top_p, float min_p,
			       float pen, uint64_t seed, int32_t n_vocab)
{
	struct lp_sampler_params p = lp_sampler_default_params();
	struct lp_sampler *s;
	struct lp_diag d;

	p.temperature = temp;
	p.top_k = top_k;
	p.top_p = top_p;
	p.min_p = min_p;
	p.repeat_penalty = pen;
	p.seed = seed;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_sampler_new(&p, n_vocab, &s, &d), LP_OK);
	return s;
}

/* Pseudo-random logits in [-5, 5) from a fixed LCG. */
static void fill_logits(float *l, int n, unsigned seed)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		l[i] = (float)((seed >> 8) % 10000) / 1000.0f - 5.0f;
	}
}

START_TEST(test_greedy_and_ties)
{
	float logits[5] = { 0.1f, 3.0f, -2.0f, 3.0f, 1.0f };
	struct lp_sampler *s = make(0.0f, 0, 1.0f, 0.0f, 1.0f, 1, 5);

	ck_assert_int_eq(lp_sampler_sample(s, logits), 1); /* lowest id of the tie */
	logits[3] = 3.5f;
	ck_assert_int_eq(lp_sampler_sample(s, logits), 3);
	ck_assert_float_eq(logits[3], 3.5f); /* logits untouched */
	lp_sampler_free(s);
	lp_sampler_free(NULL);
}
END_TEST

START_TEST(test_top_k_one_is_greedy)
{
	float logits[1000];
	int best = 0;
	struct lp_sampler *s = make(1.5f, 1, 1.0f, 0.0f, 1.0f, 7, 1000);

	fill_logits(logits, 1000, 3);
	for (int i = 1; i < 1000; i++)
		if (logits[i] > logits[best])
			best = i;
	for (int r = 0; r < 50; r++)
		ck_assert_int_eq(lp_sampler_sample(s, logits), best);
	lp_sampler_free(s);
}
END_TEST

START_TEST(test_top_k_keeps_the_best_k)
{
	float logits[500];
	struct lp_sampler *s = make(5.0f, 10, 1.0f, 0.0f, 1.0f, 11, 500);
	float kth;
	float sorted[500];

	fill_logits(logits, 500, 9);
	memcpy(sorted, logits, sizeof(sorted));
	/* the 10th largest value */
	for (int i = 0; i < 10; i++) {
		int m = i;

		for (int j = i + 1; j < 500; j++)
			if (sorted[j] > sorted[m])
				m = j;
		kth = sorted[m];
		sorted[m] = sorted[i];
		sorted[i] = kth;
	}
	for (int r = 0; r < 2000; r++)
		ck_assert_float_ge(logits[lp_sampler_sample(s, logits)], kth);
	lp_sampler_free(s);
}
END_TEST

START_TEST(test_seed_reproducible)
{
	float logits[300];
	int32_t a[100], b[100];
	int differ = 0;
	struct lp_sampler *s1 = make(1.0f, 0, 1.0f, 0.0f, 1.0f, 1234, 300);
	struct lp_sampler *s2 = make(1.0f, 0, 1.0f, 0.0f, 1.0f, 1234, 300);
	struct lp_sampler *s3 = make(1.0f, 0, 1.0f, 0.0f, 1.0f, 99, 300);

	fill_logits(logits, 300, 5);
	for (int i = 0; i < 300; i++)
		logits[i] *= 0.2f; /* flat: many candidates */
	for (int i = 0; i < 100; i++) {
		a[i] = lp_sampler_sample(s1, logits);
		b[i] = lp_sampler_sample(s2, logits);
		differ += lp_sampler_sample(s3, logits) != a[i];
	}
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert_int_gt(differ, 50);
	lp_sampler_reset(s1);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(lp_sampler_sample(s1, logits), a[i]);
	lp_sampler_free(s1);
	lp_sampler_free(s2);
	lp_sampler_free(s3);
}
END_TEST

/* Frequencies over n draws. */
static void draw(struct lp_sampler *s, const float *logits, int n, int *count)
{
	for (int i = 0; i < n; i++)
		count[lp_sampler_sample(s, logits)]++;
}

START_TEST(test_distribution_matches_softmax)
{
	float logits[3] = { logf(0.5f), logf(0.3f), logf(0.2f) };
	int count[3] = { 0 };
	struct lp_sampler *s = make(1.0f, 0, 1.0f, 0.0f, 1.0f, 5, 3);

	draw(s, logits, 20000, count);
	ck_assert_double_eq_tol(count[0] / 20000.0, 0.5, 0.02);
	ck_assert_double_eq_tol(count[1] / 20000.0, 0.3, 0.02);
	ck_assert_double_eq_tol(count[2] / 20000.0, 0.2, 0.02);
	lp_sampler_free(s);
	/* Temperature 0.5 squares the odds: 25:9:4. */
	memset(count, 0, sizeof(count));
	s = make(0.5f, 0, 1.0f, 0.0f, 1.0f, 5, 3);
	draw(s, logits, 20000, count);
	ck_assert_double_eq_tol(count[0] / 20000.0, 25.0 / 38, 0.02);
	ck_assert_double_eq_tol(count[2] / 20000.0, 4.0 / 38, 0.02);
	lp_sampler_free(s);
}
END_TEST

START_TEST(test_top_p_and_min_p_cut_the_tail)
{
	float logits[4] = { logf(0.5f), logf(0.3f), logf(0.15f), logf(0.05f) };
	int count[4] = { 0 };
	struct lp_sampler *s = make(1.0f, 0, 0.75f, 0.0f, 1.0f, 3, 4);

	/* 0.5 + 0.3 reaches 0.75: ids 0 and 1 only, renormalised 5:3. */
	draw(s, logits, 10000, count);
	ck_assert_int_eq(count[2] + count[3], 0);
	ck_assert_double_eq_tol(count[0] / 10000.0, 0.625, 0.02);
	lp_sampler_free(s);
	memset(count, 0, sizeof(count));
	/* min_p 0.25: keep p >= 0.125, i.e. ids 0, 1, 2. */
	s = make(1.0f, 0, 1.0f, 0.25f, 1.0f, 3, 4);
	draw(s, logits, 10000, count);
	ck_assert_int_eq(count[3], 0);
	ck_assert_int_gt(count[2], 0);
	lp_sampler_free(s);
}
END_TEST

START_TEST(test_repetition_penalty)
{
	float logits[3] = { 2.0f, 1.9f, -1.0f };
	float neg[3] = { -1.0f, -1.1f, -5.0f };
	struct lp_sampler *s = make(0.0f, 0, 1.0f, 0.0f, 1.2f, 1, 3);

	ck_assert_int_eq(lp_sampler_sample(s, logits), 0);
	lp_sampler_accept(s, 0);
	lp_sampler_accept(s, 0); /* counted once: 2.0 / 1.2 < 1.9 */
	ck_assert_int_eq(lp_sampler_sample(s, logits), 1);
	/* A negative logit is multiplied: -1.0 * 1.2 < -1.1. */
	ck_assert_int_eq(lp_sampler_sample(s, neg), 1);
	lp_sampler_reset(s);
	ck_assert_int_eq(lp_sampler_sample(s, logits), 0);
	lp_sampler_free(s);
}
END_TEST

START_TEST(test_no_allocation_per_token)
{
	enum { N = 49152 };
	float *logits = malloc(N * sizeof(float));
	struct lp_sampler *s = make(0.8f, 0, 0.95f, 0.05f, 1.1f, 2, N);
	size_t before;

	fill_logits(logits, N, 17);
	ck_assert_uint_ge(lp_mem_current(LP_MEM_LOGITS), N * sizeof(float));
	lp_mem_reset_peaks();
	before = lp_mem_current_total();
	for (int i = 0; i < 20; i++)
		lp_sampler_accept(s, lp_sampler_sample(s, logits));
	ck_assert_uint_eq(lp_mem_peak_total(), before);
	lp_sampler_free(s);
	free(logits);
}
END_TEST

START_TEST(test_bad_params)
{
	struct lp_sampler_params p = lp_sampler_default_params();
	struct lp_sampler *s;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_sampler_new(&p, 0, &s, &d), LP_E_CONFIG);
	p.repeat_last_n = -1;
	ck_assert_int_eq(lp_sampler_new(&p, 10, &s, &d), LP_E_CONFIG);
	ck_assert_ptr_null(s);
}
END_TEST

/* ---- stopping -------------------------------------------------------------------- */

START_TEST(test_stop_string_across_tokens)
{
	struct lp_stop st;
	struct lp_buf out;
	struct lp_diag d;
	int stopped;

	lp_stop_init(&st);
	lp_buf_init(&out);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_stop_add_string(&st, "STOP", &d), LP_OK);
	ck_assert_int_eq(lp_stop_add_string(&st, "", &d), LP_E_CONFIG);
	ck_assert_int_eq(lp_stop_feed(&st, "Hel", 3, &out, &stopped), LP_OK);
	ck_assert_str_eq(out.data, "Hel");
	ck_assert_int_eq(lp_stop_feed(&st, "lo ST", 5, &out, &stopped), LP_OK);
	ck_assert_str_eq(out.data, "Hello "); /* "ST" held back */
	ck_assert_int_eq(stopped, 0);
	ck_assert_int_eq(lp_stop_feed(&st, "OP more", 7, &out, &stopped), LP_OK);
	ck_assert_int_eq(stopped, 1);
	ck_assert_str_eq(out.data, "Hello ");
	lp_buf_reset(&out);
	/* A false start is released at the end. */
	ck_assert_int_eq(lp_stop_feed(&st, "abc S", 5, &out, &stopped), LP_OK);
	ck_assert_str_eq(out.data, "abc ");
	ck_assert_int_eq(lp_stop_feed(&st, "T", 1, &out, &stopped), LP_OK);
	ck_assert_str_eq(out.data, "abc ");
	ck_assert_int_eq(lp_stop_finish(&st, &out), LP_OK);
	ck_assert_str_eq(out.data, "abc ST");
	lp_buf_release(&out);
	lp_stop_release(&st);
}
END_TEST

START_TEST(test_stop_ids_from_vocab)
{
	const char *toks[] = { "<|endoftext|>", "<|im_start|>", "<|im_end|>", "a", "<|end|>" };
	int32_t types[] = { 3, 3, 3, 1, 1 };
	struct lp_vocab_spec spec;
	struct lp_vocab *v;
	struct lp_stop st;
	struct lp_diag d;

	lp_vocab_spec_init(&spec, LP_VOCAB_SPM);
	spec.n_tokens = 5;
	spec.tokens = toks;
	spec.types = types;
	spec.eos = 0;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_vocab_new(&spec, &v, &d), LP_OK);
	lp_stop_init(&st);
	lp_stop_add_vocab(&st, v);
	ck_assert(lp_stop_is_eog(&st, 0));
	ck_assert(lp_stop_is_eog(&st, 2));
	ck_assert(!lp_stop_is_eog(&st, 1));
	ck_assert(!lp_stop_is_eog(&st, 3));
	ck_assert(!lp_stop_is_eog(&st, 4)); /* plain text, not a control token */
	ck_assert_int_eq(lp_stop_add_id(&st, 3, &d), LP_OK);
	ck_assert(lp_stop_is_eog(&st, 3));
	lp_stop_release(&st);
	lp_vocab_free(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sampler");
	TCase *tc = tcase_create("sampler");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_greedy_and_ties);
	tcase_add_test(tc, test_top_k_one_is_greedy);
	tcase_add_test(tc, test_top_k_keeps_the_best_k);
	tcase_add_test(tc, test_seed_reproducible);
	tcase_add_test(tc, test_distribution_matches_softmax);
	tcase_add_test(tc, test_top_p_and_min_p_cut_the_tail);
	tcase_add_test(tc, test_repetition_penalty);
	tcase_add_test(tc, test_no_allocation_per_token);
	tcase_add_test(tc, test_bad_params);
	tcase_add_test(tc, test_stop_string_across_tokens);
	tcase_add_test(tc, test_stop_ids_from_vocab);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
