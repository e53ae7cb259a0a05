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
 * reads better when the chunks are summarised in sequence).
 *
 * Scorers (retrieval.scorer): bm25 (bm25.h); hash and dense, the cosine of
 * the chunk's embedding with the query's (hashembed.h, bert.h through
 * embedder.h and embscore.h); hybrid, BM25 and dense fused by reciprocal
 * rank (retrieval.fusion: rrf, with rrf_k) or by a weighted sum of
 * min-max-normalised scores (fusion: weighted, weight = dense share); in
 * both, the dense share is scaled by how much of the query and the chunks
 * the dense model's vocabulary covers (fusion.h lp_fusion_coverage_scale),
 * so that a language the model does not know leaves the BM25 ranking.
 * Dense embeddings go through the embedding cache (embcache.h) unless
 * `cache: off`; hashed ones are cheap to recompute, so their cache is off
 * unless `cache: on`. A missing dense model is an error of the run, not of
 * the load, so `lpipe check` works without it.
 *
 *     must_include: [keyphrase, ...]
 *
 * forces chunks that contain a keyphrase (case-insensitive, any run of
 * white space matching any other) into the selection, in the places of the
 * lowest-ranked ones (fusion.h lp_fusion_force).
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"
#include "core/utf8.h"
#include "engine/engine.h"
#include "retrieve/bm25.h"
#include "retrieve/embcache.h"
#include "retrieve/embscore.h"
#include "retrieve/fusion.h"
#include "core/hash.h"
#include "retrieve/topk.h"
#include "stages/dense.h"
#include "stages/plan.h"
#include "stages/stage.h"
#include "text/request.h"

enum retrieve_order { ORDER_DOCUMENT, ORDER_SCORE };

static const char *const order_names[] = { "document", "score", NULL };

struct retrieve_opts {
	const char *query;
	long long top_k;
	enum retrieve_order order;
	const char **must;     /* must_include keyphrases */
	size_t n_must;
	int cache;             /* embedding cache on */
	struct lp_retrieval_cfg r; /* a copy of the pipeline's retrieval section */
	struct lp_bm25_params bm25;
};

static enum lp_status retrieve_parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
				     const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "query", "top_k", "order", "must_include",
					    "cache", NULL };
	struct retrieve_opts *o;
	int order;

	o = lp_arena_alloc(c->arena, sizeof(*o));
	if (!o)
		return lp_cfg_nomem(c);
	if (lp_cfg_check_keys(c, opts, keys) ||
	    lp_cfg_get_string(c, opts, "query", NULL, &o->query) ||
	    lp_cfg_get_int(c, opts, "top_k", 8, 1, 1000000, &o->top_k) ||
	    lp_cfg_get_enum(c, opts, "order", order_names, ORDER_SCORE, &order) ||
	    lp_cfg_get_string_list(c, opts, "must_include", &o->must, &o->n_must) ||
	    lp_cfg_get_bool(c, opts, "cache", p->retrieval.scorer == LP_SCORER_DENSE ||
			    p->retrieval.scorer == LP_SCORER_HYBRID, &o->cache))
		return LP_E_CONFIG;
	for (size_t i = 0; i < o->n_must; i++)
		if (!o->must[i][0])
			return lp_cfg_error(c, lp_node_get(opts, "must_include"),
					    "'must_include' has an empty keyphrase");
	if (!o->query)
		return lp_cfg_error(c, opts, "missing key 'query' (the text to rank chunks by, "
				    "usually \"${question}\")");
	if (!o->query[0])
		return lp_cfg_error(c, lp_node_get(opts, "query"),
				    "'query' is empty (give a question with -q)");
	o->order = (enum retrieve_order)order;
	o->r = p->retrieval;
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

/* What builds the index of a working set. */
struct index_job {
	const struct lp_doc *doc;
	const struct retrieve_opts *o;
	const size_t *set;
	size_t n;
};

static enum lp_status build_bm25(void *ctx, void **out, struct lp_diag *d)
{
	const struct index_job *j = ctx;
	struct lp_bm25 *ix = lp_bm25_new(&j->o->bm25, d);
	enum lp_status st = ix ? LP_OK : LP_E_NOMEM;

	for (size_t i = 0; i < j->n && st == LP_OK; i++) {
		const struct lp_chunk *c = &j->doc->chunks[j->set[i]];
		st = lp_bm25_add(ix, j->doc->text + c->off, c->len, d);
	}
	*out = ix;
	return st;
}

