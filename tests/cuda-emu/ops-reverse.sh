#!/bin/sh
# check_cuda_ops on the emulated device, reverse thread and block order (ops.sh)
exec sh "${top_srcdir:-.}/tests/cuda-emu/ops.sh" reverse
