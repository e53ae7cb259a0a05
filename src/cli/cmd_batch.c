/*
 * cmd_batch.c - `lpipe batch PIPELINE INPUT... -o OUTDIR`: run a pipeline
 * over many documents with the model loaded once.
 *
 * A client of the public library (api/lpipe.h), like `lpipe run`: one
 * engine serves every document; -j N worker threads each take the next
 * input, run it with lpipe_run_file (each run keeps its own memory peaks),
 * write its output atomically and append its manifest line (cli/batch.h).
 * An embedded model generates for one document at a time; loading,
 * splitting, retrieval and verification run side by side. A served model
 * (backend openai) takes up to model.concurrency requests at once, which
 * is also the default -j.
 */
#include "cli/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/lpipe.h"
#include "cli/batch.h"
#include "cli/options.h"
#include "cli/shard.h"
#include "core/fileio.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/sha256.h"

const char lp_usage_batch[] =
	"usage: lpipe batch [options] PIPELINE INPUT... -o OUTDIR\n"
	"       lpipe batch [options] PIPELINE --from LIST -o OUTDIR\n"
	"       lpipe batch --merge OUTDIR... [-o DIR]\n"
	"\n"
	"Run the pipeline PIPELINE (a file, or the bare name of a ready one:\n"
	"summarize) on every document: INPUT is a file or a\n"
	"directory (walked recursively), LIST a file with one path per line ('-':\n"
	"standard input). The model is loaded once. Each output is written to\n"
	"OUTDIR under the input's path relative to its directory argument, plus\n"
	"the format's extension (.txt, .md, .json, .html), through a temporary file\n"
	"renamed when complete. OUTDIR/manifest.jsonl gets one line per finished\n"
	"document and OUTDIR/report.csv the table at the end. Running the same\n"
	"command again skips the documents whose manifest line, content hash,\n"
	"pipeline hash and output still match.\n"
	"\n"
	"options:\n"
	"  -o, --output OUTDIR   where outputs, manifest and report go\n"
	"  -j, --jobs N          documents in flight at once (default: the model's\n"
	"                        concurrency when it is served, backend openai;\n"
	"                        else 1)\n"
	"      --glob PATTERN    in directories, take only files whose name matches\n"
	"                        (repeatable; default: every file, .txt, .md,\n"
	"                        .markdown, .html, .htm and .pdf alike)\n"
	"      --exclude PATTERN skip files and directories whose name or relative\n"
	"                        path matches (repeatable)\n"
	"      --from LIST       read input paths from LIST ('-': standard input)\n"
	"      --fail-fast       stop at the first document that does not succeed\n"
	"      --force           redo documents the manifest says are done\n"
	"      --shard I/N       take only shard I (0 <= I < N) of the inputs, by a\n"
	"                        hash of each input's relative path (default: from\n"
	"                        SLURM_ARRAY_TASK_ID/_COUNT/_MIN when set); the\n"
	"                        manifest is then manifest-I-of-N.jsonl\n"
	"      --emit-sbatch[=N] print an sbatch script running this command as an\n"
	"                        array of N tasks (default 4) and exit\n"
	"      --merge           merge the shard manifests of OUTDIR... into\n"
	"                        merged.jsonl and merged.csv (in -o DIR, else the\n"
	"                        first OUTDIR); fails when a document is missing\n"
	"                        or doubled\n"
	"  -q, --question TEXT   bind TEXT to ${question}\n"
	"      --set KEY=VALUE   override a pipeline key (repeatable)\n"
	"      --format FORMAT   text, markdown, json or html (overrides\n"
	"                        output.format)\n"
	"      --mem-budget SIZE cap on tracked memory for the whole process\n"
	"      --progress        show progress even when standard error is not a\n"
	"                        terminal (then one line every 2 s)\n"
	"      --quiet           print errors only\n"
	"  -v, --verbose         print each stage's details\n"
	"  -h, --help            show this help\n"
	"\n"
	"On SIGINT or SIGTERM the documents in flight are finished, the manifest\n"
	"and report written, and the command to resume printed; a second signal\n"
	"aborts at once (temporary files are removed; a resume finishes the rest).\n"
	"\n"
	"exit status: the worst outcome over the documents: 0 every document\n"
	"succeeded (or was skipped as done), 1 a verification failed (its output\n"
	"is written), 2 usage or configuration error, 3 an input error (unreadable,\n"
	"empty, binary or invalid document), 4 out of memory or over the budget,\n"
	"5 internal error; 130 or 143 when stopped by SIGINT or SIGTERM. --merge:\n"
	"3 when a document is missing or doubled, else the worst outcome.\n";

