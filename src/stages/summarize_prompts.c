/*
 * summarize_prompts.c - the frame of each kind of the summarize stage's
 * model steps; the words they say are stages/prompts.c's.
 *
 * Small instruct models follow a short request that comes after the text
 * far better than an instruction in the system message alone, and they
 * write about the content when the text is framed as "the text above"
 * (asked to "condense summaries", they write about the summaries). So a
 * tree step's user message is
 *     "Text:\n" <text> "\n\n" <request>
 * at every level: the joined summaries of a group are simply its text. The
 * root asks for more sentences, in proportion to final_tokens. The parts
 * around the text are counted apart from it, with LABEL_SLACK tokens for
 * what joining them may change at the seams.
 */
#include <stdio.h>
#include <string.h>

#include "model/session.h"
#include "stages/model_stage.h"
#include "stages/summarize_run.h"

#define LABEL_SLACK 8
#define TOKENS_PER_SENTENCE 30 /* what a summary sentence takes, roughly */

const struct lp_summarize_prompts *lp_summarize_prompts_of(const struct lp_doc *doc)
{
	return &lp_prompts_of(doc->text, doc->len)->summarize;
}

const char *lp_summarize_instruction(const struct lp_summarize_run *r, const char *base,
				     size_t keep)
{
	struct lp_doc *doc = r->doc;
	const char *p = r->o->prompt ? lp_stage_expand(doc, r->o->prompt) : base;

	if (!p || !doc->must_keep || !keep)
		return p;
	return lp_arena_printf(&doc->arena, "%s\n\n%s\n%.*s", p, r->lang->must_keep, (int)keep,
			       doc->must_keep);
}

/*
 * Sentences to ask for. A chunk's summary gets about one sentence per
 * 1.5 x TOKENS_PER_SENTENCE of max_tokens (at least 2), so that it ends
 * well before max_tokens; a group's one more; the root one per
 * TOKENS_PER_SENTENCE of final_tokens (3 to 12): it is the summary a
 * reader gets, and the model tends to write fewer sentences than asked.
 */
static size_t sentences_of(const struct lp_summarize_run *r, int root, size_t k)
{
	size_t leaf = r->o->max_tokens * 2 / (3 * TOKENS_PER_SENTENCE);
	size_t n = r->final_tokens / TOKENS_PER_SENTENCE;

	if (leaf < 2)
		leaf = 2;
	if (leaf > 11)
		leaf = 11;
	if (!root)
		return k ? leaf + 1 : leaf;
	return n < 3 ? 3 : n > 12 ? 12 : n;
}

static void step_set(struct lp_summarize_step *s, const char *head, size_t max_tokens,
		     int prose)
{
	s->instruction = NULL;
	s->head = head;
	s->request = s->buf;
	s->max_tokens = max_tokens;
	s->prose = prose;
	s->buf[0] = 0;
}

static void step_summary(const struct lp_summarize_run *r, struct lp_summarize_step *s,
			 size_t sentences, size_t max_tokens)
{
	step_set(s, r->lang->head, max_tokens, 1);
	snprintf(s->buf, sizeof(s->buf), r->lang->sentences, sentences);
}

void lp_summarize_step_tree(const struct lp_summarize_run *r, struct lp_summarize_step *s,
			    int root, size_t k)
{
	step_summary(r, s, sentences_of(r, root, k), root ? r->final_tokens : r->o->max_tokens);
}

void lp_summarize_step_points(const struct lp_summarize_run *r, struct lp_summarize_step *s)
{
	step_set(s, r->lang->head, r->o->max_tokens, 0);
	snprintf(s->buf, sizeof(s->buf), r->lang->points, r->o->points);
}

/* The shortened sentence is read as a point: a reply max_tokens cut
 * keeps its complete lines. */
void lp_summarize_step_sentence(const struct lp_summarize_run *r,
				struct lp_summarize_step *s)
{
	step_set(s, r->lang->sentence_head, r->o->max_tokens, 0);
	snprintf(s->buf, sizeof(s->buf), r->lang->compress, (size_t)LP_SUMMARIZE_COMPRESS_WORDS);
}

void lp_summarize_step_refine(const struct lp_summarize_run *r, struct lp_summarize_step *s)
{
	step_set(s, r->lang->refine_head, r->o->max_tokens, 1);
}

static size_t frame_of(const struct lp_summarize_run *r, const struct lp_summarize_step *s)
{
	return lp_session_count_tokens(r->s, s->head, strlen(s->head)) +
	       lp_session_count_tokens(r->s, s->request, strlen(s->request));
}

/* A tree's steps are its summaries (the longest request asks for 12
 * sentences) or points, and the sentences compress shortens. */
size_t lp_summarize_frame_tokens(const struct lp_summarize_run *r)
{
	struct lp_summarize_step a, b;
	size_t ta, tb;

	if (r->o->strategy != LP_SUMMARIZE_TREE)
		lp_summarize_step_refine(r, &a);
	else if (r->o->map == LP_SUMMARIZE_MAP_SUMMARY)
		step_summary(r, &a, 12, r->o->max_tokens);
	else
		lp_summarize_step_points(r, &a);
	if (r->o->strategy != LP_SUMMARIZE_TREE)
		lp_summarize_step_refine(r, &b);
	else
		lp_summarize_step_sentence(r, &b);
	ta = frame_of(r, &a);
	tb = frame_of(r, &b);
	return (ta > tb ? ta : tb) + LABEL_SLACK;
}
