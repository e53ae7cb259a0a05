#include "retrieve/vecdev.h"

#include <string.h>

#include "core/mem.h"
#include "quant/quant.h"

/* Rows converted to f16 and uploaded per block. */
#define APPEND_ROWS 4096

struct tile {
	struct lp_backend_buf *q, *s, *out, *idx;
	size_t rows, n, k;   /* queries, index rows and k it was made for */
};

struct lp_vecdev {
	struct lp_backend *be;
	size_t dim, n, cap;
	struct lp_backend_buf *rows;   /* [cap, dim] f16 */
	struct tile t;                 /* kept between calls of the same shape */
};

static void tile_free(struct lp_vecdev *v, struct tile *t);

struct lp_vecdev *lp_vecdev_new(struct lp_backend *be, size_t dim, size_t cap,
				struct lp_diag *d)
{
	struct lp_vecdev *v;

	if (!dim || !cap || cap > SIZE_MAX / 2 / dim) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "device index of %zu x %zu is too large", cap,
			    dim);
		return NULL;
	}
	if (!(v = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*v), d)))
		return NULL;
	v->be = be;
	v->dim = dim;
	v->cap = cap;
	/* on a device, counted against the device budget as gpu-embed */
	v->rows = be->ops->buf_alloc(be, LP_BACKEND_DEVICE,
				     be->place == LP_BACKEND_DEVICE ? LP_MEM_GPU_EMBED : LP_MEM_INDEX,
				     cap * dim * 2, d);
	if (!v->rows) {
		lp_mem_free(v);
		return NULL;
	}
	return v;
}

void lp_vecdev_free(struct lp_vecdev *v)
{
	if (!v)
		return;
	tile_free(v, &v->t);
	v->be->ops->buf_free(v->be, v->rows);
	lp_mem_free(v);
}

size_t lp_vecdev_size(const struct lp_vecdev *v)
{
	return v->n;
}

enum lp_status lp_vecdev_append(struct lp_vecdev *v, const float *rows, size_t count,
				struct lp_diag *d)
{
	size_t block = count < APPEND_ROWS ? count : APPEND_ROWS;
	uint16_t *h;
	enum lp_status st = LP_OK;

	if (count > v->cap - v->n)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0, "%zu rows past the device index's %zu",
				   count, v->cap);
	if (!count)
		return LP_OK;
	if (!(h = lp_mem_alloc(LP_MEM_SCRATCH, block * v->dim * sizeof(*h), d)))
		return LP_E_NOMEM;
	for (size_t r0 = 0; r0 < count; r0 += block) {
		size_t nr = count - r0 < block ? count - r0 : block;
		for (size_t i = 0; i < nr * v->dim; i++)
			h[i] = lp_fp32_to_fp16(rows[r0 * v->dim + i]);
		v->be->ops->upload(v->be, v->rows, (v->n + r0) * v->dim * 2, h, nr * v->dim * 2);
	}
	/* the staging is reused by the next block only after upload returned */
	st = v->be->ops->sync(v->be, d);
	lp_mem_free(h);
	if (st == LP_OK)
		v->n += count;
	return st;
}

/* Queries per tile: the score block under LP_VECDEV_SCORE_BYTES. */
static size_t tile_rows(const struct lp_vecdev *v, size_t nq)
{
	size_t t = LP_VECDEV_SCORE_BYTES / (v->n * sizeof(float));

	if (t < 1)
		t = 1;
	if (t > 4096)
		t = 4096;
	return t < nq ? t : nq;
}

/* The tile for `rows` queries and k (0: scores only), made or kept: the
 * allocations of a query's buffers cost more than its product. */
static enum lp_status tile_get(struct lp_vecdev *v, size_t rows, size_t k, struct tile **out,
			       struct lp_diag *d);

static void tile_free(struct lp_vecdev *v, struct tile *t)
{
	struct lp_backend_buf *b[] = { t->q, t->s, t->out, t->idx };

	for (size_t i = 0; i < 4; i++)
		if (b[i])
			v->be->ops->buf_free(v->be, b[i]);
	memset(t, 0, sizeof(*t));
}

static enum lp_status tile_new(struct lp_vecdev *v, size_t rows, size_t k, struct tile *t,
			       struct lp_diag *d)
{
	struct lp_backend *be = v->be;
	struct lp_backend_limits lim = { 0 };
	enum lp_status st;