/* The key in the document's store (engine/docstore.h) of an index of the
 * working set: the document's key, `what` shapes the index and a hash of
 * the spans indexed. */
static void index_key(const struct lp_doc *doc, const char *what, const size_t *set, size_t n,
		      char key[LP_DOCSTORE_KEY_MAX + 1])
{
	uint64_t h = 1469598103934665603ULL; /* the seed the keys were made with */

	for (size_t i = 0; i < n; i++) {
		const struct lp_chunk *c = &doc->chunks[set[i]];
		uint64_t v[2] = { c->off, c->len };
		h = lp_hash_fnv1a(h, v, sizeof(v));
	}
	snprintf(key, LP_DOCSTORE_KEY_MAX + 1, "%s|%s|%zu|%016llx", doc->store_key, what, n,
		 (unsigned long long)h);
}

/* The BM25 index of the working set from the document's store, kept
 * there for the next runs. */
static enum lp_status shared_bm25(struct lp_doc *doc, struct index_job *j,
				  const struct lp_bm25 **out, struct lp_diag *d)
{
	char key[LP_DOCSTORE_KEY_MAX + 1], what[64];
	const void *ix;
	enum lp_status st;

	snprintf(what, sizeof(what), "bm25 %g %g", j->o->bm25.k1, j->o->bm25.b);
	index_key(doc, what, j->set, j->n, key);
	st = lp_docstore_index(doc->store, key, LP_DOCSTORE_BM25, build_bm25, j, &ix, d);
	*out = ix;
	return st;
}

/* BM25 over the working set: scores[i] for chunk set[i]. */
static enum lp_status score_bm25(struct lp_doc *doc, const struct retrieve_opts *o,
				const size_t *set, size_t n, double *scores,
				struct lp_diag *d)
{
	struct index_job j = { doc, o, set, n };
	struct lp_bm25 *own = NULL;
	const struct lp_bm25 *ix = NULL;
	enum lp_status st;
	size_t n_terms = 0;

	if (doc->shared_src) {
		st = shared_bm25(doc, &j, &ix, d);
	} else {
		void *made = NULL;
		st = build_bm25(&j, &made, d);
		ix = own = made;
	}
	/* One query: scoring the index as built reads each posting once and
	 * skips the regrouping copy that lp_bm25_finish would make (a kept
	 * index is finished, for the queries of the runs to come). */
	if (st == LP_OK)
		st = lp_bm25_score(ix, o->query, strlen(o->query), scores, &n_terms, d);
	if (own)
		lp_bm25_free(own);
	else
		lp_docstore_put(doc->store, ix);
	if (st == LP_OK && n_terms == 0)
		st = lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				 "retrieve: query '%s' has no words to search for", o->query);
	return st;
}

/* The texts of the working set, in scratch arrays the caller frees. */
static enum lp_status chunk_texts(const struct lp_doc *doc, const size_t *set, size_t n,
				  const char ***texts, size_t **lens, struct lp_diag *d)
{
	*texts = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(**texts), d);
	*lens = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(**lens), d);
	if (!*texts || !*lens)
		return LP_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		(*texts)[i] = doc->text + doc->chunks[set[i]].off;
		(*lens)[i] = doc->chunks[set[i]].len;
	}
	return LP_OK;
}

/* The cache of this document under embedder e, or NULL (none wanted, no
 * directory known). Returns LP_OK or LP_E_NOMEM. */
static enum lp_status open_cache(const struct lp_doc *doc, const struct retrieve_opts *o,
				 const struct lp_embedder *e, struct lp_embcache **out,
				 struct lp_diag *d)
{
	char dir[4096];

	*out = NULL;
	if (!o->cache)
		return LP_OK;
	if (!lp_embcache_default_dir(dir, sizeof(dir))) {
		lp_debug("retrieve: no cache directory (set LPIPE_CACHE_DIR or HOME)");
		return LP_OK;
	}
	return lp_embcache_open(dir, lp_embedder_id(e),
				lp_hash_bytes(doc->text, doc->len, 0x6c70646f63ULL),
				lp_embedder_dim(e), out, d);
}

/* A cache that cannot be written costs time, not the answer: warn only. */
static void save_cache(struct lp_embcache *cache)
{
	struct lp_diag d;

	lp_diag_init(&d);
	if (cache && lp_embcache_save(cache, &d) != LP_OK)
		lp_warn("embedding cache not saved: '%s': %s", d.file, d.msg);
}

