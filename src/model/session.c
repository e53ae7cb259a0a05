#include "model/session.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/backend.h"
#include "core/cancel.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/utf8.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/model.h"
#include "model/tokenizer.h"

/* Stands for each message's content while the template is rendered, so the
 * rendered text can be cut into trusted template pieces and plain content. */
#define CONTENT_MARK '\x01'

struct lp_session {
	struct lp_gguf *gguf;
	struct lp_model *model;
	struct lp_tok *tok;
	struct lp_chat chat;
	struct lp_forward *ctx;
	struct lp_backend *gpu;   /* the CUDA backend, or NULL on the CPU */
	struct lp_openai *remote; /* generation on a server, or NULL (then model,
				   * ctx and sampler are NULL, tok and chat
				   * set only with a tokenizer file) */
	struct lp_sampler *sampler;
	struct lp_stop stop;
	uint32_t n_ctx;
	uint32_t want;       /* the context asked for, before any shrink */
	struct lp_session_params params; /* as opened, for lp_session_regrow */
	uint32_t gpu_layers;
	char notes[3][128];  /* empty when unused */
	pthread_mutex_t lock; /* one caller at a time: documents of a batch
			       * share the session (engine/engine.h) */
};

struct lp_session_params lp_session_default_params(void)
{
	struct lp_session_params p;

	memset(&p, 0, sizeof(p));
	p.kv_type = LP_Q_F16;
	p.sampler = lp_sampler_default_params();
	p.sampler.temperature = 0.0f;
	p.sampler.repeat_penalty = 1.1f;
	p.sampler.repeat_last_n = 64;
	return p;
}

const char *lp_session_default_path(void)
{
	static char path[4096];
	const char *dir = getenv("LPIPE_MODEL_DIR"), *home = getenv("HOME");

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/SmolLM2-135M-Instruct.Q4_1.gguf", dir);
	else
		snprintf(path, sizeof(path), "%s/.cache/lpipe/models/SmolLM2-135M-Instruct.Q4_1.gguf",
			 home && *home ? home : ".");
	return path;
}

