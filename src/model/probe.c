/* probe.c - the measurement loop of `lpipe probe` and its growth analysis
 * (the table, CSV and SVG are report/probe_out.c's). */
#include "model/probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/progress.h"
#include "model/forward.h"
#include "model/plan.h"

static const char *const phase_names[LP_PROBE_NPHASES] = { "load", "prefill", "decode" };

const char *lp_probe_phase_name(enum lp_probe_phase ph)
{
	return (unsigned)ph < LP_PROBE_NPHASES ? phase_names[ph] : "?";
}

struct lp_probe_params lp_probe_default_params(void)
{
	return (struct lp_probe_params){ .min_ctx = 128, .max_ctx = 0, .n_decode = 16,
					 .kv_type = LP_Q_F16, .n_threads = 0, .other = 0 };
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Lengths min, 2*min, ... below max, then max. */
static size_t lengths(const struct lp_probe_params *p, uint32_t *out, size_t cap)
{
	size_t n = 0;

	for (uint64_t L = p->min_ctx; L < p->max_ctx && n + 1 < cap; L *= 2)
		out[n++] = (uint32_t)L;
	out[n++] = p->max_ctx;
	return n;
}

static void phase_begin(double *t0)
{
	lp_mem_reset_peaks();
	*t0 = now_s();
}

static void phase_end(struct lp_probe_row *r, double t0, int device)
{
	r->seconds = now_s() - t0;
	for (int t = 0; t < LP_MEM_NTAGS; t++)
		r->peak[t] = lp_mem_peak((enum lp_mem_tag)t);
	r->tracked_peak = device ? lp_mem_peak_gpu() : lp_mem_peak_total();
	r->rss = lp_mem_current_rss();
	r->rss_peak = lp_mem_peak_rss();
	r->tokens_per_s = r->seconds > 0 && r->tokens ? r->tokens / r->seconds : 0;
}

/* Prefill then decode in `c`; fills rows[1] and rows[2]. */
static enum lp_status run_eval(struct lp_forward *c, const int32_t *toks, uint32_t n_ctx,
			       uint32_t n_decode, int dev, struct lp_probe_row *rows,
			       struct lp_diag *d)
{
	uint32_t n_prompt = n_decode < n_ctx ? n_ctx - n_decode : n_ctx / 2;
	enum lp_status st;
	double t0;

	rows[1].tokens = n_prompt;
	phase_begin(&t0);
	st = lp_forward_eval(c, toks, n_prompt, 0, NULL, d);
	phase_end(&rows[1], t0, dev);
	lp_progress_add_tokens(n_prompt);
	if (st)
		return st;
	rows[1].ok = 1;
	rows[2].tokens = n_ctx - n_prompt;
	phase_begin(&t0);
	for (uint32_t i = n_prompt; i < n_ctx && !st; i++) {
		st = lp_forward_eval(c, toks + i, 1, i, NULL, d);
		lp_progress_add_tokens(1);
	}
	phase_end(&rows[2], t0, dev);
	rows[2].ok = st == LP_OK;
	return st;
}

/* One length: three rows. Over budget is recorded, not returned. */
static enum lp_status probe_one(const struct lp_model *m, const struct lp_probe_params *p,
				uint32_t n_ctx, const int32_t *toks, struct lp_probe_row *rows,
				struct lp_diag *d)
{
	struct lp_forward_params cp = lp_forward_default_params();
	struct lp_plan_bytes pb;
	struct lp_forward *c = NULL;
	struct lp_diag dd;
	enum lp_status st;
	double t0;

	int dev = p->device != NULL;

