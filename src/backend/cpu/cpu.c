/*
 * cpu.c - the CPU backend's buffers and ops (attention and the KV cache
 * are in attn.c).
 *
 * Matrix products quantize the input rows once for the weight type and
 * take lp_matvec over blocks of weight rows, reusing each block for every
 * token of the step while it is in cache; from gemm_min rows on they
 * dequantize blocks of GEMM_ROWS weight rows to float and multiply them
 * with sgemm. The pool splits the rows between threads. A matrix laid
 * out in row groups (lp_backend_mat.layout, quant/rowgroup.h) takes the
 * row-group kernels for its mat-vecs, and is split between threads 16
 * rows at a time; its batch products and get_rows read the same values.
 */
#include "backend/cpu/cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/approx.h"
#include "backend/cpu/blas.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matvec.h"
#include "core/threadpool.h"
#include "quant/blocks.h"
#include "quant/rowgroup.h"

/* Weight rows dequantized at a time for sgemm: up to GEMM_FLOATS floats
 * (4 MiB) and at least GEMM_ROWS rows. Each sgemm call packs the whole
 * activation block X again, so few calls with many rows each beat many
 * small ones: with 64-row blocks, packing X took 15% of Qwen2.5-0.5B's
 * prefill at 512 tokens (perf), a third of the product itself. So the rows
 * go to the threads in about two chunks each, one call per chunk when it
 * fits the scratch. */
#define GEMM_ROWS 32
#define GEMM_FLOATS ((size_t)1 << 20)

#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

struct cpu {
	struct lp_backend base;
	struct lp_pool *pool;
	uint32_t gemm_min;
	int as_device;

	/* scratch, one tracked block laid out by layout() */
	uint8_t *scratch;
	struct lp_backend_limits lim;  /* what it was sized for */
	struct lp_cpu_scratch s;       /* attention's part */
	float *wf;                     /* (n_threads, wf_floats) */
	size_t wf_floats;
	uint8_t *act;                  /* (n_rows, act_stride) quantized rows */
	size_t act_stride;
	struct lp_q8_act *acts;        /* (n_rows) views into act */
	float *rope_cos, *rope_sin;    /* (n_rows, n_rot / 2) */
	float *enc_att;                /* (n_threads, enc_len^2) encoder scores */
	uint8_t *xpack;                /* a batch's activations packed for q8_gemm */
	const struct lp_q8_gemm *q8;   /* the kernel set's int8 batch product, or NULL */

	/* the rope table's key: angles for rows at rope_pos .. + rope_n */
	uint32_t rope_pos, rope_n, rope_rot;
	float rope_base;
	int rope_valid;
};

static struct cpu *cpu_of(struct lp_backend *be) { return (struct cpu *)be; }

/* ---- scratch ---------------------------------------------------------- */

/* Rows per pool chunk of a matrix of `rows` rows: about two per thread. */
static size_t gemm_chunk_rows(size_t rows, size_t n_threads)
{
	size_t per = (rows + 2 * n_threads - 1) / (2 * n_threads);

	return (per + GEMM_ROWS - 1) / GEMM_ROWS * GEMM_ROWS;
}

/* Floats of one thread's dequantized block for a rows x cols matrix: a
 * whole chunk when it fits in GEMM_FLOATS, and never less than GEMM_ROWS
 * rows. It grows with rows and cols, so the limits' largest matrix
 * (max_rows x max_cols) bounds every matrix's block. */
static size_t gemm_block_floats(size_t rows, size_t cols, size_t n_threads)
{
	size_t want = gemm_chunk_rows(rows, n_threads) * cols;
	size_t least = GEMM_ROWS * cols;

	want = want < GEMM_FLOATS ? want : GEMM_FLOATS;
	return want > least ? want : least;
}

/* Largest quantized-activation row of max_cols elements, any weight type. */
static size_t act_stride(uint64_t max_cols)
{
	size_t a = lp_q8_act_bytes(LP_Q_Q8_0, max_cols), b = lp_q8_act_bytes(LP_Q_Q6_K, max_cols);

	return ALIGN64(a > b ? a : b);
}

