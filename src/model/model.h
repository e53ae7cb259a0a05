/*
 * model.h - a llama or qwen2 model as described by a GGUF file:
 * hyper-parameters and views of the weight tensors.
 *
 * Loading copies no weights: every struct lp_tensor points into the GGUF
 * mapping, which is already reserved against the memory budget under
 * LP_MEM_WEIGHTS by the GGUF reader. Only 1-D tensors (norms, biases)
 * stored in a type other than F32 are converted to float, into a small
 * block tracked under LP_MEM_WEIGHTS, so the forward pass can read every
 * vector as float.
 *
 * Every tensor's type and shape is checked against the hyper-parameters at
 * load time; afterwards the forward pass trusts them.
 *
 * Streamed weights. Over a file opened with lp_gguf_open_streamed the
 * model keeps resident only a window of the mapping: the metadata, the
 * tensors every token needs (token embedding, output matrix, output norm)
 * and the layer being computed. The forward pass calls
 * lp_model_stream_layer before each layer: it drops the previous layer's
 * pages from the process (a read-only file mapping re-reads them from the
 * page cache when they are next used), maps the layer's pages in one call
 * and starts reading the next layer into the page cache. The kernel may map
 * a large folio whole, so mapping a layer can bring in pages of its
 * neighbours in the file until they are dropped a moment later; the window
 * therefore counts two layers, the largest, twice. Pages shared by two
 * tensors at a boundary are never dropped (one page per boundary). The
 * window, not the file, is reserved under LP_MEM_WEIGHTS, so the budget
 * counts what is resident. The arithmetic is unchanged: streamed and mapped
 * models give the same logits, bit for bit.
 *
 * The struct lp_gguf must outlive the model.
 */
#ifndef LP_MODEL_MODEL_H
#define LP_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/status.h"
#include "model/gguf.h"
#include "quant/quant.h"

enum lp_arch { LP_ARCH_LLAMA, LP_ARCH_QWEN2 };

/* enum lp_rope_mode (how RoPE pairs a head's elements) is the backend's:
 * backend/backend.h. */

struct lp_hparams {
	enum lp_arch arch;
	enum lp_rope_mode rope_mode;
	uint32_t n_vocab;
	uint32_t n_embd;       /* model width */
	uint32_t n_layer;
	uint32_t n_ff;         /* FFN hidden width */
	uint32_t n_head;
	uint32_t n_head_kv;    /* < n_head for grouped-query attention */
	uint32_t head_dim;     /* n_embd / n_head */
	uint32_t n_rot;        /* rotated elements per head (<= head_dim) */
	uint32_t n_ctx_train;  /* context the model was trained with */
	float rope_base;       /* RoPE frequency base */
	float norm_eps;        /* RMSNorm epsilon */
};

/* A matrix (or vector) inside the mapping: `rows` rows of `cols` elements
 * of `type`, each row `row_bytes` long. ne[0] of the GGUF tensor is cols. */
struct lp_tensor {
	const char *name;      /* for messages; points into a static table */
	enum lp_qtype type;
	const void *data;
	uint64_t rows, cols;
	size_t row_bytes;
	/* 1 once lp_model_rowgroup has laid it out in row groups (data then
	 * holds quant/rowgroup.h's layout, in the same bytes) */
	int rowgroups;
};

/* Bytes of the mapping, for page advice. */
struct lp_span {
	const void *p;
	size_t len;
};

#define LP_LAYER_MAX_SPANS 12
#define LP_MAX_NEIGHBOURS 8

struct lp_layer {
	const float *attn_norm;   /* (n_embd) */
	struct lp_tensor wq;      /* (n_head*head_dim rows, n_embd cols) */
	struct lp_tensor wk;      /* (n_head_kv*head_dim, n_embd) */
	struct lp_tensor wv;      /* (n_head_kv*head_dim, n_embd) */
	struct lp_tensor wo;      /* (n_embd, n_head*head_dim) */
	const float *bq;          /* (n_head*head_dim), qwen2 only, else NULL */
	const float *bk;          /* (n_head_kv*head_dim), qwen2 only */
	const float *bv;          /* (n_head_kv*head_dim), qwen2 only */
	const float *ffn_norm;    /* (n_embd) */
	struct lp_tensor w_gate;  /* (n_ff, n_embd) */
	struct lp_tensor w_up;    /* (n_ff, n_embd) */
	struct lp_tensor w_down;  /* (n_embd, n_ff) */
	/* the mapped bytes of every tensor above, merged where adjacent */
	struct lp_span spans[LP_LAYER_MAX_SPANS];
	int n_spans;
	/* layers stored next to this one in the file (streaming only) */
	uint32_t neighbours[LP_MAX_NEIGHBOURS];
	int n_neighbours;
};

