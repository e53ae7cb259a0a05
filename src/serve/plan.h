/*
 * plan.h - the memory a run of a pipeline on a document is planned to
 * take, as admission (runs.h) counts it.
 *
 * Two parts: `shared`, the model the run opens (the planner's figure,
 * model/plan.h lp_plan_predict, for the pipeline's context and KV type on
 * the model it picks for the document's language, and the tokenizer's
 * tables, measured by building them), which runs of the same
 * model share through the engine and so is counted once however many of
 * them run and for as long as the engine keeps it; and `own`, the
 * document, its chunks and the largest of the pipeline's stages, as the
 * memory planner figures them for the document's size (stages/plan.h,
 * through lpipe_pipeline_plan_bytes), on the pipeline the run was given.
 * A pipeline without a model, or with a served one (backend openai), has
 * no shared part.
 *
 * Opening a model to plan it reserves its mapping for a moment, so the
 * server plans every pipeline it offers at start (lp_serve_plan_model for
 * each language), before any run holds memory, and keeps the figures.
 */
#ifndef LP_SERVE_PLAN_H
#define LP_SERVE_PLAN_H

#include <stddef.h>

#include "core/status.h"

struct lp_serve_model_plan {
	size_t bytes;        /* the model's planned tracked bytes; 0: no model */
	char key[4096];      /* the model file, "" for none: runs of one key share it */
};

/* Plan the model pipeline `path` opens for a document in language `lang`
 * ("en", "zh", "und"). LP_OK and *out; else what loading the pipeline or
 * the model returns, with `d` filled. */
enum lp_status lp_serve_plan_model(const char *path, const char *lang,
				   struct lp_serve_model_plan *out, struct lp_diag *d);

#endif
