/*
 * summarize_model.c - summaries written by the model: `tree` (map-reduce)
 * and `refine` (a rolling summary).
 *
 * Every step is one chat: the instruction as the system message, the text
 * as the user message. The session tokenizes contents apart from the
 * template, so a prompt's length is exactly
 *     overhead(template) + tokens(instruction) + tokens(text)
 * and the text budget B = n_ctx - overhead - tokens(instruction) -
 * max_tokens is exact. An input over B is cut to B tokens (an event says
 * so); the session refuses anything longer as a bug.
 *
 * tree: level 0 summarises each chunk of the working set. Level k+1 groups
 * consecutive texts of level k: a group takes up to `fanout` texts, fewer
 * while their tokens joined (with separators) exceed B, but never fewer
 * than 2; a pair that still does not fit has each text cut to half of B.
 * A last text left alone is carried up unchanged.
 *
 * Termination: while a level holds n >= 2 texts, its first group has
 * min(fanout, n) >= 2 members and no group is empty, so the next level
 * holds at most ceil(n / 2) <= n - 1 texts. The count strictly falls until
 * it is 1, so a tree over n0 chunks has at most 1 + ceil(log2 n0) levels
 * whatever the summaries' lengths, and every step's prompt fits because
 * inputs are cut to B first. (Tested over many sizes in check_chain.c.)
 *
 * refine: one level whose text i is the summary of chunks 0..i: the
 * previous summary rides in the system message, the next chunk is the user
 * message; the chunk budget is what the context leaves after both.
 *
 * on_oom shrink: a step refused by the memory budget is retried on the two
 * halves of its input (cut at a sentence or space near the middle), down to
 * LP_STAGE_MIN_INPUT tokens; the halves' summaries joined stand for the
 * step's output. Each shrink is an event in the trace.
 *
 * Memory per step is freed with the step: a chunk's extract, the prompt
 * and the cut input live in a scratch arena released after every chunk
 * (and group), and the chunk's text is released from the resident set
 * (lp_document_done) once its summary is written. What stays for the whole
 * run is each summary (at most max_tokens tokens) and three words of
 * bookkeeping per summary in doc->levels.
 */
#include "stages/summarize_model.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "model/session.h"
#include "stages/model_stage.h"
#include "stages/stage.h"
#include "text/extractive.h"

#define SEP "\n\n"

static const char default_prompt[] =
	"You write concise, factual summaries. Summarize the user's text in a few "
	"sentences. Keep names, numbers, commands and key terms. Reply with the "
	"summary only.";

static const char refine_prompt[] =
	"You keep a running summary of a long document. Update the summary so far "
	"with the new text the user gives. Keep names, numbers, commands and key "
	"terms. Reply with the updated summary only.";

struct run {
	struct lp_doc *doc;
	const struct lp_summarize_model_opts *o;
	struct lp_session *s;
	const char *instruction;  /* system message of a step (arena) */
	size_t budget;            /* B: tokens of text a step may take */
	struct lp_summary_level *level; /* being written, for token counts */
	struct lp_arena scratch;  /* one step's prompts and extracts */
	size_t released;          /* the text is released up to here */
};

/* The system message: the instruction, plus the first `keep` bytes of the
 * must-keep facts on a retry. */
static const char *instruction_of(struct lp_doc *doc, const struct lp_summarize_model_opts *o,
				  const char *base, size_t keep)
{
	const char *p = o->prompt ? lp_stage_expand(doc, o->prompt) : base;

	if (!p || !doc->must_keep || !keep)
		return p;
	return lp_arena_printf(&doc->arena, "%s\n\nThe summary must keep these facts:\n%.*s", p,
			       (int)keep, doc->must_keep);
}

/* What the user message says before the text: small models follow an
 * instruction in the user's turn far better than one in the system
 * message alone. Its tokens are counted apart from the text's, with
 * LABEL_SLACK tokens for what joining them may change at the seam. */
static const char tree_label[] = "Summarize the following text in two or three sentences.\n\n";
static const char refine_label[] = "Update the summary with this new text:\n\n";
#define LABEL_SLACK 4

