# backend: CPU kernels (see Makefile.am)
liblpipe_la_SOURCES += \
	src/backend/cpu/kernels.c src/backend/cpu/kernels.h \
	src/backend/cpu/dot_scalar.c \
	src/backend/cpu/blas.c src/backend/cpu/blas.h \
	src/backend/cpu/matvec.c src/backend/cpu/matvec.h \
	src/backend/cpu/gemm.c src/backend/cpu/gemm.h \
	src/backend/cpu/cpu.c src/backend/cpu/cpu.h src/backend/cpu/attn.c \
	src/backend/backend.c src/backend/backend.h

check_PROGRAMS += tests/check_blas
TESTS += tests/check_blas
tests_check_blas_SOURCES = tests/check_blas.c
tests_check_blas_CFLAGS = $(TEST_CFLAGS)
tests_check_blas_LDADD = $(TEST_LIBS)

# The AVX2 kernels need -mavx2 -mfma -mf16c; only their file gets them, so
# the rest of the library runs on any x86-64 (dispatch is at run time).
if LP_X86_64
noinst_LTLIBRARIES += liblpipe_avx2.la
liblpipe_avx2_la_SOURCES = src/backend/cpu/dot_avx2.c
liblpipe_avx2_la_CFLAGS = $(AM_CFLAGS) -mavx2 -mfma -mf16c
liblpipe_la_LIBADD += liblpipe_avx2.la
endif

# Benchmark: built by make check (so it keeps compiling) but not run there;
# run tests/bench/bench_matvec [seconds] by hand.
check_PROGRAMS += tests/bench/bench_matvec
tests_bench_bench_matvec_SOURCES = tests/bench/bench_matvec.c
tests_bench_bench_matvec_LDADD = liblpipe.la $(LP_LIBS)
