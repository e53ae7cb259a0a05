# Fuzz targets: each tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput
# and is run in `make check` by standalone.c over tests/fuzz/corpus/<name>/
# plus deterministic mutations. Register one as:
#   check_PROGRAMS += tests/fuzz/fuzz_NAME
#   TESTS += tests/fuzz/fuzz_NAME
#   tests_fuzz_fuzz_NAME_SOURCES = tests/fuzz/fuzz_NAME.c tests/fuzz/standalone.c
#   tests_fuzz_fuzz_NAME_LDADD = $(TEST_LIBS)
EXTRA_DIST += tests/fuzz/standalone.c tests/fuzz/corpus
