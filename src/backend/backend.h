/*
 * backend.h - the operations a model needs, behind one interface that the
 * CPU backend (backend/cpu/) and the CUDA backend (backend/cuda/, built as
 * the module lpipe-cuda.so) both implement.
 *
 * The forward pass (model/forward.c) is written once on this interface. It
 * works on whole operations - a matrix product over every token of a step,
 * a norm over every row, attention of every head - never on one dot
 * product, so that a device backend can run each as one or a few kernels.
 *
 * Address spaces. A backend owns buffers (struct lp_backend_buf). Each has
 * a placement: LP_BACKEND_HOST (the process can read it: buf->host is the
 * address) or LP_BACKEND_DEVICE (only the backend's ops can read it;
 * buf->host is NULL). Ops take plain pointers in the backend's address
 * space: buf->data plus a byte offset (lp_backend_at). For the CPU backend
 * data == host; for CUDA, data is a device pointer, which C code may offset
 * but never dereference. Host memory that is not a buffer of the backend
 * (a float array on the stack, the mapped GGUF) must never be passed to an
 * op, except where an argument says "host" (get_rows' ids, upload's source,
 * download's destination, import's source).
 *
 * Shapes and units. Activations are f32, row-major (token, feature): n
 * rows, one per token of the step, rows contiguous unless a stride (ld*, in
 * elements) is given. Widths and counts are elements; sizes are bytes.
 * Shapes are trusted: the caller (the forward pass, which checks the model
 * at load time) passes consistent ones; a backend may check them cheaply
 * but need not.
 *
 * Ordering and errors. Ops are queued in call order on one stream and may
 * run asynchronously: an op's result is visible to the next op, but to the
 * host only after download or sync. Ops return nothing; the first failure
 * (a kernel launch, a device fault, an unsupported type) is latched in the
 * backend together with the name of the op ("matmul", "attention") and the
 * memory phase current when the op was queued (lp_mem_phase(): "load",
 * "prefill", "decode"). Once an error is latched, later ops do nothing.
 * sync waits for every queued op and returns the latched error (clearing
 * it), with a message of the form
 *     cuda: attention failed during decode: an illegal memory access was encountered
 * download also returns it. Buffer allocation and import fail at once
 * (they return NULL and fill the diag) since the caller must know before
 * it queues work on them.
 *
 * Memory. Every buffer is counted by the tracked allocator (core/mem.h)
 * under the tag given at allocation: host buffers under LP_MEM_WEIGHTS,
 * LP_MEM_KV, LP_MEM_SCRATCH, ...; device buffers under LP_MEM_GPU_WEIGHTS,
 * LP_MEM_GPU_KV, LP_MEM_GPU_SCRATCH, which count against the device budget
 * (memory.gpu_budget) rather than the host one. A refusal returns
 * LP_E_NOMEM naming the phase and the device. Scratch an op needs of its
 * own (quantized activations, attention scores, conversion rows) is
 * allocated once by reserve, never per call: after reserve succeeds no op
 * allocates.
 *
 * Threads. A backend is used by one thread at a time; it may use threads
 * of its own inside (the CPU backend runs a pool of n_threads).
 *
 * Lifetime. lp_backend_open returns a backend the caller owns and frees
 * with lp_backend_free, after every buffer it allocated was freed.
 */
#ifndef LP_BACKEND_BACKEND_H
#define LP_BACKEND_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"
#include "core/status.h"
#include "quant/quant.h"

/* ---- buffers ---------------------------------------------------------- */

enum lp_backend_place {
	LP_BACKEND_HOST,   /* readable by the process: buf->host is valid */
	LP_BACKEND_DEVICE, /* readable only by the backend's ops */
};

struct lp_backend;

struct lp_backend_buf {
	struct lp_backend *be;        /* the backend that owns it */
	enum lp_backend_place place;
	enum lp_mem_tag tag;          /* what it is counted as */
	size_t bytes;
	void *data;   /* base address in the backend's address space */
	void *host;   /* == data for host placement, else NULL */
	void *impl;   /* the backend's own bookkeeping */
};

/* Address `off` bytes into `b`, in the backend's address space. */
static inline void *lp_backend_at(const struct lp_backend_buf *b, size_t off)
{
	return (uint8_t *)b->data + off;
}

