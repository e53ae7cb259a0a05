/*
 * bench_embed.c - tests/gpu/run.sh's retrieval figures: MiniLM chunks
 * embedded per second on a backend, and query latency over a large
 * device index.
 *
 *   bench_embed embed MODEL_DIR TEXT_FILE DEVICE N_CHUNKS
 *       cut TEXT_FILE into chunks of 100 words (the file read again from
 *       its start when it runs out), embed N_CHUNKS of them on DEVICE
 *       ("cuda" or "cpu", every online CPU) after a warm-up of 64, print
 *       "embed DEVICE chunks N seconds S chunks_s R".
 *   bench_embed query DEVICE N_ROWS DIM K
 *       N_ROWS random unit vectors of DIM in a device index (vecdev.h),
 *       then 1 and 1000 random queries, top-K, best of 5 runs each (the
 *       whole call: upload, product, top-k, download), print
 *       "query DEVICE nq NQ ms T".
 * Exit 0, or 1 with a message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "core/fileio.h"
#include "core/mem.h"
#include "retrieve/bert.h"
#include "retrieve/vecdev.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fail(const char *what, const struct lp_diag *d)
{
	fprintf(stderr, "bench_embed: %s: %s\n", what, d->msg);
	return 1;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

static struct lp_backend *open_be(const char *device, struct lp_diag *d)
{
	struct lp_backend_params p = lp_backend_default_params();
	struct lp_backend *be = NULL;

	return lp_backend_open(device, &p, &be, d) == LP_OK ? be : NULL;
}

static int embed(const char *dir, const char *file, const char *device, size_t n)
{
	struct lp_mapped mp;
	struct lp_diag d;
	struct lp_backend *be;
	struct lp_bert *m;
	const char **texts = calloc(n, sizeof(*texts));
	size_t *lens = calloc(n, sizeof(*lens)), at = 0;
	float *out;
	double t0, t;

	lp_diag_init(&d);
	if (lp_file_map(file, LP_FILE_MODEL, LP_MEM_OTHER, &mp, &d))
		return fail(file, &d);
	for (size_t i = 0; i < n; i++) {
		size_t w = 0, start;
		while (at < mp.len && is_ws(((const char *)mp.data)[at]))
			at++;
		if (at >= mp.len) {
			at = 0;
			i--;
			continue;
		}
		start = at;
		while (at < mp.len && w < 100) {
			while (at < mp.len && !is_ws(((const char *)mp.data)[at]))
				at++;
			w++;
			while (w < 100 && at < mp.len && is_ws(((const char *)mp.data)[at]))
				at++;
		}
		texts[i] = (const char *)mp.data + start;
		lens[i] = at - start;
	}
	if (!(be = open_be(device, &d)))
		return fail(device, &d);
	if (lp_bert_load_on(dir, be, &m, &d))
		return fail(dir, &d);
	out = malloc(n * lp_bert_dim(m) * sizeof(float));
	if (lp_bert_embed(m, texts, lens, n < 64 ? n : 64, out, &d))
		return fail("warm-up", &d);
	t0 = now();
	if (lp_bert_embed(m, texts, lens, n, out, &d))
		return fail("embed", &d);
	t = now() - t0;
	printf("embed %s chunks %zu seconds %.3f chunks_s %.1f\n", device, n, t, n / t);
	printf("device %s %s\n", device, be->device);
	lp_bert_free(m);
	lp_backend_free(be);
	free(out);
	free(texts);
	free(lens);
	lp_file_unmap(&mp);
	return 0;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static float frand(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((rng >> 40) & 0xffffff) / 8388608.0f - 1.0f;
}

static void unit_rows(float *v, size_t n, size_t dim)
{
	for (size_t r = 0; r < n; r++) {
		double ss = 0;
		for (size_t j = 0; j < dim; j++) {
			v[r * dim + j] = frand();
			ss += (double)v[r * dim + j] * v[r * dim + j];
		}
		for (size_t j = 0; j < dim; j++)
			v[r * dim + j] = (float)(v[r * dim + j] / sqrt(ss));
	}
}

static int query(const char *device, size_t n, size_t dim, size_t k)
{
	static const size_t nqs[] = { 1, 1000 };
	const size_t block = 65536;
	struct lp_diag d;
	struct lp_backend *be;
	struct lp_vecdev *v;
	float *rows = malloc(block * dim * sizeof(float)), *q = malloc(1000 * dim * sizeof(float));
	size_t *idx = malloc(1000 * k * sizeof(size_t)), kept;

	lp_diag_init(&d);
	if (!(be = open_be(device, &d)))
		return fail(device, &d);
	if (!(v = lp_vecdev_new(be, dim, n, &d)))
		return fail("index", &d);
	/* streamed: a block of host rows at a time */
	for (size_t r0 = 0; r0 < n; r0 += block) {
		size_t nr = n - r0 < block ? n - r0 : block;
		unit_rows(rows, nr, dim);
		if (lp_vecdev_append(v, rows, nr, &d))
			return fail("append", &d);
	}
	unit_rows(q, 1000, dim);
	for (size_t c = 0; c < 2; c++) {
		double best = 1e30;
		for (int run = 0; run < 6; run++) {
			double t0 = now(), t;
			if (lp_vecdev_topk(v, q, nqs[c], k, idx, NULL, &kept, &d))
				return fail("top-k", &d);
			t = (now() - t0) * 1e3;
			if (run > 0 && t < best) /* the first run makes the buffers */
				best = t;
		}
		printf("query %s nq %zu rows %zu k %zu ms %.3f\n", device, nqs[c], n, k, best);
	}
	printf("peak_gpu_embed_bytes %zu\n", lp_mem_peak(LP_MEM_GPU_EMBED));
	lp_vecdev_free(v);
	lp_backend_free(be);
	free(rows);
	free(q);
	free(idx);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "embed"))
		return embed(argv[2], argv[3], argv[4], (size_t)atol(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "query"))
		return query(argv[2], (size_t)atol(argv[3]), (size_t)atol(argv[4]),
			     (size_t)atol(argv[5]));
	fprintf(stderr, "usage: bench_embed embed MODEL_DIR TEXT_FILE DEVICE N\n"
			"       bench_embed query DEVICE N_ROWS DIM K\n");
	return 2;
}
