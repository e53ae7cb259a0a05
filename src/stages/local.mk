# stages: the run state and one file per stage kind
liblpipe_la_SOURCES += \
	src/stages/doc.c src/stages/doc.h \
	src/stages/stage.h src/stages/registry.c src/stages/plan.c src/stages/plan.h \
	src/stages/split.c src/stages/extract.c

# stages: summarize and verify
liblpipe_la_SOURCES += \
	src/stages/summarize.c src/stages/verify.c \
	src/stages/topics.c src/stages/topics.h \
	src/stages/verify_ground.c src/stages/verify_ground.h \
	src/stages/verify_levels.c src/stages/verify_levels.h

# stages: the model chain (tree/refine summaries, answer, generate,
# truncate)
liblpipe_la_SOURCES += \
	src/stages/model_stage.c src/stages/model_stage.h \
	src/stages/summarize_model.c src/stages/summarize_model.h \
	src/stages/summarize_run.h src/stages/summarize_prompts.c \
	src/stages/summarize_step.c src/stages/summarize_tree.c \
	src/stages/summarize_points.c src/stages/summarize_refine.c \
	src/stages/summarize_abstract.c src/stages/summarize_compress.c \
	src/stages/prompts.c src/stages/prompts.h \
	src/stages/answer.c src/stages/generate.c src/stages/truncate.c

check_PROGRAMS += tests/check_summarize
TESTS += tests/check_summarize
tests_check_summarize_SOURCES = tests/check_summarize.c
tests_check_summarize_CFLAGS = $(TEST_CFLAGS)
tests_check_summarize_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_chain
TESTS += tests/check_chain
tests_check_chain_SOURCES = tests/check_chain.c \
	tests/tools/chat_model.c tests/tools/chat_model.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_chain_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_chain_CFLAGS = $(TEST_CFLAGS)
tests_check_chain_LDADD = $(TEST_LIBS)

# Writes the tiny model the CLI test of the model stages runs on.
check_PROGRAMS += tests/tools/gen_chat_model
tests_tools_gen_chat_model_SOURCES = tests/tools/gen_chat_model.c \
	tests/tools/chat_model.c tests/tools/chat_model.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_tools_gen_chat_model_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_tools_gen_chat_model_LDADD = $(TEST_LIBS)
TESTS += tests/cli/chain.sh tests/cli/flat.sh tests/cli/answer.sh tests/cli/by_lang.sh \
	tests/cli/extract.sh tests/cli/quote.sh
EXTRA_DIST += tests/cli/chain.sh tests/cli/flat.sh tests/cli/answer.sh tests/cli/by_lang.sh \
	tests/cli/extract.sh tests/cli/quote.sh
