# quant: tensor element formats, the reference (de)quantizers
liblpipe_la_SOURCES += \
	src/quant/quant.c src/quant/quant.h src/quant/blocks.h \
	src/quant/rowgroup.c src/quant/rowgroup.h

check_PROGRAMS += tests/check_quant
TESTS += tests/check_quant
tests_check_quant_SOURCES = tests/check_quant.c
tests_check_quant_CFLAGS = $(TEST_CFLAGS)
tests_check_quant_LDADD = $(TEST_LIBS)