/* What embeds the working set's chunks for the document's store. */
struct vectors_job {
	struct lp_embedder *e;
	struct lp_embcache *cache;
	const char *const *texts;
	const size_t *lens;
	size_t n;
	struct lp_embscore_stats *stats;
};

static enum lp_status build_vectors(void *ctx, void **out, struct lp_diag *d)
{
	struct vectors_job *j = ctx;
	struct lp_vecindex *ix = NULL;
	enum lp_status st = lp_embscore_index(j->e, j->cache, j->texts, j->lens, j->n, &ix,
					      j->stats, d);

	*out = ix;
	return st;
}

/* lp_embscore with the chunks' vectors from the document's store, kept
 * there for the next runs' queries: only the query is embedded when they
 * are there. */
static enum lp_status shared_embscore(struct lp_doc *doc, struct lp_embedder *e,
				      struct lp_embcache *cache, const size_t *set,
				      const char **texts, const size_t *lens, size_t n,
				      const char *query, double *scores,
				      struct lp_embscore_stats *stats, struct lp_diag *d)
{
	struct vectors_job j = { e, cache, texts, lens, n, stats };
	char key[LP_DOCSTORE_KEY_MAX + 1], what[96];
	const void *ix = NULL;
	enum lp_status st;

	if (n == 0)
		return LP_OK;
	snprintf(what, sizeof(what), "vectors %.40s %zu", lp_embedder_name(e), lp_embedder_dim(e));
	index_key(doc, what, set, n, key);
	st = lp_docstore_index(doc->store, key, LP_DOCSTORE_VECTORS, build_vectors, &j, &ix, d);
	if (st == LP_OK)
		st = lp_embscore_query(e, ix, query, strlen(query), scores, &stats->query_empty, d);
	lp_docstore_put(doc->store, ix);
	return st;
}

/* Cosine of each chunk of the working set with the query, under the hash
 * or the dense embedder: scores[i] for chunk set[i]. With `scale`, first
 * the weight fusion should give these scores (lp_fusion_coverage_scale of
 * vocab_coverage); when it is 0 nothing is embedded and scores are 0. */
static enum lp_status score_embed(struct lp_doc *doc, const struct retrieve_opts *o,
				  enum lp_scorer kind, const size_t *set, size_t n,
				  double *scores, double *scale, struct lp_diag *d)
{
	struct lp_embedder *e = NULL;
	struct lp_embcache *cache = NULL;
	struct lp_embscore_stats stats = { 0 };
	const char **texts = NULL;
	size_t *lens = NULL;
	const char *phase = lp_mem_phase();
	double cov = 1;
	enum lp_status st;

	lp_mem_set_phase("embed");
	if (kind == LP_SCORER_HASH)
		st = lp_embedder_new_hash_on((size_t)o->r.hash_dim,
					     lp_device_name(o->r.device), &e, d);
	else
		st = lp_stage_dense_borrow(doc, o->r.device, &e, d);
	if (st == LP_OK)
		st = chunk_texts(doc, set, n, &texts, &lens, d);
	if (st == LP_OK && scale) {
		st = lp_stage_vocab_coverage(e, "retrieve", o->query, strlen(o->query), texts,
					     lens, n, &cov, d);
		*scale = lp_fusion_coverage_scale(cov);
		lp_debug("retrieve: coverage %.3f, %s weight scaled by %.3f", cov,
			 lp_embedder_name(e), *scale);
		if (st == LP_OK && *scale == 0) {
			for (size_t i = 0; i < n; i++)
				scores[i] = 0;
			goto out;
		}
	}
	if (st == LP_OK)
		st = open_cache(doc, o, e, &cache, d);
	if (st == LP_OK)
		st = doc->shared_src ? shared_embscore(doc, e, cache, set, texts, lens, n, o->query,
						       scores, &stats, d)
				     : lp_embscore(e, cache, texts, lens, n, o->query,
						   strlen(o->query), scores, &stats, d);
	if (st == LP_OK && stats.query_empty)
		st = lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				 "retrieve: query '%s' has no words to search for", o->query);
	if (st == LP_OK) {
		save_cache(cache);
		lp_debug("retrieve: %s scorer: %zu chunks embedded, %zu from the cache",
			 lp_embedder_name(e), stats.embedded, stats.cached);
	}
