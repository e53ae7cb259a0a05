/* check_backend.c - the CPU backend's ops against naive references on
 * random inputs of odd shapes, the backend registry, and the forward
 * pass split between two backends (gpu_layers) with the CPU backend
 * standing in for a device. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matvec.h"
#include "core/mem.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/model.h"
#include "retrieve/hashembed.h"
#include "tools/tiny_model.h"
#include "ref_rank.h"

static uint64_t rng = 88172645463325252ull;

static float frand(void) /* uniform in [-1, 1) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 40) / (double)(1 << 24)) * 2.0f - 1.0f;
}

static float *rand_vec(size_t n, float scale)
{
	float *v = malloc(n * sizeof(float));

	for (size_t i = 0; i < n; i++)
		v[i] = frand() * scale;
	return v;
}

/* max |a - b| / max(max |b|, 1e-30) */
static double rel_err(const float *a, const double *b, size_t n)
{
	double num = 0, den = 1e-30;

	for (size_t i = 0; i < n; i++) {
		num = fmax(num, fabs(a[i] - b[i]));
		den = fmax(den, fabs(b[i]));
	}
	return num / den;
}

static struct lp_backend *cpu(int threads, uint32_t gemm_min)
{
	struct lp_backend_params p = lp_backend_default_params();
	struct lp_backend *be;
	struct lp_diag d;

	p.n_threads = threads;
	p.gemm_min = gemm_min;
	lp_diag_init(&d);
	ck_assert_msg(lp_backend_open("cpu", &p, &be, &d) == LP_OK, "%s", d.msg);
	return be;
}

static void reserve(struct lp_backend *be, uint32_t rows, uint64_t cols, uint32_t n_ctx,
		    uint32_t kv_dim, enum lp_qtype kv, uint32_t n_head, uint32_t n_rot)
{
	/* head_dim as n_rot: the attention tests give both as the head's */
	struct lp_backend_limits lim = { rows, cols, 4096, n_ctx, kv_dim, kv, n_head, n_rot, 0, 0,
					 n_rot };
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_msg(be->ops->reserve(be, &lim, &d) == LP_OK, "%s", d.msg);
}

/* ---- matmul ------------------------------------------------------------ */

static const enum lp_qtype types[] = {
	LP_Q_F32, LP_Q_F16, LP_Q_BF16, LP_Q_Q4_0, LP_Q_Q4_1, LP_Q_Q5_0,
	LP_Q_Q5_1, LP_Q_Q8_0, LP_Q_Q4_K, LP_Q_Q5_K, LP_Q_Q6_K,
};
#define N_TYPES (sizeof(types) / sizeof(types[0]))

/* Tolerance of the mat-vec (8-bit activations for quantized weights) by
 * type: f32 exact up to rounding, f16/bf16 as their float input, the
 * quantized types as the activation quantization allows. The GEMM path
 * multiplies dequantized weights by float activations: 1e-5 for all. */
static double tol_matvec(enum lp_qtype t)
{
	return t == LP_Q_F32 ? 1e-5 : t == LP_Q_F16 || t == LP_Q_BF16 ? 1e-5 : 2e-2;
}

/* Y = X W^T with W random of type t (odd row count), n rows of X; against
 * a double loop over the reference dequantization. */
static void check_matmul(enum lp_qtype t, size_t n, uint32_t gemm_min, double tol)
{
	size_t cols = lp_qtype_block_elems(t) == 256 ? 512 : 96, rows = 37, ldy = rows + 3;
	size_t rb = lp_qtype_row_bytes(t, cols);
	struct lp_backend *be = cpu(2, gemm_min);
	float *wf = rand_vec(rows * cols, 1.0f), *x = rand_vec(n * cols, 1.0f);
	float *deq = malloc(rows * cols * sizeof(float)), *y = malloc(n * ldy * sizeof(float));
	double *ref = malloc(n * rows * sizeof(double));
	uint8_t *w = malloc(rows * rb);
	struct lp_backend_mat W = { t, w, rows, cols, rb, 0, NULL };
	float *yr = malloc(n * rows * sizeof(float));

	for (size_t r = 0; r < rows; r++) {
		lp_quantize_row(t, wf + r * cols, w + r * rb, cols);
		lp_dequantize_row(t, w + r * rb, deq + r * cols, cols);
	}
	for (size_t i = 0; i < n * ldy; i++)
		y[i] = 12345.0f;
	reserve(be, (uint32_t)n, cols, 0, 0, LP_Q_F32, 0, 0);
	be->ops->matmul(be, &W, x, n, y, ldy);
	ck_assert_int_eq(be->ops->sync(be, NULL), LP_OK);
	for (size_t k = 0; k < n; k++) {
		for (size_t r = 0; r < rows; r++) {
			double s = 0;
			for (size_t c = 0; c < cols; c++)
				s += (double)deq[r * cols + c] * x[k * cols + c];
			ref[k * rows + r] = s;
			yr[k * rows + r] = y[k * ldy + r];
		}
		for (size_t r = rows; r < ldy; r++)
			ck_assert_msg(y[k * ldy + r] == 12345.0f, "matmul wrote past W->rows");
	}
	ck_assert_msg(rel_err(yr, ref, n * rows) < tol, "%s n=%zu: error %g over %g",
		      lp_qtype_name(t), n, rel_err(yr, ref, n * rows), tol);
	free(wf), free(x), free(deq), free(y), free(ref), free(w), free(yr);
	lp_backend_free(be);
}

/*
 * matmul_many against one matmul per product on the same backend, bit
 * for bit: products of odd row counts (so that their rows, end to end,
 * fall across the pool's chunks) and of mixed activation formats (float,
 * blocks of 32, blocks of 256), decode and a few tokens, with scratch for
 * one row (the second format then goes one product at a time) and more.
 */
static void check_matmul_many(const enum lp_qtype *ts, size_t count, size_t n, int threads,
			      uint32_t scratch_rows)
{
	size_t cols = 512, rows[LP_BACKEND_MATMUL_MANY] = { 37, 13, 61, 5 };
	struct lp_backend *be = cpu(threads, 16);
	float *x = rand_vec(n * cols, 1.0f);
	struct lp_backend_mat W[LP_BACKEND_MATMUL_MANY];
	struct lp_backend_mm mm[LP_BACKEND_MATMUL_MANY];
	float *want[LP_BACKEND_MATMUL_MANY];

	reserve(be, scratch_rows, cols, 0, 0, LP_Q_F32, 0, 0);
	for (size_t i = 0; i < count; i++) {
		size_t rb = lp_qtype_row_bytes(ts[i], cols), ldy = rows[i] + 2;
		float *wf = rand_vec(rows[i] * cols, 1.0f);
		uint8_t *w = malloc(rows[i] * rb);
		for (size_t r = 0; r < rows[i]; r++)
			lp_quantize_row(ts[i], wf + r * cols, w + r * rb, cols);
		free(wf);
		W[i] = (struct lp_backend_mat){ ts[i], w, rows[i], cols, rb, 0, NULL };
		mm[i] = (struct lp_backend_mm){ &W[i], malloc(n * ldy * sizeof(float)), ldy };
		want[i] = malloc(n * ldy * sizeof(float));
		for (size_t k = 0; k < n * ldy; k++)
			mm[i].Y[k] = want[i][k] = 12345.0f;
		be->ops->matmul(be, &W[i], x, n, want[i], ldy);
	}
	be->ops->matmul_many(be, x, n, mm, count);
	ck_assert_int_eq(be->ops->sync(be, NULL), LP_OK);
	for (size_t i = 0; i < count; i++) {
		ck_assert_msg(!memcmp(mm[i].Y, want[i], n * mm[i].ldy * sizeof(float)),
			      "matmul_many: product %zu (%s) of %zu, n=%zu, %d threads differs",
			      i, lp_qtype_name(ts[i]), count, n, threads);
		free(mm[i].Y), free(want[i]), free((void *)W[i].data);
	}
	free(x);
	lp_backend_free(be);
}

