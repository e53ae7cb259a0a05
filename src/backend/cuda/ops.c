/*
 * ops.c - the CUDA backend's ops table: each op checks its operands
 * against the reserved scratch, queues one or a few kernels from kernels/
 * (or a cuBLAS GEMM) on the backend's stream, and latches the first
 * failure. Also the decode-step recording (CUDA graphs).
 */
#include "backend/cuda/cuda.h"

#include <string.h>

#include "kernels/attention.h"
#include "kernels/bert.h"
#include "kernels/elementwise.h"
#include "kernels/norm.h"
#include "kernels/quant.h"
#include "kernels/rope.h"
#include "kernels/topk.h"

void lp_cuda_destroy(struct lp_backend *be);

const int32_t *lp_cuda_pos(struct lp_cuda *c, const char *op, uint32_t pos0, uint32_t n)
{
	if (c->recording) {
		if (pos0 != c->rec_pos0) {
			lp_cuda_latch(c, op, "position %u inside a step recorded at %u", pos0,
				      c->rec_pos0);
			return NULL;
		}
		return c->step_pos;
	}
	if (!c->reserved || (uint64_t)pos0 + n > c->pos_cap) {
		lp_cuda_latch(c, op, "positions %u..%u beyond the reserved context of %u", pos0,
			      pos0 + n, c->pos_cap ? c->pos_cap - 1 : 0);
		return NULL;
	}
	return c->pos_table + pos0;
}

static int supports(const struct lp_backend *be, enum lp_qtype t)
{
	return lp_cuk_type_supported((int)t);
}

/* ---- matmul ------------------------------------------------------------ */

/* Y^T (rows x n, column-major, ldy) = W (rows x cols, row-major) X^T. */
static int gemm(struct lp_cuda *c, int rows, int n, int cols, const void *W, cudaDataType_t wt,
		const void *X, cudaDataType_t xt, float *Y, size_t ldy)
{
	const float one = 1.0f, zero = 0.0f;

	return lp_cuda_check_blas(c, "matmul",
				  cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, n, cols,
					       &one, W, wt, cols, X, xt, cols, &zero, Y,
					       CUDA_R_32F, (int)ldy, CUBLAS_COMPUTE_32F,
					       CUBLAS_GEMM_DEFAULT));
}

/* Y = X W^T, the bias left to matmul. */
static void product(struct lp_backend *be, const struct lp_backend_mat *W, const float *X,
		    size_t n, float *Y, size_t ldy)
{
	struct lp_cuda *c = lp_cuda_of(be);
	int type = (int)W->type, rows = (int)W->rows, cols = (int)W->cols;

	if (c->err || n == 0)
		return;
	if (!lp_cuk_type_supported(type)) {
		lp_cuda_latch(c, "matmul", "weights of type %d are not supported", type);
		return;
	}
	if (n <= LP_CUK_MATVEC_MAX_TOK) {
		lp_cuda_check(c, "matmul", lp_cuk_matvec(type, W->data, W->row_bytes, rows, cols, X,
							 (size_t)cols, (int)n, Y, ldy, c->stream));
		return;
	}
	if (!c->reserved || n > c->lim.n_rows || W->cols > c->lim.max_cols) {
		lp_cuda_latch(c, "matmul", "%zu x %d operand beyond the reserved scratch", n, cols);
		return;
	}
	switch (W->type) {
	case LP_Q_F32:
		gemm(c, rows, (int)n, cols, W->data, CUDA_R_32F, X, CUDA_R_32F, Y, ldy);
		return;
	case LP_Q_F16:
		if (!lp_cuda_check(c, "matmul", lp_cuk_f32_to_f16(X, c->x16, n * cols, c->stream)))
			gemm(c, rows, (int)n, cols, W->data, CUDA_R_16F, c->x16, CUDA_R_16F, Y, ldy);
		return;
	case LP_Q_BF16:
		if (!lp_cuda_check(c, "matmul", lp_cuk_f32_to_bf16(X, c->x16, n * cols, c->stream)))
			gemm(c, rows, (int)n, cols, W->data, CUDA_R_16BF, c->x16, CUDA_R_16BF, Y,
			     ldy);
		return;
	default:
		break;
	}
	/* quantized: dequantize a tile of rows to f16, multiply, next tile */
	if (lp_cuda_check(c, "matmul", lp_cuk_f32_to_f16(X, c->x16, n * cols, c->stream)))
		return;
	for (int r0 = 0; r0 < rows; r0 += (int)c->tile_rows) {
		int nr = rows - r0 < (int)c->tile_rows ? rows - r0 : (int)c->tile_rows;
		const uint8_t *w = (const uint8_t *)W->data + (size_t)r0 * W->row_bytes;
		if (lp_cuda_check(c, "matmul", lp_cuk_dequant_f16(type, w, W->row_bytes, nr, cols,
								  c->w16, c->stream)) ||
		    gemm(c, nr, (int)n, cols, c->w16, CUDA_R_16F, c->x16, CUDA_R_16F, Y + r0, ldy))
			return;
	}
}

