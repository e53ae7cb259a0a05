# core: errors, arena, buffers, tracked memory, logging, progress, files, UTF-8
liblpipe_la_SOURCES += \
	src/core/status.c src/core/status.h \
	src/core/arena.c src/core/arena.h \
	src/core/buf.c src/core/buf.h \
	src/core/global.c src/core/global.h \
	src/core/mem.c src/core/mem.h \
	src/core/log.c src/core/log.h \
	src/core/progress.c src/core/progress.h \
	src/core/fileio.c src/core/fileio.h \
	src/core/utf8.c src/core/utf8.h \
	src/core/prefix.c src/core/prefix.h \
	src/core/cancel.c src/core/cancel.h \
	src/core/hash.c src/core/hash.h \
	src/core/table.c src/core/table.h

check_PROGRAMS += tests/check_core
TESTS += tests/check_core
tests_check_core_SOURCES = tests/check_core.c
tests_check_core_CFLAGS = $(TEST_CFLAGS)
tests_check_core_LDADD = $(TEST_LIBS)
liblpipe_la_SOURCES += src/core/threadpool.c src/core/threadpool.h
# content hashes for the batch manifest
liblpipe_la_SOURCES += src/core/sha256.c src/core/sha256.h

# Progress on stderr: live under a pseudo-terminal, plain with --progress.
TESTS += tests/cli/progress.sh
EXTRA_DIST += tests/cli/progress.sh
