#include "backend/cpu/gemm.h"

#include <math.h>
#include <string.h>

#include "backend/cpu/approx.h"
#include "backend/cpu/blas.h"
#include "quant/quant.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

void lp_gemm_nt(size_t n, size_t m, size_t k, const float *X, size_t ldx,
		const float *W, size_t ldw, float *Y, size_t ldy)
{
	lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_TRANS, (int)n, (int)m, (int)k,
		      1.0f, X, (int)ldx, W, (int)ldw, 0.0f, Y, (int)ldy);
}

void lp_gemm_nt_bias(size_t n, size_t m, size_t k, const float *X, size_t ldx,
		     const float *W, size_t ldw, const float *bias, float *Y, size_t ldy)
{
	if (!bias) {
		lp_gemm_nt(n, m, k, X, ldx, W, ldw, Y, ldy);
		return;
	}
	for (size_t t = 0; t < n; t++)
		memcpy(Y + t * ldy, bias, m * sizeof(float));
	lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_TRANS, (int)n, (int)m, (int)k,
		      1.0f, X, (int)ldx, W, (int)ldw, 1.0f, Y, (int)ldy);
}

#ifdef HAVE_X86
#define TGT __attribute__((target("avx2,fma")))

TGT static inline float hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* The dot product of two float vectors. */
TGT static float dot1(size_t k, const float *x, const float *w)
{
	__m256 a = _mm256_setzero_ps();
	size_t k8 = k & ~(size_t)7;
	float s;

	for (size_t i = 0; i < k8; i += 8)
		a = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(w + i), a);
	s = hsum(a);
	for (size_t i = k8; i < k; i++)
		s += x[i] * w[i];
	return s;
}

TGT static void axpy_avx2(size_t n, float a, const float *x, float *y)
{
	__m256 va = _mm256_set1_ps(a);
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i),
							_mm256_loadu_ps(y + i)));
	for (; i < n; i++)
		y[i] += a * x[i];
}

/* The CPU checks below are asked from several threads at once (documents
 * side by side): relaxed atomics, every thread finds the same answer. */
static int use_avx2(void)
{
	static int cached = -1;
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (v < 0) {
		v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}

#include <cpuid.h>

static int use_f16c(void)
{
	static int cached = -1;
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	unsigned a, b, c, d;

	if (v < 0) {
		v = use_avx2() && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* Sums of a0..a3, each of 8 lanes, as 4 lanes. */
TGT static inline __m128 hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
	__m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));

	return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/* hd a multiple of 8; four positions at a time, so that four independent
 * chains of multiply-adds hide each other's latency (one dot product at a
 * time waits on one chain: a third of a prefill's attention time). */
TGT static void scores_f32_avx2(const float *q, const float *K, size_t ldk, size_t hd,
				size_t n_pos, float scale, float *score)
{
	__m128 vs = _mm_set1_ps(scale);
	size_t s = 0;

	for (; s + 4 <= n_pos; s += 4) {
		const float *k0 = K + s * ldk, *k1 = k0 + ldk, *k2 = k1 + ldk, *k3 = k2 + ldk;
		__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
		for (size_t i = 0; i < hd; i += 8) {
			__m256 vq = _mm256_loadu_ps(q + i);
			a0 = _mm256_fmadd_ps(vq, _mm256_loadu_ps(k0 + i), a0);
			a1 = _mm256_fmadd_ps(vq, _mm256_loadu_ps(k1 + i), a1);
			a2 = _mm256_fmadd_ps(vq, _mm256_loadu_ps(k2 + i), a2);
			a3 = _mm256_fmadd_ps(vq, _mm256_loadu_ps(k3 + i), a3);
		}
		_mm_storeu_ps(score + s, _mm_mul_ps(hsum4(a0, a1, a2, a3), vs));
	}
	for (; s < n_pos; s++)
		score[s] = dot1(hd, q, K + s * ldk) * scale;
}

/* hd a multiple of 8; out kept in registers 32 elements at a time */
TGT static void mix_f32_avx2(const float *p, const float *V, size_t ldv, size_t hd,
			     size_t n_pos, float *out)
{
	size_t i = 0;

	for (; i + 32 <= hd; i += 32) {
		__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
		for (size_t s = 0; s < n_pos; s++) {
			const float *v = V + s * ldv + i;
			__m256 w = _mm256_broadcast_ss(p + s);
			a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v), a0);
			a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 8), a1);
			a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 16), a2);
			a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 24), a3);
		}
		_mm256_storeu_ps(out + i, a0);
		_mm256_storeu_ps(out + i + 8, a1);
		_mm256_storeu_ps(out + i + 16, a2);
		_mm256_storeu_ps(out + i + 24, a3);
	}
	for (; i < hd; i += 8) {
		__m256 a0 = _mm256_setzero_ps();
		for (size_t s = 0; s < n_pos; s++)
			a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(p + s),
					     _mm256_loadu_ps(V + s * ldv + i), a0);
		_mm256_storeu_ps(out + i, a0);
	}
}

