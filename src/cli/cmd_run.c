/* cmd_run.c - `lpipe run PIPELINE DOC|-`: run a pipeline on one document. */
#include "cli/commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "cli/runner.h"
#include "core/fileio.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "report/report.h"

const char lp_usage_run[] =
	"usage: lpipe run [options] PIPELINE DOC|-\n"
	"\n"
	"Run the pipeline PIPELINE (a YAML file, see lpipe-pipeline(5)) on the\n"
	"document DOC, or on standard input when DOC is '-', and write the result\n"
	"to standard output. Options may come before or after the arguments.\n"
	"\n"
	"options:\n"
	"  -q, --question TEXT   bind TEXT to the variable ${question}\n"
	"      --set KEY=VALUE   override a pipeline key (repeatable), e.g.\n"
	"                        --set stages.split.size=256\n"
	"  -o, --output FILE     write the result to FILE, atomically: a failed run\n"
	"                        leaves an existing FILE untouched\n"
	"      --format FORMAT   text, markdown or json (overrides output.format)\n"
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
	int has_format;
	enum lp_format format;
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
			if (lp_report_parse_format(optarg, &o->format))
				return lp_cli_usage_error("run",
					"unknown format '%s' (expected text, markdown or json)", optarg);
			o->has_format = 1;
			break;
		case OPT_MEM_BUDGET:
			if ((c = lp_opt_size("run", "--mem-budget", optarg, 1, 1, &bytes)))
				return c;
			o->mem_budget = optarg;
			break;
		case OPT_QUIET:
			lp_log_set_level(LP_LOG_WARN);
			o->quiet = 1;
			break;
		case OPT_PROGRESS: o->progress = 1; break;
		case 'v': lp_log_set_level(LP_LOG_DEBUG); break;
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
	lp_progress_enable(o->quiet ? 0 : o->progress ? 1 : -1);
	return -1;
}

/* Write the report to `af` (opened before the run, so an output that
 * cannot be written fails before the work), or to standard output. */
static enum lp_status write_output(struct lp_doc *doc, const struct run_opts *o,
				   struct lp_afile *af,
				   enum lp_format format, const struct lp_run_stats *stats,
				   struct lp_diag *d)
{
	enum lp_status s;

	errno = 0;
	if (!af->fp) {
		s = lp_report_write(doc, format, stats, stdout, d);
		if (!s && (fflush(stdout) || ferror(stdout)))
			s = lp_diag_set(d, LP_E_IO, NULL, 0, 0, "unable to write: %s",
					strerror(errno ? errno : EIO));
	} else {
		s = lp_report_write(doc, format, stats, af->fp, d);
		if (!s)
			return lp_afile_commit(af, d);
		lp_afile_abort(af);
	}
	/* the report's writers know the reason, not where it went */
	if (s == LP_E_IO && !d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", o->output ? o->output : "<stdout>");
	return s;
}

/* Print a diagnostic; one left empty by its caller still names the status. */
static void print_diag(struct lp_diag *d, enum lp_status s)
{
	lp_progress_clear();
	if (!d->msg[0])
		lp_diag_set(d, s, NULL, 0, 0, "%s", lp_status_str(s));
	lp_diag_print(d, stderr);
}

/* A failed verification is not an error of the tool: say what failed. */
static void print_verify_failure(const struct lp_diag *d)
{
	if (!d->msg[0])
		fputs("lpipe: verification failed\n", stderr);
	else if (strstr(d->msg, "verification"))
		fprintf(stderr, "lpipe: %s\n", d->msg);
	else
		fprintf(stderr, "lpipe: verification failed: %s\n", d->msg);
}

/* -v: the run's memory in one line, before the report is built. */
static void log_memory(const struct lp_run_stats *stats)
{
	char tracked[32], doc[32], rss[32];

	if (lp_log_level() < LP_LOG_DEBUG)
		return;
	lp_debug("memory: tracked peak %s (%zu bytes), doc peak %s (%zu bytes), "
		 "peak rss %s (%zu bytes)",
		 lp_mem_format_size(stats->peak_tracked_bytes, tracked, sizeof(tracked)),
		 stats->peak_tracked_bytes,
		 lp_mem_format_size(stats->peak_by_tag[LP_MEM_DOC], doc, sizeof(doc)),
		 stats->peak_by_tag[LP_MEM_DOC],
		 lp_mem_format_size(lp_mem_peak_rss(), rss, sizeof(rss)), lp_mem_peak_rss());
}

static int run(const struct run_opts *o)
{
	struct lp_pipeline *p = NULL;
	struct lp_afile af = { 0 };
	struct lp_run_stats stats;
	struct lp_doc doc;
	struct lp_diag d;
	enum lp_status s, ran;
	size_t budget;

	lp_diag_init(&d);
	/* The budget of the command line or environment covers reading the
	 * pipeline too; the pipeline's own applies once it is read. */
	s = lp_runner_budget(NULL, o->mem_budget, &budget, &d);
	if (s) {
		print_diag(&d, s);
		return lp_status_exit_code(s);
	}
	lp_mem_set_budget(budget);
	lp_mem_set_phase("config");
	s = lp_runner_load_pipeline(o->pipeline, o->question, o->sets, o->n_sets, &p, &d);
	if (s) {
		print_diag(&d, s);
		if (!o->question && strstr(d.msg, "'question'"))
			fputs("lpipe: hint: give the question with -q TEXT\n", stderr);
		return lp_status_exit_code(s);
	}
	s = lp_runner_budget(p, o->mem_budget, &budget, &d);
	if (s) {
		print_diag(&d, s);
		lp_pipeline_free(p);
		return lp_status_exit_code(s);
	}
	lp_mem_set_budget(budget);
	if (o->output && strcmp(o->output, "-") && (s = lp_afile_open(&af, o->output, &d))) {
		print_diag(&d, s);
		lp_pipeline_free(p);
		return lp_status_exit_code(s);
	}
	ran = lp_runner_run(p, o->doc, o->question, &doc, &stats, &d);
	log_memory(&stats);
	if (ran && ran != LP_E_VERIFY) {
		print_diag(&d, ran);
		s = ran;
		goto out;
	}
	if (ran == LP_E_VERIFY)
		print_verify_failure(&d);
	lp_diag_init(&d);
	s = write_output(&doc, o, &af, o->has_format ? o->format : p->output.format, &stats, &d);
	if (s)
		print_diag(&d, s);
	else
		s = ran;
out:
	lp_afile_abort(&af);
	lp_doc_release(&doc);
	lp_pipeline_free(p);
	return lp_status_exit_code(s);
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
