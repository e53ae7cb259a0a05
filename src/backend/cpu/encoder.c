/*
 * encoder.c - the CPU backend's encoder and retrieval ops: LayerNorm and
 * GELU (AVX2 and FMA when the CPU has them and LPIPE_CPU, or
 * LPIPE_CPU_KERNELS, is not "scalar"; GELU and the softmax's
 * exponentials on 16 lanes where the kernel set has them, enc_avx512.c),
 * the masked attention of a padded encoder batch, mean pooling, top-k and
 * the hashed projection. Element-wise work is split by rows between the
 * pool's threads; attention by (sequence, head).
 */
#include "backend/cpu/cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

#include "backend/cpu/approx.h"
#include "backend/cpu/blas.h"
#include "backend/cpu/kernels.h"
#include "core/threadpool.h"

int lp_backend_cpu_enc_avx2(void)
{
#ifdef HAVE_X86
	static int cached = -1; /* asked from several threads at once */
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	const char *force;

	if (v >= 0)
		return v;
	/* LPIPE_CPU=scalar (or LPIPE_CPU_KERNELS=scalar) forces C here too */
	force = getenv("LPIPE_CPU");
	if (!force)
		force = getenv("LPIPE_CPU_KERNELS");
	__builtin_cpu_init();
	v = !(force && !strcmp(force, "scalar")) && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("fma");
	__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	return v;
#else
	return 0;
#endif
}

#ifdef HAVE_X86
/*
 * exp for the softmax and GELU in AVX2, when the CPU has it: libm's expf,
 * one element at a time, took a tenth of the encoder once the products
 * were fast. e^x = 2^n e^r with n = round(x / ln 2), |r| <= ln2/2,
 * and e^r from its Taylor series to degree 6 (relative error about 1e-7).
 * Only x <= 0 is asked for; below -87 the result is clamped near 2^-126.
 */
#define TGT __attribute__((target("avx2,fma")))

TGT static __m256 exp_nonpos(__m256 x)
{
	__m256 n, r, p;
	__m256i e;

	x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
	n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(LP_APPROX_LOG2E)),
			    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	/* ln 2 in two parts so that r keeps its low bits */
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LP_APPROX_LN2_HI), x);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LP_APPROX_LN2_LO), r);
	p = _mm256_set1_ps(1.0f / 720);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
	return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* r[j] = exp((r[j] - mx) * scale) for j < n8 (a multiple of 8); returns
 * their sum. */
TGT static float exp_shift_avx2(float *r, size_t n8, float mx, float scale)
{
	__m256 vm = _mm256_set1_ps(mx), vs = _mm256_set1_ps(scale), acc = _mm256_setzero_ps();
	float lanes[8], sum = 0;

	for (size_t j = 0; j < n8; j += 8) {
		__m256 v = exp_nonpos(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(r + j), vm), vs));
		_mm256_storeu_ps(r + j, v);
		acc = _mm256_add_ps(acc, v);
	}
	_mm256_storeu_ps(lanes, acc);
	for (int i = 0; i < 8; i++)
		sum += lanes[i];
	return sum;
}

/* The GELU below, 8 elements at a time, for i < n8 (a multiple of 8). */
TGT static void gelu_avx2(float *x, size_t n8)
{
	const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);

	for (size_t i = 0; i < n8; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);
		__m256 z = _mm256_mul_ps(v, _mm256_set1_ps((float)M_SQRT1_2));
		__m256 a = _mm256_andnot_ps(sign, z);
		__m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(a, _mm256_set1_ps(LP_APPROX_ERF_P), one));
		__m256 p = _mm256_set1_ps(LP_APPROX_ERF_A5), r;
		p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(LP_APPROX_ERF_A4));
		p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(LP_APPROX_ERF_A3));
		p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(LP_APPROX_ERF_A2));
		p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(LP_APPROX_ERF_A1));
		p = _mm256_mul_ps(p, t);
		r = _mm256_fnmadd_ps(p, exp_nonpos(_mm256_mul_ps(_mm256_xor_ps(a, sign), a)), one);
		r = _mm256_or_ps(r, _mm256_and_ps(sign, z));   /* erf is odd */
		_mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
						      _mm256_add_ps(one, r)));
	}
}

