/*
 * summarize.c - the summarize stage: a summary tree over the working set.
 *
 * Level 0 holds one summary per chunk of the working set (or of the whole
 * text when no stage cut it into chunks). Each higher level concatenates
 * groups of `fanout` consecutive summaries of the level below (separated by
 * a blank line, a sentence boundary) and summarises each group again, until
 * one summary is left: doc->summary. Every level is kept in doc->levels;
 * first_input and n_inputs give the range covered at the level below (at
 * level 0: the position in the working set, one input each).
 *
 * Memory stays flat as the document grows: a chunk is read in place from
 * the mapped text and released from the resident set once summarised
 * (lp_document_done), only summaries (at most max_words words each) move
 * up, and the scratch of one extractive call is freed before the next.
 *
 * `tree` and `refine` summarise with the pipeline's model instead
 * (summarize_model.c and the files it names); they need a model section.
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "stages/model_stage.h"
#include "stages/plan.h"
#include "stages/stage.h"
#include "stages/summarize_model.h"
#include "text/extractive.h"

enum strategy {
	STRATEGY_EXTRACTIVE = LP_SUMMARIZE_EXTRACTIVE,
	STRATEGY_TREE = LP_SUMMARIZE_TREE,
	STRATEGY_REFINE = LP_SUMMARIZE_REFINE,
};

static const char *const strategy_names[] = {"extractive", "tree", "refine", NULL};
static const char *const final_names[] = {"merge", "join", NULL};
static const char *const map_names[] = {"summary", "points", "compress", NULL};

struct summarize_opts {
	enum strategy strategy;
	long long fanout;        /* summaries per group above level 0, 2..64 */
	long long max_words;     /* per summary; CJK characters count as words */
	long long max_sentences; /* per summary, 0: no limit */
	const char *prompt;      /* for model strategies; NULL when not given */
	long long max_tokens;    /* model strategies: tokens per summary */
	long long final_tokens;  /* tree: tokens of the root summary, 0: max_tokens */
	int final_join;          /* tree: final: join (1) or merge (0) */
	long long extract_words; /* model strategies: pre-extract chunks, 0: off */
	int map;                 /* tree: enum lp_summarize_map */
	long long points;        /* tree, map points/compress: points per chunk */
	int grounded, drop_meta, abstract; /* see summarize_model.h */
	struct lp_summarize_model_opts model; /* filled for tree and refine */
};

#define EXTRACTIVE (1u << STRATEGY_EXTRACTIVE)
#define TREE (1u << STRATEGY_TREE)
#define REFINE (1u << STRATEGY_REFINE)

/* The strategies that read each key; one given to another is an error. */
static const struct lp_cfg_key_use key_strategies[] = {
	{"fanout", EXTRACTIVE | TREE},
	{"max_words", EXTRACTIVE},
	{"max_sentences", EXTRACTIVE},
	{"prompt", TREE | REFINE},
	{"prompt_file", TREE | REFINE},
	{"max_tokens", TREE | REFINE},
	{"final_tokens", TREE},
	{"final", TREE},
	{"extract_words", TREE | REFINE},
	{"map", TREE},
	{"points", TREE},
	{"grounded", TREE},
	{"drop_meta", TREE | REFINE},
	{"abstract", TREE},
	{NULL, 0},
};

/* The maps of a tree that read each key. */
static const struct lp_cfg_key_use key_maps[] = {
	{"points", 1u << LP_SUMMARIZE_MAP_POINTS | 1u << LP_SUMMARIZE_MAP_COMPRESS},
	{"grounded", 1u << LP_SUMMARIZE_MAP_POINTS | 1u << LP_SUMMARIZE_MAP_COMPRESS},
	{"abstract", 1u << LP_SUMMARIZE_MAP_POINTS | 1u << LP_SUMMARIZE_MAP_COMPRESS},
	{NULL, 0},
};

