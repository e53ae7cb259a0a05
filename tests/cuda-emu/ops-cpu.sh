#!/bin/sh
# check_cuda_ops against its CPU stand-in of the device (ops.sh)
exec sh "${top_srcdir:-.}/tests/cuda-emu/ops.sh" cpu
