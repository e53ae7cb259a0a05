#include "cli/commands.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "api/lpipe.h"
#include "core/progress.h"
#include "core/status.h"

/* One line per subcommand, in the order `lpipe --help` lists them. */
static const struct lp_command commands[] = {
	{ "run", cmd_run, "run a pipeline on a document", lp_usage_run },
	{ "batch", cmd_batch, "run a pipeline on many documents, the model loaded once",
	  lp_usage_batch },
	{ "check", cmd_check, "validate a pipeline and print the resolved plan", lp_usage_check },
	{ "help", cmd_help, "show help for lpipe or one command", lp_usage_help },
	{ "version", cmd_version, "print the version and the backends built", lp_usage_version },
	{ "device", cmd_device, "list the GPUs the CUDA backend can use", lp_usage_device },
	{ "model", cmd_model, "inspect a GGUF model file", lp_usage_model },
	{ "tokenize", cmd_tokenize, "show the tokens of a text", lp_usage_tokenize },
	{ "embed", cmd_embed, "embed a document's chunks into a .npy file", lp_usage_embed },
	{ "generate", cmd_generate, "continue a prompt with a model", lp_usage_generate },
	{ "probe", cmd_probe, "measure memory and speed against context length", lp_usage_probe },
	{ "plan", cmd_plan, "turn a memory budget into context, chunk and KV settings", lp_usage_plan },
	{ "serve", cmd_serve, "serve pipelines over HTTP under one memory budget", lp_usage_serve },
	{ NULL, NULL, NULL, NULL },
};

const struct lp_command *lp_cli_commands(void)
{
	return commands;
}

const struct lp_command *lp_cli_find(const char *name)
{
	for (const struct lp_command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

void lp_cli_print_help(FILE *out)
{
	fputs("usage: lpipe <command> [options] [args]\n"
	      "       lpipe --help | --version\n\n"
	      "Process documents longer than a model's context inside a fixed memory\n"
	      "budget, as described by a YAML pipeline.\n\n"
	      "commands:\n", out);
	for (const struct lp_command *c = commands; c->name; c++)
		fprintf(out, "  %-9s %s\n", c->name, c->summary);
	fputs("\nexit status:\n"
	      "  0  success\n"
	      "  1  verification failed (the output is still written)\n"
	      "  2  usage or configuration error\n"
	      "  3  input error (document or model unreadable or invalid)\n"
	      "  4  out of memory or over the memory budget\n"
	      "  5  internal error\n\n"
	      "See 'lpipe help <command>', lpipe(1) and lpipe-pipeline(5).\n", out);
}

void lp_cli_print_synopsis(const char *name, FILE *out)
{
	const struct lp_command *c = lp_cli_find(name);
	const char *end;

	if (!c)
		return;
	end = strstr(c->usage, "\n\n");
	fprintf(out, "%.*s\n", (int)(end ? (size_t)(end - c->usage) : strlen(c->usage)),
		c->usage);
}

int lp_cli_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lpipe %s: error: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	lp_cli_print_synopsis(name, stderr);
	return LP_EXIT_USAGE;
}

const char *lp_cli_api_reason(void)
{
	const char *m = lpipe_errmsg();

	return strncmp(m, "error: ", 7) ? m : m + 7;
}

int lp_cli_api_error(const char *where, int code)
{
	const char *m = lpipe_errmsg();

	lp_progress_clear();
	if (strncmp(m, "error: ", 7))
		fprintf(stderr, "%s\n", *m ? m : "lpipe: error");
	else
		fprintf(stderr, "%s: %s\n", where ? where : "lpipe", m);
	return code;
}

/* Optimal string alignment distance (Levenshtein plus adjacent swaps). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	size_t *d, r;

	if (n > 64 || m > 64)
		return (size_t)-1;
	d = calloc((n + 1) * (m + 1), sizeof(*d));
	if (!d)
		return (size_t)-1;
#define D(i, j) d[(i) * (m + 1) + (j)]
	for (size_t i = 0; i <= n; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= m; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < v)
				v = D(i, j - 1) + 1;
			if (D(i - 1, j - 1) + cost < v)
				v = D(i - 1, j - 1) + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    D(i - 2, j - 2) + 1 < v)
				v = D(i - 2, j - 2) + 1;
			D(i, j) = v;
		}
	}
	r = D(n, m);
#undef D
	free(d);
	return r;
}

const char *lp_cli_nearest(const char *word, const char *const *candidates)
{
	const char *best = NULL, *prefix = NULL;
	size_t best_d = 3, n_prefix = 0, len = strlen(word);

	for (size_t i = 0; candidates[i]; i++) {
		size_t dist = edit_distance(word, candidates[i]);
		if (dist < best_d) {
			best_d = dist;
			best = candidates[i];
		}
		if (len && !strncmp(word, candidates[i], len)) {
			prefix = candidates[i];
			n_prefix++;
		}
	}
	/* A one-letter word is close to every short name: demand more. */
	if (best && len < 3 && best_d > 1)
		best = NULL;
	return best ? best : (n_prefix == 1 ? prefix : NULL);
}

const char *lp_cli_nearest_command(const char *word)
{
	const char *names[64];
	size_t n = 0;

	for (const struct lp_command *c = commands; c->name && n < 63; c++)
		names[n++] = c->name;
	names[n] = NULL;
	return lp_cli_nearest(word, names);
}

static int unknown_command(const char *name)
{
	const char *near = lp_cli_nearest_command(name);

	if (near)
		fprintf(stderr, "lpipe: error: '%s' is not a command; did you mean '%s'?\n",
			name, near);
	else
		fprintf(stderr, "lpipe: error: '%s' is not a command; see 'lpipe --help'\n",
			name);
	return LP_EXIT_USAGE;
}

int lp_cli_main(int argc, char **argv)
{
	const struct lp_command *c;

	if (argc < 2) {
		lp_cli_print_help(stderr);
		return LP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version"))
		return lp_cli_close_stdout("version", cmd_version(argc - 1, argv + 1));
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return lp_cli_close_stdout("help", cmd_help(argc - 1, argv + 1));
	if (argv[1][0] == '-') {
		fprintf(stderr, "lpipe: error: unknown option '%s'\n", argv[1]);
		fputs("usage: lpipe <command> [options] [args]; see 'lpipe --help'\n", stderr);
		return LP_EXIT_USAGE;
	}
	c = lp_cli_find(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	return lp_cli_close_stdout(c->name, c->fn(argc - 1, argv + 1));
}

int lp_cli_close_stdout(const char *name, int rc)
{
	int failed, e;

	errno = 0;
	failed = fflush(stdout) != 0 || ferror(stdout);
	e = errno;
	/* the close is where a full disk or a closed pipe may show last */
	if (fclose(stdout) != 0 && !failed) {
		failed = 1;
		e = errno;
	}
	if (!failed)
		return rc;
	/* a command that failed has said why; its status stands */
	if (rc == LP_EXIT_OK || rc == LP_EXIT_VERIFY) {
		fprintf(stderr, "lpipe %s: error: unable to write to standard output: %s\n", name,
			strerror(e ? e : EIO));
		rc = LP_EXIT_INPUT;
	}
	return rc;
}
