/*
 * batch.h - the parts of `lpipe batch` beside the command itself: finding
 * the inputs, and the manifest that records what became of each.
 *
 * Inputs. Each input has a path (as opened) and a key: its path relative
 * to the directory argument it was found under, or, for a file named on
 * the command line or in a --from list, the path as given without a
 * leading "/" or "./" ("../" becomes "__/"). The key names the output
 * (OUTDIR/KEY plus the format's extension), decides the shard
 * (cli/shard.h) and identifies the input in the manifest, so it is the
 * same on every machine that sees the same tree. Directories are walked
 * recursively in name order; symbolic links to files are followed, links
 * to directories are not (no cycles), and a link that leads nowhere (a
 * loop, a dangling link) is kept as an input so that its failure is
 * recorded. --glob patterns select files found in directories by name,
 * --exclude patterns drop files and directories whose key or name
 * matches. The walk never enters OUTDIR.
 *
 * Manifest. OUTDIR/manifest.jsonl (manifest-I-of-N.jsonl for shard I of
 * N) gets one JSON object per finished document, appended, flushed and
 * synced before the next one is started, so a process killed at any
 * moment leaves at most one line half written, which the next run cuts
 * off. The latest line of a key wins; a run that ends (or stops on a
 * signal) rewrites the file atomically with one line per key. The fields
 * are listed in lpipe(1) and written by lp_batch_entry_json.
 */
#ifndef LP_CLI_BATCH_H
#define LP_CLI_BATCH_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"
#include "cli/shard.h"

struct lp_batch_input {
	char *path; /* as opened (malloc) */
	char *key;  /* see above (malloc) */
};

struct lp_batch_inputs {
	struct lp_batch_input *v; /* [n], sorted by key */
	size_t n, cap;
};

struct lp_batch_walk {
	const char *const *globs;    /* [n_globs] fnmatch patterns on names */
	size_t n_globs;
	const char *const *excludes; /* [n_excludes] on keys and names */
	size_t n_excludes;
	const char *outdir;          /* never walked into (may not exist) */
};

/*
 * Add the input `arg` (a file or a directory) to `in`. Returns LP_OK, or
 * LP_E_IO when `arg` itself does not exist (an input named on the command
 * line that is missing is a usage error of the caller's to report).
 */
enum lp_status lp_batch_add_arg(struct lp_batch_inputs *in, const char *arg,
				const struct lp_batch_walk *w, struct lp_diag *d);
/* Add every line of the file `list` ("-": stdin) as a file input; blank
 * lines and lines starting with '#' are skipped. LP_OK or LP_E_IO. */
enum lp_status lp_batch_add_list(struct lp_batch_inputs *in, const char *list,
				 struct lp_diag *d);
/* Sort by key; two inputs with the same key are an error (LP_E_USAGE
 * naming both), as they would write the same output. */
enum lp_status lp_batch_finish(struct lp_batch_inputs *in, struct lp_diag *d);
/* Keep only the inputs of shard `s`. */
void lp_batch_keep_shard(struct lp_batch_inputs *in, const struct lp_shard *s);
void lp_batch_inputs_release(struct lp_batch_inputs *in);

/* What became of one document. Strings are malloc'd (NULL: absent). */
struct lp_batch_entry {
	char *input, *key, *sha256, *pipeline;
	char *status;        /* "ok", "verify_failed" or "failed" */
	char *reason;        /* the error or verification message, or NULL */
	char *output;        /* path relative to OUTDIR, or NULL */
	char *output_sha256;
	char *shard;         /* "I/N" */
	int exit_code;       /* what `lpipe run` would have returned */
	size_t bytes, output_bytes;
	size_t tokens_in, tokens_out;
	size_t peak_tracked_bytes;
	double wall_s, cpu_s;
	double survival;     /* keyphrase survival rate; < 0: no verify stage */
};

void lp_batch_entry_release(struct lp_batch_entry *e);

/* One compact JSON line (no newline) in a new string (free), or NULL when
 * out of memory. */
char *lp_batch_entry_json(const struct lp_batch_entry *e);
/* Parse one manifest line; LP_OK, or LP_E_INPUT for a line that is not a
 * manifest object (a half-written last line). */
enum lp_status lp_batch_entry_parse(const char *line, struct lp_batch_entry *e);

