/* check_rowgroup.c - weights in groups of 16 rows (quant/rowgroup.h):
 * the layout and its way back, the row-group kernels against the scalar
 * reference and the one-row kernels, the CPU backend's products on row
 * groups against the file's layout, and a model whose layers are laid
 * out so in place. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/cpu/kernels.h"
#include "core/mem.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/model.h"
#include "quant/blocks.h"
#include "quant/rowgroup.h"
#include "tools/tiny_model.h"

static const enum lp_qtype types[] = { LP_Q_Q4_1, LP_Q_Q5_0, LP_Q_Q8_0 };
#define N_TYPES (sizeof(types) / sizeof(types[0]))

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static float frand(void) /* uniform in [-1, 1) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 40) / (double)(1 << 24)) * 2.0f - 1.0f;
}

/* rows x cols random weights of type t, quantized, in the file's layout */
static uint8_t *rand_weights(enum lp_qtype t, size_t rows, size_t cols)
{
	size_t rb = lp_qtype_row_bytes(t, cols);
	uint8_t *w = malloc(rows * rb);
	float *f = malloc(cols * sizeof(float));

	for (size_t r = 0; r < rows; r++) {
		/* rows of different magnitude, and a few with an offset, so the
		 * minimum of Q4_1 and the scales differ from row to row */
		float scale = 0.25f + (float)(r % 7), shift = r % 3 == 0 ? 0.5f : 0.0f;
		for (size_t c = 0; c < cols; c++)
			f[c] = frand() * scale + shift;
		lp_quantize_row(t, f, w + r * rb, cols);
	}
	free(f);
	return w;
}

static float *rand_vec(size_t n)
{
	float *v = malloc(n * sizeof(float));

	for (size_t i = 0; i < n; i++)
		v[i] = frand() * 2.0f;
	return v;
}

/* x quantized for t's mat-vec (the reference quantizer) */
static struct lp_q8_act quantize(enum lp_qtype t, const float *x, size_t n)
{
	size_t ab = lp_q8_act_bytes(t, n);
	struct lp_q8_act a = { 0, malloc(ab), ab };

	lp_q8_act_quantize_ref(t, x, n, &a);
	return a;
}

/* ---- the layout ---------------------------------------------------------- */

/*
 * Packing then taking each row back gives the file's bytes, for every
 * type and odd block counts; and the packed bytes are where rowgroup.h
 * says (one weight of each kind checked by hand), so that a layout wrong
 * the same way in both directions cannot pass.
 */
START_TEST(test_layout)
{
	enum lp_qtype t = types[_i];
	static const size_t widths[] = { 32, 96, 160, 576 };

	for (size_t wi = 0; wi < 4; wi++) {
		size_t cols = widths[wi], rows = 48, rb = lp_qtype_row_bytes(t, cols);
		size_t nb = cols / LP_QK, gb = lp_rowgroup_block_bytes(t);
		uint8_t *w = rand_weights(t, rows, cols), *g = malloc(rows * rb);
		uint8_t *back = malloc(rows * rb), *row = malloc(rb), *tmp = malloc(LP_RG_ROWS * rb);

		ck_assert_uint_eq(gb, LP_RG_ROWS * lp_qtype_row_bytes(t, LP_QK));
		memcpy(g, w, rows * rb);
		lp_rowgroup_pack(t, g, rows, cols, tmp);
		ck_assert_msg(memcmp(g, w, rows * rb) != 0, "packing changed nothing");
		for (size_t r = 0; r < rows; r++) {
			lp_rowgroup_row(t, g, cols, r, row);
			ck_assert_msg(!memcmp(row, w + r * rb, rb), "%s %zu cols: row %zu differs",
				      lp_qtype_name(t), cols, r);
		}
		lp_rowgroup_unpack(t, g, rows, cols, back);
		ck_assert(!memcmp(back, w, rows * rb));
		/* row 21 (group 1, row 5), block nb - 1, element 13 (p = 1, e = 1, high) */
		{
			const uint8_t *blk = w + 21 * rb + (nb - 1) * lp_qtype_row_bytes(t, LP_QK);
			const uint8_t *gbk = g + (1 * nb + nb - 1) * gb;
			if (t == LP_Q_Q8_0) {
				const struct lp_blk_q8_0 *x = (const void *)blk;
				ck_assert_uint_eq(gbk[64 * 3 + 4 * 5 + 1], (uint8_t)(x->qs[13] ^ 0x80));
				ck_assert(!memcmp(gbk + 512 + 2 * 5, &x->d, 2));
			} else if (t == LP_Q_Q4_1) {
				const struct lp_blk_q4_1 *x = (const void *)blk;
				ck_assert_uint_eq(gbk[64 * 1 + 4 * 5 + 1] >> 4, x->qs[13] & 0xF);
				ck_assert(!memcmp(gbk + 288 + 2 * 5, &x->m, 2));
			} else {
				const struct lp_blk_q5_0 *x = (const void *)blk;
				int q = lp_q5_get(x->qs, x->qh, 13);
				uint64_t mask;
				memcpy(&mask, gbk + 256 + 8 * (2 * 1 + 1), 8);
				ck_assert_uint_eq(gbk[64 * 1 + 4 * 5 + 1] >> 4, (unsigned)(q & 0xF));
				ck_assert_uint_eq((mask >> (4 * 5 + 1)) & 1, (unsigned)(q >> 4));
			}
		}
		free(w), free(g), free(back), free(row), free(tmp);
	}
}
END_TEST

