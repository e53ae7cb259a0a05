/*
 * fuzz_terms.c - retrieval terms, the BM25 index and the evidence of an
 * answer (text/evidence.h) on arbitrary bytes.
 *
 * The input's lines are spans of one index and its first line is also the
 * query. Checked: every term is non-empty, at most LP_TERMS_MAX_BYTES,
 * valid UTF-8 with no ASCII capital; every score is finite, >= 0 and the
 * same before and after lp_bm25_finish; the index frees all it tracked.
 * The whole input ranked as one passage against its first line: every
 * unit (a sentence, or a table row) is non-empty, inside the text, apart
 * from the others and sorted by a finite score; the quote match of the
 * first line is in [0, 1] with its span inside the text.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/utf8.h"
#include "retrieve/bm25.h"
#include "text/evidence.h"
#include "text/terms.h"
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

static int cmp_off(const void *a, const void *b)
{
	const struct lp_evidence_sent *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

static void check_evidence(const char *s, size_t len)
{
	const char *nl = memchr(s, '\n', len);
	size_t qlen = nl ? (size_t)(nl - s) : len, n;
	struct lp_evidence_src src = { 0, s, len, 0 };
	struct lp_evidence_sent *v;
	struct lp_span sp;
	struct lp_diag d;
	double share;

	lp_diag_init(&d);
	if (lp_evidence_rank(&src, 1, NULL, 0, s, qlen, &v, &n, &d))
		abort();
	for (size_t i = 0; i < n; i++)
		if (!v[i].len || v[i].off > len || v[i].len > len - v[i].off ||
		    !isfinite(v[i].score) || (i && v[i].score > v[i - 1].score))
			abort();
	qsort(v, n, sizeof(*v), cmp_off);
	for (size_t i = 1; i < n; i++)
		if (v[i - 1].off + v[i - 1].len > v[i].off)
			abort();
	lp_mem_free(v);
	share = lp_evidence_quote_match(s, qlen, s, len, &sp);
	if (!(share >= 0 && share <= 1) || sp.off > len || sp.len > len - sp.off)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;

	check_terms(s, size, 0);
	check_terms(s, size, LP_TERMS_STOPWORDS);
	check_index(s, size);
	check_evidence(s, size);
	return 0;
}