/* Lay out the scratch for `lim`; with base == NULL only counts bytes. */
static size_t layout(struct cpu *c, int n_threads, uint32_t gemm_min,
		     const struct lp_backend_limits *lim, uint8_t *base)
{
	size_t nb = lim->n_rows, off = 0, stride = act_stride(lim->max_cols);
	size_t conv = lim->kv_type == LP_Q_F32 ? 0 : (size_t)lim->n_ctx * lim->kv_dim;
	size_t wfn = gemm_min <= nb ? gemm_block_floats(lim->max_rows, lim->max_cols,
							(size_t)n_threads) : 0;
	size_t enc = (size_t)lim->enc_len * lim->enc_len;
	/* the int8 batch product packs the batch's activations once */
	const struct lp_q8_gemm *q8 = lp_cpu_kernels()->q8_gemm;
	size_t xpn = wfn && q8 ? lp_q8_gemm_pack_bytes(nb, lim->max_cols) : 0;
	/* decode attention's partial sums, for the steps that read the cache
	 * in place (attn.c) */
	size_t parts = lim->head_dim ? (size_t)(nb < LP_CPU_ATTN_ROWS ? nb : LP_CPU_ATTN_ROWS - 1) *
					       LP_CPU_ATTN_MAX_PARTS * lim->n_head *
					       (lim->head_dim + 2)
				     : 0;
	float *cosv, *sinv, *att_tmp, *kf, *vf, *wf, *enc_att, *att_part;
	uint8_t *act, *xpack;
	struct lp_q8_act *acts;
#define TAKE(ptr, count) do { \
		(ptr) = base ? (void *)(base + off) : NULL; \
		off += ALIGN64((count) * sizeof(*(ptr))); \
	} while (0)
	TAKE(cosv, nb * (lim->n_rot / 2));
	TAKE(sinv, nb * (lim->n_rot / 2));
	TAKE(att_tmp, (size_t)n_threads * lim->n_ctx);
	TAKE(att_part, parts);
	TAKE(kf, conv);
	TAKE(vf, conv);
	TAKE(wf, (size_t)n_threads * wfn);
	TAKE(act, nb * stride);
	TAKE(acts, nb);
	TAKE(enc_att, (size_t)n_threads * enc);
	TAKE(xpack, xpn);
#undef TAKE
	if (c) {
		c->rope_cos = cosv;
		c->rope_sin = sinv;
		c->s.att_tmp = att_tmp;
		c->s.att_part = parts ? att_part : NULL;
		c->s.kf = conv ? kf : NULL;
		c->s.vf = conv ? vf : NULL;
		c->s.n_ctx = lim->n_ctx;
		c->wf = wf;
		c->wf_floats = wfn;
		c->act = act;
		c->act_stride = stride;
		c->acts = acts;
		c->enc_att = enc_att;
		c->xpack = xpn ? xpack : NULL;
		c->q8 = xpn ? q8 : NULL;
	}
	return off;
}

const char *lp_backend_cpu_kernels(void)
{
	return lp_matvec_kernel_name();
}

size_t lp_backend_cpu_scratch_bytes(int n_threads, uint32_t gemm_min,
				    const struct lp_backend_limits *lim)
{
	return layout(NULL, n_threads, gemm_min, lim, NULL);
}

static size_t cpu_scratch_bytes(const struct lp_backend *be, const struct lp_backend_limits *lim)
{
	const struct cpu *c = (const struct cpu *)be;

	return lp_backend_cpu_scratch_bytes(be->n_threads, c->gemm_min, lim);
}

static int same_limits(const struct lp_backend_limits *a, const struct lp_backend_limits *b)
{
	return a->n_rows == b->n_rows && a->max_cols == b->max_cols &&
	       a->max_rows == b->max_rows && a->n_ctx == b->n_ctx && a->kv_dim == b->kv_dim &&
	       a->kv_type == b->kv_type && a->n_head == b->n_head && a->n_rot == b->n_rot &&
	       a->enc_len == b->enc_len && a->topk == b->topk && a->head_dim == b->head_dim;
}

static enum lp_status cpu_reserve(struct lp_backend *be, const struct lp_backend_limits *lim,
				  struct lp_diag *d)
{
	struct cpu *c = cpu_of(be);
	enum lp_mem_tag tag = c->as_device ? LP_MEM_GPU_SCRATCH : LP_MEM_SCRATCH;
	size_t bytes = layout(NULL, be->n_threads, c->gemm_min, lim, NULL);

