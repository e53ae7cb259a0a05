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

static void choose(void)
{
	const char *force = getenv("LPIPE_CPU_KERNELS");

	chosen = lp_cpu_kernels_scalar();
	if (force && !strcmp(force, "scalar"))
		return;
	if (lp_cpu_kernels_avx2())
		chosen = lp_cpu_kernels_avx2();
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