struct batch_opts {
	const char *pipeline, *outdir, *question, *mem_budget, *from;
	const char **sets, **globs, **excludes, **args;
	size_t n_sets, n_globs, n_excludes, n_args;
	int jobs, jobs_given, fail_fast, force, merge, emit_sbatch, has_shard;
	const char *format;         /* NULL: the pipeline's output.format */
	struct lp_shard shard;
	char **argv_copy; /* the command as given, for the resume line */
	int argc;
};

enum {
	OPT_SET = 256, OPT_FORMAT, OPT_MEM_BUDGET, OPT_QUIET, OPT_PROGRESS, OPT_GLOB,
	OPT_EXCLUDE, OPT_FROM, OPT_FAIL_FAST, OPT_FORCE, OPT_SHARD, OPT_EMIT_SBATCH, OPT_MERGE
};

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "question", required_argument, NULL, 'q' },
	{ "set", required_argument, NULL, OPT_SET },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "mem-budget", required_argument, NULL, OPT_MEM_BUDGET },
	{ "glob", required_argument, NULL, OPT_GLOB },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "fail-fast", no_argument, NULL, OPT_FAIL_FAST },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "shard", required_argument, NULL, OPT_SHARD },
	{ "emit-sbatch", optional_argument, NULL, OPT_EMIT_SBATCH },
	{ "merge", no_argument, NULL, OPT_MERGE },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int progress_mode = -1; /* -1 auto (a terminal), 0 --quiet, 1 --progress */

