#include "core/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/mem.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* Pauses a waiting worker spins before it sleeps: long enough to cover
 * the gap between two loops of one token (a norm, a rope: a microsecond
 * or two), short enough not to take a core from the caller or another
 * job when the machine is oversubscribed. A pause is about 42 ns on this
 * project's Zen 4, so this is about 21 us; 4000 (170 us) gave SmolLM2's
 * decode at two threads 66 tokens per CPU second on a 2-core machine at
 * load 3, 500 gave 79, with wall times no worse (5 runs each). */
#define SPIN_LIMIT 500

/* Pauses the caller spins, at the end of a loop, for the workers still
 * inside it before it sleeps until the last one leaves. On a machine
 * shared with other jobs a worker is often preempted inside its chunk:
 * spinning (or sched_yield, which keeps the core busy) then burns the
 * caller's share for nothing, while a caller that sleeps leaves its core
 * idle, where the scheduler can move the preempted worker. About 21 us. */
#define CLOSE_SPIN 500

/*
 * The state word: generation (high 32 bits), a "closed" bit, and the number
 * of workers inside the current loop (low 31 bits). A worker enters a loop
 * only by incrementing `active` while the loop is open and still current;
 * the caller closes the loop once it has run out of chunks and no worker is
 * inside. So the caller never waits for a worker that has not woken up
 * (it just does the chunks itself), and a late worker can never read the
 * fields of the next loop half-written.
 */
#define GEN_SHIFT 32
#define CLOSED ((uint64_t)1 << 31)
#define ACTIVE_MASK (CLOSED - 1)

struct worker {
	struct lp_pool *pool;
	int tid;
};

struct lp_pool {
	int n;                     /* threads taking part, caller included */
	pthread_t *threads;        /* n-1 workers */
	struct worker *workers;
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* workers wait here for a loop */
	pthread_cond_t done_cv;    /* the caller waits here for the last worker */
	atomic_int caller_waits;   /* the caller sleeps (or is about to) on done_cv */
	_Atomic uint64_t state;
	atomic_int stop;
	/* The current loop; written while the previous one is closed. */
	lp_pool_fn fn;
	void *arg;
	struct lp_mem_account *acct; /* the caller's: what the workers charge */
	size_t len, grain;
	atomic_size_t next;        /* first unclaimed index */
};

int lp_pool_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/*
 * Claim and run chunks until none is left. A chunk is the share of the
 * indices still unclaimed that one of 2n claims would take (rounded up to
 * the grain), so chunks shrink as the loop ends: the threads finish close
 * together (a decode step's loops are a few microseconds each, and the
 * last chunk of equal quarters kept the other thread waiting for an
 * eighth of one), while the first chunks stay large.
 */
static void run_chunks(struct lp_pool *p, int tid)
{
	size_t b = atomic_load_explicit(&p->next, memory_order_relaxed), share = 2 * (size_t)p->n;

	while (b < p->len) {
		size_t c = (p->len - b + share - 1) / share;
		size_t e;
		c = (c + p->grain - 1) / p->grain * p->grain;
		e = c < p->len - b ? b + c : p->len;
		if (atomic_compare_exchange_weak(&p->next, &b, e)) {
			p->fn(p->arg, b, e, tid);
			b = atomic_load_explicit(&p->next, memory_order_relaxed);
		}
	}
}

static uint32_t gen_of(uint64_t s)
{
	return (uint32_t)(s >> GEN_SHIFT);
}

/* Wait until the generation differs from `seen`; returns the new one. */
static uint32_t wait_gen(struct lp_pool *p, uint32_t seen)
{
	uint32_t g;

	for (int i = 0; i < SPIN_LIMIT; i++) {
		g = gen_of(atomic_load_explicit(&p->state, memory_order_acquire));
		if (g != seen || atomic_load(&p->stop))
			return g;
		cpu_relax();
	}
	pthread_mutex_lock(&p->mu);
	while ((g = gen_of(atomic_load(&p->state))) == seen && !atomic_load(&p->stop))
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return g;
}

