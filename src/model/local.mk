# model: GGUF reader, tensor formats (see Makefile.am)
liblpipe_la_SOURCES += \
	src/model/gguf.c src/model/gguf.h \
	src/model/quant.c src/model/quant.h src/model/quant_blocks.h

check_PROGRAMS += tests/check_gguf
TESTS += tests/check_gguf
tests_check_gguf_SOURCES = tests/check_gguf.c \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_gguf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_gguf_CFLAGS = $(TEST_CFLAGS)
tests_check_gguf_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_quant
TESTS += tests/check_quant
tests_check_quant_SOURCES = tests/check_quant.c
tests_check_quant_CFLAGS = $(TEST_CFLAGS)
tests_check_quant_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_gguf
TESTS += tests/fuzz/fuzz_gguf
tests_fuzz_fuzz_gguf_SOURCES = tests/fuzz/fuzz_gguf.c tests/fuzz/standalone.c
tests_fuzz_fuzz_gguf_LDADD = $(TEST_LIBS)

# Writes the fuzz seeds (run by hand; see the file).
check_PROGRAMS += tests/tools/gen_gguf_seeds
tests_tools_gen_gguf_seeds_SOURCES = tests/tools/gen_gguf_seeds.c \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_tools_gen_gguf_seeds_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_tools_gen_gguf_seeds_LDADD = $(TEST_LIBS)

TESTS += tests/model_info.sh
EXTRA_DIST += tests/model_info.sh

# The real model file, skipped (exit 77) when it is not there.
check_PROGRAMS += tests/check_model_file
TESTS += tests/check_model_file
tests_check_model_file_SOURCES = tests/check_model_file.c
tests_check_model_file_LDADD = $(TEST_LIBS)
