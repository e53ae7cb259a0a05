/*
 * attn.c - the CPU backend's KV cache rows and causal grouped-query
 * attention.
 *
 * Attention of a step reads a layer's rows back as floats once
 * (lp_backend_cpu_kv_to_f32, split over the pool), not once per query
 * head; a step of fewer than four tokens over an F16 cache instead reads
 * the rows in place, since it reads each row about once per head anyway:
 * on the AVX-512 set, once per group of heads that share a KV head
 * (attn_avx512.c).
 */
#include "backend/cpu/cpu.h"

#include <math.h>
#include <string.h>

#include "backend/cpu/gemm.h"
#include "backend/cpu/kernels.h"
#include "core/threadpool.h"

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("f16c,avx"))) static void f16_row_f16c(const uint16_t *h, float *out,
							     uint32_t n)
{
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
	for (; i < n; i++)
		out[i] = lp_fp16_to_fp32(h[i]);
}

static int have_f16c(void)
{
	static int cached = -1; /* documents on several threads ask at once */
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (v < 0) {
		v = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* fp16 of every float (round to nearest even, as lp_fp32_to_fp16), 8 at
 * a time: a step's cache store was 2% of a SmolLM2 decode step one half
 * at a time. */
__attribute__((target("f16c,avx"))) static void f16_of_row_f16c(const float *x, uint16_t *h,
								 uint32_t n)
{
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(h + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
	for (; i < n; i++)
		h[i] = lp_fp32_to_fp16(x[i]);
}
#endif

static void put_row(enum lp_qtype t, const float *src, void *dst, uint32_t n)
{
	if (t == LP_Q_F32) {
		memcpy(dst, src, n * sizeof(float));
	} else if (t == LP_Q_F16) {
#if defined(__x86_64__)
		if (have_f16c()) {
			f16_of_row_f16c(src, dst, n);
			return;
		}
#endif
		for (uint32_t i = 0; i < n; i++)
			((uint16_t *)dst)[i] = lp_fp32_to_fp16(src[i]);
	} else {
		lp_quantize_row(t, src, dst, n);
	}
}

void lp_backend_cpu_kv_store(const struct lp_backend_kv *kv, uint32_t pos0, size_t n,
			     const float *k, const float *v)
{
	for (size_t t = 0; t < n; t++) {
		size_t at = (pos0 + t) * kv->row_bytes;
		put_row(kv->type, k + t * kv->kv_dim, (uint8_t *)kv->k + at, kv->kv_dim);
		put_row(kv->type, v + t * kv->kv_dim, (uint8_t *)kv->v + at, kv->kv_dim);
	}
}

static void get_row(enum lp_qtype t, const void *src, float *dst, uint32_t n)
{
	if (t == LP_Q_F32) {
		memcpy(dst, src, n * sizeof(float));
	} else if (t == LP_Q_F16) {
#if defined(__x86_64__)
		if (have_f16c()) {
			f16_row_f16c(src, dst, n);
			return;
		}
#endif
		for (uint32_t i = 0; i < n; i++)
			dst[i] = lp_fp16_to_fp32(((const uint16_t *)src)[i]);
	} else {
		lp_dequantize_row(t, src, dst, n);
	}
}

void lp_backend_cpu_kv_to_f32(const struct lp_backend_kv *kv, uint32_t p0, uint32_t p1,
			      float *k_out, float *v_out)
{
	for (uint32_t p = p0; p < p1; p++) {
		size_t at = (size_t)p * kv->row_bytes, o = (size_t)(p - p0) * kv->kv_dim;
		get_row(kv->type, (const uint8_t *)kv->k + at, k_out + o, kv->kv_dim);
		get_row(kv->type, (const uint8_t *)kv->v + at, v_out + o, kv->kv_dim);
	}
}

struct attn_job {
	const struct lp_backend_attn *a;
	const struct lp_cpu_scratch *s;
	const float *K, *V;          /* (positions, kv_dim) floats of the layer */
	const uint16_t *K16, *V16;   /* or the F16 cache rows read in place */
};

/* One (token, head) pair: causal softmax attention over the cache. */
static void attn_one(const struct attn_job *j, size_t t, size_t h, int tid)
{
	const struct lp_backend_attn *a = j->a;
	size_t hd = a->head_dim, Q = (size_t)a->n_head * hd, KV = a->kv->kv_dim;
	size_t kvo = h / (a->n_head / a->n_head_kv) * hd;
	uint32_t n_pos = a->pos0 + (uint32_t)t + 1;
	float *score = j->s->att_tmp + (size_t)tid * j->s->n_ctx;
	const float *q = a->q + t * Q + h * hd;
	float *out = a->out + t * Q + h * hd;
	float max = -INFINITY, sum = 0;

	if (j->K16)
		lp_attn_scores_f16(q, j->K16 + kvo, KV, hd, n_pos, a->scale, score);
	else
		lp_attn_scores_f32(q, j->K + kvo, KV, hd, n_pos, a->scale, score);
	for (uint32_t s = 0; s < n_pos; s++)
		max = score[s] > max ? score[s] : max;
	sum = lp_exp_sum_f32(score, n_pos, max);
	for (uint32_t s = 0; s < n_pos; s++)
		score[s] /= sum;
	if (j->V16)
		lp_attn_mix_f16(score, j->V16 + kvo, KV, hd, n_pos, out);
	else
		lp_attn_mix_f32(score, j->V + kvo, KV, hd, n_pos, out);
}

static void attn_task(void *arg, size_t b, size_t e, int tid)
{
	const struct attn_job *j = arg;
	size_t n_head = j->a->n_head;

	for (size_t i = b; i < e; i++)
		attn_one(j, i / n_head, i % n_head, tid);
}

struct conv_job {
	const struct lp_backend_kv *kv;
	float *kf, *vf;
};

static void conv_task(void *arg, size_t b, size_t e, int tid)
{
	const struct conv_job *j = arg;
	size_t KV = j->kv->kv_dim;

	lp_backend_cpu_kv_to_f32(j->kv, (uint32_t)b, (uint32_t)e, j->kf + b * KV, j->vf + b * KV);
}

/*
 * Steps by groups of heads (the AVX-512 set's attn_f16): a token's
 * positions are split into parts of PART_LEN (more when that would make
 * more than LP_CPU_ATTN_MAX_PARTS), so that the pool has (token, part, KV
 * head) triples enough to share out (SmolLM2 has 3 KV heads, Qwen2.5-0.5B
 * 2); each part leaves its outputs unnormalized, with its maxima and sums,
 * and merge() weighs them together. The parts depend on the position
 * count only, so a token's result does not depend on the threads.
 */
#define PART_LEN 128

struct group_job {
	const struct lp_backend_attn *a;
	float *part;        /* lp_cpu_scratch.att_part, or NULL: one part */
	size_t max_parts;   /* parts of the step's last token */
};

static size_t part_len(uint32_t n_pos, const float *part)
{
	size_t len = PART_LEN;

	if (!part)
		return n_pos;
	if ((n_pos + len - 1) / len > LP_CPU_ATTN_MAX_PARTS)
		len = ((n_pos + LP_CPU_ATTN_MAX_PARTS - 1) / LP_CPU_ATTN_MAX_PARTS + 63) / 64 * 64;
	return len;
}

static size_t n_parts(uint32_t n_pos, const float *part)
{
	size_t len = part_len(n_pos, part);

	return (n_pos + len - 1) / len;
}

/* Token t's part p: n_head * head_dim outputs, then n_head maxima and sums. */
static float *part_at(const struct group_job *j, size_t t, size_t p)
{
	const struct lp_backend_attn *a = j->a;

	return j->part + (t * LP_CPU_ATTN_MAX_PARTS + p) * a->n_head * (a->head_dim + 2);
}

static void group_task(void *arg, size_t b, size_t e, int tid)
{
	const struct group_job *j = arg;
	const struct lp_backend_attn *a = j->a;
	size_t hd = a->head_dim, g = a->n_head / a->n_head_kv, Q = (size_t)a->n_head * hd;
	size_t ld = a->kv->kv_dim;
	void (*attn)(const struct lp_cpu_attn_f16 *) = lp_cpu_kernels()->attn_f16;

	(void)tid;
	for (size_t i = b; i < e; i++) {
		size_t t = i / (j->max_parts * a->n_head_kv), p = i / a->n_head_kv % j->max_parts;
		size_t kvh = i % a->n_head_kv, h0 = kvh * g;
		uint32_t n_pos = a->pos0 + (uint32_t)t + 1;
		size_t len = part_len(n_pos, j->part), p0 = p * len, np = n_parts(n_pos, j->part);
		struct lp_cpu_attn_f16 x = {
			a->q + t * Q + h0 * hd, (const uint16_t *)a->kv->k + p0 * ld + kvh * hd,
			(const uint16_t *)a->kv->v + p0 * ld + kvh * hd, ld, hd,
			p0 + len < n_pos ? len : n_pos - p0, g, a->scale, a->out + t * Q + h0 * hd,
			NULL, NULL,
		};
		if (p >= np)
			continue;
		if (np > 1) {
			float *o = part_at(j, t, p);
			x.out = o + h0 * hd;
			x.m = o + Q + h0;
			x.l = o + Q + a->n_head + h0;
		}
		attn(&x);
	}
}

/* out of the tokens split into parts: sum_p exp(m_p - M) o_p over
 * sum_p exp(m_p - M) l_p, M the largest m_p, for each head. */
static void merge(const struct group_job *j)
{
	const struct lp_backend_attn *a = j->a;
	size_t hd = a->head_dim, Q = (size_t)a->n_head * hd;

	for (size_t t = 0; t < a->n; t++) {
		size_t np = n_parts(a->pos0 + (uint32_t)t + 1, j->part);
		if (np < 2)
			continue;
		for (size_t h = 0; h < a->n_head; h++) {
			float M = -INFINITY, L = 0, w[LP_CPU_ATTN_MAX_PARTS];
			float *out = a->out + t * Q + h * hd;
			for (size_t p = 0; p < np; p++) {
				float m = part_at(j, t, p)[Q + h];
				M = m > M ? m : M;
			}
			for (size_t p = 0; p < np; p++) {
				const float *o = part_at(j, t, p);
				w[p] = expf(o[Q + h] - M);
				L += w[p] * o[Q + a->n_head + h];
			}
			for (size_t i = 0; i < hd; i++) {
				float s = 0;
				for (size_t p = 0; p < np; p++)
					s += w[p] * part_at(j, t, p)[h * hd + i];
				out[i] = s / L;
			}
		}
	}
}

/* Whether the kernel set's attn_f16 takes this step (kernels.h). */
static int by_groups(const struct lp_backend_attn *a)
{
	size_t g = a->n_head / a->n_head_kv;

	return lp_cpu_kernels()->attn_f16 && a->head_dim % 32 == 0 &&
	       a->head_dim <= LP_CPU_ATTN_MAX_HD && g <= LP_CPU_ATTN_MAX_HEADS &&
	       (size_t)a->kv->row_bytes == (size_t)a->kv->kv_dim * 2;
}

static void attend_by_groups(struct lp_pool *pool, const struct lp_cpu_scratch *s,
			     const struct lp_backend_attn *a)
{
	struct group_job j = { a, s->att_part, 1 };

	j.max_parts = n_parts(a->pos0 + a->n, j.part);
	lp_pool_for(pool, (size_t)a->n * j.max_parts * a->n_head_kv, 1, group_task, &j);
	merge(&j);
}

void lp_backend_cpu_attention(struct lp_pool *pool, const struct lp_cpu_scratch *s,
			      const struct lp_backend_attn *a)
{
	struct attn_job j = { a, s, NULL, NULL, NULL, NULL };

	if (a->kv->type == LP_Q_F16 && a->n < LP_CPU_ATTN_ROWS && by_groups(a)) {
		attend_by_groups(pool, s, a);
		return;
	}
	if (a->kv->type == LP_Q_F16 && a->n < LP_CPU_ATTN_ROWS) {
		j.K16 = a->kv->k;
		j.V16 = a->kv->v;
	} else if (a->kv->type != LP_Q_F32) {
		struct conv_job cj = { a->kv, s->kf, s->vf };
		lp_pool_for(pool, a->pos0 + a->n, 16, conv_task, &cj);
		j.K = s->kf;
		j.V = s->vf;
	} else {
		j.K = a->kv->k;
		j.V = a->kv->v;
	}
	lp_pool_for(pool, (size_t)a->n * a->n_head, 1, attn_task, &j);
}
