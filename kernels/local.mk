# kernels: CUDA C kernels of the module lpipe-cuda.so, one file per family
# (the rules that compile them with nvcc live in src/backend/local.mk).
CUDA_KERNEL_SOURCES = \
	kernels/quant.cu \
	kernels/norm.cu \
	kernels/rope.cu \
	kernels/attention.cu \
	kernels/elementwise.cu \
	kernels/bert.cu \
	kernels/topk.cu \
	kernels/membw.cu
CUDA_KERNEL_HDRS = \
	kernels/common.cuh \
	kernels/quant.h kernels/norm.h kernels/rope.h kernels/attention.h \
	kernels/elementwise.h kernels/bert.h kernels/topk.h kernels/membw.h
EXTRA_DIST += $(CUDA_KERNEL_SOURCES) $(CUDA_KERNEL_HDRS) kernels/local.mk
