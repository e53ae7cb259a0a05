/*
 * kernels.h - CPU dot-product kernels and their run-time dispatch.
 *
 * One dot product per weight type: dot(w, a, n) returns the dot product of
 * a weight row `w` of `n` elements with the activations `a`: the float
 * vector for F32/F16/BF16, or the blocks of lp_q8_act_quantize for the
 * quantized types (see quant/blocks.h). `n` is a multiple of the
 * type's block.
 *
 * The scalar set is the reference. The AVX2 set and the AVX-512 set (F,
 * BW, VL and VNNI) are each built in a convenience library of their own,
 * with the flags they need, so the rest of lpipe stays portable; the
 * AVX-512 set is built only when the compiler takes those flags.
 * lp_cpu_kernels chooses, once, the fastest set the CPU runs: avx512, then
 * avx2, then scalar.
 *
 * The environment forces a set, for tests and benchmarks:
 * LPIPE_CPU=avx512|avx2|scalar takes that set, or the fastest one below it
 * that the CPU runs when it cannot run that one (so LPIPE_CPU=avx512 on an
 * AVX2 machine gives avx2); any other value is ignored. The older
 * LPIPE_CPU_KERNELS=scalar still forces the scalar set when LPIPE_CPU is
 * unset. All kernels are reentrant.
 */
#ifndef LP_BACKEND_CPU_KERNELS_H
#define LP_BACKEND_CPU_KERNELS_H

#include <stddef.h>

#include "quant/quant.h"

typedef float (*lp_dot_fn)(const void *w, const void *a, size_t n);

/*
 * Four rows at once, sharing the activation loads and the loop: y[r] is the
 * dot product of the row at w + r * row_bytes with `a`, for r < 4, bit for
 * bit what the same set's one-row kernel returns, so that a row's result
 * does not depend on how rows are grouped (or split between threads).
 */
typedef void (*lp_dot4_fn)(const void *w, size_t row_bytes, const void *a, size_t n,
			   float y[4]);

/*
 * Sixteen rows at once from a matrix laid out in row groups
 * (quant/rowgroup.h): y[r] for the 16 rows of the group at `w` (its nb =
 * n / 32 group blocks), against the activations `a`. Each row's result
 * is, block by block in order, acc = fma(d_w d_a, isum, acc) (d_w d_a
 * rounded to float first), side = fma(m_w, s_a, side) for Q4_1, and y =
 * acc + side: the scalar set's kernel and the AVX-512 set's give the same
 * floats bit for bit, and differ from the one-row kernels (whose float
 * sums are taken 8 lanes at a time) by the order of the float sums only.
 */
typedef void (*lp_dot16_fn)(const void *w, const void *a, size_t n, float y[16]);

/*
 * A decode step's attention for one group of query heads that share a KV
 * head, over an F16 cache read in place: for each of the n_q heads h,
 *     out[h] = sum_{s < n_pos} softmax_s(scale * q[h] . K[s]) V[s]
 * with K[s] = k + s * ld and V[s] = v + s * ld (head_dim fp16 each), q and
 * out n_q rows of head_dim floats. With m and l given (a part of the
 * positions, to be merged with the others), out is left unnormalized,
 * sum_s exp(x_s - m[h]) V[s] for the scores x_s, m[h] their maximum and
 * l[h] = sum_s exp(x_s - m[h]). The kernel takes n_q <=
 * LP_CPU_ATTN_MAX_HEADS and head_dim a multiple of 32 up to
 * LP_CPU_ATTN_MAX_HD; the caller keeps to that. Reentrant.
 */
#define LP_CPU_ATTN_MAX_HEADS 8
#define LP_CPU_ATTN_MAX_HD 256

struct lp_cpu_attn_f16 {
	const float *q;
	const uint16_t *k, *v;
	size_t ld, head_dim, n_pos, n_q;
	float scale;
	float *out;
	float *m, *l;  /* n_q each, or NULL */
};

