# backend: CPU kernels (see Makefile.am)
liblpipe_la_SOURCES += \
	src/backend/cpu/kernels.c src/backend/cpu/kernels.h \
	src/backend/cpu/dot_scalar.c
