# stages: the run state and one file per stage kind
liblpipe_la_SOURCES += \
	src/stages/doc.c src/stages/doc.h \
	src/stages/stage.h src/stages/registry.c \
	src/stages/split.c

# stages: summarize and verify
liblpipe_la_SOURCES += \
	src/stages/summarize.c src/stages/verify.c

check_PROGRAMS += tests/check_summarize
TESTS += tests/check_summarize
tests_check_summarize_SOURCES = tests/check_summarize.c
tests_check_summarize_CFLAGS = $(TEST_CFLAGS)
tests_check_summarize_LDADD = $(TEST_LIBS)
