#include "text/extractive.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/buf.h"
#include "core/mem.h"
#include "core/utf8.h"
#include "text/match.h"

/* Whether s (in model's text) starts in a code block or a table row. */
static int is_data_at(const struct lp_doc_model *m, const char *s)
{
	size_t b;

	if (!m->text || s < m->text || s >= m->text + m->len)
		return 0;
	b = lp_doc_model_find(m, (size_t)(s - m->text));
	return b != LP_DOC_NONE && lp_doc_block_is_data(&m->blocks[b]);
}

#define DAMPING 0.85
#define MAX_ITERS 100
#define EPSILON 1e-6
#define REDUNDANT 0.7 /* term-set cosine at which a sentence repeats another */

/* Sparse term vector entry: a term hash and its weight. */
struct term {
	uint64_t h;
	double w;
};

/* Terms of one ranking group; sentence i owns terms[first[i] .. first[i+1]). */
struct group_terms {
	struct term *terms;
	size_t n, cap;
	size_t *first; /* [n_sent + 1] */
};


static enum lp_status push_term(struct group_terms *g, uint64_t h, struct lp_diag *d)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 256;
		struct term *t = lp_mem_realloc(LP_MEM_SCRATCH, g->terms, cap * sizeof(*t), d);
		if (!t)
			return LP_E_NOMEM;
		g->terms = t;
		g->cap = cap;
	}
	g->terms[g->n].h = h;
	g->terms[g->n].w = 1.0;
	g->n++;
	return LP_OK;
}

/* Hash of a word's lower-case form, or 0 for a stop word or a lone letter,
 * which say nothing about the topic. */
static uint64_t word_hash(const char *w, size_t len)
{
	char low[128];
	size_t n = lp_match_lower(w, len, low, sizeof(low));

	if (n > sizeof(low))
		n = sizeof(low); /* very long words: their prefix is identity enough */
	if (n == 1 || lp_match_is_stopword(low, n))
		return 0;
	return lp_hash_fnv1a(LP_HASH_FNV_BASIS, low, n) | 1;
}

static enum lp_status sentence_terms(struct group_terms *g, const char *text,
				     struct lp_span s, struct lp_diag *d)
{
	const char *p = text + s.off;
	struct lp_token t, prev = {0};
	size_t pos = 0;
	int have_prev = 0;

	while (lp_match_token_next(p, s.len, &pos, &t)) {
		uint64_t h = 0;
		if (t.kind == LP_TOKEN_WORD) {
			h = word_hash(p + t.off, t.len);
		} else if (t.kind == LP_TOKEN_CJK && have_prev && prev.kind == LP_TOKEN_CJK) {
			h = lp_hash_fnv1a(LP_HASH_FNV_BASIS, p + prev.off, prev.len);
			h = lp_hash_fnv1a(h, p + t.off, t.len) | 1;
		}
		if (h && push_term(g, h, d))
			return LP_E_NOMEM;
		prev = t;
		have_prev = 1;
	}
	return LP_OK;
}

