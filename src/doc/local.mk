# doc: the document model, the readers' dispatch and the plain-text reader
# (the Markdown, HTML and PDF readers build from src/doc/readers.mk)
liblpipe_la_SOURCES += \
	src/doc/block.h \
	src/doc/model.c src/doc/model.h \
	src/doc/readers.c src/doc/readers.h \
	src/doc/term.c src/doc/term.h \
	src/doc/textread.c src/doc/textread.h

check_PROGRAMS += tests/check_doc
TESTS += tests/check_doc
tests_check_doc_SOURCES = tests/check_doc.c
tests_check_doc_CFLAGS = $(TEST_CFLAGS)
tests_check_doc_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_textread
TESTS += tests/fuzz/fuzz_textread
tests_fuzz_fuzz_textread_SOURCES = tests/fuzz/fuzz_textread.c tests/fuzz/standalone.c
tests_fuzz_fuzz_textread_LDADD = $(TEST_LIBS)

# Readers chosen by format and the repaired man page from the command line.
TESTS += tests/cli/formats.sh
EXTRA_DIST += tests/cli/formats.sh
