/* probe_out.c - the probe's table, verdict, CSV and hand-written SVG. */
#include "report/probe.h"

#include <math.h>
#include <string.h>

#include "core/fileio.h"

static double mib(size_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* The tags of the weights, KV and scratch columns: the device's when the
 * probe ran on one. */
static void tags(const struct lp_probe *pr, enum lp_mem_tag t[3])
{
	int dev = pr->p.device != NULL;

	t[0] = dev ? LP_MEM_GPU_WEIGHTS : LP_MEM_WEIGHTS;
	t[1] = dev ? LP_MEM_GPU_KV : LP_MEM_KV;
	t[2] = dev ? LP_MEM_GPU_SCRATCH : LP_MEM_SCRATCH;
}

void lp_probe_print(const struct lp_probe *pr, const struct lp_probe_fit *f, FILE *out)
{
	int dev = pr->p.device != NULL;
	enum lp_mem_tag t[3];

	tags(pr, t);
	if (dev)
		fprintf(out, "device: %s (weights, kv, scratch, tracked and predict are "
			"device memory)\n", pr->p.device->device);
	fprintf(out, "%7s %-8s %-4s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "n_ctx",
		"phase", "ok", "seconds", "tok/s", "weights", "kv", "scratch", "logits",
		"tracked", "predict", "rss", "rss peak");
	fprintf(out, "%7s %-8s %-4s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "", "", "",
		"", "MiB", "MiB", "MiB", "MiB", "MiB", "MiB", "MiB", "MiB");
	for (size_t i = 0; i < pr->n_rows; i++) {
		const struct lp_probe_row *r = &pr->rows[i];
		fprintf(out, "%7u %-8s %-4s %9.3f %9.1f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f "
			"%9.2f\n", r->n_ctx, lp_probe_phase_name(r->phase), r->ok ? "yes" : "over",
			r->seconds, r->tokens_per_s, mib(r->peak[t[0]]),
			mib(r->peak[t[1]]), mib(r->peak[t[2]]),
			mib(r->peak[LP_MEM_LOGITS]), mib(r->tracked_peak), mib(r->predicted),
			mib(r->rss), mib(r->rss_peak));
	}
	lp_probe_print_verdict(pr, f, out);
}

void lp_probe_print_verdict(const struct lp_probe *pr, const struct lp_probe_fit *f,
			    FILE *out)
{
	char b[32];

	if (f->linear < 0)
		fprintf(out, "growth: unknown (%d lengths fit; 3 are needed)\n", f->n_points);
	else
		fprintf(out, "growth: %s: %.0f bytes per token of context; quadratic term %.1f%% "
			"of the growth at the longest length; slope ratio of the last "
			"two steps %.2f (1 linear, 2 quadratic)\n",
			f->linear ? "linear (KV cache)" : "super-linear (attention scratch)",
			f->b, 100.0 * f->quad_share, f->step_ratio);
	if (!pr->budget)
		fputs("budget: none set (--mem-budget)\n", out);
	else if (f->cross_measured)
		fprintf(out, "budget: %s exceeded at n_ctx %u (measured)\n",
			lp_mem_format_size(pr->budget, b, sizeof(b)), f->cross_ctx);
	else if (f->cross_ctx)
		fprintf(out, "budget: %s would be exceeded near n_ctx %u (extrapolated)\n",
			lp_mem_format_size(pr->budget, b, sizeof(b)), f->cross_ctx);
	else
		fprintf(out, "budget: %s not exceeded at any length\n",
			lp_mem_format_size(pr->budget, b, sizeof(b)));
}

void lp_probe_csv(const struct lp_probe *pr, FILE *out)
{
	enum lp_mem_tag t[3];

	tags(pr, t);
	fputs(pr->p.device ? LP_PROBE_CSV_HEADER_GPU "\n" : LP_PROBE_CSV_HEADER "\n", out);
	for (size_t i = 0; i < pr->n_rows; i++) {
		const struct lp_probe_row *r = &pr->rows[i];
		fprintf(out, "%u,%s,%d,%.6f,%.3f,%zu,%zu,%zu,%zu,%zu,%zu,%zu\n", r->n_ctx,
			lp_probe_phase_name(r->phase), r->ok, r->seconds, r->tokens_per_s,
			r->peak[t[0]], r->peak[t[1]], r->peak[t[2]],
			r->peak[LP_MEM_LOGITS], r->tracked_peak, r->rss, r->predicted);
	}
}

/* Open `path` atomically, let `emit` write, commit. */
static enum lp_status write_file(const char *path, const struct lp_probe *pr,
				 const char *title,
				 void (*emit)(const struct lp_probe *, const char *, FILE *),
				 struct lp_diag *d)
{
	struct lp_afile af;
	enum lp_status st;

	if ((st = lp_afile_open(&af, path, d)))
		return st;
	emit(pr, title, af.fp);
	if (ferror(af.fp)) {
		lp_afile_abort(&af);
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "cannot write '%s'", path);
	}
	return lp_afile_commit(&af, d);
}

