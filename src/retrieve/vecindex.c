#include "retrieve/vecindex.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "core/mem.h"

struct lp_vecindex {
	size_t dim, n, cap;
	float *rows; /* [cap, dim], LP_MEM_INDEX */
};

struct lp_vecindex *lp_vecindex_new(size_t dim, size_t cap, struct lp_diag *d)
{
	struct lp_vecindex *ix;

	if (dim == 0 || cap == 0 || cap > SIZE_MAX / sizeof(float) / dim) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
			    "vector index of %zu x %zu floats is too large", cap, dim);
		return NULL;
	}
	ix = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*ix), d);
	if (!ix)
		return NULL;
	ix->rows = lp_mem_alloc(LP_MEM_INDEX, cap * dim * sizeof(float), d);
	if (!ix->rows) {
		lp_mem_free(ix);
		return NULL;
	}
	ix->dim = dim;
	ix->cap = cap;
	return ix;
}

void lp_vecindex_free(struct lp_vecindex *ix)
{
	if (!ix)
		return;
	lp_mem_free(ix->rows);
	lp_mem_free(ix);
}

size_t lp_vecindex_dim(const struct lp_vecindex *ix) { return ix->dim; }
size_t lp_vecindex_size(const struct lp_vecindex *ix) { return ix->n; }

float *lp_vecindex_append(struct lp_vecindex *ix, size_t count)
{
	float *p;

	if (count > ix->cap - ix->n)
		return NULL;
	p = ix->rows + ix->n * ix->dim;
	ix->n += count;
	return p;
}

const float *lp_vecindex_row(const struct lp_vecindex *ix, size_t i)
{
	return ix->rows + i * ix->dim;
}

enum lp_status lp_vecindex_scores(const struct lp_vecindex *ix, const float *queries,
				  size_t nq, float *scores, struct lp_diag *d)
{
	(void)d;
	if (ix->n == 0 || nq == 0)
		return LP_OK;
	/* OpenBLAS takes int sizes; an index this large would not fit the
	 * memory budget anyway, but say so rather than wrap. */
	if (ix->n > INT_MAX || nq > INT_MAX || ix->dim > INT_MAX)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				   "vector index too large for one product");
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)ix->n,
		    (int)ix->dim, 1.0f, queries, (int)ix->dim, ix->rows, (int)ix->dim,
		    0.0f, scores, (int)ix->n);
	return LP_OK;
}

/* a ranks below b: lower score, or equal and later; NaN below numbers. */
static int worse(const float *s, size_t a, size_t b)
{
	if (isnan(s[a]) || isnan(s[b]))
		return isnan(s[a]) && (!isnan(s[b]) || a > b);
	return s[a] < s[b] || (s[a] == s[b] && a > b);
}

/* Min-heap of indices with the worst on top. */
static void sift_down(const float *s, size_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;
		if (l < n && worse(s, h[l], h[m]))
			m = l;
		if (r < n && worse(s, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

size_t lp_vecindex_select(const float *scores, size_t n, size_t k, size_t *out)
{
	size_t m = k < n ? k : n;

	if (m == 0)
		return 0;
	for (size_t i = 0; i < m; i++)
		out[i] = i;
	for (size_t i = m / 2; i-- > 0;)
		sift_down(scores, out, m, i);
	for (size_t i = m; i < n; i++) {
		if (worse(scores, out[0], i)) {
			out[0] = i;
			sift_down(scores, out, m, 0);
		}
	}
	/* Pop the worst to the back: the array ends sorted best first. */
	for (size_t end = m; end > 1; end--) {
		size_t t = out[0];
		out[0] = out[end - 1];
		out[end - 1] = t;
		sift_down(scores, out, end - 1, 0);
	}
	return m;
}

enum lp_status lp_vecindex_topk(const struct lp_vecindex *ix, const float *queries,
				size_t nq, size_t k, size_t *idx, float *score,
				size_t *kept, struct lp_diag *d)
{
	size_t n = ix->n, m = k < n ? k : n;
	float *s;
	enum lp_status st;

	*kept = m;
	if (m == 0 || nq == 0)
		return LP_OK;
	if (n > SIZE_MAX / sizeof(float) / nq)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "too many queries for one product");
	s = lp_mem_alloc(LP_MEM_SCRATCH, nq * n * sizeof(*s), d);
	if (!s)
		return LP_E_NOMEM;
	st = lp_vecindex_scores(ix, queries, nq, s, d);
	for (size_t q = 0; q < nq && st == LP_OK; q++) {
		lp_vecindex_select(s + q * n, n, k, idx + q * k);
		if (score)
			for (size_t j = 0; j < m; j++)
				score[q * k + j] = s[q * n + idx[q * k + j]];
	}
	lp_mem_free(s);
	return st;
}