	if (c->scratch && same_limits(lim, &c->lim))
		return LP_OK;
	/* the old block goes first, so the budget sees one at a time */
	lp_mem_free(c->scratch);
	c->scratch = NULL;
	memset(&c->lim, 0, sizeof(c->lim));
	c->rope_valid = 0;
	c->scratch = lp_mem_alloc_pages(tag, bytes, d);
	if (!c->scratch)
		return LP_E_NOMEM;
	c->lim = *lim;
	layout(c, be->n_threads, c->gemm_min, lim, c->scratch);
	return LP_OK;
}

/* ---- buffers ---------------------------------------------------------- */

static struct lp_backend_buf *new_buf(struct lp_backend *be, enum lp_backend_place place,
				      enum lp_mem_tag tag, size_t bytes, void *data, int owned)
{
	struct lp_backend_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->be = be;
	b->place = cpu_of(be)->as_device ? LP_BACKEND_DEVICE : LP_BACKEND_HOST;
	b->tag = tag;
	b->bytes = bytes;
	b->data = data;
	b->host = b->place == LP_BACKEND_HOST ? data : NULL;
	b->impl = owned ? data : NULL;   /* what buf_free releases */
	return b;
}

static struct lp_backend_buf *cpu_buf_alloc(struct lp_backend *be, enum lp_backend_place place,
					    enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	/* resident as written: a KV cache or activation buffer sized for the
	 * whole context holds only the positions and rows the prompts reach */
	void *p = lp_mem_alloc_pages(tag, bytes ? bytes : 1, d);
	struct lp_backend_buf *b;

	if (!p)
		return NULL;
	b = new_buf(be, place, tag, bytes, p, 1);
	if (!b) {
		lp_mem_free(p);
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: cannot allocate a buffer", lp_mem_phase());
	}
	return b;
}

static void cpu_buf_free(struct lp_backend *be, struct lp_backend_buf *b)
{
	if (!b)
		return;
	lp_mem_free(b->impl);
	free(b);
}

static struct lp_backend_buf *cpu_import(struct lp_backend *be, const void *src, size_t bytes,
					 enum lp_mem_tag tag, struct lp_diag *d)
{
	struct lp_backend_buf *b;

	if (cpu_of(be)->as_device) {
		/* a device copies: so does the stand-in, under the caller's tag */
		b = cpu_buf_alloc(be, LP_BACKEND_DEVICE, tag, bytes, d);
		if (b)
			memcpy(b->data, src, bytes);
		return b;
	}
	b = new_buf(be, LP_BACKEND_HOST, tag, bytes, (void *)src, 0);
	if (!b)
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: cannot allocate a buffer", lp_mem_phase());
	return b;
}

static void cpu_upload(struct lp_backend *be, struct lp_backend_buf *dst, size_t off,
		       const void *src, size_t bytes)
{
	memcpy((uint8_t *)dst->data + off, src, bytes);
}

static enum lp_status cpu_download(struct lp_backend *be, void *dst,
				   const struct lp_backend_buf *src, size_t off, size_t bytes,
				   struct lp_diag *d)
{
	memcpy(dst, (const uint8_t *)src->data + off, bytes);
	return LP_OK;
}

static int cpu_supports(const struct lp_backend *be, enum lp_qtype t)
{
	return lp_qtype_supported(t);
}

/* Row groups where the chosen kernel set has a row-group kernel for t
 * (so never under LPIPE_CPU=avx2|scalar, whose outputs stay as they
 * were). */
static int cpu_takes_rowgroups(const struct lp_backend *be, enum lp_qtype t, uint64_t rows,
			       uint64_t cols)
{
	return lp_rowgroup_has(t) && rows % LP_RG_ROWS == 0 && cols % LP_QK == 0 &&
	       lp_matvec_takes_groups(t);
}

static int grouped(const struct lp_backend_mat *W)
{
	return W->layout == LP_MAT_ROWGROUPS;
}

/* Row r of W as floats (W->cols), in either layout: a row group's row is
 * put back together a block at a time, so the floats are the same. */
