#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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
 * burn a core while the tool is idle. */
#define SPIN_LIMIT 20000

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
	atomic_uint gen;           /* bumped once per loop */
	atomic_int stop;
	/* The current loop; written before gen is bumped. */
	lp_pool_fn fn;
	void *arg;
	size_t len, chunk;
	atomic_size_t next;        /* first unclaimed index */
	atomic_int pending;        /* workers not yet done with this loop */
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

/* Wait until the generation differs from `seen`; returns the new one. */
static unsigned wait_gen(struct lp_pool *p, unsigned seen)
{
	unsigned g;

	for (int i = 0; i < SPIN_LIMIT; i++) {
		g = atomic_load_explicit(&p->gen, memory_order_acquire);
		if (g != seen || atomic_load(&p->stop))
			return g;
		cpu_relax();
	}
	pthread_mutex_lock(&p->mu);
	while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->stop))
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return g;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct lp_pool *p = w->pool;
	unsigned seen = 0;

	for (;;) {
		seen = wait_gen(p, seen);
		if (atomic_load(&p->stop))
			return NULL;
		run_chunks(p, w->tid);
		atomic_fetch_sub_explicit(&p->pending, 1, memory_order_release);
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
	atomic_init(&p->gen, 0);
	atomic_init(&p->stop, 0);
	atomic_init(&p->next, 0);
	atomic_init(&p->pending, 0);
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
	if (chunk < grain)
		chunk = grain;
	p->fn = fn;
	p->arg = arg;
	p->len = n;
	p->chunk = chunk;
	atomic_store(&p->next, 0);
	atomic_store(&p->pending, p->n - 1);
	pthread_mutex_lock(&p->mu);
	atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	run_chunks(p, 0);
	for (unsigned i = 1; atomic_load_explicit(&p->pending, memory_order_acquire) > 0; i++) {
		cpu_relax();
		if (i % 4096 == 0)
			sched_yield(); /* a worker may be waiting for this core */
	}
}
