# config: the pipeline file (YAML tree, typed getters, --set, validation)
liblpipe_la_SOURCES += \
	src/config/node.c src/config/node.h \
	src/config/config.c src/config/config.h \
	src/config/override.c src/config/override.h \
	src/config/pipeline.c src/config/pipeline.h \
	src/config/schema.c src/config/schema.h

check_PROGRAMS += tests/check_config
TESTS += tests/check_config
tests_check_config_SOURCES = tests/check_config.c
tests_check_config_CFLAGS = $(TEST_CFLAGS)
tests_check_config_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_yaml
TESTS += tests/fuzz/fuzz_yaml
tests_fuzz_fuzz_yaml_SOURCES = tests/fuzz/fuzz_yaml.c tests/fuzz/standalone.c
tests_fuzz_fuzz_yaml_LDADD = $(TEST_LIBS)