/* The product, then its bias (lp_backend_mat.bias: ldy == rows) added by
 * the element-wise kernel. */
static void matmul(struct lp_backend *be, const struct lp_backend_mat *W, const float *X,
		   size_t n, float *Y, size_t ldy)
{
	struct lp_cuda *c = lp_cuda_of(be);

	product(be, W, X, n, Y, ldy);
	if (W->bias && !c->err && n)
		lp_cuda_check(c, "matmul", lp_cuk_add_rows(Y, W->bias, n, (size_t)W->rows, 0,
							   c->stream));
}

static void get_rows(struct lp_backend *be, const struct lp_backend_mat *W, const int32_t *ids,
		     size_t n, float *out)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (c->err || n == 0)
		return;
	if (c->recording) {
		/* the ids are read now: a replay would repeat these tokens */
		lp_cuda_latch(c, "get_rows", "token lookup inside a recorded decode step");
		return;
	}
	if (!c->reserved || n > c->lim.n_rows) {
		lp_cuda_latch(c, "get_rows", "%zu ids beyond the reserved scratch", n);
		return;
	}
	/* the previous copy out of the staging must be done before it is
	 * overwritten */
	if (lp_cuda_check(c, "get_rows", cudaEventSynchronize(c->ids_done)))
		return;
	memcpy(c->h_ids, ids, n * sizeof(*ids));
	if (lp_cuda_check(c, "get_rows", cudaMemcpyAsync(c->d_ids, c->h_ids, n * sizeof(*ids),
							 cudaMemcpyHostToDevice, c->stream)) ||
	    lp_cuda_check(c, "get_rows", cudaEventRecord(c->ids_done, c->stream)))
		return;
	lp_cuda_check(c, "get_rows", lp_cuk_get_rows((int)W->type, W->data, W->row_bytes,
						     (int)W->rows, (int)W->cols, c->d_ids, (int)n,
						     out, (size_t)W->cols, c->stream));
}

/* ---- norms, rope, attention ---------------------------------------------- */

static void rmsnorm(struct lp_backend *be, float *out, const float *x, const float *w, size_t n,
		    size_t width, float eps)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!c->err)
		lp_cuda_check(c, "rmsnorm", lp_cuk_rmsnorm(x, width, w, out, width, (int)n,
							   (int)width, eps, c->stream));
}

static void layernorm(struct lp_backend *be, float *out, const float *x, const float *w,
		      const float *b, size_t n, size_t width, float eps)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!c->err)
		lp_cuda_check(c, "layernorm", lp_cuk_layernorm(out, width, x, width, NULL, 0, w, b,
							       (int)n, (int)width, eps, c->stream));
}

static void rope(struct lp_backend *be, float *x, size_t n, uint32_t n_heads, uint32_t pos0,
		 const struct lp_backend_rope *r)
{
	struct lp_cuda *c = lp_cuda_of(be);
	const int32_t *pos;

	if (c->err || n == 0 || !(pos = lp_cuda_pos(c, "rope", pos0, (uint32_t)n)))
		return;
	lp_cuda_check(c, "rope", lp_cuk_rope(x, (size_t)n_heads * r->head_dim, (int)n,
					     (int)n_heads, (int)r->head_dim, (int)r->n_rot,
					     r->mode == LP_ROPE_NEOX ? LP_CUK_ROPE_NEOX
								     : LP_CUK_ROPE_ADJACENT,
					     r->base, pos, c->stream));
}

static void kv_store(struct lp_backend *be, const struct lp_backend_kv *kv, uint32_t pos0,
		     size_t n, const float *k, const float *v)
{
	struct lp_cuda *c = lp_cuda_of(be);
	const int32_t *pos;

	if (c->err || n == 0 || !(pos = lp_cuda_pos(c, "kv_store", pos0, (uint32_t)n)))
		return;
	if ((uint64_t)pos0 + n > kv->n_ctx) {
		lp_cuda_latch(c, "kv_store", "positions %u..%zu past the cache of %u", pos0,
			      pos0 + n, kv->n_ctx);
		return;
	}
	lp_cuda_check(c, "kv_store", lp_cuk_kv_store((int)kv->type, k, v, kv->kv_dim, (int)n,
						     (int)kv->kv_dim, kv->k, kv->v, kv->row_bytes,
						     pos, c->stream));
}

