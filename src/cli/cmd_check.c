/* cmd_check.c - `lpipe check PIPELINE`: validate, print the resolved plan. */
#include "cli/commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/runner.h"
#include "config/pipeline.h"
#include "config/schema.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/status.h"
#include "stages/model_stage.h"

const char lp_usage_check[] =
	"usage: lpipe check [options] PIPELINE\n"
	"       lpipe check --keys\n"
	"\n"
	"Load and validate the pipeline PIPELINE without running it, then print\n"
	"the resolved plan (every default filled in) as YAML on standard output.\n"
	"Errors name the file, line and column, and suggest the nearest valid key.\n"
	"Without -q, ${question} is left as written. PIPELINE may be the bare\n"
	"name of a ready pipeline (summarize), read from the folder that\n"
	"`lpipe version` names when no such file is in the current folder.\n"
	"\n"
	"options:\n"
	"  -q, --question TEXT   bind TEXT to the variable ${question}\n"
	"      --set KEY=VALUE   override a pipeline key (repeatable)\n"
	"      --keys            list every key a pipeline accepts, one a line, as\n"
	"                        --set writes it (stages.split.size), and exit\n"
	"  -h, --help            show this help\n"
	"\n"
	"exit status: 0 valid, 2 usage or configuration error, 3 unreadable file.\n";

static const struct option long_options[] = {
	{ "question", required_argument, NULL, 'q' },
	{ "set", required_argument, NULL, 's' },
	{ "keys", no_argument, NULL, 'k' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int check(const char *path, const char *question, const char **sets, size_t n_sets)
{
	struct lp_pipeline *p = NULL;
	struct lp_diag d;
	enum lp_status s;

	size_t budget;

	lp_diag_init(&d);
	/* LPIPE_MEM_BUDGET bounds reading the pipeline, as in run */
	if ((s = lp_runner_budget(NULL, NULL, &budget, &d))) {
		lp_diag_print(&d, stderr);
		return lp_status_exit_code(s);
	}
	lp_mem_set_budget(budget);
	lp_mem_set_phase("config");
	/* Keep ${question} visible in the plan when no question is given. */
	s = lp_runner_load_pipeline(path, question ? question : "${question}", sets, n_sets,
				    &p, &d);
	if (s) {
		if (!d.msg[0])
			lp_diag_set(&d, s, NULL, 0, 0, "%s", lp_status_str(s));
		lp_diag_print(&d, stderr);
		return lp_status_exit_code(s);
	}
	s = lp_pipeline_print(p, stdout);
	/* a missing per-language model is no error, but say it now */
	for (int i = 0; lp_model_lang_name(i); i++) {
		struct lp_stage_model pick;
		if (!p->model.by_lang[i])
			continue;
		lp_stage_pick_model(&p->model, lp_model_lang_name(i), &pick);
		if (pick.notice[0])
			lp_info("%s", pick.notice);
	}
	lp_pipeline_free(p);
	if (s) {
		fputs("lpipe check: error: out of memory printing the plan\n", stderr);
		return lp_status_exit_code(s);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fputs("lpipe check: error: unable to write to standard output\n", stderr);
		return lp_status_exit_code(LP_E_IO);
	}
	return LP_EXIT_OK;
}

static void print_key(const char *path, void *arg)
{
	fprintf(arg, "%s\n", path);
}

/* --keys: the schema as the parsers know it (config/schema.h). */
static int list_keys(void)
{
	struct lp_diag d;
	enum lp_status s;

	lp_diag_init(&d);
	if ((s = lp_schema_keys(print_key, stdout, &d))) {
		lp_diag_print(&d, stderr);
		return lp_status_exit_code(s);
	}
	return LP_EXIT_OK; /* lp_cli_close_stdout checks the writes */
}

int cmd_check(int argc, char **argv)
{
	const char *question = NULL;
	const char **sets;
	size_t n_sets = 0;
	int c, rc = -1, keys = 0;

	sets = calloc((size_t)argc + 1, sizeof(*sets));
	if (!sets)
		return LP_EXIT_NOMEM;
	optind = 0;
	opterr = 0;
	while (rc < 0 && (c = getopt_long(argc, argv, ":q:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'q': question = optarg; break;
		case 's':
			if (!strchr(optarg, '='))
				rc = lp_cli_usage_error("check", "--set needs KEY=VALUE, not '%s'",
							optarg);
			else
				sets[n_sets++] = optarg;
			break;
		case 'k': keys = 1; break;
		case 'h': fputs(lp_usage_check, stdout); rc = LP_EXIT_OK; break;
		case ':':
			rc = lp_cli_usage_error("check", "option '%s' needs a value", argv[optind - 1]);
			break;
		default:
			rc = optopt ? lp_cli_usage_error("check", "unknown option '-%c'", optopt)
				    : lp_cli_usage_error("check", "unknown option '%s'",
							 argv[optind - 1]);
		}
	}
	if (rc < 0 && keys)
		rc = argc == optind ? list_keys()
				    : lp_cli_usage_error("check", "--keys takes no PIPELINE");
	if (rc < 0 && argc == optind)
		rc = lp_cli_usage_error("check", "missing PIPELINE");
	else if (rc < 0 && argc - optind > 1)
		rc = lp_cli_usage_error("check", "unexpected argument '%s'", argv[optind + 1]);
	if (rc < 0)
		rc = check(argv[optind], question, sets, n_sets);
	free(sets);
	return rc;
}
