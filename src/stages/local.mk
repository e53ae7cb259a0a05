# stages: the run state and one file per stage kind
liblpipe_la_SOURCES += \
	src/stages/doc.c src/stages/doc.h \
	src/stages/stage.h src/stages/registry.c \
	src/stages/split.c
