#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* Spin iterations before a waiting worker sleeps: long enough to cover
 * the gap between two matrix products of one token, short enough not to
 * take a core from the caller when the machine is oversubscribed. */
#define SPIN_LIMIT 4000

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
	pthread_cond_t cv;
	_Atomic uint64_t state;
	atomic_int stop;
	/* The current loop; written while the previous one is closed. */
	lp_pool_fn fn;
	void *arg;
	size_t len, chunk;
	atomic_size_t next;        /* first unclaimed index */
};

int lp_pool_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

static void run_chunks(struct lp_pool *p, int tid)
{
	size_t b;

	while ((b = atomic_fetch_add(&p->next, p->chunk)) < p->len) {
		size_t e = b + p->chunk < p->len ? b + p->chunk : p->len;
		p->fn(p->arg, b, e, tid);
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
		run_chunks(p, w->tid);
		atomic_fetch_sub_explicit(&p->state, 1, memory_order_release);
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
	size_t chunk;
	uint64_t s;

	if (n == 0)
		return;
	if (grain == 0)
		grain = 1;
	if (!p || p->n == 1 || n <= grain) {
		fn(arg, 0, n, 0);
		return;
	}
	/* About four chunks per thread: enough to balance, few enough that
	 * claiming them costs nothing. */
	chunk = (n + (size_t)p->n * 4 - 1) / ((size_t)p->n * 4);
	chunk = (chunk + grain - 1) / grain * grain;
	/* The previous loop is closed: no worker reads these now. */
	p->fn = fn;
	p->arg = arg;
	p->len = n;
	p->chunk = chunk;
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
	s = atomic_load_explicit(&p->state, memory_order_acquire);
	for (unsigned i = 1;; i++) {
		if (!(s & ACTIVE_MASK) &&
		    atomic_compare_exchange_weak_explicit(&p->state, &s, s | CLOSED,
							  memory_order_acq_rel,
							  memory_order_acquire))
			break;
		cpu_relax();
		if (i % 1024 == 0)
			sched_yield(); /* a worker may be waiting for this core */
		s = atomic_load_explicit(&p->state, memory_order_acquire);
	}
}
