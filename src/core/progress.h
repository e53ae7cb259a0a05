/*
 * progress.h - "done / total, rate, ETA" on stderr for long work.
 *
 * Progress is never written to standard output, so it cannot mix with a
 * result. It has two forms, chosen by what stderr is:
 *
 *  - live (stderr is a terminal): one line, redrawn in place at most a few
 *    times a second ("\r", the text, erase to the end of the line), cut to
 *    the terminal's width so it never wraps. lp_progress_end erases it, so
 *    once the work is done nothing of it is left on the screen; a log
 *    message (core/log.h) erases it first and the next update redraws it.
 *  - plain (stderr is a file or a pipe, progress forced with --progress):
 *    whole lines "lpipe: progress: ...", at most one every
 *    LP_PROGRESS_PLAIN_S seconds while a step runs, and one last line with
 *    its total time when it ends.
 *
 * Whether it is shown at all: lp_progress_enable(-1) (the default) shows it
 * when stderr is a terminal; 1 (--progress) always; 0 (--quiet) never.
 *
 * A line reads, with the parts that are known:
 *
 *     [2/3 summarize] level 1: 3/12 chunks, 41 tok/s, 0:12 elapsed, ETA 0:36
 *
 * The bracket is the stage set with lp_progress_set_stage; "tok/s" counts
 * the model tokens reported with lp_progress_add_tokens since the begin.
 * One progress is current at a time (the last begun and not ended; ending
 * it makes the one before current again); token reports redraw it, so a
 * long generation inside one step still moves. The current progress, the
 * stage label and the token count belong to the calling thread: work run
 * in parallel (one document per thread) keeps its own, and their lines
 * take turns on the one terminal line. lp_progress_enable is meant to be
 * called before any thread starts.
 */
#ifndef LP_PROGRESS_H
#define LP_PROGRESS_H

#include <stddef.h>

/* Plain lines: the least number of seconds between two. */
#define LP_PROGRESS_PLAIN_S 5.0

struct lp_progress {
	const char *what;   /* "split", "summarize level 1", ... */
	const char *unit;   /* "chunks", "tokens", "docs" */
	size_t total;       /* 0 when unknown */
	size_t done;
	double start_s;     /* monotonic seconds */
	double last_draw_s;
	int active;
	size_t tokens0;     /* lp_progress_tokens() at begin */
	int drawn;          /* lines or redraws made */
	struct lp_progress *outer; /* current before this one began */
	/* Set by the caller after lp_progress_begin (starts empty): */
	const char *detail; /* added to the line ("2 failed, 1.3 MB/s"), or NULL */
};

/* Global switch: -1 auto (tty), 0 off, 1 on. */
void lp_progress_enable(int mode);
/* Whether progress is shown at all (see above). */
int lp_progress_enabled(void);
/* Whether it is shown live (redrawn in place on a terminal) rather than
 * as plain lines; meaningful only when lp_progress_enabled(). */
int lp_progress_live(void);

/* Start `p` (caller-owned, no allocation) on `total` units (0: unknown);
 * `what` and `unit` must outlive it. It becomes the current progress. A
 * NULL `unit` counts nothing: the line shows `what` (may be NULL too), the
 * token rate and the time, and plain mode prints no last line for it (the
 * runner's progress of a whole stage). */
void lp_progress_begin(struct lp_progress *p, const char *what, const char *unit, size_t total);
/* `done` units of the total are done; redraws when due. */
void lp_progress_update(struct lp_progress *p, size_t done);
/* Finish `p`: a live line is erased, a plain one gets its last line (only
 * when progress is shown and `p` counts units). Ending a progress that is
 * not active is a no-op. */
void lp_progress_end(struct lp_progress *p);

/* The label of the pipeline stage this thread runs ("2/3 summarize"),
 * shown in brackets before each line; NULL for none. Copied. */
void lp_progress_set_stage(const char *label);
/* Count `n` tokens read or written by a model; the current progress shows
 * their rate and is redrawn when due. */
void lp_progress_add_tokens(size_t n);
/* Tokens this thread has counted since it started. */
size_t lp_progress_tokens(void);
/* Erase the live line, if one is on the screen, before other output goes
 * to stderr; the next update draws it again. No-op otherwise. */
void lp_progress_clear(void);

/*
 * An observer of the calling thread's progress, whether or not it is
 * shown: called after each begin, update and end (`p` the progress, its
 * fields current; `ended` 1 at its end) and after each token report (`p`
 * NULL), with the thread's stage label ("" for none) and token count. A
 * service that streams a run's progress to a client sets one on the
 * thread that runs it; it must not block (it runs inside the stages).
 * NULL removes it. Per thread, like the progress itself.
 */
typedef void (*lp_progress_observer)(void *ctx, const struct lp_progress *p, int ended,
				     const char *stage, size_t tokens);
void lp_progress_observe(lp_progress_observer fn, void *ctx);

/* Format `seconds` as "M:SS" (or "H:MM:SS") into buf; returns buf. */
const char *lp_progress_format_time(double seconds, char *buf, size_t cap);

/* Monotonic clock in seconds. */
double lp_now_s(void);

#endif
