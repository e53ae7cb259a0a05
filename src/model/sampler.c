#include "model/sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "model/vocab.h"

struct lp_sampler {
	struct lp_sampler_params p;
	int32_t n_vocab;
	float *work;      /* [n_vocab] penalised logits (LP_MEM_LOGITS) */
	int32_t *cand;    /* [n_vocab] candidate ids (LP_MEM_SCRATCH) */
	float *prob;      /* [n_vocab] candidate weights (LP_MEM_SCRATCH) */
	int32_t *hist;    /* [repeat_last_n] ring of accepted ids */
	size_t n_hist, hist_pos;
	uint64_t rng;
};

struct lp_sampler_params lp_sampler_default_params(void)
{
	struct lp_sampler_params p = {
		.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f,
		.repeat_penalty = 1.1f, .repeat_last_n = 64, .seed = 42,
	};
	return p;
}

/* ---- random numbers ----------------------------------------------------------- */

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static uint64_t rng_next(struct lp_sampler *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1) with 24 bits. */
static float rng_uniform(struct lp_sampler *s)
{
	return (float)(rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

/* ---- lifecycle ---------------------------------------------------------------- */

void lp_sampler_reset(struct lp_sampler *s)
{
	s->n_hist = s->hist_pos = 0;
	s->rng = splitmix64(s->p.seed);
	if (!s->rng)
		s->rng = 1; /* xorshift never leaves zero */
}

enum lp_status lp_sampler_new(const struct lp_sampler_params *p, int32_t n_vocab,
			      struct lp_sampler **out, struct lp_diag *d)
{
	struct lp_sampler *s;
	size_t n = (size_t)n_vocab;

	*out = NULL;
	if (n_vocab < 1 || p->repeat_last_n < 0)
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
				   "sampler needs a vocabulary and a history length >= 0");
	s = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*s), d);
	if (!s)
		return LP_E_NOMEM;
	s->p = *p;
	s->n_vocab = n_vocab;
	s->work = lp_mem_alloc(LP_MEM_LOGITS, n * sizeof(float), d);
	s->cand = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(int32_t), d);
	s->prob = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(float), d);
	s->hist = lp_mem_alloc(LP_MEM_SCRATCH, ((size_t)p->repeat_last_n + 1) * sizeof(int32_t), d);
	if (!s->work || !s->cand || !s->prob || !s->hist) {
		lp_sampler_free(s);
		return LP_E_NOMEM;
	}
	lp_sampler_reset(s);
	*out = s;
	return LP_OK;
}

void lp_sampler_free(struct lp_sampler *s)
{
	if (!s)
		return;
	lp_mem_free(s->work);
	lp_mem_free(s->cand);
	lp_mem_free(s->prob);
	lp_mem_free(s->hist);
	lp_mem_free(s);
}

void lp_sampler_accept(struct lp_sampler *s, int32_t id)
{
	size_t cap = (size_t)s->p.repeat_last_n;

	if (!cap)
		return;
	s->hist[s->hist_pos] = id;
	s->hist_pos = (s->hist_pos + 1) % cap;
	if (s->n_hist < cap)
		s->n_hist++;
}

/* ---- steps ---------------------------------------------------------------------- */

static void apply_penalty(struct lp_sampler *s)
{
	float pen = s->p.repeat_penalty;

	if (pen == 1.0f || pen <= 0.0f)
		return;
	for (size_t i = 0; i < s->n_hist; i++) {
		int32_t id = s->hist[i];
		int seen = 0;

		if (id < 0 || id >= s->n_vocab)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = s->hist[j] == id;
		if (seen)
			continue;
		s->work[id] = s->work[id] > 0 ? s->work[id] / pen : s->work[id] * pen;
	}
}

/* Candidate a ranks before b: higher logit, then lower id (total order). */
static int before(const float *w, int32_t a, int32_t b)
{
	return w[a] > w[b] || (w[a] == w[b] && a < b);
}

static int cmp_cand(const void *x, const void *y, void *w)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;

	return before(w, a, b) ? -1 : before(w, b, a) ? 1 : 0;
}

/* Restore the heap below i: the root is the worst kept candidate. */
static void sift_down(const float *w, int32_t *c, size_t k, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, worst = i;
		int32_t t;

		if (l < k && before(w, c[worst], c[l]))
			worst = l;
		if (l + 1 < k && before(w, c[worst], c[l + 1]))
			worst = l + 1;
		if (worst == i)
			return;
		t = c[i];
		c[i] = c[worst];
		c[worst] = t;
		i = worst;
	}
}

/* Leave the k best of c[0..n) (c[i] == i on entry) in c[0..k), unordered:
 * a heap of the best so far, O(n log k). */
static void select_top(const float *w, int32_t *c, size_t n, size_t k)
{
	for (size_t i = k / 2; i-- > 0;)
		sift_down(w, c, k, i);
	for (size_t i = k; i < n; i++)
		if (before(w, c[i], c[0])) {
			c[0] = c[i];
			sift_down(w, c, k, 0);
		}
}

static int32_t argmax(const float *w, int32_t n)
{
	int32_t best = 0;

	for (int32_t i = 1; i < n; i++)
		if (w[i] > w[best])
			best = i;
	return best;
}

/* Softmax weights of the candidates at the temperature; returns their sum. */
static double weigh(struct lp_sampler *s, size_t n, float max)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		s->prob[i] = expf((s->work[s->cand[i]] - max) / s->p.temperature);
		sum += s->prob[i];
	}
	return sum;
}

