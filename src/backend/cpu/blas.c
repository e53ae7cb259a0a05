/*
 * blas.c - open OpenBLAS on first use, with the kernel set this CPU
 * deserves (see blas.h for why it is not linked).
 */
#include "backend/cpu/blas.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* The header is only for these checks: nothing here links against it. */
_Static_assert((int)LP_BLAS_ROW_MAJOR == (int)CblasRowMajor &&
	       (int)LP_BLAS_COL_MAJOR == (int)CblasColMajor, "CBLAS order values");
_Static_assert((int)LP_BLAS_NO_TRANS == (int)CblasNoTrans &&
	       (int)LP_BLAS_TRANS == (int)CblasTrans, "CBLAS transpose values");

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static __typeof__(&cblas_sgemm) p_sgemm;
static void (*p_set_threads)(int);
static char *(*p_corename)(void);
static const char *loaded_name; /* loaded_buf once loaded */
static char loaded_buf[512];
static char load_error[768];
static const char *core_asked;   /* what OPENBLAS_CORETYPE was set to */

/* The library's best kernel set for this CPU's features, which it may not
 * pick by itself when it does not know the CPU model; NULL leaves the
 * choice to it. */
static const char *preferred_core(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("avx512cd"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
#endif
	return NULL;
}

/* setenv(name, value) when name is unset; returns whether it did, so that
 * the caller can put the environment back. */
static int set_if_unset(const char *name, const char *value)
{
	if (!value || getenv(name))
		return 0;
	return setenv(name, value, 0) == 0;
}

static void *open_library(void)
{
	const char *env = getenv("LPIPE_BLAS");
	char in_libdir[600];
	const char *names[] = { "libopenblas.so.0", "libopenblas.so", in_libdir };
	size_t n = sizeof(names) / sizeof(names[0]);
	void *h;

	snprintf(in_libdir, sizeof(in_libdir), "%s/libopenblas.so.0", LP_BLAS_LIBDIR);
	if (!*LP_BLAS_LIBDIR)
		n--;
	if (env && *env) {
		names[0] = env;
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		if ((h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL))) {
			snprintf(loaded_buf, sizeof(loaded_buf), "%s", names[i]);
			loaded_name = loaded_buf;
			return h;
		}
		if (i == 0)   /* the first name's reason is the one worth showing */
			snprintf(load_error, sizeof(load_error), "'%s': %s", names[i], dlerror());
	}
	return NULL;
}

static void load(void)
{
	const char *core = preferred_core();
	int set_core = set_if_unset("OPENBLAS_CORETYPE", core);
	int set_threads = set_if_unset("OPENBLAS_NUM_THREADS", "1");
	void *h = open_library();

	if (set_core) {
		unsetenv("OPENBLAS_CORETYPE");
		core_asked = core;
	}
	if (set_threads)
		unsetenv("OPENBLAS_NUM_THREADS");
	if (!h)
		return;
	*(void **)&p_sgemm = dlsym(h, "cblas_sgemm");
	if (!p_sgemm) {
		snprintf(load_error, sizeof(load_error), "'%s' has no cblas_sgemm", loaded_name);
		loaded_name = NULL;
		dlclose(h);
		return;
	}
	*(void **)&p_set_threads = dlsym(h, "openblas_set_num_threads");
	*(void **)&p_corename = dlsym(h, "openblas_get_corename");
	/* lpipe's own workers call sgemm; see blas.h */
	if (p_set_threads)
		p_set_threads(1);
}

enum lp_status lp_blas_load(struct lp_diag *d)
{
	pthread_once(&load_once, load);
	if (p_sgemm)
		return LP_OK;
	return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
			   "unable to load OpenBLAS (%s): install the Debian package "
			   "'libopenblas0' or set LPIPE_BLAS to a CBLAS library", load_error);
}

/* Row-major C = alpha op(A) op(B) + beta C, one element at a time: what
 * runs when no library could be loaded. */
static void sgemm_loop(enum lp_blas_trans ta, enum lp_blas_trans tb, int m, int n, int k,
		       float alpha, const float *A, int lda, const float *B, int ldb, float beta,
		       float *C, int ldc)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			float s = 0;
			for (int p = 0; p < k; p++) {
				float a = ta == LP_BLAS_NO_TRANS ? A[(size_t)i * lda + p]
								 : A[(size_t)p * lda + i];
				float b = tb == LP_BLAS_NO_TRANS ? B[(size_t)p * ldb + j]
								 : B[(size_t)j * ldb + p];
				s += a * b;
			}
			float *c = &C[(size_t)i * ldc + j];
			*c = beta == 0.0f ? alpha * s : alpha * s + beta * *c;
		}
}

void lp_blas_sgemm(enum lp_blas_order order, enum lp_blas_trans ta, enum lp_blas_trans tb,
		   int m, int n, int k, float alpha, const float *A, int lda, const float *B,
		   int ldb, float beta, float *C, int ldc)
{
	pthread_once(&load_once, load);
	if (p_sgemm) {
		p_sgemm((enum CBLAS_ORDER)order, (enum CBLAS_TRANSPOSE)ta,
			(enum CBLAS_TRANSPOSE)tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
		return;
	}
	if (order == LP_BLAS_ROW_MAJOR)
		sgemm_loop(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
	else    /* column-major C is row-major C^T = op(B)^T op(A)^T */
		sgemm_loop(tb, ta, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
}

void lp_blas_set_threads(int n)
{
	pthread_once(&load_once, load);
	if (p_set_threads && n >= 1)
		p_set_threads(n);
}

const char *lp_blas_core_name(void)
{
	const char *s;

	pthread_once(&load_once, load);
	if (!p_sgemm)
		return "none";
	s = p_corename ? p_corename() : NULL;
	return s && *s ? s : "unknown";
}

const char *lp_blas_core_asked(void)
{
	pthread_once(&load_once, load);
	return core_asked;
}

const char *lp_blas_library(void)
{
	pthread_once(&load_once, load);
	return p_sgemm ? loaded_name : NULL;
}
