# model: sources and Check suite (see Makefile.am)
# tokenizer: vocabulary, BPE/SPM tokenizers, chat templates, sampler
liblpipe_la_SOURCES += \
	src/model/vocab.c src/model/vocab.h \
	src/model/tokenizer.c src/model/tokenizer.h src/model/tok_impl.h \
	src/model/bpe.c src/model/spm.c
liblpipe_la_SOURCES += \
	src/model/chat.c src/model/chat.h \
	src/model/sampler.c src/model/sampler.h
