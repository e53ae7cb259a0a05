#include "retrieve/bm25.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/mem.h"
#include "text/terms.h"
#include "text/match.h"

struct term_entry {
	uint64_t hash;
	uint32_t pool_off;  /* bytes into pool */
	uint16_t len;       /* bytes, <= LP_TERMS_MAX_BYTES */
	uint16_t stop;      /* a stop word: interned but never counted */
	uint32_t df;        /* spans containing the term */
	uint32_t last_span; /* build: 1 + last span it was seen in, 0: none */
	uint32_t tf;        /* build: count in the current span; finish: cursor */
};

struct posting {
	uint32_t span;
	uint32_t tf;
};

/* Build: a span's (term, tf) pairs, kept in fixed blocks so that growing
 * never copies them and the slack is one block, not half the array. */
struct pending {
	uint32_t term;
	uint32_t tf;
};

#define PENDING_BLOCK ((size_t)1 << 15) /* entries per block: 256 KiB */

struct lp_bm25 {
	struct lp_bm25_params params;
	int finished;

	/* Dictionary: open addressing, slots hold 1 + term id (0: empty). */
	uint32_t *slots;              /* [slot_cap], slot_cap a power of two */
	size_t slot_cap;
	struct term_entry *terms;     /* [n_terms] */
	size_t n_terms, terms_cap;
	char *pool;                   /* term bytes, not NUL-terminated */
	size_t pool_len, pool_cap;

	uint32_t *span_len;           /* [n_spans] terms per span */
	size_t n_spans, spans_cap;
	double total_len;             /* sum of span_len */

	/* After finish: postings grouped by term, spans ascending in a group. */
	uint32_t *term_start;         /* [n_terms + 1] into post */
	struct posting *post;         /* [n_post] */
	size_t n_post;

	/* Build only. */
	struct pending **blocks;      /* [n_blocks] of PENDING_BLOCK; n_post used */
	size_t n_blocks, blocks_cap;
	uint32_t *span_post_end;      /* [n_spans] end of each span's postings */
	size_t span_post_end_cap;
	uint32_t *cur;                /* term ids seen in the span being added */
	size_t n_cur, cur_cap;
};

struct lp_bm25_params lp_bm25_default_params(void)
{
	struct lp_bm25_params p = { 1.2, 0.75 };
	return p;
}

/* Make room for `need` elements of `elem` bytes in *p (capacity *cap),
 * at least doubling so that appends stay amortised O(1). */
static enum lp_status reserve(void **p, size_t *cap, size_t need, size_t elem,
			      struct lp_diag *d)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return LP_OK;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / elem)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "bm25 index too large");
	q = lp_mem_realloc(LP_MEM_INDEX, *p, n * elem, d);
	if (!q)
		return LP_E_NOMEM;
	*p = q;
	*cap = n;
	return LP_OK;
}

static uint64_t hash_bytes(const char *s, size_t len)
{
	return lp_hash_fnv1a(LP_HASH_FNV_BASIS, s, len);
}

/* Slot of `term`: the one holding it, or the empty one where it belongs. */
static size_t find_slot(const struct lp_bm25 *ix, const char *term, size_t len,
			uint64_t h)
{
	size_t mask = ix->slot_cap - 1;

	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		uint32_t s = ix->slots[i];
		const struct term_entry *e;

		if (!s)
			return i;
		e = &ix->terms[s - 1];
		if (e->hash == h && e->len == len && !memcmp(ix->pool + e->pool_off, term, len))
			return i;
	}
}

/* Double the slot table (load stays under 1/2) and re-insert every term. */
static enum lp_status grow_slots(struct lp_bm25 *ix, struct lp_diag *d)
{
	size_t cap = ix->slot_cap * 2;
	uint32_t *slots = lp_mem_calloc(LP_MEM_INDEX, cap, sizeof(*slots), d);

	if (!slots)
		return LP_E_NOMEM;
	lp_mem_free(ix->slots);
	ix->slots = slots;
	ix->slot_cap = cap;
	for (size_t t = 0; t < ix->n_terms; t++) {
		size_t i = (size_t)ix->terms[t].hash & (cap - 1);
		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = (uint32_t)(t + 1);
	}
	return LP_OK;
}

struct lp_bm25 *lp_bm25_new(const struct lp_bm25_params *params, struct lp_diag *d)
{
	struct lp_bm25 *ix = lp_mem_calloc(LP_MEM_INDEX, 1, sizeof(*ix), d);