static void emit_csv(const struct lp_probe *pr, const char *title, FILE *out)
{
	(void)title;
	lp_probe_csv(pr, out);
}

enum lp_status lp_probe_write_csv(const struct lp_probe *pr, const char *path,
				  struct lp_diag *d)
{
	return write_file(path, pr, NULL, emit_csv, d);
}

/* ---- SVG ------------------------------------------------------------- */

#define SVG_W 860
#define SVG_H 520
#define PL 80   /* plot left */
#define PR 230  /* plot right margin, holds the legend */
#define PT 60   /* plot top */
#define PB 60   /* plot bottom margin */

struct chart {
	double x0, x1; /* log2 of the lengths */
	double ymax;   /* MiB */
};

static double px(const struct chart *c, double n)
{
	double span = c->x1 > c->x0 ? c->x1 - c->x0 : 1;

	return PL + (log2(n) - c->x0) / span * (SVG_W - PL - PR);
}

static double py(const struct chart *c, double v)
{
	return SVG_H - PB - v / c->ymax * (SVG_H - PT - PB);
}

static void xml_text(const char *s, FILE *out)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* A step of 1, 2 or 5 times a power of ten giving 4 to 10 ticks. */
static double nice_step(double ymax)
{
	double p = pow(10, floor(log10(ymax / 5)));

	for (int i = 0; i < 3; i++) {
		double s = p * (double[]){ 1, 2, 5 }[i];
		if (ymax / s <= 10)
			return s;
	}
	return p * 10;
}

static void axes(const struct chart *c, const struct lp_probe *pr, FILE *out)
{
	double step = nice_step(c->ymax);

	fprintf(out, "<g stroke=\"#000\" stroke-width=\"1\">\n"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n",
		PL, SVG_H - PB, SVG_W - PR, SVG_H - PB, PL, PT, PL, SVG_H - PB);
	fputs("<g font-family=\"sans-serif\" font-size=\"11\" fill=\"#000\">\n", out);
	for (double v = 0; v <= c->ymax + 1e-9; v += step) {
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			PL, py(c, v), SVG_W - PR, py(c, v), PL - 6, py(c, v) + 4, v);
	}
	for (size_t i = 0; i < pr->n_rows; i += LP_PROBE_NPHASES) {
		double x = px(c, pr->rows[i].n_ctx);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%u</text>\n",
			x, SVG_H - PB, x, SVG_H - PB + 5, x, SVG_H - PB + 18, pr->rows[i].n_ctx);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">"
		"context length (tokens, log2 scale)</text>\n",
		(PL + SVG_W - PR) / 2, SVG_H - 18);
	fprintf(out, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\" "
		"transform=\"rotate(-90 18 %d)\">memory (MiB)</text>\n</g>\n",
		(PT + SVG_H - PB) / 2, (PT + SVG_H - PB) / 2);
}

enum series { S_TRACKED, S_RSS, S_PREDICTED };

static const char *const colors[LP_PROBE_NPHASES] = { "#1f77b4", "#ff7f0e", "#2ca02c" };

static double value(const struct lp_probe_row *r, enum series s)
{
	return mib(s == S_TRACKED ? r->tracked_peak : s == S_RSS ? r->rss : r->predicted);
}

/* A polyline through the rows of one phase (only those that fit, except
 * for the prediction, which exists at every length). */
static void series(const struct chart *c, const struct lp_probe *pr, int phase, enum series s,
		   const char *style, FILE *out)
{
	fprintf(out, "<polyline fill=\"none\" %s points=\"", style);
	for (size_t i = phase; i < pr->n_rows; i += LP_PROBE_NPHASES) {
		const struct lp_probe_row *r = &pr->rows[i];
		if (r->ok || s == S_PREDICTED)
			fprintf(out, "%.1f,%.1f ", px(c, r->n_ctx), py(c, value(r, s)));
	}
	fputs("\"/>\n", out);
}

