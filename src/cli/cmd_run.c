/*
 * cmd_run.c - `lpipe run PIPELINE DOC|-`: run a pipeline on one document.
 *
 * A client of the public library (api/lpipe.h) like any other: the
 * command parses its options, runs the pipeline through lpipe_run_file on
 * an engine of its own and writes the report atomically.
 */
#include "cli/commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/lpipe.h"
#include "cli/options.h"
#include "core/fileio.h"

const char lp_usage_run[] =
	"usage: lpipe run [options] PIPELINE DOC|-\n"
	"\n"
	"Run the pipeline PIPELINE (a YAML file, see lpipe-pipeline(5), or the\n"
	"bare name of a ready one: summarize) on the document DOC, or on standard\n"
	"input when DOC is '-', and write the result to standard output. Options\n"
	"may come before or after the arguments.\n"
	"\n"
	"options:\n"
	"  -q, --question TEXT   bind TEXT to the variable ${question}\n"
	"      --set KEY=VALUE   override a pipeline key (repeatable), e.g.\n"
	"                        --set stages.split.size=256\n"
	"  -o, --output FILE     write the result to FILE, atomically: a failed run\n"
	"                        leaves an existing FILE untouched\n"
	"      --format FORMAT   text, markdown, json or html (overrides output.format)\n"
	"      --mem-budget SIZE cap on tracked memory, e.g. 512MiB (overrides\n"
	"                        LPIPE_MEM_BUDGET and memory.budget; 0: no cap)\n"
	"      --quiet           print errors only: no warnings, no progress\n"
	"      --progress        show progress on standard error even when it is\n"
	"                        not a terminal (a line every few seconds; on a\n"
	"                        terminal one line is redrawn by default)\n"
	"  -v, --verbose         print each stage's time, memory peak and note, and\n"
	"                        the run's tracked, document and RSS peaks\n"
	"  -h, --help            show this help\n"
	"\n"
	"In text format the result is followed, when a verify stage ran, by a blank\n"
	"line and one line 'verification: S/N keyphrases survived (P%), W words'\n"
	"(and '; missing: ...' when some are missing).\n"
	"\n"
	"exit status: 0 ok, 1 verification failed (the result is still written),\n"
	"2 usage or configuration error, 3 input error, 4 out of memory or over\n"
	"the memory budget, 5 internal error.\n";

struct run_opts {
	const char *pipeline, *doc;
	const char *question;
	const char **sets;
	size_t n_sets;
	const char *output;
	const char *format;     /* NULL: the pipeline's output.format */
	const char *mem_budget;
	int quiet, progress;
};

enum { OPT_SET = 256, OPT_FORMAT, OPT_MEM_BUDGET, OPT_QUIET, OPT_PROGRESS };

static const struct option long_options[] = {
	{ "question", required_argument, NULL, 'q' },
	{ "set", required_argument, NULL, OPT_SET },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "mem-budget", required_argument, NULL, OPT_MEM_BUDGET },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Returns -1 to go on, else the exit code to return now. */
