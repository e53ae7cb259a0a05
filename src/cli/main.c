/* main.c - entry point; the command table lives in cli/commands.c. */
#include "cli/commands.h"
#include "core/fileio.h"

int main(int argc, char **argv)
{
	/* SIGINT or SIGTERM mid-write removes the temporary output */
	lp_afile_handle_signals();
	return lp_cli_main(argc, argv);
}
