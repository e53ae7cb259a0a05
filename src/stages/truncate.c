/*
 * truncate.c - the truncate stage: keep the head and the tail of the text,
 * optionally with a short extractive summary of the middle between them.
 *
 *     - truncate: {head: 512, tail: 256, middle: summary, middle_words: 60}
 *
 * Tokens are the model's when the pipeline has a model section, else the
 * splitter's approximation (text/split.h, unit tokens). The text cut is the
 * working set joined by blank lines when an earlier stage chunked it, else
 * the document. The result replaces doc->text as one chunk (the loaded
 * document stays in doc->src), so later stages see only what was kept; a
 * text within head + tail tokens is left as it is.
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/mem.h"
#include "stages/model_stage.h"
#include "stages/stage.h"
#include "text/extractive.h"
#include "text/split.h"

static const char *const middle_names[] = { "none", "summary", NULL };

struct truncate_opts {
	long long head, tail;
	int middle_summary;
	long long middle_words;
};

static enum lp_status parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
			    const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "head", "tail", "middle", "middle_words", NULL };
	struct truncate_opts *o = lp_arena_alloc(c->arena, sizeof(*o));

	(void)p;
	if (!o)
		return lp_cfg_nomem(c);
	if (lp_cfg_check_keys(c, opts, keys) ||
	    lp_cfg_get_int(c, opts, "head", 512, 0, 100000000, &o->head) ||
	    lp_cfg_get_int(c, opts, "tail", 256, 0, 100000000, &o->tail) ||
	    lp_cfg_get_enum(c, opts, "middle", middle_names, 0, &o->middle_summary) ||
	    lp_cfg_get_int(c, opts, "middle_words", 60, 1, 100000, &o->middle_words))
		return LP_E_CONFIG;
	if (!o->head && !o->tail)
		return lp_cfg_error(c, opts, "head and tail are both 0: nothing would be kept");
	*out = o;
	return LP_OK;
}

static void describe(const void *opts, struct lp_buf *out)
{
	const struct truncate_opts *o = opts;

	lp_buf_addf(out, "{head: %lld, tail: %lld, middle: %s, middle_words: %lld}", o->head,
		    o->tail, middle_names[o->middle_summary], o->middle_words);
}

struct counter {
	struct lp_session *s;
	struct lp_splitter *sp;
};

static size_t count(const struct counter *k, const char *text, size_t len)
{
	return k->s ? lp_session_count_tokens(k->s, text, len) : lp_split_count(k->sp, text, len);
}

static size_t char_start(const char *t, size_t i)
{
	while (i > 0 && ((unsigned char)t[i] & 0xC0) == 0x80)
		i--;
	return i;
}

/* Longest prefix of at most n tokens (binary search on its byte length). */
static size_t head_end(const struct counter *k, const char *t, size_t len, size_t n)
{
	size_t lo = 0, hi = len;

	while (lo < hi) {
		size_t mid = char_start(t, lo + (hi - lo + 1) / 2);
		if (mid <= lo)
			mid = lo + 1;
		if (count(k, t, mid) <= n)
			lo = mid;
		else
			hi = mid - 1;
	}
	return char_start(t, lo);
}

/* Start of the longest suffix of at most n tokens. */
static size_t tail_start(const struct counter *k, const char *t, size_t len, size_t n)
{
	size_t lo = 0, hi = len;

	while (lo < hi) {
		size_t mid = char_start(t, lo + (hi - lo) / 2);
		if (count(k, t + mid, len - mid) <= n)
			hi = mid;
		else
			lo = mid + 1;
	}
	while (hi < len && ((unsigned char)t[hi] & 0xC0) == 0x80)
		hi++;
	return hi;
}

#define MARK "\n\n[...]\n\n" /* where text was cut out */

static enum lp_status nomem(struct lp_diag *d)
{
	return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory truncating the text");
}

/* The text the stage cuts: the working set's chunks joined by blank lines
 * (the whole text without chunks or a selection). */
