/*
 * summarize_model.c - summaries written by the model: `tree` (map-reduce,
 * summarize_tree.c) and `refine` (a rolling summary, summarize_refine.c);
 * with map: points or compress, a tree whose points are checked and
 * selected (summarize_points.c), and with abstract: true rewritten by the
 * model, checked again (summarize_abstract.c). Every step is one chat
 * sized to the context (summarize_step.c) and framed by the prompts of
 * the document's language (summarize_prompts.c); summarize_run.h is what
 * they share.
 *
 * This file sets a run up: the session, the language, the instruction and
 * the budgets it leaves (a retry's must-keep facts included), then runs
 * the strategy and notes its levels.
 */
#include "stages/summarize_model.h"

#include <string.h>

#include "core/buf.h"
#include "core/mem.h"
#include "stages/model_stage.h"
#include "stages/summarize_run.h"

enum lp_status lp_summarize_model_run(struct lp_doc *doc,
				      const struct lp_summarize_model_opts *o,
				      struct lp_diag *d)
{
	struct lp_summarize_run r = { .doc = doc, .o = o };
	const char *phase = lp_mem_phase();
	size_t n;
	const size_t *set = lp_doc_working_set(doc, &n);
	int tree = o->strategy == LP_SUMMARIZE_TREE;
	enum lp_status st;

	if (!set && doc->n_chunks)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the working set");
	doc->levels = NULL;
	doc->n_levels = 0;
	doc->summary = NULL;
	if ((st = lp_stage_session(doc, &r.s, d)))
		return st;
	r.lang = lp_summarize_prompts_of(doc);
	r.final_tokens = lp_summarize_configured_final(&r);
	if ((st = lp_summarize_fit(&r, tree ? r.lang->system : r.lang->refine,
				   tree ? 0 : o->max_tokens + 16, d)))
		return st;
	lp_mem_set_phase("summarize");
	if (!tree)
		st = lp_summarize_refine(&r, set, n, d);
	else
		st = o->map == LP_SUMMARIZE_MAP_SUMMARY ? lp_summarize_tree(&r, set, n, d)
							: lp_summarize_points(&r, set, n, d);
	lp_arena_release(&r.scratch);
	lp_mem_set_phase(phase);
	if (st) {
		doc->n_levels = 0;
		return st;
	}
	doc->summary = doc->levels[doc->n_levels - 1].texts[doc->levels[doc->n_levels - 1].n - 1];
	lp_doc_note(doc, "%s", lp_doc_levels_note(doc, tree ? "tree" : "refine", 1));
	return LP_OK;
}
