/*
 * mem.c - the CUDA backend's buffers and scratch.
 *
 * Device buffers are cudaMalloc'ed after the host's tracked allocator has
 * accounted them under a device tag (so memory.gpu_budget refuses before
 * the driver does); host buffers are pinned (cudaMallocHost), so copies
 * to and from them are asynchronous and may sit inside a recorded step.
 * A host tag asked for device memory is counted under its device
 * counterpart (weights -> gpu-weights, kv -> gpu-kv, index -> gpu-embed,
 * the rest -> gpu-scratch).
 */
#include "backend/cuda/cuda.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/attention.h"
#include "kernels/topk.h"

/* Weight rows dequantized to f16 at a time for the GEMM path: a 16 MiB
 * tile, which cuBLAS multiplies at full rate and which stays small beside
 * the weights. */
#define TILE_HALVES (8u << 20)
#define BLAS_WS_BYTES (32u << 20)

static enum lp_mem_tag device_tag(enum lp_mem_tag t)
{
	switch (t) {
	case LP_MEM_GPU_WEIGHTS: case LP_MEM_GPU_KV: case LP_MEM_GPU_SCRATCH:
	case LP_MEM_GPU_EMBED: return t;
	case LP_MEM_WEIGHTS: return LP_MEM_GPU_WEIGHTS;
	case LP_MEM_INDEX: return LP_MEM_GPU_EMBED;
	case LP_MEM_KV: return LP_MEM_GPU_KV;
	default: return LP_MEM_GPU_SCRATCH;
	}
}

/* cudaMalloc `bytes` under `tag` (a device tag): NULL and d filled on
 * refusal by the budget or the driver. */
static void *dev_alloc(struct lp_cuda *c, enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	void *p = NULL;
	cudaError_t e;

	if (c->host->mem_reserve(tag, bytes, d) != LP_OK)
		return NULL;
	e = cudaMalloc(&p, bytes ? bytes : 1);
	if (e != cudaSuccess) {
		const char *phase = c->host->mem_phase();
		c->host->mem_unreserve(tag, bytes);
		c->host->diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				  "unable to allocate %zu bytes on %s during %s: %s", bytes,
				  c->pub.device, phase ? phase : "run", cudaGetErrorString(e));
		cudaGetLastError(); /* not sticky: clear it */
		return NULL;
	}
	return p;
}

static void dev_free(struct lp_cuda *c, enum lp_mem_tag tag, void *p, size_t bytes)
{
	if (!p)
		return;
	cudaFree(p);
	c->host->mem_unreserve(tag, bytes);
}

struct lp_backend_buf *lp_cuda_buf_alloc(struct lp_backend *be, enum lp_backend_place place,
					 enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	struct lp_cuda *c = lp_cuda_of(be);
	struct lp_backend_buf *b = calloc(1, sizeof(*b));
	cudaError_t e;

	if (!b) {
		c->host->diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate a buffer record");
		return NULL;
	}
	b->be = be;
	b->place = place;
	b->bytes = bytes;
	if (place == LP_BACKEND_DEVICE) {
		b->tag = device_tag(tag);
		b->data = dev_alloc(c, b->tag, bytes, d);
	} else {
		b->tag = tag;
		if (c->host->mem_reserve(tag, bytes, d) == LP_OK) {
			e = cudaMallocHost(&b->data, bytes ? bytes : 1);
			if (e != cudaSuccess) {
				c->host->mem_unreserve(tag, bytes);
				c->host->diag_set(d, LP_E_NOMEM, NULL, 0, 0,
						  "unable to allocate %zu bytes of pinned memory: %s",
						  bytes, cudaGetErrorString(e));
				cudaGetLastError();
				b->data = NULL;
			}
		}
		b->host = b->data;
	}
	if (!b->data) {
		free(b);
		return NULL;
	}
	return b;
}

void lp_cuda_buf_free(struct lp_backend *be, struct lp_backend_buf *b)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!b)
		return;
	/* queued ops may still read it */
	cudaStreamSynchronize(c->stream);
	if (b->place == LP_BACKEND_DEVICE) {
		dev_free(c, b->tag, b->data, b->bytes);
	} else {
		cudaFreeHost(b->data);
		c->host->mem_unreserve(b->tag, b->bytes);
	}
	free(b);
}

struct lp_backend_buf *lp_cuda_import(struct lp_backend *be, const void *src, size_t bytes,
				      enum lp_mem_tag tag, struct lp_diag *d)
{
	struct lp_cuda *c = lp_cuda_of(be);
	struct lp_backend_buf *b = lp_cuda_buf_alloc(be, LP_BACKEND_DEVICE, tag, bytes, d);
	cudaError_t e;

