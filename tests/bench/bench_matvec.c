/*
 * bench_matvec.c - lp_matvec (dispatched kernels) against lp_matvec_ref
 * (scalar) on model-sized matrices, one thread. Built, not run, by
 * `make check`; run by hand: tests/bench/bench_matvec [seconds per case [type]]
 * Prints weight GB/s and rows/s per type and shape, timed in thread CPU
 * time so that other load on the machine disturbs the figures less.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/matvec.h"
#include "quant/quant.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef void (*matvec_fn)(enum lp_qtype, const void *, size_t, size_t, const float *,
			  const struct lp_q8_act *, float *);

/* Seconds per call, over at least `budget` seconds. */
static double time_it(matvec_fn f, enum lp_qtype t, const void *w, size_t rows, size_t cols,
		      const float *x, const struct lp_q8_act *a, float *y, double budget)
{
	double t0 = now(), t1;
	long calls = 0;

	do {
		f(t, w, rows, cols, x, a, y);
		calls++;
		t1 = now();
	} while (t1 - t0 < budget);
	return (t1 - t0) / (double)calls;
}

int main(int argc, char **argv)
{
	static const enum lp_qtype types[] = { LP_Q_Q4_0, LP_Q_Q4_1, LP_Q_Q5_0, LP_Q_Q5_1,
					       LP_Q_Q8_0, LP_Q_Q4_K, LP_Q_Q5_K, LP_Q_Q6_K,
					       LP_Q_F16, LP_Q_BF16, LP_Q_F32 };
	/* rows x cols: output projection (vocab), ffn up/gate, ffn down */
	static const size_t shapes[][2] = { { 49152, 576 }, { 1536, 576 }, { 576, 1536 } };
	double budget = argc > 1 ? atof(argv[1]) : 0.5;

	printf("kernel: %s\n", lp_matvec_kernel_name());
	printf("%-5s %13s %9s %10s %10s %9s %8s\n", "type", "rows x cols", "MiB",
	       "fast GB/s", "ref GB/s", "rows/s", "speedup");
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
			enum lp_qtype t = types[k];
			size_t rows = shapes[s][0], cols = shapes[s][1];
			size_t be = lp_qtype_block_elems(t), rb, bytes;
			float *x, *y, *row;
			unsigned char *w;
			struct lp_q8_act a;
			double tf, tr;

			if (argc > 2 && strcmp(argv[2], lp_qtype_name(t)))
				continue;
			cols = (cols + be - 1) / be * be; /* K types: 576 -> 768 */
			rb = lp_qtype_row_bytes(t, cols);
			bytes = rb * rows;
			w = malloc(bytes);
			x = malloc(cols * sizeof(float));
			y = malloc(rows * sizeof(float));
			row = malloc(cols * sizeof(float));
			srand(7);
			for (size_t r = 0; r < rows; r++) {
				for (size_t c = 0; c < cols; c++)
					row[c] = (float)rand() / RAND_MAX - 0.5f;
				lp_quantize_row(t, row, w + r * rb, cols);
			}
			for (size_t c = 0; c < cols; c++)
				x[c] = (float)rand() / RAND_MAX - 0.5f;
			a.cap_bytes = lp_q8_act_bytes(t, cols);
			a.blocks = malloc(a.cap_bytes + 1);
			lp_q8_act_quantize(t, x, cols, &a);
			tf = time_it(lp_matvec, t, w, rows, cols, x, &a, y, budget);
			tr = time_it(lp_matvec_ref, t, w, rows, cols, x, &a, y, budget / 2);
			printf("%-5s %6zu x %4zu %9.2f %10.2f %10.2f %9.3g %7.1fx\n", lp_qtype_name(t),
			       rows, cols, bytes / 1048576.0, bytes / tf * 1e-9, bytes / tr * 1e-9,
			       rows / tf, tr / tf);
			free(w);
			free(x);
			free(y);
			free(row);
			free(a.blocks);
		}
	}
	return 0;
}
