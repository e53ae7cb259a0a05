/* cmd_plan.c - `lpipe plan MODEL --mem-budget SIZE`: turn a budget into the
 * model and split settings of a pipeline, printed as YAML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "api/runner.h"
#include "core/mem.h"
#include "core/status.h"
#include "model/gguf.h"
#include "model/kvcache.h"
#include "model/model.h"
#include "model/plan.h"

const char lp_usage_plan[] =
	"usage: lpipe plan MODEL --mem-budget SIZE [--kv-type auto|f32|f16|q8_0]\n"
	"                  [--threads N] [--gpu-budget SIZE] [--lang en|zh|und]\n"
	"\n"
	"MODEL is a GGUF file, or a pipeline (.yaml): then the model it runs, or\n"
	"with --lang the one it runs for documents in that language\n"
	"(model.by_lang).\n"
	"\n"
	"Predict from MODEL's hyper-parameters the memory it takes: weights (the\n"
	"mapped file), KV cache (2 x layers x kv_heads x head_dim x bytes of the KV\n"
	"type, per token), activation scratch and logits, with the formula the\n"
	"engine allocates by. Print the largest context (a multiple of 256, at most\n"
	"the training context) that fits the budget less a safety margin (10%, at\n"
	"least 4 MiB, for the tokenizer, the document and indexes), the chunk size\n"
	"(the context less 96 tokens of template and 256 of output), an overlap of\n"
	"about 12%, the KV type and the prefill batch, as a YAML fragment to paste\n"
	"into a pipeline. When no context fits with the whole file mapped, the plan\n"
	"streams the weights a layer at a time (model.weights: stream), which keeps\n"
	"only a window resident: the metadata, the embedding and output tensors and\n"
	"two layers.\n"
	"\n"
	"  --lang TAG      with a pipeline: plan for its model for documents in\n"
	"                  language TAG (en, zh, und)\n"
	"  --kv-type TYPE  auto (default) keeps f16 unless q8_0 gives a longer\n"
	"                  context\n"
	"  --threads N     threads the scratch is sized for (default: online CPUs)\n"
	"  --gpu-budget SIZE\n"
	"                  also plan for a GPU with SIZE of device memory: put the\n"
	"                  most layers on it (gpu_layers) that still leave a context\n"
	"                  of 2048 tokens (or the training context), counting their\n"
	"                  weights, KV cache and scratch against SIZE less its\n"
	"                  margin, and print device: cuda, gpu_layers and\n"
	"                  memory.gpu_budget with the rest\n"
	"\n"
	"Exit status 0, 2 for bad options, 3 for an unreadable or invalid model,\n"
	"4 when even the smallest context does not fit the budget.\n";

struct plan_opts {
	const char *model;
	const char *lang;      /* --lang: the pipeline's model for this language */
	char file[4096];       /* the GGUF file MODEL names */
	size_t budget;
	size_t gpu_budget;
	int kv_auto;
	enum lp_qtype kv_type;
	int n_threads;
};

static int parse_opt(struct plan_opts *o, const char *a, const char *v)
{
	if (!v)
		return lp_cli_usage_error("plan", "'%s' needs a value", a);
	if (!strcmp(a, "--mem-budget")) {
		return lp_opt_size("plan", a, v, 1, 0, &o->budget);
	} else if (!strcmp(a, "--gpu-budget")) {
		return lp_opt_size("plan", a, v, 1, 0, &o->gpu_budget);
	} else if (!strcmp(a, "--kv-type")) {
		o->kv_auto = !strcmp(v, "auto");
		if (!o->kv_auto && !lp_kv_type_parse(v, &o->kv_type))
			return lp_cli_usage_error("plan", "bad kv type '%s' (auto, f32, f16, q8_0)",
						  v);
	} else if (!strcmp(a, "--lang")) {
		o->lang = v;
	} else if (!strcmp(a, "--threads")) {
		long long n;
		int rc = lp_opt_int("plan", a, v, 1, LP_OPT_THREADS_MAX, &n);
		if (rc)
			return rc;
		o->n_threads = (int)n;
	}
	return 0;
}

static int known(const char *const *names, const char *s)
{
	for (; *names; names++)
		if (!strcmp(*names, s))
			return 1;
	return 0;
}

static int parse(int argc, char **argv, struct plan_opts *o)
{
	static const char *const opts[] = { "--mem-budget", "--kv-type", "--threads",
					     "--gpu-budget", "--lang", NULL };

	memset(o, 0, sizeof(*o));
	o->kv_auto = 1;
	for (int i = 1; i < argc; i++) {
		int rc;
		if (argv[i][0] == '-' && argv[i][1]) {
			if (!known(opts, argv[i])) {
				const char *near = lp_cli_nearest(argv[i], opts);
				if (near)
					return lp_cli_usage_error("plan", "unknown option '%s'; "
								  "did you mean '%s'?", argv[i],
								  near);
				return lp_cli_usage_error("plan", "unknown option '%s'", argv[i]);
			}
			if ((rc = parse_opt(o, argv[i], i + 1 < argc ? argv[i + 1] : NULL)))
				return rc;
			i++;
		} else if (o->model) {
			return lp_cli_usage_error("plan", "unexpected argument '%s'", argv[i]);
		} else {
			o->model = argv[i];
		}
	}
	if (!o->model)
		return lp_cli_usage_error("plan", "missing MODEL");
	if (!o->budget)
		return lp_cli_usage_error("plan", "missing --mem-budget SIZE");
	return 0;
}