static void attention(struct lp_backend *be, const struct lp_backend_attn *a)
{
	struct lp_cuda *c = lp_cuda_of(be);
	const struct lp_backend_kv *kv = a->kv;
	const int32_t *pos;
	size_t ld = (size_t)a->n_head * a->head_dim;
	int splits;

	if (c->err || a->n == 0 || !(pos = lp_cuda_pos(c, "attention", a->pos0, a->n)))
		return;
	/* recorded: the length changes at every replay, so size the runs
	 * for the whole cache */
	splits = lp_cuda_attn_splits(c, a->n, a->n_head,
				     c->recording ? kv->n_ctx : a->pos0 + a->n);
	if (lp_cuk_attention_scratch_bytes((int)a->n, (int)a->n_head, (int)a->head_dim, splits) >
	    c->attn_bytes) {
		lp_cuda_latch(c, "attention", "%u queries of %u heads beyond the reserved scratch",
			      a->n, a->n_head);
		return;
	}
	lp_cuda_check(c, "attention",
		      lp_cuk_attention(a->q, ld, (int)a->n, (int)a->n_head, (int)a->n_head_kv,
				       (int)a->head_dim, (int)kv->type, kv->k, kv->v,
				       kv->row_bytes, pos, a->scale, splits, c->attn, a->out, ld,
				       c->stream));
}

/* ---- element-wise -------------------------------------------------------- */

/* The products one at a time: each is a kernel launch of its own anyway. */
static void matmul_many(struct lp_backend *be, const float *X, size_t n,
			const struct lp_backend_mm *mm, size_t count)
{
	for (size_t i = 0; i < count; i++)
		matmul(be, mm[i].W, X, n, mm[i].Y, mm[i].ldy);
}

static void swiglu(struct lp_backend *be, float *out, const float *gate, const float *up,
		   size_t count)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!c->err)
		lp_cuda_check(c, "swiglu", lp_cuk_swiglu(gate, up, out, count, c->stream));
}

static void gelu(struct lp_backend *be, float *x, size_t count)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!c->err)
		lp_cuda_check(c, "gelu", lp_cuk_gelu(x, count, c->stream));
}

static void add(struct lp_backend *be, float *y, const float *x, size_t n, size_t width,
		size_t ldx)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!c->err)
		lp_cuda_check(c, "add", lp_cuk_add_rows(y, x, n, width, ldx, c->stream));
}

/* ---- encoders and retrieval ------------------------------------------------ */

/*
 * Per head, over the sequences as a strided batch (column-major view: a
 * row-major (L, dh) block with rows ld apart is a (dh, L) matrix):
 * scores S[s,h] (row-major L x L) = Q K^T, i.e. C = K^T Q; then the masked
 * softmax over the keys of each sequence; then O = P V, i.e. C = V P.
 */
static void enc_attention(struct lp_backend *be, const struct lp_backend_enc_attn *a)
{
	struct lp_cuda *c = lp_cuda_of(be);
	const float one = 1.0f, zero = 0.0f;
	int L = (int)a->L, dh = (int)a->head_dim, ld = (int)a->ld, H = (int)a->n_head;
	int E = H * dh;
	long long sq = (long long)L * ld, sa = (long long)H * L * L, so = (long long)L * E;

	if (c->err || a->n_seq == 0)
		return;
	if (!c->reserved || (size_t)a->n_seq * a->L > c->lim.n_rows || a->L > c->lim.enc_len ||
	    a->n_head > (c->lim.n_head ? c->lim.n_head : 1)) {
		lp_cuda_latch(c, "enc_attention", "%u sequences of %u beyond the reserved scratch",
			      a->n_seq, a->L);
		return;
	}
	for (int h = 0; h < H; h++)
		if (lp_cuda_check_blas(c, "enc_attention",
				       cublasSgemmStridedBatched(c->blas, CUBLAS_OP_T, CUBLAS_OP_N,
								 L, L, dh, &one, a->k + h * dh, ld, sq,
								 a->q + h * dh, ld, sq, &zero,
								 c->enc_att + (size_t)h * L * L, L, sa,
								 (int)a->n_seq)))
			return;
	if (lp_cuda_check(c, "enc_attention",
			  lp_cuk_softmax_masked(c->enc_att, (int)a->n_seq, H, L, a->lens, a->scale,
						c->stream)))
		return;
	for (int h = 0; h < H; h++)
		if (lp_cuda_check_blas(c, "enc_attention",
				       cublasSgemmStridedBatched(c->blas, CUBLAS_OP_N, CUBLAS_OP_N,
								 dh, L, L, &one, a->v + h * dh, ld, sq,
								 c->enc_att + (size_t)h * L * L, L, sa,
								 &zero, a->out + h * dh, E, so,
								 (int)a->n_seq)))
			return;
}