START_TEST(test_matmul_many)
{
	static const enum lp_qtype sets[][3] = {
		{ LP_Q_Q4_1, LP_Q_Q4_1, LP_Q_Q4_1 },  /* SmolLM2's Q, K, V */
		{ LP_Q_Q5_0, LP_Q_Q5_0, LP_Q_Q8_0 },
		{ LP_Q_Q4_K, LP_Q_Q4_K, LP_Q_Q6_K },
		{ LP_Q_Q4_K, LP_Q_Q8_0, LP_Q_F32 },   /* three formats */
		{ LP_Q_F16, LP_Q_Q6_K, LP_Q_Q4_0 },
	};

	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++)
		for (int th = 1; th <= 3; th += 2) {
			check_matmul_many(sets[s], 3, 1, th, 4);
			check_matmul_many(sets[s], 2, 1, th, 1);
			check_matmul_many(sets[s], 3, 1, th, 1);
			check_matmul_many(sets[s], 3, 3, th, 4);
		}
}
END_TEST

START_TEST(test_matmul_decode)
{
	check_matmul(types[_i], 1, 16, tol_matvec(types[_i]));
	check_matmul(types[_i], 3, 16, tol_matvec(types[_i]));
}
END_TEST

/* The GEMM path: dequantized weights by float activations, 1e-5; or the
 * int8 batch product of the kernel set (kernels.h), on the mat-vec's 8-bit
 * activations, with the mat-vec's tolerance. */
static double tol_prefill(enum lp_qtype t)
{
	const struct lp_q8_gemm *q8 = lp_cpu_kernels()->q8_gemm;

	return q8 && q8->has(t) ? tol_matvec(t) : 1e-5;
}

START_TEST(test_matmul_prefill)
{
	check_matmul(types[_i], 19, 16, tol_prefill(types[_i]));
}
END_TEST

START_TEST(test_get_rows)
{
	enum lp_qtype t = types[_i];
	size_t cols = lp_qtype_block_elems(t) == 256 ? 256 : 64, rows = 11;
	size_t rb = lp_qtype_row_bytes(t, cols);
	struct lp_backend *be = cpu(1, 16);
	float *wf = rand_vec(rows * cols, 1.0f), *out = malloc(3 * cols * sizeof(float));
	float *want = malloc(cols * sizeof(float));
	uint8_t *w = malloc(rows * rb);
	struct lp_backend_mat W = { t, w, rows, cols, rb, 0, NULL };
	int32_t ids[3] = { 10, 0, 7 };

	for (size_t r = 0; r < rows; r++)
		lp_quantize_row(t, wf + r * cols, w + r * rb, cols);
	be->ops->get_rows(be, &W, ids, 3, out);
	for (int k = 0; k < 3; k++) {
		lp_dequantize_row(t, w + (size_t)ids[k] * rb, want, cols);
		ck_assert_msg(!memcmp(out + k * cols, want, cols * sizeof(float)), "row %d", ids[k]);
	}
	free(wf), free(out), free(want), free(w);
	lp_backend_free(be);
}
END_TEST

/* ---- kernel sets ------------------------------------------------------- */

/* The SIMD sets in order of speed; NULL where not built or not run here. */
static const struct lp_cpu_kernels *simd_set(int i)
{
	return i == 0 ? lp_cpu_kernels_avx2() : lp_cpu_kernels_avx512();
}

static int is_float(enum lp_qtype t)
{
	return t == LP_Q_F32 || t == LP_Q_F16 || t == LP_Q_BF16;
}

/*
 * Widths of odd shape for type t: one block, an odd number of blocks,
 * and a long row; floats also take widths that are no multiple of 8 or
 * 16 (the vector tails).
 */
static size_t kernel_widths(enum lp_qtype t, size_t w[4])
{
	if (is_float(t)) {
		w[0] = 7, w[1] = 33, w[2] = 1001, w[3] = 1536;
		return 4;
	}
	if (lp_qtype_block_elems(t) == 256) {
		w[0] = 256, w[1] = 768, w[2] = 2816;
		return 3;
	}
	w[0] = 32, w[1] = 160, w[2] = 1056, w[3] = 4864;
	return 4;
}

/*
 * Every dot kernel of a SIMD set against the scalar set's on the same
 * weights and quantized activations, 37 rows (an odd count) per width:
 * the integer sums per block are exact in both, so they differ only in the
 * order of the float sums: |fast - ref| <= 1e-5 * sum |w_i a_i| + 1e-6.
 * The four-row kernels give the one-row kernel's floats bit for bit. The
 * activation quantizers and the dequantizer do exact arithmetic: the
 * reference's bytes and floats bit for bit.
 */
START_TEST(test_kernel_sets)
{
	const struct lp_cpu_kernels *k = simd_set(_i), *ref = lp_cpu_kernels_scalar();
	enum { ROWS = 37 };

	if (!k)
		return;  /* not built, or this CPU lacks it */
	for (size_t ti = 0; ti < N_TYPES; ti++) {
		enum lp_qtype t = types[ti];
		size_t widths[4], nw = kernel_widths(t, widths);
		for (size_t wi = 0; wi < nw; wi++) {
			size_t cols = widths[wi], rb = lp_qtype_row_bytes(t, cols);
			float *wf = rand_vec(ROWS * cols, 1.0f), *x = rand_vec(cols, 2.0f);
			float *deq = malloc(cols * sizeof(float)), *deq_fast = malloc(cols * sizeof(float));
			double xmax = 0;
			uint8_t *w = malloc(ROWS * rb);
			size_t ab = lp_q8_act_bytes(t, cols) + 1;
			struct lp_q8_act a = { 0, malloc(ab), ab }, af = { 0, malloc(ab), ab };
			const void *act = is_float(t) ? (const void *)x : a.blocks;
			lp_dot_fn dot = lp_cpu_dot(k, t), dref = lp_cpu_dot(ref, t);
			lp_dot4_fn dot4 = lp_cpu_dot4(k, t);
			void (*quant)(const float *, size_t, void *) =
				lp_qtype_block_elems(t) == 256 ? k->act_q8_256 : k->act_q8_32;

			x[0] = 0.0f;
			for (size_t c = 0; c < cols; c++)
				xmax = fmax(xmax, fabs(x[c]));
			for (size_t r = 0; r < ROWS; r++)
				lp_quantize_row(t, wf + r * cols, w + r * rb, cols);
			if (!is_float(t)) {
				lp_q8_act_quantize_ref(t, x, cols, &a);
				if (quant) {
					quant(x, cols, af.blocks);
					ck_assert_msg(!memcmp(a.blocks, af.blocks, lp_q8_act_bytes(t, cols)),
						      "%s %s act bytes", k->name, lp_qtype_name(t));
				}
			}
			for (size_t r = 0; r < ROWS; r++) {
				const uint8_t *row = w + r * rb;
				double mag = 0;
				float yf = dot(row, act, cols), yr = dref(row, act, cols);
				lp_dequantize_row_ref(t, row, deq, cols);
				if (k->dequant && k->dequant(t, row, deq_fast, cols))
					ck_assert_msg(!memcmp(deq, deq_fast, cols * sizeof(float)),
						      "%s %s dequant row %zu", k->name, lp_qtype_name(t), r);
				/* sum |w_i a_i| over the activations the kernels see: an
				 * 8-bit one is within half a step (xmax / 254) of x */
				for (size_t c = 0; c < cols; c++)
					mag += fabs((double)deq[c]) *
					       (fabs(x[c]) + (is_float(t) ? 0 : xmax / 254));
				ck_assert_msg(fabs((double)yf - yr) <= 1e-5 * mag + 1e-6,
					      "%s %s %zu cols row %zu: %.9g vs ref %.9g", k->name,
					      lp_qtype_name(t), cols, r, yf, yr);
				if (dot4 && r + 4 <= ROWS && r % 4 == 0) {
					float y4[4];
					dot4(row, rb, act, cols, y4);
					for (int q = 0; q < 4; q++)
						ck_assert(y4[q] == dot(row + q * rb, act, cols));
				}
			}
			free(wf), free(x), free(deq), free(deq_fast), free(w);
			free(a.blocks), free(af.blocks);
		}
	}
}
END_TEST

static const char *const set_names[] = { "scalar", "avx2", "avx512" };

/*
 * LPIPE_CPU=scalar|avx2|avx512 forces that set, or the fastest below it
 * that the CPU runs; other values force nothing. In a forked test (Check's
 * default) the variable is set before the process first chooses, and the
 * backend's products on every type are checked on the forced set.
 */
