/*
 * enc_avx512.c - the encoder's element-wise kernels on 16 lanes: GELU and
 * the softmax's exponentials (the AVX-512 set's gelu and exp_shift).
 *
 * The arithmetic is encoder.c's AVX2 kernels' lane for lane (the same
 * polynomials, the same order of operations in each lane), so a GELU
 * gives the same floats on either set; a softmax sums its exponentials
 * over 16 lanes instead of 8, which changes only the order of that sum.
 * A tail shorter than 16 runs masked, so no scalar loop is needed. With
 * the products fast, GELU took 2.6% of MiniLM's encoder and the softmax's
 * exponentials 2% on 8 lanes.
 */
#include "backend/cpu/kernels.h"
#include "backend/cpu/approx.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <math.h>

/* e^x for x <= 0: encoder.c's exp_nonpos on 16 lanes (n = round(x / ln 2),
 * r = x - n ln 2 in two parts, e^r by its Taylor series to degree 6,
 * 2^n through the exponent bits; clamped at -87). */
static inline __m512 exp_nonpos16(__m512 x)
{
	__m512 n, r, p;
	__m512i e;

	x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
	n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(LP_APPROX_LOG2E)),
				 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LP_APPROX_LN2_HI), x);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LP_APPROX_LN2_LO), r);
	p = _mm512_set1_ps(1.0f / 720);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
	e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
	return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

/* Lanes [0, n) of a vector, n < 16 (0 when n >= 16: all lanes). */
static inline __mmask16 tail_mask(size_t n)
{
	return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

void lp_cpu_gelu_avx512(float *x, size_t n)
{
	const __m512 one = _mm512_set1_ps(1.0f);
	const __m512i sign = _mm512_set1_epi32((int)0x80000000u);

	for (size_t i = 0; i < n; i += 16) {
		__mmask16 m = tail_mask(n - i);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i);
		__m512 z = _mm512_mul_ps(v, _mm512_set1_ps((float)M_SQRT1_2));
		__m512i zi = _mm512_castps_si512(z);
		__m512 a = _mm512_castsi512_ps(_mm512_andnot_si512(sign, zi));
		__m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(a, _mm512_set1_ps(LP_APPROX_ERF_P), one));
		__m512 p = _mm512_set1_ps(LP_APPROX_ERF_A5), r;
		p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(LP_APPROX_ERF_A4));
		p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(LP_APPROX_ERF_A3));
		p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(LP_APPROX_ERF_A2));
		p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(LP_APPROX_ERF_A1));
		p = _mm512_mul_ps(p, t);
		__m512 na = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), sign));
		r = _mm512_fnmadd_ps(p, exp_nonpos16(_mm512_mul_ps(na, a)), one);
		/* erf is odd */
		r = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(r),
							_mm512_and_si512(sign, zi)));
		_mm512_mask_storeu_ps(x + i, m, _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v),
							      _mm512_add_ps(one, r)));
	}
}

float lp_cpu_exp_shift_avx512(float *r, size_t n, float mx, float scale)
{
	__m512 vm = _mm512_set1_ps(mx), vs = _mm512_set1_ps(scale), acc = _mm512_setzero_ps();

	for (size_t j = 0; j < n; j += 16) {
		__mmask16 m = tail_mask(n - j);
		/* masked-off lanes read mx: e^0, left out of the sum */
		__m512 v = _mm512_mask_loadu_ps(vm, m, r + j);
		v = exp_nonpos16(_mm512_mul_ps(_mm512_sub_ps(v, vm), vs));
		_mm512_mask_storeu_ps(r + j, m, v);
		acc = _mm512_mask_add_ps(acc, m, acc, v);
	}
	return _mm512_reduce_add_ps(acc);
}
#endif
