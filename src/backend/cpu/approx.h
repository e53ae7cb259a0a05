/*
 * approx.h - the constants of the CPU kernels' exp and erf approximations,
 * written once for the scalar, AVX2 and AVX-512 forms that use them, so
 * that every instruction set computes the same function.
 *
 *  - exp: e^x = 2^n e^r with n = round(x log2(e)) and r = x - n ln 2, ln 2
 *    taken in two parts (LP_APPROX_LN2_HI is exact in a few bits, so n ln 2
 *    loses nothing of r); the polynomial for e^r is each kernel's own
 *    (Taylor to degree 6 in the encoder, Cephes' expf in gemm.c);
 *  - erf: Abramowitz and Stegun 7.1.26, erf(a) = 1 - t (a1 + t (a2 + t (a3
 *    + t (a4 + t a5)))) e^(-a^2) with t = 1 / (1 + p a), a >= 0 (absolute
 *    error below 1.5e-7).
 */
#ifndef LP_BACKEND_CPU_APPROX_H
#define LP_BACKEND_CPU_APPROX_H

#define LP_APPROX_LOG2E 1.44269504f
#define LP_APPROX_LN2_HI 0.693359375f
#define LP_APPROX_LN2_LO (-2.12194440e-4f)

#define LP_APPROX_ERF_P 0.3275911f
#define LP_APPROX_ERF_A1 0.254829592f
#define LP_APPROX_ERF_A2 (-0.284496736f)
#define LP_APPROX_ERF_A3 1.421413741f
#define LP_APPROX_ERF_A4 (-1.453152027f)
#define LP_APPROX_ERF_A5 1.061405429f

#endif