static void mean_pool(struct lp_backend *be, float *out, const float *x, const int32_t *lens,
		      size_t n_seq, size_t L, size_t width)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!c->err)
		lp_cuda_check(c, "mean_pool", lp_cuk_mean_pool_l2(x, (int)n_seq, (int)L, (int)width,
								  lens, out, c->stream));
}

static void topk(struct lp_backend *be, const float *scores, size_t lds, size_t n_q, size_t n,
		 size_t k, float *out, int32_t *idx)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (c->err || n_q == 0)
		return;
	if (!c->reserved || n_q > c->lim.n_rows || k > c->lim.topk || n > 0x7fffffffu) {
		lp_cuda_latch(c, "topk", "%zu queries, k %zu beyond the reserved scratch", n_q, k);
		return;
	}
	lp_cuda_check(c, "topk", lp_cuk_topk(scores, lds, (int)n_q, (int)n, (int)k, c->topk_ws,
					     out, idx, c->stream));
}

static void scatter_l2(struct lp_backend *be, float *out, size_t n, size_t dim,
		       const uint32_t *off, const uint32_t *bucket, const float *val)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!c->err)
		lp_cuda_check(c, "scatter_l2", lp_cuk_scatter_l2(out, (int)n, (int)dim, off, bucket,
								  val, c->stream));
}

/* ---- recorded decode steps ----------------------------------------------- */

static int step_begin(struct lp_backend *be, uint64_t key, uint32_t pos0)
{
	struct lp_cuda *c = lp_cuda_of(be);

	if (!c->graphs || c->err || !c->reserved)
		return 0;
	if (c->recording) {
		lp_cuda_latch(c, "step_begin", "a step is already being recorded");
		return 0;
	}
	/* the step's position, read by the recorded kernels; the staging is
	 * rewritten only once the previous copy out of it has run */
	if (lp_cuda_check(c, "step_begin", cudaEventSynchronize(c->pos_done)))
		return 0;
	*c->h_step_pos = (int32_t)pos0;
	if (lp_cuda_check(c, "step_begin", cudaMemcpyAsync(c->step_pos, c->h_step_pos,
							   sizeof(int32_t), cudaMemcpyHostToDevice,
							   c->stream)) ||
	    lp_cuda_check(c, "step_begin", cudaEventRecord(c->pos_done, c->stream)))
		return 0;
	if (c->graph && c->graph_key == key)
		return !lp_cuda_check(c, "decode step", cudaGraphLaunch(c->graph, c->stream));
	if (c->graph) {
		cudaGraphExecDestroy(c->graph);
		c->graph = NULL;
	}
	if (lp_cuda_check(c, "step_begin",
			  cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal)))
		return 0;
	c->recording = 1;
	c->graph_key = key;
	c->rec_pos0 = pos0;
	return 0;
}

static void step_end(struct lp_backend *be)
{
	struct lp_cuda *c = lp_cuda_of(be);
	cudaGraph_t g = NULL;
	cudaError_t e;

	if (!c->recording)
		return;
	c->recording = 0;
	e = cudaStreamEndCapture(c->stream, &g);
	if (e != cudaSuccess || c->err) {
		/* nothing of the step ran: the latched error (or this one) says so */
		if (g)
			cudaGraphDestroy(g);
		lp_cuda_check(c, "step_end", e);
		lp_cuda_latch(c, "step_end", "the recorded step was not run");
		return;
	}
	e = cudaGraphInstantiate(&c->graph, g, 0);
	cudaGraphDestroy(g);
	if (lp_cuda_check(c, "step_end", e)) {
		c->graph = NULL;
		return;
	}
	lp_cuda_check(c, "decode step", cudaGraphLaunch(c->graph, c->stream));
}

const struct lp_backend_ops lp_cuda_ops = {
	.buf_alloc = lp_cuda_buf_alloc,
	.buf_free = lp_cuda_buf_free,
	.import = lp_cuda_import,
	.upload = lp_cuda_upload,
	.download = lp_cuda_download,
	.scratch_bytes = lp_cuda_scratch_bytes,
	.reserve = lp_cuda_reserve,
	.supports = supports,
	.matmul = matmul,
	.matmul_many = matmul_many,
	.get_rows = get_rows,
	.rmsnorm = rmsnorm,
	.layernorm = layernorm,
	.rope = rope,
	.kv_store = kv_store,
	.attention = attention,
	.swiglu = swiglu,
	.gelu = gelu,
	.add = add,
	.enc_attention = enc_attention,
	.mean_pool = mean_pool,
	.topk = topk,
	.scatter_l2 = scatter_l2,
	.step_begin = step_begin,
	.step_end = step_end,
	.sync = lp_cuda_sync,
	.destroy = lp_cuda_destroy,
};
