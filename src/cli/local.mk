# cli: the command table and one cmd_<name>.c per subcommand
liblpipe_la_SOURCES += \
	src/cli/commands.c src/cli/commands.h \
	src/cli/cmd_model.c