static void add_note(struct lp_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_note(struct lp_session *s, const char *fmt, ...)
{
	va_list ap;

	for (size_t i = 0; i < sizeof(s->notes) / sizeof(s->notes[0]); i++)
		if (!s->notes[i][0]) {
			va_start(ap, fmt);
			vsnprintf(s->notes[i], sizeof(s->notes[i]), fmt, ap);
			va_end(ap);
			return;
		}
}

static void release_parts(struct lp_session *s);

/* A fresh GPU backend after a context failed on it: a backend keeps the
 * scratch it reserved for the larger attempt, which the smaller one must
 * not pay for. */
static enum lp_status reopen_gpu(struct lp_session *s, const struct lp_session_params *p,
				 struct lp_diag *d)
{
	struct lp_backend_params bp = lp_backend_default_params();
	struct lp_diag dd;

	bp.n_threads = p->n_threads;
	lp_backend_free(s->gpu);
	s->gpu = NULL;
	lp_diag_init(&dd);
	if (lp_backend_open("cuda", &bp, &s->gpu, &dd)) {
		if (d)
			*d = dd;
		return dd.status;
	}
	return LP_OK;
}

/* Create the context, halving gpu_layers while the device budget refuses
 * it and n_ctx while the host's does (when allowed). */
static enum lp_status open_ctx(struct lp_session *s, const struct lp_session_params *p,
			       struct lp_diag *d)
{
	struct lp_forward_params cp = lp_forward_default_params();
	uint32_t want = p->n_ctx ? p->n_ctx : 2048;
	uint32_t floor_ctx = p->min_ctx > LP_SESSION_MIN_CTX ? p->min_ctx : LP_SESSION_MIN_CTX;
	enum lp_status st;

	if (s->model->hp.n_ctx_train && want > s->model->hp.n_ctx_train)
		want = s->model->hp.n_ctx_train;
	s->want = want;
	cp.kv_type = p->kv_type;
	cp.n_threads = p->n_threads;
	cp.n_ctx = want;
	if (s->gpu) {
		cp.offload = s->gpu;
		cp.gpu_layers = p->gpu_layers < 0 || p->gpu_layers > s->model->hp.n_layer ?
					s->model->hp.n_layer : (uint32_t)p->gpu_layers;
	}
	for (;;) {
		if (cp.n_batch == 0 || cp.n_batch > cp.n_ctx)
			cp.n_batch = cp.n_ctx < 512 ? cp.n_ctx : 512;
		st = lp_forward_new(s->model, &cp, &s->ctx, d);
		if (st != LP_E_NOMEM || !p->shrink)
			break;
		if (s->gpu && (st = reopen_gpu(s, p, d)))
			break;
		cp.offload = s->gpu;
		if (cp.offload && cp.gpu_layers > 0 && strstr(d->msg, "device memory")) {
			/* the device is full: move layers back to the CPU first */
			lp_warn("%u layers do not fit the GPU: trying %u", cp.gpu_layers,
				cp.gpu_layers / 2);
			add_note(s, "shrink: gpu_layers %u -> %u (device budget)", cp.gpu_layers,
				 cp.gpu_layers / 2);
			cp.gpu_layers /= 2;
		} else if (cp.n_ctx / 2 >= floor_ctx) {
			lp_warn("context of %u tokens does not fit: trying %u", cp.n_ctx,
				cp.n_ctx / 2);
			cp.n_ctx /= 2;
		} else {
			break;
		}
		lp_diag_init(d);
	}
	if (st)
		return st;
	s->n_ctx = cp.n_ctx;
	if (cp.n_ctx != want)
		add_note(s, "shrink: context %u -> %u tokens (budget)", want, cp.n_ctx);
	s->gpu_layers = cp.offload ? cp.gpu_layers : 0;
	return LP_OK;
}

static enum lp_status open_parts(struct lp_session *s, const struct lp_session_params *p,
				 const char *path, int stream, struct lp_diag *d)
{
	const struct lp_vocab *v;
	enum lp_status st;

	st = stream ? lp_gguf_open_streamed(path, &s->gguf, d) : lp_gguf_open(path, &s->gguf, d);
	if (st || (st = lp_model_load(s->gguf, &s->model, d)) ||
	    (st = lp_tok_from_gguf(s->gguf, &s->tok, d)))
		return st;
	v = lp_tok_vocab(s->tok);
	if ((st = lp_chat_init(&s->chat, lp_vocab_chat_template(v), p->chat_template, d)))
		return st;
	if ((st = open_ctx(s, p, d)))
		return st;
	if ((st = lp_sampler_new(&p->sampler, lp_vocab_n_tokens(v), &s->sampler, d)))
		return st;
	lp_stop_add_vocab(&s->stop, v);
	return LP_OK;
}

/* Open the GPU backend for device cuda (LP_E_DEVICE when there is none)
 * or auto (the CPU, saying why with -v, when there is none); set the
 * device budget. */
static enum lp_status open_device(struct lp_session *s, const struct lp_session_params *p,
				  struct lp_diag *d)
{
	const char *dev = p->device ? p->device : "cpu";
	struct lp_backend_params bp = lp_backend_default_params();
	char why[512] = "";
	enum lp_status st;

	if (!strcmp(dev, "cpu")) {
		lp_debug("device: cpu");
		return LP_OK;
	}
	bp.n_threads = p->n_threads;
	if (!strcmp(dev, "cuda"))
		st = lp_backend_open("cuda", &bp, &s->gpu, d);
	else
		st = lp_backend_open_auto(&bp, &s->gpu, why, sizeof(why), d);
	if (st)
		return st;
	if (!strcmp(s->gpu->name, "cpu")) {
		/* auto found no GPU: the context opens its own CPU backend */
		lp_backend_free(s->gpu);
		s->gpu = NULL;
		lp_debug("device: cpu (auto: %s)", why);
		return LP_OK;
	}
	lp_debug("device: cuda (%s)", s->gpu->device);
	if (p->gpu_budget)
		lp_mem_set_gpu_budget(p->gpu_budget);
	else if (!lp_mem_gpu_budget() && s->gpu->mem_free) {
		size_t margin = s->gpu->mem_free / 10;
		margin = margin > LP_SESSION_GPU_MARGIN ? margin : LP_SESSION_GPU_MARGIN;
		lp_mem_set_gpu_budget(s->gpu->mem_free > margin ? s->gpu->mem_free - margin : 1);
	}
	return LP_OK;
}

/* A remote session: the client, and the tokenizer and chat template of
 * p->path when given (its weights are never read: the file is mapped for
 * streaming, which reserves nothing, and only its metadata is touched). */
static enum lp_status open_remote(struct lp_session *s, const struct lp_session_params *p,
				  struct lp_diag *d)
{
	struct lp_openai_params op = *p->openai;
	enum lp_status st;

	op.sampler = p->sampler;
	if ((st = lp_openai_new(&op, &s->remote, d)))
		return st;
	s->n_ctx = s->want = p->n_ctx ? p->n_ctx : 2048;
	if (!p->path)
		return LP_OK;
	if ((st = lp_gguf_open_streamed(p->path, &s->gguf, d)) ||
	    (st = lp_tok_from_gguf(s->gguf, &s->tok, d)))
		return st;
	return lp_chat_init(&s->chat, lp_vocab_chat_template(lp_tok_vocab(s->tok)),
			    p->chat_template, d);
}

enum lp_status lp_session_open(const struct lp_session_params *p, struct lp_session **out,
			       struct lp_diag *d)
{
	const char *path = p->path ? p->path : lp_session_default_path();
	struct lp_session *s;
	struct stat sb;
	enum lp_status st;

	*out = NULL;
	if (p->openai) {
		path = p->path;
		if (path && stat(path, &sb))
			return lp_diag_set(d, LP_E_MODEL, path, 0, 0,
					   "unable to open the tokenizer (model.tokenizer)");
	}
	if (path && stat(path, &sb))
		return lp_diag_set(d, LP_E_MODEL, path, 0, 0,
				   "no model: run `make models` or set model.path");
	s = calloc(1, sizeof(*s));
	if (!s)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a model session");
	lp_stop_init(&s->stop);
	pthread_mutex_init(&s->lock, NULL);
	s->params = *p;
	s->params.path = path;
	if (p->openai) {
		s->params.openai = NULL; /* not kept: the caller's */
		if ((st = open_remote(s, p, d))) {
			lp_session_free(s);
			return st;
		}
		*out = s;
		return LP_OK;
	}
	/* the device first: `device: cuda` without a GPU stops before the
	 * model is read */
	if ((st = open_device(s, p, d))) {
		lp_session_free(s);
		return st;
	}
	st = open_parts(s, p, path, p->stream_weights, d);
	if (st == LP_E_NOMEM && !p->stream_weights && p->shrink) {
		/* everything goes, so the streamed attempt starts from the
		 * same free memory as the mapped one did */
		lp_warn("the weights do not fit the budget mapped whole: streaming them per layer");
		release_parts(s);
		lp_diag_init(d);
		add_note(s, "shrink: weights streamed per layer (budget)");
		st = open_parts(s, p, path, 1, d);
	}
	if (st) {
		lp_session_free(s);
		return st;
	}
	*out = s;
	return LP_OK;
}

static enum lp_status locked_regrow(struct lp_session *s, uint32_t need, struct lp_diag *d)
{
	struct lp_session_params p = s->params;
	uint32_t had = s->n_ctx;
	int was_streamed = lp_model_streamed(s->model);
	enum lp_status st;

	if (had >= need)
		return LP_OK;
	if (s->remote)
		return LP_E_CONFIG; /* the server's context is what it is */
	/* only a context the budget cut can grow back, and only by streaming */
	if (!p.shrink || was_streamed || s->want < need)
		return LP_E_CONFIG;
	lp_warn("a context of %u tokens is too small for this step (it needs %u): "
		"streaming the weights per layer to keep %u", had, need, s->want);
	release_parts(s);
	lp_stop_init(&s->stop);
	p.n_ctx = s->want;
	p.min_ctx = need;
	add_note(s, "shrink: weights streamed per layer to keep a context of at least %u "
		 "tokens (budget)", need);
	st = open_parts(s, &p, p.path, 1, d);
	if (st != LP_E_NOMEM)
		return st;
	/* not even streamed: back to what worked, so the caller can report */
	release_parts(s);
	lp_stop_init(&s->stop);
	lp_diag_init(d);
	p = s->params;
	p.n_ctx = had;
	if ((st = open_parts(s, &p, p.path, 0, d)))
		return st;
	return LP_E_CONFIG;
}

/* Free what open_parts made; the struct is ready for another try. */
static void release_parts(struct lp_session *s)
{
	lp_stop_release(&s->stop);
	lp_sampler_free(s->sampler);
	lp_forward_free(s->ctx);
	lp_chat_release(&s->chat);
	lp_tok_free(s->tok);
	lp_model_free(s->model);
	lp_gguf_close(s->gguf);
	s->sampler = NULL;
	s->ctx = NULL;
	s->tok = NULL;
	s->model = NULL;
	s->gguf = NULL;
	memset(&s->chat, 0, sizeof(s->chat));
	memset(s->notes, 0, sizeof(s->notes));
}

void lp_session_free(struct lp_session *s)
{
	if (!s)
		return;
	release_parts(s);
	lp_backend_free(s->gpu);
	pthread_mutex_destroy(&s->lock);
	lp_openai_free(s->remote);
	free(s);
}

uint32_t lp_session_gpu_layers(const struct lp_session *s)
{
	return s->gpu_layers;
}


int lp_session_streamed(const struct lp_session *s)
{
	return s->model && lp_model_streamed(s->model);
}

const char *lp_session_note_at(const struct lp_session *s, size_t i)
{
	if (i >= sizeof(s->notes) / sizeof(s->notes[0]) || !s->notes[i][0])
		return NULL;
	return s->notes[i];
}

const char *lp_session_note(const struct lp_session *s)
{
	return lp_session_note_at(s, 0);
}

static size_t locked_count_tokens(struct lp_session *s, const char *text, size_t len)
{
	struct lp_diag d;
	size_t n = 0;

	if (!len)
		return 0;
	if (!s->tok)
		return lp_openai_estimate_tokens(text, len);
	lp_diag_init(&d);
	if (lp_tok_count(s->tok, text, len, 0, &n, &d))
		return len + 1; /* a byte never makes more than one token */
	return n;
}

/*
 * Tokenize the prompt for msgs: the template's own text with special
 * tokens, each content as plain text. With `contents` 0 the contents are
 * skipped (the overhead alone).
 */
static enum lp_status encode_prompt(struct lp_session *s, const struct lp_chat_msg *msgs,
				    size_t n, int contents, struct lp_tokens *out,
				    struct lp_diag *d)
{
	struct lp_chat_msg marks[16];
	static const char mark[2] = { CONTENT_MARK, 0 };
	struct lp_buf b;
	const char *p, *q;
	size_t k = 0;
	enum lp_status st;

	if (n > 16)
		return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0, "too many chat messages (%zu)", n);
	for (size_t i = 0; i < n; i++) {
		marks[i].role = msgs[i].role;
		marks[i].content = msgs[i].content ? mark : NULL;
	}
	lp_buf_init(&b);
	st = lp_chat_render(&s->chat, marks, n, 1, &b, d);
	for (p = b.data; !st; p = q + 1) {
		size_t len;
		q = strchr(p, CONTENT_MARK);
		len = q ? (size_t)(q - p) : strlen(p);
		/* the first piece also when empty: it carries BOS */
		if (len || p == b.data)
			st = lp_tok_encode(s->tok, p, len,
					   LP_TOK_SPECIAL | (p == b.data ? LP_TOK_ADD_SPECIAL : 0),
					   out, d);
		if (!q || st)
			break;
		if (contents && k < n)
			st = lp_tok_encode(s->tok, msgs[k].content, strlen(msgs[k].content), 0, out, d);
		k++;
	}
	lp_buf_release(&b);
	return st;
}

