/*
 * summarize_model.c - summaries written by the model: `tree` (map-reduce)
 * and `refine` (a rolling summary); with map: points or compress, a tree
 * whose points are checked and selected, never rewritten (see "map:
 * points and compress" below).
 *
 * Every step is one chat: the instruction as the system message; the text
 * as the user message, framed by a short head before it and, for tree, a
 * request after it (see tree_head). The session tokenizes contents apart
 * from the template, so a prompt's length is exactly
 *     overhead(template) + tokens(instruction) + tokens(frame) + tokens(text)
 * (the frame counted with a few tokens of slack for its seams) and the text
 * budget B = n_ctx - overhead - tokens(instruction) - tokens(frame) -
 * max_tokens is safe. An input over B is cut to B tokens (an event says
 * so); the session refuses anything longer as a bug. A summary that
 * max_tokens stopped mid-sentence is cut back to its last full sentence.
 *
 * tree: level 0 summarises each chunk of the working set. Level k+1 groups
 * consecutive texts of level k, joined as a list: groups aim at the same
 * size f' <= fanout on every level (level_fanout), are balanced in size,
 * and take fewer texts while their tokens joined (with separators) exceed
 * B, but never fewer than 2; a pair that still does not fit has each text
 * cut to half of B. A last text left alone is carried up unchanged. The
 * root, the step that writes the final summary, is the one group of a level
 * of at most fanout texts that fits its own budget (B with final_tokens
 * instead of max_tokens) or of two texts; it may write final_tokens tokens.
 * A level that is not the root is never made one group.
 *
 * Termination: while a level holds n >= 2 texts, every group but a last one
 * of one text has at least 2 members (f' >= 2, and a group is cut down to 2
 * at most), so the next level holds at most ceil(n / 2) <= n - 1 texts. The
 * count strictly falls until it is 1, so a tree over n0 chunks has at most
 * 1 + ceil(log2 n0) levels whatever the summaries' lengths, and every
 * step's prompt fits because inputs are cut to its budget first. (Tested
 * over many sizes in check_chain.c.)
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

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "model/session.h"
#include "stages/model_stage.h"
#include "stages/stage.h"
#include "text/extractive.h"
#include "text/keyphrase.h"
#include "text/lang.h"
#include "text/match.h"
#include "text/outline.h"
#include "text/points.h"

#define SEP "\n\n"
#define SEP_TOKENS 3 /* "\n- " before a list item, at most */

/*
 * The prompts, in the document's language (its script: Han text gets the
 * Chinese ones, any other the English ones). A small model answers in the
 * language it is asked in, whatever the language of the text it reads.
 * `points` and `compress` are formats with one %zu: the number of points,
 * or the words a shortened sentence may keep.
 */
struct prompts {
	const char *system;   /* tree, points and compress instruction */
	const char *refine;   /* refine instruction */
	const char *head;     /* before a text */
	const char *refine_head;
	const char *sentences; /* tree prose: "... in %zu sentences." */
	const char *points;   /* points: "List the %zu ..." */
	const char *sentence_head; /* compress: before the sentence */
	const char *compress; /* compress: "... at most %zu words ..." */
	const char *must_keep; /* before the facts a retry must keep */
};

static const struct prompts prompts_en = {
	"You are a helpful assistant who writes short, factual notes that keep the names, "
	"commands and key terms of the text.",
	"You keep a running summary of a long document. Update the summary so far with the "
	"new text the user gives. Keep names, numbers, commands and key terms. Reply with "
	"the updated summary only.",
	"Text:\n",
	"Update the summary with this new text:\n\n",
	"\n\nWrite a summary of the text above in %zu sentences.",
	"\n\nList the %zu most important facts of the text above as short bullet points, one "
	"per line, each starting with \"- \". Use the words of the text.",
	"Sentence:\n",
	"\n\nShorten the sentence above to at most %zu words. Keep its words.",
	"The summary must keep these facts:",
};

static const struct prompts prompts_zh = {
	"你是一个乐于助人的助手，用原文的词语写简短、准确的要点，保留名称、命令和关键术语。",
	"你为一篇长文档维护一份摘要。根据用户给出的新文本更新目前的摘要，保留名称、数字、命令和"
	"关键术语。只回复更新后的摘要。",
	"文本：\n",
	"用这段新文本更新摘要：\n\n",
	"\n\n用中文写上文的摘要，共%zu句。",
	"\n\n用中文列出上文最重要的%zu个事实，每行一条，以\"- \"开头。使用原文的词语。",
	"句子：\n",
	"\n\n用中文把上面的句子缩短到%zu个字以内，保留原文的词语。",
	"摘要必须保留这些事实：",
};

struct run {
	struct lp_doc *doc;
	const struct lp_summarize_model_opts *o;
	struct lp_session *s;
	const struct prompts *lang; /* the document's language */
	const char *instruction;  /* system message of a step (arena) */
	size_t budget;            /* B: tokens of text a step may take */
	size_t final_budget;      /* tree: B of the root step (final_tokens) */
	size_t final_tokens;      /* tree: max_tokens of the root step */
	int root;                 /* the step being run writes the root */
	int sentence;             /* compress: the step shortens one sentence */
	struct lp_summary_level *level; /* being written, for token counts */
	struct lp_arena scratch;  /* one step's prompts and extracts */
	size_t released;          /* the text is released up to here */
	char tail[256];           /* the request of the step being run */
	size_t sentences, shortened; /* compress: sentences read, shortened */
};

/* The system message: the instruction, plus the first `keep` bytes of the
 * must-keep facts on a retry. */
static const char *instruction_of(struct lp_doc *doc, const struct lp_summarize_model_opts *o,
				  const struct prompts *lang, const char *base, size_t keep)
{
	const char *p = o->prompt ? lp_stage_expand(doc, o->prompt) : base;

	if (!p || !doc->must_keep || !keep)
		return p;
	return lp_arena_printf(&doc->arena, "%s\n\n%s\n%.*s", p, lang->must_keep, (int)keep,
			       doc->must_keep);
}

/*
 * The user message of a step. Small instruct models follow a short request
 * that comes after the text far better than an instruction in the system
 * message alone, and they write about the content when the text is framed
 * as "the text above" (asked to "condense summaries", they write about the
 * summaries). So a tree step's user message is
 *     "Text:\n" <text> "\n\n" <request>
 * at every level: the joined summaries of a group are simply its text. The
 * root asks for more sentences, in proportion to final_tokens. The parts
 * around the text are counted apart from it, with LABEL_SLACK tokens for
 * what joining them may change at the seams.
 */
#define LABEL_SLACK 8
#define TOKENS_PER_SENTENCE 30 /* what a summary sentence takes, roughly */
#define COMPRESS_WORDS 20      /* compress: words a shortened sentence may keep */

static const char *head_of(const struct run *r)
{
	if (r->o->strategy != LP_SUMMARIZE_TREE)
		return r->lang->refine_head;
	return r->sentence ? r->lang->sentence_head : r->lang->head;
}

/*
 * Sentences to ask for. A chunk's summary gets about one sentence per
 * 1.5 x TOKENS_PER_SENTENCE of max_tokens (at least 2), so that it ends
 * well before max_tokens; a group's one more; the root one per
 * TOKENS_PER_SENTENCE of final_tokens (3 to 12): it is the summary a
 * reader gets, and the model tends to write fewer sentences than asked.
 */
