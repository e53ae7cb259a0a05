/*
 * cuda.h - the CUDA backend's state, shared by the files of the module
 * lpipe-cuda.so (internal: nothing outside src/backend/cuda/ includes it).
 *
 * One backend is one device, one non-blocking stream on it, one cuBLAS
 * handle bound to that stream, and scratch reserved once (reserve): the
 * f16 activation and weight tiles of the GEMM path, the attention
 * partials, cuBLAS's workspace, the token ids. Every op is queued on the
 * stream; a failed launch or cuBLAS call is latched with the op's name and
 * the memory phase, later ops are skipped, and sync (or download) returns
 * it. Device faults surface at sync, when the op is no longer known: with
 * LPIPE_CUDA_SYNC=1 in the environment every op is waited for at once, so
 * that the message names it.
 *
 * Positions reach the kernels through device memory: pos_table[p] == p,
 * so an op at position p passes pos_table + p; while a decode step is
 * being recorded as a CUDA graph it passes step_pos instead, whose value
 * is set before each replay. This is what lets one recorded step serve
 * every position.
 *
 * The module links none of lpipe: the tracked allocator and diagnostics
 * are reached through be->host (struct lp_backend_host).
 */
#ifndef LP_BACKEND_CUDA_CUDA_H
#define LP_BACKEND_CUDA_CUDA_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "backend/backend.h"

struct lp_cuda {
	struct lp_backend pub;
	const struct lp_backend_host *host;
	int dev;
	int n_sm;
	int sync_each;              /* LPIPE_CUDA_SYNC=1 */
	int graphs;                 /* 0 when LPIPE_CUDA_GRAPH=0 */
	cudaStream_t stream;
	cublasHandle_t blas;

	/* the latched error: LP_OK or the first failure since the last sync */
	enum lp_status err;
	char err_msg[512];
	const char *last_op, *last_phase;  /* for faults found at sync */

	/* scratch (reserve) */
	struct lp_backend_limits lim;
	int reserved;
	void *scratch;              /* one device block, carved below */
	size_t scratch_bytes;
	void *x16;                  /* (n_rows, max_cols) f16/bf16 activations */
	void *w16;                  /* (tile_rows, max_cols) f16 weight tile */
	size_t tile_rows;
	void *attn;                 /* attention partials */
	size_t attn_bytes;
	void *blas_ws;              /* cuBLAS workspace */
	size_t blas_ws_bytes;
	float *enc_att;             /* (n_rows, n_head, enc_len) encoder scores */
	void *topk_ws;              /* top-k scratch for (n_rows, topk) */
	int32_t *pos_table;         /* (pos_cap) positions 0.. */
	uint32_t pos_cap;
	int32_t *d_ids;             /* (n_rows) token ids */
	int32_t *h_ids;             /* pinned staging for d_ids */
	cudaEvent_t ids_done;       /* the last copy out of h_ids */

	/* one recorded decode step */
	int recording;
	uint64_t graph_key;
	uint32_t rec_pos0;
	cudaGraphExec_t graph;
	int32_t *step_pos;          /* device: the position of the step */
	int32_t *h_step_pos;        /* pinned staging for step_pos */
	cudaEvent_t pos_done;
};

static inline struct lp_cuda *lp_cuda_of(struct lp_backend *be)
{
	return (struct lp_cuda *)be->impl;
}

/*
 * Latch `op` failing with a CUDA error (when none is latched yet). Returns
 * 1 if e is a failure, so callers write `if (lp_cuda_fail(c, "rope", e)) ...`.
 * With sync_each, also waits for the stream so that a fault in the op just
 * queued is charged to it.
 */
int lp_cuda_check(struct lp_cuda *c, const char *op, cudaError_t e);
int lp_cuda_check_blas(struct lp_cuda *c, const char *op, cublasStatus_t s);
/* Latch a failure that is not a CUDA call's (bad operand, unsupported). */
void lp_cuda_latch(struct lp_cuda *c, const char *op, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Wait for the stream; return the latched error (cleared) or the fault. */
enum lp_status lp_cuda_sync(struct lp_backend *be, struct lp_diag *d);

/* Device position pointer for an op at pos0 (see above); NULL after
 * latching when pos0 is out of the reserved range. */
const int32_t *lp_cuda_pos(struct lp_cuda *c, const char *op, uint32_t pos0, uint32_t n);

/* Memory (mem.c). */
struct lp_backend_buf *lp_cuda_buf_alloc(struct lp_backend *be, enum lp_backend_place place,
					 enum lp_mem_tag tag, size_t bytes, struct lp_diag *d);
void lp_cuda_buf_free(struct lp_backend *be, struct lp_backend_buf *b);
struct lp_backend_buf *lp_cuda_import(struct lp_backend *be, const void *src, size_t bytes,
				      enum lp_mem_tag tag, struct lp_diag *d);
void lp_cuda_upload(struct lp_backend *be, struct lp_backend_buf *dst, size_t off,
		    const void *src, size_t bytes);
enum lp_status lp_cuda_download(struct lp_backend *be, void *dst,
				const struct lp_backend_buf *src, size_t off, size_t bytes,
				struct lp_diag *d);
size_t lp_cuda_scratch_bytes(const struct lp_backend *be, const struct lp_backend_limits *lim);
enum lp_status lp_cuda_reserve(struct lp_backend *be, const struct lp_backend_limits *lim,
			       struct lp_diag *d);
void lp_cuda_release_scratch(struct lp_cuda *c);
/* Attention runs per query for these limits (attention partials). */
int lp_cuda_attn_splits(const struct lp_cuda *c, uint32_t n, uint32_t n_head, uint32_t len);

/* The ops table (ops.c). */
extern const struct lp_backend_ops lp_cuda_ops;

#endif