static enum lp_status locked_overhead(struct lp_session *s, const struct lp_chat_msg *msgs,
				   size_t n, size_t *n_tokens, struct lp_diag *d)
{
	struct lp_tokens t;
	enum lp_status st;

	if (!s->tok) {
		*n_tokens = LP_OPENAI_EST_PER_MSG * (n + 1);
		return LP_OK;
	}
	lp_tokens_init(&t);
	st = encode_prompt(s, msgs, n, 0, &t, d);
	*n_tokens = t.n;
	lp_tokens_release(&t);
	return st;
}

static enum lp_status locked_prefix_bytes(struct lp_session *s, const char *text, size_t len,
				       size_t max_tokens, size_t *bytes, struct lp_diag *d)
{
	struct lp_tokens t;
	enum lp_status st;
	size_t cut;

	if (!s->tok) {
		*bytes = lp_openai_estimate_prefix(text, len, max_tokens);
		return LP_OK;
	}
	lp_tokens_init(&t);
	st = lp_tok_encode(s->tok, text, len, LP_TOK_OFFSETS, &t, d);
	if (st) {
		lp_tokens_release(&t);
		return st;
	}
	cut = t.n <= max_tokens ? len : t.offsets[max_tokens];
	while (cut > 0 && cut < len && ((unsigned char)text[cut] & 0xC0) == 0x80)
		cut--;
	*bytes = cut;
	lp_tokens_release(&t);
	return LP_OK;
}

