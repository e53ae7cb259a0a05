/* cmd_version.c - `lpipe version` and `lpipe --version`. */
#include "cli/commands.h"

#include <stdio.h>

#include "config.h"
#include "core/status.h"

const char lp_usage_version[] =
	"usage: lpipe version\n"
	"       lpipe --version\n"
	"\n"
	"Print \"lpipe VERSION\" on standard output.\n";

int cmd_version(int argc, char **argv)
{
	if (argc > 1)
		return lp_cli_usage_error("version", "unexpected argument '%s'", argv[1]);
	printf("lpipe %s\n", PACKAGE_VERSION);
	return LP_EXIT_OK; /* lp_cli_close_stdout checks the writes */
}
