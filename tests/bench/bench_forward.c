/* bench_forward.c - time the forward pass alone, for bench/llm:
 *     bench_forward MODEL N_PROMPT N_GEN THREADS [map|stream]
 * evaluates N_PROMPT fixed token ids as one prompt, then N_GEN single
 * tokens (fed, not sampled, so that no sampler is timed), and prints
 * "pp_tps X" and "tg_tps Y" (tokens per second), then "weights_bytes" (the
 * tracked weights), "rss_bytes" (resident now) and "rss_peak_bytes", and
 * "kernels" with the name of the CPU kernel set (avx512, avx2, scalar);
 * also "pp_cpu_s" and "tg_cpu_s", the process's CPU seconds of each phase,
 * and "logits_hash", an FNV-1a hash of the last step's logits' bytes (two
 * builds that compute the same floats print the same hash); "step_bytes",
 * the weight bytes one decode step reads (every matrix once, the output
 * included), and "kv_pos_bytes", the cache bytes it reads per cached
 * position, for bench/llm's decode floor.
 *     bench_forward --bandwidth THREADS
 * prints "read_gbs", the best of a few passes of THREADS threads summing
 * a 512 MiB buffer (more than any cache) each its own slice.
 * `stream` opens the model with its weights streamed a layer at a time. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/matvec.h"
#include "core/mem.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/kvcache.h"
#include "model/model.h"

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU seconds of the whole process (every thread): on a loaded machine
 * they swing less than wall times (spinning threads count in them). */
static double cpu_s(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* ---- read bandwidth ---- */

struct slice {
	const uint64_t *p;
	size_t n;
	uint64_t sum;
};

/* Four 32-byte lanes of sums: wide loads, as the kernels make them. */
typedef uint64_t u64x4 __attribute__((vector_size(32)));

#if defined(__x86_64__)
__attribute__((target("avx2")))
#endif
static void *sum_slice(void *arg)
{
	struct slice *s = arg;
	u64x4 a0 = { 0 }, a1 = a0, a2 = a0, a3 = a0, v;

	for (size_t i = 0; i + 16 <= s->n; i += 16) {
		memcpy(&v, s->p + i, 32), a0 += v;
		memcpy(&v, s->p + i + 4, 32), a1 += v;
		memcpy(&v, s->p + i + 8, 32), a2 += v;
		memcpy(&v, s->p + i + 12, 32), a3 += v;
	}
	a0 += a1 + a2 + a3;
	s->sum = a0[0] + a0[1] + a0[2] + a0[3];
	return NULL;
}

static int bandwidth(int threads)
{
	size_t bytes = (size_t)512 << 20, n = bytes / sizeof(uint64_t), per;
	uint64_t *buf = malloc(bytes), check = 0;
	struct slice sl[64];
	pthread_t th[64];
	double best = 0;

	if (!buf || threads < 1 || threads > 64)
		return 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = i;
	per = n / (size_t)threads / 16 * 16;
	for (int pass = 0; pass < 5; pass++) {
		double t0 = now_s(), t;
		for (int i = 0; i < threads; i++) {
			sl[i] = (struct slice){ buf + (size_t)i * per, per, 0 };
			pthread_create(&th[i], NULL, sum_slice, &sl[i]);
		}
		for (int i = 0; i < threads; i++) {
			pthread_join(th[i], NULL);
			check += sl[i].sum;
		}
		t = now_s() - t0;
		if (per * threads * sizeof(uint64_t) / t > best)
			best = per * threads * sizeof(uint64_t) / t;
	}
	printf("read_gbs %.2f\n", best / 1e9);
	fprintf(stderr, "(sum %llu)\n", (unsigned long long)check);  /* keeps the reads */
	free(buf);
	return 0;
}

static size_t tensor_bytes(const struct lp_tensor *t)
{
	return t->rows * t->row_bytes;
}

/* Weight bytes a decode step reads: every layer's matrices and norms,
 * the output matrix and its norm (one row of the embedding besides). */
static size_t step_bytes(const struct lp_model *m)
{
	size_t b = tensor_bytes(&m->output) + m->hp.n_embd * sizeof(float);

	for (uint32_t il = 0; il < m->hp.n_layer; il++) {
		const struct lp_layer *l = &m->layers[il];
		b += tensor_bytes(&l->wq) + tensor_bytes(&l->wk) + tensor_bytes(&l->wv) +
		     tensor_bytes(&l->wo) + tensor_bytes(&l->w_gate) + tensor_bytes(&l->w_up) +
		     tensor_bytes(&l->w_down) + 2 * m->hp.n_embd * sizeof(float);
		if (l->bq)
			b += (l->wq.rows + 2 * l->wk.rows) * sizeof(float);
	}
	return b;
}

/* FNV-1a over n bytes: a change to any bit of the logits changes it. */
static unsigned long long fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	unsigned long long h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The resident-set lines of /proc/self/status, as "rss_file_kb N". */
static void print_status(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256], key[64];
	long kb;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Rss%63[A-Za-z]: %ld", key, &kb) == 2)
			printf("rss_%s_kb %ld\n", key, kb);
	fclose(f);
}

