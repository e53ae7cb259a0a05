# stages: the run state and one file per stage kind
liblpipe_la_SOURCES += \
	src/stages/doc.c src/stages/doc.h \
	src/stages/stage.h src/stages/registry.c \
	src/stages/split.c

# stages: summarize and verify
liblpipe_la_SOURCES += \
	src/stages/summarize.c src/stages/verify.c

# stages: the model chain (session, tree/refine summaries, answer, generate,
# truncate)
liblpipe_la_SOURCES += \
	src/model/session.c src/model/session.h \
	src/stages/model_stage.c src/stages/model_stage.h \
	src/stages/summarize_model.c src/stages/summarize_model.h \
	src/stages/answer.c src/stages/generate.c src/stages/truncate.c

check_PROGRAMS += tests/check_summarize
TESTS += tests/check_summarize
tests_check_summarize_SOURCES = tests/check_summarize.c
tests_check_summarize_CFLAGS = $(TEST_CFLAGS)
tests_check_summarize_LDADD = $(TEST_LIBS)