	cp.n_ctx = n_ctx;
	cp.kv_type = p->kv_type;
	cp.n_threads = p->n_threads;
	cp.offload = p->device;
	cp.gpu_layers = dev ? m->hp.n_layer : 0;
	lp_plan_predict(m, p->other, &cp, &pb);
	for (int ph = 0; ph < LP_PROBE_NPHASES; ph++) {
		memset(&rows[ph], 0, sizeof(rows[ph]));
		rows[ph].n_ctx = n_ctx;
		rows[ph].phase = (enum lp_probe_phase)ph;
		rows[ph].predicted = dev ? pb.gpu_total : pb.total;
	}
	lp_diag_init(&dd);
	phase_begin(&t0);
	st = lp_forward_new(m, &cp, &c, &dd);
	phase_end(&rows[0], t0, dev);
	if (st == LP_E_NOMEM)
		return LP_OK;
	if (st) {
		*d = dd;
		return st;
	}
	rows[0].ok = 1;
	st = run_eval(c, toks, n_ctx, p->n_decode, dev, rows, &dd);
	lp_forward_free(c);
	if (st && st != LP_E_NOMEM) {
		*d = dd;
		return st;
	}
	return LP_OK;
}

static enum lp_status check_params(const struct lp_model *m, struct lp_probe_params *p,
				   struct lp_diag *d)
{
	if (!p->max_ctx)
		p->max_ctx = m->hp.n_ctx_train;
	if (p->min_ctx < 2 || p->min_ctx > p->max_ctx)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "lengths must satisfy 2 <= min (%u) <= max (%u)",
				   p->min_ctx, p->max_ctx);
	return LP_OK;
}

enum lp_status lp_probe_run(const struct lp_model *m, const struct lp_probe_params *params,
			    struct lp_probe **out, struct lp_diag *d)
{
	struct lp_probe_params p = *params;
	struct lp_probe *pr;
	struct lp_progress prog;
	char what[48] = "probe";
	uint32_t lens[40];
	size_t n_lens;
	int32_t *toks;
	enum lp_status st;

	*out = NULL;
	if ((st = check_params(m, &p, d)))
		return st;
	n_lens = lengths(&p, lens, sizeof(lens) / sizeof(lens[0]));
	pr = calloc(1, sizeof(*pr));
	toks = malloc((size_t)p.max_ctx * sizeof(*toks));
	if (pr)
		pr->rows = calloc(n_lens * LP_PROBE_NPHASES, sizeof(*pr->rows));
	if (!pr || !toks || !pr->rows) {
		free(toks);
		lp_probe_free(pr);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate the probe rows");
	}
	/* Any ids do for memory and time; spread them over the vocabulary. */
	for (uint32_t i = 0; i < p.max_ctx; i++)
		toks[i] = (int32_t)((i * 2654435761u >> 7) % m->hp.n_vocab);
	pr->p = p;
	pr->budget = p.device ? lp_mem_gpu_budget() : lp_mem_budget();
	if (n_lens)
		snprintf(what, sizeof(what), "probe (n_ctx %u)", lens[0]);
	lp_progress_begin(&prog, what, "lengths", n_lens);
	for (size_t i = 0; i < n_lens && !st; i++) {
		snprintf(what, sizeof(what), "probe (n_ctx %u)", lens[i]);
		lp_progress_update(&prog, i);
		st = probe_one(m, &p, lens[i], toks, pr->rows + pr->n_rows, d);
		pr->n_rows += LP_PROBE_NPHASES;
		lp_progress_update(&prog, i + 1);
	}
	snprintf(what, sizeof(what), "probe");
	lp_progress_end(&prog);
	free(toks);
	if (st) {
		lp_probe_free(pr);
		return st;
	}
	*out = pr;
	return LP_OK;
}

void lp_probe_free(struct lp_probe *pr)
{
	if (!pr)
		return;
	free(pr->rows);
	free(pr);
}

/* ---- growth analysis ------------------------------------------------- */

/* Solve the 3x3 system A x = y by Gaussian elimination with pivoting;
 * returns 0 when singular. */
static int solve3(double A[3][3], double y[3], double x[3])
{
	for (int c = 0; c < 3; c++) {
		int piv = c;
		for (int r = c + 1; r < 3; r++)
			if (fabs(A[r][c]) > fabs(A[piv][c]))
				piv = r;
		if (fabs(A[piv][c]) < 1e-12)
			return 0;
		for (int k = 0; k < 3; k++) {
			double t = A[c][k];
			A[c][k] = A[piv][k];
			A[piv][k] = t;
		}
		double t = y[c];
		y[c] = y[piv];
		y[piv] = t;
		for (int r = c + 1; r < 3; r++) {
			double f = A[r][c] / A[c][c];
			for (int k = c; k < 3; k++)
				A[r][k] -= f * A[c][k];
			y[r] -= f * y[c];
		}
	}
	for (int r = 2; r >= 0; r--) {
		double s = y[r];
		for (int k = r + 1; k < 3; k++)
			s -= A[r][k] * x[k];
		x[r] = s / A[r][r];
	}
	return 1;
}

