/*
 * kernels.c - choose the dot-product kernels once, at first use.
 */
#include "backend/cpu/kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const struct lp_cpu_kernels *chosen;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

#if defined(LP_HAVE_AVX2_KERNELS) && defined(__x86_64__)
#include <cpuid.h>

/* F16C from CPUID leaf 1 (some compilers' __builtin_cpu_supports lack it). */
static int has_f16c(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

#if defined(LP_HAVE_AVX2_KERNELS) && defined(__x86_64__)
static pthread_once_t avx2_once = PTHREAD_ONCE_INIT;
#endif

const struct lp_cpu_kernels *lp_cpu_kernels_avx2(void)
{
#if defined(LP_HAVE_AVX2_KERNELS) && defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c()) {
		pthread_once(&avx2_once, lp_cpu_avx2_init);
		return &lp_cpu_kernels_avx2_set;
	}
#endif
	return NULL;
}

#if defined(LP_HAVE_AVX512_KERNELS) && defined(__x86_64__)
static pthread_once_t avx512_once = PTHREAD_ONCE_INIT;

/* The AVX-512 set takes the AVX2 set's kernel wherever it has none of
 * its own (dot_avx512.c says which and why). */
#define BORROW(field) do { \
		if (!k->field) \
			k->field = lp_cpu_kernels_avx2_set.field; \
	} while (0)
static void avx512_init(void)
{
	struct lp_cpu_kernels *k = &lp_cpu_kernels_avx512_set;

	BORROW(f32); BORROW(f16); BORROW(bf16);
	BORROW(q4_0); BORROW(q4_1); BORROW(q5_0); BORROW(q5_1); BORROW(q8_0);
	BORROW(q4_k); BORROW(q5_k); BORROW(q6_k);
	BORROW(act_q8_32); BORROW(act_q8_256); BORROW(dequant);
	/* a four-row kernel only beside the one-row kernel it matches */
	if (k->q8_0 == lp_cpu_kernels_avx2_set.q8_0)
		BORROW(q8_0_x4);
	if (k->q6_k == lp_cpu_kernels_avx2_set.q6_k)
		BORROW(q6_k_x4);
	lp_cpu_avx512_set_dot16(k);
	if (lp_cpu_has_avx512bf16())
		k->gemm_bf16 = lp_cpu_bf16_gemm_avx512;
}
#undef BORROW
#endif

const struct lp_cpu_kernels *lp_cpu_kernels_avx512(void)
{
#if defined(LP_HAVE_AVX512_KERNELS) && defined(__x86_64__)
	/* the AVX2 set first: its features, its table (lp_cpu_fp16_tab) */
	if (!lp_cpu_kernels_avx2())
		return NULL;
	/* __builtin_cpu_supports also checks that the OS saves the zmm and
	 * mask registers (XCR0) */
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")) {
		pthread_once(&avx512_once, avx512_init);
		return &lp_cpu_kernels_avx512_set;
	}
#endif
	return NULL;
}

const struct lp_cpu_kernels *lp_cpu_kernels_forced(const char *force)
{
	const struct lp_cpu_kernels *k;
	int cap = 2;  /* the fastest set allowed: 2 avx512, 1 avx2, 0 scalar */

	if (force && !strcmp(force, "scalar"))
		cap = 0;
	else if (force && !strcmp(force, "avx2"))
		cap = 1;
	if (cap >= 2 && (k = lp_cpu_kernels_avx512()))
		return k;
	if (cap >= 1 && (k = lp_cpu_kernels_avx2()))
		return k;
	return lp_cpu_kernels_scalar();
}

static void choose(void)
{
	const char *force = getenv("LPIPE_CPU");

	if (!force)
		force = getenv("LPIPE_CPU_KERNELS");
	chosen = lp_cpu_kernels_forced(force);
}

const struct lp_cpu_kernels *lp_cpu_kernels(void)
{
	pthread_once(&chosen_once, choose);
	return chosen;
}

lp_dot_fn lp_cpu_dot(const struct lp_cpu_kernels *k, enum lp_qtype t)
{
	switch (t) {
	case LP_Q_F32: return k->f32;
	case LP_Q_F16: return k->f16;
	case LP_Q_BF16: return k->bf16;
	case LP_Q_Q4_0: return k->q4_0;
	case LP_Q_Q4_1: return k->q4_1;
	case LP_Q_Q5_0: return k->q5_0;
	case LP_Q_Q5_1: return k->q5_1;
	case LP_Q_Q8_0: return k->q8_0;
	case LP_Q_Q4_K: return k->q4_k;
	case LP_Q_Q5_K: return k->q5_k;
	case LP_Q_Q6_K: return k->q6_k;
	}
	return k->f32;
}

size_t lp_q8_gemm_pack_bytes(size_t n, size_t cols)
{
	return (n + LP_Q8_GROUP - 1) / LP_Q8_GROUP * (cols / 32) * LP_Q8_PACK_BYTES;
}

/* four rows of unpacked bytes, and two floats per 16 columns of each */
size_t lp_q8_gemm_wbuf_bytes(size_t cols)
{
	return 4 * cols + 4 * 2 * (cols / 16) * sizeof(float) + 64;
}

lp_dot16_fn lp_cpu_dot16(const struct lp_cpu_kernels *k, enum lp_qtype t)
{
	switch (t) {
	case LP_Q_Q4_1: return k->q4_1_x16;
	case LP_Q_Q5_0: return k->q5_0_x16;
	case LP_Q_Q8_0: return k->q8_0_x16;
	default: return NULL;
	}
}

lp_dot4_fn lp_cpu_dot4(const struct lp_cpu_kernels *k, enum lp_qtype t)
{
	switch (t) {
	case LP_Q_Q8_0: return k->q8_0_x4;
	case LP_Q_Q6_K: return k->q6_k_x4;
	case LP_Q_Q4_0: return k->q4_0_x4;
	case LP_Q_Q4_1: return k->q4_1_x4;
	case LP_Q_Q5_0: return k->q5_0_x4;
	case LP_Q_Q5_1: return k->q5_1_x4;
	default: return NULL;
	}
}