/* Decode up to max_tokens after the prompt already in the cache. */
static enum lp_status decode(struct lp_session *s, uint32_t pos, size_t max_tokens,
			     struct lp_buf *out, size_t *n_out, struct lp_diag *d)
{
	struct lp_detok dt;
	enum lp_status st = LP_OK;

	*n_out = 0;
	lp_detok_init(&dt, s->tok, 0);
	lp_sampler_reset(s->sampler);
	for (size_t i = 0; i < max_tokens && !st; i++) {
		int32_t id = lp_sampler_sample(s->sampler, lp_forward_logits(s->ctx));
		if (lp_stop_is_eog(&s->stop, id))
			break;
		if ((st = lp_cancel_check("in decode", d)))
			break;
		lp_sampler_accept(s->sampler, id);
		if (lp_detok_push(&dt, id, out))
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for generated text");
		(*n_out)++;
		lp_progress_add_tokens(1);
		if (i + 1 < max_tokens)
			st = lp_forward_eval(s->ctx, &id, 1, pos++, NULL, d);
	}
	if (!st && lp_detok_flush(&dt, out))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for generated text");
	return st;
}

/*
 * Make generated bytes safe to pass on as text: a model may emit a byte
 * token that starts a character it never finishes, or a control byte.
 * Invalid sequences become U+FFFD; control characters other than newline
 * and tab are dropped (a NUL would cut the string).
 */
