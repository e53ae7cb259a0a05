/*
 * quant.h - tensor element formats: sizes, reference dequantizers and the
 * dot products the forward pass is built on.
 *
 * Type numbers are GGUF's (ggml_type). Block-quantized types store
 * `lp_qtype_block_elems` elements in `lp_qtype_block_bytes` bytes; rows are
 * whole blocks. The scalar dequantizers are the reference: every fast path
 * (SIMD here, CUDA later) is tested against them on random data.
 *
 * Matrix-vector products quantize the activation vector once to 8 bits
 * (struct lp_q8_act, per-32 blocks for the legacy formats and per-256
 * blocks with sums for the K formats, as llama.cpp does) and then take
 * integer dot products with each weight row; float formats use the float
 * vector directly.
 */
#ifndef LP_MODEL_QUANT_H
#define LP_MODEL_QUANT_H

#include <stddef.h>
#include <stdint.h>

enum lp_qtype {
	LP_Q_F32 = 0, LP_Q_F16 = 1, LP_Q_Q4_0 = 2, LP_Q_Q4_1 = 3,
	LP_Q_Q5_0 = 6, LP_Q_Q5_1 = 7, LP_Q_Q8_0 = 8, LP_Q_Q4_K = 12, LP_Q_Q5_K = 13, LP_Q_Q6_K = 14,
	LP_Q_BF16 = 30,
};

/* 1 if `t` is one of the supported types above. */
int lp_qtype_supported(uint32_t t);
const char *lp_qtype_name(enum lp_qtype t);
size_t lp_qtype_block_elems(enum lp_qtype t);   /* 1 for float types */
size_t lp_qtype_block_bytes(enum lp_qtype t);
/* Bytes of a row of `n` elements; 0 if n is not a multiple of the block. */
size_t lp_qtype_row_bytes(enum lp_qtype t, uint64_t n);

float lp_fp16_to_fp32(uint16_t h);
uint16_t lp_fp32_to_fp16(float f);
float lp_bf16_to_fp32(uint16_t h);
uint16_t lp_fp32_to_bf16(float f);

/* Dequantize `n` elements (a multiple of the block) of type `t` from `src`
 * into `dst`, with the fastest kernel the CPU supports (the same floats as
 * the reference, bit for bit); lp_dequantize_row_ref is the scalar
 * reference. Both reentrant. */
void lp_dequantize_row(enum lp_qtype t, const void *src, float *dst, size_t n);
void lp_dequantize_row_ref(enum lp_qtype t, const void *src, float *dst, size_t n);
/* Reference quantizer (round to nearest), used by tests and KV q8_0:
 * `n` floats into `dst` of lp_qtype_row_bytes(t, n) bytes. Supported for
 * every type above. */
void lp_quantize_row(enum lp_qtype t, const float *src, void *dst, size_t n);

/* Activations quantized for integer dot products against weight type t. */
struct lp_q8_act {
	size_t n;          /* elements */
	void *blocks;      /* format chosen by lp_q8_act_quantize for `t` */
	size_t cap_bytes;
};
/* Bytes needed to hold `n` activations for weights of type `t`: whole
 * blocks of 32 (legacy types) or 256 (K types); 0 for float types, which
 * use the float vector directly. */
size_t lp_q8_act_bytes(enum lp_qtype t, size_t n);
/* Quantize x[0..n) for dot products with rows of type `t`; `n` is a
 * multiple of t's block and `a->blocks` must hold lp_q8_act_bytes(t, n).
 * Sets a->n; for float types only that. Reentrant (no hidden state). */
void lp_q8_act_quantize(enum lp_qtype t, const float *x, size_t n, struct lp_q8_act *a);
/* The scalar reference of lp_q8_act_quantize: the same bytes, slower. */
void lp_q8_act_quantize_ref(enum lp_qtype t, const float *x, size_t n, struct lp_q8_act *a);

/*
 * y[r] = dot(row r of W, x) for r in [0, n_rows). W has type `t`, `n_cols`
 * elements per row (a multiple of t's block), rows contiguous
 * (lp_qtype_row_bytes apart). `xq` is x quantized for `t` by
 * lp_q8_act_quantize (ignored, and may be NULL, for float types; `x` is
 * then used). Uses the fastest kernel the CPU supports (checked at run
 * time; LPIPE_CPU_KERNELS=scalar in the environment forces the scalar one);
 * lp_matvec_ref is the scalar reference with the same semantics. Both are
 * single-threaded and reentrant.
 */
void lp_matvec(enum lp_qtype t, const void *W, size_t n_rows, size_t n_cols,
	       const float *x, const struct lp_q8_act *xq, float *y);
void lp_matvec_ref(enum lp_qtype t, const void *W, size_t n_rows, size_t n_cols,
		   const float *x, const struct lp_q8_act *xq, float *y);

/*
 * Rows [row_begin, row_end) of lp_matvec: y[r] for those r only (W and y are
 * the whole matrix and output), so that threads can split the rows. Same
 * kernels as lp_matvec; reentrant.
 */
void lp_matvec_rows(enum lp_qtype t, const void *W, size_t n_cols, const float *x,
		    const struct lp_q8_act *xq, float *y, size_t row_begin, size_t row_end);

/* Name of the kernel lp_matvec dispatches to ("avx2", "avx512", "scalar"). */
const char *lp_matvec_kernel_name(void);

#endif
