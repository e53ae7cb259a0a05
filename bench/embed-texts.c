/*
 * embed-texts.c - embed texts with the dense encoder, for benchmarks and
 * spot checks.
 *
 *   embed-texts MODEL_DIR FILE [--chunk-words N] [--group N] [--repeat N]
 *               [--max-texts N] [--threads N] [--out F32_FILE] [--ids]
 *
 * Without --chunk-words every line of FILE is one text; with it the file's
 * words are cut into chunks of N words. Texts are embedded `group` at a time
 * (default 64), so memory stays bounded; --max-texts embeds only the first
 * N (the whole file is still mapped and cut); --threads sets the encoder's
 * threads (default: every online CPU). Prints texts, seconds, texts per
 * second (median of the runs), the tracked peak and the process peak RSS. --out writes the
 * float32 embeddings [n, dim]; --ids prints each text's WordPiece ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/blas.h"
#include "core/fileio.h"
#include "core/mem.h"
#include "retrieve/bert.h"

struct span {
	const char *p;
	size_t n;
};

static size_t cut_lines(const char *s, size_t len, struct span *out)
{
	size_t n = 0, start = 0;

	for (size_t i = 0; i <= len; i++)
		if (i == len || s[i] == '\n') {
			if (i > start) {
				if (out)
					out[n] = (struct span){ s + start, i - start };
				n++;
			}
			start = i + 1;
		}
	return n;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

static size_t cut_words(const char *s, size_t len, size_t words, struct span *out)
{
	size_t n = 0, i = 0;

	while (i < len) {
		size_t start, w = 0;
		while (i < len && is_ws(s[i]))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && w < words) {
			while (i < len && !is_ws(s[i]))
				i++;
			w++;
			while (i < len && is_ws(s[i]) && w < words)
				i++;
		}
		if (out)
			out[n] = (struct span){ s + start, i - start };
		n++;
	}
	return n;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_ids(const struct lp_bert *m, const struct span *t)
{
	struct lp_wordpiece_ids ids = { 0 };
	struct lp_diag d;

	if (!lp_wordpiece_tokenize(lp_bert_tokenizer(m), t->p, t->n, &ids, &d))
		for (size_t i = 0; i < ids.n; i++)
			printf("%s%d", i ? " " : "", ids.ids[i]);
	printf("\n");
	lp_wordpiece_ids_release(&ids);
}

int main(int argc, char **argv)
{
	size_t chunk_words = 0, group = 64, repeat = 1, max_texts = 0, n, dim;
	const char *out_path = NULL;
	int want_ids = 0, threads = 0;
	struct lp_diag d;
	struct lp_mapped file;
	struct lp_bert *m;
	struct span *texts;
	FILE *out = NULL;
	double times[64], best;

	if (argc < 3) {
		fprintf(stderr, "usage: embed-texts MODEL_DIR FILE [--chunk-words N] [--group N] "
				"[--repeat N] [--max-texts N] [--threads N] [--out F] [--ids]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--chunk-words") && i + 1 < argc)
			chunk_words = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--group") && i + 1 < argc)
			group = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--max-texts") && i + 1 < argc)
			max_texts = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "--ids"))
			want_ids = 1;
		else {
			fprintf(stderr, "embed-texts: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!group)
		group = 1;
	if (repeat < 1 || repeat > 64)
		repeat = repeat < 1 ? 1 : 64;
	lp_diag_init(&d);
	lp_mem_set_phase("load");
	if (lp_bert_load(argv[1], &m, &d) || lp_file_map(argv[2], LP_FILE_DOCUMENT, LP_MEM_DOC, &file, &d)) {
		lp_diag_print(&d, stderr);
		return 1;
	}
	const char *s = (const char *)file.data;
	n = chunk_words ? cut_words(s, file.len, chunk_words, NULL) : cut_lines(s, file.len, NULL);
	texts = calloc(n + 1, sizeof(*texts));
	chunk_words ? cut_words(s, file.len, chunk_words, texts) : cut_lines(s, file.len, texts);
	if (max_texts && n > max_texts)
		n = max_texts;
	dim = lp_bert_dim(m);
	lp_bert_set_threads(m, threads);
	fprintf(stderr, "blas: %s (%s)\n", lp_blas_core_name(), lp_blas_library());
	if (want_ids)
		for (size_t i = 0; i < n; i++)
			print_ids(m, &texts[i]);
	float *emb = calloc(group * dim, sizeof(float));
	const char **ptr = calloc(group, sizeof(*ptr));
	size_t *lens = calloc(group, sizeof(*lens));
	if (out_path && !(out = fopen(out_path, "wb"))) {
		fprintf(stderr, "embed-texts: unable to open '%s'\n", out_path);
		return 1;
	}
	lp_mem_set_phase("embed");
	for (size_t r = 0; r < repeat; r++) {
		double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		for (size_t i = 0; i < n; i += group) {
			size_t k = n - i < group ? n - i : group;
			for (size_t j = 0; j < k; j++) {
				ptr[j] = texts[i + j].p;
				lens[j] = texts[i + j].n;
			}
			if (lp_bert_embed(m, ptr, lens, k, emb, &d)) {
				lp_diag_print(&d, stderr);
				return 1;
			}
			if (out && r == 0)
				fwrite(emb, sizeof(float), k * dim, out);
		}
		double dt = clock_s(CLOCK_MONOTONIC) - t0;
		times[r] = dt;
		fprintf(stderr, "run %zu: %.3f s (cpu %.3f s)\n", r + 1, dt,
			clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
	}
	if (out)
		fclose(out);
	for (size_t i = 1; i < repeat; i++) /* insertion sort for the median */
		for (size_t j = i; j > 0 && times[j - 1] > times[j]; j--) {
			double t = times[j];
			times[j] = times[j - 1];
			times[j - 1] = t;
		}
	best = times[repeat / 2];
	char b1[32], b2[32];
	printf("texts %zu seconds %.3f texts_per_s %.1f tracked_peak %s peak_rss %s\n", n, best,
	       best > 0 ? (double)n / best : 0.0,
	       lp_mem_format_size(lp_mem_peak_total(), b1, sizeof(b1)),
	       lp_mem_format_size(lp_mem_peak_rss(), b2, sizeof(b2)));
	free(emb);
	free(ptr);
	free(lens);
	free(texts);
	lp_file_unmap(&file);
	lp_bert_free(m);
	return 0;
}