	if (!b)
		return NULL;
	e = cudaMemcpy(b->data, src, bytes, cudaMemcpyHostToDevice);
	if (e != cudaSuccess) {
		c->host->diag_set(d, LP_E_DEVICE, NULL, 0, 0, "unable to copy %zu bytes to %s: %s",
				  bytes, c->pub.device, cudaGetErrorString(e));
		lp_cuda_buf_free(be, b);
		return NULL;
	}
	return b;
}

void lp_cuda_upload(struct lp_backend *be, struct lp_backend_buf *dst, size_t off,
		    const void *src, size_t bytes)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (c->err)
		return;
	if (c->recording) {
		/* the graph would read `src` again at every replay */
		lp_cuda_latch(c, "upload", "copy from host memory inside a recorded decode step");
		return;
	}
	/* from pageable memory the copy is staged before this returns, so
	 * `src` may be reused at once, as the interface promises */
	lp_cuda_check(c, "upload", cudaMemcpyAsync((uint8_t *)dst->data + off, src, bytes,
						   cudaMemcpyHostToDevice, c->stream));
}

enum lp_status lp_cuda_download(struct lp_backend *be, void *dst,
				const struct lp_backend_buf *src, size_t off, size_t bytes,
				struct lp_diag *d)
{
	struct lp_cuda *c = lp_cuda_of(be);
	enum lp_status st = lp_cuda_sync(be, d);
	cudaError_t e;

	if (st != LP_OK)
		return st;
	e = cudaMemcpy(dst, (const uint8_t *)src->data + off, bytes, cudaMemcpyDeviceToHost);
	if (e != cudaSuccess)
		return c->host->diag_set(d, LP_E_DEVICE, NULL, 0, 0,
					 "cuda: download failed during %s: %s",
					 c->host->mem_phase() ? c->host->mem_phase() : "run",
					 cudaGetErrorString(e));
	return LP_OK;
}

/* ---- scratch ----------------------------------------------------------- */

int lp_cuda_attn_splits(const struct lp_cuda *c, uint32_t n, uint32_t n_head, uint32_t len)
{
	/* enough blocks for two waves over the chip, runs of at least 32
	 * positions, at most 64 runs */
	uint32_t want = (2u * (uint32_t)c->n_sm + n * n_head - 1) / (n * n_head);
	uint32_t most = (len + 31) / 32;

	if (want > most)
		want = most;
	if (want > 64)
		want = 64;
	return want ? (int)want : 1;
}

struct layout {
	size_t x16, w16, attn, enc, topk, ws, pos, ids, total;
	size_t tile_rows, attn_bytes;
};

static size_t up256(size_t b)
{
	return (b + 255) & ~(size_t)255;
}

static void plan(const struct lp_cuda *c, const struct lp_backend_limits *lim, struct layout *l)
{
	size_t cols = lim->max_cols ? lim->max_cols : 1, rows = lim->n_rows ? lim->n_rows : 1;
	size_t heads = lim->n_head ? lim->n_head : 1;

	memset(l, 0, sizeof(*l));
	l->tile_rows = TILE_HALVES / cols;
	if (l->tile_rows > lim->max_rows)
		l->tile_rows = lim->max_rows;
	if (l->tile_rows < 1)
		l->tile_rows = 1;
	/* partials: (n * runs) <= n + 2 * SMs queries-runs per head, each
	 * head_dim + 2 floats; n_head * head_dim <= max_cols */
	l->attn_bytes = (rows + 2 * (size_t)c->n_sm + 64) * (cols + 2 * heads) * sizeof(float);
	l->x16 = l->total;
	l->total += up256(rows * cols * 2);
	l->w16 = l->total;
	l->total += up256(l->tile_rows * cols * 2);
	l->attn = l->total;
	l->total += up256(l->attn_bytes);
	l->enc = l->total;
	l->total += up256(rows * heads * lim->enc_len * sizeof(float));
	l->topk = l->total;
	l->total += up256(lim->topk ? lp_cuk_topk_scratch_bytes((int)rows, (int)lim->topk) : 0);
	l->ws = l->total;
	l->total += up256(BLAS_WS_BYTES);
	l->pos = l->total;
	l->total += up256((size_t)(lim->n_ctx + 1) * sizeof(int32_t));
	l->ids = l->total;
	l->total += up256(rows * sizeof(int32_t));
}

