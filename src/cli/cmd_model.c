/* cmd_model.c - `lpipe model info FILE`: what a GGUF file holds and what it
 * needs in memory. */
#include "cli/commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/status.h"
#include "model/gguf.h"
#include "quant/quant.h"

const char lp_usage_model[] =
	"usage: lpipe model info FILE [--context N]\n"
	"\n"
	"Print a GGUF model's architecture, hyper-parameters, tokenizer, tensor\n"
	"types and the memory it needs at a context of N tokens (default: 2048):\n"
	"weights + KV cache (f16) + a rough activation scratch.\n"
	"Exit status 3 when the file is not a valid or supported GGUF model.\n";

/* "lpipe model: error: MSG" and the synopsis on stderr; returns the usage
 * exit code. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("lpipe model: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%.*s", (int)(strchr(lp_usage_model, '\n') - lp_usage_model + 1),
		lp_usage_model);
	return LP_EXIT_USAGE;
}

struct model_hparams {
	char arch[64], name[256];
	uint64_t n_ctx_train, n_embd, n_layer, n_ff, n_head, n_head_kv, n_vocab, head_dim;
	double rope_base, rms_eps;
};

static uint64_t arch_u64(const struct lp_gguf *g, const char *arch, const char *key)
{
	char k[160];
	uint64_t v = 0;

	snprintf(k, sizeof(k), "%s.%s", arch, key);
	return lp_gguf_get_u64(g, k, &v) ? v : 0;
}

static double arch_f64(const struct lp_gguf *g, const char *arch, const char *key)
{
	char k[160];
	double v = 0;

	snprintf(k, sizeof(k), "%s.%s", arch, key);
	return lp_gguf_get_f64(g, k, &v) ? v : 0;
}

static void read_hparams(const struct lp_gguf *g, struct model_hparams *h)
{
	const struct lp_gguf_kv *toks = lp_gguf_find(g, "tokenizer.ggml.tokens");
	const char *a = h->arch;

	memset(h, 0, sizeof(*h));
	if (!lp_gguf_get_str(g, "general.architecture", h->arch, sizeof(h->arch)))
		strcpy(h->arch, "?");
	if (!lp_gguf_get_str(g, "general.name", h->name, sizeof(h->name)))
		strcpy(h->name, "?");
	h->n_ctx_train = arch_u64(g, a, "context_length");
	h->n_embd = arch_u64(g, a, "embedding_length");
	h->n_layer = arch_u64(g, a, "block_count");
	h->n_ff = arch_u64(g, a, "feed_forward_length");
	h->n_head = arch_u64(g, a, "attention.head_count");
	h->n_head_kv = arch_u64(g, a, "attention.head_count_kv");
	if (!h->n_head_kv)
		h->n_head_kv = h->n_head;
	h->head_dim = arch_u64(g, a, "attention.key_length");
	if (!h->head_dim && h->n_head)
		h->head_dim = h->n_embd / h->n_head;
	h->rope_base = arch_f64(g, a, "rope.freq_base");
	h->rms_eps = arch_f64(g, a, "attention.layer_norm_rms_epsilon");
	if (toks && toks->type == LP_GGUF_ARRAY)
		h->n_vocab = toks->v.arr.n;
	if (!h->n_vocab)
		h->n_vocab = arch_u64(g, a, "vocab_size");
}

static void print_tensor_types(const struct lp_gguf *g, uint64_t *weights)
{
	uint64_t count[32] = { 0 }, bytes[32] = { 0 };
	char sz[32];

	*weights = 0;
	for (size_t i = 0; i < lp_gguf_n_tensors(g); i++) {
		const struct lp_gguf_tensor *t = lp_gguf_tensor_at(g, i);
		count[t->type]++;
		bytes[t->type] += t->bytes;
		*weights += t->bytes;
	}
	printf("tensors:       %zu\n", lp_gguf_n_tensors(g));
	printf("  %-6s %6s %12s\n", "type", "count", "bytes");
	for (unsigned t = 0; t < 32; t++)
		if (count[t])
			printf("  %-6s %6llu %12s\n", lp_qtype_name((enum lp_qtype)t),
			       (unsigned long long)count[t],
			       lp_mem_format_size((size_t)bytes[t], sz, sizeof(sz)));
}

/*
 * Rough scratch for decoding: the residual and its normalized copy, q/k/v,
 * attention output, the feed-forward's three vectors, the attention scores
 * over the context, the logits, and 8-bit copies of the activations; all
 * float32, per token.
 */