/* ---- operands --------------------------------------------------------- */

/*
 * A weight matrix in the backend's address space: `rows` rows of `cols`
 * elements of `type`, rows `row_bytes` apart (lp_qtype_row_bytes), i.e. a
 * GGUF tensor with ne[0] == cols. Obtained by importing the mapped bytes
 * (ops->import) and pointing `data` into the returned buffer.
 */
/* How a weight matrix's rows lie in memory. */
enum lp_mat_layout {
	LP_MAT_ROWS,       /* as the file has them: each row whole, one after another */
	LP_MAT_ROWGROUPS,  /* groups of 16 rows interleaved (quant/rowgroup.h); only
			    * for a backend whose takes_rowgroups says so */
};

struct lp_backend_mat {
	enum lp_qtype type;
	const void *data;
	uint64_t rows, cols;
	size_t row_bytes;
	/* 1: an F32 matrix whose batch products (matmul of many rows) may
	 * round W and X to BF16 and sum in float, where that is faster (the
	 * CPU backend on AVX-512 BF16; LPIPE_CPU=avx2|scalar keeps float).
	 * The encoder asks for it; the generative models never do. */
	int bf16;
	/* NULL, or `rows` floats in the backend's address space that matmul
	 * adds to every row of Y (a linear layer's bias, added as the product
	 * is written rather than in a pass of its own); a product with a
	 * bias takes ldy == rows. matmul_many's weights have none. */
	const float *bias;
	enum lp_mat_layout layout;  /* LP_MAT_ROWS (0) unless the backend takes groups */
};

/* How RoPE pairs the elements of a head. llama.cpp rotates adjacent pairs
 * (x[2i], x[2i+1]) for llama GGUF files, whose converter permuted the Q/K
 * rows to match, and pairs (x[i], x[i + n_rot/2]) ("neox") for qwen2. */
enum lp_rope_mode { LP_ROPE_ADJACENT, LP_ROPE_NEOX };

struct lp_backend_rope {
	enum lp_rope_mode mode;
	uint32_t head_dim;   /* elements per head */
	uint32_t n_rot;      /* leading elements of each head rotated (even, <= head_dim) */
	float base;          /* frequency base: pair i turns by pos * base^(-2i/n_rot) */
};

/*
 * One layer's KV cache in the backend's address space: for each position
 * p < n_ctx, the key row at k + p * row_bytes and the value row at
 * v + p * row_bytes, each kv_dim elements (n_head_kv heads of head_dim)
 * of `type` (LP_Q_F32, LP_Q_F16 or LP_Q_Q8_0; Q8_0 blocks never straddle
 * two heads, so head_dim is a multiple of 32 for it).
 */
struct lp_backend_kv {
	enum lp_qtype type;
	uint32_t n_ctx, kv_dim;
	size_t row_bytes;   /* lp_qtype_row_bytes(type, kv_dim) */
	void *k, *v;
};

/*
 * Causal grouped-query attention of the n query rows of a step. Query row
 * t sits at position pos0 + t and attends to cached positions
 * [0, pos0 + t] (their rows stored by kv_store beforehand). Query head h
 * reads KV head h / (n_head / n_head_kv). For each (t, h):
 *     s[p]  = scale * dot(q[t, h], K[p, kvh])       p <= pos0 + t
 *     out[t, h] = sum_p softmax(s)[p] * V[p, kvh]
 * q and out are (n, n_head * head_dim); out is overwritten and must not
 * overlap q.
 */
struct lp_backend_attn {
	const float *q;
	float *out;
	const struct lp_backend_kv *kv;   /* host struct; its k, v in backend memory */
	uint32_t n, pos0;
	uint32_t n_head, n_head_kv, head_dim;
	float scale;                      /* usually 1 / sqrt(head_dim) */
};

/*
 * The largest operands the ops will see, given to reserve so the backend
 * can size its scratch once. Zero fields are "none".
 */
