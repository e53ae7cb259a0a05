#!/bin/sh
# check_cuda_ops on the emulated device built with ASan + UBSan (ops.sh)
exec sh "${top_srcdir:-.}/tests/cuda-emu/ops.sh" asan
