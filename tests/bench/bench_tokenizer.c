/*
 * bench_tokenizer.c - tokenization speed of a model's vocabulary on a file.
 *
 *     tests/bench/bench_tokenizer MODEL.gguf TEXT [REPS]
 *
 * Prints one line: bytes, tokens, best seconds of REPS runs (default 5) and
 * MB/s, excluding the model load. tokenizer-speed.py runs it beside the
 * Python peers. Not a test: timings do not belong in `make check`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/fileio.h"
#include "core/mem.h"
#include "model/gguf.h"
#include "model/tokenizer.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct lp_diag d;
	struct lp_gguf *g;
	struct lp_tok *tok;
	struct lp_mapped m;
	size_t n = 0;
	int reps = argc > 3 ? atoi(argv[3]) : 5;
	double best = 1e30;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_tokenizer MODEL.gguf TEXT [REPS]\n");
		return 2;
	}
	lp_diag_init(&d);
	if (lp_gguf_open(argv[1], &g, &d) || lp_tok_from_gguf(g, &tok, &d) ||
	    lp_file_map(argv[2], LP_FILE_DOCUMENT, LP_MEM_DOC, &m, &d)) {
		lp_diag_print(&d, stderr);
		return 1;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now();

		if (lp_tok_count(tok, (const char *)m.data, m.len, 0, &n, &d)) {
			lp_diag_print(&d, stderr);
			return 1;
		}
		if (now() - t0 < best)
			best = now() - t0;
	}
	printf("lpipe\t%zu bytes\t%zu tokens\t%.4f s\t%.2f MB/s\n", m.len, n, best,
	       (double)m.len / best / 1e6);
	lp_file_unmap(&m);
	lp_tok_free(tok);
	lp_gguf_close(g);
	return 0;
}