struct lp_model {
	struct lp_hparams hp;
	const struct lp_gguf *gguf;
	struct lp_tensor tok_embd;    /* (n_vocab rows, n_embd cols) */
	const float *output_norm;     /* (n_embd) */
	struct lp_tensor output;      /* (n_vocab, n_embd); == tok_embd when tied */
	int tied_output;              /* 1 when output.weight is absent */
	struct lp_layer *layers;      /* n_layer */
	float *vec_store;             /* tracked: converted 1-D tensors */
	int streamed;                 /* weights streamed a layer at a time */
	size_t window_reserved;       /* bytes reserved for the window */
	/* layers stored next to the always-resident tensors (streaming) */
	uint32_t neighbours[LP_MAX_NEIGHBOURS];
	int n_neighbours;
};

/*
 * Read the hyper-parameters and tensor views of `g`. When `g` was opened
 * with lp_gguf_open_streamed the model streams its weights (see above)
 * and reserves lp_model_window_bytes under LP_MEM_WEIGHTS. On success *out
 * is owned by the caller (free with lp_model_free). Returns LP_E_MODEL with
 * a message naming the key or tensor (and the expected shape) when the
 * file does not describe a supported model, LP_E_NOMEM when the budget
 * refuses the small converted vectors or the window (phase "load").
 */
enum lp_status lp_model_load(const struct lp_gguf *g, struct lp_model **out,
			     struct lp_diag *d);
void lp_model_free(struct lp_model *m);

/*
 * The hyper-parameters of `g`, checked as lp_model_load checks them (the
 * one place every command validates a model: counts from 1 to 2^30, heads
 * that divide the width, a finite rms epsilon in (0, 1], a finite rope
 * base in (1, 1e12]). Returns LP_OK, or LP_E_MODEL naming the key.
 */
enum lp_status lp_model_read_hparams(const struct lp_gguf *g, struct lp_hparams *hp,
				     struct lp_diag *d);


/* 1 when the model streams its weights. */
int lp_model_streamed(const struct lp_model *m);
/*
 * Resident bytes of the streaming window, whole pages: the metadata, the
 * always-needed tensors, twice the largest layer (the layer computed, and
 * room for the folios of its neighbours) and the edge pages of every layer,
 * which are never dropped. The same figure
 * whether `m` streams or not, so a planner can ask a mapped model what
 * streaming it would take.
 */
size_t lp_model_window_bytes(const struct lp_model *m);

/*
 * Call before layer `il` of a step runs: drops layer il - 1, maps layer
 * il's pages in one call, drops what that brought in of the layers stored
 * next to it in the file, and starts reading layer il + 1 (layer 0 after
 * the last, for the next step). Call lp_model_stream_done once the step no
 * longer needs any layer: it drops the last one and what the embedding and
 * output tensors brought in of their neighbours. Both do nothing for a
 * model that does not stream; neither ever fails (advice the kernel
 * refuses leaves the pages readable, only resident).
 */
void lp_model_stream_layer(const struct lp_model *m, uint32_t il);
void lp_model_stream_done(const struct lp_model *m);

/*
 * Lay layer tensor `t` of m out in row groups (quant/rowgroup.h), in
 * place, for a backend that multiplies them faster so: the mapping's
 * pages of t become the process's own copy (as many resident bytes as
 * before; nothing is written to the file, nothing more is counted).
 * Returns 1 when t is in row groups (now, or since an earlier call), 0
 * when it stays as the file has it: a streamed model (its pages are read
 * again from the file), a file given as the caller's bytes, a type or
 * shape rowgroup.h does not take, or the kernel refused. Not
 * thread-safe: call while no forward pass of m runs.
 */
int lp_model_rowgroup(const struct lp_model *m, struct lp_tensor *t);

/*
 * Call once token `id`'s row of an untied embedding has been read from
 * the mapping: unmaps the pages of that row and those the kernel mapped
 * around it on the fault (256 KiB), since nothing else reads
 * the embedding but one row a token: a prompt's scattered rows would
 * otherwise stay resident (60 MB of Qwen2.5-Coder-0.5B's at a 512-token
 * prompt). Does nothing for a tied embedding (the output reads it whole
 * each step), a streamed model (which drops its own pages) or a file read
 * into memory; never fails.
 */
void lp_model_embd_release(const struct lp_model *m, int32_t id);

#endif
