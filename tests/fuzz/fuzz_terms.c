/*
 * fuzz_terms.c - retrieval terms and the BM25 index on arbitrary bytes.
 *
 * The input's lines are spans of one index and its first line is also the
 * query. Checked: every term is non-empty, at most LP_TERMS_MAX_BYTES,
 * valid UTF-8 with no ASCII capital; every score is finite, >= 0 and the
 * same before and after lp_bm25_finish; the index frees all it tracked.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/utf8.h"
#include "retrieve/bm25.h"
#include "retrieve/terms.h"
#include "retrieve/topk.h"

static void check_terms(const char *s, size_t len, unsigned flags)
{
	struct lp_terms it;
	const char *t;
	size_t n;

	lp_terms_init(&it, s, len, flags);
	while (lp_terms_next(&it, &t, &n)) {
		if (n == 0 || n > LP_TERMS_MAX_BYTES || strlen(t) != n ||
		    lp_utf8_find_invalid((const unsigned char *)t, n) != n)
			abort();
		for (size_t i = 0; i < n; i++)
			if (t[i] >= 'A' && t[i] <= 'Z')
				abort();
	}
}

static void check_index(const char *s, size_t len)
{
	struct lp_diag d;
	struct lp_bm25 *ix = lp_bm25_new(NULL, &d);
	size_t first = len, start = 0, n_spans, top[4];
	double *scores;

	if (!ix)
		abort();
	for (size_t i = 0; i <= len; i++)
		if (i == len || s[i] == '\n') {
			if (first == len)
				first = i;
			if (lp_bm25_add(ix, s + start, i - start, &d))
				abort();
			start = i + 1;
		}
	n_spans = lp_bm25_n_spans(ix);
	scores = malloc(2 * n_spans * sizeof(*scores));
	/* Scored as built, then after finish: the same numbers. */
	if (!scores || lp_bm25_score(ix, s, first, scores + n_spans, NULL, &d) ||
	    lp_bm25_finish(ix, &d) || lp_bm25_score(ix, s, first, scores, NULL, &d))
		abort();
	for (size_t i = 0; i < n_spans; i++)
		if (!isfinite(scores[i]) || scores[i] < 0 ||
		    fabs(scores[i] - scores[n_spans + i]) > 1e-9 * (1 + scores[i]))
			abort();
	if (lp_topk_select(scores, n_spans, 4, top) != (n_spans < 4 ? n_spans : 4))
		abort();
	free(scores);
	lp_bm25_free(ix);
	if (lp_mem_current(LP_MEM_INDEX) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;

	check_terms(s, size, 0);
	check_terms(s, size, LP_TERMS_STOPWORDS);
	check_index(s, size);
	return 0;
}