static void dequant_row(const struct lp_backend_mat *W, size_t r, float *out)
{
	size_t nb = W->cols / LP_QK, gb = lp_rowgroup_block_bytes(W->type);
	const uint8_t *g;
	uint8_t blk[sizeof(struct lp_blk_q8_0)];

	if (!grouped(W)) {
		lp_dequantize_row(W->type, (const uint8_t *)W->data + r * W->row_bytes, out, W->cols);
		return;
	}
	g = (const uint8_t *)W->data + r / LP_RG_ROWS * nb * gb;
	for (size_t b = 0; b < nb; b++) {
		lp_rowgroup_get(W->type, g + b * gb, (int)(r % LP_RG_ROWS), blk);
		lp_dequantize_row(W->type, blk, out + b * LP_QK, LP_QK);
	}
}

/* ---- matrix products -------------------------------------------------- */

struct matmul_job {
	const struct lp_backend_mat *W;
	const float *X;              /* (n, W->cols) */
	const struct lp_q8_act *xq;  /* (n) or NULL for float weights */
	float *Y;                    /* (n, ldy), columns [0, W->rows) */
	size_t n, ldy;
	float *wf;                   /* gemm: (n_threads, wf_floats) */
	size_t wf_floats;
	const struct lp_q8_gemm *q8; /* the int8 batch product, or NULL */
	uint8_t *xpack;              /* its packed activations */
};

static int is_float_type(enum lp_qtype t)
{
	return t == LP_Q_F32 || t == LP_Q_F16 || t == LP_Q_BF16;
}

static void quantize_task(void *arg, size_t b, size_t e, int tid)
{
	struct matmul_job *j = arg;
	struct lp_q8_act *xq = (struct lp_q8_act *)j->xq;

	for (size_t i = b; i < e; i++)
		lp_q8_act_quantize(j->W->type, j->X + i * j->W->cols, j->W->cols, &xq[i]);
}

/* Rows [r0, r1) for every token, a cache-sized block of rows at a time. */
static void matmul_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct matmul_job *j = arg;
	const struct lp_backend_mat *W = j->W;
	size_t block = j->n == 1 ? r1 - r0 : 32768 / W->row_bytes + 1;

	if (grouped(W))
		block = (block + LP_RG_ROWS - 1) / LP_RG_ROWS * LP_RG_ROWS;
	for (size_t b = r0; b < r1; b += block) {
		size_t e = b + block < r1 ? b + block : r1;
		const uint8_t *w = (const uint8_t *)W->data + b * W->row_bytes;
		for (size_t t = 0; t < j->n; t++)
			if (grouped(W))
				lp_matvec_groups(W->type, W->data, W->cols, &j->xq[t],
						 j->Y + t * j->ldy, b, e);
			else
				lp_matvec(W->type, w, e - b, W->cols, j->X + t * W->cols,
					  j->xq ? &j->xq[t] : NULL, j->Y + t * j->ldy + b);
	}
}

/* Rows [r0, r1): dequantize them to float in as few blocks as the
 * thread's scratch allows, each of the same size, and for each block
 * Y[:, block] = X W_block^T. */
static void gemm_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct matmul_job *j = arg;
	const struct lp_backend_mat *W = j->W;
	size_t cols = W->cols, cap = W->type == LP_Q_F32 ? r1 - r0 : j->wf_floats / cols;
	size_t n_blk = (r1 - r0 + cap - 1) / cap, step = (r1 - r0 + n_blk - 1) / n_blk;
	float *wf = j->wf + (size_t)tid * j->wf_floats;

	for (size_t b = r0; b < r1; b += step) {
		size_t rb = r1 - b < step ? r1 - b : step;
		const float *blk = wf;
		if (W->type == LP_Q_F32)
			blk = (const float *)((const uint8_t *)W->data + b * W->row_bytes);
		else
			for (size_t r = 0; r < rb; r++)
				dequant_row(W, b + r, wf + r * cols);
		lp_gemm_nt_bias(j->n, rb, cols, j->X, cols, blk, cols, W->bias ? W->bias + b : NULL,
				j->Y + b, j->ldy);
	}
}

/* Rows [r0, r1) of a product in BF16 (lp_backend_mat.bf16), on this
 * thread's part of wf. */