/* Returns -1 to go on, else the exit code to return now. */
static int parse_options(int argc, char **argv, struct batch_opts *o)
{
	struct lp_diag d;
	long long v;
	size_t bytes;
	int c;

	o->sets = calloc((size_t)argc + 1, sizeof(*o->sets));
	o->globs = calloc((size_t)argc + 1, sizeof(*o->globs));
	o->excludes = calloc((size_t)argc + 1, sizeof(*o->excludes));
	o->argv_copy = calloc((size_t)argc + 1, sizeof(*o->argv_copy));
	if (!o->sets || !o->globs || !o->excludes || !o->argv_copy) {
		fputs("lpipe batch: error: out of memory\n", stderr);
		return LP_EXIT_NOMEM;
	}
	memcpy(o->argv_copy, argv, (size_t)argc * sizeof(*argv)); /* getopt permutes argv */
	o->argc = argc;
	o->jobs = 1;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:j:q:vh", long_options, NULL)) != -1) {
		switch (c) {
		case 'o': o->outdir = optarg; break;
		case 'j':
			if ((c = lp_opt_int("batch", "--jobs", optarg, 1, 64, &v)))
				return c;
			o->jobs = (int)v;
			o->jobs_given = 1;
			break;
		case 'q': o->question = optarg; break;
		case OPT_SET:
			if (!strchr(optarg, '='))
				return lp_cli_usage_error("batch", "--set needs KEY=VALUE, not '%s'",
							  optarg);
			o->sets[o->n_sets++] = optarg;
			break;
		case OPT_FORMAT:
			if (lpipe_format_check(optarg))
				return lp_cli_usage_error("batch",
					"unknown format '%s' (expected text, markdown, json or html)",
					optarg);
			o->format = optarg;
			break;
		case OPT_MEM_BUDGET:
			if ((c = lp_opt_size("batch", "--mem-budget", optarg, 1, 1, &bytes)))
				return c;
			o->mem_budget = optarg;
			break;
		case OPT_GLOB: o->globs[o->n_globs++] = optarg; break;
		case OPT_EXCLUDE: o->excludes[o->n_excludes++] = optarg; break;
		case OPT_FROM: o->from = optarg; break;
		case OPT_FAIL_FAST: o->fail_fast = 1; break;
		case OPT_FORCE: o->force = 1; break;
		case OPT_SHARD:
			lp_diag_init(&d);
			if (lp_shard_parse(optarg, &o->shard, &d))
				return lp_cli_usage_error("batch", "%s", d.msg);
			o->has_shard = 1;
			break;
		case OPT_EMIT_SBATCH:
			o->emit_sbatch = 4;
			if (optarg) {
				if ((c = lp_opt_int("batch", "--emit-sbatch", optarg, 1, 100000, &v)))
					return c;
				o->emit_sbatch = (int)v;
			}
			break;
		case OPT_MERGE: o->merge = 1; break;
		case OPT_QUIET:
			lpipe_set_log_level(LPIPE_LOG_WARN);
			progress_mode = 0;
			break;
		case OPT_PROGRESS: progress_mode = 1; break;
		case 'v': lpipe_set_log_level(LPIPE_LOG_DEBUG); break;
		case 'h': fputs(lp_usage_batch, stdout); return LP_EXIT_OK;
		case ':':
			return lp_cli_usage_error("batch", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return lp_cli_usage_error("batch", "unknown option '-%c'", optopt);
			return lp_cli_usage_error("batch", "unknown option '%s'", argv[optind - 1]);
		}
	}
	o->args = (const char **)argv + optind;
	o->n_args = (size_t)(argc - optind);
	if (o->merge)
		return o->n_args ? -1 : lp_cli_usage_error("batch", "--merge needs OUTDIR...");
	if (!o->n_args)
		return lp_cli_usage_error("batch", "missing PIPELINE and INPUT");
	o->pipeline = o->args[0];
	o->args++;
	o->n_args--;
	if (!o->n_args && !o->from)
		return lp_cli_usage_error("batch", "missing INPUT (a file, a directory or --from LIST)");
	if (!o->outdir)
		return lp_cli_usage_error("batch", "missing -o OUTDIR");
	return -1;
}

static int emit_sbatch(const struct batch_opts *o)
{
	if (o->from && !strcmp(o->from, "-"))
		return lp_cli_usage_error("batch", "--emit-sbatch cannot read --from - "
					  "(standard input) in a job: give a file");
	return lp_batch_emit_sbatch(stdout, o->argc, o->argv_copy, o->outdir, o->jobs,
				    o->emit_sbatch);
}

/* ---- the run --------------------------------------------------------- */

struct batch {
	const struct batch_opts *o;
	lpipe_pipeline *p;
	lpipe_engine *engine;
	const char *format;              /* the report's format */
	const char *ext;
	char pipeline_hash[65];
	char shard[48];
	struct lp_batch_inputs in;
	struct lp_batch_manifest done;   /* as read at the start; read-only
					  * while workers run */
	struct lp_batch_manifest fresh;  /* entries of this run */
	int manifest_fd;

	pthread_mutex_t lock;            /* everything below */
	size_t next;                     /* first input not taken */
	size_t n_done, n_ok, n_verify, n_failed, n_skipped;
	size_t bytes_done;
	int worst;
	int stop;                        /* --fail-fast fired */
	struct lp_progress prog;
	char detail[96];
	double t0;
};

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	static const char msg[] = "\nlpipe batch: stopping: finishing the documents in "
				  "flight (interrupt again to abort)\n";

	if (stop_signal)
		return;
	stop_signal = sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing to do: the flag is what counts */
	}
	/* the next signal removes the temporaries and ends the process */
	lp_afile_handle_signals();
}

