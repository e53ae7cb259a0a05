/*
 * threadpool.h - a small persistent pool of worker threads with one
 * operation: a parallel for over an index range.
 *
 * The forward pass issues a few hundred short parallel loops per token
 * (one per matrix-vector product), so starting threads per loop would cost
 * more than the work. The workers are started once and wait between loops,
 * spinning briefly before they sleep so that back-to-back loops do not pay
 * a wake-up each; the caller, waiting at the end of a loop for a worker
 * still inside it, spins briefly too and then sleeps until it leaves.
 *
 * Invariants: one loop runs at a time, issued from the thread that owns
 * the pool (not reentrant: a loop body must not call lp_pool_for on the
 * same pool). The calling thread takes part as worker 0, so a pool of
 * n threads starts n-1 workers; a pool of 1 runs every loop inline.
 * The workers charge tracked memory to the caller's account (core/mem.h)
 * while they run its loop.
 */
#ifndef LP_CORE_THREADPOOL_H
#define LP_CORE_THREADPOOL_H

#include <stddef.h>

#include "core/status.h"

struct lp_pool;

/* Body of a parallel loop: handle indices [begin, end) on worker `tid`
 * (0 <= tid < lp_pool_size). Each worker may use per-tid scratch. */
typedef void (*lp_pool_fn)(void *arg, size_t begin, size_t end, int tid);

/* Start a pool of `n_threads` (<= 0: the number of online CPUs). On
 * success *out is owned by the caller (free with lp_pool_free); on failure
 * returns LP_E_NOMEM (threads or memory) and fills `d`. */
enum lp_status lp_pool_new(int n_threads, struct lp_pool **out, struct lp_diag *d);
/* Stop and join the workers; NULL is a no-op. */
void lp_pool_free(struct lp_pool *p);
/* Threads taking part in a loop, the caller included. */
int lp_pool_size(const struct lp_pool *p);
/* Number of online CPUs (at least 1). */
int lp_pool_default_threads(void);

/*
 * Run fn over [0, n) split into chunks of a multiple of `grain` indices
 * (0 means 1; only the last chunk may be shorter); returns when every
 * chunk is done. Chunks are claimed dynamically and shrink as the loop
 * ends (each a 1/(2n) share of what is left), so uneven work balances out
 * and the threads finish close together.
 */
void lp_pool_for(struct lp_pool *p, size_t n, size_t grain, lp_pool_fn fn, void *arg);

#endif