static uint64_t scratch_bytes(const struct model_hparams *h, uint64_t n_ctx)
{
	uint64_t f = 6 * h->n_embd + 3 * h->n_ff + h->n_head * n_ctx + h->n_vocab;

	return 4 * f + 2 * (h->n_embd + h->n_ff);
}

static void print_memory(const struct model_hparams *h, uint64_t weights, uint64_t n_ctx)
{
	uint64_t kv = 2 * h->n_layer * h->n_head_kv * h->head_dim * 2 * n_ctx;
	uint64_t scratch = scratch_bytes(h, n_ctx);
	char a[32], b[32], c[32], d[32];

	printf("memory at context %llu:\n", (unsigned long long)n_ctx);
	printf("  weights      %12s\n", lp_mem_format_size((size_t)weights, a, sizeof(a)));
	printf("  kv cache f16 %12s  (%llu bytes per token)\n",
	       lp_mem_format_size((size_t)kv, b, sizeof(b)),
	       (unsigned long long)(n_ctx ? kv / n_ctx : 0));
	printf("  scratch      %12s  (rough)\n", lp_mem_format_size((size_t)scratch, c, sizeof(c)));
	printf("  total        %12s\n",
	       lp_mem_format_size((size_t)(weights + kv + scratch), d, sizeof(d)));
}

static void print_info(const struct lp_gguf *g, uint64_t n_ctx)
{
	struct model_hparams h;
	char tok_model[64] = "?", tok_pre[64] = "", sz[32];
	uint64_t weights;

	read_hparams(g, &h);
	lp_gguf_get_str(g, "tokenizer.ggml.model", tok_model, sizeof(tok_model));
	lp_gguf_get_str(g, "tokenizer.ggml.pre", tok_pre, sizeof(tok_pre));
	printf("file:          %s\n", lp_gguf_path(g));
	printf("format:        GGUF v%u, %s, %zu metadata keys\n", lp_gguf_version(g),
	       lp_mem_format_size(lp_gguf_file_bytes(g), sz, sizeof(sz)), lp_gguf_n_kv(g));
	printf("architecture:  %s\n", h.arch);
	printf("name:          %s\n", h.name);
	printf("context:       %llu (trained)\n", (unsigned long long)h.n_ctx_train);
	printf("embedding:     %llu\n", (unsigned long long)h.n_embd);
	printf("layers:        %llu\n", (unsigned long long)h.n_layer);
	printf("feed-forward:  %llu\n", (unsigned long long)h.n_ff);
	printf("heads:         %llu (kv heads %llu, head dim %llu)\n",
	       (unsigned long long)h.n_head, (unsigned long long)h.n_head_kv,
	       (unsigned long long)h.head_dim);
	printf("rope base:     %g\n", h.rope_base);
	printf("rms epsilon:   %g\n", h.rms_eps);
	printf("tokenizer:     %s%s%s%s, %llu tokens\n", tok_model, tok_pre[0] ? " (pre: " : "",
	       tok_pre, tok_pre[0] ? ")" : "", (unsigned long long)h.n_vocab);
	print_tensor_types(g, &weights);
	print_memory(&h, weights, n_ctx);
}

static int model_info(int argc, char **argv)
{
	const char *path = NULL;
	uint64_t n_ctx = 2048;
	struct lp_gguf *g;
	struct lp_diag d;
	enum lp_status s;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--context") || !strcmp(argv[i], "-c")) {
			char *end;
			if (i + 1 >= argc)
				return usage_error("'%s' needs a value", argv[i]);
			n_ctx = strtoull(argv[++i], &end, 10);
			if (*end || !n_ctx || argv[i][0] == '-')
				return usage_error("bad context '%s'", argv[i]);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_error("unknown option '%s'", argv[i]);
		} else if (path) {
			return usage_error("unexpected argument '%s'", argv[i]);
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return usage_error("missing model FILE");
	lp_diag_init(&d);
	lp_mem_set_phase("load");
	if ((s = lp_gguf_open(path, &g, &d))) {
		lp_diag_print(&d, stderr);
		return lp_status_exit_code(s);
	}
	print_info(g, n_ctx);
	lp_gguf_close(g);
	return fflush(stdout) ? LP_EXIT_INPUT : LP_EXIT_OK;
}

int cmd_model(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("missing subcommand (info)");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(lp_usage_model, stdout);
		return LP_EXIT_OK;
	}
	if (!strcmp(argv[1], "info"))
		return model_info(argc, argv);
	return usage_error("unknown subcommand '%s'", argv[1]);
}