struct lp_backend_limits {
	uint32_t n_rows;     /* tokens per step (n of matmul, rmsnorm, ...) */
	uint64_t max_cols;   /* widest matmul input row (elements) */
	uint64_t max_rows;   /* most rows of a weight matrix (n_vocab for the output) */
	uint32_t n_ctx;      /* cache positions attention reads */
	uint32_t kv_dim;     /* n_head_kv * head_dim */
	enum lp_qtype kv_type;
	uint32_t n_head;     /* query heads */
	uint32_t n_rot;      /* rotated elements per head (rope) */
	uint32_t enc_len;    /* enc_attention: padded sequence length L (n_rows
			      * tokens of n_head heads); 0: no encoder */
	uint32_t topk;       /* topk: largest k (n_rows rows); 0: no top-k */
	uint32_t head_dim;   /* attention: elements per head; 0: not given */
};

/*
 * Self-attention of an encoder batch (BERT), bidirectional and masked: n_seq
 * sequences padded to L rows each, sequence s at rows s*L .. s*L+L-1 of q,
 * k, v (rows `ld` floats apart, n_head * head_dim used) and of out (rows
 * n_head * head_dim floats, contiguous); only its first lens[s] rows are
 * real (1 <= lens[s] <= L). For a real row i and head h:
 *     out[s, i, h] = sum_{j < lens[s]} softmax_j(scale * q[s,i,h] . k[s,j,h]) v[s,j,h]
 * Padding rows of out are finite (zero on the CPU), never to be read.
 * `lens` is in the backend's address space (upload it); out does not
 * overlap q, k or v. n_seq * L <= limits.n_rows, L <= limits.enc_len.
 */
struct lp_backend_enc_attn {
	const float *q, *k, *v;
	size_t ld;
	float *out;
	const int32_t *lens;
	uint32_t n_seq, L, n_head, head_dim;
	float scale;
};

/* One product of matmul_many: Y (n, ldy) = X W^T. */
struct lp_backend_mm {
	const struct lp_backend_mat *W;
	float *Y;
	size_t ldy;
};

/* The most products one matmul_many takes (Q, K and V). */
#define LP_BACKEND_MATMUL_MANY 4

/* The largest k of the topk op. */
#define LP_BACKEND_TOPK_MAX 1024

/* ---- the ops table ---------------------------------------------------- */

/*
 * Every backend fills every member (none is NULL). `be` is the backend the
 * table came with. Ops marked "queued" follow the error rules above.
 */
struct lp_backend_ops {
	/* -- memory -- */

	/* A buffer of `bytes` (64-byte aligned, contents undefined) at
	 * `place`, counted under `tag`: be->place for the backend's working
	 * memory, LP_BACKEND_HOST for memory the host reads often (a device
	 * backend may pin it). A backend without a device (the CPU) always
	 * gives host memory and says so in buf->place. Returns NULL and fills
	 * d (LP_E_NOMEM naming the phase and the device) on failure. Free
	 * with buf_free. */
	struct lp_backend_buf *(*buf_alloc)(struct lp_backend *be, enum lp_backend_place place,
					    enum lp_mem_tag tag, size_t bytes, struct lp_diag *d);
	/* Free a buffer of this backend; NULL is a no-op. Waits for queued
	 * ops that use it. */
	void (*buf_free)(struct lp_backend *be, struct lp_backend_buf *b);
	/*
	 * A buffer holding the `bytes` bytes at host address `src` (weights):
	 * the CPU backend aliases them (no copy, nothing allocated; `src` must
	 * outlive the buffer and place is HOST), a device backend allocates
	 * device memory under `tag` and copies them before returning. NULL
	 * and d filled on failure. Free with buf_free.
	 */
	struct lp_backend_buf *(*import)(struct lp_backend *be, const void *src, size_t bytes,
					 enum lp_mem_tag tag, struct lp_diag *d);
	/* Queued: copy `bytes` from host `src` to dst + off. `src` may be
	 * reused as soon as upload returns. */
	void (*upload)(struct lp_backend *be, struct lp_backend_buf *dst, size_t off,
		       const void *src, size_t bytes);
	/* Wait for every queued op, then copy `bytes` at src + off to host
	 * `dst`. Returns LP_OK or the latched error (then `dst` is undefined). */
	enum lp_status (*download)(struct lp_backend *be, void *dst,
				   const struct lp_backend_buf *src, size_t off, size_t bytes,
				   struct lp_diag *d);
	/* Bytes of scratch reserve would allocate for `lim` (for planners). */
	size_t (*scratch_bytes)(const struct lp_backend *be, const struct lp_backend_limits *lim);
	/* Allocate the ops' own scratch for operands up to `lim` (counted
	 * under LP_MEM_SCRATCH or LP_MEM_GPU_SCRATCH). The scratch serves one
	 * context at a time: a call with other limits replaces it (the CPU
	 * backend frees the old block first, so a smaller context does not
	 * pay for a larger one's). Returns LP_OK or LP_E_NOMEM (then the
	 * backend holds no scratch until the next reserve succeeds). Ops
	 * given larger operands than the limits reserved are a caller bug. */
	enum lp_status (*reserve)(struct lp_backend *be, const struct lp_backend_limits *lim,
				  struct lp_diag *d);
	/* 1 if matmul and get_rows take weights of type t. */
	int (*supports)(const struct lp_backend *be, enum lp_qtype t);
	/* 1 when matmul is faster on a rows x cols matrix of type t laid out
	 * in row groups (LP_MAT_ROWGROUPS), which matmul, matmul_many and
	 * get_rows then take as well as LP_MAT_ROWS. NULL: never. */
	int (*takes_rowgroups)(const struct lp_backend *be, enum lp_qtype t, uint64_t rows,
			       uint64_t cols);