START_TEST(test_forced_set)
{
	const struct lp_cpu_kernels *best = lp_cpu_kernels_forced(NULL), *want;
	const char *fork = getenv("CK_FORK");

	want = _i == 2 && lp_cpu_kernels_avx512() ? lp_cpu_kernels_avx512() :
	       _i >= 1 && lp_cpu_kernels_avx2() ? lp_cpu_kernels_avx2() : lp_cpu_kernels_scalar();
	ck_assert_ptr_eq(lp_cpu_kernels_forced(set_names[_i]), want);
	ck_assert_ptr_eq(lp_cpu_kernels_forced("no-such-set"), best);
	ck_assert_ptr_eq(best, lp_cpu_kernels_avx512() ? lp_cpu_kernels_avx512() :
			       lp_cpu_kernels_avx2() ? lp_cpu_kernels_avx2() :
			       lp_cpu_kernels_scalar());
	if (fork && !strcmp(fork, "no"))
		return;  /* the set was chosen before this test */
	setenv("LPIPE_CPU", set_names[_i], 1);
	ck_assert_str_eq(lp_matvec_kernel_name(), want->name);
	for (size_t t = 0; t < N_TYPES; t++) {
		check_matmul(types[t], 1, 16, tol_matvec(types[t]));
		check_matmul(types[t], 3, 16, tol_matvec(types[t]));
		check_matmul(types[t], 19, 16, tol_prefill(types[t]));
	}
}
END_TEST

/* One case of test_q8_gemm: n tokens of cols columns of type t. */
static void check_q8_case(const struct lp_cpu_kernels *k, enum lp_qtype t, size_t cols, size_t n)
{
	enum { ROWS = 37, LDY = ROWS + 3 };
	size_t rb = lp_qtype_row_bytes(t, cols), ab = lp_q8_act_bytes(t, cols);
	size_t ng = (n + LP_Q8_GROUP - 1) / LP_Q8_GROUP;
	float *wf = rand_vec(ROWS * cols, 1.0f), *x = rand_vec(n * cols, 2.0f);
	float *y = malloc(n * LDY * sizeof(float)), *deq = malloc(cols * sizeof(float));
	double *xmax = calloc(n, sizeof(double));
	uint8_t *w = malloc(ROWS * rb), *blocks = malloc(n * ab);
	void *pack = malloc(lp_q8_gemm_pack_bytes(n, cols));
	void *wbuf = malloc(lp_q8_gemm_wbuf_bytes(cols));
	struct lp_q8_act *xq = malloc(n * sizeof(*xq));
	lp_dot_fn dref = lp_cpu_dot(lp_cpu_kernels_scalar(), t);

	for (size_t r = 0; r < ROWS; r++)
		lp_quantize_row(t, wf + r * cols, w + r * rb, cols);
	for (size_t i = 0; i < n; i++) {
		xq[i] = (struct lp_q8_act){ 0, blocks + i * ab, ab };
		lp_q8_act_quantize_ref(t, x + i * cols, cols, &xq[i]);
		for (size_t c = 0; c < cols; c++)
			xmax[i] = fmax(xmax[i], fabs(x[i * cols + c]));
	}
	for (size_t i = 0; i < n * LDY; i++)
		y[i] = 12345.0f;
	k->q8_gemm->pack(t, xq, n, cols, pack, 0, 1);
	k->q8_gemm->pack(t, xq, n, cols, pack, 1, ng);
	k->q8_gemm->rows(t, w, rb, cols, pack, n, y, LDY, 0, 13, wbuf);
	k->q8_gemm->rows(t, w, rb, cols, pack, n, y, LDY, 13, ROWS, wbuf);
	for (size_t r = 0; r < ROWS; r++) {
		lp_dequantize_row_ref(t, w + r * rb, deq, cols);
		for (size_t i = 0; i < n; i++) {
			const float *xi = x + i * cols;
			float want = dref(w + r * rb, xq[i].blocks, cols), got = y[i * LDY + r];
			double mag = 0;
			/* an 8-bit activation is within half a step of x */
			for (size_t c = 0; c < cols; c++)
				mag += fabs((double)deq[c]) * (fabs(xi[c]) + xmax[i] / 254);
			ck_assert_msg(fabs((double)got - want) <= 1e-5 * mag + 1e-6,
				      "%s %s %zu cols, %zu tokens, row %zu token %zu: %.9g vs %.9g",
				      k->name, lp_qtype_name(t), cols, n, r, i, got, want);
		}
	}
	for (size_t i = 0; i < n; i++)
		for (size_t r = ROWS; r < LDY; r++)
			ck_assert(y[i * LDY + r] == 12345.0f);
	free(wf), free(x), free(y), free(deq), free(xmax), free(w), free(blocks), free(pack);
	free(wbuf), free(xq);
}

/*
 * The int8 batch product of a set against the scalar mat-vec, token by
 * token, on the same 8-bit activations: the same integer sums per block,
 * so within 1e-5 * sum |w a| + 1e-6; for token counts below, at and past
 * a pack group (1, 19, 32, 70), 37 rows (not a multiple of the 4 a tile
 * takes), rows split between two calls as threads split them, and
 * nothing written past the rows asked for.
 */
START_TEST(test_q8_gemm)
{
	const struct lp_cpu_kernels *k = simd_set(_i);
	static const size_t tokens[] = { 1, 19, 32, 70 }, legacy_w[] = { 32, 160, 1056 };
	static const size_t k_w[] = { 256, 768, 2816 };
	int checked = 0;

	if (!k || !k->q8_gemm)
		return;
	for (size_t ti = 0; ti < N_TYPES; ti++) {
		enum lp_qtype t = types[ti];
		if (!k->q8_gemm->has(t))
			continue;
		for (size_t wi = 0; wi < 3; wi++)
			for (size_t ni = 0; ni < 4; ni++, checked++)
				check_q8_case(k, t, lp_qtype_block_elems(t) == 256 ? k_w[wi] : legacy_w[wi],
					      tokens[ni]);
	}
	ck_assert_int_gt(checked, 0);
}
END_TEST

/* A float rounded to the nearest BF16, ties to even (normal numbers). */
static double bf16_round(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	u = (u + 0x7fffu + ((u >> 16) & 1)) & 0xffff0000u;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* One case of test_bf16_gemm: Y (n x m, ldy = m + 5) = X W^T over k
 * columns (plus a bias when `with_bias`), X and W rows of k + 3 (strided),
 * scratch of `bytes`. */
static void check_bf16_case(const struct lp_cpu_kernels *k, size_t n, size_t m, size_t kc,
			    size_t bytes, int with_bias)
{
	size_t ldx = kc + 3, ldy = m + 5;
	float *x = rand_vec(n * ldx, 2.0f), *w = rand_vec(m * ldx, 1.0f);
	float *bias = with_bias ? rand_vec(m, 4.0f) : NULL;
	float *y = malloc(n * ldy * sizeof(float));
	void *scratch = malloc(bytes + 1);

	for (size_t i = 0; i < n * ldy; i++)
		y[i] = 12345.0f;
	/* an unaligned scratch: the kernel aligns it itself */
	k->gemm_bf16(n, m, kc, x, ldx, w, ldx, bias, y, ldy, (char *)scratch + 1, bytes);
	for (size_t t = 0; t < n; t++)
		for (size_t r = 0; r < m; r++) {
			double b0 = bias ? bias[r] : 0;
			double want = b0, exact = b0, mag = fabs(b0);
			for (size_t c = 0; c < kc; c++) {
				double a = x[t * ldx + c], b = w[r * ldx + c];
				want += bf16_round((float)a) * bf16_round((float)b);
				exact += a * b;
				mag += fabs(a * b);
			}
			double got = y[t * ldy + r];
			/* float sums of exact BF16 products, k/2 of them a lane
			 * (2^-24 each); and the product of two roundings of at
			 * most 2^-9 each from the float one */
			ck_assert_msg(fabs(got - want) <= (kc / 2 + 4) * 0x1p-24 * mag + 1e-7,
				      "%zu x %zu x %zu: Y[%zu][%zu] %.9g vs %.9g", n, m, kc, t, r, got,
				      want);
			ck_assert_msg(fabs(got - exact) <= 4.0 / 512 * mag + 1e-6,
				      "%zu x %zu x %zu: Y[%zu][%zu] %.9g vs float %.9g", n, m, kc, t, r,
				      got, exact);
		}
	for (size_t t = 0; t < n; t++)
		for (size_t r = m; r < ldy; r++)
			ck_assert(y[t * ldy + r] == 12345.0f);
	free(x), free(w), free(y), free(scratch), free(bias);
}

/*
 * The BF16 product of a set, where it has one, against the double sum of
 * the BF16-rounded operands (within (k/2 + 4) 2^-24 of sum |x w|: only
 * the float sums differ) and against the float product (within 4 * 2^-9): row
 * counts below, at and past a tile of 8 (1, 7, 8, 19), weight rows below,
 * at and past a panel of 32 (1, 31, 33, 70), odd widths and one past a
 * vector of 32 (1, 37, 33, 384, 1029), scratch of the least size (a panel
 * at a time) and of plenty, and nothing written past the m columns.
 */
START_TEST(test_bf16_gemm)
{
	const struct lp_cpu_kernels *k = simd_set(_i);
	static const size_t ns[] = { 1, 7, 8, 19 }, ms[] = { 1, 31, 33, 70 };
	static const size_t ks[] = { 1, 37, 33, 384, 1029 };

	if (!k || !k->gemm_bf16)
		return;
	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 4; b++)
			for (size_t c = 0; c < 5; c++) {
				size_t least = lp_cpu_bf16_gemm_scratch(ks[c]);
				check_bf16_case(k, ns[a], ms[b], ks[c], least, 0);
				check_bf16_case(k, ns[a], ms[b], ks[c], 8 * least, 0);
				check_bf16_case(k, ns[a], ms[b], ks[c], least, 1);
			}
}
END_TEST