/*
 * exp(x) for 8 lanes, x clamped to [-87.3, 88.3] (normal results): the
 * argument reduced by n ln 2 (n = round(x / ln 2), ln 2 in two parts), a
 * degree-6 polynomial (Cephes' expf), and 2^n through the exponent bits.
 * Within 2 ulp of expf over the range.
 */
TGT static inline __m256 exp8(__m256 x)
{
	const __m256 hi = _mm256_set1_ps(88.3f), lo = _mm256_set1_ps(-87.3f);
	__m256 n, r, r2, p;

	x = _mm256_max_ps(_mm256_min_ps(x, hi), lo);
	n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(LP_APPROX_LOG2E)),
			    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LP_APPROX_LN2_HI), x);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LP_APPROX_LN2_LO), r);
	r2 = _mm256_mul_ps(r, r);
	p = _mm256_set1_ps(1.9875691500e-4f);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
	p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
	return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p),
		_mm256_slli_epi32(_mm256_cvtps_epi32(n), 23)));
}

TGT static void swiglu_avx2(size_t n, float *g, const float *u)
{
	const __m256 one = _mm256_set1_ps(1.0f);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 vg = _mm256_loadu_ps(g + i);
		__m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), vg));
		_mm256_storeu_ps(g + i, _mm256_mul_ps(_mm256_div_ps(vg, _mm256_add_ps(one, e)),
						      _mm256_loadu_ps(u + i)));
	}
	for (; i < n; i++)
		g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

TGT static float exp_sum_avx2(float *x, size_t n, float max)
{
	__m256 vm = _mm256_set1_ps(max), acc = _mm256_setzero_ps();
	size_t i = 0;
	float sum;

	for (; i + 8 <= n; i += 8) {
		__m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
		_mm256_storeu_ps(x + i, e);
		acc = _mm256_add_ps(acc, e);
	}
	sum = hsum(acc);
	for (; i < n; i++) {
		x[i] = expf(x[i] - max);
		sum += x[i];
	}
	return sum;
}

#define TGT16 __attribute__((target("avx2,fma,f16c")))

TGT16 static inline __m256 load_h8(const uint16_t *p)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

/* hd a multiple of 8 */
TGT16 static void scores_f16c(const float *q, const uint16_t *K, size_t ldk, size_t hd,
			      size_t n_pos, float scale, float *score)
{
	for (size_t s = 0; s < n_pos; s++) {
		const uint16_t *k = K + s * ldk;
		__m256 a0 = _mm256_setzero_ps(), a1 = a0;
		size_t i = 0;

		for (; i + 16 <= hd; i += 16) {
			a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load_h8(k + i), a0);
			a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), load_h8(k + i + 8), a1);
		}
		if (i < hd)
			a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load_h8(k + i), a0);
		score[s] = hsum(_mm256_add_ps(a0, a1)) * scale;
	}
}

