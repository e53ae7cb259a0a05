# api: the installed library. lpipe.h is the public interface; liblpipe
# (shared and static) is that interface over the internal convenience
# library, which is compiled position-independent for it. Only the lpipe_*
# functions are exported: the internal lp_* symbols stay hidden in the
# shared library. The tool and the tests keep linking the convenience
# library (liblpipe.la at the top), which holds the library's own code too.
liblpipe_la_CFLAGS = $(AM_CFLAGS) -fPIC
liblpipe_la_SOURCES += src/api/lpipe.c src/api/lpipe.h src/api/runner.c src/api/runner.h \
	src/api/internal.h
include_HEADERS = src/api/lpipe.h
lib_LTLIBRARIES = src/api/liblpipe.la
src_api_liblpipe_la_SOURCES = src/api/lpipe.h
# both kinds: override the static-only default of AM_LIBTOOLFLAGS
src_api_liblpipe_la_LIBTOOLFLAGS =
src_api_liblpipe_la_LIBADD = liblpipe.la $(LP_LIBS)
src_api_liblpipe_la_LDFLAGS = $(AM_LDFLAGS) -version-info 1:0:1 -no-undefined \
	-export-symbols-regex '^lpipe_'

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = src/api/lpipe.pc
dist_man_MANS += man/lpipe.3

check_PROGRAMS += tests/check_api
TESTS += tests/check_api
tests_check_api_SOURCES = tests/check_api.c
tests_check_api_CFLAGS = $(TEST_CFLAGS)
tests_check_api_LDADD = src/api/liblpipe.la $(CHECK_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_api
TESTS += tests/fuzz/fuzz_api
tests_fuzz_fuzz_api_SOURCES = tests/fuzz/fuzz_api.c tests/fuzz/standalone.c
tests_fuzz_fuzz_api_LDADD = src/api/liblpipe.la

# The example of lpipe(3), built against a staged `make install` with
# pkg-config and run against `lpipe run` (tests/cli/api_example.sh).
TESTS += tests/cli/api_example.sh
EXTRA_DIST += tests/cli/api_example.sh tests/api/example.c
AM_TESTS_ENVIRONMENT += CC='$(CC)'; PKG_CONFIG='$(PKG_CONFIG)'; MAKE='$(MAKE)'; \
	export CC PKG_CONFIG MAKE;