int32_t lp_sampler_sample(struct lp_sampler *s, const float *logits)
{
	size_t n = (size_t)s->n_vocab, k;
	int sorted = 0;
	float max;
	double sum, r, acc;

	memcpy(s->work, logits, n * sizeof(float));
	apply_penalty(s);
	if (s->p.temperature <= 0.0f)
		return argmax(s->work, s->n_vocab);
	for (size_t i = 0; i < n; i++)
		s->cand[i] = (int32_t)i;
	if (s->p.top_k > 0 && (size_t)s->p.top_k < n) {
		select_top(s->work, s->cand, n, (size_t)s->p.top_k);
		n = (size_t)s->p.top_k;
	}
	if (s->p.top_p < 1.0f) {
		qsort_r(s->cand, n, sizeof(int32_t), cmp_cand, s->work);
		sorted = 1;
	}
	max = s->work[s->cand[0]];
	for (size_t i = 1; !sorted && i < n; i++)
		if (s->work[s->cand[i]] > max)
			max = s->work[s->cand[i]];
	sum = weigh(s, n, max);
	if (sorted) {
		/* Smallest prefix whose mass reaches top_p (at least one). */
		acc = 0;
		for (k = 0; k < n; k++) {
			acc += s->prob[k];
			if (acc >= s->p.top_p * sum) {
				k++;
				break;
			}
		}
		n = k ? k : 1;
	}
	if (s->p.min_p > 0.0f) {
		/* The best candidate has weight exp(0) = 1. */
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (s->prob[i] >= s->p.min_p) {
				s->cand[m] = s->cand[i];
				s->prob[m++] = s->prob[i];
			}
		n = m ? m : 1;
	}
	sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += s->prob[i];
	r = rng_uniform(s) * sum;
	acc = 0;
	for (size_t i = 0; i < n; i++) {
		acc += s->prob[i];
		if (r < acc)
			return s->cand[i];
	}
	return s->cand[n - 1];
}

/* ---- stopping -------------------------------------------------------------------- */

void lp_stop_init(struct lp_stop *s)
{
	memset(s, 0, sizeof(*s));
	lp_buf_init(&s->held);
}

void lp_stop_release(struct lp_stop *s)
{
	for (size_t i = 0; i < s->n_strs; i++)
		lp_mem_free(s->strs[i]);
	lp_buf_release(&s->held);
	lp_stop_init(s);
}

enum lp_status lp_stop_add_id(struct lp_stop *s, int32_t id, struct lp_diag *d)
{
	if (id < 0 || lp_stop_is_eog(s, id))
		return LP_OK;
	if (s->n_ids == sizeof(s->ids) / sizeof(s->ids[0]))
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0, "too many end-of-generation ids");
	s->ids[s->n_ids++] = id;
	return LP_OK;
}

void lp_stop_add_vocab(struct lp_stop *s, const struct lp_vocab *v)
{
	static const char *const names[] = {
		"<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
	};

	lp_stop_add_id(s, lp_vocab_eos(v), NULL);
	lp_stop_add_id(s, lp_vocab_eot(v), NULL);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int32_t id = lp_vocab_find(v, names[i], strlen(names[i]));

		if (id >= 0 && lp_vocab_type(v, id) == LP_TOKEN_CONTROL)
			lp_stop_add_id(s, id, NULL);
	}
}

enum lp_status lp_stop_add_string(struct lp_stop *s, const char *str, struct lp_diag *d)
{
	size_t len = str ? strlen(str) : 0;

	if (!len)
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0, "empty stop string");
	if (s->n_strs == sizeof(s->strs) / sizeof(s->strs[0]))
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0, "too many stop strings");
	if (!(s->strs[s->n_strs] = lp_mem_strdup(str)) || lp_buf_grow(&s->held, 2 * len + 256))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a stop string");
	s->n_strs++;
	if (len > s->max_len)
		s->max_len = len;
	return LP_OK;
}

int lp_stop_is_eog(const struct lp_stop *s, int32_t id)
{
	for (size_t i = 0; i < s->n_ids; i++)
		if (s->ids[i] == id)
			return 1;
	return 0;
}

/* Longest suffix of h[0..n) that is a proper prefix of a stop string. */
static size_t partial_suffix(const struct lp_stop *s, const char *h, size_t n)
{
	size_t best = 0;

	for (size_t i = 0; i < s->n_strs; i++) {
		size_t sl = strlen(s->strs[i]);

		for (size_t k = sl - 1 < n ? sl - 1 : n; k > best; k--)
			if (!memcmp(h + n - k, s->strs[i], k)) {
				best = k;
				break;
			}
	}
	return best;
}

enum lp_status lp_stop_feed(struct lp_stop *s, const char *text, size_t len,
			    struct lp_buf *out, int *stopped)
{
	struct lp_buf *h = &s->held;
	size_t hit = (size_t)-1, keep;

	*stopped = 0;
	if (lp_buf_add(h, text, len))
		return LP_E_NOMEM;
	for (size_t i = 0; i < s->n_strs; i++) {
		const char *p = memmem(h->data, h->len, s->strs[i], strlen(s->strs[i]));

		if (p && (size_t)(p - h->data) < hit)
			hit = (size_t)(p - h->data);
	}
	if (hit != (size_t)-1) {
		*stopped = 1;
		if (lp_buf_add(out, h->data, hit))
			return LP_E_NOMEM;
		lp_buf_reset(h);
		return LP_OK;
	}
	keep = partial_suffix(s, h->data, h->len);
	if (lp_buf_add(out, h->data, h->len - keep))
		return LP_E_NOMEM;
	memmove(h->data, h->data + h->len - keep, keep);
	h->len = keep;
	h->data[keep] = '\0';
	return LP_OK;
}

enum lp_status lp_stop_finish(struct lp_stop *s, struct lp_buf *out)
{
	enum lp_status st = lp_buf_add(out, s->held.data, s->held.len);

	lp_buf_reset(&s->held);
	return st;
}