/*
 * The encoder's element-wise kernels of a set, where it has them, on
 * lengths below, at and past a vector of 16 (1, 15, 16, 17, 333): GELU
 * against the double erf form (within 1e-6 of the largest), the softmax's
 * exponentials against exp() (within 1e-6 each, their sum within 1e-6),
 * and nothing written past the length.
 */
START_TEST(test_enc_kernels)
{
	const struct lp_cpu_kernels *k = simd_set(_i);
	static const size_t ns[] = { 1, 15, 16, 17, 333 };

	if (!k || !k->gelu || !k->exp_shift)
		return;
	for (size_t c = 0; c < sizeof(ns) / sizeof(ns[0]); c++) {
		size_t n = ns[c];
		float *x = rand_vec(n + 1, 6.0f), *y = malloc((n + 1) * sizeof(float));
		double ref[333], sum = 0, mx = -1e30;

		memcpy(y, x, (n + 1) * sizeof(float));
		k->gelu(y, n);
		for (size_t i = 0; i < n; i++)
			ref[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0)));
		ck_assert_double_lt(rel_err(y, ref, n), 1e-6);
		ck_assert(y[n] == x[n]);
		memcpy(y, x, (n + 1) * sizeof(float));
		for (size_t i = 0; i < n; i++)
			mx = fmax(mx, x[i]);
		float got = k->exp_shift(y, n, (float)mx, 0.35f);
		for (size_t i = 0; i < n; i++) {
			double e = exp(((double)x[i] - (float)mx) * 0.35f);
			sum += e;
			ck_assert_msg(fabs(y[i] - e) <= 1e-6 * e, "n %zu: exp %zu: %.9g vs %.9g", n, i,
				      y[i], e);
		}
		ck_assert_msg(fabs(got - sum) <= 1e-6 * sum, "n %zu: sum %.9g vs %.9g", n, got, sum);
		ck_assert(y[n] == x[n]);
		free(x), free(y);
	}
}
END_TEST

/*
 * A matmul of F32 weights that allows BF16 (lp_backend_mat.bf16) on the
 * backend of 2 threads: where the kernels have the BF16 product, within
 * its rounding of the float reference; elsewhere the float product. And
 * each with a bias (lp_backend_mat.bias, so ldy == rows), which must come
 * out added to every row, as must the bias of the product below gemm_min
 * rows (the mat-vec).
 */
static void check_matmul_f32(struct lp_backend *be, size_t n, int bf16, const float *bias)
{
	size_t rows = 75, cols = 130, ldy = bias ? rows : rows + 2;
	float *w = rand_vec(rows * cols, 1.0f), *x = rand_vec(n * cols, 1.0f);
	float *y = malloc(n * ldy * sizeof(float));
	struct lp_backend_mat W = { LP_Q_F32, w, rows, cols, cols * sizeof(float), bf16, bias };
	double tol = bf16 && lp_cpu_kernels()->gemm_bf16 ? 4.0 / 512 : 1e-5;

	be->ops->matmul(be, &W, x, n, y, ldy);
	for (size_t t = 0; t < n; t++)
		for (size_t r = 0; r < rows; r++) {
			double exact = bias ? bias[r] : 0, mag = bias ? fabs(bias[r]) : 0;
			for (size_t c = 0; c < cols; c++) {
				exact += (double)x[t * cols + c] * w[r * cols + c];
				mag += fabs((double)x[t * cols + c] * w[r * cols + c]);
			}
			ck_assert_msg(fabs(y[t * ldy + r] - exact) <= tol * mag,
				      "n %zu bf16 %d bias %d: Y[%zu][%zu] %.9g vs %.9g", n, bf16,
				      bias != NULL, t, r, y[t * ldy + r], exact);
		}
	free(w), free(x), free(y);
}

START_TEST(test_matmul_bf16_flag)
{
	struct lp_backend *be = cpu(2, 16);
	float *bias = rand_vec(75, 3.0f);

	for (int bf16 = 0; bf16 < 2; bf16++) {
		check_matmul_f32(be, 21, bf16, NULL);
		check_matmul_f32(be, 21, bf16, bias);
		check_matmul_f32(be, 3, bf16, bias);
	}
	lp_backend_free(be);
	free(bias);
}
END_TEST

/* ---- element-wise ------------------------------------------------------ */

START_TEST(test_norms)
{
	size_t n = 3, width = 77;
	struct lp_backend *be = cpu(1, 16);
	float *x = rand_vec(n * width, 3.0f), *w = rand_vec(width, 1.0f), *b = rand_vec(width, 1.0f);
	float *out = malloc(n * width * sizeof(float));
	double *ref = malloc(n * width * sizeof(double));

	be->ops->rmsnorm(be, out, x, w, n, width, 1e-5f);
	for (size_t t = 0; t < n; t++) {
		double ss = 0;
		for (size_t i = 0; i < width; i++)
			ss += (double)x[t * width + i] * x[t * width + i];
		for (size_t i = 0; i < width; i++)
			ref[t * width + i] = x[t * width + i] / sqrt(ss / width + 1e-5) * w[i];
	}
	ck_assert_double_lt(rel_err(out, ref, n * width), 1e-6);
	be->ops->layernorm(be, out, x, w, b, n, width, 1e-12f);
	for (size_t t = 0; t < n; t++) {
		double mean = 0, var = 0;
		for (size_t i = 0; i < width; i++)
			mean += x[t * width + i];
		mean /= width;
		for (size_t i = 0; i < width; i++)
			var += (x[t * width + i] - mean) * (x[t * width + i] - mean);
		for (size_t i = 0; i < width; i++)
			ref[t * width + i] = (x[t * width + i] - mean) / sqrt(var / width + 1e-12) *
					     w[i] + b[i];
	}
	ck_assert_double_lt(rel_err(out, ref, n * width), 1e-6);
	/* in place is allowed */
	be->ops->rmsnorm(be, x, x, w, n, width, 1e-5f);
	free(x), free(w), free(b), free(out), free(ref);
	lp_backend_free(be);
}
END_TEST

