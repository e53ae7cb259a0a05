/*
 * runs.h - the runs of lpipe serve: the table, the queue, admission under
 * one memory budget, the workers, cancellation and progress.
 *
 * Admission. Each run has a planned peak (plan.h): its own part, and the
 * model it opens, shared by every run of the same model. The engine keeps
 * a model loaded after its run (lpipe_engine_new keep_models 1), so the
 * next runs of it do not load it again, and admission counts a kept model
 * for as long as it is kept. A run starts only when a worker is free
 * (--jobs) and the planned bytes of the runs running, of the kept models
 * (each counted once) and its own fit in the capacity: the budget less the
 * document cache's cap (docs.h) and the room for reports (below). When
 * they do not, the kept models that no running run uses are unloaded
 * (lpipe_engine_unload), least recently started first, as far as that
 * makes the run fit. Otherwise it waits in a
 * queue, first in first out: the head waits until it fits and nothing
 * passes it, so a large run is not starved by small ones. A full queue
 * refuses a new run (429, with a Retry-After from the mean run time); a
 * run whose plan exceeds the capacity even alone is refused at once
 * (413, naming the bytes it would need). The tracked allocator holds the
 * budget in any case: an allocation that fails inside a run fails that
 * run alone, with the phase in its message. LPIPE_FAIL_ALLOC_RUN=K:N makes
 * the N-th tracked allocation of the K-th run started fail
 * (core/mem.h lp_mem_fail_thread_after), for the test of that.
 *
 * A run is queued, running, then done (LPIPE_OK or LPIPE_VERIFY: the
 * report is there), failed (the library's message) or cancelled. Cancel
 * takes a queued run out of the queue at once and asks a running one to
 * stop at its next step, inside its stage (core/cancel.h). Finished runs are kept for
 * GET: the newest LP_SERVE_KEEP_RUNS of them, their reports in tracked
 * memory within a room of their own (1/LP_SERVE_REPORTS_SHARE of the
 * budget, also kept out of admission's capacity), the oldest finished
 * runs dropped first to make room; a report that cannot fit fails its run.
 *
 * Progress: the worker observes its thread's progress (core/progress.h)
 * and keeps the last snapshot in the run; each change of stage or state,
 * and at most five updates a second, makes a new event that
 * lp_serve_runs_wait hands to the readers of GET /v1/runs/ID/events.
 *
 * Draining (SIGTERM): lp_serve_runs_drain stops admission (a new run is
 * refused with 503), cancels what is queued, lets the running runs finish
 * within a timeout and then cancels them too, waiting at most
 * LP_SERVE_CANCEL_GRACE_S more for them to reach their next step. A run
 * still busy after that (inside one long step of the model) is
 * abandoned: the process exits without it. Thread-safe throughout.
 */
#ifndef LP_SERVE_RUNS_H
#define LP_SERVE_RUNS_H

#include <jansson.h>
#include <stddef.h>

#include "serve/docs.h"
#include "serve/metrics.h"
#include "serve/request.h"

struct lp_mem_account;

#define LP_SERVE_KEEP_RUNS 1000
#define LP_SERVE_REPORTS_SHARE 16
#define LP_SERVE_CANCEL_GRACE_S 5.0

struct lp_serve_runs;
struct lp_serve_run;

struct lp_serve_runs_config {
	const char *pipelines_dir; /* the pipelines clients may name */
	size_t budget;             /* bytes, > 0 */
	int jobs;                  /* runs at once, >= 1 */
	size_t queue;              /* runs waiting at most */
};

/* Plan every pipeline of the directory, start the workers. LP_OK and
 * *out; LP_E_IO for an unreadable directory, LP_E_NOMEM. A pipeline that
 * does not load is left out with a warning. */
enum lp_status lp_serve_runs_new(const struct lp_serve_runs_config *c, struct lp_serve_docs *docs,
				 struct lp_serve_runs **out, struct lp_diag *d);
/* Cancel everything, join the workers, free; NULL is a no-op. */
void lp_serve_runs_free(struct lp_serve_runs *r);
/* The engine's memory account (api/internal.h): the one budget that the
 * runs, the uploads and the results share; threads that allocate for
 * them are put on it. NULL for NULL. */
struct lp_mem_account *lp_serve_runs_account(struct lp_serve_runs *r);

/* What a submission came to. */
struct lp_serve_submit {
	unsigned status;         /* 202, or 400, 404, 413, 429, 503 */
	char id[33];             /* the run's id when 202 */
	unsigned retry_after;    /* seconds, for 429 */
	char message[1200];      /* why, when not 202 */
};

/* Submit `req` on the document it names (documents are looked up in the
 * store). Fills *out; never fails otherwise. */
void lp_serve_runs_submit(struct lp_serve_runs *r, const struct lp_serve_run_req *req,
			  struct lp_serve_submit *out);

/* The JSON of run `id` (state, timings, progress, error, and the report
 * under "result" once done), malloc'd; NULL when there is no such run. */
char *lp_serve_runs_describe(struct lp_serve_runs *r, const char *id);
/* Cancel run `id`: 1 when it was queued or running (it is or will be
 * cancelled), 2 when it had ended already, 0 when there is none. */
int lp_serve_runs_cancel(struct lp_serve_runs *r, const char *id);

/* The pipelines offered, as a JSON array (malloc'd). */
char *lp_serve_runs_pipelines(struct lp_serve_runs *r);

/* Hold run `id` for reading its events (NULL: none); release after. */
struct lp_serve_run *lp_serve_runs_hold(struct lp_serve_runs *r, const char *id);
void lp_serve_runs_release(struct lp_serve_runs *r, struct lp_serve_run *run);
/*
 * Wait up to `timeout_s` for an event of `run` newer than *seq. Returns 1
 * with the event's name ("progress" or "state") and its JSON data
 * (malloc'd, in *data) and *seq advanced; 0 on timeout; -1 when the run
 * has ended and its last event was delivered.
 */
int lp_serve_runs_wait(struct lp_serve_runs *r, struct lp_serve_run *run, unsigned long *seq,
		       double timeout_s, const char **event, char **data);

void lp_serve_runs_gauges(struct lp_serve_runs *r, struct lp_serve_gauges *g);
/* Stop admission and wind down within `timeout_s` (above). Returns the
 * runs still running: lp_serve_runs_free would wait for them. */
size_t lp_serve_runs_drain(struct lp_serve_runs *r, double timeout_s);
int lp_serve_runs_draining(struct lp_serve_runs *r);

#endif