out:
	lp_mem_free(texts);
	lp_mem_free(lens);
	lp_embcache_free(cache);
	if (kind != LP_SCORER_HASH)
		lp_stage_dense_return(doc, e);
	else
		lp_embedder_free(e);
	lp_mem_set_phase(phase);
	return st;
}

/* BM25 and dense, fused as retrieval.fusion says, into scores; the dense
 * share scaled by the dense vocabulary's coverage (fusion.h). */
static enum lp_status score_hybrid(struct lp_doc *doc, const struct retrieve_opts *o,
				   const size_t *set, size_t n, double *scores,
				   struct lp_diag *d)
{
	double *dense = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*dense), d);
	double *fused = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*fused), d);
	double scale = 1;
	enum lp_status st = dense && fused ? LP_OK : LP_E_NOMEM;

	if (st == LP_OK)
		st = score_bm25(doc, o, set, n, scores, d);
	if (st == LP_OK)
		st = score_embed(doc, o, LP_SCORER_DENSE, set, n, dense, &scale, d);
	if (st == LP_OK && o->r.fusion == LP_FUSION_WEIGHTED) {
		lp_fusion_weighted(scores, dense, n, o->r.weight * scale, scores);
	} else if (st == LP_OK) {
		const double *lists[2] = { scores, dense };
		const double weights[2] = { 1.0, scale };
		st = lp_fusion_rrf_weighted(lists, weights, 2, n, (double)o->r.rrf_k, fused, d);
		for (size_t i = 0; i < n && st == LP_OK; i++)
			scores[i] = fused[i];
	}
	lp_mem_free(dense);
	lp_mem_free(fused);
	return st;
}

static enum lp_status score_set(struct lp_doc *doc, const struct retrieve_opts *o,
				const size_t *set, size_t n, double *scores,
				struct lp_diag *d)
{
	switch (o->r.scorer) {
	case LP_SCORER_HASH:
	case LP_SCORER_DENSE:
		return score_embed(doc, o, o->r.scorer, set, n, scores, NULL, d);
	case LP_SCORER_HYBRID:
		return score_hybrid(doc, o, set, n, scores, d);
	case LP_SCORER_BM25:
	default:
		return score_bm25(doc, o, set, n, scores, d);
	}
}

/* Next character of s[*i..len) as keyphrases compare it: lower case, and a
 * run of white space as one ' '. Returns 0 at the end. */
static int next_folded(const char *str, size_t len, size_t *i, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c;
	int n;

	if (*i >= len)
		return 0;
	n = lp_utf8_decode(s + *i, len - *i, cp);
	*i += n ? (size_t)n : 1;
	if (!lp_utf8_is_space(*cp)) {
		*cp = lp_utf8_tolower(*cp);
		return 1;
	}
	while (*i < len && (n = lp_utf8_decode(s + *i, len - *i, &c)) > 0 &&
	       lp_utf8_is_space(c))
		*i += (size_t)n;
	*cp = ' ';
	return 1;
}

/* Whether text[0..len) contains `phrase`, compared as next_folded says. */
static int contains_phrase(const char *text, size_t len, const char *phrase)
{
	size_t plen = strlen(phrase);

	for (size_t start = 0; start < len;) {
		size_t i = start, j = 0;
		uint32_t a, b;
		int ok = 1;
		while (next_folded(phrase, plen, &j, &b))
			if (!next_folded(text, len, &i, &a) || a != b) {
				ok = 0;
				break;
			}
		if (ok)
			return 1;
		next_folded(text, len, &start, &a);
	}
	return 0;
}

/* Bring the chunks holding a must_include phrase into pos[0..keep)
 * (positions in set). Returns LP_OK or LP_E_NOMEM; *brought gets how many
 * came in. */
static enum lp_status force_must(const struct lp_doc *doc, const struct retrieve_opts *o,
				 const size_t *set, size_t n, const double *scores,
				 size_t *pos, size_t keep, size_t *brought,
				 struct lp_diag *d)
{
	unsigned char *forced;

	*brought = 0;
	if (o->n_must == 0 || keep == 0)
		return LP_OK;
	forced = lp_mem_calloc(LP_MEM_SCRATCH, n, 1, d);
	if (!forced)
		return LP_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct lp_chunk *c = &doc->chunks[set[i]];
		for (size_t m = 0; m < o->n_must && !forced[i]; m++)
			forced[i] = (unsigned char)contains_phrase(doc->text + c->off, c->len,
								   o->must[m]);
	}
	*brought = lp_fusion_force(scores, n, forced, pos, keep);
	lp_mem_free(forced);
	return LP_OK;
}