static void bf16_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct matmul_job *j = arg;
	const struct lp_backend_mat *W = j->W;

	lp_cpu_kernels()->gemm_bf16(j->n, r1 - r0, W->cols, j->X, W->cols,
				    (const float *)((const uint8_t *)W->data + r0 * W->row_bytes),
				    W->row_bytes / sizeof(float), W->bias ? W->bias + r0 : NULL,
				    j->Y + r0, j->ldy,
				    j->wf + (size_t)tid * j->wf_floats, j->wf_floats * sizeof(float));
}

static void pack_task(void *arg, size_t g0, size_t g1, int tid)
{
	const struct matmul_job *j = arg;

	j->q8->pack(j->W->type, j->xq, j->n, j->W->cols, j->xpack, g0, g1);
}

/* Rows [r0, r1) of the int8 batch product, on this thread's part of wf. */
static void q8_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct matmul_job *j = arg;
	const struct lp_backend_mat *W = j->W;

	j->q8->rows(W->type, W->data, grouped(W) ? 0 : W->row_bytes, W->cols, j->xpack, j->n, j->Y,
		    j->ldy, r0, r1, j->wf + (size_t)tid * j->wf_floats);
}

/* Quantize the n input rows for W's type into the scratch, in the pool. */
static void quantize_rows(struct cpu *c, struct matmul_job *j)
{
	for (size_t t = 0; t < j->n; t++)
		c->acts[t] = (struct lp_q8_act){ 0, c->act + t * c->act_stride, c->act_stride };
	j->xq = c->acts;
	lp_pool_for(c->pool, j->n, 4, quantize_task, j);
}

static void cpu_matmul(struct lp_backend *be, const struct lp_backend_mat *W, const float *X,
		       size_t n, float *Y, size_t ldy)
{
	struct cpu *c = cpu_of(be);
	struct matmul_job j = { W, X, NULL, Y, n, ldy, c->wf, c->wf_floats, NULL, NULL };

	if (n >= c->gemm_min && c->q8 && c->q8->has(W->type) &&
	    lp_q8_gemm_wbuf_bytes(W->cols) <= c->wf_floats * sizeof(float)) {
		size_t th = (size_t)lp_pool_size(c->pool);
		j.q8 = c->q8;
		j.xpack = c->xpack;
		quantize_rows(c, &j);
		lp_pool_for(c->pool, (n + LP_Q8_GROUP - 1) / LP_Q8_GROUP, 1, pack_task, &j);
		lp_pool_for(c->pool, W->rows, gemm_chunk_rows(W->rows, th), q8_task, &j);
		if (W->bias)
			lp_backend_cpu_add(c->pool, Y, W->bias, n, W->rows, 0);
		return;
	}
	if (n >= c->gemm_min) {
		/* the float and BF16 products start their sums from the bias */
		size_t th = (size_t)lp_pool_size(c->pool);
		size_t chunk = gemm_chunk_rows(W->rows, th);
		if (W->type == LP_Q_F32 && W->bf16 && lp_cpu_kernels()->gemm_bf16 &&
		    lp_cpu_bf16_gemm_scratch(W->cols) <= c->wf_floats * sizeof(float)) {
			/* one chunk per thread: each packs its rows of W once */
			chunk = ((W->rows + th - 1) / th + GEMM_ROWS - 1) / GEMM_ROWS * GEMM_ROWS;
			lp_pool_for(c->pool, W->rows, chunk, bf16_task, &j);
			return;
		}
		/* f32 weights need no dequantized blocks: one chunk per thread,
		 * so each packs the activations once (the encoder's products) */
		if (W->type == LP_Q_F32)
			chunk = ((W->rows + th - 1) / th + GEMM_ROWS - 1) / GEMM_ROWS * GEMM_ROWS;
		lp_pool_for(c->pool, W->rows, chunk, gemm_task, &j);
		return;
	}
	if (!is_float_type(W->type))
		quantize_rows(c, &j);
	lp_pool_for(c->pool, W->rows, grouped(W) ? LP_RG_ROWS : 8, matmul_task, &j);
	if (W->bias)
		lp_backend_cpu_add(c->pool, Y, W->bias, n, W->rows, 0);
}

/* ---- several products of one input ----------------------------------- */

/* The activation format a weight type's mat-vec reads (matvec.c): none
 * (float weights read X), blocks of 32 (legacy) or of 256 (K types). */
