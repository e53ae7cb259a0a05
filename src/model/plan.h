/*
 * plan.h - the memory planner: from a model's hyper-parameters and a budget
 * to the bytes each term will take and the largest context that fits.
 *
 * The tracked total of a running model is
 *     weights + other + kv + scratch + logits
 * where weights is the mapped GGUF file (reserved whole by the reader), or
 * the streaming window when the weights are streamed a layer at a time
 * (model.h), plus the 1-D tensors converted to float at load, other is the reader's
 * metadata tables (measured once the file is open: it depends on the key
 * and tensor counts, not on hyper-parameters), and kv, scratch and logits
 * come from lp_forward_plan_bytes, the very formula lp_forward_new allocates by, so
 * the planner and the engine cannot drift apart. `lpipe probe` measures the
 * same terms and its tests hold the two within 10%.
 *
 * The chooser keeps a safety margin (LP_PLAN_MARGIN of the budget, at least
 * LP_PLAN_MARGIN_MIN bytes) for what a pipeline adds beside the model: the
 * tokenizer, the mapped document, retrieval indexes.
 */
#ifndef LP_MODEL_PLAN_H
#define LP_MODEL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "model/forward.h"
#include "model/model.h"

#define LP_PLAN_MARGIN 0.10                       /* of the budget */
#define LP_PLAN_MARGIN_MIN ((size_t)4 << 20)      /* bytes */
#define LP_PLAN_TEMPLATE_TOKENS 96  /* a chat template around a chunk */
#define LP_PLAN_MAX_TOKENS 256      /* room left for the generated text */
#define LP_PLAN_GPU_CTX 2048        /* context worth keeping GPU layers for */

/* Predicted tracked bytes, by term; total is their sum. */
struct lp_plan_bytes {
	size_t weights, other, kv, scratch, logits, total;   /* host */
	size_t gpu_weights, gpu_kv, gpu_scratch, gpu_total;  /* device (gpu_layers > 0) */
};

/* Weights as the budget sees them: the file size of the mapping (the
 * window, lp_model_window_bytes, when `m` streams) plus 4 bytes per
 * element of every 1-D tensor the loader converts to float. */
size_t lp_plan_weight_bytes(const struct lp_model *m);
/* The same for `m` opened with its weights streamed, whichever way it is
 * open now. */
size_t lp_plan_stream_weight_bytes(const struct lp_model *m);

/* Predict every term for `m` with context parameters `p` (defaults
 * resolved as lp_forward_new does); `other` is the metadata bytes measured
 * after opening the file (lp_mem_current(LP_MEM_OTHER)). */
void lp_plan_predict(const struct lp_model *m, size_t other, const struct lp_forward_params *p,
		     struct lp_plan_bytes *out);

/* What the caller asks of lp_plan_choose. */
struct lp_plan_request {
	size_t budget;           /* bytes, > 0 */
	int kv_auto;             /* 1: pick the KV type; 0: use kv_type */
	enum lp_qtype kv_type;   /* when !kv_auto */
	int n_threads;           /* <= 0: the number of online CPUs */
	size_t other;            /* as for lp_plan_predict */
	int allow_stream;        /* 1: when no context fits with the weights as
				  * `m` holds them, plan them streamed */
	size_t gpu_budget;       /* device bytes; 0: plan for the CPU alone */
};

/* A chosen configuration. */
struct lp_plan {
	uint32_t n_ctx;          /* tokens: a multiple of 256 (or a power of two
				  * below 256), <= the training context */
	enum lp_qtype kv_type;
	uint32_t n_batch;        /* tokens per prefill step */
	int n_threads;
	uint32_t chunk;          /* split size in tokens */
	uint32_t overlap;        /* tokens, 12% of chunk to the nearest 8 */
	size_t kv_per_token;     /* bytes */
	size_t usable;           /* budget less the margin */
	int stream;              /* 1: the weights are streamed per layer */
	uint32_t gpu_layers;     /* layers on the GPU (0 without gpu_budget) */
	size_t gpu_usable;       /* gpu_budget less the margin */
	struct lp_plan_bytes bytes; /* predicted at n_ctx */
};

/*
 * Choose the largest context that fits `r->budget` less the margin, with
 * n_batch 512, or a smaller batch when that buys at least a quarter more
 * context (or when nothing fits at 512). With kv_auto, F16
 * is kept when it reaches the training context or when Q8_0 would not give
 * a longer one; Q8_0 (when the head size allows it) otherwise.
 * With gpu_budget, every candidate must also fit the device budget less
 * its margin (10%, at least LP_PLAN_MARGIN_MIN) with the KV cache,
 * weights and scratch of the gpu_layers offloaded layers (the device's
 * scratch estimated as a one-thread CPU backend's); the most layers are
 * offloaded that still reach LP_PLAN_GPU_CTX tokens of context (or the
 * training context when shorter), else the count that gives the longest
 * context.
 * Returns LP_OK and fills *out; LP_E_NOMEM when even the smallest context
 * does not fit, with a message saying what is needed ("the weights alone
 * need X, more than the budget Y"); LP_E_USAGE for a KV type the model
 * cannot use.
 */
enum lp_status lp_plan_choose(const struct lp_model *m, const struct lp_plan_request *r,
			      struct lp_plan *out, struct lp_diag *d);

#endif