TGT static float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* The largest of r[0..n8) (n8 a positive multiple of 8). */
TGT static float max_avx2(const float *r, size_t n8)
{
	__m256 m = _mm256_loadu_ps(r);
	__m128 h;

	for (size_t j = 8; j < n8; j += 8)
		m = _mm256_max_ps(m, _mm256_loadu_ps(r + j));
	h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
	h = _mm_max_ps(h, _mm_movehl_ps(h, h));
	h = _mm_max_ss(h, _mm_movehdup_ps(h));
	return _mm_cvtss_f32(h);
}

/* r[j] *= a for j < n8 (a multiple of 8). */
TGT static void scale_avx2(float *r, size_t n8, float a)
{
	__m256 va = _mm256_set1_ps(a);

	for (size_t j = 0; j < n8; j += 8)
		_mm256_storeu_ps(r + j, _mm256_mul_ps(_mm256_loadu_ps(r + j), va));
}

/* One row of LayerNorm, E a multiple of 8. The sums are float,
 * not double as in the scalar version, but spread over 8 lanes of E/8
 * terms each, and the variance is taken from the centred values in a
 * second pass, so the rounding stays far below what the real-model test
 * against sentence-transformers (cosine >= 0.999) would notice. */
TGT static void layernorm_row_avx2(float *out, const float *x, size_t E, const float *g,
				   const float *b, float eps)
{
	__m256 sum = _mm256_setzero_ps(), sq = sum, vm, vi;
	float mean;

	for (size_t j = 0; j < E; j += 8) {
		sum = _mm256_add_ps(sum, _mm256_loadu_ps(x + j));
	}
	mean = hsum8(sum) / (float)E;
	vm = _mm256_set1_ps(mean);
	for (size_t j = 0; j < E; j += 8) {
		__m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + j), vm);
		sq = _mm256_fmadd_ps(d, d, sq);
	}
	vi = _mm256_set1_ps(1.0f / sqrtf(hsum8(sq) / (float)E + eps));
	for (size_t j = 0; j < E; j += 8) {
		__m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), vm), vi);
		_mm256_storeu_ps(out + j, _mm256_fmadd_ps(d, _mm256_loadu_ps(g + j),
							_mm256_loadu_ps(b + j)));
	}
}
#endif

/* Rows per pool chunk for work of `per_row` floats a row: about 32k floats. */
static size_t row_grain(size_t per_row)
{
	size_t g = 32768 / (per_row ? per_row : 1);

	return g ? g : 1;
}

/* ---- LayerNorm --------------------------------------------------------- */

struct ln_job {
	float *out;
	const float *x, *w, *b;
	size_t width;
	float eps;
	int avx2;
};

static void ln_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct ln_job *j = arg;
	size_t E = j->width;

	(void)tid;
	for (size_t t = r0; t < r1; t++) {
		const float *x = j->x + t * E;
		float *out = j->out + t * E;
#ifdef HAVE_X86
		if (j->avx2 && E % 8 == 0) {
			layernorm_row_avx2(out, x, E, j->w, j->b, j->eps);
			continue;
		}
#endif
		double mean = 0, var = 0;
		for (size_t i = 0; i < E; i++)
			mean += x[i];
		mean /= (double)E;
		for (size_t i = 0; i < E; i++)
			var += (x[i] - mean) * (x[i] - mean);
		float inv = (float)(1.0 / sqrt(var / (double)E + j->eps));
		for (size_t i = 0; i < E; i++)
			out[i] = ((float)(x[i] - mean)) * inv * j->w[i] + j->b[i];
	}
}

void lp_backend_cpu_layernorm(struct lp_pool *pool, float *out, const float *x, const float *w,
			      const float *b, size_t n, size_t width, float eps)
{
	struct ln_job j = { out, x, w, b, width, eps, lp_backend_cpu_enc_avx2() };

	lp_pool_for(pool, n, row_grain(width), ln_task, &j);
}

/* ---- GELU -------------------------------------------------------------- */

struct gelu_job {
	float *x;
	int avx2;
	void (*gelu16)(float *x, size_t n);   /* the kernel set's, or NULL */
};

static void gelu_task(void *arg, size_t i0, size_t i1, int tid)
{
	const struct gelu_job *j = arg;
	float *x = j->x;
	size_t i = i0;

	(void)tid;
	if (j->gelu16) {
		j->gelu16(x + i0, i1 - i0);
		return;
	}
#ifdef HAVE_X86
	if (j->avx2) {
		size_t n8 = (i1 - i0) & ~(size_t)7;
		gelu_avx2(x + i0, n8);
		i = i0 + n8;
	}
#endif
	for (; i < i1; i++)
		x[i] = 0.5f * x[i] * (1.0f + lp_backend_cpu_erf(x[i] * 0.70710678118654752f));
}

