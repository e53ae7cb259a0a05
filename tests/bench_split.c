/*
 * bench_split.c - time and memory of loading and splitting one document.
 *
 *     tests/bench_split FILE [UNIT [SIZE [OVERLAP [BOUNDARY]]]]
 *
 * Prints the chunk count, seconds for load and split, the tracked peak and
 * the process peak RSS. Built by `make check`, never run by it: timings do
 * not belong in tests. Run it under /usr/bin/time -v for a second opinion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/mem.h"
#include "text/document.h"
#include "text/split.h"

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int lookup(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	fprintf(stderr, "bench_split: unknown name '%s'\n", s);
	exit(2);
}

int main(int argc, char **argv)
{
	struct lp_split_params p = lp_split_default_params();
	struct lp_document doc;
	struct lp_splitter *s;
	struct lp_span *v;
	struct lp_diag d;
	size_t n;
	double t0, t1, t2, c1, c2;
	char peak[32], rss[32];

	if (argc < 2) {
		fprintf(stderr, "usage: bench_split FILE [UNIT [SIZE [OVERLAP [BOUNDARY]]]]\n");
		return 2;
	}
	if (argc > 2)
		p.unit = (enum lp_split_unit)lookup(lp_split_unit_names, argv[2]);
	if (argc > 3)
		p.size = strtoull(argv[3], NULL, 10);
	if (argc > 4)
		p.overlap = strtoull(argv[4], NULL, 10);
	if (argc > 5)
		p.boundary = (enum lp_split_boundary)lookup(lp_split_boundary_names, argv[5]);
	lp_diag_init(&d);
	t0 = clock_s(CLOCK_MONOTONIC);
	if (lp_document_load(argv[1], LP_UTF8_REPLACE, &doc, &d) ||
	    lp_split_new(&p, &s, &d)) {
		lp_diag_print(&d, stderr);
		return 1;
	}
	t1 = clock_s(CLOCK_MONOTONIC);
	c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	if (lp_split_run(s, doc.text, doc.len, &v, &n, &d)) {
		lp_diag_print(&d, stderr);
		return 1;
	}
	t2 = clock_s(CLOCK_MONOTONIC);
	c2 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	printf("%s: %zu bytes, unit %s size %zu overlap %zu boundary %s\n", argv[1], doc.len,
	       lp_split_unit_names[p.unit], p.size, p.overlap, lp_split_boundary_names[p.boundary]);
	printf("chunks %zu, load %.3f s, split %.3f s wall, %.3f s cpu (%.1f MB/s of cpu), "
	       "tracked peak %s, peak rss %s\n",
	       n, t1 - t0, t2 - t1, c2 - c1, (double)doc.len / 1e6 / (c2 - c1),
	       lp_mem_format_size(lp_mem_peak_total(), peak, sizeof(peak)),
	       lp_mem_format_size(lp_mem_peak_rss(), rss, sizeof(rss)));
	lp_mem_free(v);
	lp_split_free(s);
	lp_document_release(&doc);
	return 0;
}
