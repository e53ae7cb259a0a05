/*
 * plan.h - the memory a run of a pipeline on a document is planned to
 * take, as admission (runs.h) counts it.
 *
 * Two parts: `shared`, the model the run opens (the planner's figure,
 * model/plan.h lp_plan_predict, for the pipeline's context and KV type on
 * the model it picks for the document's language), which runs of the same
 * model share through the engine and so is counted once however many of
 * them run; and `own`, the document's parsed form, chunks and indexes,
 * which grow with its bytes: LP_SERVE_PLAN_PER_BYTE per byte plus
 * LP_SERVE_PLAN_BASE. This is a bound, not a fit: extractive-summary on
 * the 878 KB data/debian-reference.en.txt peaks at 8.6 MB of its own
 * (about 10 bytes per byte), and the factor of 4 above that leaves room
 * for pipelines that index more (dense embeddings, several levels of
 * summaries) without a plan per stage kind. A pipeline without a model,
 * or with a served one (backend openai), has no shared part.
 *
 * Opening a model to plan it reserves its mapping for a moment, so the
 * server plans every pipeline it offers at start (lp_serve_plan_model for
 * each language), before any run holds memory, and keeps the figures.
 */
#ifndef LP_SERVE_PLAN_H
#define LP_SERVE_PLAN_H

#include <stddef.h>

#include "core/status.h"

#define LP_SERVE_PLAN_PER_BYTE 40
#define LP_SERVE_PLAN_BASE ((size_t)16 << 20)

struct lp_serve_model_plan {
	size_t bytes;        /* the model's planned tracked bytes; 0: no model */
	char key[4096];      /* the model file, "" for none: runs of one key share it */
};

/* Plan the model pipeline `path` opens for a document in language `lang`
 * ("en", "zh", "und"). LP_OK and *out; else what loading the pipeline or
 * the model returns, with `d` filled. */
enum lp_status lp_serve_plan_model(const char *path, const char *lang,
				   struct lp_serve_model_plan *out, struct lp_diag *d);

/* The own part for a document of `len` bytes. */
size_t lp_serve_plan_own(size_t len);

#endif
