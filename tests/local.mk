# Fuzz targets: each tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput
# and is run in `make check` by standalone.c over tests/fuzz/corpus/<name>/
# plus deterministic mutations. Register one as:
#   check_PROGRAMS += tests/fuzz/fuzz_NAME
#   TESTS += tests/fuzz/fuzz_NAME
#   tests_fuzz_fuzz_NAME_SOURCES = tests/fuzz/fuzz_NAME.c tests/fuzz/standalone.c
#   tests_fuzz_fuzz_NAME_LDADD = $(TEST_LIBS)
EXTRA_DIST += tests/fuzz/standalone.c tests/fuzz/corpus

# The quality metrics of scripts/eval-quality and bench/e2e, and the data
# of data/eval (checked only where the sample documents are at hand).
TESTS += tests/cli/quality.sh
EXTRA_DIST += tests/cli/quality.sh tests/quality_metrics_test.py \
	scripts/eval-quality scripts/quality_metrics.py

# The HTML report: content and escaping; an HTML checker (tidy, html5lib);
# a headless Chromium driven over the DevTools protocol. The last two skip
# (77) when their tools are missing.
TESTS += tests/cli/html.sh tests/cli/html_valid.sh tests/cli/html_browser.sh
EXTRA_DIST += tests/cli/html.sh tests/cli/html_valid.sh tests/cli/html_browser.sh \
	tests/cli/html_fixture.sh tests/cli/html_browser.py

# lpipe batch in shards on a single-node Slurm and under GNU parallel;
# skipped where the packages are missing ('scripts/bootstrap test' installs them).
TESTS += tests/cli/slurm.sh tests/cli/parallel.sh
EXTRA_DIST += tests/cli/slurm.sh tests/cli/parallel.sh tests/cli/shards.sh

# The sample documents and the evaluation set (data/SOURCES): the CLI tests
# and the README's commands run on them, also from a tarball (distcheck).
EXTRA_DIST += data

# The library from several threads at once (lpipe.h), linked like
# tests/check_api against the installed library's interface only; its model
# is written by tests/tools/gen_chat_model.
check_PROGRAMS += tests/check_api_threads
TESTS += tests/check_api_threads
tests_check_api_threads_SOURCES = tests/check_api_threads.c
tests_check_api_threads_CFLAGS = $(TEST_CFLAGS)
tests_check_api_threads_LDADD = src/api/liblpipe.la $(CHECK_LIBS) -lpthread

# make check-tsan: the suites that run the library and the engine from
# several threads, built with ThreadSanitizer in a build directory of their
# own. A report makes the test exit with 66, which fails it.
TSAN_DIR = $(abs_top_builddir)/tsan
TSAN_TESTS = tests/check_api_threads tests/check_api tests/check_engine
check-tsan:
	@mkdir -p $(TSAN_DIR)
	cd $(TSAN_DIR) && { test -f Makefile || \
		$(abs_top_srcdir)/configure CFLAGS='-fsanitize=thread -g -O1' \
		LDFLAGS=-fsanitize=thread >configure.log; }
	CK_TIMEOUT_MULTIPLIER=8 $(MAKE) -C $(TSAN_DIR) check TESTS='$(TSAN_TESTS)' \
		check_PROGRAMS='$(TSAN_TESTS) tests/tools/gen_chat_model'
.PHONY: check-tsan

# make install (staged with DESTDIR): every file where configure said, the
# ready pipelines found by name, make uninstall leaving nothing.
TESTS += tests/cli/install.sh
EXTRA_DIST += tests/cli/install.sh