static const char *label_of(const struct run *r)
{
	return r->o->strategy == LP_SUMMARIZE_TREE ? tree_label : refine_label;
}

static enum lp_status set_budget(struct run *r, size_t reserved, struct lp_diag *d)
{
	struct lp_chat_msg m[2] = { { "system", "" }, { "user", "" } };
	const char *label = label_of(r);
	size_t instr = lp_session_count_tokens(r->s, r->instruction, strlen(r->instruction)) +
		       lp_session_count_tokens(r->s, label, strlen(label)) + LABEL_SLACK;

	return lp_stage_input_budget(r->s, m, 2, r->o->max_tokens, instr + reserved, &r->budget,
				     d);
}

/*
 * Set the instruction and the text budget. Must-keep facts that would
 * leave too little room for the text are cut, by halves, down to none: a
 * retry must never fail for the facts it was asked to keep.
 */
static enum lp_status fit_instruction(struct run *r, size_t reserved, struct lp_diag *d)
{
	const char *base = r->o->strategy == LP_SUMMARIZE_TREE ? default_prompt : refine_prompt;
	size_t keep = r->doc->must_keep ? strlen(r->doc->must_keep) : 0;
	enum lp_status st;

	for (;;) {
		r->instruction = instruction_of(r->doc, r->o, base, keep);
		if (!r->instruction)
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a prompt");
		st = set_budget(r, reserved, d);
		/* keep room for a few inputs' worth of text, not just the floor */
		if (!st && keep && r->budget < 4 * LP_STAGE_MIN_INPUT)
			st = LP_E_CONFIG;
		if (st != LP_E_CONFIG || !keep)
			return st;
		lp_diag_init(d);
		keep /= 2;
		while (keep && ((unsigned char)r->doc->must_keep[keep] & 0xC0) == 0x80)
			keep--;
		if (!keep)
			lp_doc_event(r->doc, "retry: must-keep facts dropped (context)");
	}
}

/* A byte near the middle of text[0..len) to cut at: after a sentence end,
 * else after a space, else at a character boundary. */
