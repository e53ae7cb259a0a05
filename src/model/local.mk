# model: sources and Check suite (see Makefile.am)
# model: forward pass (model views, KV cache, evaluation context)
liblpipe_la_SOURCES += \
	src/model/model.c src/model/model.h \
	src/model/kvcache.c src/model/kvcache.h \
	src/model/forward.c src/model/forward.h