/* ---- the kernels ----------------------------------------------------------- */

/*
 * The reference row-group kernel against the scalar one-row kernel on the
 * same bytes and activations: the same integer sums, so within 1e-5 of
 * sum |w a| (the float sums' order differs); and every SIMD set's
 * row-group kernel gives the reference's floats bit for bit.
 */
START_TEST(test_kernels)
{
	enum lp_qtype t = types[_i];
	static const size_t widths[] = { 32, 160, 1056 };
	const struct lp_cpu_kernels *sets[] = { lp_cpu_kernels_avx2(), lp_cpu_kernels_avx512() };
	lp_dot_fn one = lp_cpu_dot(lp_cpu_kernels_scalar(), t);
	lp_dot16_fn ref = lp_cpu_dot16_ref(t);

	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_null(lp_cpu_dot16(lp_cpu_kernels_scalar(), t));
	for (size_t wi = 0; wi < 3; wi++) {
		size_t cols = widths[wi], rows = 32, rb = lp_qtype_row_bytes(t, cols);
		size_t group = cols / LP_QK * lp_rowgroup_block_bytes(t);
		uint8_t *w = rand_weights(t, rows, cols), *g = malloc(rows * rb);
		uint8_t *tmp = malloc(LP_RG_ROWS * rb);
		float *x = rand_vec(cols), *deq = malloc(cols * sizeof(float)), y[32], ys[16];
		struct lp_q8_act a = quantize(t, x, cols);

		memcpy(g, w, rows * rb);
		lp_rowgroup_pack(t, g, rows, cols, tmp);
		ref(g, a.blocks, cols, y);
		ref(g + group, a.blocks, cols, y + 16);
		for (size_t r = 0; r < rows; r++) {
			float want = one(w + r * rb, a.blocks, cols);
			double mag = 0;
			lp_dequantize_row_ref(t, w + r * rb, deq, cols);
			for (size_t c = 0; c < cols; c++)
				mag += fabs((double)deq[c] * x[c]);
			ck_assert_msg(fabs((double)y[r] - want) <= 1e-5 * mag + 1e-6,
				      "%s %zu cols row %zu: %.9g vs %.9g", lp_qtype_name(t), cols, r,
				      y[r], want);
		}
		for (size_t s = 0; s < 2; s++) {
			lp_dot16_fn k = sets[s] ? lp_cpu_dot16(sets[s], t) : NULL;
			if (!k)
				continue;
			for (size_t h = 0; h < 2; h++) {
				k(g + h * group, a.blocks, cols, ys);
				ck_assert_msg(!memcmp(ys, y + 16 * h, sizeof(ys)),
					      "%s %s %zu cols: not the reference's floats", sets[s]->name,
					      lp_qtype_name(t), cols);
			}
		}
		free(w), free(g), free(tmp), free(x), free(deq), free(a.blocks);
	}
}
END_TEST

/* ---- the CPU backend ------------------------------------------------------ */

static struct lp_backend *cpu(int threads)
{
	struct lp_backend_params p = lp_backend_default_params();
	struct lp_backend *be;
	struct lp_diag d;

	p.n_threads = threads;
	lp_diag_init(&d);
	ck_assert_msg(lp_backend_open("cpu", &p, &be, &d) == LP_OK, "%s", d.msg);
	return be;
}

/*
 * The same matrix in both layouts on the CPU backend: a prompt's product
 * (from gemm_min tokens on) and get_rows give the same floats bit for
 * bit, since they read the same values; a decode step and a few tokens
 * give the row-group reference's floats, for each token; matmul_many
 * gives matmul's. Skipped where the CPU's kernel set has no row groups.
 */