/* Least squares of y on (1, x, x^2) (deg 2) or (1, x) (deg 1), x scaled
 * to [0, 1] for conditioning; coefficients returned in unscaled n. */
static int fit_poly(const double *n, const double *y, int k, int deg, double xmax,
		    double coef[3])
{
	double A[3][3] = { { 0 } }, b[3] = { 0 }, x[3] = { 0 };

	for (int i = 0; i < k; i++) {
		double v[3] = { 1, n[i] / xmax, (n[i] / xmax) * (n[i] / xmax) };
		for (int r = 0; r < 3; r++) {
			for (int c = 0; c < 3; c++)
				A[r][c] += v[r] * v[c];
			b[r] += v[r] * y[i];
		}
	}
	if (deg == 1) {
		/* Pin the quadratic coefficient to zero. */
		A[2][0] = A[2][1] = A[0][2] = A[1][2] = 0;
		A[2][2] = 1;
		b[2] = 0;
	}
	if (!solve3(A, b, x))
		return 0;
	coef[0] = x[0];
	coef[1] = x[1] / xmax;
	coef[2] = x[2] / (xmax * xmax);
	return 1;
}

/* Smallest n >= 1 with a + b n + c n^2 > budget, or 0 when it never is. */
static uint32_t crossing(double a, double b, double c, double budget)
{
	double n;

	if (c > 0) {
		double disc = b * b - 4 * c * (a - budget);
		n = disc < 0 ? 0 : (-b + sqrt(disc)) / (2 * c);
	} else if (b > 0) {
		n = (budget - a) / b;
	} else {
		return 0;
	}
	if (n < 1)
		n = 1;
	return n > 4e9 ? UINT32_MAX : (uint32_t)ceil(n);
}

static int collect(const struct lp_probe *pr, double *n, double *y, uint32_t *first_fail)
{
	int k = 0;

	*first_fail = 0;
	for (size_t i = 0; i + LP_PROBE_NPHASES <= pr->n_rows; i += LP_PROBE_NPHASES) {
		const struct lp_probe_row *r = &pr->rows[i];
		double peak = 0;
		int ok = 1;
		for (int ph = 0; ph < LP_PROBE_NPHASES; ph++) {
			ok &= r[ph].ok;
			if ((double)r[ph].tracked_peak > peak)
				peak = (double)r[ph].tracked_peak;
		}
		if (!ok) {
			if (!*first_fail)
				*first_fail = r->n_ctx;
			continue;
		}
		n[k] = r->n_ctx;
		y[k++] = peak;
	}
	return k;
}

void lp_probe_analyze(const struct lp_probe *pr, struct lp_probe_fit *f)
{
	size_t cap = pr->n_rows / LP_PROBE_NPHASES + 1;
	double *n = calloc(cap, sizeof(double)), *y = calloc(cap, sizeof(double));
	double q[3] = { 0 }, l[3] = { 0 };
	uint32_t first_fail;
	int k;

	memset(f, 0, sizeof(*f));
	f->linear = -1;
	if (!n || !y)
		goto out;
	k = collect(pr, n, y, &first_fail);
	f->n_points = k;
	if (k >= 2 && fit_poly(n, y, k, 1, n[k - 1], l)) {
		f->a = l[0];
		f->b = l[1];
	}
	if (k >= 3 && fit_poly(n, y, k, 2, n[k - 1], q)) {
		double xm = n[k - 1], lin = fabs(q[1] * xm), quad = q[2] * xm * xm;
		/* Signed: a concave curve (scratch that stops growing once the
		 * batch is full) is not super-linear. */
		f->quad_share = lin + fabs(quad) > 0 ? quad / (lin + fabs(quad)) : 0;
		f->linear = f->quad_share < 0.05;
		if (!f->linear) {
			f->a = q[0];
			f->b = q[1];
			f->c = q[2];
		}
		double s1 = (y[k - 2] - y[k - 3]) / (n[k - 2] - n[k - 3]);
		double s2 = (y[k - 1] - y[k - 2]) / (n[k - 1] - n[k - 2]);
		f->step_ratio = s1 > 0 ? s2 / s1 : 0;
	}
	if (first_fail) {
		f->cross_ctx = first_fail;
		f->cross_measured = 1;
	} else if (pr->budget && k >= 2) {
		f->cross_ctx = crossing(f->a, f->b, f->c, (double)pr->budget);
	}
out:
	free(n);
	free(y);
}
