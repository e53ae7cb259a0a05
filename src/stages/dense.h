/*
 * dense.h - the dense embedder (MiniLM, retrieve/embedder.h) as a stage
 * borrows it, and how far its vocabulary covers what it is to compare.
 *
 * A document run by an engine (engine/engine.h) borrows the engine's
 * embedder, loaded once for every document of the process and lent to one
 * caller at a time; a document without one gets an embedder of its own,
 * freed when it is given back. The retrieve stage's dense and hybrid
 * scorers and the answer stage's dense rerank use these.
 */
#ifndef LP_STAGES_DENSE_H
#define LP_STAGES_DENSE_H

#include <stddef.h>

#include "config/pipeline.h"
#include "core/status.h"
#include "retrieve/embedder.h"
#include "stages/doc.h"

/* The dense embedder on dev for doc: *out until lp_stage_dense_return.
 * Returns what lp_engine_dense or lp_embedder_new_dense_on returns
 * (LP_E_MODEL when the model is not fetched). */
enum lp_status lp_stage_dense_borrow(struct lp_doc *doc, enum lp_device dev,
				     struct lp_embedder **out, struct lp_diag *d);

/* Give back what lp_stage_dense_borrow lent (NULL is a no-op). */
void lp_stage_dense_return(struct lp_doc *doc, struct lp_embedder *e);

/*
 * *out = the lower of the coverage (retrieve/fusion.h) of query[0..qlen)
 * and of texts[0..n) (lens[i] bytes each) by e's vocabulary: how far the
 * embedder can be trusted on them. `who` names the caller in the debug
 * line. Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_stage_vocab_coverage(struct lp_embedder *e, const char *who,
				       const char *query, size_t qlen,
				       const char *const *texts, const size_t *lens, size_t n,
				       double *out, struct lp_diag *d);

#endif
