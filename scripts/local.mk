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

# The benchmarks (run by hand) and the retrieval evaluation ship too.
EXTRA_DIST += bench/e2e bench/flat-memory bench/split-retrieve \
	bench/batch/README.md bench/batch/run.sh \
	bench/out-probe/README.md bench/out-probe/smollm2-plan.txt \
	bench/out-probe/smollm2-probe.csv bench/out-probe/smollm2-probe.svg \
	bench/out-probe/smollm2-probe.txt scripts/eval-retrieve

# make dist from a git checkout: every tracked file but .gitignore is in
# the tarball, so a file added without its EXTRA_DIST line fails here
# rather than in a user's build. (From a tarball there is nothing to check.)
dist-hook:
	@top=`cd "$(top_srcdir)" && pwd -P`; dist=`cd "$(distdir)" && pwd -P`; \
	git_top=`git -C "$$top" rev-parse --show-toplevel 2>/dev/null` || exit 0; \
	test "`cd "$$git_top" && pwd -P`" = "$$top" || exit 0; \
	missing=`cd "$$top" && git ls-files | while read -r f; do \
		case $$f in .gitignore) continue ;; esac; \
		test ! -e "$$f" || test -e "$$dist/$$f" || echo "$$f"; done`; \
	test -z "$$missing" || { \
		echo "dist: tracked files missing from the tarball (add them to EXTRA_DIST):" \
			$$missing >&2; exit 1; }

# make installcheck (distcheck runs it on its own install): the installed
# tool, run from elsewhere, finds a ready pipeline by its bare name.
installcheck-local:
	cd "$(DESTDIR)$(bindir)" && \
		LPIPE_PIPELINES_DIR= "$(DESTDIR)$(bindir)/lpipe" check summarize >/dev/null
	LPIPE_PIPELINES_DIR= "$(DESTDIR)$(bindir)/lpipe" version | \
		grep -Fx 'pipelines: $(DESTDIR)$(pipelinesdir)' >/dev/null
