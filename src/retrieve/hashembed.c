#include "retrieve/hashembed.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/utf8.h"
#include "core/hash.h"
#include "text/terms.h"
#include "text/match.h"
#include "text/scan.h"

/* Seeds keep the kinds of features apart: the word "ab" and the CJK
 * bigram with the same bytes must not share a bucket by construction. */
#define SEED_WORD   0x5157a3e1c0ffee01ULL
#define SEED_BIGRAM 0x5157a3e1c0ffee02ULL
#define SEED_CHAR   0x5157a3e1c0ffee03ULL
#define SEED_CJK1   0x5157a3e1c0ffee04ULL
#define SEED_CJK2   0x5157a3e1c0ffee05ULL

/* Relative weights of the kinds. Character n-grams are many per word (a
 * 6-letter word gives 15), so each counts for less than a whole word. */
#define W_WORD   1.0f
#define W_BIGRAM 1.0f
#define W_CHAR   0.15f
#define W_CJK1   0.25f
#define W_CJK2   1.0f

#define WORD_MAX LP_TERMS_MAX_BYTES

struct feature {
	uint64_t h;
	float w;
};

struct lp_hashembed {
	size_t dim;
	struct feature *feat;  /* [cap] scratch, LP_MEM_SCRATCH */
	size_t n, cap;
	uint32_t *bucket;      /* [cap] the pairs of the last text (lp_hashembed_pairs) */
	float *val;            /* [cap] */
	size_t n_pairs, pair_cap;
	int oom;               /* a push failed: the embedding is abandoned */
	struct lp_diag *diag;
};

/* The word being read: "<" + bytes + ">" and where each character starts. */
struct word {
	unsigned char b[WORD_MAX + 2];
	size_t len;            /* bytes of the word, without the brackets */
	size_t off[WORD_MAX + 3]; /* off[i]: byte where character i of "<word>" starts */
	size_t nc;             /* characters of the word */
	uint64_t prev;         /* unigram hash of the previous kept word, 0: none */
};

struct lp_hashembed *lp_hashembed_new(size_t dim, struct lp_diag *d)
{
	struct lp_hashembed *h;

	if (dim < LP_HASHEMBED_MIN_DIM || dim > LP_HASHEMBED_MAX_DIM) {
		lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
			    "hash embedding dimension %zu is out of range %d..%d", dim,
			    LP_HASHEMBED_MIN_DIM, LP_HASHEMBED_MAX_DIM);
		return NULL;
	}
	h = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*h), d);
	if (h)
		h->dim = dim;
	return h;
}

void lp_hashembed_free(struct lp_hashembed *h)
{
	if (!h)
		return;
	lp_mem_free(h->feat);
	lp_mem_free(h->bucket);
	lp_mem_free(h->val);
	lp_mem_free(h);
}

size_t lp_hashembed_dim(const struct lp_hashembed *h)
{
	return h->dim;
}

static void push(struct lp_hashembed *e, uint64_t h, float w)
{
	if (e->oom)
		return;
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 1024;
		struct feature *f = lp_mem_realloc(LP_MEM_SCRATCH, e->feat,
						   cap * sizeof(*f), e->diag);
		if (!f) {
			e->oom = 1;
			return;
		}
		e->feat = f;
		e->cap = cap;
	}
	e->feat[e->n].h = h;
	e->feat[e->n].w = w;
	e->n++;
}

/* The word in `w` has ended: count its features and forget its bytes. */
static void end_word(struct lp_hashembed *e, struct word *w)
{
	uint64_t uni;

	if (w->nc == 0)
		return;
	if (lp_match_is_function_word((const char *)w->b + 1, w->len)) {
		w->len = w->nc = 0;
		return;
	}
	uni = lp_hash_bytes(w->b + 1, w->len, SEED_WORD);
	push(e, uni, W_WORD);
	if (w->prev)
		push(e, lp_hash_mix((w->prev << 1 | w->prev >> 63) ^ uni ^ SEED_BIGRAM), W_BIGRAM);
	w->prev = uni;
	/* Character n-grams of "<word>": characters 0 .. nc+1. */
	w->b[0] = '<';
	w->b[1 + w->len] = '>';
	w->off[0] = 0;
	w->off[w->nc + 1] = 1 + w->len;
	w->off[w->nc + 2] = 2 + w->len;
	for (size_t n = 3; n <= 5; n++)
		for (size_t i = 0; i + n <= w->nc + 2; i++)
			push(e, lp_hash_bytes(w->b + w->off[i], w->off[i + n] - w->off[i],
					      SEED_CHAR), W_CHAR);
	w->len = w->nc = 0;
}

/* Append character cp (already folded) to the word, if it still fits. */
static void add_char(struct word *w, uint32_t cp)
{
	unsigned char u[4];
	int n = lp_utf8_encode(cp, u);

	if (n == 0 || w->len + (size_t)n > WORD_MAX)
		return;
	w->off[w->nc + 1] = 1 + w->len;
	memcpy(w->b + 1 + w->len, u, (size_t)n);
	w->len += (size_t)n;
	w->nc++;
}

