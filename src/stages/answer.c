/*
 * answer.c - the answer stage: the model answers a question from the
 * working set and/or the summary, citing the chunks it used.
 *
 *     - answer: {question: "${question}", max_tokens: 200, context: both}
 *
 * The prompt numbers each chunk by its id (the id the JSON report uses):
 * "[chunk 3]". Chunks go in working-set order (retrieval order) while they
 * fit the context left after the instruction, the summary, the question and
 * max_tokens; the last one that does not fit whole is cut when at least
 * LP_STAGE_MIN_INPUT tokens remain. In the answer, a "[chunk N]" whose N was
 * not in the prompt is removed (a model may invent one); a "Sources:" line
 * lists the ids cited, or every id given when the model cited none.
 * doc->cited holds the same ids.
 *
 * on_oom shrink: when the budget refuses the step, it is retried with half
 * the chunks (an event says so) until one is left.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/mem.h"
#include "stages/model_stage.h"
#include "stages/stage.h"

enum context { CONTEXT_BOTH, CONTEXT_CHUNKS, CONTEXT_SUMMARY };

static const char *const context_names[] = { "both", "chunks", "summary", NULL };

static const char default_prompt[] =
	"You answer questions about a document using only the passages the user "
	"gives. Each passage starts with its id, such as [chunk 3]. Answer briefly and "
	"cite the ids of the passages you used, like [chunk 3]. If the passages do "
	"not hold the answer, say so.";

struct answer_opts {
	const char *question; /* NULL: doc->question */
	long long max_tokens;
	enum context context;
	const char *prompt;   /* NULL: default_prompt */
};

static enum lp_status parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
			    const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "question", "max_tokens", "context", "prompt",
					    "prompt_file", NULL };
	struct answer_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	int ctx = CONTEXT_BOTH;

	if (!o)
		return lp_cfg_nomem(c);
	if (lp_cfg_check_keys(c, opts, keys) ||
	    lp_cfg_get_string(c, opts, "question", NULL, &o->question) ||
	    lp_cfg_get_int(c, opts, "max_tokens", 200, 1, 1000000, &o->max_tokens) ||
	    lp_cfg_get_enum(c, opts, "context", context_names, CONTEXT_BOTH, &ctx) ||
	    lp_stage_parse_prompt(c, opts, p, &o->prompt))
		return LP_E_CONFIG;
	if (!(p && p->model.present))
		return lp_cfg_error(c, opts, "answer needs a model: add a model section");
	if (o->question && !*o->question)
		o->question = NULL; /* "${question}" without -q */
	o->context = (enum context)ctx;
	*out = o;
	return LP_OK;
}

static void describe(const void *opts, struct lp_buf *out)
{
	const struct answer_opts *o = opts;

	lp_buf_adds(out, "{");
	if (o->question) {
		lp_buf_adds(out, "question: ");
		lp_cfg_quote(out, o->question);
		lp_buf_adds(out, ", ");
	}
	lp_buf_addf(out, "max_tokens: %lld, context: %s", o->max_tokens, context_names[o->context]);
	if (o->prompt)
		lp_stage_describe_prompt(out, o->prompt);
	lp_buf_adds(out, "}");
}

static const char closing[] = "Answer the question: ";

struct prompt {
	struct lp_buf user;
	size_t *ids;      /* [n_ids] chunk ids given */
	size_t n_ids;
};

/* Build the user message from at most max_chunks chunks within `budget`. */
static enum lp_status build_user(struct lp_doc *doc, struct lp_session *s,
				 const struct answer_opts *o, const char *question, size_t budget,
				 size_t max_chunks, struct prompt *pr, struct lp_diag *d)
{
	const size_t *set;
	size_t n = 0, used;
	struct lp_buf *u = &pr->user;

	lp_buf_reset(u);
	pr->n_ids = 0;
	if (o->context != CONTEXT_CHUNKS && doc->summary) {
		int cut;
		const char *sum = lp_stage_head_tokens(doc, s, doc->summary, strlen(doc->summary),
						       budget / 2, &cut, d);
		if (!sum)
			return LP_E_NOMEM;
		lp_buf_addf(u, "Summary of the document:\n%s\n\n", sum);
	}
	lp_buf_addf(u, "Question: %s\n\nPassages:\n", question);
	used = lp_session_count_tokens(s, u->data, u->len) + 4 +
	       lp_session_count_tokens(s, question, strlen(question)) +
	       lp_session_count_tokens(s, closing, strlen(closing)); /* the closing line */
	set = o->context == CONTEXT_SUMMARY && doc->summary ? NULL : lp_doc_working_set(doc, &n);
	for (size_t i = 0; set && i < n && pr->n_ids < max_chunks; i++) {
		const struct lp_chunk *c = &doc->chunks[set[i]];
		char head[40];
		size_t keep = c->len, t, th;
		snprintf(head, sizeof(head), "[chunk %zu] ", set[i]);
		th = lp_session_count_tokens(s, head, strlen(head)) + 2;
		if (used + th + LP_STAGE_MIN_INPUT > budget)
			break;
		t = lp_session_count_tokens(s, doc->text + c->off, c->len);
		if (used + th + t > budget &&
		    lp_session_prefix_bytes(s, doc->text + c->off, c->len, budget - used - th, &keep, d))
			return LP_E_NOMEM;
		lp_buf_addf(u, "%s%.*s\n\n", head, (int)keep, doc->text + c->off);
		used += th + (keep < c->len ? budget - used - th : t);
		pr->ids[pr->n_ids++] = set[i];
	}
	lp_buf_addf(u, "%s%s", closing, question);
	if (u->len == 0 || lp_buf_adds(u, ""))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the prompt");
	return LP_OK;
}

