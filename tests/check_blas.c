/* check_blas.c - the run-time OpenBLAS loader and its sgemm. */
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/cpu/blas.h"

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static float frand(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((rng >> 40) & 0xffff) / 32768.0f - 1.0f;
}

/* The product the obvious way, in double: C (m x n, ldc) row-major. */
static void naive(enum lp_blas_order order, enum lp_blas_trans ta, enum lp_blas_trans tb,
		  int m, int n, int k, float alpha, const float *A, int lda, const float *B,
		  int ldb, float beta, float *C, int ldc)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int p = 0; p < k; p++) {
				/* element (i, p) of op(A) and (p, j) of op(B) */
				int a_ip = ta == LP_BLAS_NO_TRANS, b_pj = tb == LP_BLAS_NO_TRANS;
				size_t ai, bi;
				if (order == LP_BLAS_ROW_MAJOR) {
					ai = a_ip ? (size_t)i * lda + p : (size_t)p * lda + i;
					bi = b_pj ? (size_t)p * ldb + j : (size_t)j * ldb + p;
				} else {
					ai = a_ip ? (size_t)p * lda + i : (size_t)i * lda + p;
					bi = b_pj ? (size_t)j * ldb + p : (size_t)p * ldb + j;
				}
				s += (double)A[ai] * B[bi];
			}
			size_t ci = order == LP_BLAS_ROW_MAJOR ? (size_t)i * ldc + j
							       : (size_t)j * ldc + i;
			C[ci] = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * C[ci]));
		}
}

/* Every order and transpose on odd sizes with padded leading dimensions,
 * against the loop above; C starts as NaN where beta is 0 (BLAS must not
 * read it then) and as numbers otherwise. */