	/* -- compute (all queued) -- */

	/*
	 * Y[t][r] = sum_k W[r][k] * X[t][k] for t < n, r < W->rows: X is
	 * (n, W->cols) contiguous, Y rows are ldy floats apart (ldy >=
	 * W->rows; columns past W->rows untouched). n == 1 is the decode
	 * mat-vec; larger n the prefill GEMM - the backend picks the method
	 * (the CPU backend: quantized-activation mat-vec below its gemm_min
	 * tokens, dequantized blocks and sgemm from it on). X and Y must not
	 * overlap.
	 */
	void (*matmul)(struct lp_backend *be, const struct lp_backend_mat *W, const float *X,
		       size_t n, float *Y, size_t ldy);
	/*
	 * `count` (1 <= count <= LP_BACKEND_MATMUL_MANY) products of the same
	 * X: mm[i].Y = X mm[i].W^T as matmul(mm[i].W, X, n, mm[i].Y,
	 * mm[i].ldy) would write it, the same values bit for bit. The
	 * weights share their cols; no Y overlaps X or another Y. A backend
	 * may take them as one op (the CPU backend's decode: X quantized
	 * once per activation format, every row in one parallel loop, one
	 * barrier instead of count), or as count matmuls.
	 */
	void (*matmul_many)(struct lp_backend *be, const float *X, size_t n,
			    const struct lp_backend_mm *mm, size_t count);
	/* out[t] = row ids[t] of W dequantized to f32 (W->cols floats each),
	 * t < n. `ids` is host memory, each < W->rows (checked by the caller). */
	void (*get_rows)(struct lp_backend *be, const struct lp_backend_mat *W,
			 const int32_t *ids, size_t n, float *out);
	/* out[t][i] = x[t][i] / sqrt(mean_i(x[t]^2) + eps) * w[i]; n rows of
	 * `width`; out may equal x. */
	void (*rmsnorm)(struct lp_backend *be, float *out, const float *x, const float *w,
			size_t n, size_t width, float eps);
	/* out[t][i] = (x[t][i] - mean) / sqrt(var + eps) * w[i] + b[i]
	 * (BERT); out may equal x. */
	void (*layernorm)(struct lp_backend *be, float *out, const float *x, const float *w,
			  const float *b, size_t n, size_t width, float eps);
	/* Rotate, in place, the first r->n_rot elements of each of the n_heads
	 * heads of the n rows of x (rows n_heads * r->head_dim floats); row t
	 * is at position pos0 + t. */
	void (*rope)(struct lp_backend *be, float *x, size_t n, uint32_t n_heads, uint32_t pos0,
		     const struct lp_backend_rope *r);
	/* Store the n key rows k and value rows v (each (n, kv->kv_dim) f32)
	 * at positions pos0 .. pos0+n-1 of the layer's cache, converted to
	 * kv->type (f16 round to nearest even; q8_0 as lp_quantize_row). */
	void (*kv_store)(struct lp_backend *be, const struct lp_backend_kv *kv, uint32_t pos0,
			 size_t n, const float *k, const float *v);
	/* See struct lp_backend_attn. */
	void (*attention)(struct lp_backend *be, const struct lp_backend_attn *a);
	/* out[i] = silu(gate[i]) * up[i] = gate[i] / (1 + exp(-gate[i])) * up[i],
	 * i < count; out may equal gate or up. */
	void (*swiglu)(struct lp_backend *be, float *out, const float *gate, const float *up,
		       size_t count);
	/* x[i] = gelu(x[i]) in place (the erf form, as BERT), i < count. */
	void (*gelu)(struct lp_backend *be, float *x, size_t count);
	/* y[t][i] += x[t * ldx + i] for t < n, i < width (y rows contiguous).
	 * ldx == width adds a matrix (the residual), ldx == 0 broadcasts
	 * one row (a bias). */
	void (*add)(struct lp_backend *be, float *y, const float *x, size_t n, size_t width,
		    size_t ldx);