/* Both pairings, n_rot < head_dim, several positions. */
START_TEST(test_rope)
{
	enum lp_rope_mode mode = _i ? LP_ROPE_NEOX : LP_ROPE_ADJACENT;
	struct lp_backend_rope r = { mode, 24, 16, 10000.0f };
	size_t n = 5, heads = 3, width = heads * r.head_dim;
	uint32_t pos0 = 7;
	struct lp_backend *be = cpu(1, 16);
	float *x = rand_vec(n * width, 1.0f), *y = malloc(n * width * sizeof(float));
	double *ref = malloc(n * width * sizeof(double));

	reserve(be, (uint32_t)n, 64, 0, 0, LP_Q_F32, 0, r.n_rot);
	memcpy(y, x, n * width * sizeof(float));
	be->ops->rope(be, y, n, (uint32_t)heads, pos0, &r);
	for (size_t t = 0; t < n; t++)
		for (size_t h = 0; h < heads; h++) {
			const float *v = x + t * width + h * r.head_dim;
			double *o = ref + t * width + h * r.head_dim;
			for (size_t i = 0; i < r.head_dim; i++)
				o[i] = v[i];
			for (size_t i = 0; i < r.n_rot / 2; i++) {
				size_t a = mode == LP_ROPE_ADJACENT ? 2 * i : i;
				size_t b = mode == LP_ROPE_ADJACENT ? 2 * i + 1 : i + r.n_rot / 2;
				double th = (pos0 + t) * pow(r.base, -2.0 * i / r.n_rot);
				o[a] = v[a] * cos(th) - v[b] * sin(th);
				o[b] = v[a] * sin(th) + v[b] * cos(th);
			}
		}
	ck_assert_double_lt(rel_err(y, ref, n * width), 1e-6);
	free(x), free(y), free(ref);
	lp_backend_free(be);
}
END_TEST

START_TEST(test_swiglu_gelu_add)
{
	size_t n = 4, width = 45, count = n * width;
	struct lp_backend *be = cpu(1, 16);
	float *g = rand_vec(count, 4.0f), *u = rand_vec(count, 1.0f), *out = malloc(count * 4);
	float *bias = rand_vec(width, 1.0f), *y = malloc(count * 4);
	double *ref = malloc(count * sizeof(double));

	be->ops->swiglu(be, out, g, u, count);
	for (size_t i = 0; i < count; i++)
		ref[i] = g[i] / (1 + exp(-(double)g[i])) * u[i];
	ck_assert_double_lt(rel_err(out, ref, count), 1e-6);
	memcpy(out, g, count * 4);
	be->ops->gelu(be, out, count);
	for (size_t i = 0; i < count; i++)
		ref[i] = 0.5 * g[i] * (1 + erf(g[i] / sqrt(2.0)));
	ck_assert_double_lt(rel_err(out, ref, count), 1e-6);
	memcpy(y, g, count * 4);
	be->ops->add(be, y, u, n, width, width);
	be->ops->add(be, y, bias, n, width, 0);
	for (size_t i = 0; i < count; i++)
		ref[i] = (double)g[i] + u[i] + bias[i % width];
	ck_assert_double_lt(rel_err(y, ref, count), 1e-6);
	free(g), free(u), free(out), free(bias), free(y), free(ref);
	lp_backend_free(be);
}
END_TEST


/* ---- encoder and retrieval ops ------------------------------------------ */

/* LayerNorm (the vector rows: width a multiple of 8), GELU and add over
 * more rows than one pool chunk, on 2 threads, against double loops. */
START_TEST(test_encoder_elementwise)
{
	size_t n = 300, width = 384, count = n * width;
	struct lp_backend *be = cpu(2, 16);
	float *x = rand_vec(count, 3.0f), *w = rand_vec(width, 1.0f), *b = rand_vec(width, 1.0f);
	float *out = malloc(count * sizeof(float)), *y = malloc(count * sizeof(float));
	double *ref = malloc(count * sizeof(double));

	be->ops->layernorm(be, out, x, w, b, n, width, 1e-12f);
	for (size_t t = 0; t < n; t++) {
		double mean = 0, var = 0;
		for (size_t i = 0; i < width; i++)
			mean += x[t * width + i];
		mean /= width;
		for (size_t i = 0; i < width; i++)
			var += (x[t * width + i] - mean) * (x[t * width + i] - mean);
		for (size_t i = 0; i < width; i++)
			ref[t * width + i] = (x[t * width + i] - mean) / sqrt(var / width + 1e-12) *
					     w[i] + b[i];
	}
	ck_assert_double_lt(rel_err(out, ref, count), 1e-5);
	memcpy(y, x, count * sizeof(float));
	be->ops->layernorm(be, y, y, w, b, n, width, 1e-12f); /* in place */
	ck_assert_double_lt(rel_err(y, ref, count), 1e-5);
	memcpy(out, x, count * sizeof(float));
	be->ops->gelu(be, out, count - 3); /* a tail the vector loop leaves */
	for (size_t i = 0; i < count; i++)
		ref[i] = i < count - 3 ? 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0))) : x[i];
	ck_assert_double_lt(rel_err(out, ref, count), 1e-6);
	memcpy(y, x, count * sizeof(float));
	be->ops->add(be, y, out, n, width, width);
	for (size_t i = 0; i < count; i++)
		ref[i] = (double)x[i] + out[i];
	ck_assert_double_lt(rel_err(y, ref, count), 1e-6);
	free(x), free(w), free(b), free(out), free(y), free(ref);
	lp_backend_free(be);
}
END_TEST

/* Three sequences padded to L = 9 (lengths 9, 4, 1), 2 heads of 8, q/k/v
 * interleaved in rows of 3E as the encoder stores them. */
START_TEST(test_enc_attention)
{
	enum { S = 3, L = 9, H = 2, DH = 8, E = H * DH };
	int32_t lens[S] = { 9, 4, 1 };
	struct lp_backend *be = cpu(2, 16);
	struct lp_backend_limits lim = { 0 };
	float *qkv = rand_vec(S * L * 3 * E, 1.0f), *out = malloc(S * L * E * sizeof(float));
	double ref[S * L * E];
	struct lp_backend_enc_attn a = { qkv, qkv + E, qkv + 2 * E, 3 * E, out, lens, S, L, H, DH,
					 0.35f };
	struct lp_diag d;

	lp_diag_init(&d);
	lim.n_rows = S * L;
	lim.max_cols = E;
	lim.n_head = H;
	lim.enc_len = L;
	ck_assert_int_eq(be->ops->reserve(be, &lim, &d), LP_OK);
	for (size_t i = 0; i < S * L * E; i++)
		out[i] = NAN;
	be->ops->enc_attention(be, &a);
	for (int s = 0; s < S; s++)
		for (int h = 0; h < H; h++)
			for (int i = 0; i < L; i++) {
				double p[L], mx = -1e300, sum = 0;
				double *o = ref + ((size_t)(s * L + i) * E + h * DH);
				for (int j = 0; j < DH; j++)
					o[j] = 0;
				if (i >= lens[s])
					continue;
				for (int j = 0; j < lens[s]; j++) {
					double dot = 0;
					for (int t = 0; t < DH; t++)
						dot += (double)qkv[(s * L + i) * 3 * E + h * DH + t] *
						       qkv[(s * L + j) * 3 * E + E + h * DH + t];
					p[j] = 0.35 * dot;
					mx = fmax(mx, p[j]);
				}
				for (int j = 0; j < lens[s]; j++)
					sum += p[j] = exp(p[j] - mx);
				for (int j = 0; j < lens[s]; j++)
					for (int t = 0; t < DH; t++)
						o[t] += p[j] / sum *
							qkv[(s * L + j) * 3 * E + 2 * E + h * DH + t];
			}
	ck_assert_double_lt(rel_err(out, ref, S * L * E), 1e-5);
	free(qkv), free(out);
	lp_backend_free(be);
}
END_TEST

