# model: sources and Check suite (see Makefile.am)
# model: forward pass (model views, KV cache, evaluation context)
liblpipe_la_SOURCES += \
	src/model/model.c src/model/model.h \
	src/model/kvcache.c src/model/kvcache.h \
	src/model/forward.c src/model/forward.h

check_PROGRAMS += tests/check_forward
TESTS += tests/check_forward
tests_check_forward_SOURCES = tests/check_forward.c tests/ref_forward.c tests/ref_forward.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_forward_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_forward_CFLAGS = $(TEST_CFLAGS)
tests_check_forward_LDADD = $(TEST_LIBS)
