/*
 * metrics.h - the counters of lpipe serve, written as Prometheus text.
 *
 * Counted here: refusals by cause, HTTP responses by status, and two
 * latency histograms (seconds a run waited in the queue, seconds from
 * submission to its end). The gauges (queue depth, runs by state, tracked
 * bytes per tag, the budget, the document cache) are read when /metrics
 * is asked for, from their owners, and passed to lp_serve_metrics_write.
 * Thread-safe; the counters only grow.
 */
#ifndef LP_SERVE_METRICS_H
#define LP_SERVE_METRICS_H

#include <stddef.h>

#include "core/buf.h"

/* Why a request was refused (lpipe_serve_rejections_total{cause}). */
enum lp_serve_reject {
	LP_REJ_QUEUE_FULL,   /* 429 */
	LP_REJ_TOO_LARGE,    /* 413: a run that can never fit, or a body over the limit */
	LP_REJ_BAD_REQUEST,  /* 400 */
	LP_REJ_UNAUTHORIZED, /* 401 */
	LP_REJ_NOT_FOUND,    /* 404 */
	LP_REJ_DRAINING,     /* 503 */
	LP_REJ_N
};

/* The gauges of one scrape. */
struct lp_serve_gauges {
	size_t queued, running, done, failed, cancelled;
	size_t planned_bytes;  /* what admitted runs and kept models planned */
	size_t models, model_bytes; /* models kept loaded; their planned bytes */
	size_t models_loaded;  /* models the engine has loaded so far */
	size_t shared_bytes, shared_entries; /* kept of documents: parsed
						* forms and indexes */
	unsigned long long shared_hits, shared_misses;
	size_t doc_bytes, doc_count, doc_cap;
	size_t jobs, queue_cap;
};

void lp_serve_metrics_init(void);
void lp_serve_metrics_reject(enum lp_serve_reject why);
void lp_serve_metrics_status(unsigned status);
/* A run left the queue after `wait_s`; a run ended `total_s` after its
 * submission in state `state` ("done", "failed", "cancelled"). */
void lp_serve_metrics_wait(double wait_s);
void lp_serve_metrics_end(const char *state, double total_s);

/* Append the whole exposition to `out`; LP_OK or LP_E_NOMEM. */
enum lp_status lp_serve_metrics_write(const struct lp_serve_gauges *g, struct lp_buf *out);

#endif
