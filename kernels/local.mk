# kernels: CUDA C kernels of the module lpipe-cuda.so, one file per family,
# each with a C launcher declared in an extern "C" header (the rules that
# compile them with nvcc live in src/backend/local.mk).
CUDA_KERNEL_SOURCES = \
	kernels/elementwise.cu
CUDA_KERNEL_HDRS = \
	kernels/elementwise.h
EXTRA_DIST += $(CUDA_KERNEL_SOURCES) $(CUDA_KERNEL_HDRS) kernels/local.mk