	/* -- encoders and retrieval (all queued) -- */

	/* See struct lp_backend_enc_attn. */
	void (*enc_attention)(struct lp_backend *be, const struct lp_backend_enc_attn *a);
	/* Mean pooling and L2 normalisation: out[s] = v / |v| with v = sum of
	 * rows s*L .. s*L + lens[s] - 1 of x (rows `width` floats), for s <
	 * n_seq; a zero v stays zero. lens (n_seq) in backend memory, each
	 * 0 .. L; out (n_seq, width) does not overlap x. */
	void (*mean_pool)(struct lp_backend *be, float *out, const float *x, const int32_t *lens,
			  size_t n_seq, size_t L, size_t width);
	/* The k best of each of the n_q rows of `scores` (n floats, rows lds
	 * apart): idx[q*k + j] and out[q*k + j] the index and score of the
	 * j-th best, the higher score first, equal scores by the lower index,
	 * NaN below every number (retrieve/topk.h's order); past n, -1 and
	 * -inf. 1 <= k <= LP_BACKEND_TOPK_MAX, k <= limits.topk, n_q <=
	 * limits.n_rows, n >= 1. idx and out in backend memory. */
	void (*topk)(struct lp_backend *be, const float *scores, size_t lds, size_t n_q, size_t n,
		     size_t k, float *out, int32_t *idx);
	/* Hashed projection: each of the n rows of out (dim floats) is set to
	 * zero, then out[r][bucket[j]] += val[j] for off[r] <= j < off[r+1]
	 * (in that order), then L2-normalised (a zero row stays zero). off
	 * (n + 1), bucket and val (off[n]) in backend memory, bucket[j] < dim. */
	void (*scatter_l2)(struct lp_backend *be, float *out, size_t n, size_t dim,
			   const uint32_t *off, const uint32_t *bucket, const float *val);

	/* -- recorded decode steps -- */

	/*
	 * A device backend may record the ops of a decode step once and
	 * replay them at later steps (a CUDA graph): launches then cost one
	 * call per step instead of one per kernel. step_begin(be, key, pos0)
	 * returns 1 when it replayed the step recorded under `key` with every
	 * position argument read as pos0: the caller then queues none of the
	 * step's ops and goes on to download. It returns 0 when the caller
	 * must queue the step's ops, then call step_end (the backend may be
	 * recording them). Inside a step: every op's pos0 is the step's pos0,
	 * no upload, download, sync or get_rows (host memory read at queue
	 * time would be replayed stale: look tokens up before step_begin).
	 * `key` names the step's shape and operands: the caller changes it
	 * whenever any buffer address, size or weight of the step changes.
	 * reserve forgets recordings. The CPU backend always returns 0 and
	 * step_end does nothing.
	 */
	int (*step_begin)(struct lp_backend *be, uint64_t key, uint32_t pos0);
	void (*step_end)(struct lp_backend *be);

	/* -- completion -- */

