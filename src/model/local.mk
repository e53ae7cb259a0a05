# model: GGUF reader, tensor formats (see Makefile.am)
liblpipe_la_SOURCES += \
	src/model/gguf.c src/model/gguf.h \
	src/model/quant.c src/model/quant.h src/model/quant_blocks.h

check_PROGRAMS += tests/check_gguf
TESTS += tests/check_gguf
tests_check_gguf_SOURCES = tests/check_gguf.c \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_gguf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_gguf_CFLAGS = $(TEST_CFLAGS)
tests_check_gguf_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_quant
TESTS += tests/check_quant
tests_check_quant_SOURCES = tests/check_quant.c
tests_check_quant_CFLAGS = $(TEST_CFLAGS)
tests_check_quant_LDADD = $(TEST_LIBS)

# tokenizer: vocabulary, BPE/SPM tokenizers, chat templates, sampler
liblpipe_la_SOURCES += \
	src/model/vocab.c src/model/vocab.h \
	src/model/tokenizer.c src/model/tokenizer.h src/model/tok_impl.h \
	src/model/bpe.c src/model/spm.c \
	src/model/chat.c src/model/chat.h \
	src/model/sampler.c src/model/sampler.h

# model: forward pass (model views, KV cache, evaluation context)
liblpipe_la_SOURCES += \
	src/model/model.c src/model/model.h \
	src/model/kvcache.c src/model/kvcache.h \
	src/model/forward.c src/model/forward.h \
	src/model/gemm.c src/model/gemm.h

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
