/*
 * commands.h - the subcommands of the lpipe tool (git's cmd_* pattern).
 *
 * Each subcommand is `int cmd_<name>(int argc, char **argv)` in its own
 * cmd_<name>.c, receives argv starting at the subcommand name, and returns
 * the process exit code (see enum lp_exit). Only these functions decide the
 * exit status.
 */
#ifndef LP_CLI_COMMANDS_H
#define LP_CLI_COMMANDS_H

struct lp_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary; /* one line for `lpipe --help` */
	const char *usage;   /* full usage for `lpipe help NAME` */
};

int cmd_tokenize(int argc, char **argv);
int cmd_generate(int argc, char **argv);

/* Dispatch argv[1] through the command table; returns the exit code. */
int lp_cli_main(int argc, char **argv);
/* The command called `name`, or NULL. */
const struct lp_command *lp_cli_find(const char *name);

#endif