	if (!ix)
		return NULL;
	ix->params = params ? *params : lp_bm25_default_params();
	ix->slot_cap = 1024;
	ix->slots = lp_mem_calloc(LP_MEM_INDEX, ix->slot_cap, sizeof(*ix->slots), d);
	if (!ix->slots) {
		lp_mem_free(ix);
		return NULL;
	}
	return ix;
}

static void free_build_buffers(struct lp_bm25 *ix)
{
	for (size_t b = 0; b < ix->n_blocks; b++)
		lp_mem_free(ix->blocks[b]);
	lp_mem_free(ix->blocks);
	ix->blocks = NULL;
	ix->n_blocks = ix->blocks_cap = 0;
	lp_mem_free(ix->span_post_end);
	lp_mem_free(ix->cur);
	ix->span_post_end = ix->cur = NULL;
	ix->span_post_end_cap = ix->cur_cap = ix->n_cur = 0;
}

void lp_bm25_free(struct lp_bm25 *ix)
{
	if (!ix)
		return;
	free_build_buffers(ix);
	lp_mem_free(ix->slots);
	lp_mem_free(ix->terms);
	lp_mem_free(ix->pool);
	lp_mem_free(ix->span_len);
	lp_mem_free(ix->term_start);
	lp_mem_free(ix->post);
	lp_mem_free(ix);
}

/* Id of `term`, added to the dictionary when new; UINT32_MAX on failure. */
static uint32_t intern(struct lp_bm25 *ix, const char *term, size_t len, struct lp_diag *d)
{
	uint64_t h = hash_bytes(term, len);
	size_t slot = find_slot(ix, term, len, h);
	struct term_entry *e;

	if (ix->slots[slot])
		return ix->slots[slot] - 1;
	if (ix->n_terms >= UINT32_MAX - 1 || ix->pool_len + len > UINT32_MAX) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "bm25 index too large");
		return UINT32_MAX;
	}
	if (reserve((void **)&ix->terms, &ix->terms_cap, ix->n_terms + 1, sizeof(*ix->terms), d) ||
	    reserve((void **)&ix->pool, &ix->pool_cap, ix->pool_len + len, 1, d))
		return UINT32_MAX;
	e = &ix->terms[ix->n_terms];
	memset(e, 0, sizeof(*e));
	e->hash = h;
	e->pool_off = (uint32_t)ix->pool_len;
	e->len = (uint16_t)len;
	e->stop = (uint16_t)lp_match_is_function_word(term, len);
	memcpy(ix->pool + ix->pool_len, term, len);
	ix->pool_len += len;
	ix->slots[slot] = (uint32_t)++ix->n_terms;
	if (ix->n_terms * 2 > ix->slot_cap && grow_slots(ix, d))
		return UINT32_MAX;
	return (uint32_t)(ix->n_terms - 1);
}

/* Count one occurrence of term `t` in span `span`. */
static enum lp_status count_term(struct lp_bm25 *ix, uint32_t t, uint32_t span,
				 struct lp_diag *d)
{
	struct term_entry *e = &ix->terms[t];

	if (e->last_span == span + 1) {
		e->tf++;
		return LP_OK;
	}
	if (reserve((void **)&ix->cur, &ix->cur_cap, ix->n_cur + 1, sizeof(*ix->cur), d))
		return LP_E_NOMEM;
	ix->cur[ix->n_cur++] = t;
	e->last_span = span + 1;
	e->tf = 1;
	e->df++;
	return LP_OK;
}

/* Move the current span's term counts to the pending postings. */
static enum lp_status flush_span(struct lp_bm25 *ix, struct lp_diag *d)
{
	if (ix->n_post + ix->n_cur > UINT32_MAX)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "bm25 index too large");
	for (size_t i = 0; i < ix->n_cur; i++) {
		size_t b = ix->n_post / PENDING_BLOCK;
		struct pending *p;

		if (b == ix->n_blocks) {
			if (reserve((void **)&ix->blocks, &ix->blocks_cap, b + 1,
				    sizeof(*ix->blocks), d))
				return LP_E_NOMEM;
			ix->blocks[b] = lp_mem_alloc(LP_MEM_INDEX,
						     PENDING_BLOCK * sizeof(struct pending), d);
			if (!ix->blocks[b])
				return LP_E_NOMEM;
			ix->n_blocks++;
		}
		p = &ix->blocks[b][ix->n_post++ % PENDING_BLOCK];
		p->term = ix->cur[i];
		p->tf = ix->terms[ix->cur[i]].tf;
	}
	ix->n_cur = 0;
	ix->span_post_end[ix->n_spans] = (uint32_t)ix->n_post;
	return LP_OK;
}