int main(int argc, char **argv)
{
	struct lp_diag d;
	struct lp_gguf *g;
	struct lp_model *m;
	struct lp_forward *c;
	struct lp_forward_params p = lp_forward_default_params();
	int32_t *ids;
	long n_prompt, n_gen;
	double t0, t1, t2, c0, c1, c2;

	int stream;

	if (argc == 3 && !strcmp(argv[1], "--bandwidth"))
		return bandwidth(atoi(argv[2]));
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: bench_forward MODEL N_PROMPT N_GEN THREADS [map|stream]\n"
				"       bench_forward --bandwidth THREADS\n");
		return 2;
	}
	stream = argc == 6 && !strcmp(argv[5], "stream");
	n_prompt = atol(argv[2]);
	n_gen = atol(argv[3]);
	p.n_threads = atoi(argv[4]);
	p.n_ctx = (uint32_t)(n_prompt + n_gen + 1);
	lp_diag_init(&d);
	if ((stream ? lp_gguf_open_streamed(argv[1], &g, &d) : lp_gguf_open(argv[1], &g, &d)) ||
	    lp_model_load(g, &m, &d) ||
	    lp_forward_new(m, &p, &c, &d)) {
		lp_diag_print(&d, stderr);
		return 1;
	}
	ids = malloc((size_t)(n_prompt + n_gen) * sizeof(*ids));
	for (long i = 0; i < n_prompt + n_gen; i++)
		ids[i] = (int32_t)((i * 7919 + 13) % m->hp.n_vocab);
	t0 = now_s(), c0 = cpu_s();
	if (lp_forward_eval(c, ids, (size_t)n_prompt, 0, NULL, &d))
		goto fail;
	t1 = now_s(), c1 = cpu_s();
	for (long i = 0; i < n_gen; i++)
		if (lp_forward_eval(c, ids + n_prompt + i, 1, (uint32_t)(n_prompt + i), NULL, &d))
			goto fail;
	t2 = now_s(), c2 = cpu_s();
	printf("pp_tps %.2f\ntg_tps %.2f\n", n_prompt / (t1 - t0), n_gen / (t2 - t1));
	printf("pp_cpu_s %.4f\ntg_cpu_s %.4f\n", c1 - c0, c2 - c1);
	printf("weights_bytes %zu\nrss_bytes %zu\nrss_peak_bytes %zu\n",
	       lp_mem_current(LP_MEM_WEIGHTS), lp_mem_current_rss(), lp_mem_peak_rss());
	print_status();
	printf("step_bytes %zu\nkv_pos_bytes %zu\n", step_bytes(m),
	       lp_kvcache_bytes_per_token(m->hp.n_layer, m->hp.n_head_kv * m->hp.head_dim,
					  m->hp.head_dim, p.kv_type));
	printf("logits_hash %016llx\n",
	       fnv1a(lp_forward_logits(c), (size_t)m->hp.n_vocab * sizeof(float)));
	/* the CPU kernel set (a word, not a figure: bench/llm prints it) */
	printf("kernels %s\n", lp_matvec_kernel_name());
	free(ids);
	lp_forward_free(c);
	lp_model_free(m);
	lp_gguf_close(g);
	return 0;
fail:
	lp_diag_print(&d, stderr);
	return 1;
}
