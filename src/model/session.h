/*
 * session.h - a model session: one loaded model with its tokenizer, chat
 * format, evaluation context, sampler and stop conditions, ready to answer
 * chat prompts. Every model stage of a run shares one session.
 *
 * Invariants
 *  - The context is created once, at open, so its KV cache, scratch and
 *    logits are the only large model allocations besides the mapped
 *    weights; a generation allocates only token lists and the output text.
 *  - A generation never runs past the context: lp_session_generate refuses
 *    (LP_E_INTERNAL) a prompt whose tokens plus max_tokens exceed n_ctx.
 *    Callers size their inputs with lp_session_count_tokens and
 *    lp_session_overhead first, so the refusal marks a bug, not an input.
 *  - Special tokens are recognised only in the text the chat template adds:
 *    message contents are tokenized as plain text, so a document that
 *    contains "<|im_end|>" cannot end a turn.
 *  - Decoding is greedy by default (reproducible), with a mild repetition
 *    penalty so small models do not loop.
 *
 * Memory: when lp_forward_new is refused by the budget and `shrink` is set,
 * the session halves n_ctx (down to LP_SESSION_MIN_CTX) until the context
 * fits. When the mapped weights, or the weights with the smallest context,
 * still do not fit, the session opens again with its
 * weights streamed a layer at a time (model.h), which keeps a window of
 * them resident instead of the whole file, and fits the context to what
 * is left. lp_session_n_ctx and lp_session_streamed say what it got,
 * lp_session_note_at what happened.
 *
 * Remote generation: with params.openai set, the session generates on an
 * OpenAI-compatible server (model/remote/openai.h) and loads no weights.
 * params.path then names a GGUF read only for its vocabulary and chat
 * template, to count tokens; without one (NULL), counts are the
 * conservative estimate of lp_openai_estimate_tokens. n_ctx is the
 * server's context as configured (0: 2048); nothing shrinks or streams.
 * The stages see the same calls either way.
 *
 * Threads: the entries that tokenize, generate or regrow take the
 * session's lock, so the documents of a batch share one session from
 * their own threads; a generation holds it until it ends (generation is
 * serialized on the model; a remote session's requests are not: each has
 * its own connection, and its client keeps at most model.concurrency of
 * them in flight, openai.h). Open and free are not locked: the owner (the
 * engine, engine/engine.h) does them while no document uses the session.
 */
#ifndef LP_MODEL_SESSION_H
#define LP_MODEL_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/status.h"
#include "model/chat.h"
#include "quant/quant.h"
#include "model/sampler.h"
#include "model/remote/openai.h"

/* What the default device budget leaves free on the GPU: the larger of
 * 10% of its free memory and this many bytes (the CUDA context, cuBLAS). */
#define LP_SESSION_GPU_MARGIN ((size_t)512 << 20)

/* The smallest context a shrinking session goes down to, tokens. */
#define LP_SESSION_MIN_CTX 256

struct lp_session_params {
	const char *path;          /* GGUF file; NULL: lp_session_default_path() */
	const char *chat_template; /* format name override, NULL: from the file */
	uint32_t n_ctx;            /* tokens; 0: min(2048, trained context) */
	enum lp_qtype kv_type;     /* LP_Q_F32, LP_Q_F16 or LP_Q_Q8_0 */
	int n_threads;             /* <= 0: every online CPU */
	int stream_weights;        /* stream the weights from the start */
	int shrink;                /* when the budget refuses: halve gpu_layers
				    * (device budget), halve n_ctx, then
				    * stream the weights */
	uint32_t min_ctx;          /* a shrink halves n_ctx no lower than this
				    * (0: LP_SESSION_MIN_CTX) */
	const char *device;        /* "cpu", "cuda" or "auto"; NULL: "cpu" */
	int64_t gpu_layers;        /* layers on the GPU; < 0: all (cuda only) */
	size_t gpu_budget;         /* device bytes; 0: the device's free memory
				    * when opened less LP_SESSION_GPU_MARGIN */
	struct lp_sampler_params sampler; /* temperature <= 0: greedy */
	/* non-NULL: generate on this server (see above; its sampler is
	 * replaced by `sampler`) */
	const struct lp_openai_params *openai;
};

struct lp_session;

/* The default model, path NULL, n_ctx 2048, F16 KV cache, all CPUs, mapped
 * weights, no shrinking, greedy decoding with repeat_penalty 1.1 over 64
 * tokens. */
struct lp_session_params lp_session_default_params(void);

/* ${LPIPE_MODEL_DIR:-$HOME/.cache/lpipe/models}/SmolLM2-135M-Instruct.Q4_1.gguf
 * in a static buffer. */
const char *lp_session_default_path(void);

/*
 * Open the model and create its context. On success *out is owned by the
 * caller (lp_session_free). Returns LP_E_MODEL when the file is missing
 * ("no model: run `make models` or set model.path") or not a supported
 * model, LP_E_CONFIG for a bad chat template name, LP_E_NOMEM when the
 * weights or the context do not fit the budget (with shrink: not even
 * streamed, at LP_SESSION_MIN_CTX tokens).
 */
