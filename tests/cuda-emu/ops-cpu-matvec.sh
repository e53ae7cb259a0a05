#!/bin/sh
# check_cuda_ops against its CPU stand-in, 8-bit matvec at every size (ops.sh)
exec sh "${top_srcdir:-.}/tests/cuda-emu/ops.sh" cpu-matvec