static int cmp_term(const void *a, const void *b)
{
	uint64_t x = ((const struct term *)a)->h, y = ((const struct term *)b)->h;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort each sentence's terms and merge duplicates into term frequencies
 * (kept in .w), compacting the array in place. */
static void compact_terms(struct group_terms *g, size_t n_sent)
{
	size_t out = 0;

	for (size_t i = 0; i < n_sent; i++) {
		size_t a = g->first[i], b = g->first[i + 1];
		g->first[i] = out;
		if (b > a)
			qsort(g->terms + a, b - a, sizeof(struct term), cmp_term);
		for (size_t k = a; k < b; k++) {
			if (out > g->first[i] && g->terms[out - 1].h == g->terms[k].h)
				g->terms[out - 1].w += 1.0;
			else
				g->terms[out++] = g->terms[k];
		}
	}
	g->first[n_sent] = out;
	g->n = out;
}

static size_t count_in_sorted(const uint64_t *v, size_t n, uint64_t h)
{
	size_t lo = 0, hi = n, start;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	start = lo;
	while (lo < n && v[lo] == h)
		lo++;
	return lo - start;
}

/* tf * idf weights and per-sentence norms. idf = log(1 + N / df) keeps a
 * term shared by every sentence slightly positive, so that a group of
 * near-identical sentences still forms a graph. */
static enum lp_status weigh_terms(struct group_terms *g, size_t n_sent, double *norm,
				  struct lp_diag *d)
{
	uint64_t *all = lp_mem_alloc(LP_MEM_SCRATCH, (g->n + 1) * sizeof(uint64_t), d);

	if (!all)
		return LP_E_NOMEM;
	for (size_t k = 0; k < g->n; k++)
		all[k] = g->terms[k].h;
	qsort(all, g->n, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < n_sent; i++) {
		double s = 0;
		for (size_t k = g->first[i]; k < g->first[i + 1]; k++) {
			size_t df = count_in_sorted(all, g->n, g->terms[k].h);
			g->terms[k].w *= log(1.0 + (double)n_sent / (double)df);
			s += g->terms[k].w * g->terms[k].w;
		}
		norm[i] = sqrt(s);
	}
	lp_mem_free(all);
	return LP_OK;
}

static double dot(const struct term *a, size_t na, const struct term *b, size_t nb)
{
	size_t i = 0, j = 0;
	double s = 0;

	while (i < na && j < nb) {
		if (a[i].h < b[j].h)
			i++;
		else if (a[i].h > b[j].h)
			j++;
		else
			s += a[i++].w * b[j++].w;
	}
	return s;
}

/* Fill sim[n*n] with cosine similarities (0 on the diagonal) and return
 * row sums in rowsum[n]. */
static void similarity(const struct group_terms *g, size_t n, const double *norm,
		       double *sim, double *rowsum)
{
	for (size_t i = 0; i < n; i++)
		rowsum[i] = 0;
	for (size_t i = 0; i < n; i++) {
		sim[i * n + i] = 0;
		for (size_t j = i + 1; j < n; j++) {
			double s = 0;
			if (norm[i] > 0 && norm[j] > 0)
				s = dot(g->terms + g->first[i], g->first[i + 1] - g->first[i],
					g->terms + g->first[j], g->first[j + 1] - g->first[j]) /
				    (norm[i] * norm[j]);
			sim[i * n + j] = sim[j * n + i] = s;
			rowsum[i] += s;
			rowsum[j] += s;
		}
	}
}

/* Power iteration of the damped walk; a sentence with no edges spreads its
 * mass evenly, so p stays a distribution. */
static void power_iterate(const double *sim, const double *rowsum, size_t n, double *p,
			  double *next, double *q)
{
	for (size_t i = 0; i < n; i++)
		p[i] = 1.0 / (double)n;
	for (int it = 0; it < MAX_ITERS; it++) {
		double dangling = 0, delta = 0;
		for (size_t i = 0; i < n; i++)
			if (rowsum[i] <= 0)
				dangling += p[i];
		for (size_t i = 0; i < n; i++)
			next[i] = rowsum[i] > 0 ? p[i] / rowsum[i] : 0;
		for (size_t j = 0; j < n; j++) {
			/* sim is symmetric: row j holds column j, read in order */
			const double *row = sim + j * n;
			double s = dangling / (double)n;
			for (size_t i = 0; i < n; i++)
				s += next[i] * row[i];
			q[j] = (1.0 - DAMPING) / (double)n + DAMPING * s;
		}
		for (size_t i = 0; i < n; i++) {
			delta += fabs(q[i] - p[i]);
			p[i] = q[i];
		}
		if (delta < EPSILON)
			break;
	}
}

/* Rank one group of n <= LP_EXTRACTIVE_GROUP sentences; scores sum to 1. */
static enum lp_status rank_group(const char *text, const struct lp_span *spans, size_t n,
				 double *scores, struct lp_diag *d)
{
	struct group_terms g = {0};
	double *sim = NULL, *work = NULL;
	enum lp_status st = LP_E_NOMEM;

	g.first = lp_mem_alloc(LP_MEM_SCRATCH, (n + 1) * sizeof(size_t), d);
	work = lp_mem_alloc(LP_MEM_SCRATCH, 4 * n * sizeof(double), d);
	sim = lp_mem_alloc(LP_MEM_SCRATCH, n * n * sizeof(double), d);
	if (!g.first || !work || !sim)
		goto out;
	for (size_t i = 0; i < n; i++) {
		g.first[i] = g.n;
		if (sentence_terms(&g, text, spans[i], d))
			goto out;
	}
	g.first[n] = g.n;
	compact_terms(&g, n);
	if (weigh_terms(&g, n, work, d))
		goto out;
	similarity(&g, n, work, sim, work + n);
	power_iterate(sim, work + n, n, scores, work + 2 * n, work + 3 * n);
	st = LP_OK;
out:
	lp_mem_free(g.first);
	lp_mem_free(g.terms);
	lp_mem_free(work);
	lp_mem_free(sim);
	return st;
}

enum lp_status lp_extractive_rank(const char *text, const struct lp_span *spans, size_t n,
				  double *scores, struct lp_diag *d)
{
	size_t n_groups, size;

	if (!n)
		return LP_OK;
	/* Equal groups, so that no tail group of a few sentences gets
	 * inflated scores. */
	n_groups = (n + LP_EXTRACTIVE_GROUP - 1) / LP_EXTRACTIVE_GROUP;
	size = (n + n_groups - 1) / n_groups;
	for (size_t a = 0; a < n; a += size) {
		size_t m = n - a < size ? n - a : size;
		if (rank_group(text, spans + a, m, scores + a, d))
			return LP_E_NOMEM;
		for (size_t i = 0; i < m; i++)
			scores[a + i] *= (double)m / (double)n;
	}
	return LP_OK;
}

/* Sentence spans of text, in tracked memory. */
static enum lp_status find_sentences(const char *text, size_t len, struct lp_span **out,
				     size_t *n_out, struct lp_diag *d)
{
	struct lp_span *v = NULL, s;
	size_t n = 0, cap = 0, pos = 0;

	while (lp_sentence_next(text, len, &pos, &s)) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct lp_span *nv = lp_mem_realloc(LP_MEM_SCRATCH, v, c * sizeof(*v), d);
			if (!nv) {
				lp_mem_free(v);
				return LP_E_NOMEM;
			}
			v = nv;
			cap = c;
		}
		v[n++] = s;
	}
	*out = v;
	*n_out = n;
	return LP_OK;
}