void lp_backend_cpu_gelu(struct lp_pool *pool, float *x, size_t count)
{
	struct gelu_job j = { x, lp_backend_cpu_enc_avx2(), lp_cpu_kernels()->gelu };

	/* chunks of a multiple of 8 so that each runs the vector loop whole */
	lp_pool_for(pool, count, 32768, gelu_task, &j);
}

/* ---- add --------------------------------------------------------------- */

struct add_job {
	float *y;
	const float *x;
	size_t width, ldx;
};

static void add_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct add_job *j = arg;

	(void)tid;
	for (size_t t = r0; t < r1; t++) {
		float *y = j->y + t * j->width;
		const float *x = j->x + t * j->ldx;
		for (size_t i = 0; i < j->width; i++)
			y[i] += x[i];
	}
}

void lp_backend_cpu_add(struct lp_pool *pool, float *y, const float *x, size_t n, size_t width,
			size_t ldx)
{
	struct add_job j = { y, x, width, ldx };

	if (n * width < 65536) {
		add_task(&j, 0, n, 0);
		return;
	}
	lp_pool_for(pool, n, row_grain(width), add_task, &j);
}

/* ---- encoder attention --------------------------------------------------- */

/* a = softmax(scale * a) over each of `rows` rows of `cols` (scale > 0);
 * exp16 the kernel set's exponentials, or NULL. */
static void softmax_rows(int avx2, float (*exp16)(float *, size_t, float, float), float *a,
			 size_t rows, size_t cols, float scale)
{
	for (size_t i = 0; i < rows; i++) {
		float *r = a + i * cols, mx = r[0], sum = 0;
		size_t j, n8 = 0;
#ifdef HAVE_X86
		if (avx2 && cols >= 8) {
			n8 = cols & ~(size_t)7;
			mx = max_avx2(r, n8);
		}
#endif
		for (j = n8; j < cols; j++)
			mx = r[j] > mx ? r[j] : mx;
		if (exp16)
			sum = exp16(r, cols, mx, scale);
#ifdef HAVE_X86
		else if (n8)
			sum = exp_shift_avx2(r, n8, mx, scale);
#endif
		for (j = exp16 ? cols : n8; j < cols; j++)
			sum += (r[j] = expf((r[j] - mx) * scale));
		sum = 1.0f / sum;
#ifdef HAVE_X86
		if (n8)
			scale_avx2(r, n8, sum);
#endif
		for (j = n8; j < cols; j++)
			r[j] *= sum;
	}
}

struct enc_job {
	const struct lp_backend_enc_attn *a;
	float *att;          /* (threads, stride) */
	size_t stride;
	int avx2;
	float (*exp16)(float *, size_t, float, float);   /* the kernel set's, or NULL */
};

/* One (sequence, head) per index: ctx = softmax(Q K^T scale) V over the
 * sequence's real rows, its padding rows zeroed. */
static void enc_task(void *arg, size_t i0, size_t i1, int tid)
{
	const struct enc_job *j = arg;
	const struct lp_backend_enc_attn *a = j->a;
	size_t H = a->n_head, dh = a->head_dim, E = H * dh;
	float *att = j->att + (size_t)tid * j->stride;

	for (size_t i = i0; i < i1; i++) {
		size_t s = i / H, h = i % H, L = (size_t)a->lens[s];
		size_t row0 = s * a->L, in = row0 * a->ld + h * dh, o = row0 * E + h * dh;
		lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_TRANS, (int)L, (int)L,
			      (int)dh, 1.0f, a->q + in, (int)a->ld, a->k + in, (int)a->ld, 0.0f,
			      att, (int)L);
		softmax_rows(j->avx2, j->exp16, att, L, L, a->scale);
		lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_NO_TRANS, (int)L,
			      (int)dh, (int)L, 1.0f, att, (int)L, a->v + in, (int)a->ld, 0.0f,
			      a->out + o, (int)E);
		for (size_t t = L; t < a->L; t++)
			memset(a->out + (row0 + t) * E + h * dh, 0, dh * sizeof(float));
	}
}

