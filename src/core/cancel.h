/*
 * cancel.h - asking the work of one thread to stop at its next step.
 *
 * A service runs many documents at once, one per thread, and a client may
 * withdraw one of them. The thread that runs it watches a flag
 * (lp_cancel_watch); whoever wants it stopped sets the flag from any
 * thread. The runner (api/runner.h) looks at it before each stage, and
 * the loops inside a stage at each of their steps (lp_cancel_check): a
 * model session before each generation and each decoded token, a request
 * to a model server while it waits for the reply, the embedder between
 * batches of chunks. So a run stops at its next step, never in the middle
 * of one, and what it allocated is freed by the ordinary failure path, as
 * for any other error.
 *
 * The flag is the caller's (an atomic int that outlives the watch); the
 * watch is per thread, and a thread that watches none is never cancelled.
 */
#ifndef LP_CORE_CANCEL_H
#define LP_CORE_CANCEL_H

#include <stdatomic.h>

#include "core/status.h"

/* Watch `flag` (NULL: none) on the calling thread; a non-zero value asks
 * for the stop. */
void lp_cancel_watch(atomic_int *flag);
/* 1 when the calling thread's flag is set, else 0. */
int lp_cancel_requested(void);
/* LP_OK when the calling thread may go on; else LP_E_INTERNAL with "run
 * cancelled WHERE" in `d` (may be NULL; WHERE such as "in decode"), for
 * the caller to return as it returns any error. */
enum lp_status lp_cancel_check(const char *where, struct lp_diag *d);

#endif
