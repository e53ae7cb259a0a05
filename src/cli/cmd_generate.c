/*
 * cmd_generate.c - `lpipe generate`: run a model on a prompt and stream
 * the continuation to stdout; prompt and generation speed go to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "core/buf.h"
#include "core/mem.h"
#include "core/status.h"
#include "model/chat.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/kvcache.h"
#include "model/model.h"
#include "model/sampler.h"
#include "model/tokenizer.h"

const char lp_usage_generate[] =
	"usage: lpipe generate [MODEL] -p PROMPT [--chat] [-n N] [--temp T] [--top-k K]\n"
	"                      [--top-p P] [--min-p P] [--repeat-penalty R] [--seed S]\n"
	"                      [--threads N] [--ctx N] [--kv-type f32|f16|q8_0]\n"
	"                      [--mem-budget SIZE]\n"
	"\n"
	"Continue PROMPT with the GGUF model MODEL (default\n"
	"${LPIPE_MODEL_DIR:-~/.cache/lpipe/models}/SmolLM2-135M-Instruct.Q4_1.gguf),\n"
	"streaming the text to standard output; prompt and generation speed\n"
	"(tokens/s) go to standard error.\n"
	"  -p, --prompt TEXT     the prompt\n"
	"  --chat                wrap the prompt as a user turn in the model's chat format\n"
	"  -n, --n-predict N     generate at most N tokens (default 128)\n"
	"  --temp T              temperature, 0 for greedy (default 0.8)\n"
	"  --top-k K             keep the K best tokens, 0 for all (default 40)\n"
	"  --top-p P             nucleus mass (default 0.95)\n"
	"  --min-p P             drop tokens below P times the best (default 0.05)\n"
	"  --repeat-penalty R    penalty on the last 64 tokens (default 1.1)\n"
	"  --seed S              random seed (default 42)\n"
	"  --threads N           threads (default: all CPUs)\n"
	"  --ctx N               context in tokens (default 2048)\n"
	"  --kv-type TYPE        KV cache type: f32, f16 (default) or q8_0\n"
	"  --mem-budget SIZE     cap on tracked memory, e.g. 512MiB\n"
	"Exit status 2 for a usage error, 3 when the model cannot be read or the\n"
	"prompt does not fit the context, 4 when the memory budget is exceeded.\n";

struct gen_opts {
	const char *model;
	const char *prompt;
	int chat;
	long n_predict;
	struct lp_sampler_params sp;
	struct lp_forward_params cp;
	size_t budget;
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

#define G "generate"

static int bad_value(const char *opt, const char *v)
{
	return lp_cli_usage_error("generate", "invalid value '%s' for %s", v, opt);
}

/* Returns -1 when the options are fine, else the exit code. */
static int parse(int argc, char **argv, struct gen_opts *o, char *model_buf, size_t cap)
{
	enum { O_TEMP = 256, O_TOPK, O_TOPP, O_MINP, O_REP, O_SEED, O_THREADS, O_CTX,
	       O_KV, O_BUDGET };
	static const struct option longs[] = {
		{ "prompt", required_argument, NULL, 'p' }, { "chat", no_argument, NULL, 'c' },
		{ "n-predict", required_argument, NULL, 'n' },
		{ "temp", required_argument, NULL, O_TEMP },
		{ "top-k", required_argument, NULL, O_TOPK },
		{ "top-p", required_argument, NULL, O_TOPP },
		{ "min-p", required_argument, NULL, O_MINP },
		{ "repeat-penalty", required_argument, NULL, O_REP },
		{ "seed", required_argument, NULL, O_SEED },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "ctx", required_argument, NULL, O_CTX },
		{ "kv-type", required_argument, NULL, O_KV },
		{ "mem-budget", required_argument, NULL, O_BUDGET },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	long long n;
	double x;
	int c, rc = 0;

	optind = 1;
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, "p:n:h", longs, NULL)) != -1) {
		switch (c) {
		case 'p': o->prompt = optarg; break;
		case 'c': o->chat = 1; break;
		case 'n':
			if (!(rc = lp_opt_int(G, "-n", optarg, 0, LP_OPT_TOKENS_MAX, &n)))
				o->n_predict = (long)n;
			break;
		case O_TEMP:
			if (!(rc = lp_opt_real(G, "--temp", optarg, 0, 100, &x)))
				o->sp.temperature = (float)x;
			break;
		case O_TOPP:
			if (!(rc = lp_opt_real(G, "--top-p", optarg, 0, 1, &x)))
				o->sp.top_p = (float)x;
			break;
		case O_MINP:
			if (!(rc = lp_opt_real(G, "--min-p", optarg, 0, 1, &x)))
				o->sp.min_p = (float)x;
			break;
		case O_REP:
			if (!(rc = lp_opt_real(G, "--repeat-penalty", optarg, 0.01, 100, &x)))
				o->sp.repeat_penalty = (float)x;
			break;
		case O_TOPK:
			if (!(rc = lp_opt_int(G, "--top-k", optarg, 0, 1 << 24, &n)))
				o->sp.top_k = (int32_t)n;
			break;
		case O_SEED: {
			unsigned long long seed;
			if (!(rc = lp_opt_u64(G, "--seed", optarg, &seed)))
				o->sp.seed = seed;
			break;
		}
		case O_THREADS:
			if (!(rc = lp_opt_int(G, "--threads", optarg, 1, LP_OPT_THREADS_MAX, &n)))
				o->cp.n_threads = (int)n;
			break;
		case O_CTX:
			if (!(rc = lp_opt_int(G, "--ctx", optarg, 1, LP_OPT_CTX_MAX, &n)))
				o->cp.n_ctx = (uint32_t)n;
			break;
		case O_KV:
			if (!lp_kv_type_parse(optarg, &o->cp.kv_type))
				return bad_value("--kv-type", optarg);
			break;
		case O_BUDGET:
			rc = lp_opt_size(G, "--mem-budget", optarg, 1, 1, &o->budget);
			break;
		case 'h': fputs(lp_usage_generate, stdout); return LP_EXIT_OK;
		default:
			return lp_cli_usage_error("generate", "unknown option or missing value in '%s'",
						  argv[optind - 1]);
		}
	}
	if (rc)
		return rc;
	if (optind < argc)
		o->model = argv[optind++];
	if (optind < argc)
		return lp_cli_usage_error("generate", "unexpected argument '%s'", argv[optind]);
	if (!o->prompt)
		return lp_cli_usage_error("generate", "no prompt given (-p)");
	if (!o->model) {
		const char *dir = getenv("LPIPE_MODEL_DIR"), *home = getenv("HOME");
		if (dir && *dir)
			snprintf(model_buf, cap, "%s/SmolLM2-135M-Instruct.Q4_1.gguf", dir);
		else
			snprintf(model_buf, cap, "%s/.cache/lpipe/models/SmolLM2-135M-Instruct.Q4_1.gguf",
				 home ? home : ".");
		o->model = model_buf;
	}
	return -1;
}

