/* check_smollm2.c - the real SmolLM2-135M-Instruct Q4_1 model against
 * fixtures from an external implementation (tests/data/smollm2-forward/): top-5
 * next tokens of a few prompts and a greedy continuation of a chat prompt.
 * Skipped (exit 77) when the model file is absent. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/forward.h"
#include "model/gguf.h"
#include "model/model.h"

#define MAX_IDS 256

struct fixture {
	int32_t prompt[8][MAX_IDS];
	size_t n_prompt[8];
	int32_t top5[8][5];
	double logit5[8][5];
	size_t n_prompts;
	int32_t chat[MAX_IDS], greedy[64];
	size_t n_chat, n_greedy;
};

static char model_path[4096];
static struct fixture fx;

static size_t read_ids(char *s, int32_t *out, size_t cap)
{
	size_t n = 0;
	char *end;

	for (long v = strtol(s, &end, 10); end != s && n < cap; v = strtol(s, &end, 10)) {
		out[n++] = (int32_t)v;
		s = end;
	}
	return n;
}

static int load_fixture(const char *path)
{
	FILE *f = fopen(path, "r");
	static char line[65536];
	size_t p = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');
		if (line[0] == '#' || !sp)
			continue;
		*sp++ = 0;
		if (!strcmp(line, "prompt") && p < 8)
			fx.n_prompt[p] = read_ids(sp, fx.prompt[p], MAX_IDS);
		else if (!strcmp(line, "top5") && p < 8)
			read_ids(sp, fx.top5[p], 5);
		else if (!strcmp(line, "logits") && p < 8)
			for (int i = 0; i < 5; i++)
				fx.logit5[p][i] = strtod(sp, &sp);
		else if (!strcmp(line, "chat"))
			fx.n_chat = read_ids(sp, fx.chat, MAX_IDS);
		else if (!strcmp(line, "greedy"))
			fx.n_greedy = read_ids(sp, fx.greedy, 64);
		if (!strcmp(line, "logits"))
			p++;
	}
	fx.n_prompts = p;
	fclose(f);
	return p > 0 && fx.n_chat > 0 && fx.n_greedy > 0 ? 0 : -1;
}

struct real {
	struct lp_gguf *g;
	struct lp_model *m;
	struct lp_forward *c;
};

static void real_open(struct real *r, enum lp_qtype kv)
{
	struct lp_diag d;
	struct lp_forward_params p = lp_forward_default_params();

	lp_diag_init(&d);
	p.n_ctx = 256;
	p.kv_type = kv;
	if (lp_gguf_open(model_path, &r->g, &d) || lp_model_load(r->g, &r->m, &d) ||
	    lp_forward_new(r->m, &p, &r->c, &d))
		ck_abort_msg("%s: %s", model_path, d.msg);
}

static void real_close(struct real *r)
{
	lp_forward_free(r->c);
	lp_model_free(r->m);
	lp_gguf_close(r->g);
}

static int32_t argmax(const float *x, size_t n)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return (int32_t)best;
}

/*
 * The best next token agrees, and the fixture's top-5 logits agree within
 * 0.75: lpipe quantizes activations to 8 bits for short prompts and for the
 * output head, as llama.cpp does; against a float reference that moves
 * logits by up to 0.9 (std 0.14) over the whole vocabulary.
 */
START_TEST(test_top5)
{
	struct real r;
	struct lp_diag d;
	float *lg;
	double worst = 0;

	real_open(&r, LP_Q_F16);
	lg = malloc(r.m->hp.n_vocab * sizeof(float));
	for (size_t p = 0; p < fx.n_prompts; p++) {
		lp_forward_reset(r.c);
		ck_assert_int_eq(lp_forward_eval(r.c, fx.prompt[p], fx.n_prompt[p], 0, lg, &d),
				 LP_OK);
		ck_assert_int_eq(argmax(lg, r.m->hp.n_vocab), fx.top5[p][0]);
		for (int i = 0; i < 5; i++)
			worst = fmax(worst, fabs(lg[fx.top5[p][i]] - fx.logit5[p][i]));
	}
	printf("smollm2 top-5 logits: worst difference %.4f (tol 0.75)\n", worst);
	ck_assert_double_lt(worst, 0.75);
	free(lg);
	real_close(&r);
}
END_TEST

/*
 * The fixture's greedy continuation of the chat prompt, fed back token by
 * token (teacher forcing): at every step lpipe's best token is the
 * fixture's, or the fixture's token scores within 0.75 of lpipe's best (a
 * near tie that 8-bit activations may break the other way). At least 28 of
 * the 32 steps must agree exactly. The tolerance is the top-5 test's: the
 * order of the float sums alone moves these logits that much (lpipe's own
 * kernel sets, scalar, AVX2, AVX-512 with and without row groups, differ
 * by up to 1.2 on some logit of these steps; the one step where the
 * AVX-512 set with row groups parts from the fixture is a 0.53 tie).
 */
START_TEST(test_greedy_chat)
{
	struct real r;
	struct lp_diag d;
	float *lg;
	size_t same = 0;
	double worst = 0;

	real_open(&r, LP_Q_F16);
	lg = malloc(r.m->hp.n_vocab * sizeof(float));
	ck_assert_int_eq(lp_forward_eval(r.c, fx.chat, fx.n_chat, 0, lg, &d), LP_OK);
	for (size_t i = 0; i < fx.n_greedy; i++) {
		int32_t best = argmax(lg, r.m->hp.n_vocab);
		same += best == fx.greedy[i];
		worst = fmax(worst, lg[best] - lg[fx.greedy[i]]);
		ck_assert_int_eq(lp_forward_eval(r.c, &fx.greedy[i], 1,
						 (uint32_t)(fx.n_chat + i), lg, &d), LP_OK);
	}
	printf("smollm2 greedy: %zu of %zu steps agree, worst margin %.3f (tol 0.75)\n", same,
	       fx.n_greedy, worst);
	ck_assert_double_lt(worst, 0.75);
	ck_assert_uint_ge(same, fx.n_greedy - 4);
	free(lg);
	real_close(&r);
}
END_TEST

int main(void)
{
	const char *dir = getenv("LPIPE_MODEL_DIR"), *home = getenv("HOME");
	const char *src = getenv("top_srcdir");
	char fixture[4096];
	SRunner *sr;
	Suite *s;
	TCase *tc;
	int failed;

	if (getenv("LPIPE_SMOLLM2_GGUF"))
		snprintf(model_path, sizeof(model_path), "%s", getenv("LPIPE_SMOLLM2_GGUF"));
	else if (dir && *dir)
		snprintf(model_path, sizeof(model_path), "%s/SmolLM2-135M-Instruct.Q4_1.gguf", dir);
	else
		snprintf(model_path, sizeof(model_path),
			 "%s/.cache/lpipe/models/SmolLM2-135M-Instruct.Q4_1.gguf", home ? home : ".");
	if (access(model_path, R_OK)) {
		printf("skip: no model at %s\n", model_path);
		return 77;
	}
	snprintf(fixture, sizeof(fixture), "%s/tests/data/smollm2-forward/logits.txt", src ? src : ".");
	if (load_fixture(fixture)) {
		fprintf(stderr, "cannot read the fixture %s\n", fixture);
		return EXIT_FAILURE;
	}
	s = suite_create("smollm2");
	tc = tcase_create("fixtures");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_top5);
	tcase_add_test(tc, test_greedy_chat);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
