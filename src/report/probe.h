/*
 * probe.h - what `lpipe probe` shows of a finished probe (model/probe.h):
 * a table with its verdict, CSV and an SVG chart. Output files are written
 * atomically.
 */
#ifndef LP_REPORT_PROBE_H
#define LP_REPORT_PROBE_H

#include <stdio.h>

#include "core/status.h"
#include "model/probe.h"

/* Table of the rows on `out`, then the verdict lines. */
void lp_probe_print(const struct lp_probe *pr, const struct lp_probe_fit *f, FILE *out);
/* The verdict alone ("growth: linear ...", "budget: ..."). */
void lp_probe_print_verdict(const struct lp_probe *pr, const struct lp_probe_fit *f,
			    FILE *out);

/* CSV with the columns of LP_PROBE_CSV_HEADER, one row per (length,
 * phase). Returns LP_OK or LP_E_IO; the file is replaced atomically. */
#define LP_PROBE_CSV_HEADER "n_ctx,phase,ok,seconds,tokens_per_s,weights_bytes,kv_bytes," \
	"scratch_bytes,logits_bytes,tracked_peak_bytes,rss_bytes,predicted_bytes"
/* The same with a device: its tags, its tracked total and prediction. */
#define LP_PROBE_CSV_HEADER_GPU "n_ctx,phase,ok,seconds,tokens_per_s,gpu_weights_bytes," \
	"gpu_kv_bytes,gpu_scratch_bytes,logits_bytes,gpu_tracked_peak_bytes,rss_bytes," \
	"gpu_predicted_bytes"
enum lp_status lp_probe_write_csv(const struct lp_probe *pr, const char *path,
				  struct lp_diag *d);
void lp_probe_csv(const struct lp_probe *pr, FILE *out);

/* SVG line chart: length (log2) against MiB, one line per phase (tracked
 * peak, solid; resident, dotted), the prediction (dashed) and the budget.
 * `title` is escaped. Returns LP_OK or LP_E_IO. */
enum lp_status lp_probe_write_svg(const struct lp_probe *pr, const char *title,
				  const char *path, struct lp_diag *d);
void lp_probe_svg(const struct lp_probe *pr, const char *title, FILE *out);

#endif
