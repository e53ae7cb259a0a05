#include "retrieve/vecindex.h"
#include "retrieve/topk.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "backend/backend.h"
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
	lp_backend_host_sgemm_nt((int)nq, (int)ix->n, (int)ix->dim, queries, ix->rows, scores);
	return LP_OK;
}

enum lp_status lp_vecindex_topk(const struct lp_vecindex *ix, const float *queries,
				size_t nq, size_t k, size_t *idx, float *score,
				size_t *kept, struct lp_diag *d)
{
	size_t n = ix->n, m = k < n ? k : n;
	float *s;
	double *row;
	enum lp_status st;

	*kept = m;
	if (m == 0 || nq == 0)
		return LP_OK;
	if (n > SIZE_MAX / sizeof(float) / nq)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "too many queries for one product");
	s = lp_mem_alloc(LP_MEM_SCRATCH, nq * n * sizeof(*s), d);
	/* One query's scores widened for the shared top-k selection. */
	row = s ? lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*row), d) : NULL;
	if (!row) {
		lp_mem_free(s);
		return LP_E_NOMEM;
	}
	st = lp_vecindex_scores(ix, queries, nq, s, d);
	for (size_t q = 0; q < nq && st == LP_OK; q++) {
		for (size_t i = 0; i < n; i++)
			row[i] = s[q * n + i];
		lp_topk_select(row, n, k, idx + q * k);
		if (score)
			for (size_t j = 0; j < m; j++)
				score[q * k + j] = s[q * n + idx[q * k + j]];
	}
	lp_mem_free(row);
	lp_mem_free(s);
	return st;
}
