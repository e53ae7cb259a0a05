#include "model/gemm.h"

#include <cblas.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

void lp_gemm_nt_blas(size_t n, size_t m, size_t k, const float *X, size_t ldx,
		     const float *W, size_t ldw, float *Y, size_t ldy)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)m, (int)k, 1.0f,
		    X, (int)ldx, W, (int)ldw, 0.0f, Y, (int)ldy);
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

/* 4 tokens x 3 rows with twelve accumulators in registers: 7 loads and
 * 12 FMAs per 8 elements. */
TGT static void tile43(size_t k, const float *X, size_t ldx, const float *W, size_t ldw,
		       float *Y, size_t ldy)
{
	const float *x0 = X, *x1 = X + ldx, *x2 = X + 2 * ldx, *x3 = X + 3 * ldx;
	const float *w0 = W, *w1 = W + ldw, *w2 = W + 2 * ldw;
	__m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00;
	__m256 a12 = a00, a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
	size_t k8 = k & ~(size_t)7;

	for (size_t i = 0; i < k8; i += 8) {
		__m256 v0 = _mm256_loadu_ps(w0 + i), v1 = _mm256_loadu_ps(w1 + i);
		__m256 v2 = _mm256_loadu_ps(w2 + i), x;
		x = _mm256_loadu_ps(x0 + i);
		a00 = _mm256_fmadd_ps(x, v0, a00);
		a01 = _mm256_fmadd_ps(x, v1, a01);
		a02 = _mm256_fmadd_ps(x, v2, a02);
		x = _mm256_loadu_ps(x1 + i);
		a10 = _mm256_fmadd_ps(x, v0, a10);
		a11 = _mm256_fmadd_ps(x, v1, a11);
		a12 = _mm256_fmadd_ps(x, v2, a12);
		x = _mm256_loadu_ps(x2 + i);
		a20 = _mm256_fmadd_ps(x, v0, a20);
		a21 = _mm256_fmadd_ps(x, v1, a21);
		a22 = _mm256_fmadd_ps(x, v2, a22);
		x = _mm256_loadu_ps(x3 + i);
		a30 = _mm256_fmadd_ps(x, v0, a30);
		a31 = _mm256_fmadd_ps(x, v1, a31);
		a32 = _mm256_fmadd_ps(x, v2, a32);
	}
	float r[12] = { hsum(a00), hsum(a01), hsum(a02), hsum(a10), hsum(a11), hsum(a12),
			hsum(a20), hsum(a21), hsum(a22), hsum(a30), hsum(a31), hsum(a32) };
	for (size_t t = 0; t < 4; t++)
		for (size_t c = 0; c < 3; c++) {
			float s = r[t * 3 + c];
			for (size_t i = k8; i < k; i++)
				s += X[t * ldx + i] * W[c * ldw + i];
			Y[t * ldy + c] = s;
		}
}

/* One token x one row, for the edges. */
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

TGT static void tile(size_t nt, size_t nr, size_t k, const float *X, size_t ldx,
		     const float *W, size_t ldw, float *Y, size_t ldy)
{
	if (nt == 4 && nr == 3) {
		tile43(k, X, ldx, W, ldw, Y, ldy);
		return;
	}
	for (size_t t = 0; t < nt; t++)
		for (size_t r = 0; r < nr; r++)
			Y[t * ldy + r] = dot1(k, X + t * ldx, W + r * ldw);
}

TGT static void gemm_avx2(size_t n, size_t m, size_t k, const float *X, size_t ldx,
			  const float *W, size_t ldw, float *Y, size_t ldy)
{
	/* Tokens outer, rows inner: four X rows stay in L1 while the block of
	 * W (sized by the caller to fit L2) streams past them. */
	for (size_t t = 0; t < n; t += 4) {
		size_t nt = n - t < 4 ? n - t : 4;
		for (size_t r = 0; r < m; r += 3) {
			size_t nr = m - r < 3 ? m - r : 3;
			tile(nt, nr, k, X + t * ldx, ldx, W + r * ldw, ldw, Y + t * ldy + r, ldy);
		}
	}
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
#endif

void lp_gemm_nt(size_t n, size_t m, size_t k, const float *X, size_t ldx,
		const float *W, size_t ldw, float *Y, size_t ldy)
{
#ifdef HAVE_X86
	if (use_avx2()) {
		gemm_avx2(n, m, k, X, ldx, W, ldw, Y, ldy);
		return;
	}
#endif
	lp_gemm_nt_blas(n, m, k, X, ldx, W, ldw, Y, ldy);
}

const char *lp_gemm_kernel_name(void)
{
#ifdef HAVE_X86
	if (use_avx2())
		return "avx2";
#endif
	return "blas";
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
