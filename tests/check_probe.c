/* check_probe.c - the planner's predictions against what the probe
 * measures, the probe's CSV and SVG, its growth verdict and budget
 * crossing, and the planner's choices, on tiny generated models. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "core/mem.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/kvcache.h"
#include "model/model.h"
#include "model/plan.h"
#include "report/probe.h"
#include "tools/tiny_model.h"

/* ---- fixture: a tiny model written to a file and mapped -------------- */

struct fixture {
	char path[64];
	struct lp_gguf *g;
	struct lp_model *m;
	size_t other;
};

/* With `stream`, the weights are streamed per layer (model.h). */
static void fx_open_mode(struct fixture *f, const struct tiny_spec *s, int stream)
{
	struct lp_diag d;
	int fd;

	strcpy(f->path, "/tmp/lpipe-probe-XXXXXX");
	fd = mkstemp(f->path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(tiny_model_write(f->path, s, 3), 0);
	lp_diag_init(&d);
	ck_assert_msg((stream ? lp_gguf_open_streamed(f->path, &f->g, &d)
			      : lp_gguf_open(f->path, &f->g, &d)) == LP_OK, "%s", d.msg);
	ck_assert_msg(lp_model_load(f->g, &f->m, &d) == LP_OK, "%s", d.msg);
	f->other = lp_mem_current(LP_MEM_OTHER);
}

static void fx_open(struct fixture *f, const struct tiny_spec *s)
{
	fx_open_mode(f, s, 0);
}

static void fx_close(struct fixture *f)
{
	lp_model_free(f->m);
	lp_gguf_close(f->g);
	unlink(f->path);
}

static struct lp_probe *probe(const struct fixture *f, uint32_t min, uint32_t max,
			      enum lp_qtype kv)
{
	struct lp_probe_params p = lp_probe_default_params();
	struct lp_probe *pr = NULL;
	struct lp_diag d;

	p.min_ctx = min;
	p.max_ctx = max;
	p.n_decode = 4;
	p.kv_type = kv;
	p.n_threads = 2;
	p.other = f->other;
	lp_diag_init(&d);
	ck_assert_msg(lp_probe_run(f->m, &p, &pr, &d) == LP_OK, "%s", d.msg);
	return pr;
}

/* ---- prediction against measurement ---------------------------------- */

/* Bytes per element of a KV row, written out independently of the code. */
static double kv_elem_bytes(enum lp_qtype t)
{
	return t == LP_Q_F32 ? 4 : t == LP_Q_F16 ? 2 : 34.0 / 32.0;
}

static void check_agreement_mode(enum lp_qtype kv, enum lp_qtype wtype, int stream)
{
	struct tiny_spec s = stream ? tiny_layered_spec() : tiny_default_spec();
	struct fixture f;
	struct lp_probe *pr;

	s.type = wtype;
	fx_open_mode(&f, &s, stream);
	ck_assert_int_eq(lp_model_streamed(f.m), stream);
	ck_assert_uint_eq(lp_plan_weight_bytes(f.m), lp_mem_current(LP_MEM_WEIGHTS));
	pr = probe(&f, 64, 512, kv);
	ck_assert_uint_eq(pr->n_rows, 4 * 3);
	for (size_t i = 0; i < pr->n_rows; i++) {
		const struct lp_probe_row *r = &pr->rows[i];
		double err = fabs((double)r->predicted - (double)r->tracked_peak);
		double kv_bytes = 2.0 * s.layers * s.kv_heads * (s.embd / s.heads) *
				  kv_elem_bytes(kv) * r->n_ctx;
		ck_assert_msg(r->ok, "row %zu failed", i);
		ck_assert_msg(err <= 0.10 * (double)r->tracked_peak,
			      "n_ctx %u %s: predicted %zu, measured %zu", r->n_ctx,
			      lp_probe_phase_name(r->phase), r->predicted, r->tracked_peak);
		ck_assert_uint_eq(r->peak[LP_MEM_KV], (size_t)kv_bytes);
		ck_assert_uint_gt(r->peak[LP_MEM_SCRATCH], 0);
		ck_assert_uint_eq(r->peak[LP_MEM_LOGITS], s.vocab * sizeof(float));
	}
	/* Prefill evaluated the prompt, decode the rest of the context. */
	ck_assert_uint_eq(pr->rows[1].tokens, 60);
	ck_assert_uint_eq(pr->rows[2].tokens, 4);
	ck_assert_uint_eq(pr->rows[pr->n_rows - 3].n_ctx, 512);
	lp_probe_free(pr);
	fx_close(&f);
}

static void check_agreement(enum lp_qtype kv, enum lp_qtype wtype)
{
	check_agreement_mode(kv, wtype, 0);
}

/* On a device (the CPU backend standing in for one) the rows measure the
 * device's tags, and the planner's device total predicts them. */
START_TEST(test_agree_device)
{
	struct tiny_spec s = tiny_default_spec();
	struct lp_backend_params bp = lp_backend_default_params();
	struct lp_probe_params p = lp_probe_default_params();
	struct fixture f;
	struct lp_probe *pr = NULL;
	struct lp_diag d;

	s.type = LP_Q_Q8_0;
	fx_open(&f, &s);
	bp.n_threads = 2;
	bp.as_device = 1;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_backend_open("cpu", &bp, &p.device, &d), LP_OK);
	p.min_ctx = 64;
	p.max_ctx = 512;
	p.n_decode = 4;
	p.n_threads = 2;
	p.other = f.other;
	ck_assert_msg(lp_probe_run(f.m, &p, &pr, &d) == LP_OK, "%s", d.msg);
	ck_assert_uint_eq(pr->n_rows, 4 * 3);
	for (size_t i = 0; i < pr->n_rows; i++) {
		const struct lp_probe_row *r = &pr->rows[i];
		double kv_bytes = 2.0 * s.layers * s.kv_heads * (s.embd / s.heads) *
				  kv_elem_bytes(LP_Q_F16) * r->n_ctx;
		ck_assert_msg(r->ok, "row %zu failed", i);
		ck_assert_msg(r->predicted == r->tracked_peak,
			      "n_ctx %u %s: predicted %zu, measured %zu", r->n_ctx,
			      lp_probe_phase_name(r->phase), r->predicted, r->tracked_peak);
		ck_assert_uint_eq(r->peak[LP_MEM_GPU_KV], (size_t)kv_bytes);
		ck_assert_uint_eq(r->peak[LP_MEM_KV], 0);
		ck_assert_uint_gt(r->peak[LP_MEM_GPU_WEIGHTS], 0);
	}
	lp_probe_free(pr);
	lp_backend_free(p.device);
	fx_close(&f);
}
END_TEST

