#!/bin/sh
# ops.sh MODE - tests/check_cuda_ops against one device:
#   forward | reverse | random   the emulated device (tests/cuda-emu/.libs)
#                                with that thread and block order
#   asan                         the emulated device built with ASan + UBSan
#                                (tests/cuda-emu/asan/.libs), forward order
#   cpu | cpu-matvec             the CPU stand-in of check_cuda_ops itself
# The size (LPIPE_TEST_SIZE, check_cuda_ops.c says what each leaves out):
# small for forward and the CPU stand-ins, ops (small, no end-to-end
# tests) for reverse, random and asan; full for all with
# LPIPE_TEST_SIZE=full (make check-cuda-emu-full).
# Exits 77 (skipped) where the emulated module was not built (no CUDA
# headers at configure time).
set -eu
mode=${1:?usage: ops.sh forward|reverse|random|asan|cpu|cpu-matvec}
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
export top_srcdir top_builddir
prog=$top_builddir/tests/check_cuda_ops
case $mode in
forward|cpu|cpu-matvec) size=small ;;
*) size=ops ;;
esac
LPIPE_TEST_SIZE=${LPIPE_TEST_SIZE:-$size}
export LPIPE_TEST_SIZE
# Check's own timeout, per test: the emulated device is slow
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-1200}

case $mode in
cpu|cpu-matvec)
	LPIPE_TEST_DEVICE=$mode exec "$prog"
	;;
forward|reverse)
	dir=$top_builddir/tests/cuda-emu/.libs
	order=$mode
	;;
random)
	dir=$top_builddir/tests/cuda-emu/.libs
	order=$mode
	# an H200's multiprocessor count: the attention splits the GPU gets
	LPIPE_CUDA_EMU_SMS=${LPIPE_CUDA_EMU_SMS:-132}
	export LPIPE_CUDA_EMU_SMS
	;;
asan)
	dir=$top_builddir/tests/cuda-emu/asan/.libs
	order=forward
	# the program is not instrumented: ASan's run time has to come first
	asan=$(${CC:-cc} -print-file-name=libasan.so)
	[ -f "$asan" ] || { echo "skip: no libasan.so"; exit 77; }
	export LD_PRELOAD=$asan
	# leaks are the uninstrumented program's business (check-sanitize)
	export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:allocator_may_return_null=1
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	;;
*)
	echo "ops.sh: unknown mode '$mode'" >&2
	exit 2
	;;
esac
if [ ! -f "$dir/lpipe-cuda.so" ]; then
	echo "skip: the emulated CUDA module was not built ($dir/lpipe-cuda.so)"
	exit 77
fi
LPIPE_MODULE_DIR=$dir LPIPE_CUDA_EMU_ORDER=$order
export LPIPE_MODULE_DIR LPIPE_CUDA_EMU_ORDER
# the emulator's reports (stderr) name kernel, block and thread
exec "$prog"
