/* cmd_probe.c - `lpipe probe MODEL`: measure memory and speed against the
 * context length, and say how memory grows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "api/runner.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/status.h"
#include "model/gguf.h"
#include "model/kvcache.h"
#include "model/model.h"
#include "report/probe.h"

const char lp_usage_probe[] =
	"usage: lpipe probe MODEL [--csv FILE] [--svg FILE] [--min N] [--max N]\n"
	"                   [--decode N] [--kv-type f32|f16|q8_0] [--threads N]\n"
	"                   [--mem-budget SIZE] [--device cpu|cuda] [--gpu-budget SIZE]\n"
	"                   [--lang en|zh|und] [--quiet] [--progress]\n"
	"\n"
	"MODEL is a GGUF file, or a pipeline (.yaml): then the model it runs, or\n"
	"with --lang the one it runs for documents in that language\n"
	"(model.by_lang).\n"
	"\n"
	"Load MODEL (phase load), then for context lengths doubling from --min\n"
	"(default 128) to --max (default: the model's training context): create a\n"
	"context of that length, prefill a synthetic prompt that leaves room for\n"
	"--decode tokens (default 16), and decode them one by one. Each phase\n"
	"(load, prefill, decode) gives one row: seconds, tokens per second, the\n"
	"tracked peak of weights, KV cache, scratch and logits, the tracked total,\n"
	"the resident set size and the planner's prediction. A length the budget\n"
	"refuses is marked 'over' and the probe goes on.\n"
	"\n"
	"The table goes to standard output, followed by whether memory grows\n"
	"linearly (KV cache) or faster (attention scratch), and at which length\n"
	"the budget is or would be exceeded.\n"
	"\n"
	"  --csv FILE         write the rows as CSV: n_ctx, phase, ok, seconds,\n"
	"                     tokens_per_s, weights_bytes, kv_bytes, scratch_bytes,\n"
	"                     logits_bytes, tracked_peak_bytes, rss_bytes,\n"
	"                     predicted_bytes\n"
	"  --svg FILE         write a chart of memory against length\n"
	"  --kv-type TYPE     KV cache type (default f16)\n"
	"  --threads N        worker threads (default: online CPUs)\n"
	"  --mem-budget SIZE  cap tracked memory, e.g. 256MiB\n"
	"  --device cuda      run every layer on the GPU and measure device memory:\n"
	"                     the weights, kv, scratch, tracked and predicted\n"
	"                     columns (and the CSV's gpu_* columns) are then the\n"
	"                     device's; without a usable GPU, exit status 3\n"
	"  --gpu-budget SIZE  cap device memory (default: the GPU's free memory)\n"
	"  --quiet            no progress line\n"
	"  --progress         progress on standard error even when it is not a\n"
	"                     terminal (a line every few seconds)\n"
	"  --lang TAG         with a pipeline: probe its model for documents in\n"
	"                     language TAG (en, zh, und)\n"
	"\n"
	"Exit status 0 (also when lengths are over budget), 2 for bad options,\n"
	"3 for an unreadable or invalid model, 4 when the weights alone exceed\n"
	"the budget.\n";

struct probe_opts {
	const char *model, *csv, *svg;
	const char *lang;      /* --lang: the pipeline's model for this language */
	char file[4096];       /* the GGUF file MODEL names */
	struct lp_probe_params p;
	size_t budget, gpu_budget;
	const char *device;
	int quiet, progress;
};

static int need_u32(const char *opt, const char *v, uint32_t min, long long max,
		    uint32_t *out)
{
	long long n;
	int rc;

	if (!v)
		return lp_cli_usage_error("probe", "'%s' needs a value", opt);
	if ((rc = lp_opt_int("probe", opt, v, min, max, &n)))
		return rc;
	*out = (uint32_t)n;
	return 0;
}

static int parse_one(struct probe_opts *o, const char *a, const char *v, int *used)
{
	uint32_t n = 0;
	int rc;

	*used = 1;
	if (!strcmp(a, "--quiet") || !strcmp(a, "--progress")) {
		*(a[2] == 'q' ? &o->quiet : &o->progress) = 1;
		*used = 0;
	} else if (!strcmp(a, "--csv") || !strcmp(a, "--svg")) {
		if (!v)
			return lp_cli_usage_error("probe", "'%s' needs a value", a);
		*(a[2] == 'c' ? &o->csv : &o->svg) = v;
	} else if (!strcmp(a, "--min")) {
		return need_u32(a, v, 2, LP_OPT_CTX_MAX, &o->p.min_ctx);
	} else if (!strcmp(a, "--max")) {
		return need_u32(a, v, 2, LP_OPT_CTX_MAX, &o->p.max_ctx);
	} else if (!strcmp(a, "--decode")) {
		return need_u32(a, v, 1, LP_OPT_TOKENS_MAX, &o->p.n_decode);
	} else if (!strcmp(a, "--threads")) {
		if ((rc = need_u32(a, v, 1, LP_OPT_THREADS_MAX, &n)))
			return rc;
		o->p.n_threads = (int)n;
	} else if (!strcmp(a, "--kv-type")) {
		if (!v || !lp_kv_type_parse(v, &o->p.kv_type))
			return lp_cli_usage_error("probe", "bad kv type '%s' (f32, f16, q8_0)",
						  v ? v : "");
	} else if (!strcmp(a, "--mem-budget")) {
		if (!v)
			return lp_cli_usage_error("probe", "'%s' needs a value", a);
		return lp_opt_size("probe", a, v, 1, 0, &o->budget);
	} else if (!strcmp(a, "--gpu-budget")) {
		if (!v)
			return lp_cli_usage_error("probe", "'%s' needs a value", a);
		return lp_opt_size("probe", a, v, 1, 0, &o->gpu_budget);
	} else if (!strcmp(a, "--lang")) {
		if (!v)
			return lp_cli_usage_error("probe", "'%s' needs a value", a);
		o->lang = v;
	} else if (!strcmp(a, "--device")) {
		if (!v || (strcmp(v, "cpu") && strcmp(v, "cuda")))
			return lp_cli_usage_error("probe", "bad device '%s' (cpu, cuda)",
						  v ? v : "");
		o->device = v;
	} else {
		*used = 0;
		return lp_cli_usage_error("probe", "unknown option '%s'", a);
	}
	return 0;
}

