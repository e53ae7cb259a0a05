# text: document loading, sentence segmentation, chunking, the terms
# retrieval counts and the evidence an answer stands on
liblpipe_la_SOURCES += \
	src/text/document.c src/text/document.h \
	src/text/terms.c src/text/terms.h \
	src/text/stem.c src/text/stem.h \
	src/text/evidence.c src/text/evidence.h \
	src/text/sentence.c src/text/sentence.h \
	src/text/split.c src/text/split.h \
	src/text/lang.c src/text/lang.h \
	src/text/request.c src/text/request.h \
	src/text/money.c src/text/money.h \
	src/text/sides.c src/text/sides.h

check_PROGRAMS += tests/check_text
TESTS += tests/check_text
tests_check_text_SOURCES = tests/check_text.c
tests_check_text_CFLAGS = $(TEST_CFLAGS)
tests_check_text_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_split
TESTS += tests/check_split
tests_check_split_SOURCES = tests/check_split.c
tests_check_split_CFLAGS = $(TEST_CFLAGS)
tests_check_split_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_document tests/fuzz/fuzz_split
TESTS += tests/fuzz/fuzz_document tests/fuzz/fuzz_split
tests_fuzz_fuzz_document_SOURCES = tests/fuzz/fuzz_document.c tests/fuzz/standalone.c
tests_fuzz_fuzz_document_LDADD = $(TEST_LIBS)
tests_fuzz_fuzz_split_SOURCES = tests/fuzz/fuzz_split.c tests/fuzz/standalone.c
tests_fuzz_fuzz_split_LDADD = $(TEST_LIBS)

# Built, not run: time and memory of a split (see the file's header).
check_PROGRAMS += tests/bench_split
tests_bench_split_SOURCES = tests/bench_split.c
tests_bench_split_LDADD = $(TEST_LIBS)

# text: words and matching, extractive summaries, keyphrases, grounding
liblpipe_la_SOURCES += \
	src/text/scan.c src/text/scan.h \
	src/text/match.c src/text/match.h \
	src/text/words.c src/text/words.h \
	src/text/extractive.c src/text/extractive.h \
	src/text/keyphrase.c src/text/keyphrase.h \
	src/text/points.c src/text/points.h \
	src/text/outline.c src/text/outline.h \
	src/text/choose.c src/text/choose.h \
	src/text/alone.c src/text/alone.h \
	src/text/ground.c src/text/ground.h \
	src/text/focus.c src/text/focus.h

check_PROGRAMS += tests/check_points
TESTS += tests/check_points
tests_check_points_SOURCES = tests/check_points.c
tests_check_points_CFLAGS = $(TEST_CFLAGS)
tests_check_points_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_choose
TESTS += tests/check_choose
tests_check_choose_SOURCES = tests/check_choose.c
tests_check_choose_CFLAGS = $(TEST_CFLAGS)
tests_check_choose_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_outline
TESTS += tests/check_outline
tests_check_outline_SOURCES = tests/check_outline.c
tests_check_outline_CFLAGS = $(TEST_CFLAGS)
tests_check_outline_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_keyphrase
TESTS += tests/check_keyphrase
tests_check_keyphrase_SOURCES = tests/check_keyphrase.c
tests_check_keyphrase_CFLAGS = $(TEST_CFLAGS)
tests_check_keyphrase_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_keyphrase
TESTS += tests/fuzz/fuzz_keyphrase
tests_fuzz_fuzz_keyphrase_SOURCES = tests/fuzz/fuzz_keyphrase.c tests/fuzz/standalone.c
tests_fuzz_fuzz_keyphrase_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_question
TESTS += tests/fuzz/fuzz_question
tests_fuzz_fuzz_question_SOURCES = tests/fuzz/fuzz_question.c tests/fuzz/standalone.c
tests_fuzz_fuzz_question_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_terms
TESTS += tests/fuzz/fuzz_terms
tests_fuzz_fuzz_terms_SOURCES = tests/fuzz/fuzz_terms.c tests/fuzz/standalone.c
tests_fuzz_fuzz_terms_LDADD = $(TEST_LIBS)