static enum lp_status clean_text(const struct lp_buf *in, struct lp_buf *out)
{
	const unsigned char *p = (const unsigned char *)in->data;
	size_t i = 0;

	while (i < in->len) {
		uint32_t cp;
		int n = lp_utf8_decode(p + i, in->len - i, &cp);
		if (!n) {
			if (lp_buf_adds(out, "\xEF\xBF\xBD"))
				return LP_E_NOMEM;
			i++;
			continue;
		}
		if ((cp >= 0x20 || cp == '\n' || cp == '\t') && cp != 0x7F &&
		    lp_buf_add(out, p + i, (size_t)n))
			return LP_E_NOMEM;
		i += (size_t)n;
	}
	return LP_OK;
}

/* lp_session_generate on the server: the same budget check with the
 * session's own counts, then the request; the reply is cleaned alike. */
static enum lp_status generate_remote(struct lp_session *s, const struct lp_chat_msg *msgs,
				      size_t n, const char *prefix, size_t max_tokens,
				      char **out_text, size_t *n_prompt, size_t *n_out,
				      struct lp_diag *d)
{
	size_t in = 0, got_in = 0, got_out = 0, len;
	char *raw = NULL;
	struct lp_buf clean;
	enum lp_status st = lp_session_overhead(s, msgs, n, &in, d);

