#include "stages/topics.h"

#include "core/mem.h"
#include "stages/model_stage.h"
#include "stages/verify_ground.h"
#include "text/keyphrase.h"

/* The pieces of doc->text topics are drawn from (*spans, tracked:
 * free it): the whole document when it is at most `cap` bytes, else whole
 * working-set chunks, every k-th, at most `cap` bytes in all. *len is the
 * bytes they hold. */
static enum lp_status topic_source(struct lp_doc *doc, size_t cap, struct lp_span **spans,
				   size_t *n_spans, size_t *len, struct lp_diag *d)
{
	const size_t *set;
	size_t n, total = 0, want, m = 0;

	*n_spans = 0;
	*len = 0;
	if (doc->len <= cap || !doc->n_chunks) {
		if (!(*spans = lp_mem_alloc(LP_MEM_SCRATCH, sizeof(**spans), d)))
			return LP_E_NOMEM;
		(*spans)[0].off = 0;
		(*spans)[0].len = doc->len;
		*n_spans = 1;
		*len = doc->len;
		return LP_OK;
	}
	set = lp_doc_working_set(doc, &n);
	if (!set)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the working set");
	for (size_t i = 0; i < n; i++)
		total += doc->chunks[set[i]].len;
	/* how many chunks of the mean length fit */
	want = total > cap ? (size_t)((double)n * (double)cap / (double)total) : n;
	if (!want)
		want = 1;
	if (!(*spans = lp_mem_alloc(LP_MEM_SCRATCH, want * sizeof(**spans), d)))
		return LP_E_NOMEM;
	for (size_t j = 0; j < want; j++) {
		const struct lp_chunk *c = &doc->chunks[set[(size_t)((double)j * (double)n / (double)want)]];
		if (*len + c->len > cap)
			continue; /* whole chunks only: never cut a character */
		(*spans)[m].off = c->off;
		(*spans)[m].len = c->len;
		*len += c->len;
		m++;
	}
	*n_spans = m;
	return LP_OK;
}

/* spans[0..*n) without the code blocks and table rows in them (doc/
 * model.h): topics name what the document says, and a
 * table's cells or a listing's tokens would crowd them out. */
static enum lp_status prose_spans(const struct lp_doc *doc, struct lp_span **spans, size_t *n,
				  struct lp_diag *d)
{
	const struct lp_doc_model *m = &doc->src.model;
	struct lp_span *v = *spans, *out;
	size_t cap = *n, k = 0;

	if (!m->n_kind[LP_BLOCK_CODE] && !m->n_kind[LP_BLOCK_TABLE_ROW])
		return LP_OK;
	for (size_t i = 0; i < *n; i++) {
		size_t first, nb = lp_doc_model_range(m, v[i].off, v[i].len, &first);

		for (size_t b = first; b < first + nb; b++)
			cap += lp_doc_block_is_data(&m->blocks[b]);
	}
	if (!(out = lp_mem_alloc(LP_MEM_SCRATCH, (cap ? cap : 1) * sizeof(*out), d)))
		return LP_E_NOMEM;
	for (size_t i = 0; i < *n; i++) {
		size_t first, nb = lp_doc_model_range(m, v[i].off, v[i].len, &first);
		size_t at = v[i].off, end = v[i].off + v[i].len;

		for (size_t b = first; b < first + nb; b++) {
			const struct lp_doc_block *blk = &m->blocks[b];
			size_t bs = blk->off > at ? blk->off : at, be = blk->off + blk->len;

			if (!lp_doc_block_is_data(blk) || be <= at)
				continue;
			if (bs > at)
				out[k++] = (struct lp_span){ at, bs - at };
			at = be < end ? be : end;
		}
		if (end > at)
			out[k++] = (struct lp_span){ at, end - at };
	}
	lp_mem_free(v);
	*spans = out;
	*n = k;
	return LP_OK;
}

size_t lp_topic_parts(size_t len)
{
	size_t p = len / TOPICS_PART_BYTES;

	return p < TOPICS_MAX_PARTS ? p : TOPICS_MAX_PARTS;
}

/* What the topics are drawn from: the whole text, or the chunks of the
 * working set (a hash of their numbers). */
static uint64_t source_key(struct lp_doc *doc)
{
	const size_t *set;
	uint64_t h = 1469598103934665603u;
	size_t n;

	if (doc->len <= TOPICS_MAX_SOURCE || !doc->n_chunks || !(set = lp_doc_working_set(doc, &n)))
		return 0;
	for (size_t i = 0; i < n; i++)
		h = (h ^ set[i]) * 1099511628211u;
	return h ^ n;
}

enum lp_status lp_doc_topics(struct lp_doc *doc, size_t n, const char ***out, size_t *n_out,
			     struct lp_diag *d)
{
	uint64_t key = source_key(doc);
	enum lp_status st;

	*out = NULL;
	*n_out = 0;
	if (doc->topics_asked >= n && doc->topics_key == key) { /* a longer list's first n */
		*out = doc->n_topics ? doc->topics : NULL;
		*n_out = doc->n_topics < n ? doc->n_topics : n;
		return LP_OK;
	}
	for (size_t cap = TOPICS_MAX_SOURCE;; cap /= 2) {
		struct lp_verify_source_pass sp = { doc, 0 };
		struct lp_span *spans = NULL;
		size_t len, n_spans;

		st = topic_source(doc, cap, &spans, &n_spans, &len, d);
		if (!st)
			st = prose_spans(doc, &spans, &n_spans, d);
		if (!st)
			st = lp_keyphrase_extract_spans(doc->text ? doc->text : "", spans, n_spans,
							lp_topic_parts(len), n, &doc->arena, out,
							n_out, lp_verify_source_done, &sp, d);
		lp_mem_free(spans);
		/* the chosen phrases were copied out of the text: release it */
		lp_document_done(&doc->src, 0, doc->len);
		/* on_oom shrink: draw from less text (the working set first) */
		if (st != LP_E_NOMEM || !lp_stage_shrink(doc) || cap < TOPICS_MIN_SOURCE)
			break;
		if (cap > len)
			cap = len;
		lp_doc_event(doc, "shrink: topics drawn from at most %zu bytes (budget)", cap / 2);
		lp_diag_init(d);
	}
	if (!st) {
		doc->topics = *out;
		doc->n_topics = *n_out;
		doc->topics_asked = n;
		doc->topics_key = key;
	}
	return st;
}
