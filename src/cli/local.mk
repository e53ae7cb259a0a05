# cli: the command table, one cmd_<name>.c per subcommand, and the runner
# shared by the commands that process documents
liblpipe_la_SOURCES += \
	src/cli/commands.c src/cli/commands.h \
	src/cli/cmd_run.c src/cli/cmd_check.c src/cli/cmd_help.c src/cli/cmd_version.c \
	src/cli/runner.c src/cli/runner.h
