# scripts: the bootstrap script's output hygiene, shell completion and the
# README checks (make docs-check).

# `sh scripts/bootstrap run > out.txt` keeps out.txt to the result. make
# check runs it with stand-in tools (seconds, offline); .ci/run runs it for
# real with --full once the models are fetched.
TESTS += tests/cli/bootstrap.sh
EXTRA_DIST += tests/cli/bootstrap.sh scripts/local.mk

# The ready pipelines, installed for users and for shell completion.
pipelinesdir = $(pkgdatadir)/pipelines
pipelines_DATA = $(wildcard $(srcdir)/pipelines/*.yaml)

# bash completion (zsh through bashcompinit): the commands, options and
# --set keys come from lpipe itself at completion time; only the folder of
# the installed pipelines is filled in here.
bashcompletiondir = $(datadir)/bash-completion/completions
bashcompletion_DATA = scripts/completion/lpipe
scripts/completion/lpipe: $(srcdir)/scripts/completion/lpipe.bash.in Makefile
	$(AM_V_GEN)$(MKDIR_P) scripts/completion && \
	sed -e 's|@pipelinesdir[@]|$(pipelinesdir)|g' \
		$(srcdir)/scripts/completion/lpipe.bash.in >$@.tmp && mv $@.tmp $@
CLEANFILES += scripts/completion/lpipe
EXTRA_DIST += scripts/completion/lpipe.bash.in
TESTS += tests/cli/completion.sh
EXTRA_DIST += tests/cli/completion.sh

# make docs-check: every command of the README runs against this build,
# the slow lpipe ones too (a few minutes; make check runs the cheap ones
# and only checks the rest: tests/cli/docs.sh), and the Chinese README
# shows the same commands.
docs-check: all
	$(SHELL) $(top_srcdir)/scripts/docs-check --slow --lpipe $(abs_top_builddir)/lpipe \
		$(top_srcdir)/README.md
	$(SHELL) $(top_srcdir)/scripts/docs-check --same $(top_srcdir)/README.md \
		$(top_srcdir)/README.zh-CN.md
.PHONY: docs-check
TESTS += tests/cli/docs.sh
EXTRA_DIST += tests/cli/docs.sh scripts/docs-check README.zh-CN.md
