/*
 * cancel.h - asking the work of one thread to stop at its next step.
 *
 * A service runs many documents at once, one per thread, and a client may
 * withdraw one of them. The thread that runs it watches a flag
 * (lp_cancel_watch); whoever wants it stopped sets the flag from any
 * thread. The runner (api/runner.h) looks at it before each stage, so a
 * run stops between two steps, never inside one: what a stage allocated
 * is freed by the ordinary failure path, as for any other error.
 *
 * The flag is the caller's (an atomic int that outlives the watch); the
 * watch is per thread, and a thread that watches none is never cancelled.
 */
#ifndef LP_CORE_CANCEL_H
#define LP_CORE_CANCEL_H

#include <stdatomic.h>

/* Watch `flag` (NULL: none) on the calling thread; a non-zero value asks
 * for the stop. */
void lp_cancel_watch(atomic_int *flag);
/* 1 when the calling thread's flag is set, else 0. */
int lp_cancel_requested(void);

#endif
