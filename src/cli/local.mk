# cli: the command table, one cmd_<name>.c per subcommand, in a library of
# its own (libcli.la, linked into the tool only, never installed). run and
# batch reach pipelines only through the public library (src/api/lpipe.h);
# tests/cli/layering.sh holds them to it.
libcli_la_SOURCES += \
	src/cli/commands.c src/cli/commands.h \
	src/cli/cmd_run.c src/cli/cmd_check.c src/cli/cmd_help.c src/cli/cmd_version.c src/cli/cmd_device.c \
	src/cli/cmd_model.c src/cli/cmd_embed.c src/cli/options.c src/cli/options.h

# Shell tests of the tool (see tests/cli/lib.sh); LPIPE and top_srcdir come
# from AM_TESTS_ENVIRONMENT.
TESTS += tests/cli/basics.sh tests/cli/pipelines.sh tests/cli/hostile.sh \
	tests/cli/output.sh tests/cli/golden.sh tests/cli/faults.sh tests/cli/hostile2.sh \
	tests/cli/embed.sh tests/cli/device.sh tests/cli/layering.sh
EXTRA_DIST += tests/cli/lib.sh tests/cli/basics.sh tests/cli/pipelines.sh tests/cli/device.sh \
	tests/cli/hostile.sh tests/cli/output.sh tests/cli/golden.sh tests/cli/faults.sh \
	tests/cli/hostile2.sh tests/cli/embed.sh tests/cli/layering.sh tests/cli/layers.awk \
	src/LAYERS \
	tests/data/cli pipelines scripts/bootstrap .ci/run README.md

check_PROGRAMS += tests/check_cli
TESTS += tests/check_cli
tests_check_cli_SOURCES = tests/check_cli.c
tests_check_cli_CFLAGS = $(TEST_CFLAGS)
tests_check_cli_LDADD = $(TEST_LIBS)

# batch: many documents on one engine, manifest, resume, shards
libcli_la_SOURCES += src/cli/cmd_batch.c src/cli/batch.h src/cli/batch_inputs.c \
	src/cli/batch_manifest.c src/cli/batch_merge.c src/cli/batch_sbatch.c \
	src/cli/batch_outdir.c src/cli/shard.c src/cli/shard.h