START_TEST(test_mean_pool_scatter)
{
	enum { S = 3, L = 5, W = 24 };
	int32_t lens[S] = { 5, 2, 0 };
	uint32_t off[S + 1] = { 0, 4, 4, 7 }, bucket[7] = { 3, 9, 3, 23, 1, 1, 0 };
	float val[7] = { 1, 2, -0.5f, 4, 3, -3, 0.25f };
	struct lp_backend *be = cpu(1, 16);
	float *x = rand_vec(S * L * W, 1.0f), out[S * W];
	double ref[S * W];

	be->ops->mean_pool(be, out, x, lens, S, L, W);
	for (int s = 0; s < S; s++) {
		double ss = 0;
		for (int i = 0; i < W; i++) {
			double v = 0;
			for (int t = 0; t < lens[s]; t++)
				v += x[(s * L + t) * W + i];
			ref[s * W + i] = v;
			ss += v * v;
		}
		for (int i = 0; i < W; i++)
			ref[s * W + i] = ss > 0 ? ref[s * W + i] / sqrt(ss) : 0;
	}
	ck_assert_double_lt(rel_err(out, ref, S * W), 1e-6);
	be->ops->scatter_l2(be, out, S, W, off, bucket, val);
	memset(ref, 0, sizeof(ref));
	for (int r = 0; r < S; r++) {
		double ss = 0;
		for (uint32_t j = off[r]; j < off[r + 1]; j++)
			ref[r * W + bucket[j]] += val[j];
		for (int i = 0; i < W; i++)
			ss += ref[r * W + i] * ref[r * W + i];
		for (int i = 0; i < W; i++)
			ref[r * W + i] = ss > 0 ? ref[r * W + i] / sqrt(ss) : 0;
	}
	ck_assert_double_lt(rel_err(out, ref, S * W), 1e-6);
	/* row 1 has no features: zero; in row 2 bucket 1's two cancel */
	for (int i = 0; i < W; i++)
		ck_assert(out[W + i] == 0);
	ck_assert(out[2 * W + 1] == 0 && out[2 * W] == 1.0f);
	free(x);
	lp_backend_free(be);
}
END_TEST


/* The hashed embedder's pairs through scatter_l2 give its very vectors. */
START_TEST(test_hash_projection)
{
	static const char *texts[] = { "The quick brown fox jumps over the lazy dog dog dog",
				       "", "!!!", "mailbox mail 中文检索 and more words here" };
	enum { N = 4, DIM = 64 };
	struct lp_backend *be = cpu(1, 16);
	struct lp_hashembed *h = lp_hashembed_new(DIM, NULL);
	float want[N * DIM], got[N * DIM];
	uint32_t off[N + 1] = { 0 }, bucket[4096];
	float val[4096];

	ck_assert_ptr_nonnull(h);
	for (int i = 0; i < N; i++) {
		const uint32_t *b;
		const float *v;
		size_t n;
		ck_assert_int_eq(lp_hashembed_pairs(h, texts[i], strlen(texts[i]), &b, &v, &n, NULL),
				 LP_OK);
		ck_assert_uint_le(off[i] + n, 4096);
		memcpy(bucket + off[i], b, n * sizeof(*b));
		memcpy(val + off[i], v, n * sizeof(*v));
		off[i + 1] = off[i] + (uint32_t)n;
		ck_assert_int_eq(lp_hashembed_embed(h, texts[i], strlen(texts[i]), want + i * DIM,
						    NULL, NULL), LP_OK);
	}
	ck_assert_uint_gt(off[1], 10);
	be->ops->scatter_l2(be, got, N, DIM, off, bucket, val);
	ck_assert_mem_eq(got, want, sizeof(got));
	lp_hashembed_free(h);
	lp_backend_free(be);
}
END_TEST

/* Rows with ties, NaN, -0/+0; k below, equal to and above n. */
START_TEST(test_topk)
{
	static const size_t cases[][3] = { { 3, 1000, 10 }, { 2, 50, 50 }, { 2, 7, 20 },
					   { 1, 5000, 1024 }, { 4, 1, 1 } };
	size_t nq = cases[_i][0], n = cases[_i][1], k = cases[_i][2];
	struct lp_backend *be = cpu(2, 16);
	struct lp_backend_limits lim = { 0 };
	float *sc = malloc(nq * n * sizeof(float)), *out = malloc(nq * k * sizeof(float));
	int32_t *idx = malloc(nq * k * sizeof(int32_t));
	struct ranked *r = malloc(n * sizeof(*r));
	struct lp_diag d;

	lp_diag_init(&d);
	lim.n_rows = (uint32_t)nq;
	lim.topk = (uint32_t)k;
	ck_assert_int_eq(be->ops->reserve(be, &lim, &d), LP_OK);
	for (size_t i = 0; i < nq * n; i++) {
		/* few distinct values: many ties */
		sc[i] = (float)((int)(frand() * 40)) / 8.0f;
		if (i % 97 == 5)
			sc[i] = NAN;
		if (i % 89 == 3)
			sc[i] = -0.0f;
	}
	be->ops->topk(be, sc, n, nq, n, k, out, idx);
	for (size_t q = 0; q < nq; q++) {
		for (size_t i = 0; i < n; i++)
			r[i] = (struct ranked){ sc[q * n + i], (int32_t)i };
		qsort(r, n, sizeof(*r), rank_cmp);
		for (size_t j = 0; j < k; j++) {
			if (j >= n) {
				ck_assert_int_eq(idx[q * k + j], -1);
				ck_assert(isinf(out[q * k + j]) && out[q * k + j] < 0);
				continue;
			}
			ck_assert_msg(idx[q * k + j] == r[j].i, "query %zu rank %zu: %d, want %d", q, j,
				      idx[q * k + j], r[j].i);
		}
	}
	free(sc), free(out), free(idx), free(r);
	lp_backend_free(be);
}
END_TEST

/* ---- KV cache and attention -------------------------------------------- */

static const enum lp_qtype kv_types[] = { LP_Q_F32, LP_Q_F16, LP_Q_Q8_0 };

/*
 * Grouped-query attention (nh query heads over nkv KV heads of hd) of a
 * step of n tokens after pos0 cached ones, against a double reference over
 * the rows as the cache holds them (dequantized): the op's error is then
 * only its own float arithmetic. n = 1 and 2 read an F16 cache in place
 * (by groups of heads on the AVX-512 set), n = 6 converts it.
 */
static void check_attention_shape(enum lp_qtype type, uint32_t pos0, uint32_t n, uint32_t hd,
				  uint32_t nh, uint32_t nkv)
{
	uint32_t kv_dim = nkv * hd, n_ctx = pos0 + n + 3, q_dim = nh * hd;
	uint32_t total = pos0 + n;
	size_t row = lp_qtype_row_bytes(type, kv_dim);
	struct lp_backend *be = cpu(2, 16);
	uint8_t *kc = calloc(n_ctx, row), *vc = calloc(n_ctx, row);
	struct lp_backend_kv kv = { type, n_ctx, kv_dim, row, kc, vc };
	float *k = rand_vec((size_t)total * kv_dim, 1.0f), *v = rand_vec((size_t)total * kv_dim, 1.0f);
	float *q = rand_vec((size_t)n * q_dim, 1.0f), *out = malloc((size_t)n * q_dim * 4);
	float *kd = malloc((size_t)total * kv_dim * 4), *vd = malloc((size_t)total * kv_dim * 4);
	double *ref = malloc((size_t)n * q_dim * sizeof(double)), *s = malloc(total * sizeof(double));
	struct lp_backend_attn a = { q, out, &kv, n, pos0, nh, nkv, hd, 1.0f / sqrtf((float)hd) };

	reserve(be, n, q_dim > 128 ? q_dim : 128, n_ctx, kv_dim, type, nh, hd);
	be->ops->kv_store(be, &kv, 0, pos0, k, v);
	be->ops->kv_store(be, &kv, pos0, n, k + (size_t)pos0 * kv_dim, v + (size_t)pos0 * kv_dim);
	be->ops->attention(be, &a);
	lp_backend_cpu_kv_to_f32(&kv, 0, total, kd, vd);
	for (uint32_t p = 0; p < total; p++)   /* the store is the quantizer */
		for (uint32_t i = 0; i < kv_dim; i++)
			ck_assert(fabsf(kd[p * kv_dim + i] - k[p * kv_dim + i]) < 0.02f);
	for (uint32_t t = 0; t < n; t++)
		for (uint32_t h = 0; h < nh; h++) {
			uint32_t kvh = h / (nh / nkv), np = pos0 + t + 1;
			double mx = -INFINITY, sum = 0;
			for (uint32_t p = 0; p < np; p++) {
				double dot = 0;
				for (uint32_t i = 0; i < hd; i++)
					dot += (double)q[t * q_dim + h * hd + i] *
					       kd[p * kv_dim + kvh * hd + i];
				s[p] = dot / sqrt(hd);
				mx = fmax(mx, s[p]);
			}
			for (uint32_t p = 0; p < np; p++)
				sum += s[p] = exp(s[p] - mx);
			for (uint32_t i = 0; i < hd; i++) {
				double o = 0;
				for (uint32_t p = 0; p < np; p++)
					o += s[p] / sum * vd[p * kv_dim + kvh * hd + i];
				ref[t * q_dim + h * hd + i] = o;
			}
		}
	ck_assert_msg(rel_err(out, ref, (size_t)n * q_dim) < 1e-5, "%s pos0 %u n %u: %g",
		      lp_qtype_name(type), pos0, n, rel_err(out, ref, (size_t)n * q_dim));
	free(kc), free(vc), free(k), free(v), free(q), free(out), free(kd), free(vd);
	free(ref), free(s);
	lp_backend_free(be);
}