static enum lp_status parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
			    const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = {"strategy", "fanout", "max_words", "max_sentences",
					   "prompt", "prompt_file", "max_tokens", "final_tokens",
					   "final", "extract_words", "map", "points", "grounded",
					   "drop_meta", "abstract", NULL};
	struct summarize_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	int s = STRATEGY_EXTRACTIVE;

	if (!o)
		return lp_cfg_nomem(c);
	if (lp_cfg_check_keys(c, opts, keys) ||
	    lp_cfg_get_enum(c, opts, "strategy", strategy_names, STRATEGY_EXTRACTIVE, &s) ||
	    lp_cfg_get_int(c, opts, "fanout", 4, 2, 64, &o->fanout) ||
	    lp_cfg_get_int(c, opts, "max_words", 120, 1, 1000000, &o->max_words) ||
	    lp_cfg_get_int(c, opts, "max_sentences", 0, 0, 1000000, &o->max_sentences) ||
	    lp_cfg_get_int(c, opts, "max_tokens", 128, 8, 1000000, &o->max_tokens) ||
	    lp_cfg_get_int(c, opts, "final_tokens", 0, 0, 1000000, &o->final_tokens) ||
	    lp_cfg_get_enum(c, opts, "final", final_names, 0, &o->final_join) ||
	    lp_cfg_get_int(c, opts, "extract_words", 0, 0, 1000000, &o->extract_words) ||
	    lp_cfg_get_enum(c, opts, "map", map_names, LP_SUMMARIZE_MAP_SUMMARY, &o->map) ||
	    lp_cfg_get_int(c, opts, "points", 3, 1, 16, &o->points) ||
	    lp_cfg_get_bool(c, opts, "grounded", 1, &o->grounded) ||
	    lp_cfg_get_bool(c, opts, "drop_meta", 1, &o->drop_meta) ||
	    lp_cfg_get_bool(c, opts, "abstract", 0, &o->abstract) ||
	    lp_stage_parse_prompt(c, opts, p, &o->prompt) ||
	    lp_cfg_check_key_use(c, opts, key_strategies, "strategy", strategy_names, s) ||
	    (s == STRATEGY_TREE &&
	     lp_cfg_check_key_use(c, opts, key_maps, "map", map_names, o->map)))
		return LP_E_CONFIG;
	if (s != STRATEGY_EXTRACTIVE && !(p && p->model.present))
		return lp_cfg_error(c, lp_node_get(opts, "strategy"),
				    "strategy '%s' needs a model: add a model section (or use "
				    "extractive)", strategy_names[s]);
	o->strategy = (enum strategy)s;
	o->model.strategy = (enum lp_summarize_strategy)s;
	o->model.fanout = (size_t)o->fanout;
	o->model.max_tokens = (size_t)o->max_tokens;
	o->model.final_tokens = (size_t)o->final_tokens;
	o->model.final_join = o->final_join;
	o->model.prompt = o->prompt;
	o->model.extract_words = (size_t)o->extract_words;
	o->model.map = (enum lp_summarize_map)o->map;
	o->model.points = (size_t)o->points;
	o->model.grounded = o->grounded;
	o->model.drop_meta = o->drop_meta;
	o->model.abstract = o->abstract;
	*out = o;
	return LP_OK;
}

