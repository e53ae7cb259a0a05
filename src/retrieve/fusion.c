#include "retrieve/fusion.h"

#include <math.h>
#include <stdlib.h>

#include "core/mem.h"

/* Chunk a ranks before chunk b: higher score, or equal and earlier; NaN
 * after every number. */
static int before(const double *s, size_t a, size_t b)
{
	if (isnan(s[a]) || isnan(s[b]))
		return !isnan(s[a]) || (isnan(s[b]) && a < b);
	return s[a] > s[b] || (s[a] == s[b] && a < b);
}

static int same(double x, double y)
{
	return x == y || (isnan(x) && isnan(y));
}

/* Stable sort of indices by before(): qsort has no context argument, and
 * a file-scope pointer to the scores would make ranking non-reentrant. */
static void merge_sort(const double *s, size_t *a, size_t *tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, o = 0;

	if (n < 2)
		return;
	merge_sort(s, a, tmp, h);
	merge_sort(s, a + h, tmp, n - h);
	while (i < h && j < n)
		tmp[o++] = before(s, a[j], a[i]) ? a[j++] : a[i++];
	while (i < h)
		tmp[o++] = a[i++];
	while (j < n)
		tmp[o++] = a[j++];
	for (size_t t = 0; t < n; t++)
		a[t] = tmp[t];
}

enum lp_status lp_fusion_ranks(const double *scores, size_t n, size_t *rank,
			       struct lp_diag *d)
{
	size_t *order;

	if (n == 0)
		return LP_OK;
	order = lp_mem_calloc(LP_MEM_SCRATCH, n, sizeof(*order), d);
	if (!order)
		return LP_E_NOMEM;
	/* rank doubles as the merge buffer before it gets the ranks. */
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	merge_sort(scores, order, rank, n);
	for (size_t p = 0; p < n; p++) {
		size_t i = order[p];
		rank[i] = (p > 0 && same(scores[i], scores[order[p - 1]]))
			  ? rank[order[p - 1]] : p + 1;
	}
	lp_mem_free(order);
	return LP_OK;
}

enum lp_status lp_fusion_rrf(const double *const *lists, size_t n_lists, size_t n,
			     double k, double *out, struct lp_diag *d)
{
	return lp_fusion_rrf_weighted(lists, NULL, n_lists, n, k, out, d);
}

enum lp_status lp_fusion_rrf_weighted(const double *const *lists, const double *weights,
				      size_t n_lists, size_t n, double k, double *out,
				      struct lp_diag *d)
{
	size_t *rank;

	for (size_t i = 0; i < n; i++)
		out[i] = 0;
	if (n == 0)
		return LP_OK;
	rank = lp_mem_calloc(LP_MEM_SCRATCH, n, sizeof(*rank), d);
	if (!rank)
		return LP_E_NOMEM;
	for (size_t l = 0; l < n_lists; l++) {
		double w = weights ? weights[l] : 1.0;
		if (w == 0)
			continue;
		if (lp_fusion_ranks(lists[l], n, rank, d) != LP_OK) {
			lp_mem_free(rank);
			return LP_E_NOMEM;
		}
		for (size_t i = 0; i < n; i++)
			out[i] += w / (k + (double)rank[i]);
	}
	lp_mem_free(rank);
	return LP_OK;
}

double lp_fusion_coverage(size_t n_words, size_t n_unknown)
{
	if (n_words == 0)
		return 1.0;
	return 1.0 - (double)n_unknown / (double)n_words;
}

double lp_fusion_coverage_scale(double coverage)
{
	if (!(coverage > 0.5))
		return 0.0;
	return coverage >= 1.0 ? 1.0 : 2.0 * coverage - 1.0;
}

/* Minimum and maximum of the numbers in s (NaN skipped); lo > hi when
 * there are none. */
static void range(const double *s, size_t n, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (isnan(s[i]))
			continue;
		if (s[i] < *lo)
			*lo = s[i];
		if (s[i] > *hi)
			*hi = s[i];
	}
}

static double norm(double x, double lo, double hi)
{
	if (isnan(x) || !(hi > lo))
		return 0;
	return (x - lo) / (hi - lo);
}

void lp_fusion_weighted(const double *a, const double *b, size_t n, double w, double *out)
{
	double alo, ahi, blo, bhi;

	range(a, n, &alo, &ahi);
	range(b, n, &blo, &bhi);
	for (size_t i = 0; i < n; i++)
		out[i] = (1 - w) * norm(a[i], alo, ahi) + w * norm(b[i], blo, bhi);
}

static int in_sel(const size_t *sel, size_t n_sel, size_t c)
{
	for (size_t j = 0; j < n_sel; j++)
		if (sel[j] == c)
			return 1;
	return 0;
}

size_t lp_fusion_force(const double *scores, size_t n, const unsigned char *forced,
		       size_t *sel, size_t n_sel)
{
	size_t brought = 0;

	for (;;) {
		size_t best = n, slot = n_sel;
		for (size_t c = 0; c < n; c++)
			if (forced[c] && !in_sel(sel, n_sel, c) &&
			    (best == n || before(scores, c, best)))
				best = c;
		if (best == n)
			break;
		while (slot > 0 && forced[sel[slot - 1]])
			slot--;
		if (slot == 0)
			break;
		sel[slot - 1] = best;
		brought++;
	}
	/* Insertion sort: n_sel is a top_k, small. */
	for (size_t i = 1; i < n_sel; i++) {
		size_t v = sel[i], j = i;
		for (; j > 0 && before(scores, v, sel[j - 1]); j--)
			sel[j] = sel[j - 1];
		sel[j] = v;
	}
	return brought;
}