static enum lp_status working_text(struct lp_doc *doc, const char **text, size_t *len,
				   struct lp_diag *d)
{
	struct lp_buf b;
	const size_t *set;
	size_t n;
	int failed;

	*text = doc->text ? doc->text : "";
	*len = doc->len;
	if (doc->n_chunks <= 1 && !doc->selection)
		return LP_OK;
	set = lp_doc_working_set(doc, &n);
	failed = !set && doc->n_chunks;
	lp_buf_init(&b);
	for (size_t i = 0; set && i < n && !failed; i++)
		failed = (i && lp_buf_adds(&b, "\n\n")) ||
			 lp_buf_add(&b, doc->text + doc->chunks[set[i]].off, doc->chunks[set[i]].len);
	*text = failed ? NULL : lp_arena_strndup(&doc->arena, b.data, b.len);
	*len = b.len;
	lp_buf_release(&b);
	return *text ? LP_OK : nomem(d);
}

/* The text: its head t[0..h), the mark, a summary of the middle t[h..tl)
 * with another mark (middle: summary), and its tail t[tl..len). A failed
 * append is LP_E_NOMEM, never a shorter text. */
static enum lp_status assemble(struct lp_doc *doc, const struct truncate_opts *o,
			       const char *t, size_t len, size_t h, size_t tl,
			       struct lp_diag *d)
{
	struct lp_buf b;
	enum lp_status st = LP_OK;

	lp_buf_init(&b);
	if (lp_buf_add(&b, t, h) || lp_buf_adds(&b, MARK))
		st = nomem(d);
	if (!st && o->middle_summary && tl > h) {
		struct lp_extractive_opts eo = { (size_t)o->middle_words, 0, NULL, NULL };
		char *s;
		size_t n;
		if (!(st = lp_extractive_summarize(t + h, tl - h, &eo, &s, &n, d))) {
			if (n && (lp_buf_add(&b, s, n) || lp_buf_adds(&b, MARK)))
				st = nomem(d);
			lp_mem_free(s);
		}
	}
	if (!st && lp_buf_add(&b, t + tl, len - tl))
		st = nomem(d);
	if (!st) {
		char *text = lp_arena_strndup(&doc->arena, b.data, b.len);
		struct lp_chunk *c = lp_arena_alloc(&doc->arena, sizeof(*c));
		if (!text || !c) {
			st = nomem(d);
		} else {
			doc->text = text;
			doc->len = b.len;
			c->off = 0;
			c->len = b.len;
			c->score = 0;
			c->selected = 0;
			doc->chunks = c;
			doc->n_chunks = 1;
			doc->selection = NULL;
			doc->n_selection = 0;
		}
	}
	lp_buf_release(&b);
	return st;
}

static enum lp_status run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct truncate_opts *o = opts;
	struct lp_split_params sp = lp_split_default_params();
	struct counter k = { NULL, NULL };
	const char *t;
	size_t len, total, h, tl;
	enum lp_status st;

	if (doc->pipeline && doc->pipeline->model.present)
		st = lp_stage_session(doc, &k.s, d);
	else
		st = lp_split_new(&sp, &k.sp, d);
	if (!st)
		st = working_text(doc, &t, &len, d);
	if (st) {
		lp_split_free(k.sp);
		return st;
	}
	total = count(&k, t, len);
	if (total <= (size_t)(o->head + o->tail)) {
		lp_split_free(k.sp);
		lp_doc_note(doc, "kept all %zu tokens", total);
		return LP_OK;
	}
	h = head_end(&k, t, len, (size_t)o->head);
	tl = tail_start(&k, t, len, (size_t)o->tail);
	lp_split_free(k.sp);
	if (tl < h)
		tl = h;
	st = assemble(doc, o, t, len, h, tl, d);
	if (!st)
		lp_doc_note(doc, "kept %lld + %lld of %zu tokens%s", o->head, o->tail, total,
			    o->middle_summary ? " with a summary of the middle" : "");
	return st;
}

const struct lp_stage_kind lp_stage_truncate = {
	.name = "truncate",
	.parse = parse,
	.run = run,
	.describe = describe,
};
