/*
 * cmd_batch.c - `lpipe batch PIPELINE INPUT... -o OUTDIR`: run a pipeline
 * over many documents with the model loaded once.
 *
 * One engine (engine/engine.h) serves every document; -j N worker threads
 * each take the next input, run it through the same runner as `lpipe run`
 * in a memory scope of its own, write its output atomically and append its
 * manifest line (cli/batch.h). Generation is serialized on the session's
 * lock; loading, splitting, retrieval and verification run side by side.
 */
#include "cli/commands.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/options.h"
#include "cli/runner.h"
#include "core/fileio.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/sha256.h"
#include "engine/engine.h"
#include "engine/shard.h"
#include "report/report.h"

const char lp_usage_batch[] =
	"usage: lpipe batch [options] PIPELINE INPUT... -o OUTDIR\n"
	"       lpipe batch [options] PIPELINE --from LIST -o OUTDIR\n"
	"       lpipe batch --merge OUTDIR... [-o DIR]\n"
	"\n"
	"Run the pipeline PIPELINE on every document: INPUT is a file or a\n"
	"directory (walked recursively), LIST a file with one path per line ('-':\n"
	"standard input). The model is loaded once. Each output is written to\n"
	"OUTDIR under the input's path relative to its directory argument, plus\n"
	"the format's extension (.txt, .md, .json), through a temporary file\n"
	"renamed when complete. OUTDIR/manifest.jsonl gets one line per finished\n"
	"document and OUTDIR/report.csv the table at the end. Running the same\n"
	"command again skips the documents whose manifest line, content hash,\n"
	"pipeline hash and output still match.\n"
	"\n"
	"options:\n"
	"  -o, --output OUTDIR   where outputs, manifest and report go\n"
	"  -j, --jobs N          documents in flight at once (default 1)\n"
	"      --glob PATTERN    in directories, take only files whose name matches\n"
	"                        (repeatable; default: every file)\n"
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
	"      --format FORMAT   text, markdown or json (overrides output.format)\n"
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
	int jobs, fail_fast, force, has_format, merge, emit_sbatch, has_shard;
	enum lp_format format;
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
			break;
		case 'q': o->question = optarg; break;
		case OPT_SET:
			if (!strchr(optarg, '='))
				return lp_cli_usage_error("batch", "--set needs KEY=VALUE, not '%s'",
							  optarg);
			o->sets[o->n_sets++] = optarg;
			break;
		case OPT_FORMAT:
			if (lp_report_parse_format(optarg, &o->format))
				return lp_cli_usage_error("batch",
					"unknown format '%s' (expected text, markdown or json)", optarg);
			o->has_format = 1;
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
			lp_log_set_level(LP_LOG_WARN);
			progress_mode = 0;
			break;
		case OPT_PROGRESS: progress_mode = 1; break;
		case 'v': lp_log_set_level(LP_LOG_DEBUG); break;
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

/* ---- the shell command line, for the resume hint and sbatch ------------ */

