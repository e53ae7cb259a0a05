/*
 * generate.c - the generate stage: a long output written in chunks, each
 * continuing the tail of what came before.
 *
 *     - generate: {prompt: "Write a guide to ${question}", max_total: 2048,
 *                  chunk: 256, overlap: 128}
 *
 * A context holds the prompt, `overlap` tokens and one `chunk` of output,
 * however long the whole output grows: each step renders the prompt, puts
 * the last `overlap` tokens of the output so far in the assistant's turn
 * and lets the model continue it for up to `chunk` tokens. The window
 * slides until max_total tokens are out, the model ends its turn (an
 * end-of-generation token before the chunk is full), or a step adds no
 * tokens. With a summary in the doc the prompt is followed by it, so
 * summarize -> generate expands a summary. The result is doc->answer.
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/mem.h"
#include "stages/model_stage.h"
#include "stages/stage.h"

struct generate_opts {
	const char *prompt;     /* NULL: "${question}" */
	long long max_total, chunk, overlap;
};

static enum lp_status parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
			    const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "prompt", "prompt_file", "max_total", "chunk",
					    "overlap", NULL };
	struct generate_opts *o = lp_arena_alloc(c->arena, sizeof(*o));

	if (!o)
		return lp_cfg_nomem(c);
	if (lp_cfg_check_keys(c, opts, keys) ||
	    lp_cfg_get_int(c, opts, "max_total", 1024, 1, 100000000, &o->max_total) ||
	    lp_cfg_get_int(c, opts, "chunk", 256, 1, 1000000, &o->chunk) ||
	    lp_cfg_get_int(c, opts, "overlap", 64, 0, 1000000, &o->overlap) ||
	    lp_stage_parse_prompt(c, opts, p, &o->prompt))
		return LP_E_CONFIG;
	if (!(p && p->model.present))
		return lp_cfg_error(c, opts, "generate needs a model: add a model section");
	*out = o;
	return LP_OK;
}

static void describe(const void *opts, struct lp_buf *out)
{
	const struct generate_opts *o = opts;

	lp_buf_addf(out, "{max_total: %lld, chunk: %lld, overlap: %lld", o->max_total, o->chunk,
		    o->overlap);
	if (o->prompt)
		lp_stage_describe_prompt(out, o->prompt);
	lp_buf_adds(out, "}");
}

/* The last `overlap` tokens of out (a pointer into it). */
static const char *tail_of(struct lp_session *s, const struct lp_buf *out, size_t overlap,
			   struct lp_diag *d)
{
	size_t n = lp_session_count_tokens(s, out->data, out->len), cut = 0;

	if (!overlap)
		return "";
	if (n > overlap && lp_session_prefix_bytes(s, out->data, out->len, n - overlap, &cut, d))
		return NULL;
	return out->data + cut;
}

static enum lp_status user_message(struct lp_doc *doc, struct lp_session *s,
				   const struct generate_opts *o, size_t budget,
				   const char **msg, struct lp_diag *d)
{
	const char *p = lp_stage_expand(doc, o->prompt ? o->prompt : "${question}");
	int cut;

	if (p && doc->summary)
		p = lp_arena_printf(&doc->arena, "%s\n\n%s", p, doc->summary);
	if (p && !*p)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "generate needs a prompt: pass -q or set prompt");
	*msg = p ? lp_stage_head_tokens(doc, s, p, strlen(p), budget, &cut, d) : NULL;
	if (!*msg)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the prompt");
	return LP_OK;
}

static enum lp_status run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct generate_opts *o = opts;
	struct lp_chat_msg m[1] = { { "user", "" } };
	struct lp_session *s;
	struct lp_buf out;
	size_t budget, total = 0, steps = 0;
	enum lp_status st;

	if ((st = lp_stage_session(doc, &s, d)) ||
	    (st = lp_stage_input_budget(s, m, 1, (size_t)o->chunk, (size_t)o->overlap + 16,
					&budget, d)) ||
	    (st = user_message(doc, s, o, budget, &m[0].content, d)))
		return st;
	lp_buf_init(&out);
	while (!st && total < (size_t)o->max_total) {
		size_t want = (size_t)o->max_total - total, got = 0;
		const char *prefix = tail_of(s, &out, (size_t)o->overlap, d);
		char *gen = NULL;
		if (want > (size_t)o->chunk)
			want = (size_t)o->chunk;
		if (!prefix) {
			st = LP_E_NOMEM;
			break;
		}
		st = lp_session_generate(s, m, 1, prefix, want, &gen, NULL, &got, d);
		if (!st && lp_buf_adds(&out, gen))
			st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the output");
		lp_mem_free(gen);
		total += got;
		steps++;
		if (got == 0 || got < want) /* end of generation, or nothing new */
			break;
	}
	if (!st && !(doc->answer = lp_arena_strndup(&doc->arena, out.data, out.len)))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the output");
	lp_buf_release(&out);
	if (!st)
		lp_doc_note(doc, "generated %zu tokens in %zu step%s", total, steps,
			    steps == 1 ? "" : "s");
	return st;
}

const struct lp_stage_kind lp_stage_generate = {
	.name = "generate",
	.parse = parse,
	.run = run,
	.describe = describe,
};
