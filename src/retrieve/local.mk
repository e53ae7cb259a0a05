# retrieve: the BM25 index, top-k selection
liblpipe_la_SOURCES += \
	src/retrieve/bm25.c src/retrieve/bm25.h \
	src/retrieve/topk.c src/retrieve/topk.h
# The retrieve stage is listed here rather than in src/stages/local.mk so
# that each stage's line stays in its own module's fragment.
liblpipe_la_SOURCES += src/stages/retrieve.c src/stages/dense.c src/stages/dense.h

check_PROGRAMS += tests/check_retrieve
TESTS += tests/check_retrieve
tests_check_retrieve_SOURCES = tests/check_retrieve.c
tests_check_retrieve_CFLAGS = $(TEST_CFLAGS)
tests_check_retrieve_LDADD = $(TEST_LIBS)

# retrieve (dense): safetensors reader, WordPiece tokenizer, BERT encoder
liblpipe_la_SOURCES += \
	src/retrieve/safetensors.c src/retrieve/safetensors.h \
	src/retrieve/wordpiece.c src/retrieve/wordpiece.h \
	src/retrieve/bert.c src/retrieve/bert.h \
	src/retrieve/vecdev.c src/retrieve/vecdev.h

# A tool for bench/embed: embeds the lines or word chunks of a file.
check_PROGRAMS += bench/embed-texts
bench_embed_texts_SOURCES = bench/embed-texts.c
bench_embed_texts_LDADD = liblpipe.la $(LP_LIBS)
EXTRA_DIST += bench/embed scripts/fetch-embedder

check_PROGRAMS += tests/check_embed tests/check_embed_model
TESTS += tests/check_embed tests/check_embed_model
tests_check_embed_SOURCES = tests/check_embed.c
tests_check_embed_CFLAGS = $(TEST_CFLAGS)
tests_check_embed_LDADD = $(TEST_LIBS)
# The same suite against the real model and tests/data/minilm (exit 77
# without the model).
tests_check_embed_model_SOURCES = tests/check_embed.c
tests_check_embed_model_CFLAGS = $(TEST_CFLAGS) -DCHECK_REAL_MODEL -Wno-unused-variable
tests_check_embed_model_LDADD = $(TEST_LIBS)
EXTRA_DIST += tests/data/minilm

check_PROGRAMS += tests/fuzz/fuzz_safetensors
TESTS += tests/fuzz/fuzz_safetensors
tests_fuzz_fuzz_safetensors_SOURCES = tests/fuzz/fuzz_safetensors.c tests/fuzz/standalone.c
tests_fuzz_fuzz_safetensors_LDADD = $(TEST_LIBS)

# retrieve (hybrid): hashed embedder, embedder interface, vector index,
# fusion, embedding cache
liblpipe_la_SOURCES += \
	src/retrieve/hashembed.c src/retrieve/hashembed.h \
	src/retrieve/embedder.c src/retrieve/embedder.h \
	src/retrieve/vecindex.c src/retrieve/vecindex.h \
	src/retrieve/fusion.c src/retrieve/fusion.h \
	src/retrieve/embcache.c src/retrieve/embcache.h \
	src/retrieve/embscore.c src/retrieve/embscore.h

check_PROGRAMS += tests/check_hybrid
TESTS += tests/check_hybrid
tests_check_hybrid_SOURCES = tests/check_hybrid.c
tests_check_hybrid_CFLAGS = $(TEST_CFLAGS)
tests_check_hybrid_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_hybrid
TESTS += tests/fuzz/fuzz_hybrid
tests_fuzz_fuzz_hybrid_SOURCES = tests/fuzz/fuzz_hybrid.c tests/fuzz/standalone.c
tests_fuzz_fuzz_hybrid_LDADD = $(TEST_LIBS)

# retrieval.device: the scorer on the CPU, the GPU, or refused (exit 3).
TESTS += tests/cli/retrieve-device.sh
EXTRA_DIST += tests/cli/retrieve-device.sh