/* Append `s` quoted for sh to `out` (bare when it needs no quotes). */
static void sh_quote(FILE *out, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_./:=@%+,-") == strlen(s)) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

/* The arguments after "batch", less --emit-sbatch and (with drop_shard)
 * --shard: this command again. */
static void print_args(FILE *out, const struct batch_opts *o, int drop_shard)
{
	for (int i = 1; i < o->argc; i++) {
		const char *a = o->argv_copy[i];
		if (!strcmp(a, "--"))
			drop_shard = 0; /* operands from here on */
		if (!strncmp(a, "--emit-sbatch", 13) && (!a[13] || a[13] == '='))
			continue;
		if (drop_shard && !strcmp(a, "--shard")) {
			i++;
			continue;
		}
		if (drop_shard && !strncmp(a, "--shard=", 8))
			continue;
		fputc(' ', out);
		sh_quote(out, a);
	}
}

static int emit_sbatch(const struct batch_opts *o)
{
	char exe[PATH_MAX], cwd[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (o->from && !strcmp(o->from, "-"))
		return lp_cli_usage_error("batch", "--emit-sbatch cannot read --from - "
					  "(standard input) in a job: give a file");
	if (n <= 0 || !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "lpipe batch: error: unable to find the lpipe program or the "
			"current directory: %s\n", strerror(errno));
		return LP_EXIT_INPUT;
	}
	exe[n] = '\0';
	printf("#!/bin/sh\n"
	       "# lpipe batch as a Slurm job array: task K of the array takes shard K of\n"
	       "# the inputs (lpipe reads SLURM_ARRAY_TASK_ID, _MIN and _COUNT), writes\n"
	       "# its outputs to the shared OUTDIR and its own manifest-K-of-N.jsonl.\n"
	       "# Submit with: sbatch THIS_FILE (--array=0-M on the sbatch command line\n"
	       "# overrides the size). When every task is done, merge the reports:\n"
	       "#   lpipe batch --merge ");
	sh_quote(stdout, o->outdir);
	printf("\n#SBATCH --job-name=lpipe-batch\n"
	       "#SBATCH --array=0-%d\n"
	       "#SBATCH --cpus-per-task=%d\n"
	       "#SBATCH --output=lpipe-batch-%%A_%%a.log\n"
	       "cd ", o->emit_sbatch - 1, o->jobs < 2 ? 2 : 2 * o->jobs);
	sh_quote(stdout, cwd);
	printf(" || exit 2\nexec ");
	sh_quote(stdout, exe);
	printf(" batch");
	print_args(stdout, o, 1);
	printf("\n");
	return LP_EXIT_OK;
}

/* ---- output directory housekeeping ------------------------------------- */

/* mkdir -p of the directory part of `path` (the file itself not made). */
static int make_parents(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static char *shard_file(const char *outdir, const char *stem, const char *ext,
			const struct lp_shard *s);

/* Is `name` "OUT.tmp.PID.XXXXXX" (an lp_afile temporary) of a process
 * that is gone? Sets *out_len to the length of OUT. */
static int stale_tmp(const char *name, size_t *out_len)
{
	const char *t = strstr(name, ".tmp."), *next;
	char *end;
	long pid;

	for (; t; t = next) {
		next = strstr(t + 1, ".tmp.");
		if (next)
			continue; /* the last ".tmp." is the one */
		errno = 0;
		pid = strtol(t + 5, &end, 10);
		if (errno || pid <= 0 || *end != '.' || strlen(end + 1) != 6)
			return 0;
		*out_len = (size_t)(t - name);
		return kill((pid_t)pid, 0) && errno == ESRCH;
	}
	return 0;
}

/*
 * Is `rel` (a path relative to OUTDIR) a file this run writes: one of its
 * shard's own files, or the output of a key in its shard? Shards may share
 * OUTDIR from several hosts, where a pid means nothing: a run only ever
 * touches the temporaries of what it owns.
 */
static int owned(const struct batch_opts *o, const char *ext, const char *rel, size_t len)
{
	static const char *const stems[] = { "manifest", "report", "inputs" };
	static const char *const exts[] = { "jsonl", "csv", "txt" };
	size_t el = strlen(ext);
	char name[PATH_MAX];
	int mine;

	for (int i = 0; i < 3; i++) {
		char *own = shard_file(".", stems[i], exts[i], &o->shard);
		mine = own && strlen(own + 2) == len && !strncmp(own + 2, rel, len);
		free(own);
		if (mine)
			return 1;
	}
	if (len <= el || len - el >= sizeof(name) || strncmp(rel + len - el, ext, el))
		return 0;
	memcpy(name, rel, len - el);
	name[len - el] = '\0';
	return lp_shard_mine(&o->shard, name);
}

/* Remove, under OUTDIR/`rel`, the temporaries of this run's files left by
 * killed runs (SIGKILL leaves them: no handler runs). Returns the count. */
static size_t remove_stale_tmps(const struct batch_opts *o, const char *ext, const char *rel)
{
	char dir[PATH_MAX];
	DIR *dp;
	struct dirent *e;
	size_t n = 0, out_len;

	if (snprintf(dir, sizeof(dir), "%s%s%s", o->outdir, *rel ? "/" : "", rel) >=
	    (int)sizeof(dir) || !(dp = opendir(dir)))
		return 0;
	while ((e = readdir(dp))) {
		struct stat st;
		char path[PATH_MAX], sub[PATH_MAX];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >=
			    (int)sizeof(sub) ||
		    lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			n += remove_stale_tmps(o, ext, sub);
		else if (S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
			 stale_tmp(e->d_name, &out_len) &&
			 owned(o, ext, sub, strlen(sub) - strlen(e->d_name) + out_len) && !unlink(path))
			n++;
	}
	closedir(dp);
	return n;
}

/* "manifest.jsonl" or "manifest-I-of-N.jsonl" (stem, suffix), in OUTDIR. */
static char *shard_file(const char *outdir, const char *stem, const char *ext,
			const struct lp_shard *s)
{
	char *p = NULL;
	int rc = s->count > 1 ? asprintf(&p, "%s/%s-%lu-of-%lu.%s", outdir, stem, s->index,
					 s->count, ext)
			      : asprintf(&p, "%s/%s.%s", outdir, stem, ext);

	return rc < 0 ? NULL : p;
}

/* ---- the run --------------------------------------------------------- */

struct batch {
	const struct batch_opts *o;
	struct lp_pipeline *p;
	struct lp_engine *engine;
	enum lp_format format;
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
 * temporary file. */
static enum lp_status write_output(struct batch *b, struct lp_doc *doc,
				   const struct lp_run_stats *stats, const char *path,
				   struct lp_batch_entry *e, struct lp_diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct lp_afile af;
	enum lp_status s;

	if (!mem)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the output");
	s = lp_report_write(doc, b->format, stats, mem, d);
	if (fclose(mem) && !s)
		s = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the output");
	if (!s && make_parents(path))
		s = lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to make its directory: %s",
				strerror(errno));
	if (!s && !(s = lp_afile_open(&af, path, d))) {
		if (len && fwrite(buf, 1, len, af.fp) != len) {
			s = lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to write: %s", strerror(errno));
			lp_afile_abort(&af);
		} else {
			s = lp_afile_commit(&af, d);
		}
	}
	if (!s) {
		char hex[65];
		lp_sha256_hex(buf, len, hex);
		e->output_sha256 = strdup(hex);
		e->output_bytes = len;
	}
	free(buf);
	return s;
}

/* Run one document; fills e (status, reason, measures, output). */
static void run_document(struct batch *b, const struct lp_batch_input *x, const char *out_path,
			 struct lp_batch_entry *e)
{
	struct lp_run_stats stats;
	struct lp_doc doc;
	struct lp_diag d;
	enum lp_status s;
	uint32_t scope = lp_mem_scope_begin();
	double t0 = lp_now_s(), c0 = thread_cpu_s();

	lp_diag_init(&d);
	lp_log_set_subject(x->path);
	s = lp_runner_run(b->p, x->path, b->o->question, b->engine, &doc, &stats, &d);
	if (s == LP_OK || s == LP_E_VERIFY) {
		struct lp_diag wd;
		lp_diag_init(&wd);
		enum lp_status ws = write_output(b, &doc, &stats, out_path, e, &wd);
		if (ws) {
			s = ws;
			d = wd;
		} else {
			e->output = strdup(out_path + strlen(b->o->outdir) + 1);
		}
	}
	for (size_t i = 0; i < doc.n_levels; i++) {
		e->tokens_in += doc.levels[i].tokens_in;
		e->tokens_out += doc.levels[i].tokens_out;
	}
	e->survival = doc.verify.done ? doc.verify.survival_rate : -1;
	e->peak_tracked_bytes = stats.peak_tracked_bytes;
	e->status = strdup(s == LP_OK ? "ok" : s == LP_E_VERIFY ? "verify_failed" : "failed");
	e->exit_code = lp_status_exit_code(s);
	if (s)
		e->reason = diag_text(&d, s);
	lp_doc_release(&doc);
	lp_log_set_subject(NULL);
	lp_mem_scope_end(scope);
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
		if (b->prog.active && !b->prog.lines)
			fputc('\n', stderr);
		const char *r = e->reason ? e->reason : "";
		size_t n = strlen(e->input);
		/* the reason names the file when it comes from reading it */
		int named = !strncmp(r, e->input, n) && r[n] == ':';
		fprintf(stderr, "lpipe batch: %s%s%s%s\n", named ? "" : e->input, named ? "" : ": ",
			strcmp(e->status, "failed") ? "verification failed: " : "error: ", r);
	}
	if (e->exit_code && b->o->fail_fast)
		b->stop = 1;
	if (!skipped && lp_batch_manifest_put(&b->fresh, e))
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
		e.exit_code = lp_status_exit_code(LP_E_INPUT);
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
static enum lp_status hash_pipeline(struct batch *b, struct lp_diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	enum lp_status s;

	if (!mem)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
	s = lp_pipeline_print(b->p, mem);
	fprintf(mem, "# output format: %d\n", (int)b->format);
	if (fclose(mem) || s) {
		free(buf);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory printing the plan");
	}
	lp_sha256_hex(buf, len, b->pipeline_hash);
	free(buf);
	return LP_OK;
}

static int fail(const struct lp_diag *d0, enum lp_status s)
{
	struct lp_diag d = *d0;

	if (!d.msg[0])
		lp_diag_set(&d, s, NULL, 0, 0, "%s", lp_status_str(s));
	lp_diag_print(&d, stderr);
	return lp_status_exit_code(s);
}

/* Load the pipeline under the command line's budget, then its own. */
static enum lp_status load(struct batch *b, struct lp_diag *d)
{
	const struct batch_opts *o = b->o;
	size_t budget;
	enum lp_status s;

	if ((s = lp_runner_budget(NULL, o->mem_budget, &budget, d)))
		return s;
	lp_mem_set_budget(budget);
	lp_mem_set_phase("config");
	s = lp_runner_load_pipeline(o->pipeline, o->question, o->sets, o->n_sets, &b->p, d);
	if (s)
		return s;
	if ((s = lp_runner_budget(b->p, o->mem_budget, &budget, d)))
		return s;
	lp_mem_set_budget(budget);
	b->format = o->has_format ? o->format : b->p->output.format;
	b->ext = b->format == LP_FORMAT_JSON ? ".json" : b->format == LP_FORMAT_MARKDOWN ? ".md"
											: ".txt";
	return hash_pipeline(b, d);
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
	char *path = shard_file(b->o->outdir, "inputs", "txt", &b->o->shard);
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
	char *csv = shard_file(b->o->outdir, "report", "csv", &b->o->shard);
	struct lp_diag d;

	lp_diag_init(&d);
	for (size_t i = 0; i < b->fresh.n; i++)
		lp_batch_manifest_put(&b->done, &b->fresh.v[i]);
	b->fresh.n = 0;
	if (lp_batch_manifest_write(&b->done, manifest_path, &d) ||
	    (csv && lp_batch_report_csv(&b->done, csv, &d)))
		lp_diag_print(&d, stderr);
	free(csv);
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
		b->n_skipped, secs > 0 ? 60.0 * (double)ran / secs : 0.0,
		(double)lp_mem_peak_rss() / (1024.0 * 1024.0), lp_engine_n_opened(b->engine));
	if (total != b->in.n)
		fprintf(stderr, "lpipe batch: shard %s: %zu of the %zu inputs\n", b->shard, b->in.n,
			total);
}

static int run_batch(const struct batch_opts *o)
{
	struct lp_engine_params ep = lp_engine_default_params();
	struct batch b;
	struct lp_diag d;
	pthread_t *threads = NULL;
	char *manifest_path = NULL;
	size_t total = 0, cleaned;
	enum lp_status s;
	int rc, n_threads = 0;

	memset(&b, 0, sizeof(b));
	b.o = o;
	b.manifest_fd = -1;
	pthread_mutex_init(&b.lock, NULL);
	lp_diag_init(&d);
	snprintf(b.shard, sizeof(b.shard), "%lu/%lu", o->shard.index, o->shard.count);
	if ((s = load(&b, &d)) || (s = collect(&b, &total, &d))) {
		rc = fail(&d, s);
		if (s == LP_E_CONFIG && !o->question && strstr(d.msg, "'question'"))
			fputs("lpipe: hint: give the question with -q TEXT\n", stderr);
		goto out;
	}
	if ((mkdir(o->outdir, 0777) && errno != EEXIST) ||
	    !(manifest_path = shard_file(o->outdir, "manifest", "jsonl", &o->shard))) {
		fprintf(stderr, "%s: error: unable to make the output directory: %s\n", o->outdir,
			strerror(errno));
		rc = LP_EXIT_INPUT;
		goto out;
	}
	if ((cleaned = remove_stale_tmps(o, b.ext, "")))
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
	ep.keep_idle = 1;
	if ((s = lp_engine_new(&ep, &b.engine, &d))) {
		rc = fail(&d, s);
		goto out;
	}
	/* the stages' own progress lines would mix: the batch has one */
	lp_progress_enable(progress_mode);
	lp_progress_begin(&b.prog, "batch", "documents", b.in.n);
	lp_progress_enable(0);
	b.prog.detail = b.detail;
	b.prog.lines = !isatty(STDERR_FILENO);
	b.t0 = lp_now_s();
	catch_stop_signals();
	threads = calloc((size_t)o->jobs, sizeof(*threads));
	for (int i = 0; threads && i < o->jobs; i++)
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
		print_args(stderr, o, 0);
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
	lp_engine_free(b.engine);
	lp_batch_manifest_release(&b.done);
	lp_batch_manifest_release(&b.fresh);
	lp_batch_inputs_release(&b.in);
	lp_pipeline_free(b.p);
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