void lp_backend_cpu_enc_attention(struct lp_pool *pool, float *att, size_t stride,
				  const struct lp_backend_enc_attn *a)
{
	struct enc_job j = { a, att, stride, lp_backend_cpu_enc_avx2(),
			     lp_cpu_kernels()->exp_shift };

	lp_pool_for(pool, (size_t)a->n_seq * a->n_head, 1, enc_task, &j);
}

/* ---- pooling, top-k, hashed projection ------------------------------------ */

static void l2_normalize(float *v, size_t n)
{
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		ss += (double)v[i] * v[i];
	if (ss > 0) {
		float inv = (float)(1.0 / sqrt(ss));
		for (size_t i = 0; i < n; i++)
			v[i] *= inv;
	}
}

void lp_backend_cpu_mean_pool(float *out, const float *x, const int32_t *lens, size_t n_seq,
			      size_t L, size_t width)
{
	for (size_t s = 0; s < n_seq; s++) {
		float *o = out + s * width;
		memset(o, 0, width * sizeof(float));
		for (size_t t = 0; t < (size_t)lens[s]; t++) {
			const float *r = x + (s * L + t) * width;
			for (size_t i = 0; i < width; i++)
				o[i] += r[i];
		}
		l2_normalize(o, width);
	}
}

/* 1 when (sa, ia) ranks before (sb, ib): the higher score, then the lower
 * index; NaN below every number. */
static int before(float sa, int32_t ia, float sb, int32_t ib)
{
	if (isnan(sa) || isnan(sb))
		return isnan(sb) && (!isnan(sa) || ia < ib);
	if (sa != sb)
		return sa > sb;
	return ia < ib;
}

/* Heap of m entries whose root is the worst of them. */
static void sift_down(float *s, int32_t *ix, size_t m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		if (l < m && before(s[w], ix[w], s[l], ix[l]))
			w = l;
		if (r < m && before(s[w], ix[w], s[r], ix[r]))
			w = r;
		if (w == i)
			return;
		float ts = s[i];
		int32_t ti = ix[i];
		s[i] = s[w];
		ix[i] = ix[w];
		s[w] = ts;
		ix[w] = ti;
		i = w;
	}
}

struct topk_job {
	const float *scores;
	size_t lds, n, k;
	float *out;
	int32_t *idx;
};

static void topk_task(void *arg, size_t q0, size_t q1, int tid)
{
	const struct topk_job *j = arg;
	size_t m = j->k < j->n ? j->k : j->n;

	(void)tid;
	for (size_t q = q0; q < q1; q++) {
		const float *row = j->scores + q * j->lds;
		float *s = j->out + q * j->k;
		int32_t *ix = j->idx + q * j->k;
		for (size_t i = 0; i < m; i++) {
			s[i] = row[i];
			ix[i] = (int32_t)i;
		}
		for (size_t i = m / 2; i-- > 0;)
			sift_down(s, ix, m, i);
		for (size_t i = m; i < j->n; i++)
			if (before(row[i], (int32_t)i, s[0], ix[0])) {
				s[0] = row[i];
				ix[0] = (int32_t)i;
				sift_down(s, ix, m, 0);
			}
		/* the worst goes to the end, one at a time: best first */
		for (size_t e = m; e > 1; e--) {
			float ts = s[0];
			int32_t ti = ix[0];
			s[0] = s[e - 1];
			ix[0] = ix[e - 1];
			s[e - 1] = ts;
			ix[e - 1] = ti;
			sift_down(s, ix, e - 1, 0);
		}
		for (size_t i = m; i < j->k; i++) {
			s[i] = -INFINITY;
			ix[i] = -1;
		}
	}
}

void lp_backend_cpu_topk(struct lp_pool *pool, const float *scores, size_t lds, size_t n_q,
			 size_t n, size_t k, float *out, int32_t *idx)
{
	struct topk_job j = { scores, lds, n, k, out, idx };

	lp_pool_for(pool, n_q, 1, topk_task, &j);
}

void lp_backend_cpu_scatter_l2(float *out, size_t n, size_t dim, const uint32_t *off,
			       const uint32_t *bucket, const float *val)
{
	for (size_t r = 0; r < n; r++) {
		float *o = out + r * dim;
		memset(o, 0, dim * sizeof(float));
		for (uint32_t j = off[r]; j < off[r + 1]; j++)
			o[bucket[j]] += val[j];
		l2_normalize(o, dim);
	}
}
