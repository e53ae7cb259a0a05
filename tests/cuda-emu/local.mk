# tests/cuda-emu: the emulated CUDA device. The unchanged kernels/*.cu and
# src/backend/cuda/*.c are built against stand-ins of cudart and cuBLAS into
# a module lpipe-cuda.so of their own (tests/cuda-emu/.libs, and an ASan +
# UBSan one in tests/cuda-emu/asan/.libs), which tests/check_cuda_ops loads
# in place of the real one (LPIPE_MODULE_DIR). See emu.h and runtime.cc.
CUDA_EMU_SRC = tests/cuda-emu/emu.h tests/cuda-emu/emu_rt.h tests/cuda-emu/runtime.cc \
	tests/cuda-emu/cudart.cc tests/cuda-emu/cublas.cc
CUDA_EMU_TESTS = tests/cuda-emu/ops-forward.sh tests/cuda-emu/ops-reverse.sh \
	tests/cuda-emu/ops-random.sh tests/cuda-emu/ops-asan.sh
EXTRA_DIST += $(CUDA_EMU_SRC) tests/cuda-emu/local.mk tests/cuda-emu/ops.sh \
	tests/cuda-emu/planted.cu $(CUDA_EMU_TESTS) tests/cuda-emu/ops-cpu.sh \
	tests/cuda-emu/ops-cpu-matvec.sh tests/cuda-emu/table.sh

# check_cuda_ops against the CPU stand-in of the device (no CUDA needed),
# and against the emulated device in three thread and block orders and
# under the sanitizers (each skips, 77, where the module was not built).
TESTS += tests/cuda-emu/ops-cpu.sh tests/cuda-emu/ops-cpu-matvec.sh $(CUDA_EMU_TESTS)

if LP_CUDA
# The kernels as host C++: each launch k<<<grid, block, shmem, stream>>>(args)
# becomes lp_emu_launch(k, "k", grid, block, shmem, stream)(args) (one launch
# a line, as kernels/ writes them; a launch left over fails the build), and
# #line keeps the kernels' own file and line in every report.
CUDA_EMU_KERNELS = tests/cuda-emu/gen/quant.cc tests/cuda-emu/gen/norm.cc \
	tests/cuda-emu/gen/rope.cc tests/cuda-emu/gen/attention.cc \
	tests/cuda-emu/gen/elementwise.cc tests/cuda-emu/gen/bert.cc \
	tests/cuda-emu/gen/topk.cc tests/cuda-emu/gen/membw.cc
CUDA_EMU_LAUNCH = s/([A-Za-z_][A-Za-z0-9_]*(<[^<>;]*>)?)<<<(.*)>>>\(/lp_emu_launch(\1, "\1", \3)(/
tests/cuda-emu/gen/%.cc: $(top_srcdir)/kernels/%.cu
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN){ echo '#line 1 "$<"'; sed -E '$(CUDA_EMU_LAUNCH)' $<; } >$@.tmp && \
	if grep -n '<<<' $@.tmp; then echo "$<: a launch the rule did not rewrite" >&2; \
		rm -f $@.tmp; exit 1; fi && mv $@.tmp $@
$(CUDA_EMU_KERNELS): $(CUDA_KERNEL_HDRS) $(top_srcdir)/tests/cuda-emu/local.mk
tests/cuda-emu/gen/planted.cc: $(top_srcdir)/tests/cuda-emu/planted.cu $(top_srcdir)/tests/cuda-emu/local.mk
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN){ echo '#line 1 "$<"'; sed -E '$(CUDA_EMU_LAUNCH)' $<; } >$@.tmp && mv $@.tmp $@
CLEANFILES += $(CUDA_EMU_KERNELS) tests/cuda-emu/gen/planted.cc

CUDA_EMU_CPPFLAGS = -I$(top_srcdir)/src -I$(top_srcdir) -I$(top_builddir) \
	-I$(top_srcdir)/kernels -I$(top_srcdir)/tests/cuda-emu $(CUDA_CFLAGS)
CUDA_EMU_CXXFLAGS = -std=c++17 -O2 -g -fPIC -Wall -Wno-unknown-pragmas -Wno-unused-parameter \
	-include $(top_srcdir)/tests/cuda-emu/emu.h
CUDA_EMU_SAN = -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

