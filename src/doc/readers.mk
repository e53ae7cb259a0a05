# doc readers: Markdown (md4c), HTML (libxml2), PDF (poppler-glib), each
# built with its library when configure finds it and as a refusal naming
# the package otherwise (doc/readers.h); the rest of src/doc is local.mk.
liblpipe_la_SOURCES += \
	src/doc/gather.c src/doc/gather.h \
	src/doc/read_markdown.c src/doc/read_html.c src/doc/read_pdf.c
AM_CPPFLAGS += $(MD4C_CFLAGS) $(LIBXML2_CFLAGS) $(POPPLER_CFLAGS)
LP_LIBS += $(MD4C_LIBS) $(LIBXML2_LIBS) $(POPPLER_LIBS)

check_PROGRAMS += tests/check_readers
TESTS += tests/check_readers
tests_check_readers_SOURCES = tests/check_readers.c
tests_check_readers_CFLAGS = $(TEST_CFLAGS)
tests_check_readers_LDADD = $(TEST_LIBS)

# One reader on one file, blocks out as JSON lines (bench/extract).
check_PROGRAMS += tests/tools/dump_blocks
tests_tools_dump_blocks_SOURCES = tests/tools/dump_blocks.c
tests_tools_dump_blocks_LDADD = $(TEST_LIBS)

# Each reader a fuzz target (tests/fuzz/standalone.c in make check).
check_PROGRAMS += tests/fuzz/fuzz_markdown tests/fuzz/fuzz_html tests/fuzz/fuzz_pdf
TESTS += tests/fuzz/fuzz_markdown tests/fuzz/fuzz_html tests/fuzz/fuzz_pdf
EXTRA_DIST += tests/fuzz/fuzz_readers.h tests/data/docs/mkpdf.py bench/extract
tests_fuzz_fuzz_markdown_SOURCES = tests/fuzz/fuzz_markdown.c tests/fuzz/standalone.c
tests_fuzz_fuzz_markdown_LDADD = $(TEST_LIBS)
tests_fuzz_fuzz_html_SOURCES = tests/fuzz/fuzz_html.c tests/fuzz/standalone.c
tests_fuzz_fuzz_html_LDADD = $(TEST_LIBS)
tests_fuzz_fuzz_pdf_SOURCES = tests/fuzz/fuzz_pdf.c tests/fuzz/standalone.c
tests_fuzz_fuzz_pdf_LDADD = $(TEST_LIBS)
