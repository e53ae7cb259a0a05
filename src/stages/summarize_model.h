/*
 * summarize_model.h - the summarize stage's model strategies (tree and
 * refine), called by summarize.c. A verify stage does not run them: its
 * on_fail: retry (or on_ungrounded: retry) sets doc->must_keep and asks the
 * runner (doc->rerun) to run the stages again from the last summarize
 * stage that uses a model, which it finds with lp_summarize_model_opts_of;
 * that stage's prompts then carry the must-keep facts.
 *
 * Both strategies record their work in doc->levels (with per-level token
 * counts) and set doc->summary. Every model step is sized so that the
 * prompt plus max_tokens fits the context (summarize_step.c has the rules,
 * summarize_tree.c the proof that the tree terminates).
 */
#ifndef LP_STAGES_SUMMARIZE_MODEL_H
#define LP_STAGES_SUMMARIZE_MODEL_H

#include "core/status.h"
#include "stages/doc.h"

/* What a tree's level 0 writes for each chunk (the map step). */
enum lp_summarize_map {
	LP_SUMMARIZE_MAP_SUMMARY,  /* a few sentences of prose; the levels above merge them */
	LP_SUMMARIZE_MAP_POINTS,   /* `points` short bullet points in the text's words */
	LP_SUMMARIZE_MAP_COMPRESS, /* the `points` most central sentences, each shortened */
};

enum lp_summarize_strategy {
	LP_SUMMARIZE_EXTRACTIVE,
	LP_SUMMARIZE_TREE,
	LP_SUMMARIZE_REFINE,
};

struct lp_summarize_model_opts {
	enum lp_summarize_strategy strategy; /* TREE or REFINE */
	size_t fanout;       /* tree: inputs per group above level 0, >= 2 */
	size_t max_tokens;   /* per summary */
	size_t final_tokens; /* tree: for the last summary (the root); 0: max_tokens */
	int final_join;      /* tree: a level whose summaries joined fit final_tokens
			      * is the result, joined as paragraphs (no last
			      * model step) */
	const char *prompt;  /* instruction (system message); NULL: default */
	size_t extract_words; /* > 0: each chunk is first cut to its most central
			       * sentences, at most this many words, so the
			       * model reads (prefills) less; 0: off */
	enum lp_summarize_map map; /* tree: SUMMARY, or POINTS / COMPRESS, whose
				    * points are selected (rewritten only
				    * with `abstract`) to fit final_tokens:
				    * the result is a list in document order */
	size_t points;       /* POINTS / COMPRESS: points per chunk, >= 1 */
	int grounded;        /* POINTS / COMPRESS: drop a point whose numbers,
			      * paths, options, identifiers or quoted strings
			      * do not occur in its chunk */
	int drop_meta;       /* drop sentences that talk about the text or
			      * the summary ("The text describes ...") */
	int abstract;        /* POINTS / COMPRESS: the model rewrites the
			      * selection into the summary, and only its
			      * sentences the selection backs are kept
			      * (summarize_abstract.c) */
};

/* Run the strategy over the working set. Returns LP_OK; LP_E_MODEL (no
 * model), LP_E_CONFIG (context too small for max_tokens), LP_E_NOMEM
 * (budget, after any shrinking), LP_E_INTERNAL. */
enum lp_status lp_summarize_model_run(struct lp_doc *doc,
				      const struct lp_summarize_model_opts *o,
				      struct lp_diag *d);

/* The options of the last summarize stage before stage index `before` of
 * the doc's pipeline that uses a model, or NULL (summarize.c knows its own
 * options struct). *index is set to that stage's index. */
const struct lp_summarize_model_opts *lp_summarize_model_opts_of(const struct lp_doc *doc,
								 size_t before,
								 size_t *index);

#endif
