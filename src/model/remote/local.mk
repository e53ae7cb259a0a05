# model/remote: generation on an OpenAI-compatible server (libcurl, jansson)
liblpipe_la_SOURCES += src/model/remote/openai.c src/model/remote/openai.h
check_PROGRAMS += tests/check_openai
TESTS += tests/check_openai
tests_check_openai_SOURCES = tests/check_openai.c
tests_check_openai_CFLAGS = $(TEST_CFLAGS)
tests_check_openai_LDADD = $(TEST_LIBS)
# Several threads on one client (run by tests/cli/openai.sh).
check_PROGRAMS += tests/tools/openai_par
tests_tools_openai_par_SOURCES = tests/tools/openai_par.c
tests_tools_openai_par_LDADD = $(TEST_LIBS)
# Against a stub on loopback (429/500, back-off, the key kept secret), and
# against llama-cpp-python's server with the real model (skips without it).
TESTS += tests/cli/openai.sh tests/cli/openai-server.sh
EXTRA_DIST += tests/cli/openai.sh tests/cli/openai-server.sh tests/tools/openai_stub.py