START_TEST(test_backend)
{
	enum lp_qtype t = types[_i];
	size_t cols = 1056, rows = 208, rb = lp_qtype_row_bytes(t, cols), ldy = rows + 2;
	size_t group = cols / LP_QK * lp_rowgroup_block_bytes(t);
	struct lp_backend *be = cpu(2);
	uint8_t *w = rand_weights(t, rows, cols), *g = malloc(rows * rb), *tmp = malloc(16 * rb);
	float *x = rand_vec(40 * cols), *ya = malloc(40 * ldy * sizeof(float));
	float *yb = malloc(40 * ldy * sizeof(float)), *yc = malloc(rows * sizeof(float));
	struct lp_backend_mat A = { t, w, rows, cols, rb, 0, NULL, LP_MAT_ROWS };
	struct lp_backend_mat B = { t, g, rows, cols, rb, 0, NULL, LP_MAT_ROWGROUPS };
	struct lp_backend_limits lim = { 40, cols, 4096, 0, 0, LP_Q_F32, 0, 0, 0, 0, 0 };
	struct lp_diag d;
	int32_t ids[3] = { 47, 0, 17 };

	if (!be->ops->takes_rowgroups || !be->ops->takes_rowgroups(be, t, rows, cols)) {
		lp_backend_free(be);
		free(w), free(g), free(tmp), free(x), free(ya), free(yb), free(yc);
		return;
	}
	ck_assert(!be->ops->takes_rowgroups(be, t, rows + 8, cols));
	memcpy(g, w, rows * rb);
	lp_rowgroup_pack(t, g, rows, cols, tmp);
	lp_diag_init(&d);
	ck_assert_msg(be->ops->reserve(be, &lim, &d) == LP_OK, "%s", d.msg);
	/* a prompt */
	be->ops->matmul(be, &A, x, 40, ya, ldy);
	be->ops->matmul(be, &B, x, 40, yb, ldy);
	for (size_t i = 0; i < 40; i++)
		ck_assert_msg(!memcmp(ya + i * ldy, yb + i * ldy, rows * sizeof(float)),
			      "%s prompt: token %zu differs", lp_qtype_name(t), i);
	/* rows of the embedding */
	be->ops->get_rows(be, &A, ids, 3, ya);
	be->ops->get_rows(be, &B, ids, 3, yb);
	ck_assert(!memcmp(ya, yb, 3 * cols * sizeof(float)));
	/* one token and five: each token's rows as the reference makes them */
	for (size_t n = 1; n <= 5; n += 4) {
		for (size_t i = 0; i < n * ldy; i++)
			yb[i] = 12345.0f;
		be->ops->matmul(be, &B, x, n, yb, ldy);
		for (size_t i = 0; i < n; i++) {
			struct lp_q8_act a = quantize(t, x + i * cols, cols);
			for (size_t h = 0; h < rows / 16; h++)
				lp_cpu_dot16_ref(t)(g + h * group, a.blocks, cols, yc + 16 * h);
			ck_assert_msg(!memcmp(yb + i * ldy, yc, rows * sizeof(float)),
				      "%s %zu tokens: token %zu differs", lp_qtype_name(t), n, i);
			ck_assert(yb[i * ldy + rows] == 12345.0f);
			free(a.blocks);
		}
	}
	/* several products of one input */
	{
		struct lp_backend_mm mm[2] = { { &B, ya, rows }, { &A, ya + rows, rows } };
		be->ops->matmul(be, &B, x, 1, yb, rows);
		be->ops->matmul(be, &A, x, 1, yb + rows, rows);
		be->ops->matmul_many(be, x, 1, mm, 2);
		ck_assert(!memcmp(ya, yb, 2 * rows * sizeof(float)));
	}
	ck_assert_int_eq(be->ops->sync(be, NULL), LP_OK);
	lp_backend_free(be);
	free(w), free(g), free(tmp), free(x), free(ya), free(yb), free(yc);
}
END_TEST

/* ---- a model ------------------------------------------------------------- */

static char model_path[64];

