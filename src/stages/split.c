/*
 * split.c - the split stage: cut the document into chunks (text/split.h).
 *
 *     - split: {unit: tokens, size: 384, overlap: 48, boundary: sentence}
 *     - split: {unit: regex, pattern: "(?m)^#+ ", size: 1}
 *
 * The options struct is a struct lp_split_params in the pipeline arena. The
 * pattern is compiled once at parse time so that a bad one is reported when
 * the pipeline loads, with its position; run() compiles it again, because a
 * stage has no hook to free what parse made.
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "core/mem.h"
#include "stages/model_stage.h"
#include "stages/stage.h"
#include "text/split.h"

/* Upper bound for size, far above any context; keeps size_t arithmetic
 * on weights clear of overflow. */
#define SPLIT_MAX_SIZE (1LL << 40)

static const char *const split_keys[] = { "unit", "size", "overlap", "boundary", "pattern", NULL };

static const struct lp_node *key_or_map(const struct lp_node *opts, const char *key)
{
	const struct lp_node *n = lp_node_get(opts, key);

	return n ? n : opts;
}

static enum lp_status check_pattern(struct lp_cfg_ctx *c, const struct lp_node *opts,
				    const struct lp_split_params *sp)
{
	struct lp_splitter *s;
	struct lp_diag d;

	if (sp->unit != LP_SPLIT_REGEX) {
		if (sp->pattern)
			return lp_cfg_error(c, key_or_map(opts, "pattern"),
					    "pattern is only used with unit: regex");
		return LP_OK;
	}
	if (!sp->pattern)
		return lp_cfg_error(c, key_or_map(opts, "unit"), "unit regex needs a pattern");
	lp_diag_init(&d);
	if (lp_split_new(sp, &s, &d) == LP_E_NOMEM)
		return lp_cfg_nomem(c);
	if (d.status)
		return lp_cfg_error(c, key_or_map(opts, "pattern"), "%s", d.msg);
	lp_split_free(s);
	return LP_OK;
}

static enum lp_status split_parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
				  const struct lp_pipeline *p, void **out)
{
	struct lp_split_params *sp = lp_arena_alloc(c->arena, sizeof(*sp));
	long long size, overlap;
	int unit, boundary;
	enum lp_status s;

	if (!sp)
		return lp_cfg_nomem(c);
	*sp = lp_split_default_params();
	if ((s = lp_cfg_check_keys(c, opts, split_keys)) ||
	    (s = lp_cfg_get_enum(c, opts, "unit", lp_split_unit_names, LP_SPLIT_TOKENS, &unit)) ||
	    (s = lp_cfg_get_int(c, opts, "size", 384, 1, SPLIT_MAX_SIZE, &size)) ||
	    (s = lp_cfg_get_int(c, opts, "overlap", 0, 0, SPLIT_MAX_SIZE, &overlap)) ||
	    (s = lp_cfg_get_enum(c, opts, "boundary", lp_split_boundary_names,
				 LP_BOUNDARY_SENTENCE, &boundary)) ||
	    (s = lp_cfg_get_string(c, opts, "pattern", NULL, &sp->pattern)))
		return s;
	if (overlap >= size)
		return lp_cfg_error(c, key_or_map(opts, "overlap"),
				    "overlap (%lld) must be smaller than size (%lld)", overlap, size);
	sp->unit = (enum lp_split_unit)unit;
	sp->size = (size_t)size;
	sp->overlap = (size_t)overlap;
	sp->boundary = (enum lp_split_boundary)boundary;
	if ((s = check_pattern(c, opts, sp)))
		return s;
	*out = sp;
	return LP_OK;
}

static enum lp_status copy_chunks(struct lp_doc *doc, const struct lp_span *v, size_t n,
				  struct lp_diag *d)
{
	struct lp_chunk *c = doc->split_table;