struct lp_cpu_kernels {
	const char *name;  /* "scalar", "avx2", "avx512" */
	lp_dot_fn f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, q5_k, q6_k;
	/* four-row kernels, NULL where the set has none for the type */
	lp_dot4_fn q8_0_x4, q6_k_x4, q4_0_x4, q4_1_x4, q5_0_x4, q5_1_x4;
	/* activation quantizers (struct lp_act_q8_32 / lp_act_q8_256 blocks
	 * of n elements, n a multiple of the block), the same bytes as the
	 * reference in model/quant.c; NULL where the set has none */
	void (*act_q8_32)(const float *x, size_t n, void *blocks);
	void (*act_q8_256)(const float *x, size_t n, void *blocks);
	/* dequantize n elements of a quantized type into floats, the same
	 * floats as lp_dequantize_row_ref; returns 0 (doing nothing) for a
	 * type it does not handle, 1 otherwise. NULL where the set has none */
	int (*dequant)(enum lp_qtype t, const void *src, float *dst, size_t n);
	/* the int8 product of batched prefill (below; the AVX-512 set's
	 * takes the legacy types, Q4_K and Q6_K), NULL where the set has none */
	const struct lp_q8_gemm *q8_gemm;
	/* Y[t][r] = bias[r] + sum_c X[t][c] W[r][c] (t < n, r < m, c < k;
	 * rows ldx, ldw, ldy apart; bias NULL or m floats, where the float
	 * sums start) with X and W rounded to BF16 and the products summed
	 * in float: twice the float rate on AVX-512 BF16 (gemm_bf16.c),
	 * for products that ask for it (lp_backend_mat.bf16). `scratch` holds
	 * at least lp_cpu_bf16_gemm_scratch(k) bytes, more lets it pack more
	 * rows of W at once. Reentrant. NULL where the set has none */
	void (*gemm_bf16)(size_t n, size_t m, size_t k, const float *X, size_t ldx,
			  const float *W, size_t ldw, const float *bias, float *Y, size_t ldy,
			  void *scratch, size_t scratch_bytes);
	/* attention of one head group over an F16 cache (struct
	 * lp_cpu_attn_f16), NULL where the set has none */
	void (*attn_f16)(const struct lp_cpu_attn_f16 *a);
	/* the encoder's element-wise kernels (enc_avx512.c), NULL where the
	 * set has none (encoder.c then runs its own, on 8 lanes or in C):
	 * x[i] = gelu(x[i]) for i < n, in the erf form; and the softmax's
	 * r[j] = exp((r[j] - mx) * scale) for j < n (each argument <= 0),
	 * returning their sum */
	void (*gelu)(float *x, size_t n);
	float (*exp_shift)(float *r, size_t n, float mx, float scale);
	/* the row-group kernels (lp_dot16_fn), NULL where the set has none:
	 * the CPU backend lays a matrix out in row groups only for a set
	 * that has its type's */
	lp_dot16_fn q4_1_x16, q5_0_x16, q8_0_x16;
};

/*
 * Int8 products of a batch: Y[t][r] = dot(row r of W, row t of X) for the
 * tokens of a batch at once, on the same 8-bit activations as the mat-vec
 * (lp_q8_act_quantize's blocks) and the same integer sums per block, so
 * a token's result differs from the mat-vec's only in the order of the
 * float sums. The activations are first packed by `pack`, token
 * groups of LP_Q8_GROUP at a time, so that one vector holds a 4-byte
 * piece of 16 tokens; `rows` then multiplies rows of W with every group.
 *
 * Pack: LP_Q8_PACK_BYTES per (group, block of 32 columns), groups after
 * one another, the blocks of a group in order; tokens past n are zeros.
 * Both are reentrant; threads may split the groups (pack) or the rows.
 */
#define LP_Q8_GROUP 32
#define LP_Q8_PACK_BYTES (LP_Q8_GROUP * 32 + 4 * LP_Q8_GROUP * 4)

struct lp_q8_gemm {
	/* whether `rows` takes weights of type t */
	int (*has)(enum lp_qtype t);
	/* pack groups [g0, g1) of the n rows xq, quantized for weight type t
	 * (cols elements, a multiple of t's block), into pack */
	void (*pack)(enum lp_qtype t, const struct lp_q8_act *xq, size_t n, size_t cols,
		     void *pack, size_t g0, size_t g1);
	/* Y[t * ldy + r] for t < n and r in [r0, r1), W of type t (rows
	 * row_bytes apart, or laid out in row groups, quant/rowgroup.h, when
	 * row_bytes is 0); wbuf: scratch of lp_q8_gemm_wbuf_bytes(cols) */
	void (*rows)(enum lp_qtype t, const void *W, size_t row_bytes, size_t cols,
		     const void *pack, size_t n, float *Y, size_t ldy, size_t r0, size_t r1,
		     void *wbuf);
};

