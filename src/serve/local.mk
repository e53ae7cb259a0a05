# serve: lpipe serve, a REST service over the library (src/serve/serve.h).
# The request parser needs no HTTP library and is always built (its fuzz
# target runs everywhere); the rest only with libmicrohttpd (configure.ac
# LP_HAVE_MHD). cmd_serve.c is always built: without the library it says
# which package to install.
libcli_la_SOURCES += src/serve/request.c src/serve/request.h src/cli/cmd_serve.c
AM_CPPFLAGS += $(MHD_CFLAGS)
lpipe_LDADD += $(MHD_LIBS)
TEST_LIBS += $(MHD_LIBS)
if LP_MHD


libcli_la_SOURCES += src/serve/serve.h src/serve/serve.c \
	src/serve/http.c src/serve/http.h \
	src/serve/routes.c src/serve/routes.h \
	src/serve/runs.c src/serve/runs.h \
	src/serve/docs.c src/serve/docs.h \
	src/serve/metrics.c src/serve/metrics.h \
	src/serve/events.c src/serve/events.h \
	src/serve/page.c src/serve/page.h \
	src/serve/plan.c src/serve/plan.h
check_PROGRAMS += tests/check_serve
TESTS += tests/check_serve
tests_check_serve_SOURCES = tests/check_serve.c
tests_check_serve_CFLAGS = $(TEST_CFLAGS)
tests_check_serve_LDADD = $(TEST_LIBS)
endif
EXTRA_DIST += src/serve/local.mk

check_PROGRAMS += tests/fuzz/fuzz_serve_request
TESTS += tests/fuzz/fuzz_serve_request
tests_fuzz_fuzz_serve_request_SOURCES = tests/fuzz/fuzz_serve_request.c tests/fuzz/standalone.c
tests_fuzz_fuzz_serve_request_LDADD = $(TEST_LIBS)

# Real clients (curl, urllib) against the server; hostile HTTP; SIGTERM
# and kill -9. Each skips (77) without python3 or libmicrohttpd.
# The web page in headless Chromium (skips without one, as html_browser.sh).
TESTS += tests/cli/serve.sh tests/cli/serve-hostile.sh tests/cli/serve-life.sh tests/cli/serve-runs.sh \
	tests/cli/serve-page.sh
EXTRA_DIST += tests/cli/serve.sh tests/cli/serve-hostile.sh tests/cli/serve-life.sh tests/cli/serve-runs.sh \
	tests/cli/serve-page.sh tests/cli/serve_lib.sh tests/cli/serve_client.py \
	tests/cli/serve_page.py bench/serve

# lpipe-serve(1) and the OpenAPI description of the endpoints.
dist_man_MANS += man/lpipe-serve.1
dist_pkgdata_DATA = man/lpipe-serve.openapi.json
