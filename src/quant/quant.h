/*
 * quant.h - tensor element formats: sizes, reference (de)quantizers and the
 * activation format of the integer dot products. It sits below both the
 * model (model/) and the backends (backend/), which include it; it
 * includes neither.
 *
 * Type numbers are GGUF's (ggml_type). Block-quantized types store
 * `lp_qtype_block_elems` elements in `lp_qtype_block_bytes` bytes; rows are
 * whole blocks. The scalar dequantizers are the reference: every fast path
 * (the CPU backend's SIMD kernels, the CUDA kernels) is tested against them
 * on random data.
 *
 * Matrix-vector products quantize the activation vector once to 8 bits
 * (struct lp_q8_act, per-32 blocks for the legacy formats and per-256
 * blocks with sums for the K formats, as llama.cpp does) and then take
 * integer dot products with each weight row (each backend has its own);
 * float formats use the float vector directly.
 */
#ifndef LP_QUANT_QUANT_H
#define LP_QUANT_QUANT_H

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
 * into `dst`: the scalar reference, reentrant. A backend's faster
 * dequantizer must give the same floats bit for bit. */
void lp_dequantize_row_ref(enum lp_qtype t, const void *src, float *dst, size_t n);
/* Reference quantizer (round to nearest), used by tests and KV q8_0:
 * `n` floats into `dst` of lp_qtype_row_bytes(t, n) bytes. Supported for
 * every type above. */
void lp_quantize_row(enum lp_qtype t, const float *src, void *dst, size_t n);

/* Activations quantized for integer dot products against weight type t. */
struct lp_q8_act {
	size_t n;          /* elements */
	void *blocks;      /* the blocks for weights of type `t`, as
			    * lp_q8_act_quantize_ref writes them */
	size_t cap_bytes;
};
/* Bytes needed to hold `n` activations for weights of type `t`: whole
 * blocks of 32 (legacy types) or 256 (K types); 0 for float types, which
 * use the float vector directly. */
size_t lp_q8_act_bytes(enum lp_qtype t, size_t n);
/* Quantize x[0..n) for dot products with rows of type `t`; `n` is a
 * multiple of t's block and `a->blocks` must hold lp_q8_act_bytes(t, n).
 * Sets a->n; for float types only that. Reentrant (no hidden state). The
 * reference: a backend's faster quantizer must write the same bytes. */
void lp_q8_act_quantize_ref(enum lp_qtype t, const float *x, size_t n, struct lp_q8_act *a);

#endif
