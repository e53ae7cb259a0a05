/* cmd_version.c - `lpipe version` and `lpipe --version`. */
#include "cli/commands.h"

#include <stdio.h>

#include "backend/backend.h"
#include "config.h"
#include "core/status.h"

const char lp_usage_version[] =
	"usage: lpipe version\n"
	"       lpipe --version\n"
	"\n"
	"Print \"lpipe VERSION\" on standard output, then the backends this build\n"
	"has (\"backends: cpu\" or \"backends: cpu cuda\"; cuda is the module\n"
	"lpipe-cuda.so, which `lpipe device` tries).\n";

int cmd_version(int argc, char **argv)
{
	if (argc > 1)
		return lp_cli_usage_error("version", "unexpected argument '%s'", argv[1]);
	printf("lpipe %s\nbackends: %s\n", PACKAGE_VERSION, lp_backend_built());
	return fflush(stdout) ? LP_EXIT_INPUT : LP_EXIT_OK;
}
