/* cmd_help.c - `lpipe help [COMMAND]`, `lpipe --help`, `lpipe -h`. */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

#include "core/status.h"

const char lp_usage_help[] =
	"usage: lpipe help [COMMAND]\n"
	"       lpipe --help | -h\n"
	"\n"
	"Without COMMAND, list the commands and exit codes; with COMMAND, print\n"
	"its usage and options (the same as 'lpipe COMMAND --help').\n";

int cmd_help(int argc, char **argv)
{
	const struct lp_command *c;

	if (argc < 2) {
		lp_cli_print_help(stdout);
		return LP_EXIT_OK;
	}
	if (argc > 2)
		return lp_cli_usage_error("help", "too many arguments");
	c = lp_cli_find(argv[1]);
	if (!c) {
		const char *near = lp_cli_nearest_command(argv[1]);

		if (near)
			fprintf(stderr, "lpipe help: error: no command '%s'; did you mean '%s'?\n",
				argv[1], near);
		else
			fprintf(stderr, "lpipe help: error: no command '%s'; see 'lpipe --help'\n",
				argv[1]);
		return LP_EXIT_USAGE;
	}
	fputs(c->usage, stdout);
	if (!*c->usage || c->usage[strlen(c->usage) - 1] != '\n')
		putchar('\n');
	return LP_EXIT_OK;
}