static int parse_options(int argc, char **argv, struct run_opts *o)
{
	size_t bytes;
	int c;

	o->sets = calloc((size_t)argc + 1, sizeof(*o->sets));
	if (!o->sets) {
		fputs("lpipe run: error: out of memory\n", stderr);
		return LP_EXIT_NOMEM;
	}
	optind = 0; /* GNU: reinitialise, and permute so options may follow */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":q:o:vh", long_options, NULL)) != -1) {
		switch (c) {
		case 'q': o->question = optarg; break;
		case OPT_SET:
			if (!strchr(optarg, '='))
				return lp_cli_usage_error("run", "--set needs KEY=VALUE, not '%s'",
							  optarg);
			o->sets[o->n_sets++] = optarg;
			break;
		case 'o': o->output = optarg; break;
		case OPT_FORMAT:
			if (lpipe_format_check(optarg))
				return lp_cli_usage_error("run",
					"unknown format '%s' (expected text, markdown, json or html)", optarg);
			o->format = optarg;
			break;
		case OPT_MEM_BUDGET:
			if ((c = lp_opt_size("run", "--mem-budget", optarg, 1, 1, &bytes)))
				return c;
			o->mem_budget = optarg;
			break;
		case OPT_QUIET:
			lpipe_set_log_level(LPIPE_LOG_WARN);
			o->quiet = 1;
			break;
		case OPT_PROGRESS: o->progress = 1; break;
		case 'v': lpipe_set_log_level(LPIPE_LOG_DEBUG); break;
		case 'h': fputs(lp_usage_run, stdout); return LP_EXIT_OK;
		case ':':
			return lp_cli_usage_error("run", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return lp_cli_usage_error("run", "unknown option '-%c'", optopt);
			return lp_cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc == optind)
		return lp_cli_usage_error("run", "missing PIPELINE and DOC");
	if (argc - optind < 2)
		return lp_cli_usage_error("run", "missing DOC (use '-' for standard input)");
	if (argc - optind > 2)
		return lp_cli_usage_error("run", "unexpected argument '%s'", argv[optind + 2]);
	o->pipeline = argv[optind];
	o->doc = argv[optind + 1];
	/* --quiet wins over --progress, in either order */
	lpipe_set_progress(o->quiet ? 0 : o->progress ? 1 : -1);
	return -1;
}

/* Print the error of the output file; returns its exit code. */
static int output_error(struct lp_diag *d, enum lp_status s)
{
	if (!d->msg[0])
		lp_diag_set(d, s, NULL, 0, 0, "%s", lp_status_str(s));
	lp_diag_print(d, stderr);
	return lp_status_exit_code(s);
}

/* Write the report to `af` (opened before the run, so an output that
 * cannot be written fails before the work), or to standard output. Returns
 * the exit code, the error printed. */
static int write_output(lpipe_result *r, const struct run_opts *o, struct lp_afile *af)
{
	const char *where = af->fp ? o->output : "<stdout>";
	struct lp_diag d;
	enum lp_status s;
	int rc;

	errno = 0;
	rc = lpipe_result_write(r, o->format, af->fp ? af->fp : stdout);
	if (!rc && !af->fp && (fflush(stdout) || ferror(stdout))) {
		fprintf(stderr, "%s: error: unable to write: %s\n", where,
			strerror(errno ? errno : EIO));
		return LP_EXIT_INPUT;
	}
	if (rc) {
		lp_afile_abort(af);
		/* the report's writers know the reason, not where it went */
		return lp_cli_api_error(rc == LPIPE_INPUT ? where : NULL, rc);
	}
	lp_diag_init(&d);
	s = af->fp ? lp_afile_commit(af, &d) : LP_OK;
	return s ? output_error(&d, s) : LP_EXIT_OK;
}

/* A failed verification is not an error of the tool: say what failed. */
static void print_verify_failure(void)
{
	const char *m = lp_cli_api_reason();

	if (!*m)
		fputs("lpipe: verification failed\n", stderr);
	else if (strstr(m, "verification"))
		fprintf(stderr, "lpipe: %s\n", m);
	else
		fprintf(stderr, "lpipe: verification failed: %s\n", m);
}

static int run(const struct run_opts *o)
{
	lpipe_pipeline *p = lpipe_pipeline_new();
	lpipe_engine *engine = NULL;
	lpipe_result *r = NULL;
	struct lp_afile af = { 0 };
	struct lp_diag d;
	enum lp_status s;
	int rc, ran;

	if (!p)
		return lp_cli_api_error(NULL, LPIPE_NOMEM);
	if ((rc = lpipe_set_mem_budget(o->mem_budget)) ||
	    (o->question && (rc = lpipe_pipeline_set_var(p, "question", o->question))))
		goto fail;
	for (size_t i = 0; i < o->n_sets; i++)
		if ((rc = lpipe_pipeline_set(p, o->sets[i])))
			goto fail;
	if ((rc = lpipe_pipeline_load_file(p, o->pipeline))) {
		lp_cli_api_error(NULL, rc);
		if (!o->question && strstr(lpipe_errmsg(), "'question'"))
			fputs("lpipe: hint: give the question with -q TEXT\n", stderr);
		goto out;
	}
	lp_diag_init(&d);
	if (o->output && strcmp(o->output, "-") && (s = lp_afile_open(&af, o->output, &d))) {
		rc = output_error(&d, s);
		goto out;
	}
	/* a batch of one: the engine frees the model with the document */
	if ((rc = lpipe_engine_new(0, &engine)))
		goto fail;
	ran = lpipe_run_file(p, engine, o->doc, &r);
	if (!r) {
		rc = ran;
		goto fail;
	}
	if (ran == LPIPE_VERIFY)
		print_verify_failure();
	rc = write_output(r, o, &af);
	if (!rc)
		rc = ran;
	goto out;
fail:
	lp_cli_api_error(NULL, rc);
out:
	lp_afile_abort(&af);
	lpipe_result_free(r);
	lpipe_engine_free(engine);
	lpipe_pipeline_free(p);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	rc = parse_options(argc, argv, &o);
	if (rc < 0)
		rc = run(&o);
	free(o.sets);
	return rc;
}
