/*
 * progress.h - "done / total, rate, ETA" on stderr for long work.
 *
 * Shown only when enabled (lp_progress_enable: by default when stderr is a
 * terminal and --quiet is not given; forced with --progress). Updates are
 * rate-limited to a few per second and redraw one line; lp_progress_end
 * finishes the line.
 */
#ifndef LP_PROGRESS_H
#define LP_PROGRESS_H

#include <stddef.h>

struct lp_progress {
	const char *what;   /* "split", "summarize level 1", ... */
	const char *unit;   /* "chunks", "tokens", "docs" */
	size_t total;       /* 0 when unknown */
	size_t done;
	double start_s;     /* monotonic seconds */
	double last_draw_s;
	int active;
	/* Set by the caller after lp_progress_begin (both start empty): */
	const char *detail; /* appended to the line ("2 failed, 1.3 MB/s"), or NULL */
	int lines;          /* 1: each draw is a line of its own, at most one
			     * every 2 s (a log, not a terminal) */
};

/* Global switch: -1 auto (tty), 0 off, 1 on. */
void lp_progress_enable(int mode);
int lp_progress_enabled(void);

void lp_progress_begin(struct lp_progress *p, const char *what, const char *unit, size_t total);
void lp_progress_update(struct lp_progress *p, size_t done);
void lp_progress_end(struct lp_progress *p);

/* Monotonic clock in seconds. */
double lp_now_s(void);

#endif
