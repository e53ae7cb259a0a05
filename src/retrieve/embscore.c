#include "retrieve/embscore.h"

#include "core/cancel.h"
#include "core/mem.h"
#include "core/progress.h"
#include "retrieve/vecdev.h"
#include "retrieve/vecindex.h"

/* Scratch of one call: the batch being embedded. */
struct batch {
	const char **texts; /* [LP_EMBSCORE_BATCH] */
	size_t *lens;       /* [LP_EMBSCORE_BATCH] */
	size_t *rows;       /* [LP_EMBSCORE_BATCH] index rows they go to */
	float *out;         /* [LP_EMBSCORE_BATCH, dim] */
	size_t n, cap;
};

/* Embed the batch, copy each vector to its row and into the cache. */
static enum lp_status flush(struct lp_embedder *e, struct lp_embcache *cache,
			    struct lp_vecindex *ix, struct batch *b,
			    const char *const *texts, const size_t *lens,
			    struct lp_diag *d)
{
	size_t dim = lp_embedder_dim(e);
	enum lp_status st;

	if (b->n == 0)
		return LP_OK;
	st = lp_embedder_embed(e, b->texts, b->lens, b->n, b->out, d);
	for (size_t j = 0; j < b->n && st == LP_OK; j++) {
		const float *v = b->out + j * dim;
		float *row = (float *)lp_vecindex_row(ix, b->rows[j]);
		for (size_t t = 0; t < dim; t++)
			row[t] = v[t];
		if (cache)
			st = lp_embcache_put(cache, lp_embcache_key(texts[b->rows[j]],
								    lens[b->rows[j]]), v, d);
	}
	b->n = 0;
	return st;
}

/* Fill the index with every span's vector, from the cache when it has it. */
static enum lp_status fill(struct lp_embedder *e, struct lp_embcache *cache,
			   struct lp_vecindex *ix, struct batch *b,
			   const char *const *texts, const size_t *lens, size_t n,
			   struct lp_embscore_stats *stats, struct lp_diag *d)
{
	struct lp_progress pr;
	enum lp_status st = LP_OK;
	float *rows = lp_vecindex_append(ix, n);

	lp_progress_begin(&pr, "embed", "chunks", n);
	for (size_t i = 0; i < n && st == LP_OK; i++) {
		if (cache && lp_embcache_get(cache, lp_embcache_key(texts[i], lens[i]),
					     rows + i * lp_embedder_dim(e))) {
			stats->cached++;
			continue;
		}
		b->texts[b->n] = texts[i];
		b->lens[b->n] = lens[i];
		b->rows[b->n++] = i;
		stats->embedded++;
		if (b->n == b->cap) {
			st = flush(e, cache, ix, b, texts, lens, d);
			lp_progress_update(&pr, i + 1);
			if (!st)
				st = lp_cancel_check("in embed, between batches of chunks", d);
		}
	}
	if (st == LP_OK)
		st = flush(e, cache, ix, b, texts, lens, d);
	lp_progress_end(&pr);
	return st;
}

enum lp_status lp_embscore_index(struct lp_embedder *e, struct lp_embcache *cache,
				 const char *const *texts, const size_t *lens, size_t n,
				 struct lp_vecindex **out, struct lp_embscore_stats *stats,
				 struct lp_diag *d)
{
	struct lp_backend *be = lp_embedder_backend(e);
	size_t dim = lp_embedder_dim(e), B = be ? LP_EMBSCORE_DEVICE_BATCH : LP_EMBSCORE_BATCH;
	struct lp_embscore_stats local = { 0 };
	struct batch b = { 0 };
	enum lp_status st = LP_E_NOMEM;

	b.cap = B;
	if (!(*out = lp_vecindex_new(dim, n ? n : 1, d)) ||
	    !(b.texts = lp_mem_alloc(LP_MEM_SCRATCH, B * sizeof(*b.texts), d)) ||
	    !(b.lens = lp_mem_alloc(LP_MEM_SCRATCH, B * sizeof(*b.lens), d)) ||
	    !(b.rows = lp_mem_alloc(LP_MEM_SCRATCH, B * sizeof(*b.rows), d)) ||
	    !(b.out = lp_mem_alloc(LP_MEM_SCRATCH, B * dim * sizeof(*b.out), d)))
		goto out;
	st = fill(e, cache, *out, &b, texts, lens, n, &local, d);
out:
	if (stats) {
		stats->embedded = local.embedded;
		stats->cached = local.cached;
	}
	if (st) {
		lp_vecindex_free(*out);
		*out = NULL;
	}
	lp_mem_free(b.texts);
	lp_mem_free(b.lens);
	lp_mem_free(b.rows);
	lp_mem_free(b.out);
	return st;
}

enum lp_status lp_embscore_query(struct lp_embedder *e, const struct lp_vecindex *ix,
				 const char *query, size_t qlen, double *scores, int *query_empty,
				 struct lp_diag *d)
{
	struct lp_backend *be = lp_embedder_backend(e);
	size_t dim = lp_embedder_dim(e), n = lp_vecindex_size(ix);
	struct lp_vecdev *dv = NULL;
	float *q = NULL, *s = NULL;
	enum lp_status st = LP_E_NOMEM;

	if (n == 0)
		return LP_OK;
	if (!(q = lp_mem_alloc(LP_MEM_SCRATCH, dim * sizeof(*q), d)) ||
	    !(s = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*s), d)))
		goto out;
	if ((st = lp_embedder_embed(e, &query, &qlen, 1, q, d)) != LP_OK)
		goto out;
	if (be) {
		/* on the device: the rows there as f16, one product */
		if (!(dv = lp_vecdev_new(be, dim, n, d))) {
			st = d && d->status ? d->status : LP_E_NOMEM;
			goto out;
		}
		if ((st = lp_vecdev_append(dv, lp_vecindex_row(ix, 0), n, d)) != LP_OK ||
		    (st = lp_vecdev_scores(dv, q, 1, s, d)) != LP_OK)
			goto out;
	} else if ((st = lp_vecindex_scores(ix, q, 1, s, d)) != LP_OK) {
		goto out;
	}
	*query_empty = 1;
	for (size_t t = 0; t < dim; t++)
		if (q[t] != 0)
			*query_empty = 0;
	for (size_t i = 0; i < n; i++)
		scores[i] = s[i];
out:
	lp_vecdev_free(dv);
	lp_mem_free(q);
	lp_mem_free(s);
	return st;
}

enum lp_status lp_embscore(struct lp_embedder *e, struct lp_embcache *cache,
			   const char *const *texts, const size_t *lens, size_t n,
			   const char *query, size_t qlen, double *scores,
			   struct lp_embscore_stats *stats, struct lp_diag *d)
{
	struct lp_embscore_stats local = { 0 };
	struct lp_vecindex *ix = NULL;
	enum lp_status st;

	if (n == 0) {
		if (stats)
			*stats = local;
		return LP_OK;
	}
	st = lp_embscore_index(e, cache, texts, lens, n, &ix, &local, d);
	if (st == LP_OK)
		st = lp_embscore_query(e, ix, query, qlen, scores, &local.query_empty, d);
	if (stats)
		*stats = local;
	lp_vecindex_free(ix);
	return st;
}
