/*
 * plan.h - the memory planner for what a run holds of its own: the
 * document, its chunks and each stage's working memory, for a document of
 * a given size. The model is planned apart (model/plan.h), since runs of
 * one model share it.
 *
 * A run holds from its start to its end the document (its text, blocks
 * and chunk table) and the run's state, LP_STAGE_PLAN_BASE plus
 * LP_STAGE_PLAN_DOC_NUM / LP_STAGE_PLAN_DOC_DEN bytes per document byte.
 * Each stage adds, while it runs, the figure its kind gives (the plan
 * member of config/stage_kind.h): an index, scores, prompts, the tables of
 * keyphrase extraction. What a stage leaves to the next ones (a selection,
 * summaries, an answer) is small beside what it frees when it ends, so the
 * run's peak is the document plus its largest stage.
 *
 * The figures are fitted to measured peaks and bound them: `lpipe run
 * --format json` on data/debian-reference.en.txt cut to 20 KB, 100 KB and
 * 878 KB (each stage's tracked peak less the split stage's, which holds
 * the document and, with a model, the model), a straight line through the
 * two larger sizes, a quarter above. tests/cli/serve-runs.sh holds the
 * plan of the ready pipelines above the peak their runs reach and within
 * four times of it.
 */
#ifndef LP_STAGES_PLAN_H
#define LP_STAGES_PLAN_H

#include <stddef.h>

#include "config/pipeline.h"

#define LP_STAGE_PLAN_BASE ((size_t)512 << 10)
#define LP_STAGE_PLAN_DOC_NUM 5   /* 1.25 bytes per document byte */
#define LP_STAGE_PLAN_DOC_DEN 4

/* A run of a pipeline, planned. */
struct lp_stage_plan {
	size_t doc;                              /* held throughout */
	size_t stage[LP_PIPELINE_MAX_STAGES];    /* each stage's figure */
	size_t n_stages;
	const char *largest;                     /* the kind of the largest
						  * stage; "" without stages */
	size_t total;                            /* doc + the largest stage */
};

/* Plan a run of `p` on a document of `doc_len` bytes into *out. */
void lp_stage_plan(const struct lp_pipeline *p, size_t doc_len, struct lp_stage_plan *out);

/* The figure of a stage kind without a plan of its own: 256 KiB and a
 * quarter byte per document byte (prompts and outputs of model stages). */
size_t lp_stage_plan_small(size_t doc_len);

/* a + num/den bytes per byte of `doc_len`, for the kinds' figures */
size_t lp_stage_plan_line(size_t a, size_t num, size_t den, size_t doc_len);

#endif