	memset(t, 0, sizeof(*t));
	t->rows = rows;
	t->n = v->n;
	t->k = k;
	lim.n_rows = (uint32_t)rows;
	lim.max_cols = v->dim;
	lim.max_rows = v->n;
	lim.topk = (uint32_t)k;
	if ((st = be->ops->reserve(be, &lim, d)))
		return st;
	if (!(t->q = be->ops->buf_alloc(be, be->place, LP_MEM_SCRATCH, rows * v->dim * 4, d)) ||
	    !(t->s = be->ops->buf_alloc(be, be->place, LP_MEM_SCRATCH, rows * v->n * 4, d)) ||
	    (k && !(t->out = be->ops->buf_alloc(be, be->place, LP_MEM_SCRATCH, rows * k * 4, d))) ||
	    (k && !(t->idx = be->ops->buf_alloc(be, be->place, LP_MEM_SCRATCH, rows * k * 4, d)))) {
		tile_free(v, t);
		return d && d->status ? d->status : LP_E_NOMEM;
	}
	return LP_OK;
}

static enum lp_status tile_get(struct lp_vecdev *v, size_t rows, size_t k, struct tile **out,
			       struct lp_diag *d)
{
	struct tile *t = &v->t;
	enum lp_status st;

	*out = t;
	if (t->q && t->rows == rows && t->n == v->n && t->k >= k) {
		/* the backend's scratch may have been sized for other work since */
		struct lp_backend_limits lim = { 0 };
		lim.n_rows = (uint32_t)rows;
		lim.max_cols = v->dim;
		lim.max_rows = v->n;
		lim.topk = (uint32_t)t->k;
		return v->be->ops->reserve(v->be, &lim, d);
	}
	tile_free(v, t);
	st = tile_new(v, rows, k, t, d);
	return st;
}

/* Queue the scores of queries [q0, q0 + nr) into t->s. */
static void score_tile(struct lp_vecdev *v, struct tile *t, const float *queries, size_t q0,
		       size_t nr)
{
	struct lp_backend_mat W = { LP_Q_F16, v->rows->data, v->n, v->dim, v->dim * 2, 0, NULL,
				   LP_MAT_ROWS };

	v->be->ops->upload(v->be, t->q, 0, queries + q0 * v->dim, nr * v->dim * 4);
	v->be->ops->matmul(v->be, &W, t->q->data, nr, t->s->data, v->n);
}

enum lp_status lp_vecdev_scores(struct lp_vecdev *v, const float *queries, size_t nq,
				float *scores, struct lp_diag *d)
{
	struct tile *t;
	enum lp_status st;

	if (!nq || !v->n)
		return LP_OK;
	if ((st = tile_get(v, tile_rows(v, nq), 0, &t, d)))
		return st;
	for (size_t q0 = 0; q0 < nq && st == LP_OK; q0 += t->rows) {
		size_t nr = nq - q0 < t->rows ? nq - q0 : t->rows;
		score_tile(v, t, queries, q0, nr);
		st = v->be->ops->download(v->be, scores + q0 * v->n, t->s, 0, nr * v->n * 4, d);
	}
	return st;
}

enum lp_status lp_vecdev_topk(struct lp_vecdev *v, const float *queries, size_t nq, size_t k,
			      size_t *idx, float *score, size_t *kept, struct lp_diag *d)
{
	size_t m = k < v->n ? k : v->n;
	struct tile *t;
	float *hs = NULL;
	int32_t *hi = NULL;
	enum lp_status st;

	*kept = m;
	if (!m || !nq)
		return LP_OK;
	if (k > LP_BACKEND_TOPK_MAX)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0, "k %zu above %d", k,
				   LP_BACKEND_TOPK_MAX);
	if ((st = tile_get(v, tile_rows(v, nq), k, &t, d)))
		return st;
	if (!(hs = lp_mem_alloc(LP_MEM_SCRATCH, t->rows * k * sizeof(*hs), d)) ||
	    !(hi = lp_mem_alloc(LP_MEM_SCRATCH, t->rows * k * sizeof(*hi), d)))
		st = LP_E_NOMEM;
	for (size_t q0 = 0; q0 < nq && st == LP_OK; q0 += t->rows) {
		size_t nr = nq - q0 < t->rows ? nq - q0 : t->rows;
		score_tile(v, t, queries, q0, nr);
		v->be->ops->topk(v->be, t->s->data, v->n, nr, v->n, k, t->out->data, t->idx->data);
		if ((st = v->be->ops->download(v->be, hi, t->idx, 0, nr * k * 4, d)) ||
		    (st = v->be->ops->download(v->be, hs, t->out, 0, nr * k * 4, d)))
			break;
		for (size_t q = 0; q < nr; q++)
			for (size_t j = 0; j < m; j++) {
				idx[(q0 + q) * k + j] = (size_t)hi[q * k + j];
				if (score)
					score[(q0 + q) * k + j] = hs[q * k + j];
			}
	}
	lp_mem_free(hs);
	lp_mem_free(hi);
	return st;
}