START_TEST(test_agree_stream)
{
	check_agreement_mode(LP_Q_F16, LP_Q_F32, 1);
}
END_TEST

START_TEST(test_agree_f32) { check_agreement(LP_Q_F32, LP_Q_F32); }
END_TEST
START_TEST(test_agree_f16) { check_agreement(LP_Q_F16, LP_Q_Q8_0); }
END_TEST
START_TEST(test_agree_q8_0) { check_agreement(LP_Q_Q8_0, LP_Q_Q4_1); }
END_TEST

/* ---- CSV ------------------------------------------------------------- */

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *s;
	long n;

	ck_assert_ptr_nonnull(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	s = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, fp), (size_t)n);
	s[n] = '\0';
	fclose(fp);
	return s;
}

START_TEST(test_csv)
{
	static const char *const phases[] = { "load", "prefill", "decode" };
	struct tiny_spec s = tiny_default_spec();
	struct fixture f;
	struct lp_probe *pr;
	struct lp_diag d;
	char path[] = "/tmp/lpipe-probe-csv-XXXXXX", *text, *line, *save;
	int fd = mkstemp(path), n = 0;

	ck_assert_int_ge(fd, 0);
	close(fd);
	fx_open(&f, &s);
	pr = probe(&f, 64, 256, LP_Q_F16);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_probe_write_csv(pr, path, &d), LP_OK);
	text = slurp(path);
	line = strtok_r(text, "\n", &save);
	/* The columns documented in lpipe(1). */
	ck_assert_str_eq(line, "n_ctx,phase,ok,seconds,tokens_per_s,weights_bytes,kv_bytes,"
			       "scratch_bytes,logits_bytes,tracked_peak_bytes,rss_bytes,"
			       "predicted_bytes");
	while ((line = strtok_r(NULL, "\n", &save))) {
		unsigned n_ctx;
		char phase[16];
		int ok, commas = 0;
		for (const char *p = line; *p; p++)
			commas += *p == ',';
		ck_assert_int_eq(commas, 11);
		ck_assert_int_eq(sscanf(line, "%u,%15[a-z],%d", &n_ctx, phase, &ok), 3);
		ck_assert_uint_eq(n_ctx, 64u << (n / 3));
		ck_assert_str_eq(phase, phases[n % 3]);
		ck_assert_int_eq(ok, 1);
		n++;
	}
	ck_assert_int_eq(n, 9);
	free(text);
	unlink(path);
	lp_probe_free(pr);
	fx_close(&f);
}
END_TEST