enum lp_status lp_bm25_add(struct lp_bm25 *ix, const char *text, size_t len,
			   struct lp_diag *d)
{
	struct lp_terms it;
	const char *term;
	size_t tlen;
	uint32_t n_terms = 0, span = (uint32_t)ix->n_spans;

	if (ix->finished)
		return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0, "bm25 index already finished");
	if (ix->n_spans >= UINT32_MAX - 1)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "bm25 index too large");
	if (reserve((void **)&ix->span_len, &ix->spans_cap, ix->n_spans + 1,
		    sizeof(*ix->span_len), d))
		return LP_E_NOMEM;
	if (reserve((void **)&ix->span_post_end, &ix->span_post_end_cap, ix->n_spans + 1,
		    sizeof(*ix->span_post_end), d))
		return LP_E_NOMEM;
	/* Stop words are looked up once per distinct term, at intern time,
	 * rather than once per occurrence. */
	lp_terms_init(&it, text, len, 0);
	while (lp_terms_next(&it, &term, &tlen)) {
		uint32_t t = intern(ix, term, tlen, d);
		if (t == UINT32_MAX)
			return LP_E_NOMEM;
		if (ix->terms[t].stop)
			continue;
		if (count_term(ix, t, span, d))
			return LP_E_NOMEM;
		n_terms++;
	}
	if (flush_span(ix, d))
		return LP_E_NOMEM;
	ix->span_len[ix->n_spans++] = n_terms;
	ix->total_len += n_terms;
	return LP_OK;
}

enum lp_status lp_bm25_finish(struct lp_bm25 *ix, struct lp_diag *d)
{
	struct posting *grouped;
	size_t from = 0;

	if (ix->finished)
		return LP_OK;
	ix->term_start = lp_mem_alloc(LP_MEM_INDEX, (ix->n_terms + 1) * sizeof(uint32_t), d);
	grouped = lp_mem_alloc(LP_MEM_INDEX, (ix->n_post ? ix->n_post : 1) * sizeof(*grouped), d);
	if (!ix->term_start || !grouped) {
		lp_mem_free(grouped);
		lp_mem_free(ix->term_start);
		ix->term_start = NULL;
		return LP_E_NOMEM;
	}
	/* Counting sort by term: the group sizes are the dfs. */
	ix->term_start[0] = 0;
	for (size_t t = 0; t < ix->n_terms; t++) {
		ix->term_start[t + 1] = ix->term_start[t] + ix->terms[t].df;
		ix->terms[t].tf = ix->term_start[t];
	}
	for (size_t s = 0; s < ix->n_spans; s++) {
		for (size_t i = from; i < ix->span_post_end[s]; i++) {
			const struct pending *p = &ix->blocks[i / PENDING_BLOCK][i % PENDING_BLOCK];
			struct term_entry *e = &ix->terms[p->term];
			grouped[e->tf].span = (uint32_t)s;
			grouped[e->tf].tf = p->tf;
			e->tf++;
		}
		from = ix->span_post_end[s];
	}
	ix->post = grouped;
	free_build_buffers(ix);
	ix->finished = 1;
	return LP_OK;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Ids of the query's terms that the index knows, sorted, repeats removed,
 * in a new tracked array (*ids, caller frees). */
static enum lp_status query_ids(const struct lp_bm25 *ix, const char *query, size_t len,
				uint32_t **ids, size_t *n_ids, size_t *n_terms,
				struct lp_diag *d)
{
	struct lp_terms it;
	const char *term;
	size_t tlen, cap = 0, n = 0, all = 0;
	uint32_t *v = NULL;

	lp_terms_init(&it, query, len, LP_TERMS_STOPWORDS);
	while (lp_terms_next(&it, &term, &tlen)) {
		size_t slot = find_slot(ix, term, tlen, hash_bytes(term, tlen));
		all++;
		if (!ix->slots[slot] || ix->terms[ix->slots[slot] - 1].df == 0)
			continue;
		if (reserve((void **)&v, &cap, n + 1, sizeof(*v), d)) {
			lp_mem_free(v);
			return LP_E_NOMEM;
		}
		v[n++] = ix->slots[slot] - 1;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_u32);
	*n_ids = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || v[i] != v[i - 1])
			v[(*n_ids)++] = v[i];
	*ids = v;
	if (n_terms)
		*n_terms = all;
	return LP_OK;
}