/* hd a multiple of 8; out kept in registers 32 elements at a time */
TGT16 static void mix_f16c(const float *p, const uint16_t *V, size_t ldv, size_t hd,
			   size_t n_pos, float *out)
{
	size_t i = 0;

	for (; i + 32 <= hd; i += 32) {
		__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
		for (size_t s = 0; s < n_pos; s++) {
			const uint16_t *v = V + s * ldv + i;
			__m256 w = _mm256_broadcast_ss(p + s);
			a0 = _mm256_fmadd_ps(w, load_h8(v), a0);
			a1 = _mm256_fmadd_ps(w, load_h8(v + 8), a1);
			a2 = _mm256_fmadd_ps(w, load_h8(v + 16), a2);
			a3 = _mm256_fmadd_ps(w, load_h8(v + 24), a3);
		}
		_mm256_storeu_ps(out + i, a0);
		_mm256_storeu_ps(out + i + 8, a1);
		_mm256_storeu_ps(out + i + 16, a2);
		_mm256_storeu_ps(out + i + 24, a3);
	}
	for (; i < hd; i += 8) {
		__m256 a0 = _mm256_setzero_ps();
		for (size_t s = 0; s < n_pos; s++)
			a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(p + s), load_h8(V + s * ldv + i), a0);
		_mm256_storeu_ps(out + i, a0);
	}
}
#endif

void lp_attn_scores_f16(const float *q, const uint16_t *K, size_t ldk, size_t hd,
			size_t n_pos, float scale, float *score)
{
#ifdef HAVE_X86
	if (hd % 8 == 0 && use_f16c()) {
		scores_f16c(q, K, ldk, hd, n_pos, scale, score);
		return;
	}
#endif
	for (size_t s = 0; s < n_pos; s++) {
		float a = 0;
		for (size_t i = 0; i < hd; i++)
			a += q[i] * lp_fp16_to_fp32(K[s * ldk + i]);
		score[s] = a * scale;
	}
}

void lp_attn_mix_f16(const float *p, const uint16_t *V, size_t ldv, size_t hd,
		     size_t n_pos, float *out)
{
#ifdef HAVE_X86
	if (hd % 8 == 0 && use_f16c()) {
		mix_f16c(p, V, ldv, hd, n_pos, out);
		return;
	}
#endif
	memset(out, 0, hd * sizeof(float));
	for (size_t s = 0; s < n_pos; s++)
		for (size_t i = 0; i < hd; i++)
			out[i] += p[s] * lp_fp16_to_fp32(V[s * ldv + i]);
}

void lp_attn_scores_f32(const float *q, const float *K, size_t ldk, size_t hd,
			size_t n_pos, float scale, float *score)
{
#ifdef HAVE_X86
	if (hd % 8 == 0 && use_avx2()) {
		scores_f32_avx2(q, K, ldk, hd, n_pos, scale, score);
		return;
	}
#endif
	for (size_t s = 0; s < n_pos; s++)
		score[s] = lp_dot_f32(q, K + s * ldk, hd) * scale;
}

void lp_attn_mix_f32(const float *p, const float *V, size_t ldv, size_t hd,
		     size_t n_pos, float *out)
{
#ifdef HAVE_X86
	if (hd % 8 == 0 && use_avx2()) {
		mix_f32_avx2(p, V, ldv, hd, n_pos, out);
		return;
	}
#endif
	memset(out, 0, hd * sizeof(float));
	for (size_t s = 0; s < n_pos; s++)
		lp_axpy_f32(hd, p[s], V + s * ldv, out);
}

void lp_swiglu_f32(size_t n, float *g, const float *u)
{
#ifdef HAVE_X86
	if (use_avx2()) {
		swiglu_avx2(n, g, u);
		return;
	}
#endif
	for (size_t i = 0; i < n; i++)
		g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

float lp_exp_sum_f32(float *x, size_t n, float max)
{
	float sum = 0;

#ifdef HAVE_X86
	if (use_avx2())
		return exp_sum_avx2(x, n, max);
#endif
	for (size_t i = 0; i < n; i++) {
		x[i] = expf(x[i] - max);
		sum += x[i];
	}
	return sum;
}

float lp_dot_f32(const float *a, const float *b, size_t n)
{
#ifdef HAVE_X86
	if (use_avx2())
		return dot1(n, a, b);
#endif
	float s = 0;
	for (size_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

void lp_axpy_f32(size_t n, float a, const float *x, float *y)
{
#ifdef HAVE_X86
	if (use_avx2()) {
		axpy_avx2(n, a, x, y);
		return;
	}
#endif
	for (size_t i = 0; i < n; i++)
		y[i] += a * x[i];
}