struct lp_batch_manifest {
	struct lp_batch_entry *v; /* [n], the latest entry per key */
	size_t n, cap;
};

/*
 * Read the manifest at `path` into `m` (a missing file is an empty
 * manifest): later lines of a key replace earlier ones. With `repair`, a
 * last line without its newline (a process killed while writing it) is
 * cut off the file. Returns LP_OK, LP_E_IO or LP_E_NOMEM. *n_lines (may be
 * NULL) gets the number of complete lines read.
 */
enum lp_status lp_batch_manifest_read(const char *path, int repair,
				      struct lp_batch_manifest *m, size_t *n_lines,
				      struct lp_diag *d);
/* The entry of `key`, or NULL; by binary search, so only on a manifest
 * compacted since its last append (lp_batch_manifest_read leaves it so). */
struct lp_batch_entry *lp_batch_manifest_find(struct lp_batch_manifest *m, const char *key);
/* Append `e` (taking its strings; `e` is cleared). LP_OK or LP_E_NOMEM. */
enum lp_status lp_batch_manifest_append(struct lp_batch_manifest *m, struct lp_batch_entry *e);
/* Sort by key and keep, per key, the entry appended last: O(n log n) for
 * a manifest of any length. LP_OK or LP_E_NOMEM (m unchanged). */
enum lp_status lp_batch_manifest_compact(struct lp_batch_manifest *m);
/* Compact m, then rewrite `path` atomically with one line per entry, in
 * key order. */
enum lp_status lp_batch_manifest_write(struct lp_batch_manifest *m, const char *path,
				       struct lp_diag *d);
/* Compact m, then write the entries as CSV (header first, key order) to
 * `path`, atomically. */
enum lp_status lp_batch_report_csv(struct lp_batch_manifest *m, const char *path,
				   struct lp_diag *d);
void lp_batch_manifest_release(struct lp_batch_manifest *m);

/*
 * `lpipe batch --merge DIR...` (batch_merge.c): check the shards found in
 * dirs[0..n_dirs) and write merged.jsonl and merged.csv to `outdir` (NULL:
 * dirs[0]). Returns the exit code: LP_EXIT_INPUT when a document or shard
 * is missing or doubled, else the worst outcome of the documents.
 */
int lp_batch_merge(const char *const *dirs, size_t n_dirs, const char *outdir);

/*
 * The arguments of `lpipe batch` after "batch" (argv[1..argc), argv as
 * given, before getopt permuted it), each quoted for sh and preceded by a
 * space, less --emit-sbatch and, with drop_shard, --shard I/N: the same
 * command again (the resume hint, the job script). batch_sbatch.c.
 */
void lp_batch_print_args(FILE *out, int argc, char *const *argv, int drop_shard);
/* Print to `out` an sbatch script that runs this command as a job array of
 * n_tasks tasks, each taking its shard from the Slurm variables. Returns
 * the exit code (LP_EXIT_INPUT when the program or the current directory
 * cannot be found). */
int lp_batch_emit_sbatch(FILE *out, int argc, char *const *argv, const char *outdir,
			 int jobs, int n_tasks);

/* batch_outdir.c: "OUTDIR/STEM.EXT", or "OUTDIR/STEM-I-of-N.EXT" for a
 * shard of N > 1 (manifest, report, inputs); a new string (free), NULL
 * when out of memory. */
char *lp_batch_shard_file(const char *outdir, const char *stem, const char *ext,
			  const struct lp_shard *s);
/* mkdir -p of the directory part of `path`; 0 or -1 (errno set). */
int lp_batch_make_parents(const char *path);
/*
 * Remove under `outdir` the temporaries ("NAME.tmp.PID.XXXXXX") that runs
 * killed by SIGKILL left, of the files `shard` owns: its manifest, report
 * and inputs list, and the outputs (ending in `ext`) of its keys; only
 * regular files of this user whose pid is no process. Shards sharing
 * OUTDIR from other hosts (where a pid means nothing) keep theirs.
 * Returns how many went.
 */
size_t lp_batch_remove_stale(const char *outdir, const struct lp_shard *shard, const char *ext);

/* Exit code of the worst outcome among codes a and b: the larger (0 ok,
 * 1 verification failed, 2 configuration, 3 input, 4 memory, 5 internal:
 * the table in lpipe(1) is in order of severity). */
int lp_batch_worse(int a, int b);

#endif
