/* main.c - entry point; the command table lives in cli/commands.c. */
#include "cli/commands.h"

int main(int argc, char **argv)
{
	return lp_cli_main(argc, argv);
}
