/*
 * embscore.h - cosine scores of spans against a query with an embedder,
 * going through an embedding cache when one is given.
 *
 * The spans are embedded (cached vectors are reused; the others are
 * embedded in batches of LP_EMBSCORE_BATCH and put into the cache) into a
 * vector index (LP_MEM_INDEX), the query is embedded the same way (never
 * cached), and one GEMM gives every span's cosine with it: on the host
 * (vecindex.h), or, when the embedder runs on a device, there (vecdev.h:
 * the rows uploaded as f16, the product in f32). This is the
 * whole work of the hash and dense scorers and the dense half of hybrid.
 */
#ifndef LP_RETRIEVE_EMBSCORE_H
#define LP_RETRIEVE_EMBSCORE_H

#include <stddef.h>

#include "core/status.h"
#include "retrieve/embcache.h"
#include "retrieve/embedder.h"
#include "retrieve/vecindex.h"

#define LP_EMBSCORE_BATCH 32
/* Spans per embed call when the embedder runs on a device (its steps are
 * large: launches and transfers are paid per step). */
#define LP_EMBSCORE_DEVICE_BATCH 1024

struct lp_embscore_stats {
	size_t embedded;  /* spans run through the embedder */
	size_t cached;    /* spans whose vector came from the cache */
	int query_empty;  /* the query embedded to the zero vector */
};

/*
 * scores[i] (caller-owned, room for n) = cosine of span i (texts[i],
 * lens[i] bytes) with query[0..qlen). `cache` may be NULL. *stats (may be
 * NULL) says what was done. Returns LP_OK, LP_E_NOMEM, or an embedder's
 * error. The cache is not saved here.
 */
enum lp_status lp_embscore(struct lp_embedder *e, struct lp_embcache *cache,
			   const char *const *texts, const size_t *lens, size_t n,
			   const char *query, size_t qlen, double *scores,
			   struct lp_embscore_stats *stats, struct lp_diag *d);

/* The two halves of lp_embscore, for a caller that keeps the spans'
 * vectors for other queries (engine/docstore.h): the index of the spans'
 * vectors (a new *out, lp_vecindex_free; stats->query_empty untouched),
 * and the scores of one query against it (*query_empty set). Each returns
 * what lp_embscore returns; on failure no index is made. */
enum lp_status lp_embscore_index(struct lp_embedder *e, struct lp_embcache *cache,
				 const char *const *texts, const size_t *lens, size_t n,
				 struct lp_vecindex **out, struct lp_embscore_stats *stats,
				 struct lp_diag *d);
enum lp_status lp_embscore_query(struct lp_embedder *e, const struct lp_vecindex *ix,
				 const char *query, size_t qlen, double *scores, int *query_empty,
				 struct lp_diag *d);

#endif