static void catch_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static char *diag_text(const struct lp_diag *d, enum lp_status s)
{
	char *t = NULL;

	if (!d->msg[0])
		return strdup(lp_status_str(s));
	if (d->file[0] && asprintf(&t, "%s: %s", d->file, d->msg) >= 0)
		return t;
	return strdup(d->msg);
}

/* The last lpipe_* failure of this thread as the manifest's reason:
 * "FILE:LINE:COL: MSG" or "MSG" (lpipe_errmsg less its "error: "). */
static char *api_reason(void)
{
	const char *m = lp_cli_api_reason(), *e = strstr(m, ": error: ");
	char *t = NULL;

	if (!e)
		return strdup(m);
	if (asprintf(&t, "%.*s: %s", (int)(e - m), m, e + 9) < 0)
		return NULL;
	return t;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Is the entry of a finished document still good for this input? */
static int still_done(struct batch *b, const struct lp_batch_entry *e, const char *sha,
		      const char *out_path)
{
	char osha[65];
	struct lp_diag d;

	if (!e || !e->sha256 || !e->pipeline || !e->output || !e->output_sha256 ||
	    (strcmp(e->status, "ok") && strcmp(e->status, "verify_failed")) ||
	    strcmp(e->sha256, sha) || strcmp(e->pipeline, b->pipeline_hash))
		return 0;
	lp_diag_init(&d);
	return !lp_sha256_file(out_path, osha, NULL, &d) && !strcmp(osha, e->output_sha256);
}

/* Render the report into memory, hash it, and write it to `path` through a
 * temporary file. Returns 0, or the exit code with e->reason set. */
static int write_output(struct batch *b, lpipe_result *r, const char *path,
			struct lp_batch_entry *e)
{
	const char *text = lpipe_result_report(r, b->format);
	size_t len = text ? strlen(text) : 0;
	struct lp_afile af;
	struct lp_diag d;
	enum lp_status s;
	char hex[65];

	if (!text) {
		free(e->reason);
		e->reason = api_reason();
		return LPIPE_NOMEM;
	}
	lp_diag_init(&d);
	if (lp_batch_make_parents(path))
		s = lp_diag_set(&d, LP_E_IO, path, 0, 0, "unable to make its directory: %s",
				strerror(errno));
	else if (!(s = lp_afile_open(&af, path, &d))) {
		if (len && fwrite(text, 1, len, af.fp) != len) {
			s = lp_diag_set(&d, LP_E_IO, path, 0, 0, "unable to write: %s",
					strerror(errno));
			lp_afile_abort(&af);
		} else {
			s = lp_afile_commit(&af, &d);
		}
	}
	if (s) {
		free(e->reason);
		e->reason = diag_text(&d, s);
		return lp_status_exit_code(s);
	}
	lp_sha256_hex(text, len, hex);
	e->output_sha256 = strdup(hex);
	e->output_bytes = len;
	return 0;
}

/* Run one document; fills e (status, reason, measures, output). */
static void run_document(struct batch *b, const struct lp_batch_input *x, const char *out_path,
			 struct lp_batch_entry *e)
{
	double t0 = lp_now_s(), c0 = thread_cpu_s();
	lpipe_result *r = NULL;
	int rc, wrc;

	lp_log_set_subject(x->path);
	rc = lpipe_run_file(b->p, b->engine, x->path, &r);
	if (rc) /* the error, or the failed verification's message */
		e->reason = api_reason();
	if (r) {
		if ((wrc = write_output(b, r, out_path, e)))
			rc = wrc;
		else
			e->output = strdup(out_path + strlen(b->o->outdir) + 1);
		lpipe_result_tokens(r, &e->tokens_in, &e->tokens_out);
		e->survival = lpipe_result_passed(r) < 0 ? -1 : lpipe_result_survival(r);
		e->peak_tracked_bytes = lpipe_result_peak_bytes(r);
	}
	e->status = strdup(rc == LPIPE_OK ? "ok" : rc == LPIPE_VERIFY ? "verify_failed" : "failed");
	e->exit_code = rc;
	lpipe_result_free(r);
	lp_log_set_subject(NULL);
	e->wall_s = lp_now_s() - t0;
	e->cpu_s = thread_cpu_s() - c0;
}

/* Append e's line to the manifest and sync it, then count it. Caller holds
 * b->lock. */
static void record(struct batch *b, struct lp_batch_entry *e, int skipped)
{
	char *line = skipped ? NULL : lp_batch_entry_json(e);

	if (line) {
		size_t len = strlen(line);
		line[len] = '\n'; /* the NUL goes: the write is the line */
		if (write(b->manifest_fd, line, len + 1) != (ssize_t)(len + 1) ||
		    fsync(b->manifest_fd))
			lp_warn("unable to append to the manifest: %s", strerror(errno));
		free(line);
	} else if (!skipped) {
		lp_warn("%s: out of memory for the manifest line", e->key);
	}
	b->n_done++;
	b->bytes_done += e->bytes;
	if (skipped)
		b->n_skipped++;
	else if (!strcmp(e->status, "ok"))
		b->n_ok++;
	else if (!strcmp(e->status, "verify_failed"))
		b->n_verify++;
	else
		b->n_failed++;
	b->worst = lp_batch_worse(b->worst, e->exit_code);
	if (e->exit_code && !skipped && progress_mode != 0) {
		if (b->prog.active && lp_progress_live())
			fputs("\r\033[K", stderr); /* the live line, from any thread */
		const char *r = e->reason ? e->reason : "";
		size_t n = strlen(e->input);
		/* the reason names the file when it comes from reading it */
		int named = !strncmp(r, e->input, n) && r[n] == ':';
		fprintf(stderr, "lpipe batch: %s%s%s%s\n", named ? "" : e->input, named ? "" : ": ",
			strcmp(e->status, "failed") ? "verification failed: " : "error: ", r);
	}
	if (e->exit_code && b->o->fail_fast)
		b->stop = 1;
	if (!skipped && lp_batch_manifest_append(&b->fresh, e))
		lp_warn("%s: out of memory for the report", e->key);
	snprintf(b->detail, sizeof(b->detail), "%zu failed, %.1f KiB/s",
		 b->n_failed + b->n_verify,
		 b->bytes_done / 1024.0 / (lp_now_s() - b->t0 > 0 ? lp_now_s() - b->t0 : 1));
	lp_progress_update(&b->prog, b->n_done);
}

static void process(struct batch *b, size_t i)
{
	const struct lp_batch_input *x = &b->in.v[i];
	struct lp_batch_entry e;
	struct lp_diag d;
	char sha[65], *out_path = NULL;
	int skipped = 0;

	memset(&e, 0, sizeof(e));
	e.survival = -1;
	e.input = strdup(x->path);
	e.key = strdup(x->key);
	e.pipeline = strdup(b->pipeline_hash);
	e.shard = strdup(b->shard);
	lp_diag_init(&d);
	if (asprintf(&out_path, "%s/%s%s", b->o->outdir, x->key, b->ext) < 0) {
		out_path = NULL;
		e.status = strdup("failed");
		e.exit_code = LP_EXIT_NOMEM;
		e.reason = strdup("out of memory");
	} else if (lp_sha256_file(x->path, sha, &e.bytes, &d)) {
		e.status = strdup("failed");
		e.exit_code = LPIPE_INPUT;
		e.reason = diag_text(&d, LP_E_IO);
	} else {
		e.sha256 = strdup(sha);
		if (!b->o->force && still_done(b, lp_batch_manifest_find(&b->done, x->key), sha,
					       out_path)) {
			skipped = 1;
			e.status = strdup("ok");
		} else {
			run_document(b, x, out_path, &e);
		}
	}
	free(out_path);
	pthread_mutex_lock(&b->lock);
	record(b, &e, skipped);
	pthread_mutex_unlock(&b->lock);
	lp_batch_entry_release(&e);
}

static void *worker(void *arg)
{
	struct batch *b = arg;

	for (;;) {
		size_t i;
		pthread_mutex_lock(&b->lock);
		if (b->stop || stop_signal || b->next >= b->in.n) {
			pthread_mutex_unlock(&b->lock);
			return NULL;
		}
		i = b->next++;
		pthread_mutex_unlock(&b->lock);
		process(b, i);
	}
}

/* SHA-256 of the resolved plan (what `lpipe check` prints, --set and -q
 * included) and the output format: a document is redone when either
 * changes. */
static void hash_pipeline(struct batch *b)
{
	struct lp_sha256 h;
	unsigned char digest[32];

	lp_sha256_init(&h);
	lp_sha256_update(&h, lpipe_pipeline_plan(b->p), strlen(lpipe_pipeline_plan(b->p)));
	lp_sha256_update(&h, "# output format: ", 17);
	lp_sha256_update(&h, b->format, strlen(b->format));
	lp_sha256_final(&h, digest);
	lp_sha256_to_hex(digest, b->pipeline_hash);
}

static int fail(const struct lp_diag *d0, enum lp_status s)
{
	struct lp_diag d = *d0;

	if (!d.msg[0])
		lp_diag_set(&d, s, NULL, 0, 0, "%s", lp_status_str(s));
	lp_diag_print(&d, stderr);
	return lp_status_exit_code(s);
}

/* Load the pipeline (under the command line's budget, then its own) and
 * settle the format, the default -j and the pipeline's hash. Returns 0 or
 * the exit code, the error printed. */
static int load(struct batch *b, int *jobs)
{
	const struct batch_opts *o = b->o;
	int rc;

	if (!(b->p = lpipe_pipeline_new()))
		return lp_cli_api_error(NULL, LPIPE_NOMEM);
	if ((rc = lpipe_set_mem_budget(o->mem_budget)) ||
	    (o->question && (rc = lpipe_pipeline_set_var(b->p, "question", o->question))))
		return lp_cli_api_error(NULL, rc);
	for (size_t i = 0; i < o->n_sets; i++)
		if ((rc = lpipe_pipeline_set(b->p, o->sets[i])))
			return lp_cli_api_error(NULL, rc);
	if ((rc = lpipe_pipeline_load_file(b->p, o->pipeline))) {
		lp_cli_api_error(NULL, rc);
		if (!o->question && strstr(lpipe_errmsg(), "'question'"))
			fputs("lpipe: hint: give the question with -q TEXT\n", stderr);
		return rc;
	}
	b->format = o->format ? o->format : lpipe_pipeline_format(b->p);
	b->ext = !strcmp(b->format, "json")	  ? ".json"
		 : !strcmp(b->format, "markdown") ? ".md"
		 : !strcmp(b->format, "html")	  ? ".html"
						  : ".txt";
	*jobs = o->jobs_given ? o->jobs : lpipe_pipeline_concurrency(b->p);
	hash_pipeline(b);
	return 0;
}

static enum lp_status collect(struct batch *b, size_t *total, struct lp_diag *d)
{
	const struct batch_opts *o = b->o;
	struct lp_batch_walk w = { o->globs, o->n_globs, o->excludes, o->n_excludes, o->outdir };
	enum lp_status s = LP_OK;

	for (size_t i = 0; i < o->n_args && !s; i++)
		s = lp_batch_add_arg(&b->in, o->args[i], &w, d);
	if (!s && o->from)
		s = lp_batch_add_list(&b->in, o->from, d);
	if (!s)
		s = lp_batch_finish(&b->in, d);
	*total = b->in.n;
	if (!s)
		lp_batch_keep_shard(&b->in, &o->shard);
	return s;
}

/* OUTDIR/inputs[-I-of-N].txt: the keys this shard owns, after a header
 * "# lpipe batch inputs: shard I/N of T" (T: inputs before sharding), so
 * --merge can name what is missing. */
static enum lp_status write_inputs(struct batch *b, size_t total, struct lp_diag *d)
{
	char *path = lp_batch_shard_file(b->o->outdir, "inputs", "txt", &b->o->shard);
	struct lp_afile af;
	enum lp_status s;

	if (!path)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
	if (!(s = lp_afile_open(&af, path, d))) {
		fprintf(af.fp, "# lpipe batch inputs: shard %s of %zu\n", b->shard, total);
		for (size_t i = 0; i < b->in.n; i++)
			fprintf(af.fp, "%s\n", b->in.v[i].key);
		s = lp_afile_commit(&af, d);
	}
	free(path);
	return s;
}

/* Fold this run's entries into the manifest read at the start, rewrite it
 * with one line per key, and write the CSV report. */
static void finish_reports(struct batch *b, const char *manifest_path)
{
	char *csv = lp_batch_shard_file(b->o->outdir, "report", "csv", &b->o->shard);
	struct lp_diag d;

	lp_diag_init(&d);
	/* appended after what was read, so a redone document's new line wins */
	for (size_t i = 0; i < b->fresh.n; i++)
		if (lp_batch_manifest_append(&b->done, &b->fresh.v[i]))
			lp_warn("out of memory for the manifest of %s", b->fresh.v[i].key);
	b->fresh.n = 0;
	if (lp_batch_manifest_write(&b->done, manifest_path, &d) ||
	    (csv && lp_batch_report_csv(&b->done, csv, &d)))
		lp_diag_print(&d, stderr);
	free(csv);
}

static double peak_rss_mib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0.0 : (double)ru.ru_maxrss / 1024.0;
}