/* Join loop `g` if it is still open; 1 when joined. */
static int enter(struct lp_pool *p, uint32_t g)
{
	uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);

	while (gen_of(s) == g && !(s & CLOSED))
		if (atomic_compare_exchange_weak_explicit(&p->state, &s, s + 1,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return 1;
	return 0;
}

/* Leave the current loop; the last worker out wakes a caller that sleeps
 * on it. The caller sets caller_waits before it reads the count again,
 * and this reads it after the decrement (both sequentially consistent),
 * so one of the two sees the other. */
static void leave(struct lp_pool *p)
{
	uint64_t s = atomic_fetch_sub(&p->state, 1);

	if ((s & ACTIVE_MASK) == 1 && atomic_load(&p->caller_waits)) {
		pthread_mutex_lock(&p->mu);
		pthread_cond_broadcast(&p->done_cv);
		pthread_mutex_unlock(&p->mu);
	}
}

/* The caller's end of a loop: wait until no worker is inside, spinning
 * CLOSE_SPIN pauses and then sleeping, and close it. */
static void close_loop(struct lp_pool *p)
{
	uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);

	for (int i = 0;; i++) {
		/* a late worker may still join (and find no chunk left): the
		 * count is read again whenever the exchange fails */
		if (!(s & ACTIVE_MASK)) {
			if (atomic_compare_exchange_weak_explicit(&p->state, &s, s | CLOSED,
								  memory_order_acq_rel,
								  memory_order_acquire))
				return;
			continue;
		}
		if (i < CLOSE_SPIN) {
			cpu_relax();
		} else {
			atomic_store(&p->caller_waits, 1);
			pthread_mutex_lock(&p->mu);
			while (atomic_load(&p->state) & ACTIVE_MASK)
				pthread_cond_wait(&p->done_cv, &p->mu);
			pthread_mutex_unlock(&p->mu);
			atomic_store(&p->caller_waits, 0);
		}
		s = atomic_load_explicit(&p->state, memory_order_acquire);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct lp_pool *p = w->pool;
	uint32_t seen = 0;

	for (;;) {
		seen = wait_gen(p, seen);
		if (atomic_load(&p->stop))
			return NULL;
		if (!enter(p, seen))
			continue;
		lp_mem_account_use(p->acct);
		run_chunks(p, w->tid);
		leave(p);
	}
}

enum lp_status lp_pool_new(int n_threads, struct lp_pool **out, struct lp_diag *d)
{
	struct lp_pool *p;
	int started = 0;

	if (n_threads <= 0)
		n_threads = lp_pool_default_threads();
	p = calloc(1, sizeof(*p));
	if (!p)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate a thread pool");
	p->n = n_threads;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	pthread_cond_init(&p->done_cv, NULL);
	atomic_init(&p->caller_waits, 0);
	atomic_init(&p->state, CLOSED);
	atomic_init(&p->stop, 0);
	atomic_init(&p->next, 0);
	if (n_threads > 1) {
		p->threads = calloc((size_t)n_threads - 1, sizeof(*p->threads));
		p->workers = calloc((size_t)n_threads - 1, sizeof(*p->workers));
		if (!p->threads || !p->workers)
			goto fail;
		for (int i = 0; i < n_threads - 1; i++) {
			p->workers[i] = (struct worker){ p, i + 1 };
			if (pthread_create(&p->threads[i], NULL, worker_main, &p->workers[i]))
				goto fail;
			started++;
		}
	}
	*out = p;
	return LP_OK;
fail:
	p->n = started + 1;
	lp_pool_free(p);
	return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
			   "cannot start %d worker threads", n_threads - 1);
}

void lp_pool_free(struct lp_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->stop, 1);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->n - 1 && p->threads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	pthread_cond_destroy(&p->done_cv);
	free(p->threads);
	free(p->workers);
	free(p);
}

int lp_pool_size(const struct lp_pool *p)
{
	return p ? p->n : 1;
}

void lp_pool_for(struct lp_pool *p, size_t n, size_t grain, lp_pool_fn fn, void *arg)
{
	uint64_t s;

	if (n == 0)
		return;
	if (grain == 0)
		grain = 1;
	if (!p || p->n == 1 || n <= grain) {
		fn(arg, 0, n, 0);
		return;
	}
	/* The previous loop is closed: no worker reads these now. */
	p->fn = fn;
	p->arg = arg;
	p->acct = lp_mem_account_current();
	p->len = n;
	p->grain = grain;
	atomic_store(&p->next, 0);
	s = atomic_load(&p->state);
	pthread_mutex_lock(&p->mu);
	atomic_store_explicit(&p->state, (uint64_t)(gen_of(s) + 1) << GEN_SHIFT,
			      memory_order_release);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	run_chunks(p, 0);
	/* Close the loop once no worker is inside; workers that joined hold
	 * chunks that are not finished yet. */
	close_loop(p);
}
