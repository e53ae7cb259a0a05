# backend/cuda: the host side of the module lpipe-cuda.so (C, built with
# the CUDA headers and linked with cudart and cuBLAS; see
# src/backend/local.mk for the rules).
CUDA_HOST_SOURCES = \
	src/backend/cuda/module.c \
	src/backend/cuda/mem.c \
	src/backend/cuda/ops.c
CUDA_HOST_HEADERS = src/backend/cuda/cuda.h
EXTRA_DIST += $(CUDA_HOST_SOURCES) $(CUDA_HOST_HEADERS) src/backend/cuda/local.mk