	for (size_t i = 0; i < n && !st; i++)
		in += msgs[i].content ? lp_session_count_tokens(s, msgs[i].content,
								  strlen(msgs[i].content)) : 0;
	if (!st && prefix)
		in += lp_session_count_tokens(s, prefix, strlen(prefix));
	if (!st && in + max_tokens > s->n_ctx)
		st = lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0,
				 "token budget broken: prompt of %zu tokens + max_tokens %zu > "
				 "context %u", in, max_tokens, s->n_ctx);
	if (!st)
		st = lp_openai_chat(s->remote, msgs, n, prefix, max_tokens, &raw, &got_in, &got_out,
				    d);
	lp_buf_init(&clean);
	if (!st && (clean_text(&(struct lp_buf){ .data = raw, .len = strlen(raw) }, &clean) ||
		    !(*out_text = lp_buf_detach(&clean, &len))))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for generated text");
	if (n_prompt)
		*n_prompt = got_in ? got_in : in;
	if (n_out)
		*n_out = got_out ? got_out : (*out_text ? lp_session_count_tokens(
							  s, *out_text, strlen(*out_text)) : 0);
	lp_mem_free(raw);
	lp_buf_release(&clean);
	return st;
}

static enum lp_status locked_generate(struct lp_session *s, const struct lp_chat_msg *msgs,
				   size_t n, const char *prefix, size_t max_tokens,
				   char **out_text, size_t *n_prompt, size_t *n_out,
				   struct lp_diag *d)
{
	struct lp_tokens t;
	struct lp_buf out, clean;
	size_t len, produced = 0;
	enum lp_status st;

	*out_text = NULL;
	lp_tokens_init(&t);
	lp_buf_init(&out);
	lp_buf_init(&clean);
	st = encode_prompt(s, msgs, n, 1, &t, d);
	if (!st && prefix && *prefix)
		st = lp_tok_encode(s->tok, prefix, strlen(prefix), 0, &t, d);
	if (!st && (t.n == 0 || t.n + max_tokens > s->n_ctx))
		st = lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0,
				 "token budget broken: prompt of %zu tokens + max_tokens %zu > "
				 "context %u", t.n, max_tokens, s->n_ctx);
	if (!st) {
		lp_forward_reset(s->ctx);
		st = lp_forward_eval(s->ctx, t.ids, t.n, 0, NULL, d);
		lp_progress_add_tokens(t.n);
	}
	if (!st)
		st = decode(s, (uint32_t)t.n, max_tokens, &out, &produced, d);
	if (!st && (clean_text(&out, &clean) || !(*out_text = lp_buf_detach(&clean, &len))))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for generated text");
	if (n_prompt)
		*n_prompt = t.n;
	if (n_out)
		*n_out = produced;
	lp_tokens_release(&t);
	lp_buf_release(&out);
	lp_buf_release(&clean);
	return st;
}

/* log softmax(x)[id] over n logits. */
static double log_prob(const float *x, size_t n, int32_t id)
{
	float mx = x[0];
	double sum = 0;

	for (size_t i = 1; i < n; i++)
		mx = x[i] > mx ? x[i] : mx;
	for (size_t i = 0; i < n; i++)
		sum += exp((double)x[i] - mx);
	return (double)x[id] - mx - log(sum);
}

static enum lp_status locked_score(struct lp_session *s, const struct lp_chat_msg *msgs,
				   size_t n, const char *reply, double *mean_logprob,
				   struct lp_diag *d)
{
	size_t n_vocab = lp_forward_model(s->ctx)->hp.n_vocab;
	struct lp_tokens t, r;
	float *logits = NULL;
	double sum = 0;
	enum lp_status st;

	lp_tokens_init(&t);
	lp_tokens_init(&r);
	st = encode_prompt(s, msgs, n, 1, &t, d);
	if (!st)
		st = lp_tok_encode(s->tok, reply, strlen(reply), 0, &r, d);
	if (!st && r.n == 0)
		st = lp_diag_set(d, LP_E_USAGE, NULL, 0, 0, "no reply tokens to score");
	if (r.n > LP_SESSION_SCORE_MAX)
		r.n = LP_SESSION_SCORE_MAX;
	if (!st && (t.n == 0 || t.n + r.n > s->n_ctx))
		st = lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0,
				 "token budget broken: prompt of %zu tokens + reply of %zu > "
				 "context %u", t.n, r.n, s->n_ctx);
	/* the prompt's last logits, then the reply's but its last */
	if (!st && !(logits = lp_mem_alloc(LP_MEM_SCRATCH, r.n * n_vocab * sizeof(float), d)))
		st = LP_E_NOMEM;
	if (!st) {
		lp_forward_reset(s->ctx);
		st = lp_forward_eval(s->ctx, t.ids, t.n, 0, logits, d);
	}
	if (!st && r.n > 1)
		st = lp_forward_eval_all(s->ctx, r.ids, r.n - 1, (uint32_t)t.n, logits + n_vocab, d);
	if (!st) {
		lp_progress_add_tokens(t.n + r.n - 1);
		for (size_t i = 0; i < r.n; i++)
			sum += log_prob(logits + i * n_vocab, n_vocab, r.ids[i]);
		*mean_logprob = sum / (double)r.n;
	}
	lp_mem_free(logits);
	lp_tokens_release(&t);
	lp_tokens_release(&r);
	return st;
}