static void check_attention(enum lp_qtype type, uint32_t pos0, uint32_t n)
{
	check_attention_shape(type, pos0, n, 32, 4, 2);
}

START_TEST(test_attention)
{
	check_attention(kv_types[_i], 0, 1);
	check_attention(kv_types[_i], 9, 1);
	check_attention(kv_types[_i], 5, 2);
	check_attention(kv_types[_i], 0, 6);
	check_attention(kv_types[_i], 31, 6);
}
END_TEST

/*
 * The shapes of the shipped models' decode steps (3 query heads a KV head
 * of 64, SmolLM2; 7, Qwen2.5-0.5B; 9 takes the head-by-head path) over
 * more positions than a chunk of the online softmax (64) holds, and a
 * chunk's end that is no multiple of 16.
 */
START_TEST(test_attention_groups)
{
	static const uint32_t shapes[][3] = { { 64, 9, 3 }, { 64, 14, 2 }, { 128, 6, 2 },
					      { 64, 9, 1 } };
	static const uint32_t pos[][2] = { { 0, 1 }, { 63, 1 }, { 200, 1 }, { 149, 2 } };

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (size_t k = 0; k < sizeof(pos) / sizeof(pos[0]); k++)
			check_attention_shape(LP_Q_F16, pos[k][0], pos[k][1], shapes[i][0],
					      shapes[i][1], shapes[i][2]);
}
END_TEST

/*
 * An F16 cache row is what lp_fp32_to_fp16 makes of each float, bit for
 * bit, whichever way the backend converts (8 at a time with F16C): ties
 * to even, the largest half, overflow to infinity, half subnormals, signed
 * zero, infinities and a NaN's payload, over a row of 45 (a tail of 5).
 */
START_TEST(test_kv_store_f16_exact)
{
	enum { KV = 45 };
	static const float edge[] = { 1.00048828125f, 1.00146484375f, 65504.0f, 65519.0f,
				      65520.0f, 1e-7f, 5.9604645e-8f, 2.9802322e-8f, -0.0f,
				      1e-30f, 0.33333334f, -2.5f };
	struct lp_backend *be = cpu(1, 16);
	size_t row = lp_qtype_row_bytes(LP_Q_F16, KV);
	uint16_t *kc = calloc(2, row), *vc = calloc(2, row);
	struct lp_backend_kv kv = { LP_Q_F16, 2, KV, row, kc, vc };
	float *k = rand_vec(2 * KV, 70000.0f), *v = rand_vec(2 * KV, 1e-4f);
	uint32_t nan_bits = 0x7fa12345u;

	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		k[i] = edge[i];
		v[KV + 40 - i] = -edge[i];
	}
	k[20] = INFINITY;
	v[21] = -INFINITY;
	memcpy(&k[44], &nan_bits, 4);
	be->ops->kv_store(be, &kv, 0, 2, k, v);
	for (size_t i = 0; i < 2 * KV; i++) {
		ck_assert_msg(kc[i] == lp_fp32_to_fp16(k[i]), "k[%zu] = %a: %04x, not %04x", i,
			      (double)k[i], kc[i], lp_fp32_to_fp16(k[i]));
		ck_assert_msg(vc[i] == lp_fp32_to_fp16(v[i]), "v[%zu] = %a: %04x, not %04x", i,
			      (double)v[i], vc[i], lp_fp32_to_fp16(v[i]));
	}
	free(kc), free(vc), free(k), free(v);
	lp_backend_free(be);
}
END_TEST

/* ---- buffers and the registry ------------------------------------------ */

START_TEST(test_buffers)
{
	struct lp_backend_params p = lp_backend_default_params();
	struct lp_backend *host = cpu(1, 16), *dev;
	struct lp_backend_buf *b;
	float src[5] = { 1, 2, 3, 4, 5 }, back[5];
	struct lp_diag d;
	size_t gw = lp_mem_current(LP_MEM_GPU_WEIGHTS);

	lp_diag_init(&d);
	/* the CPU aliases what it imports, counting nothing */
	b = host->ops->import(host, src, sizeof(src), LP_MEM_GPU_WEIGHTS, &d);
	ck_assert_ptr_eq(b->data, src);
	ck_assert_ptr_eq(b->host, src);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_GPU_WEIGHTS), gw);
	host->ops->buf_free(host, b);
	/* as a device: copies, counted under the tag; no host address */
	p.n_threads = 1;
	p.as_device = 1;
	ck_assert_int_eq(lp_backend_open("cpu", &p, &dev, &d), LP_OK);
	ck_assert_int_eq(dev->place, LP_BACKEND_DEVICE);
	b = dev->ops->import(dev, src, sizeof(src), LP_MEM_GPU_WEIGHTS, &d);
	ck_assert_ptr_null(b->host);
	ck_assert_ptr_ne(b->data, src);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_GPU_WEIGHTS), gw + sizeof(src));
	dev->ops->upload(dev, b, 4, src, 8);
	ck_assert_int_eq(dev->ops->download(dev, back, b, 0, sizeof(back), &d), LP_OK);
	ck_assert(back[0] == 1 && back[1] == 1 && back[2] == 2 && back[3] == 4);
	dev->ops->buf_free(dev, b);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_GPU_WEIGHTS), gw);
	/* the device budget refuses device tags only */
	lp_mem_set_gpu_budget(16);
	ck_assert_ptr_null(dev->ops->buf_alloc(dev, LP_BACKEND_DEVICE, LP_MEM_GPU_KV, 64, &d));
	ck_assert_int_eq(d.status, LP_E_NOMEM);
	ck_assert_msg(strstr(d.msg, "device memory budget exceeded") != NULL, "%s", d.msg);
	b = host->ops->buf_alloc(host, LP_BACKEND_HOST, LP_MEM_SCRATCH, 64, &d);
	ck_assert_ptr_nonnull(b);
	host->ops->buf_free(host, b);
	lp_mem_set_gpu_budget(0);
	lp_backend_free(dev);
	lp_backend_free(host);
}
END_TEST

START_TEST(test_registry)
{
	struct lp_backend *be;
	struct lp_backend_device devs[4];
	struct lp_diag d;
	char why[256] = "";
	int n;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_backend_open("tpu", NULL, &be, &d), LP_E_USAGE);
	ck_assert_ptr_null(be);
	ck_assert_msg(strstr(d.msg, "unknown device 'tpu'") != NULL, "%s", d.msg);
	ck_assert_msg(!strncmp(lp_backend_built(), "cpu", 3), "%s", lp_backend_built());
	lp_diag_init(&d);
	n = lp_backend_devices(devs, 4, &d);
	if (n > 0)
		return;   /* a GPU: the refusals below cannot be seen here */
	ck_assert_int_eq(lp_backend_open("cuda", NULL, &be, &d), LP_E_DEVICE);
	ck_assert_ptr_null(be);
	ck_assert_msg(strstr(d.msg, "CUDA") || strstr(d.msg, "lpipe-cuda.so"), "%s", d.msg);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_backend_open_auto(NULL, &be, why, sizeof(why), &d), LP_OK);
	ck_assert_str_eq(be->name, "cpu");
	ck_assert_msg(why[0] != 0, "auto says why it took the CPU");
	lp_backend_free(be);
}
END_TEST

/* ---- gpu_layers: the forward pass split between two backends ----------- */

struct split_model {
	char path[64];
	struct lp_gguf *g;
	struct lp_model *m;
};