static void write_model(enum lp_qtype t, int tied)
{
	struct tiny_spec spec = tiny_default_spec();
	int fd;

	spec.type = t;
	spec.tied = tied;
	snprintf(model_path, sizeof(model_path), "/tmp/check_rowgroup.XXXXXX");
	fd = mkstemp(model_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(tiny_model_write(model_path, &spec, 11), 0);
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	b = malloc(*len);
	ck_assert_uint_eq(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

/* Logits of a prompt of PROMPT tokens (at least gemm_min: the batch
 * product) then 4 single steps of model m. */
#define PROMPT 20
static void run_model(const struct lp_model *m, float *out)
{
	struct lp_forward_params p = lp_forward_default_params();
	struct lp_forward *c;
	struct lp_diag d;
	int32_t toks[PROMPT + 4];
	uint32_t V = m->hp.n_vocab;

	p.n_ctx = 32;
	p.n_threads = 2;
	lp_diag_init(&d);
	ck_assert_msg(lp_forward_new(m, &p, &c, &d) == LP_OK, "%s", d.msg);
	for (int i = 0; i < PROMPT + 4; i++)
		toks[i] = (i * 37 + 5) % (int32_t)V;
	ck_assert_int_eq(lp_forward_eval(c, toks, PROMPT, 0, out, &d), LP_OK);
	for (uint32_t i = PROMPT; i < PROMPT + 4; i++)
		ck_assert_int_eq(lp_forward_eval(c, &toks[i], 1, i, out + (i - PROMPT + 1) * V, &d),
				 LP_OK);
	lp_forward_free(c);
}

/*
 * A model mapped from its file, its output head tied to the embedding or
 * not, has its layers laid out in row groups by its first context (where
 * the CPU's kernels take them; the embedding and the head keep the file's
 * layout), in place: the
 * file is unchanged, the weights' tracked bytes too, and a second context
 * on the same model finds them so and gives the same logits. Against the
 * same file given as bytes (which stay as they are): the prompt's logits
 * the same bit for bit (its products read the same values), the decode
 * steps' within float rounding and the same best token.
 */
START_TEST(test_model)
{
	enum lp_qtype t = types[_i % N_TYPES];
	int tied = _i >= (int)N_TYPES;
	struct lp_gguf *g, *gb;
	struct lp_model *m, *mb;
	struct lp_diag d;
	size_t len, len2, weights;
	uint8_t *before, *after, *bytes;
	float *la, *lb, *lc;
	uint32_t V;
	int grouped;

	write_model(t, tied);
	before = read_all(model_path, &len);
	bytes = read_all(model_path, &len);
	lp_diag_init(&d);
	ck_assert_msg(lp_gguf_open(model_path, &g, &d) == LP_OK, "%s", d.msg);
	ck_assert_msg(lp_model_load(g, &m, &d) == LP_OK, "%s", d.msg);
	ck_assert_msg(lp_gguf_open_bytes("bytes", bytes, len, &gb, &d) == LP_OK, "%s", d.msg);
	ck_assert_msg(lp_model_load(gb, &mb, &d) == LP_OK, "%s", d.msg);
	V = m->hp.n_vocab;
	la = malloc(5 * V * sizeof(float));
	lb = malloc(5 * V * sizeof(float));
	lc = malloc(5 * V * sizeof(float));
	weights = lp_mem_current(LP_MEM_WEIGHTS);
	run_model(m, la);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), weights);
	grouped = lp_cpu_dot16(lp_cpu_kernels(), t) != NULL;
	ck_assert_int_eq(m->layers[0].wq.rowgroups, grouped);
	ck_assert_int_eq(m->layers[1].w_down.rowgroups, grouped);
	ck_assert_int_eq(m->tok_embd.rowgroups, 0);
	ck_assert_int_eq(m->output.rowgroups, 0);
	ck_assert_int_eq(m->tied_output, tied);
	run_model(m, lc);
	ck_assert(!memcmp(la, lc, 5 * V * sizeof(float)));
	run_model(mb, lb);
	ck_assert_int_eq(mb->layers[0].wq.rowgroups, 0);
	ck_assert(!memcmp(la, lb, V * sizeof(float)));
	for (int s = 1; s < 5; s++) {
		size_t ba = 0, bb = 0;
		double worst = 0, mag = 0;
		for (size_t k = 0; k < V; k++) {
			worst = fmax(worst, fabs(la[s * V + k] - lb[s * V + k]));
			mag = fmax(mag, fabs(lb[s * V + k]));
			ba = la[s * V + k] > la[s * V + ba] ? k : ba;
			bb = lb[s * V + k] > lb[s * V + bb] ? k : bb;
		}
		ck_assert_msg(worst <= 1e-4 * mag + 1e-6, "%s step %d: logits differ by %g of %g",
			      lp_qtype_name(t), s, worst, mag);
		ck_assert_uint_eq(ba, bb);
	}
	lp_model_free(mb);
	lp_gguf_close(gb);
	lp_model_free(m);
	lp_gguf_close(g);
	after = read_all(model_path, &len2);
	ck_assert(len2 == len && !memcmp(before, after, len));
	unlink(model_path);
	free(before), free(after), free(bytes), free(la), free(lb), free(lc);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rowgroup");
	TCase *tc = tcase_create("rowgroup");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_layout, 0, N_TYPES);
	tcase_add_loop_test(tc, test_kernels, 0, N_TYPES);
	tcase_add_loop_test(tc, test_backend, 0, N_TYPES);
	tcase_add_loop_test(tc, test_model, 0, 2 * N_TYPES);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
