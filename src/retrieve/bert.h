/*
 * bert.h - dense sentence embeddings from a BERT encoder, on the CPU or a GPU
 * (all-MiniLM-L6-v2 and any BERT with the same layout).
 *
 * A model directory holds config.json (hidden_size, num_hidden_layers,
 * num_attention_heads, intermediate_size, max_position_embeddings,
 * type_vocab_size, vocab_size, layer_norm_eps), model.safetensors (F32, F16
 * or BF16 tensors named as in the Hugging Face BertModel, with or without a
 * "bert." prefix), vocab.txt, and optionally sentence_bert_config.json whose
 * max_seq_length sets the token window (default 256, never more than
 * max_position_embeddings).
 *
 * An embedding is the mean over the window's tokens ([CLS] and [SEP]
 * included) of the last hidden states, L2-normalised: lp_bert_dim floats of
 * unit length. A text whose tokens do not fit one window is cut into
 * overlapping windows (each [CLS] + up to window-2 tokens + [SEP], starts
 * `stride` tokens apart, the last one ending at the text's end); their
 * embeddings are averaged and normalised again. An empty text embeds
 * "[CLS] [SEP]".
 *
 * The encoder is written once on the ops of backend/backend.h and runs on
 * the backend it was loaded on: the CPU (a backend of the model's own, of
 * lp_bert_set_threads threads, started at load and kept until
 * lp_bert_free) or a device (lp_bert_load_on; CUDA: cuBLAS products,
 * kernels for the norms, masked attention and pooling). A layer is a
 * fused Q/K/V product, masked attention over each sequence, the output
 * product, residual and LayerNorm, the feed-forward block (GELU), residual
 * and LayerNorm again. A call's windows are sorted by length and cut into
 * steps padded to their longest window, so padding stays small (about 3%
 * on chunks of 100 words), of at most LP_BERT_BATCH_TOKENS rows on the CPU
 * and LP_BERT_DEVICE_BATCH_TOKENS on a device.
 *
 * Memory: F32 weights stay in the mapping of the file (reserved as
 * LP_MEM_WEIGHTS; the CPU backend aliases them, a device copies them,
 * its products' weights as f16 unless LPIPE_ENCODER_WEIGHTS=f32; on
 * AVX-512 BF16 the CPU rounds the feed-forward output product's weights
 * and inputs to BF16, a tenth faster, vectors within a cosine of 6e-6 of
 * sentence-transformers' on MiniLM, and with LPIPE_ENCODER_WEIGHTS=bf16
 * every product's, about 1.6x faster, within 3e-5; =f32 keeps every
 * product in float, within 1e-8); F16/BF16
 * ones are converted once at load into LP_MEM_WEIGHTS, and so are the
 * fused Q/K/V weights. Activations live in buffers of the backend sized
 * once per call for its largest step.
 *
 * Results do not depend on the thread count or the device beyond float
 * rounding (cosine >= 0.9999 between CPU and GPU). Softmax, GELU and layer
 * norm use AVX2 on the CPU when it has it and LPIPE_CPU (or
 * LPIPE_CPU_KERNELS) is not "scalar".
 *
 * A model object is read-only after load (but for the two setters below);
 * concurrent lp_bert_embed calls on one model are safe (they take turns:
 * a backend serves one thread at a time).
 */
#ifndef LP_BERT_H
#define LP_BERT_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/status.h"
#include "core/threadpool.h"
#include "retrieve/wordpiece.h"

/* Tokens run through the encoder per step (summed over sequences, padding
 * included): on the CPU, and on a device backend. */
#define LP_BERT_BATCH_TOKENS 2048
#define LP_BERT_DEVICE_BATCH_TOKENS 32768
#define LP_BERT_DEFAULT_WINDOW 256
#define LP_BERT_DEFAULT_STRIDE 192

struct lp_bert_hparams {
	int n_vocab;   /* vocab_size */
	int n_embd;    /* hidden_size */
	int n_layer;   /* num_hidden_layers */
	int n_head;    /* num_attention_heads */
	int n_ff;      /* intermediate_size */
	int n_pos;     /* max_position_embeddings */
	int n_type;    /* type_vocab_size */
	float ln_eps;  /* layer_norm_eps */
};

struct lp_bert; /* opaque */

/*
 * Load the model in `dir`. Returns LP_OK with *out owned by the caller
 * (lp_bert_free), or LP_E_IO (a file missing or unreadable), LP_E_NOMEM,
 * LP_E_MODEL (bad config, missing tensor, wrong shape, unsupported dtype;
 * d names the file; or OpenBLAS could not be loaded).
 */
enum lp_status lp_bert_load(const char *dir, struct lp_bert **out, struct lp_diag *d);
/*
 * lp_bert_load on backend `be` (NULL: a CPU backend of the model's own, of
 * lp_bert_set_threads threads). The weights are imported into it (the CPU
 * aliases them; a device copies them under its weights tag). `be` is
 * borrowed: it must outlive the model. Same returns.
 */
enum lp_status lp_bert_load_on(const char *dir, struct lp_backend *be, struct lp_bert **out,
			       struct lp_diag *d);
/* NULL is a no-op. */
void lp_bert_free(struct lp_bert *m);

/* Embedding width (384 for MiniLM-L6). */
size_t lp_bert_dim(const struct lp_bert *m);
const struct lp_bert_hparams *lp_bert_hparams(const struct lp_bert *m);
/* The model's tokenizer (owned by the model). */
const struct lp_wordpiece *lp_bert_tokenizer(const struct lp_bert *m);

/* Tokens per window ([CLS] and [SEP] included) and the stride between
 * windows of one text. */
size_t lp_bert_window(const struct lp_bert *m);
size_t lp_bert_stride(const struct lp_bert *m);
/*
 * Change the window (3 .. n_pos tokens; 0 keeps it) and the stride (1 ..
 * window-2; 0 keeps it, then clamped). Returns LP_OK or LP_E_USAGE.
 * Not thread-safe against concurrent embeds.
 */
enum lp_status lp_bert_set_window(struct lp_bert *m, size_t window, size_t stride,
				  struct lp_diag *d);

/* Threads of the model's own CPU backend (<= 0: every online CPU), reopened
 * with this count at the next embed; no effect on a model loaded on a
 * caller's backend. Not thread-safe against concurrent embeds. */
void lp_bert_set_threads(struct lp_bert *m, int n_threads);

/*
 * Embed n texts (texts[i] of lens[i] bytes, UTF-8) into out[n * dim].
 * Returns LP_OK, or LP_E_NOMEM (memory or threads; out is then
 * unspecified).
 */
enum lp_status lp_bert_embed(const struct lp_bert *m, const char *const *texts,
			     const size_t *lens, size_t n, float *out, struct lp_diag *d);

/*
 * Embed n token sequences given as ids (each with its own [CLS]/[SEP], 1 ..
 * window tokens, every id < n_vocab) into out[n * dim]; no windowing.
 * Returns LP_OK, LP_E_NOMEM, or LP_E_USAGE for a bad length or id.
 */
enum lp_status lp_bert_embed_ids(const struct lp_bert *m, const int32_t *const *ids,
				 const size_t *n_ids, size_t n, float *out,
				 struct lp_diag *d);

#endif