static size_t sentences_of(const struct run *r)
{
	size_t leaf = r->o->max_tokens * 2 / (3 * TOKENS_PER_SENTENCE);
	size_t n = r->final_tokens / TOKENS_PER_SENTENCE;

	if (leaf < 2)
		leaf = 2;
	if (leaf > 11)
		leaf = 11;
	if (!r->root)
		return r->level && r->level != r->doc->levels ? leaf + 1 : leaf;
	return n < 3 ? 3 : n > 12 ? 12 : n;
}

/* The request after the text of the step being run (in r->tail); `n`
 * overrides the count in it when not 0 (frame_tokens asks for the
 * longest). */
static const char *tail_of(struct run *r, size_t n)
{
	if (r->o->strategy != LP_SUMMARIZE_TREE)
		return "";
	if (r->sentence)
		snprintf(r->tail, sizeof(r->tail), r->lang->compress, (size_t)COMPRESS_WORDS);
	else if (r->o->map == LP_SUMMARIZE_MAP_SUMMARY)
		snprintf(r->tail, sizeof(r->tail), r->lang->sentences, n ? n : sentences_of(r));
	else
		snprintf(r->tail, sizeof(r->tail), r->lang->points, n ? n : r->o->points);
	return r->tail;
}

/* Tokens of the user message besides the text: the longest head and the
 * longest request a step of this run may use. */
static size_t frame_tokens(struct run *r)
{
	size_t most = 0;

	for (int sentence = 0; sentence < 2; sentence++) {
		const char *head, *tail;
		size_t t;
		r->sentence = sentence;
		head = head_of(r);
		tail = tail_of(r, r->o->map == LP_SUMMARIZE_MAP_SUMMARY ? 12 : 0);
		t = lp_session_count_tokens(r->s, head, strlen(head)) +
		    lp_session_count_tokens(r->s, tail, strlen(tail));
		most = t > most ? t : most;
	}
	r->sentence = 0;
	return most + LABEL_SLACK;
}

/* The root step's max_tokens as configured, before any cut. */
static size_t configured_final_tokens(const struct run *r)
{
	return r->o->strategy == LP_SUMMARIZE_TREE && r->o->final_tokens ? r->o->final_tokens
									 : r->o->max_tokens;
}

/* Set r->budget, r->final_budget and r->final_tokens for the current
 * instruction, from the configured final_tokens each time (a call with a
 * longer instruction must not keep a cut a shorter one would not need). */
static enum lp_status set_budget(struct run *r, size_t reserved, struct lp_diag *d)
{
	struct lp_chat_msg m[2] = { { "system", "" }, { "user", "" } };
	size_t instr = lp_session_count_tokens(r->s, r->instruction, strlen(r->instruction)) +
		       frame_tokens(r);
	enum lp_status st = lp_stage_input_budget(r->s, m, 2, r->o->max_tokens, instr + reserved,
						  &r->budget, d);

	r->final_tokens = configured_final_tokens(r);
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
static enum lp_status fit_instruction(struct run *r, size_t reserved, struct lp_diag *d)
{
	const char *base = r->o->strategy == LP_SUMMARIZE_TREE ? r->lang->system : r->lang->refine;
	size_t keep = r->doc->must_keep ? strlen(r->doc->must_keep) : 0;
	enum lp_status st;