/* The prompt as token ids: raw text, or rendered through the chat format. */
static enum lp_status encode_prompt(const struct lp_gguf *g, const struct lp_tok *tok,
				    const struct gen_opts *o, struct lp_tokens *ids,
				    struct lp_diag *d)
{
	const struct lp_gguf_kv *kv = lp_gguf_find(g, "tokenizer.chat_template");
	struct lp_chat_msg msg = { "user", o->prompt };
	struct lp_chat chat;
	struct lp_buf text;
	char *tmpl = NULL;
	enum lp_status st;

	if (!o->chat)
		return lp_tok_encode(tok, o->prompt, strlen(o->prompt), LP_TOK_ADD_SPECIAL, ids, d);
	if (kv && kv->type == LP_GGUF_STRING) {
		tmpl = malloc(kv->v.str.len + 1);
		if (!tmpl)
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot copy the chat template");
		memcpy(tmpl, kv->v.str.ptr, kv->v.str.len);
		tmpl[kv->v.str.len] = 0;
	}
	st = lp_chat_init(&chat, tmpl, NULL, d);
	free(tmpl);
	if (st)
		return st;
	lp_buf_init(&text);
	st = lp_chat_render(&chat, &msg, 1, 1, &text, d);
	if (!st)
		st = lp_tok_encode(tok, text.data, text.len, LP_TOK_SPECIAL | LP_TOK_ADD_SPECIAL,
				   ids, d);
	lp_buf_release(&text);
	lp_chat_release(&chat);
	return st;
}

struct session {
	struct lp_gguf *g;
	struct lp_model *m;
	struct lp_tok *tok;
	struct lp_forward *ctx;
	struct lp_sampler *smp;
	struct lp_tokens ids;
	struct lp_stop stop;
	struct lp_buf piece, out;
};

static void session_release(struct session *s)
{
	lp_buf_release(&s->out);
	lp_buf_release(&s->piece);
	lp_stop_release(&s->stop);
	lp_tokens_release(&s->ids);
	lp_sampler_free(s->smp);
	lp_forward_free(s->ctx);
	lp_tok_free(s->tok);
	lp_model_free(s->m);
	lp_gguf_close(s->g);
}

/* Print what was generated so far; a failed write (a full disk, a closed
 * pipe) stops the generation rather than computing text nobody gets. */
static enum lp_status flush_out(struct lp_buf *out, struct lp_diag *d)
{
	int failed;

	errno = 0;
	failed = (out->len && fwrite(out->data, 1, out->len, stdout) != out->len) ||
		 fflush(stdout) != 0 || ferror(stdout);
	lp_buf_reset(out);
	if (failed)
		return lp_diag_set(d, LP_E_IO, "<stdout>", 0, 0, "unable to write: %s",
				   strerror(errno ? errno : EIO));
	return LP_OK;
}

