/*
 * retrieve.c - the retrieve stage: keep the top_k chunks most relevant to a
 * query.
 *
 *     - retrieve: {query: "${question}", top_k: 8, order: score}
 *
 * It ranks the working set (the chunks an earlier stage left, or all of
 * them) with the pipeline's retrieval scorer, writes every ranked chunk's
 * score, marks the kept ones selected, and replaces the selection by them,
 * best first (order: score) or in document order (order: document, which
 * reads better when the chunks are summarised in sequence). Only the BM25
 * scorer exists in this build; the others are refused when the pipeline
 * is loaded, not when it runs.
 */
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "retrieve/bm25.h"
#include "retrieve/topk.h"
#include "stages/stage.h"

enum retrieve_order { ORDER_DOCUMENT, ORDER_SCORE };

static const char *const order_names[] = { "document", "score", NULL };

struct retrieve_opts {
	const char *query;
	long long top_k;
	enum retrieve_order order;
	struct lp_bm25_params bm25;
};

/* The node to blame for the scorer: retrieval.scorer when written. */
static const struct lp_node *scorer_node(const struct lp_pipeline *p,
					 const struct lp_node *fallback)
{
	const struct lp_node *n = lp_node_get(lp_node_get(p->root, "retrieval"), "scorer");
	return n ? n : fallback;
}

static enum lp_status retrieve_parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
				     const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "query", "top_k", "order", NULL };
	struct retrieve_opts *o;
	int order;

	if (p->retrieval.scorer != LP_SCORER_BM25)
		return lp_cfg_error(c, scorer_node(p, opts),
				    "scorer '%s' is not available yet; use bm25",
				    lp_scorer_name(p->retrieval.scorer));
	o = lp_arena_alloc(c->arena, sizeof(*o));
	if (!o)
		return lp_cfg_error(c, opts, "out of memory");
	if (lp_cfg_check_keys(c, opts, keys) ||
	    lp_cfg_get_string(c, opts, "query", NULL, &o->query) ||
	    lp_cfg_get_int(c, opts, "top_k", 8, 1, 1000000, &o->top_k) ||
	    lp_cfg_get_enum(c, opts, "order", order_names, ORDER_SCORE, &order))
		return LP_E_CONFIG;
	if (!o->query)
		return lp_cfg_error(c, opts, "missing key 'query' (the text to rank chunks by, "
				    "usually \"${question}\")");
	if (!o->query[0])
		return lp_cfg_error(c, lp_node_get(opts, "query"),
				    "'query' is empty (give a question with -q)");
	o->order = (enum retrieve_order)order;
	o->bm25.k1 = p->retrieval.bm25_k1;
	o->bm25.b = p->retrieval.bm25_b;
	*out = o;
	return LP_OK;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* Index the working set and score it: scores[i] for chunk set[i]. */
static enum lp_status score_set(struct lp_doc *doc, const struct retrieve_opts *o,
				const size_t *set, size_t n, double *scores,
				struct lp_diag *d)
{
	struct lp_bm25 *ix = lp_bm25_new(&o->bm25, d);
	enum lp_status st = ix ? LP_OK : LP_E_NOMEM;
	size_t n_terms = 0;

	for (size_t i = 0; i < n && st == LP_OK; i++) {
		const struct lp_chunk *c = &doc->chunks[set[i]];
		st = lp_bm25_add(ix, doc->text + c->off, c->len, d);
	}
	if (st == LP_OK)
		st = lp_bm25_finish(ix, d);
	if (st == LP_OK)
		st = lp_bm25_score(ix, o->query, strlen(o->query), scores, &n_terms, d);
	lp_bm25_free(ix);
	if (st == LP_OK && n_terms == 0)
		st = lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				 "retrieve: query '%s' has no words to search for", o->query);
	return st;
}

/* Replace the selection by the best `k` of set[0..n) (pos has room for k),
 * in the order asked. */
static enum lp_status select_top(struct lp_doc *doc, const struct retrieve_opts *o,
				 const size_t *set, size_t n, const double *scores,
				 size_t k, size_t *pos, struct lp_diag *d)
{
	size_t keep = lp_topk_select(scores, n, k, pos);
	size_t *sel = lp_arena_alloc(&doc->arena, (keep ? keep : 1) * sizeof(*sel));

	if (!sel)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "retrieve: out of memory");
	for (size_t i = 0; i < doc->n_chunks; i++)
		doc->chunks[i].selected = 0;
	for (size_t i = 0; i < n; i++)
		doc->chunks[set[i]].score = scores[i];
	for (size_t i = 0; i < keep; i++) {
		sel[i] = set[pos[i]];
		doc->chunks[sel[i]].selected = 1;
	}
	if (o->order == ORDER_DOCUMENT)
		qsort(sel, keep, sizeof(*sel), cmp_size);
	doc->selection = sel;
	doc->n_selection = keep;
	return LP_OK;
}

/* Say what was kept on the trace entry the runner opened for this stage. */
static void note_kept(struct lp_doc *doc, size_t keep, size_t n)
{
	if (doc->n_trace)
		doc->trace[doc->n_trace - 1].note =
			lp_arena_printf(&doc->arena, "kept %zu of %zu chunks", keep, n);
}

static enum lp_status retrieve_run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct retrieve_opts *o = opts;
	const char *phase = lp_mem_phase();
	const size_t *set;
	size_t n, k, *pos;
	double *scores;
	enum lp_status st;

	if (doc->n_chunks == 0)
		return lp_diag_set(d, LP_E_CONFIG, doc->pipeline ? doc->pipeline->path : NULL,
				   0, 0, "retrieve: no chunks to rank (put a split stage first)");
	set = lp_doc_working_set(doc, &n);
	if (!set)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "retrieve: out of memory");
	if (n == 0) {
		note_kept(doc, 0, 0);
		return LP_OK;
	}
	k = (size_t)o->top_k < n ? (size_t)o->top_k : n;
	scores = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*scores), d);
	pos = lp_mem_alloc(LP_MEM_SCRATCH, k * sizeof(*pos), d);
	if (!scores || !pos) {
		lp_mem_free(scores);
		lp_mem_free(pos);
		return LP_E_NOMEM;
	}
	lp_mem_set_phase("index");
	st = score_set(doc, o, set, n, scores, d);
	lp_mem_set_phase(phase);
	if (st == LP_OK)
		st = select_top(doc, o, set, n, scores, k, pos, d);
	if (st == LP_OK)
		note_kept(doc, doc->n_selection, n);
	lp_mem_free(scores);
	lp_mem_free(pos);
	return st;
}

static void retrieve_describe(const void *opts, struct lp_buf *out)
{
	const struct retrieve_opts *o = opts;

	lp_buf_addf(out, "{query: \"");
	for (const char *s = o->query; *s; s++) {
		if (*s == '"' || *s == '\\')
			lp_buf_addc(out, '\\');
		lp_buf_addc(out, *s == '\n' ? ' ' : *s);
	}
	lp_buf_addf(out, "\", top_k: %lld, order: %s, scorer: bm25, k1: %g, b: %g}",
		    o->top_k, order_names[o->order], o->bm25.k1, o->bm25.b);
}

const struct lp_stage_kind lp_stage_retrieve = {
	.name = "retrieve",
	.parse = retrieve_parse,
	.run = retrieve_run,
	.describe = retrieve_describe,
};