	for (;;) {
		r->instruction = instruction_of(r->doc, r->o, r->lang, base, keep);
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
	if (!st && r->final_tokens < configured_final_tokens(r))
		lp_doc_event(r->doc, "final_tokens cut to %zu (context)", r->final_tokens);
	return st;
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

/* Is s[i - n..i) a sentence end: ASCII . ! ? before a space or the end,
 * or a full-width one? Returns its length n, else 0. */
static size_t sentence_end_at(const char *s, size_t len, size_t i)
{
	static const char *const wide[] = { "\xe3\x80\x82", "\xef\xbc\x81", "\xef\xbc\x9f" };

	if ((s[i - 1] == '.' || s[i - 1] == '!' || s[i - 1] == '?') &&
	    (i == len || s[i] == ' ' || s[i] == '\n'))
		return 1;
	for (size_t k = 0; k < 3; k++)
		if (i >= 3 && !memcmp(s + i - 3, wide[k], 3))
			return 3;
	return 0;
}

/* A summary stopped by max_tokens ends mid-sentence: keep it up to its last
 * complete sentence, when that keeps at least half of it. */
static size_t complete_sentences(const char *s, size_t len)
{
	for (size_t i = len; i > len / 2; i--)
		if (sentence_end_at(s, len, i))
			return i;
	return len;
}

/* Does the step write prose (a summary) rather than points? */
static int prose(const struct run *r)
{
	return r->o->strategy != LP_SUMMARIZE_TREE || r->o->map == LP_SUMMARIZE_MAP_SUMMARY;
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
static enum lp_status step_once(struct run *r, const char *text, size_t len,
				struct lp_buf *out, struct lp_diag *d)
{
	char *in = lp_arena_printf(&r->scratch, "%s%.*s%s", head_of(r), (int)len, text,
				   tail_of(r, 0));
	char *gen = NULL;
	struct lp_chat_msg m[2] = { { "system", r->instruction }, { "user", in } };
	size_t n_in = 0, n_out = 0, a, b, max = r->root ? r->final_tokens : r->o->max_tokens;
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
	if (n_out >= max && prose(r))
		b = a + complete_sentences(gen + a, b - a);
	else if (n_out >= max) /* a list: drop the item max_tokens cut */
		b = a + last_line_end(gen + a, b - a);
	if (b > a && prose(r) && r->o->drop_meta)
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

/* Cut text to the budget (noting it) and append the model's text to out. */
static enum lp_status generate_text(struct run *r, const char *label, const char *text,
				    size_t len, size_t budget, struct lp_buf *out,
				    struct lp_diag *d)
{
	int cut = 0;
	const char *in = lp_stage_head_tokens_in(&r->scratch, r->s, text, len, budget, &cut, d);

	if (!in)
		return d->status ? d->status : LP_E_NOMEM;
	if (cut)
		lp_doc_event(r->doc, "truncate: %s cut to %zu tokens (context)", label, budget);
	return step(r, label, in, strlen(in), out, d);
}

/* generate_text into *res, a doc arena string. */
static enum lp_status summarize_text(struct run *r, const char *label, const char *text,
				     size_t len, size_t budget, const char **res,
				     struct lp_diag *d)
{
	struct lp_buf out;
	enum lp_status st;

	lp_buf_init(&out);
	st = generate_text(r, label, text, len, budget, &out, d);
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
	struct lp_extractive_opts eo = { r->o->extract_words, 0,
					  prose(r) ? NULL : lp_points_is_prose, &r->doc->src.model };
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

	lp_progress_begin(&pr, "level 0", "chunks", n0);
	for (size_t i = 0; i < n0 && !st; i++) {
		size_t len;
		const char *t;
		st = hold_chunk(r, set, n, i, d);
		t = st ? NULL : chunk_text(r, set, n, i, &len, d);
		snprintf(label, sizeof(label), "chunk %zu", n ? set[i] : 0);
		l->first_input[i] = i;
		l->n_inputs[i] = 1;
		r->root = n0 == 1; /* a single chunk's summary is the root */
		if (!st)
			st = t ? summarize_text(r, label, t, len,
						r->root ? r->final_budget : r->budget,
						&l->texts[i], d) : d->status;
		r->root = 0;
		l->n = i + 1;
		release_chunk(r, set, n, i);
		lp_progress_update(&pr, i + 1);
	}
	lp_progress_end(&pr);
	return st;
}

/* Tokens of below->texts[first..first+g) joined as a list (a bullet and
 * its line end take at most SEP_TOKENS). */
static size_t joined_tokens(const size_t *tokens, size_t first, size_t g)
{
	size_t sum = 0;

	for (size_t i = first; i < first + g; i++)
		sum += tokens[i] + SEP_TOKENS;
	return sum;
}

/* Does the whole level go into one last step, the root? Always for a pair
 * (it cannot be split further), else when it fits fanout and the root's
 * budget. */
static int is_root_level(struct run *r, const struct lp_summary_level *below,
			 const size_t *tokens)
{
	return below->n <= r->o->fanout &&
	       (below->n == 2 || joined_tokens(tokens, 0, below->n) <= r->final_budget);
}

/*
 * The group size a level aims at: the smallest f' whose h-th power reaches
 * n, where h = ceil(log_fanout n) is the number of levels still needed. The
 * levels then share the reduction evenly (72 texts at fanout 8 go
 * 72 -> 15 -> 4 -> 1, not 72 -> 9 -> 2 -> 1): a small model merges four or
 * five texts well, while a merge of eight drops most of them and a last
 * merge of two keeps little of the second. f' <= fanout since n <=
 * fanout^h; f' >= 2.
 */
static size_t level_fanout(size_t n, size_t fanout)
{
	size_t h = 0, f = 2;

	for (size_t p = 1; p < n; p = p > n / fanout ? n : p * fanout)
		h++;
	for (;; f++) {
		size_t p = 1;
		for (size_t i = 0; i < h && p < n; i++)
			p *= f;
		if (p >= n || f >= fanout)
			return f;
	}
}

/* How many texts from `first` go in one group (see the file comment):
 * groups are balanced in size at about `f` (level_fanout), then made
 * smaller while over the budget. A level that is not the root never
 * becomes one group, so that the root is always written with
 * final_tokens. */
static size_t group_size(struct run *r, const struct lp_summary_level *below,
			 const size_t *tokens, size_t first, size_t f)
{
	size_t left = below->n - first, groups = (left + f - 1) / f;
	size_t g = (left + groups - 1) / groups;

	if (!first && g == below->n && g > 2)
		g--;
	while (g > 2 && joined_tokens(tokens, first, g) > r->budget)
		g--;
	return g;
}

/*
 * Join below->texts[first..first+g), each cut to `each` tokens (0: whole),
 * as a list: one "- " item per text, its line ends made spaces. A small
 * model reading a list summarises every item; reading paragraphs it tends
 * to keep the first one and drop the rest.
 */
static enum lp_status join_group(struct run *r, const struct lp_summary_level *below,
				 size_t first, size_t g, size_t each, struct lp_buf *b,
				 struct lp_diag *d)
{
	for (size_t i = first; i < first + g; i++) {
		const char *t = below->texts[i];
		size_t keep = strlen(t), at = b->len;
		if (each && lp_session_prefix_bytes(r->s, t, keep, each, &keep, d))
			return LP_E_NOMEM;
		if ((i > first && lp_buf_addc(b, '\n')) || lp_buf_adds(b, "- ") ||
		    lp_buf_add(b, t, keep))
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory joining summaries");
		for (size_t k = at; k < b->len; k++)
			if (b->data[k] == '\n' && k > at)
				b->data[k] = ' ';
	}
	return LP_OK;
}

static enum lp_status tree_level(struct run *r, size_t k, const struct lp_summary_level *below,
				 struct lp_summary_level *l, struct lp_diag *d)
{
	size_t *tokens = lp_mem_alloc(LP_MEM_SCRATCH, (below->n + 1) * sizeof(size_t), d);
	struct lp_buf b;
	enum lp_status st = LP_OK;
	struct lp_progress pr;
	size_t budget, f;
	char label[64], what[32];

	if (!tokens)
		return LP_E_NOMEM;
	for (size_t i = 0; i < below->n; i++)
		tokens[i] = lp_session_count_tokens(r->s, below->texts[i], strlen(below->texts[i]));
	r->root = is_root_level(r, below, tokens);
	budget = r->root ? r->final_budget : r->budget;
	f = level_fanout(below->n, r->o->fanout);
	lp_buf_init(&b);
	snprintf(what, sizeof(what), "level %zu", k);
	lp_progress_begin(&pr, what, "inputs", below->n);
	for (size_t first = 0; first < below->n && !st; first += l->n_inputs[l->n - 1]) {
		size_t g = r->root ? below->n : group_size(r, below, tokens, first, f), j = l->n;
		size_t sum = joined_tokens(tokens, first, g), each = 1;
		if (budget > (SEP_TOKENS + 1) * g) /* always, but never 0 (0: uncut) */
			each = (budget - SEP_TOKENS * g) / g;
		l->first_input[j] = first;
		l->n_inputs[j] = g;
		l->n = j + 1;
		if (g == 1) { /* the last text alone: carried up */
			l->texts[j] = below->texts[first];
			continue;
		}
		lp_buf_reset(&b);
		st = join_group(r, below, first, g, sum > budget ? each : 0, &b, d);
		if (sum > budget)
			lp_doc_event(r->doc, "truncate: level %zu group %zu inputs cut to %zu tokens "
				     "each (context)", k, j, each);
		snprintf(label, sizeof(label), "level %zu group %zu", k, j);
		if (!st)
			st = summarize_text(r, label, b.data, b.len, budget, &l->texts[j], d);
		lp_arena_release(&r->scratch);
		lp_progress_update(&pr, first + g);
	}
	lp_progress_end(&pr);
	r->root = 0;
	lp_buf_release(&b);
	lp_mem_free(tokens);
	return st;
}

/* final: join - do the summaries of `below`, joined as paragraphs, fit
 * final_tokens? */
static int fits_final(struct run *r, const struct lp_summary_level *below)
{
	size_t sum = 0;

	for (size_t i = 0; i < below->n && sum <= r->final_tokens; i++)
		sum += lp_session_count_tokens(r->s, below->texts[i], strlen(below->texts[i])) + 2;
	return sum <= r->final_tokens;
}

/*
 * The last level of final: join: one text, the summaries of `below` as
 * paragraphs in document order, with no model step. A small model merging
 * a few summaries keeps the first and drops much of the rest; once they
 * are short enough to read, joining them loses nothing.
 */
static enum lp_status join_level(struct run *r, const struct lp_summary_level *below,
				 struct lp_summary_level *l, struct lp_diag *d)
{
	struct lp_buf b;

	lp_buf_init(&b);
	for (size_t i = 0; i < below->n; i++)
		if ((i && lp_buf_adds(&b, SEP)) || lp_buf_adds(&b, below->texts[i])) {
			lp_buf_release(&b);
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory joining summaries");
		}
	l->texts[0] = lp_arena_strndup(&r->doc->arena, b.data, b.len);
	lp_buf_release(&b);
	if (!l->texts[0])
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory joining summaries");
	l->first_input[0] = 0;
	l->n_inputs[0] = below->n;
	l->n = 1;
	lp_doc_event(r->doc, "join: %zu summaries fit final_tokens, joined as the result",
		     below->n);
	return LP_OK;
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
		if (!st && r->o->final_join && fits_final(r, below))
			st = join_level(r, below, r->level, d);
		else if (!st)
			st = tree_level(r, doc->n_levels, below, r->level, d);
		doc->n_levels++;
	}
	return st;
}

/*
 * map: points and compress. Each chunk yields a few candidate points:
 * the items of the model's list (points), or the chunk's most central
 * sentences, each shortened by the model when it is long (compress). A
 * candidate loses its meta-talk sentences and, with grounded, is dropped
 * when one of its facts does not occur in the chunk, or when it is not
 * made of the chunk's words (points: fewer than POINT_MIN_SUPPORT of its
 * content words occur in the chunk, or it is no shortened form of one of
 * the sentences the model read, lp_points_faithful); a chunk left with
 * none keeps its most central prose sentence, when it has one. The
 * level above is no model step: lp_points_select keeps, under
 * final_tokens, one point per chunk (or per run of chunks) before a
 * second, and the result lists them in document order. A small model
 * merging its own summaries keeps the first inputs and drops the rest;
 * selection drops nothing it has room for and writes nothing new.
 */
#define POINTS_MAX 16      /* list items read from one reply */
#define CHUNK_KEYPHRASES 16 /* a chunk's keyphrases, for choosing and scoring */
#define POINT_COST_SLACK 2 /* tokens of the space or paragraph break */
#define POINT_MIN_SUPPORT 0.75 /* grounded: share of a point's content
				* words that must occur in its chunk */

struct points {
	struct lp_buf pts;   /* struct lp_point[], by input then rank */
	struct lp_buf texts; /* const char *[] (doc arena), parallel to pts */
	struct lp_buf heads; /* size_t[]: bytes of a text's "term: ", parallel */
	size_t n;
	size_t dropped_meta, dropped_ungrounded, dropped_unsupported;
};

/* *support: the share of the content words of p[0..len) that occur in
 * the chunk; *score: that plus half a point per keyphrase of the chunk
 * that p holds (at most two). */
static enum lp_status point_score(struct lp_match *chunk, const char *p, size_t len,
				  const char *const *kp, size_t n_kp, double *support,
				  double *score, struct lp_diag *d)
{
	struct lp_match pm;
	struct lp_token t;
	size_t pos = 0, words = 0, found_words = 0, hits = 0;
	enum lp_status st = LP_OK;

	while (!st && lp_match_token_next(p, len, &pos, &t)) {
		char low[64];
		size_t n;
		int found = 0;
		if (t.kind == LP_TOKEN_PUNCT)
			continue;
		n = lp_match_lower(p + t.off, t.len, low, sizeof(low));
		if (t.kind == LP_TOKEN_WORD && (n > sizeof(low) || n < 3 || lp_match_is_stopword(low, n)))
			continue;
		words++;
		st = lp_match_contains(chunk, p + t.off, t.len, &found);
		found_words += found;
	}
	if (!st)
		st = lp_match_init(&pm, p, len, d);
	for (size_t k = 0; k < n_kp && !st && hits < 2; k++) {
		int found = 0;
		st = lp_match_contains(&pm, kp[k], strlen(kp[k]), &found);
		hits += found;
	}
	lp_match_release(&pm);
	*support = words ? (double)found_words / (double)words : 0;
	*score = *support + 0.5 * (double)hits;
	return st ? lp_diag_set(d, st, NULL, 0, 0, "out of memory scoring a point") : LP_OK;
}

/* Is p[0..len) faithful (lp_points_faithful) to a sentence of text? */
static int faithful_to_some(const char *p, size_t len, const char *text, size_t text_len)
{
	struct lp_span sp;
	size_t pos = 0;

	while (lp_sentence_next(text, text_len, &pos, &sp))
		if (lp_points_faithful(p, len, text + sp.off, sp.len))
			return 1;
	return 0;
}

/* Add candidate c[0..len) of chunk `input` to ps, cleaned and checked
 * against the chunk and, when `read` is not NULL, against the sentences
 * of read[0..read_len) (what the model read); *added tells whether it was
 * kept. */
static enum lp_status add_candidate(struct run *r, struct points *ps, struct lp_match *chunk,
				    const char *const *kp, size_t n_kp, size_t input,
				    size_t rank, size_t head, const char *c, size_t len,
				    const char *read, size_t read_len, int *added,
				    struct lp_diag *d)
{
	char *p = lp_arena_alloc(&r->scratch, len + 1);
	struct lp_point pt = { input, rank, 0, 0 };
	size_t n = 0, facts = 0, missing = 0;
	double support;
	enum lp_status st;
	const char *kept;

	*added = 0;
	if (!p)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	n = r->o->drop_meta ? lp_points_clean(c, len, p) : (memcpy(p, c, len), p[len] = 0, len);
	if (lp_match_count_words(p, n) < 3) {
		ps->dropped_meta++;
		return LP_OK;
	}
	if (r->o->grounded &&
	    lp_points_check(chunk, p, n, &facts, &missing))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory checking a point");
	if (missing) {
		ps->dropped_ungrounded++;
		return LP_OK;
	}
	for (size_t i = ps->n; i-- > 0;)
		if (!strcmp(((const char **)ps->texts.data)[i], p))
			return LP_OK; /* the same point twice (a repeated sentence) */
	if ((st = point_score(chunk, p, n, kp, n_kp, &support, &pt.score, d)))
		return st;
	if (r->o->grounded && (support < POINT_MIN_SUPPORT ||
			       (read && !faithful_to_some(p, n, read, read_len)))) {
		ps->dropped_unsupported++;
		return LP_OK;
	}
	pt.score -= 0.1 * (double)rank; /* the model's first, the most central */
	pt.cost = lp_points_cost(p, n) + POINT_COST_SLACK;
	kept = lp_arena_strndup(&r->doc->arena, p, n);
	head = head < n && !memcmp(p, c, head) ? head : 0; /* cleaning kept the term */
	if (!kept || lp_buf_add(&ps->pts, &pt, sizeof(pt)) ||
	    lp_buf_add(&ps->texts, &kept, sizeof(kept)) ||
	    lp_buf_add(&ps->heads, &head, sizeof(head)))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	ps->n++;
	*added = 1;
	return LP_OK;
}

/* map: points - the items of the model's list about text[0..len). */
static enum lp_status map_points(struct run *r, const char *label, const char *text,
				 size_t len, struct lp_buf *cands, struct lp_diag *d)
{
	return generate_text(r, label, text, len, r->budget, cands, d);
}

/*
 * map: compress, first half - choosing the chunk's sentences.
 *
 * The chunk is cut into parts (text/outline.h: sections and definition
 * entries) and every part that holds an eligible sentence (prose,
 * lp_points_is_prose; no meta-talk with drop_meta) offers its lead, the
 * first eligible sentence: a manual's section opens with what it is
 * about, an entry with what the term does, while its most central
 * sentences are the boilerplate every entry repeats ("The return status
 * is zero unless ..."). Taken in this order:
 *
 *  - with `lead` (the document's first chunk) the first lead ranks first;
 *  - when the parts are no more than `want`, the lead of each; else the
 *    parts are grouped in runs of consecutive parts of about equal prose,
 *    `want` runs, and each run gives the lead that holds the most
 *    keys of the chunk not yet held (ties: the more central), with its
 *    next sentence when that one names a key neither holds (with_next);
 *    the keys are the chunk's keyphrases and the names it repeats
 *    (chunk_keys);
 *  - the rest, one at a time, to the part with the most prose per
 *    sentence taken from it: its sentence that holds the most keyphrases
 *    not yet held, ties to the more central.
 *
 * A sentence that nearly repeats one taken is skipped. A sentence of a
 * definition entry is written after its term, "bg: Resume each suspended
 * job ...", so that what it defines is said (the term line itself, when
 * the sentence runs over it, is cut off).
 */
#define CENTRAL_KEYPHRASES 32 /* keyphrases tracked per sentence (a bit mask) */

struct sent {
	size_t off, len;  /* the sentence, without its part's term line */
	size_t part;      /* in the outline */
	double central;   /* lp_extractive_rank */
	uint32_t kp;      /* keyphrases of the chunk it holds */
	int ok, taken;    /* eligible; chosen */
};

struct central {
	const char *text;
	struct sent *s;
	size_t n;
	const struct lp_outline_part *parts;
	size_t n_parts;
	size_t *chosen, n_chosen; /* sentence indices, in the order chosen */
	uint32_t held;            /* keyphrases held by the chosen */
	uint32_t names;           /* the keys that are names (chunk_keys) */
};

/* Bit mask of the keyphrases kp[0..n_kp) (at most 32) held by s[0..len). */
static enum lp_status kp_mask(const char *s, size_t len, const char *const *kp, size_t n_kp,
			      uint32_t *mask, struct lp_diag *d)
{
	struct lp_match m;
	enum lp_status st = lp_match_init(&m, s, len, d);

	*mask = 0;
	for (size_t k = 0; k < n_kp && k < CENTRAL_KEYPHRASES && !st; k++) {
		int found = 0;
		st = lp_match_contains(&m, kp[k], strlen(kp[k]), &found);
		*mask |= (uint32_t)found << k;
	}
	lp_match_release(&m);
	return st;
}

/* Is s[i] (eligible, not taken) a near repeat of a chosen sentence? */
static int repeats(const struct central *c, size_t i)
{
	for (size_t j = 0; j < c->n_chosen; j++) {
		const struct sent *x = &c->s[c->chosen[j]];
		if (lp_points_similar(c->text + c->s[i].off, c->s[i].len, c->text + x->off, x->len))
			return 1;
	}
	return 0;
}

/* Is a better than b: more fresh keyphrases, then more central? */
static int better(const struct central *c, size_t a, size_t b)
{
	int fa = __builtin_popcount(c->s[a].kp & ~c->held);
	int fb = __builtin_popcount(c->s[b].kp & ~c->held);

	return fa != fb ? fa > fb : c->s[a].central > c->s[b].central;
}

static void take(struct central *c, size_t i)
{
	c->s[i].taken = 1;
	c->held |= c->s[i].kp;
	c->chosen[c->n_chosen++] = i;
}

/* Lead i with its next sentence when that one says what i does not: it
 * is eligible, of the same part and paragraph, and holds at least
 * LEAD_NEXT_KEYS names (chunk_keys; not keyphrases, whose common words
 * most sentences hold) held by neither i nor the sentences taken. A
 * section that opens with its subject ("When Bash is invoked as an
 * interactive login shell, ... it first reads '/etc/profile'") often
 * names what a reader looks for in the sentence after ("After reading
 * that file, it looks for '~/.bash_profile', ..."), which reads as a
 * sentence only after it. Only when the chunk takes more than `points`
 * sentences (map_central: c->names is empty otherwise). Call before
 * take(c, i). */
#define LEAD_NEXT_KEYS 1
static void with_next(struct central *c, size_t i)
{
	struct sent *x = &c->s[i], *y = x + 1;
	size_t end = x->off + x->len;

	if (i + 1 >= c->n || y->part != x->part || !y->ok || y->taken ||
	    __builtin_popcount(y->kp & c->names & ~x->kp & ~c->held) < LEAD_NEXT_KEYS)
		return;
	for (size_t k = end, nl = 0; k < y->off; k++)
		if (c->text[k] == '\n' && ++nl == 2)
			return; /* a paragraph break */
	x->len = y->off + y->len - x->off;
	x->kp |= y->kp;
	y->taken = 1;
}

/* The lead of part p: its first eligible sentence that is no repeat;
 * c->n when none. */
static size_t lead_of(const struct central *c, size_t p)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->s[i].part == p && c->s[i].ok && !c->s[i].taken && !repeats(c, i))
			return i;
	return c->n;
}

/* Take up to `want` sentences (see above). */
static enum lp_status choose_sentences(struct central *c, size_t want, int lead,
				       struct lp_diag *d)
{
	size_t *bytes = lp_mem_calloc(LP_MEM_SCRATCH, c->n_parts + 1, sizeof(*bytes), d);
	size_t *slots = lp_mem_calloc(LP_MEM_SCRATCH, c->n_parts + 1, sizeof(*slots), d);
	size_t first = c->n_parts;