/* Bytes of `pack` for n tokens of cols elements, and of `rows`' wbuf. */
size_t lp_q8_gemm_pack_bytes(size_t n, size_t cols);
size_t lp_q8_gemm_wbuf_bytes(size_t cols);

/* The fastest set this CPU supports (decided once; thread-safe). */
const struct lp_cpu_kernels *lp_cpu_kernels(void);
/* The scalar reference set. */
const struct lp_cpu_kernels *lp_cpu_kernels_scalar(void);
/* The AVX2 set, or NULL when not built in or the CPU lacks AVX2/FMA/F16C. */
const struct lp_cpu_kernels *lp_cpu_kernels_avx2(void);
/* The kernel of set `k` for weight type `t` (never NULL for a supported t). */
lp_dot_fn lp_cpu_dot(const struct lp_cpu_kernels *k, enum lp_qtype t);
/* The four-row kernel of set `k` for type `t`, or NULL when it has none. */
lp_dot4_fn lp_cpu_dot4(const struct lp_cpu_kernels *k, enum lp_qtype t);
/* The row-group kernel of set `k` for type `t`, or NULL when it has none. */
lp_dot16_fn lp_cpu_dot16(const struct lp_cpu_kernels *k, enum lp_qtype t);
/* The scalar set's row-group kernels, the reference of the others (the
 * scalar set itself has none, so that LPIPE_CPU=scalar keeps the file's
 * layout and its own kernels). */
lp_dot16_fn lp_cpu_dot16_ref(enum lp_qtype t);

/* The AVX-512 set, or NULL when not built in or the CPU lacks AVX-512
 * F/BW/VL/VNNI (or the AVX2 set's features, which it also uses). */
const struct lp_cpu_kernels *lp_cpu_kernels_avx512(void);
/* The set LPIPE_CPU (or LPIPE_CPU_KERNELS) names, as lp_cpu_kernels would
 * take it: `force` is the variable's value, NULL or unknown for none.
 * lp_cpu_kernels is this of the environment, decided once. */
const struct lp_cpu_kernels *lp_cpu_kernels_forced(const char *force);

/* Defined in dot_avx2.c (only when built for x86-64); the set needs
 * lp_cpu_avx2_init() once before use (lp_cpu_kernels_avx2 does it). */
extern const struct lp_cpu_kernels lp_cpu_kernels_avx2_set;
void lp_cpu_avx2_init(void);
/* Defined in dequant_avx2.c: the AVX2 set's dequant. */
int lp_cpu_avx2_dequant(enum lp_qtype t, const void *src, float *dst, size_t n);
/* fp16 -> float of every half, filled by lp_cpu_avx2_init: a scale's
 * broadcast to a vector is then one load. */
extern float lp_cpu_fp16_tab[1 << 16];

/* Defined in dot_avx512.c (only when the compiler takes AVX-512); the
 * activation quantizers and dequant are the AVX2 set's, filled in by
 * lp_cpu_kernels_avx512() before it first returns the set. */
extern struct lp_cpu_kernels lp_cpu_kernels_avx512_set;
/* gemm_bf16.c: the AVX-512 BF16 product (the set's gemm_bf16 when the CPU
 * has the feature), the least scratch it takes for k columns, and whether
 * the CPU (and the OS) has AVX-512 BF16. */
void lp_cpu_bf16_gemm_avx512(size_t n, size_t m, size_t k, const float *X, size_t ldx,
			     const float *W, size_t ldw, const float *bias, float *Y, size_t ldy,
			     void *scratch, size_t scratch_bytes);
size_t lp_cpu_bf16_gemm_scratch(size_t k);
/* enc_avx512.c: the AVX-512 set's gelu and exp_shift. */
void lp_cpu_gelu_avx512(float *x, size_t n);
float lp_cpu_exp_shift_avx512(float *r, size_t n, float mx, float scale);
int lp_cpu_has_avx512bf16(void);
/* dot16_avx512.c: fills in the AVX-512 set's row-group kernels. */
void lp_cpu_avx512_set_dot16(struct lp_cpu_kernels *k);
/* attn_avx512.c: the AVX-512 set's attn_f16. */
void lp_cpu_attn_f16_avx512(const struct lp_cpu_attn_f16 *a);

#endif
