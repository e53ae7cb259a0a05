/*
 * summarize_refine.c - the summarize stage's `refine` strategy: a rolling
 * summary.
 *
 * One level whose text i is the summary of chunks 0..i: the previous
 * summary rides in the system message, the next chunk is the user
 * message; the chunk budget is what the context leaves after both (the
 * run reserves max_tokens and a few more for the previous summary).
 */
#include <stdio.h>
#include <string.h>

#include "core/progress.h"
#include "stages/model_stage.h"
#include "stages/summarize_run.h"

enum lp_status lp_summarize_refine(struct lp_summarize_run *r, const size_t *set, size_t n,
				   struct lp_diag *d)
{
	struct lp_doc *doc = r->doc;
	size_t n0 = n ? n : 1;
	struct lp_summarize_step s;
	struct lp_progress pr;
	enum lp_status st;
	char label[48];

	doc->levels = lp_arena_alloc(&doc->arena, sizeof(*doc->levels));
	if (!doc->levels)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for summary levels");
	r->level = &doc->levels[0];
	if ((st = lp_doc_level_alloc(doc, r->level, n0, d)))
		return st;
	doc->n_levels = 1;
	lp_summarize_step_refine(r, &s);
	/* the previous summary takes at most max_tokens of the context
	 * (budget set by lp_summarize_fit) */
	lp_progress_begin(&pr, "refine", "chunks", n0);
	for (size_t i = 0; i < n0 && !st; i++) {
		size_t len, budget = r->budget;
		const char *t;
		if ((st = lp_summarize_hold_chunk(r, set, n, i, d)))
			break;
		if (!(t = lp_summarize_chunk_text(r, set, n, i, 1, &len, d))) {
			st = d->status;
			break;
		}
		if (i) {
			int cut;
			const char *prev = lp_stage_head_tokens_in(&r->scratch, r->s,
								   r->level->texts[i - 1],
								   strlen(r->level->texts[i - 1]),
								   r->o->max_tokens, &cut, d);
			s.instruction = prev ? lp_arena_printf(&r->scratch,
							       "%s\n\nSummary so far:\n%s",
							       r->instruction, prev) : NULL;
			if (!s.instruction) {
				st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a prompt");
				break;
			}
		}
		snprintf(label, sizeof(label), "chunk %zu", n ? set[i] : 0);
		r->level->first_input[i] = 0;
		r->level->n_inputs[i] = i + 1;
		st = lp_summarize_text(r, &s, label, t, len, budget, &r->level->texts[i], d);
		r->level->n = i + 1;
		s.instruction = NULL; /* the scratch it was in goes now */
		lp_summarize_release_chunk(r, set, n, i);
		lp_progress_update(&pr, i + 1);
	}
	lp_progress_end(&pr);
	lp_arena_release(&r->scratch);
	return st;
}
