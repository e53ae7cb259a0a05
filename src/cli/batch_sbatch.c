/* batch_sbatch.c - lpipe batch's own command line again: the resume hint
 * after a signal, and the sbatch script of --emit-sbatch. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/batch.h"
#include "core/status.h"

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

void lp_batch_print_args(FILE *out, int argc, char *const *argv, int drop_shard)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
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

int lp_batch_emit_sbatch(FILE *out, int argc, char *const *argv, const char *outdir,
			 int jobs, int n_tasks)
{
	char exe[PATH_MAX], cwd[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "lpipe batch: error: unable to find the lpipe program or the "
			"current directory: %s\n", strerror(errno));
		return LP_EXIT_INPUT;
	}
	exe[n] = '\0';
	fputs("#!/bin/sh\n"
	      "# lpipe batch as a Slurm job array: task K of the array takes shard K of\n"
	      "# the inputs (lpipe reads SLURM_ARRAY_TASK_ID, _MIN and _COUNT), writes\n"
	      "# its outputs to the shared OUTDIR and its own manifest-K-of-N.jsonl.\n"
	      "# Submit with: sbatch THIS_FILE (--array=0-M on the sbatch command line\n"
	      "# overrides the size). When every task is done, merge the reports:\n"
	      "#   lpipe batch --merge ", out);
	sh_quote(out, outdir);
	/* two cores per document in flight: one generates, one splits */
	fprintf(out, "\n#SBATCH --job-name=lpipe-batch\n"
		"#SBATCH --array=0-%d\n"
		"#SBATCH --cpus-per-task=%d\n"
		"#SBATCH --output=lpipe-batch-%%A_%%a.log\n"
		"cd ", n_tasks - 1, jobs < 2 ? 2 : 2 * jobs);
	sh_quote(out, cwd);
	fputs(" || exit 2\nexec ", out);
	sh_quote(out, exe);
	fputs(" batch", out);
	lp_batch_print_args(out, argc, argv, 1);
	fputc('\n', out);
	return LP_EXIT_OK;
}