	if (!c || doc->split_cap < n) {
		c = lp_arena_alloc(&doc->arena, (n ? n : 1) * sizeof(*c));
		if (!c)
			return lp_diag_set(d, LP_E_NOMEM, doc->path, 0, 0,
					   "out of memory for a table of %zu chunks", n);
		doc->split_table = c;
		doc->split_cap = n ? n : 1;
	}
	memset(c, 0, (n ? n : 1) * sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		c[i].off = v[i].off;
		c[i].len = v[i].len;
	}
	doc->chunks = c;
	doc->n_chunks = n;
	/* A new cut invalidates any earlier selection. */
	doc->selection = NULL;
	doc->n_selection = 0;
	return LP_OK;
}

/* Chunks as the splitter finds them, releasing the text behind them. */
struct collect {
	struct lp_doc *doc;
	struct lp_span_list chunks;
	size_t done;       /* text[0, done) is released */
	struct lp_diag *d;
	enum lp_status st;
};

static int collect_chunk(void *ctx, size_t off, size_t len)
{
	struct collect *c = ctx;

	/* the splitter has read this chunk whole, and never reads before a
	 * chunk it has handed out again */
	if ((c->st = lp_document_need(&c->doc->src, len, c->d)))
		return 1;
	if ((c->st = lp_span_list_push(&c->chunks, off, len, c->d)))
		return 1;
	if (off > c->done) {
		lp_document_done(&c->doc->src, c->done, off - c->done);
		c->done = off;
	}
	return 0;
}

static enum lp_status split_run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	struct lp_split_params sp = *(const struct lp_split_params *)opts;
	struct lp_splitter *s;
	struct lp_session *session;
	struct collect c = { .doc = doc, .d = d };
	enum lp_status st;

	/* With a model, tokens are the model's own, so a chunk plus its
	 * prompt fits the context the model stages budget for. */
	if (sp.unit == LP_SPLIT_TOKENS && doc->pipeline && doc->pipeline->model.present) {
		if ((st = lp_stage_session(doc, &session, d)))
			return st;
		sp.counter.count = lp_stage_count_tokens;
		sp.counter.ctx = session;
	}
	/* Loading checked it; a second pass would read the whole document
	 * into memory before the split releases any of it. */
	sp.text_is_utf8 = 1;
	/* table rows and code blocks are cut only when one alone is too big */
	if (doc->src.model.n_kind[LP_BLOCK_TABLE_ROW] || doc->src.model.n_kind[LP_BLOCK_CODE]) {
		doc->src.model.keep_block = 0;
		sp.keep.next = lp_doc_model_keep_next;
		sp.keep.ctx = &doc->src.model;
	}
	if ((st = lp_split_new(&sp, &s, d)))
		return st;
	st = lp_split_each(s, doc->text, doc->len, collect_chunk, &c, d);
	lp_split_free(s);
	lp_document_done(&doc->src, c.done, doc->len - c.done);
	if (!st)
		st = c.st;
	if (!st)
		st = copy_chunks(doc, c.chunks.v, c.chunks.n, d);
	lp_mem_free(c.chunks.v);
	if (!st && doc->n_trace)
		doc->trace[doc->n_trace - 1].note =
			lp_arena_printf(&doc->arena, "%zu chunk%s", c.chunks.n, c.chunks.n == 1 ? "" : "s");
	return st;
}

/* A pattern as a YAML single-quoted scalar ('' stands for '). */
static void add_quoted(struct lp_buf *out, const char *s)
{
	lp_buf_addc(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			lp_buf_addc(out, '\'');
		lp_buf_addc(out, *s);
	}
	lp_buf_addc(out, '\'');
}

static void split_describe(const void *opts, struct lp_buf *out)
{
	const struct lp_split_params *sp = opts;

	lp_buf_addf(out, "{unit: %s, size: %zu, overlap: %zu, boundary: %s",
		    lp_split_unit_names[sp->unit], sp->size, sp->overlap,
		    lp_split_boundary_names[sp->boundary]);
	if (sp->pattern) {
		lp_buf_adds(out, ", pattern: ");
		add_quoted(out, sp->pattern);
	}
	lp_buf_addc(out, '}');
}

const struct lp_stage_kind lp_stage_split = {
	.name = "split",
	.parse = split_parse,
	.run = split_run,
	.describe = split_describe,
};
