# text: document loading, sentence segmentation, chunking
liblpipe_la_SOURCES += \
	src/text/document.c src/text/document.h \
	src/text/sentence.c src/text/sentence.h \
	src/text/split.c src/text/split.h

check_PROGRAMS += tests/check_text
TESTS += tests/check_text
tests_check_text_SOURCES = tests/check_text.c
tests_check_text_CFLAGS = $(TEST_CFLAGS)
tests_check_text_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_document tests/fuzz/fuzz_split
TESTS += tests/fuzz/fuzz_document tests/fuzz/fuzz_split
tests_fuzz_fuzz_document_SOURCES = tests/fuzz/fuzz_document.c tests/fuzz/standalone.c
tests_fuzz_fuzz_document_LDADD = $(TEST_LIBS)
tests_fuzz_fuzz_split_SOURCES = tests/fuzz/fuzz_split.c tests/fuzz/standalone.c
tests_fuzz_fuzz_split_LDADD = $(TEST_LIBS)
