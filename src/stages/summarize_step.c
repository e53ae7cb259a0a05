/*
 * summarize_step.c - one model step of the summarize stage, and the
 * budget every step of a run is sized by.
 *
 * Every step is one chat: the instruction as the system message; the text
 * as the user message, framed by a short head before it and, for tree, a
 * request after it (summarize_prompts.c). The session tokenizes contents
 * apart from the template, so a prompt's length is exactly
 *     overhead(template) + tokens(instruction) + tokens(frame) + tokens(text)
 * (the frame counted with a few tokens of slack for its seams) and the text
 * budget B = n_ctx - overhead - tokens(instruction) - tokens(frame) -
 * max_tokens is safe. An input over B is cut to B tokens (an event says
 * so); the session refuses anything longer as a bug. A summary that
 * max_tokens stopped mid-sentence is cut back to its last full sentence.
 *
 * on_oom shrink: a step refused by the memory budget is retried on the two
 * halves of its input (cut at a sentence or space near the middle), down to
 * LP_STAGE_MIN_INPUT tokens; the halves' summaries joined stand for the
 * step's output. Each shrink is an event in the trace.
 *
 * Memory per step is freed with the step: a chunk's extract, the prompt
 * and the cut input live in a scratch arena released after every chunk
 * (and group), and the chunk's text is released from the resident set
 * (lp_document_done) once its summary is written.
 */
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "model/session.h"
#include "stages/model_stage.h"
#include "stages/stage.h"
#include "stages/summarize_run.h"
#include "text/extractive.h"
#include "text/points.h"
#include "text/sentence.h"

/* The root step's max_tokens as configured, before any cut. */
size_t lp_summarize_configured_final(const struct lp_summarize_run *r)
{
	return r->o->strategy == LP_SUMMARIZE_TREE && r->o->final_tokens ? r->o->final_tokens
									 : r->o->max_tokens;
}

/* Set r->budget, r->final_budget and r->final_tokens for the current
 * instruction, from the configured final_tokens each time (a call with a
 * longer instruction must not keep a cut a shorter one would not need). */
static enum lp_status set_budget(struct lp_summarize_run *r, size_t reserved,
				 struct lp_diag *d)
{
	struct lp_chat_msg m[2] = { { "system", "" }, { "user", "" } };
	size_t instr = lp_session_count_tokens(r->s, r->instruction, strlen(r->instruction)) +
		       lp_summarize_frame_tokens(r);
	enum lp_status st = lp_stage_input_budget(r->s, m, 2, r->o->max_tokens, instr + reserved,
						  &r->budget, d);

	r->final_tokens = lp_summarize_configured_final(r);
	r->final_budget = r->budget;
	if (st || r->final_tokens == r->o->max_tokens)
		return st;
	/* final_tokens is a ceiling: in a context too small for it (one the
	 * memory budget shrank, say) the root writes less rather than fail */
	while ((st = lp_stage_input_budget(r->s, m, 2, r->final_tokens, instr + reserved,
					   &r->final_budget, d)) == LP_E_CONFIG &&
	       r->final_tokens / 2 > r->o->max_tokens) {
		lp_diag_init(d);
		r->final_tokens /= 2;
	}
	if (st == LP_E_CONFIG) {
		lp_diag_init(d);
		r->final_tokens = r->o->max_tokens;
		r->final_budget = r->budget;
		st = LP_OK;
	}
	return st;
}

/*
 * Set the instruction and the text budget. Must-keep facts that would
 * leave too little room for the text are cut, by halves, down to none: a
 * retry must never fail for the facts it was asked to keep.
 */
enum lp_status lp_summarize_fit(struct lp_summarize_run *r, const char *base, size_t reserved,
				struct lp_diag *d)
{
	size_t keep = r->doc->must_keep ? strlen(r->doc->must_keep) : 0;
	enum lp_status st;

