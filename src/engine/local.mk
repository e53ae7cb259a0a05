# engine: what outlives one document (model sessions, the dense embedder)
liblpipe_la_SOURCES += src/engine/engine.c src/engine/engine.h \
	src/engine/docstore.c src/engine/docstore.h

check_PROGRAMS += tests/check_engine
TESTS += tests/check_engine
tests_check_engine_SOURCES = tests/check_engine.c \
	tests/tools/chat_model.c tests/tools/chat_model.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_engine_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_engine_CFLAGS = $(TEST_CFLAGS)
tests_check_engine_LDADD = $(TEST_LIBS)

# lpipe batch (src/cli/cmd_batch.c): outputs, manifest, resume, shards,
# merge; SIGKILL at random moments then resume
TESTS += tests/cli/batch.sh tests/cli/batch-kill.sh tests/cli/batch-model.sh
EXTRA_DIST += tests/cli/batch.sh tests/cli/batch-kill.sh tests/cli/batch-model.sh
