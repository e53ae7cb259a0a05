/*
 * dense.c - borrowing the dense embedder and measuring its vocabulary's
 * coverage (dense.h).
 */
#include "stages/dense.h"

#include "core/log.h"
#include "engine/engine.h"
#include "retrieve/fusion.h"

enum lp_status lp_stage_dense_borrow(struct lp_doc *doc, enum lp_device dev,
				     struct lp_embedder **out, struct lp_diag *d)
{
	const char *name = lp_device_name(dev);

	if (doc->engine)
		return lp_engine_dense(doc->engine, name, out, d);
	return lp_embedder_new_dense_on(NULL, name, out, d);
}

void lp_stage_dense_return(struct lp_doc *doc, struct lp_embedder *e)
{
	if (!e)
		return;
	if (doc->engine)
		lp_engine_dense_release(doc->engine, e);
	else
		lp_embedder_free(e);
}

enum lp_status lp_stage_vocab_coverage(struct lp_embedder *e, const char *who,
				       const char *query, size_t qlen,
				       const char *const *texts, const size_t *lens, size_t n,
				       double *out, struct lp_diag *d)
{
	size_t qw = 0, qu = 0, cw = 0, cu = 0;
	enum lp_status st = lp_embedder_coverage(e, query, qlen, &qw, &qu, d);
	double q, c;

	for (size_t i = 0; i < n && st == LP_OK; i++)
		st = lp_embedder_coverage(e, texts[i], lens[i], &cw, &cu, d);
	if (st != LP_OK)
		return st;
	q = lp_fusion_coverage(qw, qu);
	c = lp_fusion_coverage(cw, cu);
	*out = q < c ? q : c;
	lp_debug("%s: %s vocabulary covers %zu of %zu query words, %zu of %zu text words", who,
		 lp_embedder_name(e), qw - qu, qw, cw - cu, cw);
	return LP_OK;
}
