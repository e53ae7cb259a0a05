#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "core/status.h"

static int cmd_version(int argc, char **argv)
{
	printf("lpipe %s\n", PACKAGE_VERSION);
	return LP_EXIT_OK;
}

static const struct lp_command commands[] = {
	{ "version", cmd_version, "print the version", "lpipe version" },
	{ "tokenize", cmd_tokenize, "show the tokens of a text", "lpipe tokenize MODEL TEXT [--ids-only] [--special]" },
	{ "generate", cmd_generate, "continue a prompt with a model", "lpipe generate [MODEL] -p PROMPT [--chat] [-n N] [--temp T] ..." },
	{ NULL, NULL, NULL, NULL },
};

const struct lp_command *lp_cli_find(const char *name)
{
	for (const struct lp_command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int lp_cli_main(int argc, char **argv)
{
	const struct lp_command *c;

	if (argc < 2) {
		fprintf(stderr, "usage: lpipe <command> [options]\n");
		return LP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	c = lp_cli_find(argv[1]);
	if (!c) {
		fprintf(stderr, "lpipe: '%s' is not a command; see 'lpipe --help'\n", argv[1]);
		return LP_EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}