# The device: runtime, stand-ins and kernels (PIC: it goes into modules).
check_LTLIBRARIES = tests/cuda-emu/libcudaemu.la tests/cuda-emu/libcudaemu_asan.la
tests_cuda_emu_libcudaemu_la_SOURCES = $(CUDA_EMU_SRC)
nodist_tests_cuda_emu_libcudaemu_la_SOURCES = $(CUDA_EMU_KERNELS)
tests_cuda_emu_libcudaemu_la_CPPFLAGS = $(CUDA_EMU_CPPFLAGS)
tests_cuda_emu_libcudaemu_la_CXXFLAGS = $(CUDA_EMU_CXXFLAGS)
tests_cuda_emu_libcudaemu_asan_la_SOURCES = $(CUDA_EMU_SRC)
nodist_tests_cuda_emu_libcudaemu_asan_la_SOURCES = $(CUDA_EMU_KERNELS)
tests_cuda_emu_libcudaemu_asan_la_CPPFLAGS = $(CUDA_EMU_CPPFLAGS)
tests_cuda_emu_libcudaemu_asan_la_CXXFLAGS = $(CUDA_EMU_CXXFLAGS) $(CUDA_EMU_SAN) -O1

# The emulated modules: the backend's host side as built for the GPU,
# linked with the device instead of cudart and cuBLAS.
check_LTLIBRARIES += tests/cuda-emu/lpipe-cuda.la tests/cuda-emu/asan/lpipe-cuda.la
CUDA_EMU_MODFLAGS = -module -avoid-version -shared -rpath $(abs_builddir)/tests/cuda-emu \
	-Wl,--no-undefined
tests_cuda_emu_lpipe_cuda_la_SOURCES = $(CUDA_HOST_SOURCES) $(CUDA_HOST_HDRS)
tests_cuda_emu_lpipe_cuda_la_CPPFLAGS = -I$(top_srcdir)/src -I$(top_srcdir) -I$(top_builddir) \
	$(CUDA_CFLAGS)
tests_cuda_emu_lpipe_cuda_la_CFLAGS = $(AM_CFLAGS) -fPIC
tests_cuda_emu_lpipe_cuda_la_LIBTOOLFLAGS = --tag=disable-static
tests_cuda_emu_lpipe_cuda_la_LDFLAGS = $(CUDA_EMU_MODFLAGS)
tests_cuda_emu_lpipe_cuda_la_LIBADD = tests/cuda-emu/libcudaemu.la -lstdc++
tests_cuda_emu_asan_lpipe_cuda_la_SOURCES = $(CUDA_HOST_SOURCES) $(CUDA_HOST_HDRS)
tests_cuda_emu_asan_lpipe_cuda_la_CPPFLAGS = $(tests_cuda_emu_lpipe_cuda_la_CPPFLAGS)
tests_cuda_emu_asan_lpipe_cuda_la_CFLAGS = $(AM_CFLAGS) -fPIC $(CUDA_EMU_SAN)
tests_cuda_emu_asan_lpipe_cuda_la_LIBTOOLFLAGS = --tag=disable-static
tests_cuda_emu_asan_lpipe_cuda_la_LDFLAGS = $(CUDA_EMU_MODFLAGS) $(CUDA_EMU_SAN)
tests_cuda_emu_asan_lpipe_cuda_la_LIBADD = tests/cuda-emu/libcudaemu_asan.la -lstdc++

# The emulator's own test: planted bugs, each of which it must catch.
check_PROGRAMS += tests/check_cuda_emu
TESTS += tests/check_cuda_emu
tests_check_cuda_emu_SOURCES = tests/check_cuda_emu.c
nodist_tests_check_cuda_emu_SOURCES = tests/cuda-emu/gen/planted.cc
tests_check_cuda_emu_CPPFLAGS = $(CUDA_EMU_CPPFLAGS)
tests_check_cuda_emu_CFLAGS = $(TEST_CFLAGS)
tests_check_cuda_emu_CXXFLAGS = $(CUDA_EMU_CXXFLAGS)
tests_check_cuda_emu_LDADD = tests/cuda-emu/libcudaemu.la $(CHECK_LIBS) -lstdc++

# make check-cuda-emu-full: the full-size suite (MiniLM on 66 texts, the
# 20,000-vector retrieval, 64 greedy tokens) on the emulated device in each
# order and under the sanitizers, then the table of errors per op.
check-cuda-emu-full: $(check_LTLIBRARIES) tests/check_cuda_ops
	for o in forward reverse random asan; do \
		top_srcdir='$(top_srcdir)' top_builddir='$(top_builddir)' LPIPE_TEST_SIZE=full \
		$(SHELL) $(top_srcdir)/tests/cuda-emu/ops.sh $$o >tests/cuda-emu/full-$$o.log 2>&1 || \
			{ tail -30 tests/cuda-emu/full-$$o.log; exit 1; }; \
		echo "check-cuda-emu-full: $$o passed (tests/cuda-emu/full-$$o.log)"; \
	done
	$(SHELL) $(top_srcdir)/tests/cuda-emu/table.sh tests/cuda-emu/full-*.log
endif
.PHONY: check-cuda-emu-full
EXTRA_DIST += tests/check_cuda_emu.c tests/gpu/README