struct order_item {
	double score;
	size_t i;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order_item *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static uint32_t last_cp(const char *s, size_t len)
{
	size_t j = len - 1;
	uint32_t cp;

	while (j > 0 && len - j < 4 && ((unsigned char)s[j] & 0xC0) == 0x80)
		j--;
	if (lp_utf8_decode((const unsigned char *)s + j, len - j, &cp) <= 0)
		return 0xFFFD;
	return cp;
}

/* Append s[0..len) with white space collapsed, keeping at most max_words
 * words when max_words > 0 and adding at most max_bytes bytes when
 * max_bytes > 0 (whole tokens only). */
static enum lp_status add_sentence(struct lp_buf *b, const char *s, size_t len,
				   size_t max_words, size_t max_bytes)
{
	struct lp_token t;
	size_t pos = 0, words = 0, base = b->len;
	int have_prev = 0, prev_cjk = 0;

	while (lp_match_token_next(s, len, &pos, &t)) {
		uint32_t first;
		int cjk;
		if (t.kind != LP_TOKEN_PUNCT && max_words && words == max_words)
			break;
		if (max_bytes && b->len - base + t.len + 1 > max_bytes)
			break;
		words += t.kind != LP_TOKEN_PUNCT;
		lp_utf8_decode((const unsigned char *)s + t.off, t.len, &first);
		cjk = lp_utf8_is_cjk(first);
		if (have_prev && t.space_before && !(prev_cjk && cjk) && lp_buf_addc(b, ' '))
			return LP_E_NOMEM;
		if (lp_buf_add(b, s + t.off, t.len))
			return LP_E_NOMEM;
		have_prev = 1;
		prev_cjk = lp_utf8_is_cjk(last_cp(s + t.off, t.len));
	}
	return LP_OK;
}

/* Sort t[0..n) by hash and drop repeats; returns the new count. */
static size_t sort_unique(struct term *t, size_t n)
{
	size_t out = 0;

	if (n > 1)
		qsort(t, n, sizeof(*t), cmp_term);
	for (size_t k = 0; k < n; k++)
		if (!out || t[out - 1].h != t[k].h)
			t[out++] = t[k];
	return out;
}

/* Is the candidate (kept->terms[start..kept->n)) a near repeat of a kept
 * sentence: binary cosine of the term sets >= REDUNDANT? */
static int redundant(const struct group_terms *kept, size_t n_kept, size_t start)
{
	const struct term *c = kept->terms + start;
	size_t nc = kept->n - start;

	for (size_t j = 0; j < n_kept && nc; j++) {
		const struct term *k = kept->terms + kept->first[j];
		size_t nk = kept->first[j + 1] - kept->first[j], a = 0, b = 0, both = 0;
		while (a < nk && b < nc) {
			if (k[a].h < c[b].h)
				a++;
			else if (k[a].h > c[b].h)
				b++;
			else
				both++, a++, b++;
		}
		if (nk && (double)both >= REDUNDANT * sqrt((double)nk * (double)nc))
			return 1;
	}
	return 0;
}

/*
 * Mark in keep[] the sentences chosen within the limits, best first,
 * skipping near repeats of a sentence already kept (documents repeat
 * boilerplate, and upper tree levels see the same point from several
 * chunks). With no limit at all every sentence is kept as is. Sets *n_kept.
 */
/* A sentence without terms (punctuation, numbers of stop words) has no
 * term set to compare: it repeats a kept one when its bytes are the same
 * (overlapping chunks hand the same sentence to two summaries). */
static int same_text(const char *text, const struct lp_span *spans, const size_t *kept_ids,
		     size_t n_kept, size_t i)
{
	for (size_t j = 0; j < n_kept; j++) {
		const struct lp_span *a = &spans[kept_ids[j]], *b = &spans[i];
		if (a->len == b->len && !memcmp(text + a->off, text + b->off, a->len))
			return 1;
	}
	return 0;
}

static size_t byte_cap(const struct lp_extractive_opts *o)
{
	return o->max_words ? o->max_words * LP_EXTRACTIVE_BYTES_PER_WORD : 0;
}

static enum lp_status choose(const char *text, const struct lp_span *spans,
			     const struct order_item *order, const size_t *words, size_t n,
			     const struct lp_extractive_opts *o, unsigned char *keep,
			     size_t *n_kept, struct lp_diag *d)
{
	struct group_terms kept = {0};
	size_t used = 0, used_bytes = 0, nk = 0, max_bytes = byte_cap(o);
	size_t *kept_ids;
	int limited = o->max_words || o->max_sentences || max_bytes;
	enum lp_status st = LP_OK;

	kept.first = lp_mem_alloc(LP_MEM_SCRATCH, (n + 1) * sizeof(size_t), d);
	kept_ids = lp_mem_alloc(LP_MEM_SCRATCH, (n + 1) * sizeof(size_t), d);
	if (!kept.first || !kept_ids) {
		lp_mem_free(kept.first);
		lp_mem_free(kept_ids);
		return LP_E_NOMEM;
	}
	kept.first[0] = 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k].i, start = kept.n;
		if (o->max_sentences && nk == o->max_sentences)
			break;
		if (o->max_words && used + words[i] > o->max_words)
			continue;
		if (o->accept && !o->accept(text + spans[i].off, spans[i].len))
			continue;
		if (o->model && is_data_at(o->model, text + spans[i].off))
			continue;
		/* words alone do not bound text without words (punctuation) */
		if (max_bytes && used_bytes + spans[i].len > max_bytes)
			continue;
		if (limited) {
			if ((st = sentence_terms(&kept, text, spans[i], d)))
				break;
			kept.n = start + sort_unique(kept.terms + start, kept.n - start);
			if (redundant(&kept, nk, start) ||
			    (kept.n == start && same_text(text, spans, kept_ids, nk, i))) {
				kept.n = start;
				continue;
			}
		}
		kept.first[nk + 1] = kept.n;
		kept_ids[nk] = i;
		keep[i] = 1;
		used += words[i];
		used_bytes += spans[i].len;
		nk++;
		if (o->max_words && used == o->max_words)
			break;
	}
	lp_mem_free(kept.first);
	lp_mem_free(kept.terms);
	lp_mem_free(kept_ids);
	*n_kept = nk;
	return st;
}