static void cjk_char(struct lp_hashembed *e, uint32_t cp, uint32_t prev)
{
	unsigned char u[8];
	int n = lp_utf8_encode(cp, u), m;

	push(e, lp_hash_bytes(u, (size_t)n, SEED_CJK1), W_CJK1);
	if (!prev)
		return;
	m = lp_utf8_encode(prev, u);
	lp_utf8_encode(cp, u + m);
	push(e, lp_hash_bytes(u, (size_t)(m + n), SEED_CJK2), W_CJK2);
}

/* Cut the text into features (e->feat[0..n)). */
static void collect(struct lp_hashembed *e, const unsigned char *s, size_t len)
{
	struct word w;
	uint32_t cp, cjk_prev = 0;
	size_t pos = 0;

	w.len = w.nc = 0;
	w.prev = 0;
	while (pos < len) {
		enum lp_scan_class cls;

		pos += lp_scan_char((const char *)s, len, pos, LP_SCAN_FOLD_WIDTH, &cp, &cls);
		if (cls == LP_SCAN_CJK) {
			end_word(e, &w);
			cjk_char(e, cp, cjk_prev);
			cjk_prev = cp;
		} else if (cls == LP_SCAN_WORD) {
			add_char(&w, cp >= 'A' && cp <= 'Z' ? cp + 'a' - 'A' : lp_utf8_tolower(cp));
			cjk_prev = 0;
		} else {
			end_word(e, &w);
			cjk_prev = 0;
		}
	}
	end_word(e, &w);
}

static int cmp_feature(const void *a, const void *b)
{
	uint64_t x = ((const struct feature *)a)->h, y = ((const struct feature *)b)->h;
	return (x > y) - (x < y);
}

/* Runs of equal hashes are one feature seen tf times: their (bucket,
 * signed weight) pairs, in hash order, into e->bucket and e->val. */
static int make_pairs(struct lp_hashembed *e)
{
	e->n_pairs = 0;
	if (e->n == 0)
		return 0; /* nothing counted: the zero vector (and no qsort(NULL)) */
	if (e->pair_cap < e->n) {
		uint32_t *b = lp_mem_realloc(LP_MEM_SCRATCH, e->bucket, e->n * sizeof(*b), e->diag);
		float *v = b ? lp_mem_realloc(LP_MEM_SCRATCH, e->val, e->n * sizeof(*v), e->diag)
			     : NULL;
		if (b)
			e->bucket = b;
		if (!v)
			return -1;
		e->val = v;
		e->pair_cap = e->n;
	}
	qsort(e->feat, e->n, sizeof(*e->feat), cmp_feature);
	for (size_t i = 0, j; i < e->n; i = j) {
		uint64_t h = e->feat[i].h;
		float v;
		for (j = i + 1; j < e->n && e->feat[j].h == h; j++)
			;
		v = e->feat[i].w * (1.0f + logf((float)(j - i)));
		e->bucket[e->n_pairs] = (uint32_t)(((h & 0xffffffffULL) * e->dim) >> 32);
		e->val[e->n_pairs++] = (h >> 63) ? -v : v;
	}
	return 0;
}

/* The projection: the pairs added into their buckets, then L2-normalised
 * (what the backends' scatter_l2 op does, on the same pairs). */
static void project(const struct lp_hashembed *e, float *out)
{
	double norm = 0;

	memset(out, 0, e->dim * sizeof(*out));
	for (size_t i = 0; i < e->n_pairs; i++)
		out[e->bucket[i]] += e->val[i];
	for (size_t i = 0; i < e->dim; i++)
		norm += (double)out[i] * out[i];
	if (norm > 0) {
		float inv = (float)(1.0 / sqrt(norm));
		for (size_t i = 0; i < e->dim; i++)
			out[i] *= inv;
	}
}

/* Collect the text's features and make its pairs. */
static enum lp_status features(struct lp_hashembed *h, const char *text, size_t len,
			       struct lp_diag *d)
{
	h->n = 0;
	h->oom = 0;
	h->diag = d;
	collect(h, (const unsigned char *)text, len);
	if (!h->oom && make_pairs(h))
		h->oom = 1;
	h->diag = NULL;
	return h->oom ? LP_E_NOMEM : LP_OK;
}

enum lp_status lp_hashembed_pairs(struct lp_hashembed *h, const char *text, size_t len,
				  const uint32_t **bucket, const float **val, size_t *n,
				  struct lp_diag *d)
{
	enum lp_status st = features(h, text, len, d);

	*bucket = h->bucket;
	*val = h->val;
	*n = st == LP_OK ? h->n_pairs : 0;
	return st;
}

enum lp_status lp_hashembed_embed(struct lp_hashembed *h, const char *text, size_t len,
				  float *out, size_t *n_features, struct lp_diag *d)
{
	enum lp_status st = features(h, text, len, d);

	if (st != LP_OK)
		return st;
	project(h, out);
	if (n_features)
		*n_features = h->n;
	return LP_OK;
}