static void describe(const void *opts, struct lp_buf *out)
{
	const struct summarize_opts *o = opts;

	if (o->strategy == STRATEGY_EXTRACTIVE)
		lp_buf_addf(out, "{strategy: %s, fanout: %lld, max_words: %lld, max_sentences: %lld",
			    strategy_names[o->strategy], o->fanout, o->max_words, o->max_sentences);
	else if (o->strategy == STRATEGY_TREE)
		lp_buf_addf(out, "{strategy: %s, fanout: %lld, max_tokens: %lld, extract_words: %lld",
			    strategy_names[o->strategy], o->fanout, o->max_tokens, o->extract_words);
	else
		lp_buf_addf(out, "{strategy: %s, max_tokens: %lld, extract_words: %lld",
			    strategy_names[o->strategy], o->max_tokens, o->extract_words);
	if (o->strategy == STRATEGY_TREE && o->final_tokens)
		lp_buf_addf(out, ", final_tokens: %lld", o->final_tokens);
	if (o->strategy == STRATEGY_TREE && o->final_join)
		lp_buf_addf(out, ", final: %s", final_names[o->final_join]);
	if (o->strategy == STRATEGY_TREE && o->map != LP_SUMMARIZE_MAP_SUMMARY)
		lp_buf_addf(out, ", map: %s, points: %lld, grounded: %s", map_names[o->map],
			    o->points, o->grounded ? "true" : "false");
	if (o->strategy == STRATEGY_TREE && o->abstract)
		lp_buf_adds(out, ", abstract: true");
	if (o->strategy != STRATEGY_EXTRACTIVE && !o->drop_meta)
		lp_buf_adds(out, ", drop_meta: false");
	if (o->prompt)
		lp_stage_describe_prompt(out, o->prompt);
	lp_buf_addc(out, '}');
}

/* Levels a tree over n0 inputs needs: n0, ceil(n0 / f), ..., 1. */
static size_t count_levels(size_t n0, size_t fanout)
{
	size_t levels = 1;

	while (n0 > 1) {
		n0 = (n0 + fanout - 1) / fanout;
		levels++;
	}
	return levels;
}

/* Summarise text[0..len) into an arena string. */
static enum lp_status summarize_into(struct lp_doc *doc, const struct summarize_opts *o,
				     const char *text, size_t len, const char **out,
				     struct lp_diag *d)
{
	struct lp_extractive_opts eo = {(size_t)o->max_words, (size_t)o->max_sentences, NULL,
					&doc->src.model};
	char *s;
	size_t n;
	enum lp_status st = lp_extractive_summarize(text, len, &eo, &s, &n, d);

	if (st)
		return st;
	*out = lp_arena_strndup(&doc->arena, s, n);
	lp_mem_free(s);
	if (!*out)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory storing a summary");
	return LP_OK;
}

static enum lp_status run_level0(struct lp_doc *doc, const struct summarize_opts *o,
				 const size_t *set, size_t n, struct lp_summary_level *l,
				 struct lp_diag *d)
{
	struct lp_progress pr;
	enum lp_status st = LP_OK;
	size_t released = 0;

	if (!n) { /* no chunks: the whole text is the one input */
		l->first_input[0] = 0;
		l->n_inputs[0] = 1;
		return summarize_into(doc, o, doc->text ? doc->text : "", doc->len,
				      &l->texts[0], d);
	}
	lp_progress_begin(&pr, "summarize", "chunks", n);
	for (size_t i = 0; i < n && !st; i++) {
		const struct lp_chunk *c = &doc->chunks[set[i]];
		l->first_input[i] = i;
		l->n_inputs[i] = 1;
		st = lp_document_need(&doc->src, c->len, d);
		if (!st)
			st = summarize_into(doc, o, doc->text + c->off, c->len, &l->texts[i], d);
		lp_document_done_upto(&doc->src, &released, c->off, c->len);
		lp_progress_update(&pr, i + 1);
	}
	lp_progress_end(&pr);
	return st;
}

/* Summarise groups of `fanout` texts of `below` into `l`. */
static enum lp_status run_level(struct lp_doc *doc, const struct summarize_opts *o,
				const struct lp_summary_level *below,
				struct lp_summary_level *l, struct lp_diag *d)
{
	size_t f = (size_t)o->fanout;
	struct lp_buf b;
	enum lp_status st = LP_OK;