size_t lp_cuda_scratch_bytes(const struct lp_backend *be, const struct lp_backend_limits *lim)
{
	struct layout l;

	plan((const struct lp_cuda *)be->impl, lim, &l);
	return l.total;
}

void lp_cuda_release_scratch(struct lp_cuda *c)
{
	if (c->scratch) {
		cudaStreamSynchronize(c->stream);
		dev_free(c, LP_MEM_GPU_SCRATCH, c->scratch, c->scratch_bytes);
	}
	if (c->h_ids)
		cudaFreeHost(c->h_ids);
	c->scratch = NULL;
	c->h_ids = NULL;
	c->reserved = 0;
}

static int covers(const struct lp_backend_limits *a, const struct lp_backend_limits *b)
{
	return a->n_rows >= b->n_rows && a->max_cols >= b->max_cols &&
	       a->max_rows >= b->max_rows && a->n_ctx >= b->n_ctx && a->n_head >= b->n_head &&
	       a->enc_len >= b->enc_len && a->topk >= b->topk;
}

enum lp_status lp_cuda_reserve(struct lp_backend *be, const struct lp_backend_limits *lim,
			       struct lp_diag *d)
{
	struct lp_cuda *c = lp_cuda_of(be);
	struct lp_backend_limits want = *lim;
	struct layout l;
	int32_t *pos;
	uint8_t *base;
	cudaError_t e;

	if (c->reserved) {
		if (covers(&c->lim, lim))
			return LP_OK;
		/* grow: the union of both */
		if (c->lim.n_rows > want.n_rows) want.n_rows = c->lim.n_rows;
		if (c->lim.max_cols > want.max_cols) want.max_cols = c->lim.max_cols;
		if (c->lim.max_rows > want.max_rows) want.max_rows = c->lim.max_rows;
		if (c->lim.n_ctx > want.n_ctx) want.n_ctx = c->lim.n_ctx;
		if (c->lim.n_head > want.n_head) want.n_head = c->lim.n_head;
		if (c->lim.enc_len > want.enc_len) want.enc_len = c->lim.enc_len;
		if (c->lim.topk > want.topk) want.topk = c->lim.topk;
		lp_cuda_release_scratch(c);
	}
	if (c->graph) { /* its pointers go with the old scratch */
		cudaGraphExecDestroy(c->graph);
		c->graph = NULL;
	}
	plan(c, &want, &l);
	base = dev_alloc(c, LP_MEM_GPU_SCRATCH, l.total, d);
	if (!base)
		return LP_E_NOMEM;
	c->scratch = base;
	c->scratch_bytes = l.total;
	c->x16 = base + l.x16;
	c->w16 = base + l.w16;
	c->tile_rows = l.tile_rows;
	c->attn = base + l.attn;
	c->attn_bytes = l.attn_bytes;
	c->enc_att = (float *)(base + l.enc);
	c->topk_ws = base + l.topk;
	c->blas_ws = base + l.ws;
	c->blas_ws_bytes = BLAS_WS_BYTES;
	c->pos_table = (int32_t *)(base + l.pos);
	c->pos_cap = want.n_ctx + 1;
	c->d_ids = (int32_t *)(base + l.ids);
	/* positions 0..n_ctx, uploaded once: an op at p reads pos_table[p] */
	pos = malloc((size_t)c->pos_cap * sizeof(*pos));
	e = cudaMallocHost((void **)&c->h_ids, (want.n_rows ? want.n_rows : 1) * sizeof(int32_t));
	if (!pos || e != cudaSuccess) {
		free(pos);
		lp_cuda_release_scratch(c);
		return c->host->diag_set(d, LP_E_NOMEM, NULL, 0, 0,
					 "cannot allocate the CUDA backend's host staging");
	}
	for (uint32_t i = 0; i < c->pos_cap; i++)
		pos[i] = (int32_t)i;
	e = cudaMemcpy(c->pos_table, pos, (size_t)c->pos_cap * sizeof(*pos),
		       cudaMemcpyHostToDevice);
	free(pos);
	if (e == cudaSuccess)
		e = cublasSetWorkspace(c->blas, c->blas_ws, c->blas_ws_bytes) == CUBLAS_STATUS_SUCCESS
			    ? cudaSuccess : cudaErrorUnknown;
	if (e != cudaSuccess) {
		lp_cuda_release_scratch(c);
		return c->host->diag_set(d, LP_E_DEVICE, NULL, 0, 0,
					 "unable to set up the CUDA scratch: %s",
					 cudaGetErrorString(e));
	}
	c->lim = want;
	c->reserved = 1;
	return LP_OK;
}