static int act_format(enum lp_qtype t)
{
	if (is_float_type(t))
		return 0;
	return t == LP_Q_Q4_K || t == LP_Q_Q5_K || t == LP_Q_Q6_K ? 2 : 1;
}

/* The products' rows end to end, each product's first row at a multiple
 * of MANY_ALIGN (rows past a product's end belong to none), so that the
 * pool's chunks (multiples of it) start each product's runs where one
 * matmul's chunks start them: the four-row kernels group the same rows,
 * and a row group is never split. */
#define MANY_ALIGN LP_RG_ROWS

struct many_job {
	const struct lp_backend_mm *mm;
	size_t count;
	const float *X;
	const struct lp_q8_act *xq[LP_BACKEND_MATMUL_MANY];
	size_t start[LP_BACKEND_MATMUL_MANY];  /* first row, end to end */
};

static void many_task(void *arg, size_t r0, size_t r1, int tid)
{
	const struct many_job *j = arg;

	for (size_t i = 0; i < j->count; i++) {
		const struct lp_backend_mat *W = j->mm[i].W;
		size_t b = j->start[i], e = b + W->rows;
		size_t lo = r0 > b ? r0 : b, hi = r1 < e ? r1 : e;
		if (lo < hi && grouped(W))
			lp_matvec_groups(W->type, W->data, W->cols, j->xq[i], j->mm[i].Y, lo - b,
					 hi - b);
		else if (lo < hi)
			lp_matvec_rows(W->type, W->data, W->cols, j->X, j->xq[i], j->mm[i].Y,
				       lo - b, hi - b);
	}
}

/* A decode step's products of one input: X quantized once per format,
 * then one parallel loop (one barrier) over all their rows. */
static void cpu_matmul_many(struct lp_backend *be, const float *X, size_t n,
			    const struct lp_backend_mm *mm, size_t count)
{
	struct cpu *c = cpu_of(be);
	struct many_job j = { mm, count, X, { NULL }, { 0 } };
	int slot[3] = { -1, -1, -1 }, used = 0;
	size_t rows = 0;

	if (n != 1 || count > LP_BACKEND_MATMUL_MANY)
		goto one_by_one;
	for (size_t i = 0; i < count; i++) {
		int f = act_format(mm[i].W->type);
		if (f && slot[f] < 0) {
			if ((size_t)used >= c->lim.n_rows)
				goto one_by_one;   /* no scratch row for a second format */
			slot[f] = used++;
			c->acts[slot[f]] = (struct lp_q8_act){ 0, c->act + slot[f] * c->act_stride,
							       c->act_stride };
			lp_q8_act_quantize(mm[i].W->type, X, mm[i].W->cols, &c->acts[slot[f]]);
		}
		j.xq[i] = f ? &c->acts[slot[f]] : NULL;
		j.start[i] = rows;
		rows += (mm[i].W->rows + MANY_ALIGN - 1) / MANY_ALIGN * MANY_ALIGN;
	}
	lp_pool_for(c->pool, rows, MANY_ALIGN, many_task, &j);
	return;
one_by_one:
	for (size_t i = 0; i < count; i++)
		cpu_matmul(be, mm[i].W, X, n, mm[i].Y, mm[i].ldy);
}

static void cpu_get_rows(struct lp_backend *be, const struct lp_backend_mat *W,
			 const int32_t *ids, size_t n, float *out)
{
	for (size_t t = 0; t < n; t++)
		dequant_row(W, (size_t)ids[t], out + t * W->cols);
}

/* ---- element-wise ops ------------------------------------------------- */

static void cpu_rmsnorm(struct lp_backend *be, float *out, const float *x, const float *w,
			size_t n, size_t width, float eps)
{
	for (size_t t = 0; t < n; t++, x += width, out += width) {
		double ss = 0;
		for (size_t i = 0; i < width; i++)
			ss += (double)x[i] * x[i];
		float scale = (float)(1.0 / sqrt(ss / (double)width + eps));
		for (size_t i = 0; i < width; i++)
			out[i] = x[i] * scale * w[i];
	}
}

static void cpu_layernorm(struct lp_backend *be, float *out, const float *x, const float *w,
			  const float *b, size_t n, size_t width, float eps)
{
	lp_backend_cpu_layernorm(cpu_of(be)->pool, out, x, w, b, n, width, eps);
}