/* The public entries that touch the session's state: each takes the lock,
 * so documents of a batch may call them from their own threads. */

/* Tokens every generation of the calling thread evaluated and produced. */
static _Thread_local size_t thread_prompt_tokens, thread_generated_tokens;

enum lp_status lp_session_regrow(struct lp_session *s, uint32_t need, struct lp_diag *d)
{
	enum lp_status st;

	pthread_mutex_lock(&s->lock);
	st = locked_regrow(s, need, d);
	pthread_mutex_unlock(&s->lock);
	return st;
}

size_t lp_session_count_tokens(struct lp_session *s, const char *text, size_t len)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = locked_count_tokens(s, text, len);
	pthread_mutex_unlock(&s->lock);
	return n;
}

enum lp_status lp_session_overhead(struct lp_session *s, const struct lp_chat_msg *msgs,
				   size_t n, size_t *n_tokens, struct lp_diag *d)
{
	enum lp_status st;

	pthread_mutex_lock(&s->lock);
	st = locked_overhead(s, msgs, n, n_tokens, d);
	pthread_mutex_unlock(&s->lock);
	return st;
}

enum lp_status lp_session_prefix_bytes(struct lp_session *s, const char *text, size_t len,
				       size_t max_tokens, size_t *bytes, struct lp_diag *d)
{
	enum lp_status st;

	pthread_mutex_lock(&s->lock);
	st = locked_prefix_bytes(s, text, len, max_tokens, bytes, d);
	pthread_mutex_unlock(&s->lock);
	return st;
}

enum lp_status lp_session_generate(struct lp_session *s, const struct lp_chat_msg *msgs,
				   size_t n, const char *prefix, size_t max_tokens,
				   char **out_text, size_t *n_prompt, size_t *n_out,
				   struct lp_diag *d)
{
	size_t np = 0, no = 0;
	enum lp_status st;

	*out_text = NULL;
	if ((st = lp_cancel_check("before a model call", d)))
		return st;
	if (s->remote) {
		/* no lock: the server takes requests side by side */
		*out_text = NULL;
		st = generate_remote(s, msgs, n, prefix, max_tokens, out_text, &np, &no, d);
	} else {
		pthread_mutex_lock(&s->lock);
		st = locked_generate(s, msgs, n, prefix, max_tokens, out_text, &np, &no, d);
		pthread_mutex_unlock(&s->lock);
	}
	if (n_prompt)
		*n_prompt = np;
	if (n_out)
		*n_out = no;
	thread_prompt_tokens += np;
	thread_generated_tokens += no;
	return st;
}

enum lp_status lp_session_score(struct lp_session *s, const struct lp_chat_msg *msgs, size_t n,
				const char *reply, double *mean_logprob, struct lp_diag *d)
{
	enum lp_status st;

	*mean_logprob = 0;
	if ((st = lp_cancel_check("before a model call", d)))
		return st;
	if (s->remote)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "a served model gives no probabilities to score a reply by");
	pthread_mutex_lock(&s->lock);
	st = locked_score(s, msgs, n, reply, mean_logprob, d);
	pthread_mutex_unlock(&s->lock);
	return st;
}

void lp_session_thread_tokens(size_t *prompt, size_t *generated)
{
	*prompt = thread_prompt_tokens;
	*generated = thread_generated_tokens;
}

uint32_t lp_session_n_ctx(const struct lp_session *s)
{
	struct lp_session *w = (struct lp_session *)s; /* the lock only */
	uint32_t n;

	pthread_mutex_lock(&w->lock);
	n = s->n_ctx;
	pthread_mutex_unlock(&w->lock);
	return n;
}