static size_t middle_cut(const char *text, size_t len)
{
	size_t mid = len / 2, best = 0;

	for (size_t i = mid; i > mid / 2 && !best; i--)
		if ((text[i - 1] == '.' || text[i - 1] == '\n') && (text[i] == ' ' || text[i] == '\n'))
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
static enum lp_status fallback(struct run *r, const char *in, size_t len, struct lp_buf *out,
			       struct lp_diag *d)
{
	struct lp_extractive_opts eo = { r->o->max_tokens / 2 + 1, 0 };
	char *s;
	size_t n;
	enum lp_status st = lp_extractive_summarize(in, len, &eo, &s, &n, d);

	if (st)
		return st;
	st = lp_buf_add(out, s, n) ? lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory") : LP_OK;
	lp_mem_free(s);
	return st;
}

/* One model call on text[0..len), which fits the budget; appends to out. */
static enum lp_status step_once(struct run *r, const char *text, size_t len,
				struct lp_buf *out, struct lp_diag *d)
{
	char *in = lp_arena_printf(&r->scratch, "%s%.*s", label_of(r), (int)len, text);
	char *gen = NULL;
	struct lp_chat_msg m[2] = { { "system", r->instruction }, { "user", in } };
	size_t n_in = 0, n_out = 0, a, b;
	enum lp_status st;

	if (!in)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a prompt");
	st = lp_session_generate(r->s, m, 2, NULL, r->o->max_tokens, &gen, &n_in, &n_out, d);
	if (st)
		return st;
	r->level->tokens_in += n_in;
	r->level->tokens_out += n_out;
	for (a = 0; gen[a] == ' ' || gen[a] == '\n'; a++)
		;
	for (b = strlen(gen); b > a && (gen[b - 1] == ' ' || gen[b - 1] == '\n'); b--)
		;
	if (b > a)
		st = lp_buf_add(out, gen + a, b - a)
			? lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory") : LP_OK;
	else
		st = fallback(r, text, len, out, d);
	lp_mem_free(gen);
	return st;
}

/* step_once, halving the input while the budget refuses it (shrink). */
static enum lp_status step(struct run *r, const char *label, const char *text, size_t len,
			   struct lp_buf *out, struct lp_diag *d)
{
	enum lp_status st = step_once(r, text, len, out, d);
	size_t cut;

	if (st != LP_E_NOMEM || !lp_stage_shrink(r->doc) ||
	    lp_session_count_tokens(r->s, text, len) < 2 * LP_STAGE_MIN_INPUT)
		return st;
	cut = middle_cut(text, len);
	if (cut == 0 || cut >= len)
		return st;
	lp_doc_event(r->doc, "shrink: %s split in 2 (budget)", label);
	lp_diag_init(d);
	st = step(r, label, text, cut, out, d);
	if (!st && !lp_buf_adds(out, SEP))
		st = step(r, label, text + cut, len - cut, out, d);
	return st;
}

/* Cut text to the budget (noting it) and summarise it into *res. */
static enum lp_status summarize_text(struct run *r, const char *label, const char *text,
				     size_t len, size_t budget, const char **res,
				     struct lp_diag *d)
{
	struct lp_buf out;
	int cut = 0;
	const char *in = lp_stage_head_tokens_in(&r->scratch, r->s, text, len, budget, &cut, d);
	enum lp_status st;

	if (!in)
		return d->status ? d->status : LP_E_NOMEM;
	if (cut)
		lp_doc_event(r->doc, "truncate: %s cut to %zu tokens (context)", label, budget);
	lp_buf_init(&out);
	st = step(r, label, in, strlen(in), &out, d);
	if (!st && !(*res = lp_arena_strndup(&r->doc->arena, out.data, out.len)))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory storing a summary");
	lp_buf_release(&out);
	return st;
}

static enum lp_status level_alloc(struct lp_doc *doc, struct lp_summary_level *l, size_t n,
				  struct lp_diag *d)
{
	memset(l, 0, sizeof(*l));
	l->texts = lp_arena_alloc(&doc->arena, (n + 1) * sizeof(*l->texts));
	l->first_input = lp_arena_alloc(&doc->arena, (n + 1) * sizeof(size_t));
	l->n_inputs = lp_arena_alloc(&doc->arena, (n + 1) * sizeof(size_t));
	if (!l->texts || !l->first_input || !l->n_inputs)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a summary level");
	return LP_OK;
}

static const char *raw_chunk(struct lp_doc *doc, const size_t *set, size_t n, size_t i,
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
static const char *chunk_text(struct run *r, const size_t *set, size_t n, size_t i,
			      size_t *len, struct lp_diag *d)
{
	struct lp_extractive_opts eo = { r->o->extract_words, 0 };
	const char *t = raw_chunk(r->doc, set, n, i, len);
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
static enum lp_status hold_chunk(struct run *r, const size_t *set, size_t n, size_t i,
				 struct lp_diag *d)
{
	size_t len;

	raw_chunk(r->doc, set, n, i, &len);
	return lp_document_need(&r->doc->src, len, d);
}

/* Chunk i is summarised: free the step's scratch and release the chunk's
 * text from the resident set. */
static void release_chunk(struct run *r, const size_t *set, size_t n, size_t i)
{
	size_t len;
	const char *t = raw_chunk(r->doc, set, n, i, &len);

	lp_arena_release(&r->scratch);
	if (r->doc->text && t >= r->doc->text)
		lp_document_done_upto(&r->doc->src, &r->released, (size_t)(t - r->doc->text), len);
}

static enum lp_status tree_level0(struct run *r, const size_t *set, size_t n,
				  struct lp_summary_level *l, struct lp_diag *d)
{
	size_t n0 = n ? n : 1;
	struct lp_progress pr;
	enum lp_status st = LP_OK;
	char label[48];

	lp_progress_begin(&pr, "summarize", "chunks", n0);
	for (size_t i = 0; i < n0 && !st; i++) {
		size_t len;
		const char *t;
		st = hold_chunk(r, set, n, i, d);
		t = st ? NULL : chunk_text(r, set, n, i, &len, d);
		snprintf(label, sizeof(label), "chunk %zu", n ? set[i] : 0);
		l->first_input[i] = i;
		l->n_inputs[i] = 1;
		if (!st)
			st = t ? summarize_text(r, label, t, len, r->budget, &l->texts[i], d)
			       : d->status;
		l->n = i + 1;
		release_chunk(r, set, n, i);
		lp_progress_update(&pr, i + 1);
	}
	lp_progress_end(&pr);
	return st;
}

/* How many texts from `first` go in one group (see the file comment). */
static size_t group_size(struct run *r, const struct lp_summary_level *below,
			 const size_t *tokens, size_t first)
{
	size_t left = below->n - first, g = left < r->o->fanout ? left : r->o->fanout;

	while (g > 2) {
		size_t sum = 0;
		for (size_t i = first; i < first + g; i++)
			sum += tokens[i] + 2; /* a separator is at most 2 tokens */
		if (sum <= r->budget)
			break;
		g--;
	}
	return g;
}

/* Join below->texts[first..first+g), each cut to `each` tokens. */
static enum lp_status join_group(struct run *r, const struct lp_summary_level *below,
				 size_t first, size_t g, size_t each, struct lp_buf *b,
				 struct lp_diag *d)
{
	for (size_t i = first; i < first + g; i++) {
		size_t keep = strlen(below->texts[i]);
		if (each && lp_session_prefix_bytes(r->s, below->texts[i], keep, each, &keep, d))
			return LP_E_NOMEM;
		if ((i > first && lp_buf_adds(b, SEP)) || lp_buf_add(b, below->texts[i], keep))
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory joining summaries");
	}
	return LP_OK;
}

static enum lp_status tree_level(struct run *r, size_t k, const struct lp_summary_level *below,
				 struct lp_summary_level *l, struct lp_diag *d)
{
	size_t *tokens = lp_mem_alloc(LP_MEM_SCRATCH, (below->n + 1) * sizeof(size_t), d);
	struct lp_buf b;
	enum lp_status st = LP_OK;
	char label[64];

	if (!tokens)
		return LP_E_NOMEM;
	for (size_t i = 0; i < below->n; i++)
		tokens[i] = lp_session_count_tokens(r->s, below->texts[i], strlen(below->texts[i]));
	lp_buf_init(&b);
	for (size_t first = 0; first < below->n && !st; first += l->n_inputs[l->n - 1]) {
		size_t g = group_size(r, below, tokens, first), sum = 0, j = l->n;
		l->first_input[j] = first;
		l->n_inputs[j] = g;
		l->n = j + 1;
		if (g == 1) { /* the last text alone: carried up */
			l->texts[j] = below->texts[first];
			continue;
		}
		for (size_t i = first; i < first + g; i++)
			sum += tokens[i] + 2;
		lp_buf_reset(&b);
		st = join_group(r, below, first, g, sum > r->budget ? (r->budget - 2 * g) / g : 0,
				&b, d);
		if (sum > r->budget)
			lp_doc_event(r->doc, "truncate: level %zu group %zu inputs cut to %zu tokens "
				     "each (context)", k, j, (r->budget - 2 * g) / g);
		snprintf(label, sizeof(label), "level %zu group %zu", k, j);
		if (!st)
			st = summarize_text(r, label, b.data, b.len, r->budget, &l->texts[j], d);
		lp_arena_release(&r->scratch);
	}
	lp_buf_release(&b);
	lp_mem_free(tokens);
	return st;
}

static enum lp_status run_tree(struct run *r, const size_t *set, size_t n, struct lp_diag *d)
{
	struct lp_doc *doc = r->doc;
	size_t n0 = n ? n : 1, cap = 2;
	enum lp_status st;

	for (size_t m = n0; m > 1; m = (m + 1) / 2)
		cap++;
	doc->levels = lp_arena_alloc(&doc->arena, cap * sizeof(*doc->levels));
	if (!doc->levels)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for summary levels");
	r->level = &doc->levels[0];
	st = level_alloc(doc, r->level, n0, d);
	if (!st)
		st = tree_level0(r, set, n, r->level, d);
	doc->n_levels = 1;
	while (!st && doc->levels[doc->n_levels - 1].n > 1) {
		const struct lp_summary_level *below = &doc->levels[doc->n_levels - 1];
		if (doc->n_levels >= cap)
			return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0,
					   "summary tree did not shrink (%zu levels)", cap);
		r->level = &doc->levels[doc->n_levels];
		st = level_alloc(doc, r->level, below->n, d);
		if (!st)
			st = tree_level(r, doc->n_levels, below, r->level, d);
		doc->n_levels++;
	}
	return st;
}

static enum lp_status run_refine(struct run *r, const size_t *set, size_t n, struct lp_diag *d)
{
	struct lp_doc *doc = r->doc;
	const char *base = r->instruction;
	size_t n0 = n ? n : 1;
	struct lp_progress pr;
	enum lp_status st;
	char label[48];

	doc->levels = lp_arena_alloc(&doc->arena, sizeof(*doc->levels));
	if (!doc->levels)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for summary levels");
	r->level = &doc->levels[0];
	if ((st = level_alloc(doc, r->level, n0, d)))
		return st;
	doc->n_levels = 1;
	/* the previous summary takes at most max_tokens of the context
	 * (budget set by fit_instruction) */
	lp_progress_begin(&pr, "refine", "chunks", n0);
	for (size_t i = 0; i < n0 && !st; i++) {
		size_t len, budget = r->budget;
		const char *t;
		if ((st = hold_chunk(r, set, n, i, d)))
			break;
		if (!(t = chunk_text(r, set, n, i, &len, d))) {
			st = d->status;
			break;
		}
		if (i) {
			int cut;
			const char *prev = lp_stage_head_tokens_in(&r->scratch, r->s,
								   r->level->texts[i - 1],
								   strlen(r->level->texts[i - 1]),
								   r->o->max_tokens, &cut, d);
			r->instruction = prev ? lp_arena_printf(&r->scratch, "%s\n\nSummary so far:\n%s",
								base, prev) : NULL;
			if (!r->instruction) {
				st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a prompt");
				break;
			}
		}
		snprintf(label, sizeof(label), "chunk %zu", n ? set[i] : 0);
		r->level->first_input[i] = 0;
		r->level->n_inputs[i] = i + 1;
		st = summarize_text(r, label, t, len, budget, &r->level->texts[i], d);
		r->level->n = i + 1;
		r->instruction = base; /* the scratch it was in goes now */
		release_chunk(r, set, n, i);
		lp_progress_update(&pr, i + 1);
	}
	lp_progress_end(&pr);
	r->instruction = base;
	lp_arena_release(&r->scratch);
	return st;
}

static const char *levels_note(struct lp_doc *doc, const char *what)
{
	struct lp_buf b;
	const char *s;

	lp_buf_init(&b);
	lp_buf_addf(&b, "%s levels: ", what);
	for (size_t k = 0; k < doc->n_levels; k++)
		lp_buf_addf(&b, "%s%zu", k ? " -> " : "", doc->levels[k].n);
	lp_buf_adds(&b, "; tokens in/out:");
	for (size_t k = 0; k < doc->n_levels; k++)
		lp_buf_addf(&b, " %zu/%zu", doc->levels[k].tokens_in, doc->levels[k].tokens_out);
	s = lp_arena_strndup(&doc->arena, b.data, b.len);
	lp_buf_release(&b);
	return s;
}

enum lp_status lp_summarize_model_run(struct lp_doc *doc,
				      const struct lp_summarize_model_opts *o,
				      struct lp_diag *d)
{
	struct run r = { doc, o, NULL, NULL, 0, NULL, { NULL, 0 }, 0 };
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
	if ((st = fit_instruction(&r, tree ? 0 : o->max_tokens + 16, d)))
		return st;
	lp_mem_set_phase("summarize");
	st = tree ? run_tree(&r, set, n, d) : run_refine(&r, set, n, d);
	lp_arena_release(&r.scratch);
	lp_mem_set_phase(phase);
	if (st) {
		doc->n_levels = 0;
		return st;
	}
	doc->summary = doc->levels[doc->n_levels - 1].texts[doc->levels[doc->n_levels - 1].n - 1];
	lp_doc_note(doc, "%s", levels_note(doc, tree ? "tree" : "refine"));
	return LP_OK;
}
