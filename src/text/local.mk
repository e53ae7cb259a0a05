# text: document loading, sentence segmentation, chunking
liblpipe_la_SOURCES += \
	src/text/document.h \
	src/text/sentence.c src/text/sentence.h

check_PROGRAMS += tests/check_text
TESTS += tests/check_text
tests_check_text_SOURCES = tests/check_text.c
tests_check_text_CFLAGS = $(TEST_CFLAGS)
tests_check_text_LDADD = $(TEST_LIBS)

# text: words and matching, extractive summaries, keyphrases
liblpipe_la_SOURCES += \
	src/text/match.c src/text/match.h \
	src/text/extractive.c src/text/extractive.h \
	src/text/keyphrase.c src/text/keyphrase.h