static void split_open(struct split_model *s, enum lp_qtype type)
{
	struct tiny_spec spec = tiny_default_spec();
	struct lp_diag d;
	int fd;

	spec.type = type;
	spec.layers = 4;
	snprintf(s->path, sizeof(s->path), "/tmp/check_backend.XXXXXX");
	fd = mkstemp(s->path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(tiny_model_write(s->path, &spec, 7), 0);
	lp_diag_init(&d);
	ck_assert_msg(lp_gguf_open(s->path, &s->g, &d) == LP_OK, "%s", d.msg);
	ck_assert_msg(lp_model_load(s->g, &s->m, &d) == LP_OK, "%s", d.msg);
}

static void split_close(struct split_model *s)
{
	lp_model_free(s->m);
	lp_gguf_close(s->g);
	unlink(s->path);
}

#define SPLIT_PROMPT 20
#define SPLIT_GEN 12

/* Greedy tokens (and the last logits) of a prompt then SPLIT_GEN steps,
 * with `gpu_layers` layers on a fresh stand-in device (its scratch is
 * then this context's alone, so the plan can be checked). */
static void greedy(const struct lp_model *m, uint32_t gpu_layers, enum lp_qtype kv,
		   int32_t *out, float *last)
{
	struct lp_backend_params bp = lp_backend_default_params();
	struct lp_backend *dev;
	struct lp_forward_params p = lp_forward_default_params();
	uint32_t V = m->hp.n_vocab;
	int32_t prompt[SPLIT_PROMPT];
	float *logits = malloc(V * sizeof(float));
	struct lp_forward *c;
	struct lp_forward_bytes b;
	struct lp_diag d;
	size_t gkv = lp_mem_current(LP_MEM_GPU_KV), gw = lp_mem_current(LP_MEM_GPU_WEIGHTS);
	size_t gs = lp_mem_current(LP_MEM_GPU_SCRATCH);

	bp.n_threads = 2;
	bp.as_device = 1;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_backend_open("cpu", &bp, &dev, &d), LP_OK);
	p.n_ctx = 64;
	p.n_batch = 8;   /* the prompt takes three steps, the last one short */
	p.n_threads = 2;
	p.kv_type = kv;
	p.offload = dev;
	p.gpu_layers = gpu_layers;
	lp_diag_init(&d);
	lp_forward_plan_bytes(m, &p, &b);
	ck_assert_msg(lp_forward_new(m, &p, &c, &d) == LP_OK, "%s", d.msg);
	ck_assert_uint_eq(lp_forward_gpu_layers(c), gpu_layers);
	/* the device bytes are what the plan says */
	ck_assert_uint_eq(lp_mem_current(LP_MEM_GPU_KV) - gkv, b.gpu_kv);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_GPU_WEIGHTS) - gw, b.gpu_weights);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_GPU_SCRATCH) - gs, b.gpu_scratch);
	ck_assert(gpu_layers == 0 || b.gpu_kv > 0);
	for (int i = 0; i < SPLIT_PROMPT; i++)
		prompt[i] = (i * 37 + 11) % (int32_t)V;
	ck_assert_int_eq(lp_forward_eval(c, prompt, SPLIT_PROMPT, 0, logits, &d), LP_OK);
	for (int i = 0; i < SPLIT_GEN; i++) {
		int32_t best = 0;
		for (uint32_t k = 1; k < V; k++)
			best = logits[k] > logits[best] ? (int32_t)k : best;
		out[i] = best;
		ck_assert_int_eq(lp_forward_eval(c, &best, 1, SPLIT_PROMPT + (uint32_t)i, logits,
						 &d), LP_OK);
	}
	memcpy(last, logits, V * sizeof(float));
	lp_forward_free(c);
	lp_backend_free(dev);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_GPU_KV), gkv);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_GPU_WEIGHTS), gw);
	free(logits);
}

/* gpu_layers 0, half and all give the same tokens, and with the CPU
 * standing in for the device the same logits bit for bit (the same
 * kernels run; only the buffers and the hops between them differ). */
START_TEST(test_gpu_layers_split)
{
	struct split_model s;
	int32_t tok[3][SPLIT_GEN];
	float *last[3];
	uint32_t layers[3] = { 0, 2, 4 };
	enum lp_qtype kv = kv_types[_i];

	split_open(&s, LP_Q_Q8_0);
	for (int i = 0; i < 3; i++) {
		last[i] = malloc(s.m->hp.n_vocab * sizeof(float));
		greedy(s.m, layers[i], kv, tok[i], last[i]);
	}
	for (int i = 1; i < 3; i++) {
		ck_assert_msg(!memcmp(tok[0], tok[i], sizeof(tok[0])),
			      "gpu_layers %u changed the tokens", layers[i]);
		ck_assert_msg(!memcmp(last[0], last[i], s.m->hp.n_vocab * sizeof(float)),
			      "gpu_layers %u changed the logits", layers[i]);
	}
	for (int i = 0; i < 3; i++)
		free(last[i]);
	split_close(&s);
}
END_TEST

/* A device budget too small for the offloaded part fails the context
 * cleanly, naming the device memory and the phase. */
START_TEST(test_gpu_budget)
{
	struct lp_backend_params bp = lp_backend_default_params();
	struct lp_forward_params p = lp_forward_default_params();
	struct split_model s;
	struct lp_backend *dev;
	struct lp_forward *c = NULL;
	struct lp_forward_bytes b;
	struct lp_diag d;
	size_t host0;

	split_open(&s, LP_Q_Q4_0);
	host0 = lp_mem_current_total();
	bp.n_threads = 1;
	bp.as_device = 1;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_backend_open("cpu", &bp, &dev, &d), LP_OK);
	p.n_ctx = 64;
	p.n_threads = 1;
	p.offload = dev;
	p.gpu_layers = 4;
	lp_forward_plan_bytes(s.m, &p, &b);
	lp_mem_set_gpu_budget(b.gpu_weights + b.gpu_kv + b.gpu_scratch - 1);
	ck_assert_int_eq(lp_forward_new(s.m, &p, &c, &d), LP_E_NOMEM);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(d.msg, "load: device memory budget exceeded"), "%s", d.msg);
	lp_mem_set_gpu_budget(b.gpu_weights + b.gpu_kv + b.gpu_scratch);
	lp_diag_init(&d);
	ck_assert_msg(lp_forward_new(s.m, &p, &c, &d) == LP_OK, "%s", d.msg);
	lp_forward_free(c);
	lp_mem_set_gpu_budget(0);
	lp_backend_free(dev);
	ck_assert_uint_eq(lp_mem_current_gpu(), 0);
	ck_assert_uint_eq(lp_mem_current_total(), host0);
	split_close(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("backend");
	TCase *ops = tcase_create("ops"), *fw = tcase_create("split");
	TCase *kern = tcase_create("kernels");

	tcase_add_loop_test(ops, test_matmul_decode, 0, N_TYPES);
	tcase_add_test(ops, test_matmul_many);
	tcase_add_loop_test(ops, test_matmul_prefill, 0, N_TYPES);
	tcase_add_test(ops, test_matmul_bf16_flag);
	tcase_add_loop_test(ops, test_get_rows, 0, N_TYPES);
	tcase_add_test(ops, test_norms);
	tcase_add_loop_test(ops, test_rope, 0, 2);
	tcase_add_test(ops, test_swiglu_gelu_add);
	tcase_add_test(ops, test_encoder_elementwise);
	tcase_add_test(ops, test_enc_attention);
	tcase_add_test(ops, test_mean_pool_scatter);
	tcase_add_test(ops, test_hash_projection);
	tcase_add_loop_test(ops, test_topk, 0, 5);
	tcase_add_loop_test(ops, test_attention, 0, 3);
	tcase_add_test(ops, test_attention_groups);
	tcase_add_test(ops, test_kv_store_f16_exact);
	tcase_add_test(ops, test_buffers);
	tcase_add_test(ops, test_registry);
	suite_add_tcase(s, ops);
	tcase_add_loop_test(kern, test_kernel_sets, 0, 2);
	tcase_add_loop_test(kern, test_forced_set, 0, 3);
	tcase_add_loop_test(kern, test_q8_gemm, 0, 2);
	tcase_add_loop_test(kern, test_bf16_gemm, 0, 2);
	tcase_add_loop_test(kern, test_enc_kernels, 0, 2);
	tcase_set_timeout(kern, 60);
	suite_add_tcase(s, kern);
	tcase_add_loop_test(fw, test_gpu_layers_split, 0, 3);
	tcase_add_test(fw, test_gpu_budget);
	suite_add_tcase(s, fw);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
