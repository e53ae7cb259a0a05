# backend/cuda: the host side of the module lpipe-cuda.so (C, built with
# the CUDA headers and linked with cudart and cuBLAS; see
# src/backend/local.mk for the rules).
CUDA_HOST_SOURCES = \
	src/backend/cuda/module.c \
	src/backend/cuda/mem.c \
	src/backend/cuda/ops.c
CUDA_HOST_HDRS = src/backend/cuda/cuda.h
EXTRA_DIST += $(CUDA_HOST_SOURCES) $(CUDA_HOST_HDRS) src/backend/cuda/local.mk

# ---- the module lpipe-cuda.so (configure --with-cuda) ----------------------
# Built outside libtool (nvcc takes none of libtool's flags, and the library
# is configured static-only): kernels with nvcc, host files with the C
# compiler and the CUDA headers, linked into .libs/lpipe-cuda.so, where the
# loader looks in the build tree (backend.c), and installed in $(pkglibdir).
if HAVE_CUDA
CUDA_ARCH ?= -arch=sm_90
NVCCFLAGS = -std=c++17 -O3 $(CUDA_ARCH) -Xcompiler -fPIC -Xcompiler -fvisibility=hidden \
	-I$(top_srcdir) -I$(top_srcdir)/src -I$(top_builddir)
CUDA_OBJS = $(patsubst %.cu,cuda-obj/%.o,$(CUDA_KERNEL_SOURCES)) \
	$(patsubst %.c,cuda-obj/%.o,$(CUDA_HOST_SOURCES))
CUDA_DEPS = $(CUDA_KERNEL_HDRS:%=$(top_srcdir)/%) $(CUDA_HOST_HDRS:%=$(top_srcdir)/%) \
	$(top_srcdir)/src/backend/backend.h $(top_srcdir)/src/quant/blocks.h

cuda-obj/%.o: $(top_srcdir)/%.cu $(CUDA_DEPS)
	@mkdir -p $(@D)
	$(AM_V_GEN)$(NVCC) $(NVCCFLAGS) -c $< -o $@

cuda-obj/%.o: $(top_srcdir)/%.c $(CUDA_DEPS)
	@mkdir -p $(@D)
	$(AM_V_CC)$(CC) $(DEFS) -I$(top_srcdir) $(AM_CPPFLAGS) $(CPPFLAGS) $(CUDA_CFLAGS) \
		$(AM_CFLAGS) $(CFLAGS) \
		-fPIC -fvisibility=hidden -c $< -o $@

.libs/lpipe-cuda.so: $(CUDA_OBJS)
	@mkdir -p .libs
	$(AM_V_CCLD)$(CC) -shared -o $@ $(CUDA_OBJS) $(AM_LDFLAGS) $(LDFLAGS) $(CUDA_LIBS) \
		-lstdc++ -Wl,--no-undefined

all-local: .libs/lpipe-cuda.so
install-exec-local: .libs/lpipe-cuda.so
	$(MKDIR_P) $(DESTDIR)$(pkglibdir)
	$(INSTALL_PROGRAM) .libs/lpipe-cuda.so $(DESTDIR)$(pkglibdir)/lpipe-cuda.so
uninstall-local:
	rm -f $(DESTDIR)$(pkglibdir)/lpipe-cuda.so
clean-local:
	rm -rf cuda-obj .libs/lpipe-cuda.so
endif

# The ops of the CUDA backend against the CPU's; skips (77) where the
# module or a GPU is missing, so it is registered in every build.
check_PROGRAMS += tests/check_cuda_ops
TESTS += tests/check_cuda_ops
tests_check_cuda_ops_SOURCES = tests/check_cuda_ops.c \
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
EXTRA_DIST += tests/gpu/run.sh tests/gpu/prepare.sh tests/gpu/check_decode.cu \
	tests/gpu/check_kernels.cu