/* Weight of one occurrence count `tf` of a term with `idf` in span `span`. */
static double term_score(const struct lp_bm25 *ix, double avgdl, double idf, uint32_t span,
			 double tf)
{
	const double k1 = ix->params.k1, b = ix->params.b;
	double rel = avgdl > 0 ? ix->span_len[span] / avgdl : 1.0;

	return idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * rel));
}

static double term_idf(const struct lp_bm25 *ix, uint32_t t)
{
	double N = (double)ix->n_spans, df = ix->terms[t].df;

	return log(1.0 + (N - df + 0.5) / (df + 0.5));
}

/* Finished index: walk the posting list of each query term. */
static void score_grouped(const struct lp_bm25 *ix, double avgdl, const uint32_t *ids,
			  size_t n_ids, double *scores)
{
	for (size_t q = 0; q < n_ids; q++) {
		uint32_t t = ids[q];
		double idf = term_idf(ix, t);

		for (uint32_t i = ix->term_start[t]; i < ix->term_start[t + 1]; i++)
			scores[ix->post[i].span] += term_score(ix, avgdl, idf, ix->post[i].span,
							       ix->post[i].tf);
	}
}

/* Unfinished index: one pass over every pending posting, with the query's
 * idf per term id in a table (0 for terms not in the query). */
static enum lp_status score_pending(const struct lp_bm25 *ix, double avgdl,
				    const uint32_t *ids, size_t n_ids, double *scores,
				    struct lp_diag *d)
{
	double *idf = lp_mem_calloc(LP_MEM_SCRATCH, ix->n_terms ? ix->n_terms : 1,
				    sizeof(*idf), d);
	size_t from = 0;

	if (!idf)
		return LP_E_NOMEM;
	for (size_t q = 0; q < n_ids; q++)
		idf[ids[q]] = term_idf(ix, ids[q]);
	for (size_t s = 0; s < ix->n_spans; s++) {
		for (size_t i = from; i < ix->span_post_end[s]; i++) {
			const struct pending *p = &ix->blocks[i / PENDING_BLOCK][i % PENDING_BLOCK];
			if (idf[p->term] != 0.0)
				scores[s] += term_score(ix, avgdl, idf[p->term], (uint32_t)s, p->tf);
		}
		from = ix->span_post_end[s];
	}
	lp_mem_free(idf);
	return LP_OK;
}

enum lp_status lp_bm25_score(const struct lp_bm25 *ix, const char *query, size_t len,
			     double *scores, size_t *n_terms, struct lp_diag *d)
{
	double avgdl = ix->n_spans ? ix->total_len / (double)ix->n_spans : 0.0;
	enum lp_status st = LP_OK;
	uint32_t *ids;
	size_t n_ids;

	for (size_t s = 0; s < ix->n_spans; s++)
		scores[s] = 0.0;
	if (query_ids(ix, query, len, &ids, &n_ids, n_terms, d))
		return LP_E_NOMEM;
	if (ix->finished)
		score_grouped(ix, avgdl, ids, n_ids, scores);
	else if (n_ids)
		st = score_pending(ix, avgdl, ids, n_ids, scores, d);
	lp_mem_free(ids);
	return st;
}

size_t lp_bm25_n_spans(const struct lp_bm25 *ix) { return ix->n_spans; }
size_t lp_bm25_n_terms(const struct lp_bm25 *ix) { return ix->n_terms; }
size_t lp_bm25_n_postings(const struct lp_bm25 *ix) { return ix->n_post; }

size_t lp_bm25_bytes(const struct lp_bm25 *ix)
{
	size_t bytes = sizeof(*ix) + ix->slot_cap * sizeof(*ix->slots) +
		       ix->terms_cap * sizeof(*ix->terms) + ix->pool_cap +
		       ix->spans_cap * sizeof(*ix->span_len) + ix->cur_cap * sizeof(*ix->cur);

	if (ix->finished)
		bytes += (ix->n_terms + 1) * sizeof(uint32_t) +
			 (ix->n_post ? ix->n_post : 1) * sizeof(*ix->post);
	else
		bytes += ix->span_post_end_cap * sizeof(*ix->span_post_end) +
			 ix->blocks_cap * sizeof(*ix->blocks) +
			 ix->n_blocks * PENDING_BLOCK * sizeof(struct pending);
	return bytes;
}

size_t lp_bm25_df(const struct lp_bm25 *ix, const char *term, size_t len)
{
	if (len > LP_TERMS_MAX_BYTES)
		return 0;
	uint32_t s = ix->slots[find_slot(ix, term, len, hash_bytes(term, len))];
	return s ? ix->terms[s - 1].df : 0;
}