	/* Wait for every queued op; return LP_OK or the latched error (then
	 * cleared) as described above. */
	enum lp_status (*sync)(struct lp_backend *be, struct lp_diag *d);
	/* Release the backend itself (lp_backend_free calls it). */
	void (*destroy)(struct lp_backend *be);
};

/* ---- a backend -------------------------------------------------------- */

struct lp_backend {
	const struct lp_backend_ops *ops;
	const char *name;        /* "cpu", "cuda" (static storage) */
	char device[128];        /* "Intel Xeon ... (avx2, 2 threads)", "NVIDIA H200 (sm_90)" */
	enum lp_backend_place place; /* where its buffers normally live */
	size_t mem_total;        /* device bytes, 0 for the CPU */
	size_t mem_free;         /* device bytes free when opened, 0 for the CPU */
	int n_threads;           /* CPU threads it uses (cpu), 0 otherwise */
	void *impl;              /* the backend's own state */
};

struct lp_backend_params {
	int n_threads;        /* CPU backend: <= 0 for every online CPU */
	uint32_t gemm_min;    /* CPU backend: matmul with at least this many rows
			       * dequantizes weight blocks and uses sgemm;
			       * 0: 16, UINT32_MAX: never */
	int device_index;     /* CUDA: which GPU (0 = the first) */
	int as_device;        /* CPU backend, for tests: report buffers as
			       * DEVICE with host == NULL, so callers must go
			       * through upload/download as with a GPU */
};

/* n_threads 0, gemm_min 16, device 0, as_device 0. */
struct lp_backend_params lp_backend_default_params(void);

/*
 * Open a backend by name:
 *   "cpu"   the CPU backend (always built);
 *   "cuda"  the CUDA backend from the module (see below); fails with
 *           LP_E_DEVICE and a message naming the reason: "the CUDA backend
 *           was not built (configure --with-cuda)", "unable to load
 *           'lpipe-cuda.so': ...", "no CUDA driver: ...", "no CUDA device";
 *   "auto"  "cuda" when it opens, else "cpu" (the reason CUDA was not used
 *           is then in *why when why != NULL, static or diag storage).
 * On success *out is owned by the caller (lp_backend_free). Returns LP_OK,
 * LP_E_DEVICE, LP_E_NOMEM or LP_E_USAGE (unknown name).
 */
enum lp_status lp_backend_open(const char *name, const struct lp_backend_params *p,
			       struct lp_backend **out, struct lp_diag *d);
/* lp_backend_open("auto"), also saying in `why` (cap bytes, may be NULL)
 * why CUDA was not taken when the CPU was. */
enum lp_status lp_backend_open_auto(const struct lp_backend_params *p, struct lp_backend **out,
				    char *why, size_t cap, struct lp_diag *d);
/* Free a backend; NULL is a no-op. */
void lp_backend_free(struct lp_backend *be);

/* Dequantize `n` elements (a multiple of the block) of type `t` from `src`
 * into `dst` on the host, with the fastest kernel the CPU supports: the
 * same floats, bit for bit, as quant/quant.h's lp_dequantize_row_ref.
 * Reentrant. (The CPU backend's, backend/cpu/host.c; quant/ names no
 * backend.) */
void lp_dequantize_row(enum lp_qtype t, const void *src, float *dst, size_t n);

/* scores[q * n + i] = dot(a[q], b[i]) for q < nq, i < n, rows of `dim`
 * floats, row-major: one float product A B^T on the host, with the CPU
 * backend's BLAS (a plain loop, same meaning, when OpenBLAS could not be
 * loaded). Sizes fit an int (the caller checks). */
void lp_backend_host_sgemm_nt(int nq, int n, int dim, const float *a, const float *b,
			      float *scores);

/* The CPU backend directly (what lp_backend_open("cpu") returns). */
enum lp_status lp_backend_cpu_open(const struct lp_backend_params *p, struct lp_backend **out,
				   struct lp_diag *d);

/* Bytes of scratch a CPU backend of n_threads threads and gemm_min
 * reserves for `lim` (what its ops->scratch_bytes returns): what a plan
 * counts before any backend is open. */
size_t lp_backend_cpu_scratch_bytes(int n_threads, uint32_t gemm_min,
				    const struct lp_backend_limits *lim);