/* cos/sin of pos*base^(-2i/n_rot) for rows pos0 .. pos0+n-1, kept while
 * the same rows are asked for again (every layer of a step). */
static void rope_table(struct cpu *c, uint32_t pos0, size_t n, const struct lp_backend_rope *r)
{
	size_t half = r->n_rot / 2;

	if (c->rope_valid && c->rope_pos == pos0 && c->rope_n >= n && c->rope_rot == r->n_rot &&
	    c->rope_base == r->base)
		return;
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < half; i++) {
			double theta = (double)(pos0 + t) *
				       pow(r->base, -2.0 * (double)i / r->n_rot);
			c->rope_cos[t * half + i] = (float)cos(theta);
			c->rope_sin[t * half + i] = (float)sin(theta);
		}
	c->rope_valid = 1;
	c->rope_pos = pos0;
	c->rope_n = (uint32_t)n;
	c->rope_rot = r->n_rot;
	c->rope_base = r->base;
}

static void cpu_rope(struct lp_backend *be, float *x, size_t n, uint32_t n_heads, uint32_t pos0,
		     const struct lp_backend_rope *r)
{
	struct cpu *c = cpu_of(be);
	size_t half = r->n_rot / 2, width = (size_t)n_heads * r->head_dim;
	/* adjacent: (x[2i], x[2i+1]); neox: (x[i], x[i+half]) */
	size_t step = r->mode == LP_ROPE_ADJACENT ? 2 : 1;
	size_t other = r->mode == LP_ROPE_ADJACENT ? 1 : half;

	rope_table(c, pos0, n, r);
	for (size_t t = 0; t < n; t++) {
		const float *cs = c->rope_cos + t * half, *sn = c->rope_sin + t * half;
		for (size_t h = 0; h < n_heads; h++) {
			float *v = x + t * width + h * r->head_dim;
			for (size_t i = 0; i < half; i++) {
				size_t a = step * i, b = a + other;
				float x0 = v[a], x1 = v[b];
				v[a] = x0 * cs[i] - x1 * sn[i];
				v[b] = x0 * sn[i] + x1 * cs[i];
			}
		}
	}
}

static void cpu_swiglu(struct lp_backend *be, float *out, const float *gate, const float *up,
		       size_t count)
{
	if (out != gate && out != up)
		memcpy(out, gate, count * sizeof(*out));
	if (out != up) {
		lp_swiglu_f32(count, out, up); /* vectorized in place */
		return;
	}
	for (size_t i = 0; i < count; i++) {
		float g = gate[i];
		out[i] = g / (1.0f + expf(-g)) * up[i];
	}
}

/*
 * erf(z) for GELU, from the rational approximation of Abramowitz and Stegun
 * 7.1.26 (absolute error below 1.5e-7, under float rounding of the result
 * near 1): libm's erff took a sixth of the BERT encoder's time, and this
 * form has no branches but the sign.
 */
float lp_backend_cpu_erf(float z)
{
	float a = fabsf(z), t = 1.0f / (1.0f + LP_APPROX_ERF_P * a);
	float p = t * (LP_APPROX_ERF_A1 + t * (LP_APPROX_ERF_A2 + t * (LP_APPROX_ERF_A3 +
		  t * (LP_APPROX_ERF_A4 + t * LP_APPROX_ERF_A5))));
	float r = 1.0f - p * expf(-a * a);

	return z < 0 ? -r : r;
}

static void cpu_gelu(struct lp_backend *be, float *x, size_t count)
{
	lp_backend_cpu_gelu(cpu_of(be)->pool, x, count);
}

static void cpu_add(struct lp_backend *be, float *y, const float *x, size_t n, size_t width,
		    size_t ldx)
{
	lp_backend_cpu_add(cpu_of(be)->pool, y, x, n, width, ldx);
}

/* ---- encoders and retrieval ------------------------------------------- */

static void cpu_enc_attention(struct lp_backend *be, const struct lp_backend_enc_attn *a)
{
	struct cpu *c = cpu_of(be);

	lp_backend_cpu_enc_attention(c->pool, c->enc_att, (size_t)c->lim.enc_len * c->lim.enc_len,
				     a);
}