static enum lp_status write_summary(const char *text, const struct lp_span *spans, size_t n,
				    const unsigned char *keep, struct lp_buf *b)
{
	int have_prev = 0, prev_cjk = 0;

	for (size_t i = 0; i < n; i++) {
		const char *s = text + spans[i].off;
		if (!keep[i] || !spans[i].len)
			continue;
		if (have_prev && !prev_cjk && lp_buf_addc(b, ' '))
			return LP_E_NOMEM;
		if (add_sentence(b, s, spans[i].len, 0, 0))
			return LP_E_NOMEM;
		have_prev = 1;
		prev_cjk = lp_utf8_is_cjk(last_cp(s, spans[i].len));
	}
	return LP_OK;
}

static enum lp_status select_and_write(const char *text, const struct lp_span *spans,
				       size_t n, const double *scores,
				       const struct lp_extractive_opts *o, struct lp_buf *b,
				       struct lp_diag *d)
{
	struct order_item *order = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*order), d);
	size_t *words = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(size_t), d);
	unsigned char *keep = lp_mem_calloc(LP_MEM_SCRATCH, n, 1, d);
	size_t n_kept = 0;
	enum lp_status st = LP_E_NOMEM;

	if (!order || !words || !keep)
		goto out;
	for (size_t i = 0; i < n; i++) {
		order[i].score = scores[i];
		order[i].i = i;
		words[i] = lp_match_count_words(text + spans[i].off, spans[i].len);
	}
	qsort(order, n, sizeof(*order), cmp_order);
	if ((st = choose(text, spans, order, words, n, o, keep, &n_kept, d)))
		goto out;
	if (n_kept)
		st = write_summary(text, spans, n, keep, b);
	else /* nothing fits: cut the best sentence */
		st = add_sentence(b, text + spans[order[0].i].off, spans[order[0].i].len,
				  o->max_words, byte_cap(o));
	if (st)
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory writing a summary");
out:
	lp_mem_free(order);
	lp_mem_free(words);
	lp_mem_free(keep);
	return st;
}

enum lp_status lp_extractive_summarize(const char *text, size_t len,
				       const struct lp_extractive_opts *o,
				       char **out, size_t *out_len, struct lp_diag *d)
{
	struct lp_span *spans = NULL;
	double *scores = NULL;
	size_t n = 0;
	struct lp_buf b;
	enum lp_status st;

	*out = NULL;
	lp_buf_init(&b);
	st = find_sentences(text, len, &spans, &n, d);
	if (st)
		return st;
	if (n) {
		st = LP_E_NOMEM;
		scores = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(double), d);
		if (scores && !(st = lp_extractive_rank(text, spans, n, scores, d)))
			st = select_and_write(text, spans, n, scores, o, &b, d);
	}
	lp_mem_free(scores);
	lp_mem_free(spans);
	if (!st) {
		*out = lp_buf_detach(&b, out_len);
		if (!*out)
			st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory writing a summary");
	}
	lp_buf_release(&b);
	return st;
}