/* The CPU kernel set the products run on here ("avx512", "avx2",
 * "scalar"): CPUID's choice, or LPIPE_CPU's. */
const char *lp_backend_cpu_kernels(void);

/* Names of the backends this build has, space-separated: "cpu" or
 * "cpu cuda" (cuda: the module was built; it may still fail to open). */
const char *lp_backend_built(void);

/* Where the installed CUDA module is looked for, as seen from the running
 * program (LP_MODULE_DIR, or where a staged or moved install put it):
 * "DIR/lpipe-cuda.so", written to out[0..cap); returns out. */
const char *lp_backend_module_path(char *out, size_t cap);

/* ---- devices ---------------------------------------------------------- */

struct lp_backend_device {
	int index;
	char name[128];      /* "NVIDIA H200" */
	int cc_major, cc_minor;
	size_t mem_total, mem_free;   /* bytes (cudaMemGetInfo) */
};

/*
 * List the CUDA devices into out[0..max): returns the count (>= 0) found
 * (may exceed max), or -1 with d filled (LP_E_DEVICE, the reason as for
 * lp_backend_open("cuda")) when there is no module, driver or device.
 */
int lp_backend_devices(struct lp_backend_device *out, int max, struct lp_diag *d);

/* ---- the module ABI ---------------------------------------------------
 *
 * The CUDA backend is the shared object lpipe-cuda.so, installed in
 * $(pkglibdir) (LP_MODULE_DIR, overridden by the environment variable
 * LPIPE_MODULE_DIR; the build directory's .libs in tests). lpipe opens it
 * with dlopen(RTLD_NOW | RTLD_LOCAL) on the first lp_backend_open("cuda" |
 * "auto") or lp_backend_devices, and looks up one symbol:
 *
 *     const struct lp_backend_module *lp_backend_cuda_entry(uint32_t abi);
 *
 * called with LP_BACKEND_ABI_VERSION. The module returns its table, or
 * NULL when it was built for another ABI; lpipe also refuses a table whose
 * abi differs. The module links none of lpipe's symbols: what it needs of
 * the host (the tracked allocator's accounting, diagnostics) comes through
 * struct lp_backend_host. Bump LP_BACKEND_ABI_VERSION on any change to
 * this header's structs or to the ops' meaning.
 */

#define LP_BACKEND_ABI_VERSION 3u
#define LP_BACKEND_MODULE_NAME "lpipe-cuda.so"
#define LP_BACKEND_MODULE_ENTRY "lp_backend_cuda_entry"

/* lpipe's services for a module (the functions of core/mem.h and
 * core/status.h of the same names). */
struct lp_backend_host {
	uint32_t abi;   /* LP_BACKEND_ABI_VERSION */
	/* account device bytes under a GPU tag against memory.gpu_budget;
	 * LP_OK or LP_E_NOMEM with d filled (names phase and request) */
	enum lp_status (*mem_reserve)(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d);
	void (*mem_unreserve)(enum lp_mem_tag tag, size_t bytes);
	const char *(*mem_phase)(void);
	enum lp_status (*diag_set)(struct lp_diag *d, enum lp_status status, const char *file,
				   int line, int col, const char *fmt, ...)
		__attribute__((format(printf, 6, 7)));
	/* lp_log at verbose level (the message without a newline) */
	void (*log_verbose)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
};

struct lp_backend_module {
	uint32_t abi;           /* LP_BACKEND_ABI_VERSION the module was built with */
	const char *name;       /* "cuda" */
	const char *version;    /* "CUDA 13.0, cuBLAS 13.0" (static) */
	/* Open a backend on device p->device_index: LP_OK, LP_E_DEVICE (no
	 * driver, no device: the message says which), LP_E_NOMEM. `host`
	 * outlives every backend the module opens. */
	enum lp_status (*open)(const struct lp_backend_host *host,
			       const struct lp_backend_params *p, struct lp_backend **out,
			       struct lp_diag *d);
	/* As lp_backend_devices. */
	int (*devices)(const struct lp_backend_host *host, struct lp_backend_device *out, int max,
		       struct lp_diag *d);
};

typedef const struct lp_backend_module *(*lp_backend_entry_fn)(uint32_t abi);

#endif