	if (!bytes || !slots) {
		lp_mem_free(bytes);
		lp_mem_free(slots);
		return LP_E_NOMEM;
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->s[i].ok) {
			first = c->s[i].part < first ? c->s[i].part : first;
			bytes[c->s[i].part] += c->s[i].len;
		}
	if (lead && first < c->n_parts && lead_of(c, first) < c->n) {
		with_next(c, lead_of(c, first));
		take(c, lead_of(c, first));
		slots[first]++;
	}
	for (int lv = 0; lv <= LP_OUTLINE_MAX_LEVEL && c->n_chosen < want; lv++) {
		/* the leads of the parts of level lv: all of them when they fit,
		 * else one per run of parts of about equal prose */
		size_t lm = 0, ltotal = 0, room = want - c->n_chosen;
		for (size_t p = 0; p < c->n_parts; p++)
			if (bytes[p] && !slots[p] && c->parts[p].level == lv) {
				lm++;
				ltotal += bytes[p];
			}
		for (size_t r = 0, p = 0, cum = 0; lm && p < c->n_parts && c->n_chosen < want; r++) {
			size_t best = c->n, best_part = 0;
			for (; p < c->n_parts && (lm <= room || cum * room < (r + 1) * ltotal); p++) {
				size_t i;
				if (!bytes[p] || slots[p] || c->parts[p].level != lv)
					continue;
				i = lead_of(c, p);
				cum += bytes[p];
				if (i < c->n && (best == c->n || better(c, i, best))) {
					best = i;
					best_part = p;
				}
				if (lm <= room) {
					p++;
					break;
				}
			}
			if (best < c->n) {
				with_next(c, best);
				take(c, best);
				slots[best_part]++;
			}
		}
	}
	while (c->n_chosen < want) { /* the rest, to the parts with the most prose */
		size_t best = c->n, best_part = c->n_parts;
		for (size_t p = 0; p < c->n_parts; p++)
			if (bytes[p] && (best_part == c->n_parts ||
					 bytes[p] * (slots[best_part] + 1) >
						 bytes[best_part] * (slots[p] + 1))) {
				size_t pick = c->n;
				for (size_t i = 0; i < c->n; i++)
					if (c->s[i].part == p && c->s[i].ok && !c->s[i].taken &&
					    (pick == c->n || better(c, i, pick)) && !repeats(c, i))
						pick = i;
				if (pick == c->n) {
					bytes[p] = 0; /* nothing more to take */
					continue;
				}
				best = pick;
				best_part = p;
			}
		if (best == c->n)
			break;
		take(c, best);
		slots[best_part]++;
	}
	lp_mem_free(bytes);
	lp_mem_free(slots);
	return LP_OK;
}

/* Cut sentence x off the title or term line of its part when it runs
 * over it. */
static void past_title(const char *text, const struct lp_outline_part *p, struct sent *x)
{
	size_t end = x->off + x->len, t = p->body;

	if (x->off >= t)
		return;
	if (t >= end) { /* the sentence is the title */
		x->len = 0;
		return;
	}
	while (t < end && (text[t] == ' ' || text[t] == '\t' || text[t] == '\n' || text[t] == '\r'))
		t++;
	x->len = end - t;
	x->off = t;
}

/* Cut sentence x past a label on a line of its own that opens it: one
 * word without punctuation, alone on its line ("Tip", "Caution", "Note" over the paragraph
 * they mark), which the sentence splitter leaves in front of the
 * paragraph's first sentence ("Tip The top level ..."). */
static void past_label(const char *text, struct sent *x)
{
	size_t i = 0, end, b = x->off;

	while (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\t'))
		b--;
	if (b > 0 && text[b - 1] != '\n')
		return; /* "... end.  The\nkernel ...": a word, not a line */
	while (i < x->len && i <= 16 && ((text[x->off + i] | 0x20) >= 'a' &&
					 (text[x->off + i] | 0x20) <= 'z'))
		i++;
	end = i;
	while (i < x->len && (text[x->off + i] == ' ' || text[x->off + i] == '\t' ||
			      text[x->off + i] == '\r'))
		i++;
	if (!end || end > 16 || i >= x->len || text[x->off + i] != '\n')
		return;
	while (i < x->len && (strchr(" \t\r\n", text[x->off + i]) ||
			      (i + 1 < x->len && !memcmp(text + x->off + i, "\xc2\xa0", 2))))
		i += text[x->off + i] == '\xc2' ? 2 : 1; /* and no-break spaces */
	x->off += i;
	x->len -= i;
}

/* The sentences of text[0..len) with their part, centrality, keyphrases
 * and eligibility, into c (tracked scratch). */
static enum lp_status read_sentences(struct run *r, struct central *c, const char *text,
				     size_t len, const char *const *kp, size_t n_kp,
				     struct lp_diag *d)
{
	struct lp_span *spans = NULL, sp;
	double *scores = NULL;
	size_t cap = 0, pos = 0;
	enum lp_status st = lp_outline_parts(text, len, (struct lp_outline_part **)&c->parts,
					     &c->n_parts, d);

	while (!st && lp_sentence_next(text, len, &pos, &sp)) {
		if (c->n == cap) {
			struct lp_span *g;
			cap = cap ? 2 * cap : 64;
			if (!(g = lp_mem_realloc(LP_MEM_SCRATCH, spans, cap * sizeof(*spans), d))) {
				st = LP_E_NOMEM;
				break;
			}
			spans = g;
		}
		spans[c->n++] = sp;
	}
	if (!st && c->n) {
		scores = lp_mem_alloc(LP_MEM_SCRATCH, c->n * sizeof(*scores), d);
		c->s = lp_mem_calloc(LP_MEM_SCRATCH, c->n, sizeof(*c->s), d);
		c->chosen = lp_mem_alloc(LP_MEM_SCRATCH, c->n * sizeof(*c->chosen), d);
		st = scores && c->s && c->chosen ?
		     lp_extractive_rank(text, spans, c->n, scores, d) : LP_E_NOMEM;
	}
	for (size_t i = 0; !st && i < c->n; i++) {
		struct sent *x = &c->s[i];
		x->off = spans[i].off;
		x->len = spans[i].len;
		x->central = scores[i];
		x->part = lp_outline_find(c->parts, c->n_parts, x->off);
		past_title(text, &c->parts[x->part], x);
		past_label(text, x);
		x->ok = x->len && lp_points_is_prose(text + x->off, x->len) &&
			!(r->o->drop_meta && lp_points_is_meta(text + x->off, x->len));
		if (x->ok)
			st = kp_mask(text + x->off, x->len, kp, n_kp, &x->kp, d);
	}
	lp_mem_free(spans);
	lp_mem_free(scores);
	return st;
}

/* map: compress, first half - the chunk's chosen sentences (above), one
 * per line in cands in document order, each after its term ("term: ")
 * when it has one; ranks[j] is line j's place in the order chosen (0:
 * first) and heads[j] the bytes of its "term: " (0: none). The points are
 * shortened once selected (shorten_point). */
static enum lp_status map_central(struct run *r, const char *text, size_t len, int lead,
				  size_t want, const char *const *kp, size_t n_kp,
				  size_t first_name, struct lp_buf *cands, size_t *ranks,
				  size_t *heads, struct lp_diag *d)
{
	struct central c = { .text = text };

	/* with the `points` a chunk takes by default, its leads go alone: a
	 * long document's runs of chunks keep one point each, and a longer
	 * point leaves fewer runs a point */
	for (size_t k = first_name; want > r->o->points && k < n_kp && k < CENTRAL_KEYPHRASES; k++)
		c.names |= (uint32_t)1 << k;
	enum lp_status st = read_sentences(r, &c, text, len, kp, n_kp, d);

	if (!st && c.n)
		st = choose_sentences(&c, want, lead, d);
	for (size_t j = 0; !st && j < c.n_chosen; j++) { /* in document order */
		size_t first = SIZE_MAX, at = 0;
		for (size_t k = 0; k < c.n_chosen; k++)
			if (c.chosen[k] != SIZE_MAX && c.chosen[k] < first) {
				first = c.chosen[k];
				at = k;
			}
		const struct sent *x = &c.s[first];
		const struct lp_outline_part *p = &c.parts[x->part];
		size_t start;
		ranks[j] = at;
		heads[j] = p->term_len ? p->term_len + 2 : 0;
		c.chosen[at] = SIZE_MAX;
		if (lp_buf_adds(cands, "- ") ||
		    (p->term_len && (lp_buf_add(cands, text + p->term_off, p->term_len) ||
				     lp_buf_adds(cands, ": "))))
			st = LP_E_NOMEM;
		start = cands->len;
		if (!st && (lp_buf_add(cands, text + x->off, x->len) || lp_buf_addc(cands, '\n')))
			st = LP_E_NOMEM;
		for (size_t k = start; !st && k < cands->len - 1; k++)
			if (cands->data[k] == '\n')
				cands->data[k] = ' '; /* one line per sentence */
	}
	lp_mem_free(c.s);
	lp_mem_free(c.chosen);
	lp_mem_free((void *)c.parts);
	return st ? lp_diag_set(d, st, NULL, 0, 0, "out of memory choosing sentences") : LP_OK;
}

/* Do the facts of s[0..len) (lp_points_check) all occur in src? A
 * deletion inside a quoted string or a path makes a fact the source does
 * not hold. 0 also when out of memory. */
static int grounded_in(const char *s, size_t len, const char *src, size_t src_len)
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

/* map: compress, second half - point `pt` shortened by the model when it
 * is over COMPRESS_WORDS words (lp_points_cost's words) and the short form is shorter, says no
 * more than it (lp_points_faithful), is a sentence of prose (not a title:
 * "Job Control: Suspend Execution"), names no fact it does not hold, drops
 * none of its facts (its options, names, paths, numbers: what a reader
 * looks for) and is no meta-talk; else pt itself. Its first `head` bytes
 * (a term, "bg: ") are kept as they are and not shown to the model.
 * An arena string (doc), NULL when out of memory. */
static const char *shorten_point(struct run *r, const char *pt, size_t head,
				 struct lp_diag *d)
{
	const char *p = pt + head;
	size_t len = strlen(p), words = lp_match_count_words(p, len);
	struct lp_buf gen;
	struct lp_span sf;
	const char *res = pt;

	r->sentences++;
	/* words as the budget counts them: 1.7 Han characters make one */
	if ((double)lp_points_cost(p, len) <= LP_POINTS_TOKENS_PER_WORD * COMPRESS_WORDS)
		return pt;
	lp_buf_init(&gen);
	r->sentence = 1;
	if (generate_text(r, "point", p, len, r->budget, &gen, d)) {
		r->sentence = 0;
		lp_buf_release(&gen);
		return NULL;
	}
	r->sentence = 0;
	if (gen.len && lp_points_parse(gen.data, gen.len, &sf, 1) &&
	    lp_match_count_words(gen.data + sf.off, sf.len) < words &&
	    lp_points_faithful(gen.data + sf.off, sf.len, p, len) &&
	    lp_points_is_prose(gen.data + sf.off, sf.len) &&
	    !lp_points_is_meta(gen.data + sf.off, sf.len) &&
	    grounded_in(gen.data + sf.off, sf.len, p, len) &&
	    grounded_in(p, len, gen.data + sf.off, sf.len)) {
		res = lp_arena_printf(&r->doc->arena, "%.*s%.*s", (int)head, pt, (int)sf.len,
				      gen.data + sf.off);
		r->shortened++;
	} else if (gen.len) {
		lp_debug("compress: kept the sentence, not '%.*s'", (int)gen.len, gen.data);
	}
	lp_buf_release(&gen);
	lp_arena_release(&r->scratch);
	if (!res)
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	return res;
}

/* Make the ranks of ps's points from `first` on 0, 1, ... in their order
 * (candidates that were dropped leave gaps). */
static void renumber_ranks(struct points *ps, size_t first)
{
	struct lp_point *p = (struct lp_point *)ps->pts.data;
	size_t rank[POINTS_MAX + 1], n = ps->n - first;

	for (size_t i = 0; i < n && n <= POINTS_MAX + 1; i++) {
		rank[i] = 0;
		for (size_t j = 0; j < n; j++)
			rank[i] += p[first + j].rank < p[first + i].rank ||
				   (p[first + j].rank == p[first + i].rank && j < i);
	}
	for (size_t i = 0; i < n && n <= POINTS_MAX + 1; i++)
		p[first + i].rank = rank[i];
}

/* Append point t to b: after a space when it follows a point of the same
 * chunk (`same`; nothing after a CJK sentence end), else as a new
 * paragraph. Returns lp_buf's status (nonzero: out of memory). */
static int append_point(struct lp_buf *b, const char *t, int same)
{
	int cjk_end = b->len >= 3 && (unsigned char)b->data[b->len - 1] >= 0x80;

	if (b->len && ((same && !cjk_end && lp_buf_addc(b, ' ')) ||
		       (!same && lp_buf_adds(b, "\n\n"))))
		return 1;
	return lp_buf_adds(b, t);
}

/* The keys map_central chooses by: the chunk's keyphrases kp[0..n_kp)
 * (at most CHUNK_KEYPHRASES), then the names it repeats
 * (lp_keyphrase_terms) that no keyphrase holds, up to CENTRAL_KEYPHRASES
 * in all; an array in r->scratch. */
static enum lp_status chunk_keys(struct run *r, const char *raw, size_t raw_len,
				 const char **kp, size_t n_kp, const char ***keys,
				 size_t *n_keys, struct lp_diag *d)
{
	const char **terms = NULL, **all = lp_arena_alloc(&r->scratch, CENTRAL_KEYPHRASES *
							  sizeof(*all));
	size_t n_terms = 0, n = 0;
	enum lp_status st = all ? lp_keyphrase_terms(raw, raw_len, CENTRAL_KEYPHRASES, &r->scratch,
						    &terms, &n_terms, d) :
				  lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for names");

	for (size_t k = 0; !st && k < n_kp && n < CHUNK_KEYPHRASES; k++)
		all[n++] = kp[k];
	for (size_t t = 0; !st && t < n_terms && n < CENTRAL_KEYPHRASES; t++) {
		int held = 0;
		for (size_t k = 0; k < n_kp && !held; k++)
			held = !strcasecmp(kp[k], terms[t]);
		if (!held)
			all[n++] = terms[t];
	}
	*keys = all;
	*n_keys = st ? 0 : n;
	return st;
}

/* The points of chunk `input`: raw[0..raw_len) is the chunk, text[0..len)
 * what the model reads of it. Sets *level_text to its points as a list. */
static enum lp_status chunk_points(struct run *r, struct points *ps, size_t input,
				   size_t want, const char *label, const char *raw, size_t raw_len,
				   const char *text, size_t len, const char **level_text,
				   struct lp_diag *d)
{
	struct lp_match chunk;
	struct lp_span spans[POINTS_MAX];
	size_t ranks[POINTS_MAX], heads[POINTS_MAX] = { 0 };
	struct lp_buf cands, list;
	const char **kp = NULL, **keys = NULL;
	size_t n_kp = 0, n_keys = 0, n_spans, first = ps->n, rank = 0;
	enum lp_status st = lp_match_init(&chunk, raw, raw_len, d);

	lp_buf_init(&cands);
	lp_buf_init(&list);
	if (!st)
		st = lp_keyphrase_extract(raw, raw_len, CHUNK_KEYPHRASES, &r->scratch, &kp, &n_kp, d);
	if (!st && r->o->map == LP_SUMMARIZE_MAP_COMPRESS)
		st = chunk_keys(r, raw, raw_len, kp, n_kp, &keys, &n_keys, d);
	for (size_t k = 0; !st && k < n_keys; k++)
		lp_debug("chunk %zu key: %s", input, keys[k]);
	if (!st)
		st = r->o->map == LP_SUMMARIZE_MAP_POINTS ?
		     map_points(r, label, text, len, &cands, d) :
		     map_central(r, raw, raw_len, input == 0, want, keys, n_keys,
				 n_kp < CHUNK_KEYPHRASES ? n_kp : CHUNK_KEYPHRASES, &cands, ranks,
				 heads, d);
	n_spans = st ? 0 : lp_points_parse(cands.data ? cands.data : "", cands.len, spans, POINTS_MAX);
	for (size_t i = 0; i < n_spans && !st && rank < want; i++) {
		int added;
		int model = r->o->map == LP_SUMMARIZE_MAP_POINTS;
		st = add_candidate(r, ps, &chunk, kp, n_kp, input, model ? rank : ranks[i],
				   model ? 0 : heads[i], cands.data + spans[i].off, spans[i].len,
				   model ? text : NULL, len, &added, d);
		rank += (size_t)added;
	}
	if (!st)
		renumber_ranks(ps, first);
	if (!st && !rank) { /* nothing trusted: the chunk's most central sentence */
		struct lp_extractive_opts eo = { COMPRESS_WORDS + 10, 1, lp_points_is_prose, NULL };
		char *best;
		size_t best_len;
		int added = 0;
		if (!(st = lp_extractive_summarize(text, len, &eo, &best, &best_len, d))) {
			if (lp_points_is_prose(best, best_len))
				st = add_candidate(r, ps, &chunk, kp, n_kp, input, 0, 0, best,
						   best_len, NULL, 0, &added, d);
			lp_mem_free(best);
		}
	}
	for (size_t i = first; i < ps->n && !st; i++)
		if (append_point(&list, ((const char **)ps->texts.data)[i], 1))
			st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	if (!st && !(*level_text = lp_arena_strndup(&r->doc->arena, list.data ? list.data : "",
						    list.len)))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	lp_buf_release(&list);
	lp_buf_release(&cands);
	lp_match_release(&chunk);
	return st;
}

/*
 * Score every point by its centrality among all the points of the
 * document (lp_extractive_rank, scaled so that the mean is 1), keeping
 * the in-chunk part of the score (keyphrases, rank) as a tie-breaker: the
 * point a run of chunks keeps is the one most like the rest of the
 * document, so the summary speaks of what the document keeps coming back
 * to rather than of one table.
 */
static enum lp_status rescore_points(struct points *ps, int lead, struct lp_diag *d)
{
	struct lp_point *pts = (struct lp_point *)ps->pts.data;
	const char **texts = (const char **)ps->texts.data;
	struct lp_span *spans = lp_mem_alloc(LP_MEM_SCRATCH, (ps->n + 1) * sizeof(*spans), d);
	double *c = lp_mem_alloc(LP_MEM_SCRATCH, (ps->n + 1) * sizeof(*c), d);
	struct lp_buf b;
	enum lp_status st = spans && c ? LP_OK : LP_E_NOMEM;

	lp_buf_init(&b);
	for (size_t i = 0; i < ps->n && !st; i++) {
		spans[i].off = b.len;
		spans[i].len = strlen(texts[i]);
		if (lp_buf_adds(&b, texts[i]) || lp_buf_adds(&b, "\n\n"))
			st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory ranking points");
	}
	if (!st && ps->n)
		st = lp_extractive_rank(b.data, spans, ps->n, c, d);
	for (size_t i = 0; i < ps->n && !st; i++)
		pts[i].score = (double)ps->n * c[i] + 0.5 * (pts[i].score - 1);
	if (!st && lead && ps->n && !pts[0].input && !pts[0].rank) /* the lead is kept */
		pts[0].score += (double)ps->n;
	lp_buf_release(&b);
	lp_mem_free(spans);
	lp_mem_free(c);
	return st;
}

/* The last level: the points lp_points_select keeps within final_tokens,
 * in document order: one paragraph per chunk. */
static enum lp_status select_points(struct run *r, const struct points *ps,
				    struct lp_summary_level *below, struct lp_summary_level *l,
				    struct lp_diag *d)
{
	unsigned char *keep = lp_mem_alloc(LP_MEM_SCRATCH, ps->n + 1, d);
	const char **texts = (const char **)ps->texts.data;
	const size_t *heads = (const size_t *)ps->heads.data;
	const struct lp_point *pts = (const struct lp_point *)ps->pts.data;
	struct lp_progress pr;
	struct lp_buf b;
	size_t kept, last = ps->n;
	enum lp_status st = LP_OK;

	if (!keep)
		return LP_E_NOMEM;
	if ((st = rescore_points((struct points *)ps, r->o->map == LP_SUMMARIZE_MAP_COMPRESS, d))) {
		lp_mem_free(keep);
		return st;
	}
	kept = lp_points_select((const struct lp_point *)ps->pts.data, ps->n, r->final_tokens, keep);
	r->level = l;
	lp_buf_init(&b);
	lp_progress_begin(&pr, "shorten", "sentences", kept);
	for (size_t i = 0, k = 0; i < ps->n && !st; i++) {
		const char *t = texts[i];
		if (!keep[i])
			continue;
		/* a term's entry is a paragraph of its own ("bg: Resume ...") */
		int same = last < ps->n && pts[last].input == pts[i].input && !heads[i] &&
			   !heads[last];
		if (r->o->map == LP_SUMMARIZE_MAP_COMPRESS && !(t = shorten_point(r, t, heads[i], d)))
			st = d->status ? d->status : LP_E_NOMEM;
		else if (append_point(&b, t, same))
			st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the summary");
		last = i;
		lp_progress_update(&pr, ++k);
	}
	lp_progress_end(&pr);
	l->texts[0] = st ? NULL : lp_arena_strndup(&r->doc->arena, b.data ? b.data : "", b.len);
	if (!st && !l->texts[0])
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the summary");
	l->first_input[0] = 0;
	l->n_inputs[0] = below->n;
	l->n = 1;
	if (r->o->map == LP_SUMMARIZE_MAP_COMPRESS)
		lp_doc_event(r->doc, "compress: %zu of %zu sentences shortened", r->shortened,
			     r->sentences);
	lp_doc_event(r->doc, "select: %zu of %zu points kept (final_tokens %zu); dropped: %zu "
		     "meta-talk, %zu ungrounded, %zu unsupported", kept, ps->n, r->final_tokens,
		     ps->dropped_meta, ps->dropped_ungrounded, ps->dropped_unsupported);
	lp_buf_release(&b);
	lp_mem_free(keep);
	return st;
}

/* Points to take from a chunk of `bytes` of the `total` of all chunks:
 * `points`, or more when a few chunks would leave final_tokens mostly
 * empty (a point takes about POINT_TOKENS), shared by the chunks' sizes
 * (a short last chunk does not get as many as a long one), at most
 * POINTS_MAX. */
#define POINT_TOKENS 28
static size_t points_per_chunk(const struct run *r, size_t bytes, size_t total)
{
	size_t fill = (size_t)((double)(r->final_tokens / POINT_TOKENS) * (double)bytes /
			       (double)(total ? total : 1) + 0.5);

	fill = fill > r->o->points ? fill : r->o->points;
	return fill < POINTS_MAX ? fill : POINTS_MAX;
}

static enum lp_status run_points(struct run *r, const size_t *set, size_t n, struct lp_diag *d)
{
	struct lp_doc *doc = r->doc;
	size_t n0 = n ? n : 1;
	struct points ps = { .n = 0 };
	struct lp_progress pr;
	enum lp_status st;
	char label[48];
	size_t total = 0;

	for (size_t i = 0; i < n0; i++) {
		size_t len;
		raw_chunk(doc, set, n, i, &len);
		total += len;
	}

	doc->levels = lp_arena_alloc(&doc->arena, 2 * sizeof(*doc->levels));
	if (!doc->levels)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for summary levels");
	r->level = &doc->levels[0];
	if ((st = level_alloc(doc, &doc->levels[0], n0, d)) ||
	    (st = level_alloc(doc, &doc->levels[1], 1, d)))
		return st;
	lp_buf_init(&ps.pts);
	lp_buf_init(&ps.texts);
	lp_buf_init(&ps.heads);
	lp_progress_begin(&pr, "map", "chunks", n0);
	for (size_t i = 0; i < n0 && !st; i++) {
		size_t len, raw_len;
		const char *raw = raw_chunk(doc, set, n, i, &raw_len), *t;
		st = hold_chunk(r, set, n, i, d);
		t = st ? NULL : chunk_text(r, set, n, i, &len, d);
		snprintf(label, sizeof(label), "chunk %zu", n ? set[i] : 0);
		r->level->first_input[i] = i;
		r->level->n_inputs[i] = 1;
		if (!st)
			st = t ? chunk_points(r, &ps, i, points_per_chunk(r, raw_len, total), label,
					      raw, raw_len, t, len,
					      &r->level->texts[i], d) : d->status;
		r->level->n = i + 1;
		release_chunk(r, set, n, i);
		lp_progress_update(&pr, i + 1);
	}
	lp_progress_end(&pr);
	doc->n_levels = 1;
	if (!st) {
		st = select_points(r, &ps, &doc->levels[0], &doc->levels[1], d);
		doc->n_levels = 2;
	}
	lp_buf_release(&ps.pts);
	lp_buf_release(&ps.texts);
	lp_buf_release(&ps.heads);
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

/* The prompts for the document's script (lp_lang_script): Chinese for
 * Han, English for any other. */
static const struct prompts *language_of(const struct lp_doc *doc)
{
	return doc->text && lp_lang_script(doc->text, doc->len) == LP_SCRIPT_HAN ? &prompts_zh
										  : &prompts_en;
}

enum lp_status lp_summarize_model_run(struct lp_doc *doc,
				      const struct lp_summarize_model_opts *o,
				      struct lp_diag *d)
{
	struct run r = { .doc = doc, .o = o };
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
	r.lang = language_of(doc);
	r.final_tokens = configured_final_tokens(&r);
	if ((st = fit_instruction(&r, tree ? 0 : o->max_tokens + 16, d)))
		return st;
	lp_mem_set_phase("summarize");
	if (!tree)
		st = run_refine(&r, set, n, d);
	else
		st = o->map == LP_SUMMARIZE_MAP_SUMMARY ? run_tree(&r, set, n, d)
							: run_points(&r, set, n, d);
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
