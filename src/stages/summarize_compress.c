/*
 * summarize_compress.c - map: compress's second half: a long chosen
 * sentence shortened by the model, kept only when the short form was made
 * by deleting words; and the fact check (grounding) the model steps of
 * the points and the abstract share.
 */
#include <string.h>

#include "core/log.h"
#include "stages/summarize_run.h"
#include "text/match.h"
#include "text/points.h"

/* A deletion inside a quoted string or a path makes a fact the source
 * does not hold. */
int lp_summarize_grounded_in(const char *s, size_t len, const char *src, size_t src_len)
{
	struct lp_match m;
	struct lp_diag d;
	size_t facts = 0, missing = 1;

	lp_diag_init(&d);
	if (lp_match_init(&m, src, src_len, &d) || lp_points_check(&m, s, len, &facts, &missing))
		missing = 1;
	lp_match_release(&m);
	return !missing;
}

/* The point pt, shortened by the model when it is over
 * LP_SUMMARIZE_COMPRESS_WORDS words (lp_points_cost's words) and the short
 * form is shorter, says no more than it (lp_points_faithful), is a
 * sentence of prose (not a title: "Job Control: Suspend Execution"), names
 * no fact it does not hold, drops none of its facts (its options, names,
 * paths, numbers: what a reader looks for) and is no meta-talk. */
const char *lp_summarize_shorten(struct lp_summarize_run *r, const char *pt, size_t head,
				 size_t *sentences, size_t *shortened, struct lp_diag *d)
{
	const char *p = pt + head;
	size_t len = strlen(p), words = lp_match_count_words(p, len);
	struct lp_summarize_step s;
	struct lp_buf gen;
	struct lp_span sf;
	const char *res = pt;

	(*sentences)++;
	/* words as the budget counts them: 1.7 Han characters make one */
	if ((double)lp_points_cost(p, len) <=
	    LP_POINTS_TOKENS_PER_WORD * LP_SUMMARIZE_COMPRESS_WORDS)
		return pt;
	lp_buf_init(&gen);
	lp_summarize_step_sentence(r, &s);
	if (lp_summarize_generate(r, &s, "point", p, len, r->budget, &gen, d)) {
		lp_buf_release(&gen);
		return NULL;
	}
	if (gen.len && lp_points_parse(gen.data, gen.len, &sf, 1) &&
	    lp_match_count_words(gen.data + sf.off, sf.len) < words &&
	    lp_points_faithful(gen.data + sf.off, sf.len, p, len) &&
	    lp_points_is_prose(gen.data + sf.off, sf.len) &&
	    !lp_points_is_meta(gen.data + sf.off, sf.len) &&
	    lp_summarize_grounded_in(gen.data + sf.off, sf.len, p, len) &&
	    lp_summarize_grounded_in(p, len, gen.data + sf.off, sf.len)) {
		res = lp_arena_printf(&r->doc->arena, "%.*s%.*s", (int)head, pt, (int)sf.len,
				      gen.data + sf.off);
		(*shortened)++;
	} else if (gen.len) {
		lp_debug("compress: kept the sentence, not '%.*s'", (int)gen.len, gen.data);
	}
	lp_buf_release(&gen);
	lp_arena_release(&r->scratch);
	if (!res)
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	return res;
}