enum lp_status lp_session_open(const struct lp_session_params *p, struct lp_session **out,
			       struct lp_diag *d);
/* NULL is a no-op. */
void lp_session_free(struct lp_session *s);

/*
 * A step needs `need` tokens of context and the budget shrank the context
 * below that: open the session again with its weights streamed per layer
 * and a context of at least `need` (as asked at first, halved no lower than
 * `need`), the remedy that keeps the step possible, recorded as a note.
 * Returns LP_OK when the context now holds `need` (at once when it did
 * already); LP_E_CONFIG when no remedy applies or even streaming does not
 * fit (the session is then as before); another status when reopening
 * failed otherwise (the session is then unusable: free it).
 */
enum lp_status lp_session_regrow(struct lp_session *s, uint32_t need, struct lp_diag *d);
/* Layers the session runs on the GPU (0 on the CPU). */
uint32_t lp_session_gpu_layers(const struct lp_session *s);

/* Tokens of context the session got (after any shrinking). */
uint32_t lp_session_n_ctx(const struct lp_session *s);
/* 1 when the weights are streamed a layer at a time. */
int lp_session_streamed(const struct lp_session *s);
/* What opening did that a trace should show, in order ("shrink: weights
 * streamed per layer (budget)", "shrink: context 2048 -> 1024 tokens
 * (budget)"): note i, or NULL past the last. Owned by the session.
 * lp_session_note is note 0. */
const char *lp_session_note_at(const struct lp_session *s, size_t i);
const char *lp_session_note(const struct lp_session *s);

/* Tokens of text[0..len) as plain message content; 0 for an empty text.
 * On out of memory it returns an upper bound (len + 1) so that budgets
 * computed from it stay safe. */
size_t lp_session_count_tokens(struct lp_session *s, const char *text, size_t len);

/*
 * Tokens the chat template adds around msgs[0..n) (their contents not
 * counted), plus the generation prompt: the fixed cost of a prompt.
 * Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_session_overhead(struct lp_session *s, const struct lp_chat_msg *msgs,
				   size_t n, size_t *n_tokens, struct lp_diag *d);

/*
 * Byte length of the longest prefix of text[0..len) that holds at most
 * max_tokens tokens, cut at a token boundary that is also a UTF-8
 * character boundary. Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_session_prefix_bytes(struct lp_session *s, const char *text, size_t len,
				       size_t max_tokens, size_t *bytes, struct lp_diag *d);

/*
 * Render msgs[0..n) with the chat template and the generation prompt,
 * followed by `prefix` (may be NULL: text the assistant's turn already
 * holds, continued rather than repeated), evaluate it from an empty cache
 * and decode at most max_tokens tokens, stopping at an end-of-generation
 * token. On success *out_text is a new string (lp_mem_free) holding only the
 * generated text, and *n_prompt / *n_out (either may be NULL) the prompt's
 * and the output's token counts.
 *
 * Returns LP_OK; LP_E_INTERNAL when prompt tokens + max_tokens > n_ctx
 * (the caller broke its budget; nothing is evaluated); LP_E_NOMEM (budget
 * or allocation, the message names the phase); LP_E_INPUT for a message
 * without role or content. A remote session returns what lp_openai_chat
 * does (LP_E_IO, LP_E_CONFIG: the message names the URL), and the
 * server's token counts when it sends them, else its own.
 */
enum lp_status lp_session_generate(struct lp_session *s, const struct lp_chat_msg *msgs,
				   size_t n, const char *prefix, size_t max_tokens,
				   char **out_text, size_t *n_prompt, size_t *n_out,
				   struct lp_diag *d);

/*
 * How well the model expects `reply` as the assistant's answer to
 * msgs[0..n) (rendered as lp_session_generate renders them, evaluated
 * from an empty cache): *mean_logprob is the mean over the reply's first
 * LP_SESSION_SCORE_MAX tokens of their log-probability (natural log,
 * <= 0), each given the prompt and the tokens before it; their logits are
 * the call's one allocation (LP_MEM_SCRATCH). Nothing is sampled. The prompt is evaluated in one
 * batch and the reply in another, so a score costs about a prompt's
 * prefill, not a decode step per token.
 *
 * Returns LP_OK; LP_E_USAGE for an empty reply or a remote session (a
 * server's replies come without the model's probabilities); LP_E_INTERNAL
 * when the prompt and the reply exceed n_ctx (nothing is evaluated);
 * LP_E_NOMEM.
 */
#define LP_SESSION_SCORE_MAX 64
enum lp_status lp_session_score(struct lp_session *s, const struct lp_chat_msg *msgs, size_t n,
				const char *reply, double *mean_logprob, struct lp_diag *d);

/*
 * The prompt tokens evaluated and the tokens generated by every
 * lp_session_generate the calling thread made, whatever the session:
 * a caller running one document on its thread takes the difference
 * around it (lpipe batch's manifest counts a document's tokens so, every
 * stage and retry included, while other documents share the session).
 */
void lp_session_thread_tokens(size_t *prompt, size_t *generated);

#endif