static void summary(struct batch *b, size_t total, double secs)
{
	size_t ran = b->n_done - b->n_skipped;

	if (progress_mode == 0)
		return;
	fprintf(stderr,
		"lpipe batch: %zu of %zu document%s: %zu ok, %zu verification failed, "
		"%zu failed, %zu skipped (done before); %.1f documents/minute, peak RSS %.1f MiB, "
		"models loaded %zu\n",
		b->n_done, b->in.n, b->in.n == 1 ? "" : "s", b->n_ok, b->n_verify, b->n_failed,
		b->n_skipped, secs > 0 ? 60.0 * (double)ran / secs : 0.0, peak_rss_mib(),
		lpipe_engine_models_loaded(b->engine));
	if (total != b->in.n)
		fprintf(stderr, "lpipe batch: shard %s: %zu of the %zu inputs\n", b->shard, b->in.n,
			total);
}

static int run_batch(const struct batch_opts *o)
{
	struct batch b;
	struct lp_diag d;
	pthread_t *threads = NULL;
	char *manifest_path = NULL;
	size_t total = 0, cleaned;
	enum lp_status s;
	int rc, jobs = 1, n_threads = 0;

	memset(&b, 0, sizeof(b));
	b.o = o;
	b.manifest_fd = -1;
	pthread_mutex_init(&b.lock, NULL);
	lp_diag_init(&d);
	snprintf(b.shard, sizeof(b.shard), "%lu/%lu", o->shard.index, o->shard.count);
	if ((rc = load(&b, &jobs)))
		goto out;
	if ((s = collect(&b, &total, &d))) {
		rc = fail(&d, s);
		goto out;
	}
	if ((mkdir(o->outdir, 0777) && errno != EEXIST) ||
	    !(manifest_path = lp_batch_shard_file(o->outdir, "manifest", "jsonl", &o->shard))) {
		fprintf(stderr, "%s: error: unable to make the output directory: %s\n", o->outdir,
			strerror(errno));
		rc = LP_EXIT_INPUT;
		goto out;
	}
	if ((cleaned = lp_batch_remove_stale(o->outdir, &o->shard, b.ext)))
		lp_info("removed %zu temporary file%s of an interrupted run", cleaned,
			cleaned == 1 ? "" : "s");
	if ((s = lp_batch_manifest_read(manifest_path, 1, &b.done, NULL, &d)) ||
	    (s = write_inputs(&b, total, &d))) {
		rc = fail(&d, s);
		goto out;
	}
	b.manifest_fd = open(manifest_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (b.manifest_fd < 0) {
		fprintf(stderr, "%s: error: unable to open: %s\n", manifest_path, strerror(errno));
		rc = LP_EXIT_INPUT;
		goto out;
	}
	if ((rc = lpipe_engine_new(1, &b.engine))) {
		lp_cli_api_error(NULL, rc);
		goto out;
	}
	/* the stages' own progress lines would mix: the batch has one */
	lp_progress_enable(progress_mode);
	lp_progress_begin(&b.prog, "batch", "documents", b.in.n);
	lpipe_set_progress(0);
	b.prog.detail = b.detail;
	b.t0 = lp_now_s();
	catch_stop_signals();
	threads = calloc((size_t)jobs, sizeof(*threads));
	for (int i = 0; threads && i < jobs; i++)
		if (!pthread_create(&threads[i], NULL, worker, &b))
			n_threads++;
	if (!n_threads)
		worker(&b); /* no thread could start: one in flight, here */
	for (int i = 0; i < n_threads; i++)
		pthread_join(threads[i], NULL);
	lp_progress_end(&b.prog);
	finish_reports(&b, manifest_path);
	summary(&b, total, lp_now_s() - b.t0);
	rc = b.worst;
	if (stop_signal) {
		fprintf(stderr, "lpipe batch: interrupted after %zu of %zu documents; to resume, "
			"run:\n  lpipe batch", b.n_done, b.in.n);
		lp_batch_print_args(stderr, o->argc, o->argv_copy, 0);
		fputc('\n', stderr);
		rc = 128 + stop_signal;
	} else if (b.stop && b.n_done < b.in.n) {
		fprintf(stderr, "lpipe batch: stopped at the first failure (--fail-fast) after %zu "
			"of %zu documents\n", b.n_done, b.in.n);
	}
out:
	free(threads);
	if (b.manifest_fd >= 0)
		close(b.manifest_fd);
	free(manifest_path);
	lpipe_engine_free(b.engine);
	lp_batch_manifest_release(&b.done);
	lp_batch_manifest_release(&b.fresh);
	lp_batch_inputs_release(&b.in);
	lpipe_pipeline_free(b.p);
	pthread_mutex_destroy(&b.lock);
	return rc;
}

int cmd_batch(int argc, char **argv)
{
	struct batch_opts o;
	struct lp_diag d;
	int rc;

	memset(&o, 0, sizeof(o));
	o.shard.count = 1;
	rc = parse_options(argc, argv, &o);
	if (rc < 0 && o.merge)
		rc = lp_batch_merge(o.args, o.n_args, o.outdir);
	if (rc < 0 && !o.has_shard) {
		lp_diag_init(&d);
		if (lp_shard_from_slurm(&o.shard, &d) < 0)
			rc = lp_cli_usage_error("batch", "%s", d.msg);
	}
	if (rc < 0 && o.emit_sbatch)
		rc = emit_sbatch(&o);
	if (rc < 0)
		rc = run_batch(&o);
	free(o.sets);
	free(o.globs);
	free(o.excludes);
	free(o.argv_copy);
	return rc;
}
