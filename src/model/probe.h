/*
 * probe.h - measuring memory against context length (`lpipe probe`): the
 * measurement loop and the growth analysis (report/probe.h shows them as
 * a table, CSV and SVG).
 *
 * For each context length L (doubling from min to max, max included) the
 * probe creates a context of L tokens (phase "load"), prefills a synthetic
 * prompt of L - n_decode tokens (phase "prefill") and decodes n_decode
 * tokens one by one (phase "decode"), so the last token fills the context.
 * Each phase starts from fresh peaks (lp_mem_reset_peaks) and yields one
 * row: peaks per tag, tracked total peak, resident set size, time, speed,
 * and the planner's prediction (plan.h) for that length. A context that
 * the budget refuses marks its three rows "over budget" and the probe goes
 * on to the next length, so the report shows where the budget is crossed.
 *
 * Rows are small and plainly malloc'd: they are not model memory and must
 * not disturb what is being measured.
 */
#ifndef LP_MODEL_PROBE_H
#define LP_MODEL_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include "backend/backend.h"
#include "core/mem.h"
#include "core/status.h"
#include "model/model.h"

enum lp_probe_phase { LP_PROBE_LOAD, LP_PROBE_PREFILL, LP_PROBE_DECODE, LP_PROBE_NPHASES };

/* "load", "prefill", "decode". */
const char *lp_probe_phase_name(enum lp_probe_phase ph);

struct lp_probe_params {
	uint32_t min_ctx, max_ctx;  /* tokens; max 0: the training context */
	uint32_t n_decode;          /* tokens decoded after the prefill */
	enum lp_qtype kv_type;      /* LP_Q_F32, LP_Q_F16 or LP_Q_Q8_0 */
	int n_threads;              /* <= 0: online CPUs */
	size_t other;               /* metadata bytes, for the prediction */
	struct lp_backend *device;  /* run every layer here (a GPU) and measure
				     * device memory; NULL: the CPU */
};

/* 128 .. training context, decode 16, F16, all CPUs. */
struct lp_probe_params lp_probe_default_params(void);

struct lp_probe_row {
	uint32_t n_ctx;              /* tokens */
	enum lp_probe_phase phase;
	int ok;                      /* 0: over budget (or out of memory) */
	uint32_t tokens;             /* evaluated in this phase */
	double seconds, tokens_per_s;
	size_t peak[LP_MEM_NTAGS];   /* bytes, per tag */
	size_t tracked_peak;         /* bytes, all host tags (the device's with
				      * params.device) */
	size_t rss;                  /* resident bytes at the end of the phase */
	size_t rss_peak;             /* process peak resident bytes so far (it
				      * cannot be reset, so it only grows) */
	size_t predicted;            /* bytes, the planner's total (device) */
};

struct lp_probe {
	struct lp_probe_params p;
	struct lp_probe_row *rows;   /* n_rows, by length then phase */
	size_t n_rows;
	size_t budget;               /* lp_mem_budget() during the run (the
				      * device's with params.device); 0: none */
};

/*
 * Measure `m`. On success *out is owned by the caller (lp_probe_free);
 * rows over budget are data, not failures. Returns LP_E_USAGE for bad
 * lengths or an unusable KV type, LP_E_NOMEM when the rows themselves
 * cannot be allocated, or the status of a failed evaluation.
 */
enum lp_status lp_probe_run(const struct lp_model *m, const struct lp_probe_params *p,
			    struct lp_probe **out, struct lp_diag *d);
void lp_probe_free(struct lp_probe *pr);

/* How tracked memory grows with the context (over the rows that fit). */
struct lp_probe_fit {
	int n_points;         /* lengths that fit */
	int linear;           /* 1 linear, 0 super-linear, -1 too few points */
	double a, b, c;       /* bytes = a + b*n + c*n^2, least squares */
	double quad_share;    /* c*n^2 / (|b*n| + |c*n^2|) at the largest n;
			       * negative for a concave curve */
	double step_ratio;    /* bytes per token over the last step / over the
			       * step before (1 linear, 2 quadratic on doubling
			       * lengths); 0 if unknown */
	uint32_t cross_ctx;   /* first length over budget; 0: none/no budget */
	int cross_measured;   /* 1: a row failed there; 0: extrapolated */
};

/* Fit the peak tracked bytes (largest over phases) against length.
 * Linear when the quadratic term is under 5% of the growth. */
void lp_probe_analyze(const struct lp_probe *pr, struct lp_probe_fit *f);

#endif