	for (;;) {
		r->instruction = lp_summarize_instruction(r, base, keep);
		if (!r->instruction)
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a prompt");
		st = set_budget(r, reserved, d);
		/* keep room for a few inputs' worth of text, not just the floor */
		if (!st && keep && (r->budget < 4 * LP_STAGE_MIN_INPUT ||
				    r->final_budget < 4 * LP_STAGE_MIN_INPUT))
			st = LP_E_CONFIG;
		if (st != LP_E_CONFIG || !keep)
			break;
		lp_diag_init(d);
		keep /= 2;
		while (keep && ((unsigned char)r->doc->must_keep[keep] & 0xC0) == 0x80)
			keep--;
		if (!keep)
			lp_doc_event(r->doc, "retry: must-keep facts dropped (context)");
	}
	if (!st && r->final_tokens < lp_summarize_configured_final(r))
		lp_doc_event(r->doc, "final_tokens cut to %zu (context)", r->final_tokens);
	return st;
}

/* A byte near the middle of text[0..len) to cut at: after a sentence end,
 * else after a space, else at a character boundary. */
static size_t middle_cut(const char *text, size_t len)
{
	size_t mid = len / 2, best = 0;

	for (size_t i = mid; i > mid / 2 && !best; i--)
		if (lp_sentence_end_at(text, len, i) ||
		    (text[i - 1] == '\n' && (text[i] == ' ' || text[i] == '\n')))
			best = i;
	for (size_t i = mid; i > 0 && !best; i--)
		if (text[i] == ' ' || text[i] == '\n')
			best = i;
	if (!best)
		for (best = mid; best > 0 && ((unsigned char)text[best] & 0xC0) == 0x80; best--)
			;
	return best ? best : mid;
}

/* Without any words from the model, keep the input's central sentences:
 * an empty text would carry nothing up the tree. */
static enum lp_status fallback(struct lp_summarize_run *r, const char *in, size_t len,
			       struct lp_buf *out, struct lp_diag *d)
{
	struct lp_extractive_opts eo = { r->o->max_tokens / 2 + 1, 0, NULL, &r->doc->src.model };
	char *s;
	size_t n;
	enum lp_status st = lp_extractive_summarize(in, len, &eo, &s, &n, d);

	if (st)
		return st;
	st = lp_buf_add(out, s, n) ? lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory") : LP_OK;
	lp_mem_free(s);
	return st;
}

/* A summary stopped by max_tokens ends mid-sentence: keep it up to its last
 * complete sentence, when that keeps at least half of it. */
static size_t complete_sentences(const char *s, size_t len)
{
	for (size_t i = len; i > len / 2; i--)
		if (lp_sentence_end_at(s, len, i))
			return i;
	return len;
}

/* Bytes of s[0..len) up to its last line end, or len without one. */
static size_t last_line_end(const char *s, size_t len)
{
	for (size_t i = len; i > 0; i--)
		if (s[i - 1] == '\n')
			return i - 1;
	return len;
}

/* One model call on text[0..len), which fits the budget; appends to out. */
static enum lp_status step_once(struct lp_summarize_run *r, const struct lp_summarize_step *s,
				const char *text, size_t len, struct lp_buf *out,
				struct lp_diag *d)
{
	char *in = lp_arena_printf(&r->scratch, "%s%.*s%s", s->head, (int)len, text, s->request);
	char *gen = NULL;
	struct lp_chat_msg m[2] = { { "system", s->instruction ? s->instruction : r->instruction },
				     { "user", in } };
	size_t n_in = 0, n_out = 0, a, b, max = s->max_tokens;
	enum lp_status st;

	if (!in)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a prompt");
	st = lp_session_generate(r->s, m, 2, NULL, max, &gen, &n_in, &n_out, d);
	if (st)
		return st;
	r->level->tokens_in += n_in;
	r->level->tokens_out += n_out;
	for (a = 0; gen[a] == ' ' || gen[a] == '\n'; a++)
		;
	for (b = strlen(gen); b > a && (gen[b - 1] == ' ' || gen[b - 1] == '\n'); b--)
		;
	if (n_out >= max && s->prose)
		b = a + complete_sentences(gen + a, b - a);
	else if (n_out >= max) /* a list: drop the item max_tokens cut */
		b = a + last_line_end(gen + a, b - a);
	if (b > a && s->prose && r->o->drop_meta)
		b = a + lp_points_clean(gen + a, b - a, gen + a);
	if (b > a)
		st = lp_buf_add(out, gen + a, b - a)
			? lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory") : LP_OK;
	else
		st = fallback(r, text, len, out, d);
	lp_mem_free(gen);
	return st;
}