static int given(const size_t *ids, size_t n_ids, size_t id)
{
	for (size_t i = 0; i < n_ids; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

void lp_stage_filter_citations(const char *gen, const size_t *ids, size_t n_ids,
			       struct lp_buf *out, size_t *cited, size_t *n_cited)
{
	const char *p = gen;

	*n_cited = 0;
	while (*p) {
		char *end;
		unsigned long long id;
		size_t k;
		if (*p != '[' || strncasecmp(p + 1, "chunk ", 6) || !isdigit((unsigned char)p[7])) {
			lp_buf_addc(out, *p++);
			continue;
		}
		id = strtoull(p + 7, &end, 10);
		if (*end != ']') {
			lp_buf_addc(out, *p++);
			continue;
		}
		if (given(ids, n_ids, (size_t)id)) {
			lp_buf_add(out, p, (size_t)(end + 1 - p));
			for (k = 0; k < *n_cited && cited[k] != id; k++)
				;
			if (k == *n_cited)
				cited[(*n_cited)++] = (size_t)id;
		} else if (out->len && out->data[out->len - 1] == ' ') {
			/* "and [chunk 99] or" -> "and or", "at [chunk 99]." -> "at." */
			out->data[--out->len] = '\0';
			if (end[1] != ' ' && end[1] != '\0' && !ispunct((unsigned char)end[1]))
				lp_buf_addc(out, ' ');
		}
		p = end + 1;
	}
}

static enum lp_status finish(struct lp_doc *doc, const char *gen, const struct prompt *pr,
			     struct lp_diag *d)
{
	size_t *cited = lp_arena_alloc(&doc->arena, (pr->n_ids + 1) * sizeof(size_t)), n = 0;
	struct lp_buf out;
	size_t a = 0;

	if (!cited)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for citations");
	while (gen[a] == ' ' || gen[a] == '\n')
		a++;
	lp_buf_init(&out);
	lp_stage_filter_citations(gen + a, pr->ids, pr->n_ids, &out, cited, &n);
	while (out.len && (out.data[out.len - 1] == ' ' || out.data[out.len - 1] == '\n'))
		out.data[--out.len] = '\0';
	if (!out.len)
		lp_buf_adds(&out, "(no answer)");
	if (!n) {
		memcpy(cited, pr->ids, pr->n_ids * sizeof(size_t));
		n = pr->n_ids;
	}
	for (size_t i = 0; i < n; i++)
		lp_buf_addf(&out, "%s[chunk %zu]", i ? ", " : "\n\nSources: ", cited[i]);
	doc->answer = lp_arena_strndup(&doc->arena, out.data, out.len);
	lp_buf_release(&out);
	if (!doc->answer)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the answer");
	doc->cited = cited;
	doc->n_cited = n;
	return LP_OK;
}

static enum lp_status run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct answer_opts *o = opts;
	const char *question = o->question ? lp_stage_expand(doc, o->question) : doc->question;
	const char *instr = o->prompt ? lp_stage_expand(doc, o->prompt) : default_prompt;
	struct lp_chat_msg m[2] = { { "system", instr }, { "user", "" } };
	struct lp_session *s;
	struct prompt pr;
	size_t budget, max_chunks = (size_t)-1, n_in = 0, n_out = 0;
	char *gen = NULL;
	enum lp_status st;

	if (!question || !*question)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "answer needs a question: pass -q or set question");
	if (!instr)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the prompt");
	if ((st = lp_stage_session(doc, &s, d)) ||
	    (st = lp_stage_input_budget(s, m, 2, (size_t)o->max_tokens,
					lp_session_count_tokens(s, instr, strlen(instr)), &budget, d)))
		return st;
	pr.ids = lp_arena_alloc(&doc->arena, (doc->n_chunks + 1) * sizeof(size_t));
	if (!pr.ids)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the prompt");
	lp_buf_init(&pr.user);
	for (;;) {
		st = build_user(doc, s, o, question, budget, max_chunks, &pr, d);
		m[1].content = pr.user.data;
		/* pieces were counted apart: check the whole, drop a chunk if over */
		if (!st && pr.n_ids &&
		    lp_session_count_tokens(s, pr.user.data, pr.user.len) > budget) {
			max_chunks = pr.n_ids - 1;
			continue;
		}
		if (!st)
			st = lp_session_generate(s, m, 2, NULL, (size_t)o->max_tokens, &gen, &n_in,
						 &n_out, d);
		if (st != LP_E_NOMEM || !lp_stage_shrink(doc) || pr.n_ids <= 1)
			break;
		lp_doc_event(doc, "shrink: answer context %zu -> %zu chunks (budget)", pr.n_ids,
			     pr.n_ids / 2);
		max_chunks = pr.n_ids / 2;
		lp_diag_init(d);
	}
	lp_buf_release(&pr.user);
	if (!st)
		st = finish(doc, gen, &pr, d);
	lp_mem_free(gen);
	if (!st)
		lp_doc_note(doc, "answer from %zu chunk%s, %zu/%zu tokens in/out, cites %zu",
			    pr.n_ids, pr.n_ids == 1 ? "" : "s", n_in, n_out, doc->n_cited);
	return st;
}

const struct lp_stage_kind lp_stage_answer = {
	.name = "answer",
	.parse = parse,
	.run = run,
	.describe = describe,
};
