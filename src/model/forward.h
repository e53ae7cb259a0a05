/*
 * forward.h - the forward pass of a llama/qwen2 model: an evaluation
 * context (struct lp_forward) holding the KV cache, the activation scratch
 * and the logits, on one or two backends (backend/backend.h).
 *
 * Everything a context needs is allocated by lp_forward_new and sized by its
 * parameters (n_ctx tokens of KV cache, n_batch tokens of scratch): no
 * allocation happens while tokens are evaluated, so a context that was
 * created will not run out of memory later. The bytes it takes are known
 * in advance (lp_forward_plan_bytes), tagged LP_MEM_KV, LP_MEM_SCRATCH and
 * LP_MEM_LOGITS on the host and LP_MEM_GPU_WEIGHTS, LP_MEM_GPU_KV and
 * LP_MEM_GPU_SCRATCH on a device.
 *
 * Partial offload: with an `offload` backend and gpu_layers N, layers
 * [0, N) run on it and the rest on `backend`; the residual stream moves
 * once per step at the boundary. The tokens are embedded by the first
 * part and the logits computed by the last (the offload backend when it
 * has every layer). A part on a device copies its weights there when the
 * context is made; a part on the host reads them in place.
 *
 * Evaluation appends tokens at position `pos` (the number of tokens
 * already in the cache, or fewer to overwrite a tail). Prompts are
 * processed n_batch tokens per step; generation evaluates one token at a
 * time. On the CPU backend a step of at least gemm_min tokens dequantizes
 * blocks of weight rows to float and multiplies them with OpenBLAS sgemm,
 * which is faster for long prompts and exact up to float rounding; steps
 * below it use lp_matvec over each block of rows for every token
 * (activations quantized to 8 bits for quantized weights), which gives the
 * same logits as token-by-token evaluation.
 *
 * A context is used by one thread at a time; its backends use their own
 * threads inside. The model (and its GGUF) and any backend passed in the
 * parameters must outlive the context.
 */
#ifndef LP_MODEL_FORWARD_H
#define LP_MODEL_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/status.h"
#include "model/model.h"

struct lp_forward_params {
	uint32_t n_ctx;          /* tokens of KV cache; 0: the model's training context */
	enum lp_qtype kv_type;   /* LP_Q_F32, LP_Q_F16 or LP_Q_Q8_0 */
	int n_threads;           /* <= 0: the number of online CPUs */
	uint32_t n_batch;        /* tokens per prefill step; 0: 512 */
	uint32_t gemm_min;       /* steps of at least this many tokens dequantize
				  * weight blocks to float and use sgemm; 0: 16,
				  * UINT32_MAX: never */
	struct lp_backend *backend;  /* runs the layers not offloaded; NULL: the
				      * context opens a CPU backend of its own
				      * with n_threads and gemm_min */
	struct lp_backend *offload;  /* runs layers [0, gpu_layers); NULL: none */
	uint32_t gpu_layers;     /* layers on `offload` (clamped to n_layer);
				  * ignored without it */
};

/* Bytes a context takes, by tag. The gpu_ ones are device memory (the
 * offloaded part); weights a host part reads in place are not counted
 * here (the model's mapping is). */
struct lp_forward_bytes {
	size_t kv, scratch, logits;
	size_t gpu_weights, gpu_kv, gpu_scratch;
};

struct lp_forward;

/* n_ctx 2048, kv_type F16, all CPUs, n_batch 512, gemm_min 16, a CPU
 * backend of its own, nothing offloaded. */
struct lp_forward_params lp_forward_default_params(void);

/* Bytes lp_forward_new would allocate for `m` with `p` (after defaults). With
 * gpu_layers > 0 but no offload backend (a planner's question), the device
 * scratch is estimated as a one-thread CPU backend's. */
void lp_forward_plan_bytes(const struct lp_model *m, const struct lp_forward_params *p,
			   struct lp_forward_bytes *out);

/*
 * Create a context. On success *out is owned by the caller (lp_forward_free).
 * Returns LP_E_NOMEM when the budget (host or device) refuses the KV
 * cache, scratch, logits or offloaded weights (the message names the
 * phase, "load"), LP_E_USAGE for an unusable KV type (q8_0 needs
 * head_dim % 32 == 0), LP_E_MODEL when a backend cannot take a weight type
 * or OpenBLAS cannot load, and LP_E_NOMEM when threads cannot start.
 */
enum lp_status lp_forward_new(const struct lp_model *m, const struct lp_forward_params *p,
			      struct lp_forward **out, struct lp_diag *d);
void lp_forward_free(struct lp_forward *c);

/*
 * Evaluate tokens[0..n) at positions pos..pos+n-1 and write the logits of
 * the last one (n_vocab floats) to `logits_last` (may be NULL: read them
 * with lp_forward_logits). Requires pos <= lp_forward_n_past and pos + n <= n_ctx.
 * Returns LP_OK; LP_E_INPUT for a token id out of range or a full context
 * (nothing is evaluated); LP_E_USAGE for n == 0 or a gap before pos; a
 * backend's latched error (naming the op and the phase), after which the
 * tokens of the failed step are not in the cache.
 * Sets the memory phase to "prefill" (n > 1) or "decode" (n == 1).
 */
enum lp_status lp_forward_eval(struct lp_forward *c, const int32_t *tokens, size_t n, uint32_t pos,
			       float *logits_last, struct lp_diag *d);
/* Same, writing the logits of every token: logits[i*n_vocab ..] for i < n
 * (computed one row at a time, for tests; not a fast path). */
enum lp_status lp_forward_eval_all(struct lp_forward *c, const int32_t *tokens, size_t n,
				   uint32_t pos, float *logits, struct lp_diag *d);

/* Logits of the last token evaluated (n_vocab floats, owned by the context). */
const float *lp_forward_logits(const struct lp_forward *c);
/* Forget every cached token (n_past becomes 0); allocates nothing. */
void lp_forward_reset(struct lp_forward *c);
uint32_t lp_forward_n_past(const struct lp_forward *c);
uint32_t lp_forward_n_ctx(const struct lp_forward *c);
/* CPU threads of the host backend (of the offload backend when every
 * layer is offloaded). */
int lp_forward_n_threads(const struct lp_forward *c);
/* Layers that run on the offload backend (0 without one). */
uint32_t lp_forward_gpu_layers(const struct lp_forward *c);
const struct lp_model *lp_forward_model(const struct lp_forward *c);

#endif