/* step_once, halving the input while the budget refuses it (shrink). */
static enum lp_status step(struct lp_summarize_run *r, const struct lp_summarize_step *s,
			   const char *label, const char *text, size_t len, struct lp_buf *out,
			   struct lp_diag *d)
{
	enum lp_status st = step_once(r, s, text, len, out, d);
	size_t cut;

	if (st != LP_E_NOMEM || !lp_stage_shrink(r->doc) ||
	    lp_session_count_tokens(r->s, text, len) < 2 * LP_STAGE_MIN_INPUT)
		return st;
	cut = middle_cut(text, len);
	if (cut == 0 || cut >= len)
		return st;
	lp_doc_event(r->doc, "shrink: %s split in 2 (budget)", label);
	lp_diag_init(d);
	st = step(r, s, label, text, cut, out, d);
	if (!st && !lp_buf_adds(out, LP_SUMMARIZE_SEP))
		st = step(r, s, label, text + cut, len - cut, out, d);
	return st;
}

enum lp_status lp_summarize_generate(struct lp_summarize_run *r,
				     const struct lp_summarize_step *s, const char *label,
				     const char *text, size_t len, size_t budget,
				     struct lp_buf *out, struct lp_diag *d)
{
	int cut = 0;
	const char *in = lp_stage_head_tokens_in(&r->scratch, r->s, text, len, budget, &cut, d);

	if (!in)
		return d->status ? d->status : LP_E_NOMEM;
	if (cut)
		lp_doc_event(r->doc, "truncate: %s cut to %zu tokens (context)", label, budget);
	return step(r, s, label, in, strlen(in), out, d);
}

enum lp_status lp_summarize_text(struct lp_summarize_run *r, const struct lp_summarize_step *s,
				 const char *label, const char *text, size_t len, size_t budget,
				 const char **res, struct lp_diag *d)
{
	struct lp_buf out;
	enum lp_status st;

	lp_buf_init(&out);
	st = lp_summarize_generate(r, s, label, text, len, budget, &out, d);
	if (!st && !(*res = lp_arena_strndup(&r->doc->arena, out.data, out.len)))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory storing a summary");
	lp_buf_release(&out);
	return st;
}

const char *lp_summarize_raw_chunk(struct lp_doc *doc, const size_t *set, size_t n, size_t i,
				   size_t *len)
{
	if (!n) {
		*len = doc->len;
		return doc->text ? doc->text : "";
	}
	*len = doc->chunks[set[i]].len;
	return doc->text + doc->chunks[set[i]].off;
}

/*
 * Chunk i as the model reads it: verbatim, or (extract_words) its most
 * central sentences in document order. Prefill is most of a summary's
 * cost on a CPU, and a chunk's central sentences carry most of what its
 * summary would keep. NULL when out of memory.
 */
const char *lp_summarize_chunk_text(struct lp_summarize_run *r, const size_t *set, size_t n,
				    size_t i, int prose, size_t *len, struct lp_diag *d)
{
	struct lp_extractive_opts eo = { r->o->extract_words, 0,
					  prose ? NULL : lp_points_is_prose, &r->doc->src.model };
	const char *t = lp_summarize_raw_chunk(r->doc, set, n, i, len);
	char *s, *out;

	if (!r->o->extract_words)
		return t;
	if (lp_extractive_summarize(t, *len, &eo, &s, len, d))
		return NULL;
	out = lp_arena_strndup(&r->scratch, s, *len);
	lp_mem_free(s);
	if (!out)
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a chunk extract");
	return out;
}

/* Chunk i is about to be read: reserve it when it is larger than the
 * document's resident window. */
enum lp_status lp_summarize_hold_chunk(struct lp_summarize_run *r, const size_t *set, size_t n,
				       size_t i, struct lp_diag *d)
{
	size_t len;

	lp_summarize_raw_chunk(r->doc, set, n, i, &len);
	return lp_document_need(&r->doc->src, len, d);
}

/* Chunk i is summarised: free the step's scratch and release the chunk's
 * text from the resident set. */
void lp_summarize_release_chunk(struct lp_summarize_run *r, const size_t *set, size_t n,
				size_t i)
{
	size_t len;
	const char *t = lp_summarize_raw_chunk(r->doc, set, n, i, &len);

	lp_arena_release(&r->scratch);
	if (r->doc->text && t >= r->doc->text)
		lp_document_done_upto(&r->doc->src, &r->released, (size_t)(t - r->doc->text), len);
}