/* ---- SVG ------------------------------------------------------------- */

/* Check that every element is closed in order; count <polyline>s.
 * Returns 1 when well-formed. */
static int svg_balanced(const char *s, int *n_polyline)
{
	char stack[64][32];
	int depth = 0, seen_root = 0;

	*n_polyline = 0;
	while ((s = strchr(s, '<'))) {
		const char *end = strchr(s, '>');
		char name[32];
		size_t k = 0;
		int closing = s[1] == '/';

		if (!end)
			return 0;
		if (s[1] == '?' || s[1] == '!') {
			s = end + 1;
			continue;
		}
		for (const char *p = s + 1 + closing; *p && !strchr(" \t\n/>", *p) && k < 31; p++)
			name[k++] = *p;
		name[k] = '\0';
		if (!k)
			return 0;
		if (!strcmp(name, "polyline"))
			(*n_polyline)++;
		if (closing) {
			if (!depth || strcmp(stack[--depth], name))
				return 0;
		} else if (end[-1] != '/') {
			if (depth == 64)
				return 0;
			if (!depth && seen_root++)
				return 0;
			strcpy(stack[depth++], name);
		}
		s = end + 1;
	}
	return depth == 0 && seen_root == 1;
}

START_TEST(test_svg)
{
	struct tiny_spec s = tiny_default_spec();
	struct fixture f;
	struct lp_probe *pr;
	struct lp_diag d;
	char path[] = "/tmp/lpipe-probe-svg-XXXXXX", *text;
	int fd = mkstemp(path), n_poly;

	ck_assert_int_ge(fd, 0);
	close(fd);
	fx_open(&f, &s);
	pr = probe(&f, 64, 256, LP_Q_F16);
	pr->budget = 8 << 20; /* draw a budget line too */
	lp_diag_init(&d);
	ck_assert_int_eq(lp_probe_write_svg(pr, "tiny <model> & co", path, &d), LP_OK);
	text = slurp(path);
	ck_assert_msg(svg_balanced(text, &n_poly), "unbalanced SVG");
	/* Tracked and resident per phase, and the prediction. */
	ck_assert_int_eq(n_poly, 2 * LP_PROBE_NPHASES + 1);
	ck_assert_ptr_nonnull(strstr(text, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	ck_assert_ptr_nonnull(strstr(text, "tiny &lt;model&gt; &amp; co"));
	ck_assert_ptr_nonnull(strstr(text, "prefill: tracked peak"));
	ck_assert_ptr_nonnull(strstr(text, "decode: resident (RSS)"));
	ck_assert_ptr_nonnull(strstr(text, "predicted (plan)"));
	ck_assert_ptr_nonnull(strstr(text, ">budget<"));
	ck_assert_ptr_nonnull(strstr(text, ">256<")); /* an x tick */
	ck_assert_ptr_null(strstr(text, "nan"));
	/* A broken document is caught by the checker itself. */
	ck_assert(!svg_balanced("<svg><g></svg></g>", &n_poly));
	free(text);
	unlink(path);
	lp_probe_free(pr);
	fx_close(&f);
}
END_TEST

/* ---- growth verdict -------------------------------------------------- */

START_TEST(test_linear_tiny)
{
	struct tiny_spec s = tiny_default_spec();
	struct fixture f;
	struct lp_probe *pr;
	struct lp_probe_fit fit;
	double per_token;

	fx_open(&f, &s);
	pr = probe(&f, 64, 1024, LP_Q_F16);
	lp_probe_analyze(pr, &fit);
	ck_assert_int_eq(fit.n_points, 5);
	ck_assert_int_eq(fit.linear, 1);
	/* At least the KV cache's bytes per token. */
	per_token = 2.0 * s.layers * s.kv_heads * (s.embd / s.heads) * 2;
	ck_assert_msg(fit.b >= per_token, "slope %g below the KV cache's %g", fit.b, per_token);
	ck_assert_uint_eq(fit.cross_ctx, 0); /* no budget */
	lp_probe_free(pr);
	fx_close(&f);
}
END_TEST

/* Rows with a made-up memory curve, all phases alike. */
static struct lp_probe *fake(double a, double b, double c, int n_len)
{
	struct lp_probe *pr = calloc(1, sizeof(*pr));

	pr->rows = calloc((size_t)n_len * 3, sizeof(*pr->rows));
	for (int i = 0; i < n_len; i++) {
		for (int ph = 0; ph < 3; ph++) {
			struct lp_probe_row *r = &pr->rows[pr->n_rows++];
			double n = 128 << i;
			r->n_ctx = 128u << i;
			r->phase = (enum lp_probe_phase)ph;
			r->ok = 1;
			r->tracked_peak = (size_t)(a + b * n + c * n * n);
		}
	}
	return pr;
}

START_TEST(test_superlinear)
{
	struct lp_probe *pr = fake(1e8, 2e4, 40, 5);
	struct lp_probe_fit fit;

	lp_probe_analyze(pr, &fit);
	ck_assert_int_eq(fit.linear, 0);
	/* Slopes b + c(n1 + n2) over 512..1024 and 1024..2048. */
	ck_assert_msg(fabs(fit.step_ratio - (2e4 + 40 * 3072.0) / (2e4 + 40 * 1536.0)) < 0.01,
		      "step ratio %g", fit.step_ratio);
	ck_assert_msg(fabs(fit.c - 40) < 0.5, "c %g", fit.c);
	/* Extrapolated crossing solves the quadratic. */
	pr->budget = (size_t)(1e8 + 2e4 * 4096.0 + 40 * 4096.0 * 4096.0);
	lp_probe_analyze(pr, &fit);
	ck_assert_int_eq(fit.cross_measured, 0);
	ck_assert_msg(fit.cross_ctx >= 4090 && fit.cross_ctx <= 4100, "cross %u", fit.cross_ctx);
	lp_probe_free(pr);
	/* A curve that flattens (scratch full at n_batch) is not super-linear. */
	pr = fake(1e8, 2e4, -2, 5);
	lp_probe_analyze(pr, &fit);
	ck_assert_int_eq(fit.linear, 1);
	lp_probe_free(pr);
	/* Two lengths are not enough for a verdict. */
	pr = fake(1e8, 2e4, 0, 2);
	lp_probe_analyze(pr, &fit);
	ck_assert_int_eq(fit.linear, -1);
	lp_probe_free(pr);
}
END_TEST

/* ---- budget ---------------------------------------------------------- */

static size_t predicted_total(const struct fixture *f, uint32_t n_ctx, enum lp_qtype kv,
			      uint32_t n_batch)
{
	struct lp_forward_params p = lp_forward_default_params();
	struct lp_plan_bytes b;

	p.n_ctx = n_ctx;
	p.kv_type = kv;
	p.n_threads = 2;
	p.n_batch = n_batch;
	lp_plan_predict(f->m, f->other, &p, &b);
	ck_assert_uint_eq(b.total, b.weights + b.other + b.kv + b.scratch + b.logits);
	return b.total;
}

START_TEST(test_budget_measured)
{
	struct tiny_spec s = tiny_default_spec();
	struct fixture f;
	struct lp_probe *pr;
	struct lp_probe_fit fit;

	fx_open(&f, &s);
	lp_mem_set_budget(predicted_total(&f, 128, LP_Q_F16, 0) + 1024);
	pr = probe(&f, 64, 512, LP_Q_F16);
	ck_assert_uint_eq(pr->n_rows, 12);
	for (size_t i = 0; i < pr->n_rows; i++)
		ck_assert_int_eq(pr->rows[i].ok, pr->rows[i].n_ctx <= 128);
	lp_probe_analyze(pr, &fit);
	ck_assert_int_eq(fit.cross_measured, 1);
	ck_assert_uint_eq(fit.cross_ctx, 256);
	lp_mem_set_budget(0);
	lp_probe_free(pr);
	fx_close(&f);
}
END_TEST

START_TEST(test_budget_extrapolated)
{
	struct tiny_spec s = tiny_default_spec();
	struct fixture f;
	struct lp_probe *pr;
	struct lp_probe_fit fit;
	size_t budget;

	fx_open(&f, &s);
	budget = predicted_total(&f, 1024, LP_Q_F16, 0);
	lp_mem_set_budget(budget);
	pr = probe(&f, 64, 512, LP_Q_F16);
	lp_probe_analyze(pr, &fit);
	ck_assert_int_eq(fit.cross_measured, 0);
	/* Past the lengths measured, not beyond where the plan says it is
	 * crossed (the fit also counts the batch growing up to 512). */
	ck_assert_msg(fit.cross_ctx > 512 && fit.cross_ctx <= 1025, "cross %u", fit.cross_ctx);
	lp_mem_set_budget(0);
	lp_probe_free(pr);
	fx_close(&f);
}
END_TEST

/* ---- plan ------------------------------------------------------------ */

static struct lp_plan_request request(const struct fixture *f, size_t usable, int kv_auto)
{
	/* Budgets this small take the minimum margin. */
	return (struct lp_plan_request){ .budget = usable + LP_PLAN_MARGIN_MIN,
					 .kv_auto = kv_auto, .kv_type = LP_Q_F16,
					 .n_threads = 2, .other = f->other };
}

/* The documented rule, written out plainly: candidates 64, 128, 256, 512,
 * 768, 1024 (the training context); batch 512 unless a smaller one buys a
 * quarter more context. Returns the context, 0 if none fits. */
static uint32_t ref_best(const struct fixture *f, enum lp_qtype kv, size_t usable,
			 uint32_t *n_batch)
{
	static const uint32_t ctx[] = { 64, 128, 256, 512, 768, 1024 };
	static const uint32_t batch[] = { 512, 256, 128, 64, 32 };
	uint32_t best = 0;

	for (int b = 0; b < 5; b++) {
		uint32_t n = 0;
		for (int i = 0; i < 6 && predicted_total(f, ctx[i], kv, batch[b]) <= usable; i++)
			n = ctx[i];
		if (n && n * 4 >= best * 5) {
			best = n;
			*n_batch = batch[b];
		}
	}
	return best;
}

START_TEST(test_plan_fits)
{
	struct tiny_spec s = tiny_default_spec();
	struct fixture f;
	struct lp_plan p;
	struct lp_plan_request r;
	struct lp_diag d;
	int saw_q8 = 0, saw_small_batch = 0, saw_f16_short = 0;

	fx_open(&f, &s);
	lp_diag_init(&d);
	/* A sweep of usable sizes from what the smallest context needs to
	 * more than the largest needs, in both KV modes. */
	size_t lo = predicted_total(&f, 64, LP_Q_Q8_0, 32);
	size_t hi = predicted_total(&f, 1024, LP_Q_F16, 512) + 4096;
	for (int step = 0; step <= 80; step++) {
		{
			size_t usable = lo + (hi - lo) * (size_t)step / 80;
			for (int kv_auto = 0; kv_auto <= 1; kv_auto++) {
				uint32_t b16 = 0, b8 = 0, want_b;
				uint32_t n16 = ref_best(&f, LP_Q_F16, usable, &b16);
				uint32_t n8 = ref_best(&f, LP_Q_Q8_0, usable, &b8);
				int q8 = kv_auto && n16 != 1024 && n8 > n16;
				uint32_t want = q8 ? n8 : n16;

				want_b = q8 ? b8 : b16;
				r = request(&f, usable, kv_auto);
				if (!want) {
					ck_assert_int_eq(lp_plan_choose(f.m, &r, &p, &d), LP_E_NOMEM);
					continue;
				}
				ck_assert_msg(lp_plan_choose(f.m, &r, &p, &d) == LP_OK, "%s", d.msg);
				ck_assert_uint_eq(p.usable, usable);
				ck_assert_uint_eq(p.n_ctx, want);
				ck_assert_int_eq(p.kv_type, q8 ? LP_Q_Q8_0 : LP_Q_F16);
				ck_assert_uint_eq(p.n_batch, want_b > want ? want : want_b);
				ck_assert_uint_le(p.bytes.total, usable);
				ck_assert_uint_eq(p.kv_per_token, 2 * s.layers * s.kv_heads *
								  (s.embd / s.heads) * (q8 ? 34 / 32.0 : 2));
				/* Chunk leaves room for the template and the output,
				 * or half the context when that is less. */
				uint32_t reserve = LP_PLAN_TEMPLATE_TOKENS + LP_PLAN_MAX_TOKENS;
				if (reserve > p.n_ctx / 2)
					reserve = p.n_ctx / 2;
				ck_assert_uint_le(p.chunk + reserve, p.n_ctx);
				ck_assert_uint_ge(p.chunk + reserve + 16, p.n_ctx);
				ck_assert_msg(fabs(p.overlap - 0.12 * p.chunk) <= 4,
					      "overlap %u of %u", p.overlap, p.chunk);
				saw_q8 |= q8;
				saw_small_batch |= want_b < 512;
				saw_f16_short |= kv_auto && !q8 && want < 1024;
			}
		}
	}
	/* The sweep reached every branch of the rule. */
	ck_assert_msg(saw_q8 && saw_small_batch && saw_f16_short, "q8 %d batch %d f16 %d",
		      saw_q8, saw_small_batch, saw_f16_short);

	/* Plenty of room: the training context, in f16, batch 512. */
	r = request(&f, (size_t)64 << 20, 1);
	ck_assert_msg(lp_plan_choose(f.m, &r, &p, &d) == LP_OK, "%s", d.msg);
	ck_assert_uint_eq(p.n_ctx, 1024);
	ck_assert_int_eq(p.kv_type, LP_Q_F16);
	ck_assert_uint_eq(p.n_batch, 512);
	ck_assert_uint_eq(p.chunk, 1024 - LP_PLAN_TEMPLATE_TOKENS - LP_PLAN_MAX_TOKENS);
	fx_close(&f);
}
END_TEST

START_TEST(test_plan_too_small)
{
	struct tiny_spec s = tiny_default_spec();
	struct fixture f;
	struct lp_plan p;
	struct lp_plan_request r;
	struct lp_diag d;

	fx_open(&f, &s);
	lp_diag_init(&d);
	r = request(&f, 1000, 1);
	ck_assert_int_eq(lp_plan_choose(f.m, &r, &p, &d), LP_E_NOMEM);
	ck_assert_msg(strstr(d.msg, "the weights alone need"), "%s", d.msg);
	/* Room for the weights but not for any context. */
	r = request(&f, lp_plan_weight_bytes(f.m) + f.other + 100, 0);
	ck_assert_int_eq(lp_plan_choose(f.m, &r, &p, &d), LP_E_NOMEM);
	ck_assert_msg(strstr(d.msg, "the smallest context (64 tokens"), "%s", d.msg);
	fx_close(&f);
}
END_TEST

/* When the mapped file leaves no room for a context but the window does,
 * the plan streams the weights, and only when allowed to. */
START_TEST(test_plan_streams)
{
	struct tiny_spec s = tiny_layered_spec();
	struct fixture f;
	struct lp_plan p;
	struct lp_plan_request r;
	struct lp_diag d;
	struct lp_forward_params cp = lp_forward_default_params();
	struct lp_plan_bytes b;
	size_t window_total;

	fx_open(&f, &s);
	lp_diag_init(&d);
	ck_assert_uint_lt(2 * lp_plan_stream_weight_bytes(f.m), lp_plan_weight_bytes(f.m));
	/* streamed at 256 tokens, with room to spare but less than the file */
	cp.n_ctx = 256;
	cp.kv_type = LP_Q_F16;
	cp.n_threads = 2;
	cp.n_batch = 256;
	lp_plan_predict(f.m, f.other, &cp, &b);
	window_total = b.total - b.weights + lp_plan_stream_weight_bytes(f.m);
	ck_assert_uint_lt(window_total, lp_plan_weight_bytes(f.m));
	r = request(&f, window_total + 1024, 0);
	ck_assert_int_eq(lp_plan_choose(f.m, &r, &p, &d), LP_E_NOMEM);
	ck_assert_msg(strstr(d.msg, "the weights alone need"), "%s", d.msg);
	r.allow_stream = 1;
	ck_assert_msg(lp_plan_choose(f.m, &r, &p, &d) == LP_OK, "%s", d.msg);
	ck_assert_int_eq(p.stream, 1);
	ck_assert_uint_eq(p.bytes.weights, lp_plan_stream_weight_bytes(f.m));
	ck_assert_uint_ge(p.n_ctx, 256);
	ck_assert_uint_le(p.bytes.total, p.usable);
	/* plenty of room: mapped, as before */
	r = request(&f, (size_t)64 << 20, 1);
	r.allow_stream = 1;
	ck_assert_msg(lp_plan_choose(f.m, &r, &p, &d) == LP_OK, "%s", d.msg);
	ck_assert_int_eq(p.stream, 0);
	ck_assert_uint_eq(p.bytes.weights, lp_plan_weight_bytes(f.m));
	fx_close(&f);
}
END_TEST

static Suite *probe_suite(void)
{
	Suite *s = suite_create("probe");
	TCase *tc = tcase_create("predict");

	tcase_add_test(tc, test_agree_f32);
	tcase_add_test(tc, test_agree_f16);
	tcase_add_test(tc, test_agree_q8_0);
	tcase_add_test(tc, test_agree_stream);
	tcase_add_test(tc, test_agree_device);
	suite_add_tcase(s, tc);
	tc = tcase_create("output");
	tcase_add_test(tc, test_csv);
	tcase_add_test(tc, test_svg);
	suite_add_tcase(s, tc);
	tc = tcase_create("analysis");
	tcase_add_test(tc, test_linear_tiny);
	tcase_add_test(tc, test_superlinear);
	tcase_add_test(tc, test_budget_measured);
	tcase_add_test(tc, test_budget_extrapolated);
	suite_add_tcase(s, tc);
	tc = tcase_create("plan");
	tcase_add_test(tc, test_plan_fits);
	tcase_add_test(tc, test_plan_too_small);
	tcase_add_test(tc, test_plan_streams);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(probe_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