/* Sample, print and feed back up to n_predict tokens. */
static enum lp_status generate(struct session *s, long n_predict, long *n_done,
			       struct lp_diag *d)
{
	struct lp_detok dt;
	uint32_t pos = (uint32_t)s->ids.n;
	int stopped = 0;
	enum lp_status st = LP_OK;

	lp_detok_init(&dt, s->tok, 0);
	for (*n_done = 0; *n_done < n_predict && !stopped; ++*n_done) {
		int32_t id = lp_sampler_sample(s->smp, lp_forward_logits(s->ctx));
		if (lp_stop_is_eog(&s->stop, id))
			break;
		lp_sampler_accept(s->smp, id);
		lp_buf_reset(&s->piece);
		if ((st = lp_detok_push(&dt, id, &s->piece)) ||
		    (st = lp_stop_feed(&s->stop, s->piece.data, s->piece.len, &s->out, &stopped)))
			return lp_diag_set(d, st, NULL, 0, 0, "cannot hold the generated text");
		if ((st = flush_out(&s->out, d)))
			return st;
		if (pos >= lp_forward_n_ctx(s->ctx)) {
			lp_diag_set(d, LP_OK, NULL, 0, 0, "context full");
			break;
		}
		if ((st = lp_forward_eval(s->ctx, &id, 1, pos++, NULL, d)))
			return st;
	}
	lp_buf_reset(&s->piece);
	lp_detok_flush(&dt, &s->piece);
	lp_stop_feed(&s->stop, s->piece.data, s->piece.len, &s->out, &stopped);
	if (!stopped)
		lp_stop_finish(&s->stop, &s->out);
	if (!st)
		st = flush_out(&s->out, d);
	return st;
}

static enum lp_status run(const struct gen_opts *o, struct lp_diag *d)
{
	struct session s;
	enum lp_status st;
	double t0, t1, t2;
	long n_gen = 0;

	memset(&s, 0, sizeof(s));
	lp_tokens_init(&s.ids);
	lp_stop_init(&s.stop);
	lp_buf_init(&s.piece);
	lp_buf_init(&s.out);
	lp_mem_set_phase("load");
	if ((st = lp_gguf_open(o->model, &s.g, d)) || (st = lp_model_load(s.g, &s.m, d)) ||
	    (st = lp_tok_from_gguf(s.g, &s.tok, d)) ||
	    (st = lp_forward_new(s.m, &o->cp, &s.ctx, d)) ||
	    (st = lp_sampler_new(&o->sp, (int32_t)s.m->hp.n_vocab, &s.smp, d)) ||
	    (st = encode_prompt(s.g, s.tok, o, &s.ids, d)))
		goto out;
	lp_stop_add_vocab(&s.stop, lp_tok_vocab(s.tok));
	if (s.ids.n == 0) {
		st = lp_diag_set(d, LP_E_INPUT, NULL, 0, 0,
				 "the prompt is empty (it gives no tokens; -p needs text)");
		goto out;
	}
	if (s.ids.n >= lp_forward_n_ctx(s.ctx)) {
		st = lp_diag_set(d, LP_E_INPUT, NULL, 0, 0,
				 "prompt of %zu tokens does not fit a context of %u", s.ids.n,
				 lp_forward_n_ctx(s.ctx));
		goto out;
	}
	for (size_t i = 0; i < s.ids.n; i++)
		lp_sampler_accept(s.smp, s.ids.ids[i]);
	t0 = now_s();
	if ((st = lp_forward_eval(s.ctx, s.ids.ids, s.ids.n, 0, NULL, d)))
		goto out;
	t1 = now_s();
	st = generate(&s, o->n_predict, &n_gen, d);
	t2 = now_s();
	if (st)
		goto out;
	fputc('\n', stdout);
	if (fflush(stdout) || ferror(stdout)) {
		st = lp_diag_set(d, LP_E_IO, "<stdout>", 0, 0, "unable to write: %s",
				 strerror(errno ? errno : EIO));
		goto out;
	}
	fprintf(stderr, "prompt: %zu tokens, %.1f tokens/s; generation: %ld tokens, %.1f tokens/s"
		"; %d threads\n", s.ids.n, s.ids.n / (t1 - t0), n_gen,
		n_gen > 1 ? (n_gen - 1) / (t2 - t1) : 0.0, lp_forward_n_threads(s.ctx));
out:
	session_release(&s);
	return st;
}

int cmd_generate(int argc, char **argv)
{
	struct gen_opts o = { .n_predict = 128 };
	char model_buf[4096];
	struct lp_diag d;
	enum lp_status st;
	int rc;

	o.sp = lp_sampler_default_params();
	o.cp = lp_forward_default_params();
	if ((rc = parse(argc, argv, &o, model_buf, sizeof(model_buf))) >= 0)
		return rc;
	if (o.budget)
		lp_mem_set_budget(o.budget);
	lp_diag_init(&d);
	st = run(&o, &d);
	if (st) {
		lp_diag_print(&d, stderr);
		return lp_status_exit_code(st);
	}
	return LP_EXIT_OK;
}
