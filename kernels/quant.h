/*
 * quant.h - CUDA kernels over quantized weights: dequantizing mat-vec,
 * dequantization to f16 for cuBLAS GEMM, row gather (embedding lookup),
 * and float conversions.
 *
 * `type` is a GGUF type number (enum lp_qtype): F32, F16, BF16, Q4_0,
 * Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K. A weight matrix is `n_rows`
 * rows of `n_cols` elements, each row `row_bytes` bytes (whole blocks, as
 * lp_qtype_row_bytes says), all on the device. The values are those of
 * lp_dequantize_row: the same bytes decoded the same way, so that the GPU
 * and the CPU multiply the same numbers. Q4_1 weights must be 4-byte
 * aligned (their blocks are read as words); activation rows that are
 * 16-byte aligned are read 16 bytes at a time, others element-wise.
 *
 * Every launcher enqueues on `stream` and returns cudaSuccess, the launch
 * error, or cudaErrorInvalidValue for an unsupported type or shape; it
 * never synchronizes, so it may be captured into a CUDA graph.
 */
#ifndef LP_KERNELS_QUANT_H
#define LP_KERNELS_QUANT_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most tokens one lp_cuk_matvec call takes; more go to GEMM. */
#define LP_CUK_MATVEC_MAX_TOK 8

/* 1 if the kernels handle `type`. */
int lp_cuk_type_supported(int type);

/*
 * y[t * ldy + r] = dot(W row r, x + t * ldx) for t < n_tok (1 to
 * LP_CUK_MATVEC_MAX_TOK) and r < n_rows. Each weight row is read once for
 * all the tokens; the dot products accumulate in f32 on the dequantized
 * weights and the f32 activations (no 8-bit activation rounding).
 */
cudaError_t lp_cuk_matvec(int type, const void *W, size_t row_bytes, int n_rows, int n_cols,
			  const float *x, size_t ldx, int n_tok, float *y, size_t ldy,
			  cudaStream_t stream);

/*
 * Rows [0, n_rows) of W dequantized into `out` as f16, row-major
 * (n_rows, n_cols): a tile for cublasGemmEx. Any type but BF16, whose
 * range f16 does not hold (multiply BF16 weights as they are instead).
 */
cudaError_t lp_cuk_dequant_f16(int type, const void *W, size_t row_bytes, int n_rows,
			       int n_cols, void *out, cudaStream_t stream);

/*
 * Embedding lookup: out[t * ldo + j] = element j of W row ids[t], for
 * t < n and j < n_cols. `ids` is on the device (read when the kernel runs,
 * so a captured graph sees the current token); an id outside [0, n_rows)
 * yields a row of zeros.
 */
cudaError_t lp_cuk_get_rows(int type, const void *W, size_t row_bytes, int n_rows, int n_cols,
			    const int32_t *ids, int n, float *out, size_t ldo,
			    cudaStream_t stream);

/* out[i] = x[i] rounded to nearest even f16 (or bf16), i < n. */
cudaError_t lp_cuk_f32_to_f16(const float *x, void *out, size_t n, cudaStream_t stream);
cudaError_t lp_cuk_f32_to_bf16(const float *x, void *out, size_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