static void legend_item(int i, const char *style, const char *label, FILE *out)
{
	int x = SVG_W - PR + 20, y = PT + 10 + 20 * i;

	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" %s/>\n"
		"<text x=\"%d\" y=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%s</text>\n",
		x, y, x + 30, y, style, x + 38, y + 4, label);
}

/* A red cross on the prediction at each length the budget refused. */
static void over_marks(const struct chart *c, const struct lp_probe *pr, FILE *out)
{
	for (size_t i = 0; i < pr->n_rows; i += LP_PROBE_NPHASES) {
		const struct lp_probe_row *r = &pr->rows[i];
		double x = px(c, r->n_ctx), y = py(c, mib(r->predicted));
		if (r->ok)
			continue;
		fprintf(out, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#d62728\" "
			"stroke-width=\"2\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" "
			"font-size=\"11\" fill=\"#d62728\" text-anchor=\"end\">over budget</text>\n",
			x - 4, y - 4, x + 6, y - 10);
	}
}

static double chart_max(const struct lp_probe *pr)
{
	double m = pr->budget ? mib(pr->budget) : 0;

	for (size_t i = 0; i < pr->n_rows; i++) {
		const struct lp_probe_row *r = &pr->rows[i];
		for (int s = 0; s < 3; s++)
			if ((r->ok || s == S_PREDICTED) && value(r, (enum series)s) > m)
				m = value(r, (enum series)s);
	}
	return m > 0 ? m * 1.08 : 1;
}

void lp_probe_svg(const struct lp_probe *pr, const char *title, FILE *out)
{
	struct chart c = { 0, 1, chart_max(pr) };
	char style[128], label[64];
	int item = 0;

	if (pr->n_rows) {
		c.x0 = log2(pr->rows[0].n_ctx);
		c.x1 = log2(pr->rows[pr->n_rows - 1].n_ctx);
	}
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		"<text x=\"%d\" y=\"28\" font-family=\"sans-serif\" font-size=\"16\" "
		"text-anchor=\"middle\">", SVG_W, SVG_H, SVG_W, SVG_H, SVG_W / 2);
	xml_text(title ? title : "memory against context length", out);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"44\" font-family=\"sans-serif\" "
		"font-size=\"11\" fill=\"#555\" text-anchor=\"middle\">tokens on a log2 scale: "
		"memory that grows linearly curves upward</text>\n", SVG_W / 2);
	axes(&c, pr, out);
	for (int ph = 0; ph < LP_PROBE_NPHASES; ph++) {
		/* Phases often coincide: wide under narrow keeps each visible. */
		snprintf(style, sizeof(style), "stroke=\"%s\" stroke-width=\"%.1f\"", colors[ph],
			 6.0 - 2.25 * ph);
		series(&c, pr, ph, S_TRACKED, style, out);
		snprintf(label, sizeof(label), "%s: tracked peak", lp_probe_phase_name(ph));
		legend_item(item++, style, label, out);
	}
	for (int ph = 0; ph < LP_PROBE_NPHASES; ph++) {
		snprintf(style, sizeof(style),
			 "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"2,3\"", colors[ph]);
		series(&c, pr, ph, S_RSS, style, out);
		snprintf(label, sizeof(label), "%s: resident (RSS)", lp_probe_phase_name(ph));
		legend_item(item++, style, label, out);
	}
	snprintf(style, sizeof(style), "stroke=\"#000\" stroke-width=\"1\" stroke-dasharray=\"8,4\"");
	series(&c, pr, LP_PROBE_LOAD, S_PREDICTED, style, out);
	legend_item(item++, style, "predicted (plan)", out);
	if (pr->budget) {
		snprintf(style, sizeof(style), "stroke=\"#d62728\" stroke-width=\"1.5\"");
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" %s/>\n", PL,
			py(&c, mib(pr->budget)), SVG_W - PR, py(&c, mib(pr->budget)), style);
		legend_item(item++, style, "budget", out);
		over_marks(&c, pr, out);
	}
	fputs("</svg>\n", out);
}

enum lp_status lp_probe_write_svg(const struct lp_probe *pr, const char *title,
				  const char *path, struct lp_diag *d)
{
	return write_file(path, pr, title, lp_probe_svg, d);
}