/* Replace the selection by the best `k` of set[0..n) (pos has room for k),
 * in the order asked. */
static enum lp_status select_top(struct lp_doc *doc, const struct retrieve_opts *o,
				 const size_t *set, size_t n, const double *scores,
				 size_t k, size_t *pos, size_t *brought, struct lp_diag *d)
{
	size_t keep = lp_topk_select(scores, n, k, pos);
	size_t *sel = lp_arena_alloc(&doc->arena, (keep ? keep : 1) * sizeof(*sel));

	if (!sel)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "retrieve: out of memory");
	if (force_must(doc, o, set, n, scores, pos, keep, brought, d) != LP_OK)
		return LP_E_NOMEM;
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
static void note_kept(struct lp_doc *doc, size_t keep, size_t n, size_t brought)
{
	if (!doc->n_trace)
		return;
	doc->trace[doc->n_trace - 1].note = brought
		? lp_arena_printf(&doc->arena, "kept %zu of %zu chunks, %zu by must_include",
				  keep, n, brought)
		: lp_arena_printf(&doc->arena, "kept %zu of %zu chunks", keep, n);
}

static enum lp_status retrieve_run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct retrieve_opts *o = opts;
	const char *phase = lp_mem_phase();
	const size_t *set;
	size_t n, k, *pos, brought = 0;
	double *scores;
	enum lp_status st;
	struct retrieve_opts topic_opts;
	struct lp_span topic;

	/* a request for the document's words ("Quote the clause about X")
	 * is searched by its topic, not by "quote" and "clause" */
	if (lp_request_quote(o->query, &topic)) {
		topic_opts = *o;
		topic_opts.query = lp_arena_strndup(&doc->arena, o->query + topic.off, topic.len);
		if (!topic_opts.query)
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "retrieve: out of memory");
		o = &topic_opts;
	}

	if (doc->n_chunks == 0)
		return lp_diag_set(d, LP_E_CONFIG, doc->pipeline ? doc->pipeline->path : NULL,
				   0, 0, "retrieve: no chunks to rank (put a split stage first)");
	set = lp_doc_working_set(doc, &n);
	if (!set)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "retrieve: out of memory");
	if (n == 0) {
		note_kept(doc, 0, 0, 0);
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
		lp_doc_prefer_entries(doc, o->query, set, n, scores);
	if (st == LP_OK)
		st = select_top(doc, o, set, n, scores, k, pos, &brought, d);
	if (st == LP_OK)
		note_kept(doc, doc->n_selection, n, brought);
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
	/* Only the stage's own keys: the plan is read back as a pipeline, and
	 * the scorer and its parameters belong to the retrieval section. */
	lp_buf_addf(out, "\", top_k: %lld, order: %s", o->top_k, order_names[o->order]);
	if (o->n_must) {
		lp_buf_addf(out, ", must_include: [");
		for (size_t i = 0; i < o->n_must; i++) {
			if (i)
				lp_buf_addf(out, ", ");
			lp_cfg_quote(out, o->must[i]);
		}
		lp_buf_addc(out, ']');
	}
	/* cache means nothing to BM25; print it where it acts. */
	if (o->r.scorer != LP_SCORER_BM25)
		lp_buf_addf(out, ", cache: %s", o->cache ? "on" : "off");
	lp_buf_addc(out, '}');
}

/* BM25: its postings and scores, 576 KiB and 0.8 bytes per byte (measured
 * 966 KB on 878 KB). Vectors add one row a chunk, counted as a chunk per
 * 256 bytes: 4-byte floats of the hashed embedder's hash_dim or the dense
 * one's 384 (both for hybrid). */
static size_t retrieve_plan(const void *opts, const struct lp_pipeline *p, size_t doc_len)
{
	const struct retrieve_opts *o = opts;
	size_t dim = o->r.scorer == LP_SCORER_HASH ? (size_t)o->r.hash_dim
		     : o->r.scorer == LP_SCORER_BM25 ? 0 : 384;

	(void)p;
	return lp_stage_plan_line((size_t)576 << 10, 4, 5, doc_len) +
	       lp_stage_plan_line(0, 4 * dim, 256, doc_len);
}

const struct lp_stage_kind lp_stage_retrieve = {
	.name = "retrieve",
	.parse = retrieve_parse,
	.run = retrieve_run,
	.describe = retrieve_describe,
	.plan = retrieve_plan,
};