/* A budget as the pipeline file writes it: "256MiB", "1GiB", or bytes. */
static void yaml_size(size_t n, char *buf, size_t cap)
{
	static const char *const unit[] = { "TiB", "GiB", "MiB", "KiB" };

	for (int i = 0; i < 4; i++) {
		size_t u = (size_t)1 << (10 * (4 - i));
		if (n >= u && n % u == 0) {
			snprintf(buf, cap, "%zu%s", n / u, unit[i]);
			return;
		}
	}
	snprintf(buf, cap, "%zu", n);
}

static void print_plan(const struct plan_opts *o, const struct lp_model *m,
		       const struct lp_plan *p)
{
	const struct lp_plan_bytes *b = &p->bytes;
	char s[6][32], budget[40];

	yaml_size(o->budget, budget, sizeof(budget));
	printf("# lpipe plan: %s within %s\n", o->file,
	       lp_mem_format_size(o->budget, s[0], sizeof(s[0])));
	printf("# predicted at context %u: weights %s + kv %s + scratch %s + logits %s "
	       "+ metadata %s\n", p->n_ctx,
	       lp_mem_format_size(b->weights, s[0], 32), lp_mem_format_size(b->kv, s[1], 32),
	       lp_mem_format_size(b->scratch, s[2], 32), lp_mem_format_size(b->logits, s[3], 32),
	       lp_mem_format_size(b->other, s[4], 32));
	printf("#   = %s of %s usable (the rest is the safety margin)\n",
	       lp_mem_format_size(b->total, s[0], 32), lp_mem_format_size(p->usable, s[1], 32));
	if (p->stream)
		printf("# weights streamed per layer: a window of %s resident, not the %s file\n",
		       lp_mem_format_size(b->weights, s[0], 32),
		       lp_mem_format_size(lp_gguf_file_bytes(m->gguf), s[1], 32));
	printf("# kv cache: %zu bytes per token (%s); training context %u\n", p->kv_per_token,
	       lp_qtype_name(p->kv_type), m->hp.n_ctx_train);
	printf("# prefill batch: %u tokens per step, scratch sized for %d threads "
	       "(not pipeline keys)\n", p->n_batch, p->n_threads);
	if (o->gpu_budget)
		printf("# gpu: %u of %u layers: weights %s + kv %s + scratch %s = %s of %s usable\n",
		       p->gpu_layers, m->hp.n_layer, lp_mem_format_size(b->gpu_weights, s[0], 32),
		       lp_mem_format_size(b->gpu_kv, s[1], 32),
		       lp_mem_format_size(b->gpu_scratch, s[2], 32),
		       lp_mem_format_size(b->gpu_total, s[3], 32),
		       lp_mem_format_size(p->gpu_usable, s[4], 32));
	printf("model:\n");
	if (o->gpu_budget)
		printf("  device: cuda\n  gpu_layers: %u\n", p->gpu_layers);
	printf("  context: %u\n  kv_type: %s\n", p->n_ctx, lp_qtype_name(p->kv_type));
	if (p->stream)
		printf("  weights: stream\n");
	printf("memory:\n  budget: %s\n", budget);
	if (o->gpu_budget) {
		yaml_size(o->gpu_budget, budget, sizeof(budget));
		printf("  gpu_budget: %s\n", budget);
	}
	printf("stages:\n  - split: {unit: tokens, size: %u, overlap: %u, boundary: sentence}\n",
	       p->chunk, p->overlap);
}

int cmd_plan(int argc, char **argv)
{
	struct plan_opts o;
	struct lp_gguf *g = NULL;
	struct lp_model *m = NULL;
	struct lp_plan_request r;
	struct lp_plan p;
	struct lp_diag d;
	enum lp_status st;
	int rc;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(lp_usage_plan, stdout);
		return LP_EXIT_OK;
	}
	if ((rc = parse(argc, argv, &o)))
		return rc;
	lp_diag_init(&d);
	if ((st = lp_runner_model_arg(o.model, o.lang, o.file, sizeof(o.file), &d))) {
		lp_diag_print(&d, stderr);
		return lp_status_exit_code(st);
	}
	/* No budget while loading: the plan says what does not fit instead. */
	lp_mem_set_phase("load");
	if (!(st = lp_gguf_open(o.file, &g, &d)))
		st = lp_model_load(g, &m, &d);
	if (!st) {
		r = (struct lp_plan_request){ .budget = o.budget, .kv_auto = o.kv_auto,
					      .kv_type = o.kv_type, .n_threads = o.n_threads,
					      .other = lp_mem_current(LP_MEM_OTHER),
					      .allow_stream = 1, .gpu_budget = o.gpu_budget };
		st = lp_plan_choose(m, &r, &p, &d);
	}
	if (st) {
		lp_diag_print(&d, stderr);
		rc = lp_status_exit_code(st);
	} else {
		print_plan(&o, m, &p);
		rc = LP_EXIT_OK; /* lp_cli_close_stdout checks the writes */
	}
	lp_model_free(m);
	lp_gguf_close(g);
	return rc;
}
