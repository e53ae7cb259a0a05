/*
 * commands.h - the subcommands of the lpipe tool (git's cmd_* pattern).
 *
 * Each subcommand is `int cmd_<name>(int argc, char **argv)` in its own
 * cmd_<name>.c, receives argv starting at the subcommand name, and returns
 * the process exit code (see enum lp_exit). Only these functions decide the
 * exit status.
 *
 * A command's `usage` is its full help text: the first paragraph (up to the
 * first blank line) is the synopsis printed after a usage error; the whole
 * text is printed by `lpipe help NAME` and `lpipe NAME --help`, and must
 * agree with man/lpipe.1.
 */
#ifndef LP_CLI_COMMANDS_H
#define LP_CLI_COMMANDS_H

#include <stdio.h>

struct lp_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary; /* one line for `lpipe --help` */
	const char *usage;   /* full usage for `lpipe help NAME` */
};

int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* Full help texts, defined beside each command. */
extern const char lp_usage_run[];
extern const char lp_usage_check[];
extern const char lp_usage_help[];
extern const char lp_usage_version[];
int cmd_model(int argc, char **argv);
extern const char lp_usage_model[];
int cmd_tokenize(int argc, char **argv);
extern const char lp_usage_tokenize[];
int cmd_embed(int argc, char **argv);
extern const char lp_usage_embed[];
int cmd_generate(int argc, char **argv);
extern const char lp_usage_generate[];
int cmd_probe(int argc, char **argv);
extern const char lp_usage_probe[];
int cmd_device(int argc, char **argv);
extern const char lp_usage_device[];
int cmd_plan(int argc, char **argv);
extern const char lp_usage_plan[];
int cmd_serve(int argc, char **argv);
extern const char lp_usage_serve[];
int cmd_batch(int argc, char **argv);
extern const char lp_usage_batch[];

/* Dispatch argv[1] through the command table; returns the exit code. */
/*
 * Flush and close standard output after command `name` returned `rc`; a
 * failed write anywhere (stdio keeps the error), flush or close turns
 * status 0 or 1 into 3 with "lpipe NAME: error: unable to write to
 * standard output: REASON". Returns the exit code to use.
 */
int lp_cli_close_stdout(const char *name, int rc);
int lp_cli_main(int argc, char **argv);
/* The command called `name`, or NULL. */
const struct lp_command *lp_cli_find(const char *name);
/* The NULL-terminated command table, in the order `lpipe --help` lists it. */
const struct lp_command *lp_cli_commands(void);

/* Print the general help (commands, exit codes) to `out`. */
void lp_cli_print_help(FILE *out);
/* Print the synopsis of command `name` (its usage up to the first blank line). */
void lp_cli_print_synopsis(const char *name, FILE *out);
/*
 * Report a usage error of command `name`: "lpipe NAME: error: MSG" and the
 * synopsis on stderr. Returns LP_EXIT_USAGE for `return lp_cli_usage_error(...)`.
 */
int lp_cli_usage_error(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The commands built on the public library (api/lpipe.h): the message of
 * the calling thread's last failed lpipe_* call without its leading
 * "error: " (what went wrong, after the file and position when it names
 * them), and that message printed as lpipe(1) prints errors ("lpipe:
 * error: MSG", or "FILE:LINE:COL: error: MSG"), a message naming no file
 * put under `where` when given. lp_cli_api_error returns `code`.
 */
const char *lp_cli_api_reason(void);
int lp_cli_api_error(const char *where, int code);
/*
 * The nearest of the NULL-terminated `candidates` to `word` (edit distance
 * at most 2, or a unique prefix), or NULL when none is close enough.
 */
const char *lp_cli_nearest(const char *word, const char *const *candidates);
/* The command name nearest to `word` by the same rule, or NULL. */
const char *lp_cli_nearest_command(const char *word);

#endif