static void check_products(void)
{
	static const int sizes[][3] = { { 1, 1, 1 }, { 3, 5, 7 }, { 17, 13, 29 },
					{ 33, 65, 31 }, { 127, 9, 257 }, { 5, 130, 3 } };
	enum lp_blas_order orders[] = { LP_BLAS_ROW_MAJOR, LP_BLAS_COL_MAJOR };
	enum lp_blas_trans tr[] = { LP_BLAS_NO_TRANS, LP_BLAS_TRANS };

	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
		for (int o = 0; o < 2; o++)
			for (int a = 0; a < 2; a++)
				for (int b = 0; b < 2; b++)
					for (int beta_on = 0; beta_on < 2; beta_on++) {
		int m = sizes[z][0], n = sizes[z][1], k = sizes[z][2];
		int row = orders[o] == LP_BLAS_ROW_MAJOR;
		/* stored shapes: A is m x k (or k x m transposed), row- or column-major */
		int a_rows = (tr[a] == LP_BLAS_NO_TRANS) == row ? m : k;
		int a_cols = (tr[a] == LP_BLAS_NO_TRANS) == row ? k : m;
		int b_rows = (tr[b] == LP_BLAS_NO_TRANS) == row ? k : n;
		int b_cols = (tr[b] == LP_BLAS_NO_TRANS) == row ? n : k;
		int c_rows = row ? m : n, c_cols = row ? n : m;
		int lda = a_cols + 3, ldb = b_cols + 1, ldc = c_cols + 2;
		float *A = malloc(sizeof(float) * (size_t)a_rows * lda);
		float *B = malloc(sizeof(float) * (size_t)b_rows * ldb);
		float *C = malloc(sizeof(float) * (size_t)c_rows * ldc);
		float *W = malloc(sizeof(float) * (size_t)c_rows * ldc);
		float alpha = 0.75f, beta = beta_on ? -0.5f : 0.0f;

		for (int i = 0; i < a_rows * lda; i++)
			A[i] = frand();
		for (int i = 0; i < b_rows * ldb; i++)
			B[i] = frand();
		for (int i = 0; i < c_rows * ldc; i++)
			W[i] = C[i] = beta_on ? frand() : NAN;
		lp_blas_sgemm(orders[o], tr[a], tr[b], m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
		naive(orders[o], tr[a], tr[b], m, n, k, alpha, A, lda, B, ldb, beta, W, ldc);
		for (int r = 0; r < c_rows; r++)
			for (int c = 0; c < c_cols; c++) {
				float got = C[(size_t)r * ldc + c], want = W[(size_t)r * ldc + c];
				ck_assert_msg(got - want < 1e-4f * k && want - got < 1e-4f * k,
					      "%dx%dx%d order %d ta %d tb %d beta %g: [%d,%d] %g != %g",
					      m, n, k, o, a, b, beta, r, c, got, want);
			}
		/* the padding between rows is not touched */
		ck_assert_msg(beta_on || isnan(C[c_cols]), "padding written");
		free(A);
		free(B);
		free(C);
		free(W);
	}
}

START_TEST(test_sgemm_matches_naive)
{
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_msg(lp_blas_load(&d) == LP_OK, "%s", d.msg);
	check_products();
	lp_blas_set_threads(2);   /* the library's own threads give the same */
	check_products();
	lp_blas_set_threads(1);
}
END_TEST

/* Whether the loaded library picks its kernels at run time (Debian's
 * does): only then can OPENBLAS_CORETYPE have been obeyed. */
static int library_is_dynamic(void)
{
	void *h = dlopen(lp_blas_library(), RTLD_NOW | RTLD_LOCAL);
	char *(*config)(void);
	int dyn = 0;

	if (!h)
		return 0;
	*(void **)&config = dlsym(h, "openblas_get_config");
	dyn = config && strstr(config(), "DYNAMIC_ARCH") != NULL;
	dlclose(h);
	return dyn;
}

START_TEST(test_loader_reports_core)
{
	const char *before = getenv("OPENBLAS_CORETYPE"), *core, *asked;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_msg(lp_blas_load(&d) == LP_OK, "%s", d.msg);
	ck_assert_ptr_nonnull(lp_blas_library());
	core = lp_blas_core_name();
	ck_assert_ptr_nonnull(core);
	ck_assert_str_ne(core, "none");
	ck_assert_uint_gt(strlen(core), 0);
	asked = lp_blas_core_asked();
	if (before) {
		ck_assert_ptr_null(asked);   /* the user's choice stands */
	} else {
		/* put back as it was */
		ck_assert_ptr_null(getenv("OPENBLAS_CORETYPE"));
#if defined(__x86_64__)
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
		    __builtin_cpu_supports("avx512cd"))
			ck_assert_str_eq(asked, "SkylakeX");
		else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			ck_assert_str_eq(asked, "Haswell");
		else
			ck_assert_ptr_null(asked);
#endif
		if (asked && library_is_dynamic())
			ck_assert_msg(strcasecmp(core, asked) == 0, "asked for %s, got %s", asked,
				      core);
	}
	/* idempotent */
	ck_assert_int_eq(lp_blas_load(&d), LP_OK);
	ck_assert_str_eq(lp_blas_core_name(), core);
}
END_TEST

/* A library that cannot be loaded is reported, and the product is still
 * right (the plain loop). Needs its own process: loading is once. */
START_TEST(test_missing_library)
{
	const char *fork = getenv("CK_FORK");
	struct lp_diag d;
	float A[6] = { 1, 2, 3, 4, 5, 6 }, B[6] = { 1, 0, -1, 2, 0.5f, 1 }, C[4];

	if (fork && !strcmp(fork, "no"))
		return;
	setenv("LPIPE_BLAS", "/nonexistent/libnoblas.so", 1);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_blas_load(&d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "/nonexistent/libnoblas.so"));
	ck_assert_ptr_nonnull(strstr(d.msg, "libopenblas0"));
	ck_assert_str_eq(lp_blas_core_name(), "none");
	ck_assert_ptr_null(lp_blas_library());
	/* [1 2 3; 4 5 6] x [1 0; -1 2; 0.5 1] */
	lp_blas_sgemm(LP_BLAS_ROW_MAJOR, LP_BLAS_NO_TRANS, LP_BLAS_NO_TRANS, 2, 2, 3, 1.0f, A, 3,
		      B, 2, 0.0f, C, 2);
	ck_assert_float_eq(C[0], 0.5f);
	ck_assert_float_eq(C[1], 7.0f);
	ck_assert_float_eq(C[2], 2.0f);
	ck_assert_float_eq(C[3], 16.0f);
	check_products();
	lp_blas_set_threads(4);   /* no-op, no crash */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("blas");
	TCase *tc = tcase_create("blas");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_sgemm_matches_naive);
	tcase_add_test(tc, test_loader_reports_core);
	tcase_add_test(tc, test_missing_library);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
