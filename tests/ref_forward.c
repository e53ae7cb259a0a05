#include "ref_forward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p)
		abort();
	return p;
}

/* The whole tensor `name` as doubles (rows * cols), or NULL if absent. */
static double *load(const struct lp_gguf *g, const char *name)
{
	const struct lp_gguf_tensor *t = lp_gguf_find_tensor(g, name);
	size_t cols, rows, rb;
	float *row;
	double *out;

	if (!t)
		return NULL;
	cols = t->ne[0];
	rows = t->n_dims > 1 ? t->ne[1] : 1;
	rb = lp_qtype_row_bytes(t->type, cols);
	row = xmalloc(cols * sizeof(float));
	out = xmalloc(rows * cols * sizeof(double));
	for (size_t r = 0; r < rows; r++) {
		lp_dequantize_row(t->type, (const uint8_t *)t->data + r * rb, row, cols);
		for (size_t i = 0; i < cols; i++)
			out[r * cols + i] = row[i];
	}
	free(row);
	return out;
}

static double *load_blk(const struct lp_gguf *g, int layer, const char *what)
{
	char name[96];

	snprintf(name, sizeof(name), "blk.%d.%s", layer, what);
	return load(g, name);
}

/* y[r] = sum_c W[r][c] x[c] (+ b[r]) */
static void linear(double *y, const double *W, const double *b, const double *x,
		   size_t rows, size_t cols)
{
	for (size_t r = 0; r < rows; r++) {
		double s = b ? b[r] : 0;
		for (size_t c = 0; c < cols; c++)
			s += W[r * cols + c] * x[c];
		y[r] = s;
	}
}

static void rmsnorm(double *y, const double *x, const double *w, size_t n, double eps)
{
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		ss += x[i] * x[i];
	ss = 1.0 / sqrt(ss / n + eps);
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] * ss * w[i];
}

static void rotate(const struct lp_hparams *hp, double *head, size_t pos)
{
	size_t half = hp->n_rot / 2;

	for (size_t i = 0; i < half; i++) {
		double th = pos * pow(hp->rope_base, -2.0 * i / hp->n_rot);
		size_t a, b;
		if (hp->rope_mode == LP_ROPE_ADJACENT) {
			a = 2 * i;
			b = 2 * i + 1;
		} else {
			a = i;
			b = i + half;
		}
		double x0 = head[a], x1 = head[b];
		head[a] = x0 * cos(th) - x1 * sin(th);
		head[b] = x0 * sin(th) + x1 * cos(th);
	}
}

int ref_forward(const struct lp_gguf *g, const struct lp_hparams *hp,
		const int32_t *tokens, size_t n, double *logits)
{
	size_t E = hp->n_embd, hd = hp->head_dim, H = hp->n_head, HK = hp->n_head_kv;
	size_t Q = H * hd, KV = HK * hd, F = hp->n_ff, V = hp->n_vocab;
	double *emb = load(g, "token_embd.weight");
	double *x = xmalloc(n * E * sizeof(double)), *xb = xmalloc(E * sizeof(double));
	double *q = xmalloc(n * Q * sizeof(double)), *k = xmalloc(n * KV * sizeof(double));
	double *v = xmalloc(n * KV * sizeof(double)), *att = xmalloc(Q * sizeof(double));
	double *o = xmalloc(E * sizeof(double)), *h1 = xmalloc(F * sizeof(double));
	double *h3 = xmalloc(F * sizeof(double)), *sc = xmalloc(n * sizeof(double));
	double *onorm, *out;
	int rc = -1;

	if (!emb)
		goto done;
	for (size_t t = 0; t < n; t++)
		memcpy(x + t * E, emb + (size_t)tokens[t] * E, E * sizeof(double));

	for (uint32_t l = 0; l < hp->n_layer; l++) {
		double *an = load_blk(g, l, "attn_norm.weight"), *wq = load_blk(g, l, "attn_q.weight");
		double *wk = load_blk(g, l, "attn_k.weight"), *wv = load_blk(g, l, "attn_v.weight");
		double *wo = load_blk(g, l, "attn_output.weight");
		double *bq = load_blk(g, l, "attn_q.bias"), *bk = load_blk(g, l, "attn_k.bias");
		double *bv = load_blk(g, l, "attn_v.bias"), *fn = load_blk(g, l, "ffn_norm.weight");
		double *wg = load_blk(g, l, "ffn_gate.weight"), *wu = load_blk(g, l, "ffn_up.weight");
		double *wd = load_blk(g, l, "ffn_down.weight");

		/* Q, K, V of every position, rotated */
		for (size_t t = 0; t < n; t++) {
			rmsnorm(xb, x + t * E, an, E, hp->norm_eps);
			linear(q + t * Q, wq, bq, xb, Q, E);
			linear(k + t * KV, wk, bk, xb, KV, E);
			linear(v + t * KV, wv, bv, xb, KV, E);
			for (size_t h = 0; h < H; h++)
				rotate(hp, q + t * Q + h * hd, t);
			for (size_t h = 0; h < HK; h++)
				rotate(hp, k + t * KV + h * hd, t);
		}
		/* causal attention, then the rest of the block, per position */
		for (size_t t = 0; t < n; t++) {
			for (size_t h = 0; h < H; h++) {
				size_t kh = h / (H / HK);
				double mx = -INFINITY, sum = 0;
				for (size_t s = 0; s <= t; s++) {
					double d = 0;
					for (size_t i = 0; i < hd; i++)
						d += q[t * Q + h * hd + i] * k[s * KV + kh * hd + i];
					sc[s] = d / sqrt((double)hd);
					if (sc[s] > mx)
						mx = sc[s];
				}
				for (size_t s = 0; s <= t; s++) {
					sc[s] = exp(sc[s] - mx);
					sum += sc[s];
				}
				for (size_t i = 0; i < hd; i++) {
					double a = 0;
					for (size_t s = 0; s <= t; s++)
						a += sc[s] / sum * v[s * KV + kh * hd + i];
					att[h * hd + i] = a;
				}
			}
			linear(o, wo, NULL, att, E, Q);
			for (size_t i = 0; i < E; i++)
				x[t * E + i] += o[i];
			rmsnorm(xb, x + t * E, fn, E, hp->norm_eps);
			linear(h1, wg, NULL, xb, F, E);
			linear(h3, wu, NULL, xb, F, E);
			for (size_t i = 0; i < F; i++)
				h1[i] = h1[i] / (1.0 + exp(-h1[i])) * h3[i];
			linear(o, wd, NULL, h1, E, F);
			for (size_t i = 0; i < E; i++)
				x[t * E + i] += o[i];
		}
		free(an); free(wq); free(wk); free(wv); free(wo); free(bq); free(bk);
		free(bv); free(fn); free(wg); free(wu); free(wd);
	}
	onorm = load(g, "output_norm.weight");
	out = load(g, "output.weight");
	for (size_t t = 0; t < n; t++) {
		rmsnorm(xb, x + t * E, onorm, E, hp->norm_eps);
		linear(logits + t * V, out ? out : emb, NULL, xb, V, E);
	}
	free(onorm);
	free(out);
	rc = 0;
done:
	free(emb); free(x); free(xb); free(q); free(k); free(v); free(att);
	free(o); free(h1); free(h3); free(sc);
	return rc;
}
