#include "backend/cpu/gemm.h"

#include <string.h>

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

static int use_avx2(void)
{
	static int cached = -1;

	if (cached < 0)
		cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	return cached;
}

#include <cpuid.h>

static int use_f16c(void)
{
	static int cached = -1;
	unsigned a, b, c, d;

	if (cached < 0)
		cached = use_avx2() && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
	return cached;
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
