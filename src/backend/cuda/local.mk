# backend/cuda: the host side of the module lpipe-cuda.so (C, built with
# the CUDA headers and linked with cudart and cuBLAS; see
# src/backend/local.mk for the rules).
CUDA_HOST_SOURCES = \
	src/backend/cuda/module.c \
	src/backend/cuda/mem.c \
	src/backend/cuda/ops.c
CUDA_HOST_HDRS = src/backend/cuda/cuda.h
EXTRA_DIST += $(CUDA_HOST_SOURCES) $(CUDA_HOST_HDRS) src/backend/cuda/local.mk

# The ops of the CUDA backend against the CPU's; skips (77) where the
# module or a GPU is missing, so it is registered in every build.
check_PROGRAMS += tests/check_cuda_ops
TESTS += tests/check_cuda_ops
tests_check_cuda_ops_SOURCES = tests/check_cuda_ops.c \
	tests/ref_rank.h \
	tests/tools/tiny_model.c tests/tools/tiny_model.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_check_cuda_ops_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_check_cuda_ops_CFLAGS = $(TEST_CFLAGS)
tests_check_cuda_ops_LDADD = $(TEST_LIBS)

# tests/gpu/run.sh's speed measurement (built by make check, run by run.sh).
check_PROGRAMS += tests/gpu/bench_gpu
tests_gpu_bench_gpu_SOURCES = tests/gpu/bench_gpu.c \
	tests/tools/tiny_model.c tests/tools/tiny_model.h \
	tests/tools/gguf_writer.c tests/tools/gguf_writer.h
tests_gpu_bench_gpu_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_gpu_bench_gpu_LDADD = liblpipe.la $(LP_LIBS)
# tests/gpu/run.sh's retrieval figures (encoder chunks/s, query latency).
check_PROGRAMS += tests/gpu/bench_embed
tests_gpu_bench_embed_SOURCES = tests/gpu/bench_embed.c
tests_gpu_bench_embed_LDADD = liblpipe.la $(LP_LIBS)
EXTRA_DIST += tests/gpu/run.sh tests/gpu/prepare.sh tests/gpu/check_decode.cu \
	tests/gpu/check_kernels.cu tests/gpu/bench_st.py tests/gpu/minilm_f16.py
