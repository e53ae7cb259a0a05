#!/bin/sh
# check_cuda_ops on the emulated device, seeded random order, seed printed (ops.sh)
exec sh "${top_srcdir:-.}/tests/cuda-emu/ops.sh" random