static void cpu_mean_pool(struct lp_backend *be, float *out, const float *x, const int32_t *lens,
			  size_t n_seq, size_t L, size_t width)
{
	lp_backend_cpu_mean_pool(out, x, lens, n_seq, L, width);
}

static void cpu_topk(struct lp_backend *be, const float *scores, size_t lds, size_t n_q,
		     size_t n, size_t k, float *out, int32_t *idx)
{
	lp_backend_cpu_topk(cpu_of(be)->pool, scores, lds, n_q, n, k, out, idx);
}

static void cpu_scatter_l2(struct lp_backend *be, float *out, size_t n, size_t dim,
			   const uint32_t *off, const uint32_t *bucket, const float *val)
{
	lp_backend_cpu_scatter_l2(out, n, dim, off, bucket, val);
}

/* ---- attention, completion -------------------------------------------- */

static void cpu_kv_store(struct lp_backend *be, const struct lp_backend_kv *kv, uint32_t pos0,
			 size_t n, const float *k, const float *v)
{
	lp_backend_cpu_kv_store(kv, pos0, n, k, v);
}

static void cpu_attention(struct lp_backend *be, const struct lp_backend_attn *a)
{
	lp_backend_cpu_attention(cpu_of(be)->pool, &cpu_of(be)->s, a);
}

/* Ops run as they are called: there is nothing to record or replay. */
static int cpu_step_begin(struct lp_backend *be, uint64_t key, uint32_t pos0)
{
	return 0;
}

static void cpu_step_end(struct lp_backend *be)
{
}

static enum lp_status cpu_sync(struct lp_backend *be, struct lp_diag *d)
{
	return LP_OK;
}

static void cpu_destroy(struct lp_backend *be)
{
	struct cpu *c = cpu_of(be);

	lp_pool_free(c->pool);
	lp_mem_free(c->scratch);
	free(c);
}

static const struct lp_backend_ops cpu_ops = {
	.buf_alloc = cpu_buf_alloc,
	.buf_free = cpu_buf_free,
	.import = cpu_import,
	.upload = cpu_upload,
	.download = cpu_download,
	.scratch_bytes = cpu_scratch_bytes,
	.reserve = cpu_reserve,
	.supports = cpu_supports,
	.takes_rowgroups = cpu_takes_rowgroups,
	.matmul = cpu_matmul,
	.matmul_many = cpu_matmul_many,
	.get_rows = cpu_get_rows,
	.rmsnorm = cpu_rmsnorm,
	.layernorm = cpu_layernorm,
	.rope = cpu_rope,
	.kv_store = cpu_kv_store,
	.attention = cpu_attention,
	.swiglu = cpu_swiglu,
	.gelu = cpu_gelu,
	.add = cpu_add,
	.enc_attention = cpu_enc_attention,
	.mean_pool = cpu_mean_pool,
	.topk = cpu_topk,
	.scatter_l2 = cpu_scatter_l2,
	.step_begin = cpu_step_begin,
	.step_end = cpu_step_end,
	.sync = cpu_sync,
	.destroy = cpu_destroy,
};

enum lp_status lp_backend_cpu_open(const struct lp_backend_params *p, struct lp_backend **out,
				   struct lp_diag *d)
{
	struct cpu *c;
	enum lp_status st;
	int n_threads = p->n_threads > 0 ? p->n_threads : lp_pool_default_threads();

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot allocate a backend");
	c->base.ops = &cpu_ops;
	c->base.name = "cpu";
	c->base.place = p->as_device ? LP_BACKEND_DEVICE : LP_BACKEND_HOST;
	c->base.n_threads = n_threads;
	c->gemm_min = p->gemm_min ? p->gemm_min : 16;
	c->as_device = p->as_device;
	if ((st = lp_blas_load(d)) || (st = lp_pool_new(n_threads, &c->pool, d))) {
		free(c);
		return st;
	}
	/* sgemm runs inside our own workers, one block each: OpenBLAS must
	 * not start threads of its own on top. */
	lp_blas_set_threads(1);
	snprintf(c->base.device, sizeof(c->base.device), "cpu (%s kernels, %d thread%s%s)",
		 lp_matvec_kernel_name(), n_threads, n_threads == 1 ? "" : "s",
		 p->as_device ? ", as a device" : "");
	*out = &c->base;
	return LP_OK;
}