static int parse(int argc, char **argv, struct probe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->p = lp_probe_default_params();
	for (int i = 1; i < argc; i++) {
		int used, rc;
		if (argv[i][0] == '-' && argv[i][1]) {
			if ((rc = parse_one(o, argv[i], i + 1 < argc ? argv[i + 1] : NULL, &used)))
				return rc;
			i += used;
		} else if (o->model) {
			return lp_cli_usage_error("probe", "unexpected argument '%s'", argv[i]);
		} else {
			o->model = argv[i];
		}
	}
	if (!o->model)
		return lp_cli_usage_error("probe", "missing MODEL");
	lp_progress_enable(o->quiet ? 0 : o->progress ? 1 : -1);
	if (o->p.max_ctx && o->p.min_ctx > o->p.max_ctx)
		return lp_cli_usage_error("probe", "--min %u is above --max %u", o->p.min_ctx,
					  o->p.max_ctx);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int report(const struct probe_opts *o, const struct lp_gguf *g, struct lp_probe *pr)
{
	struct lp_probe_fit f;
	struct lp_diag d;
	char name[200], title[400];

	lp_probe_analyze(pr, &f);
	lp_probe_print(pr, &f, stdout);
	lp_diag_init(&d);
	if (o->csv && lp_probe_write_csv(pr, o->csv, &d)) {
		lp_diag_print(&d, stderr);
		return LP_EXIT_INPUT;
	}
	if (!lp_gguf_get_str(g, "general.name", name, sizeof(name)))
		snprintf(name, sizeof(name), "%.199s", o->file);
	snprintf(title, sizeof(title), "lpipe probe: %s, kv %s, %d threads", name,
		 lp_qtype_name(pr->p.kv_type), o->p.n_threads);
	if (o->p.n_threads <= 0)
		snprintf(title, sizeof(title), "lpipe probe: %s, kv %s", name,
			 lp_qtype_name(pr->p.kv_type));
	if (pr->p.device)
		snprintf(title, sizeof(title), "lpipe probe: %s, kv %s, device memory of %s", name,
			 lp_qtype_name(pr->p.kv_type), pr->p.device->device);
	if (o->svg && lp_probe_write_svg(pr, title, o->svg, &d)) {
		lp_diag_print(&d, stderr);
		return LP_EXIT_INPUT;
	}
	return LP_EXIT_OK; /* lp_cli_close_stdout checks the writes */
}

int cmd_probe(int argc, char **argv)
{
	struct probe_opts o;
	struct lp_gguf *g = NULL;
	struct lp_model *m = NULL;
	struct lp_probe *pr = NULL;
	struct lp_diag d;
	enum lp_status st;
	double t0;
	char w[32];
	int rc;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(lp_usage_probe, stdout);
		return LP_EXIT_OK;
	}
	if ((rc = parse(argc, argv, &o)))
		return rc;
	lp_diag_init(&d);
	if ((st = lp_runner_model_arg(o.model, o.lang, o.file, sizeof(o.file), &d))) {
		lp_diag_print(&d, stderr);
		return lp_status_exit_code(st);
	}
	if (o.device && !strcmp(o.device, "cuda")) {
		struct lp_backend_params bp = lp_backend_default_params();
		bp.n_threads = o.p.n_threads;
		if ((st = lp_backend_open("cuda", &bp, &o.p.device, &d))) {
			lp_diag_print(&d, stderr);
			return lp_status_exit_code(st);
		}
		lp_mem_set_gpu_budget(o.gpu_budget ? o.gpu_budget : o.p.device->mem_free);
	}
	lp_mem_set_budget(o.budget);
	lp_mem_set_phase("load");
	t0 = now_s();
	if (!(st = lp_gguf_open(o.file, &g, &d)))
		st = lp_model_load(g, &m, &d);
	if (!st) {
		printf("model: %s, %s loaded in %.3f s (tracked weights)\n", o.file,
		       lp_mem_format_size(lp_mem_current(LP_MEM_WEIGHTS), w, sizeof(w)),
		       now_s() - t0);
		o.p.other = lp_mem_current(LP_MEM_OTHER);
		st = lp_probe_run(m, &o.p, &pr, &d);
	}
	if (st) {
		lp_diag_print(&d, stderr);
		rc = lp_status_exit_code(st);
	} else {
		rc = report(&o, g, pr);
	}
	lp_probe_free(pr);
	lp_model_free(m);
	lp_gguf_close(g);
	lp_backend_free(o.p.device);
	return rc;
}