	lp_buf_init(&b);
	for (size_t j = 0; j < l->n && !st; j++) {
		size_t first = j * f, end = first + f < below->n ? first + f : below->n;
		lp_buf_reset(&b);
		for (size_t i = first; i < end && !st; i++)
			if ((i > first && lp_buf_adds(&b, "\n\n")) || lp_buf_adds(&b, below->texts[i]))
				st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
						 "out of memory joining summaries");
		l->first_input[j] = first;
		l->n_inputs[j] = end - first;
		if (!st)
			st = summarize_into(doc, o, b.data, b.len, &l->texts[j], d);
	}
	lp_buf_release(&b);
	return st;
}

/* The runner opens the stage's trace entry before run(); fill its note. */
static void set_note(struct lp_doc *doc, const char *kind, const char *note)
{
	struct lp_stage_trace *t = doc->n_trace ? &doc->trace[doc->n_trace - 1] : NULL;

	if (note && t && t->kind && !strcmp(t->kind, kind))
		t->note = note;
	lp_debug("%s: %s", kind, note ? note : "");
}

static enum lp_status run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct summarize_opts *o = opts;
	const char *phase = lp_mem_phase();
	size_t n, n0, n_levels, f = (size_t)o->fanout;
	const size_t *set = lp_doc_working_set(doc, &n);
	enum lp_status st;

	if (o->strategy != STRATEGY_EXTRACTIVE)
		return lp_summarize_model_run(doc, &o->model, d);
	if (!set && doc->n_chunks)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the working set");
	n0 = n ? n : 1;
	n_levels = count_levels(n0, f);
	doc->levels = lp_arena_alloc(&doc->arena, n_levels * sizeof(*doc->levels));
	if (!doc->levels)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for summary levels");
	doc->n_levels = 0;
	lp_mem_set_phase("summarize");
	st = lp_doc_level_alloc(doc, &doc->levels[0], n0, d);
	doc->levels[0].n = n0;
	if (!st)
		st = run_level0(doc, o, set, n, &doc->levels[0], d);
	for (size_t k = 1; k < n_levels && !st; k++) {
		size_t m = (doc->levels[k - 1].n + f - 1) / f;
		st = lp_doc_level_alloc(doc, &doc->levels[k], m, d);
		doc->levels[k].n = m;
		if (!st)
			st = run_level(doc, o, &doc->levels[k - 1], &doc->levels[k], d);
	}
	lp_mem_set_phase(phase);
	if (st)
		return st;
	doc->n_levels = n_levels;
	doc->summary = doc->levels[n_levels - 1].texts[0];
	set_note(doc, "summarize", lp_doc_levels_note(doc, NULL, 0));
	return LP_OK;
}

extern const struct lp_stage_kind lp_stage_summarize;

const struct lp_summarize_model_opts *lp_summarize_model_opts_of(const struct lp_doc *doc,
								 size_t before, size_t *index)
{
	const struct lp_pipeline *p = doc->pipeline;

	for (size_t i = p ? (before < p->n_stages ? before : p->n_stages) : 0; i-- > 0;) {
		const struct summarize_opts *o = p->stages[i].opts;
		if (p->stages[i].kind == &lp_stage_summarize && o->strategy != STRATEGY_EXTRACTIVE) {
			*index = i;
			return &o->model;
		}
	}
	return NULL;
}

/* Extractive: sentence scores and the choice, 192 KiB and 0.8 bytes per
 * byte (705 KB on 878 KB); a model's strategies hold prompts and
 * summaries, little beside the document. */
static size_t plan(const void *opts, const struct lp_pipeline *p, size_t doc_len)
{
	const struct summarize_opts *o = opts;

	(void)p;
	if (o->strategy != STRATEGY_EXTRACTIVE)
		return lp_stage_plan_small(doc_len);
	return lp_stage_plan_line((size_t)192 << 10, 4, 5, doc_len);
}

const struct lp_stage_kind lp_stage_summarize = {
	.name = "summarize",
	.parse = parse,
	.run = run,
	.describe = describe,
	.plan = plan,
};
