/*
 * tiny_model.h - writes a small random llama GGUF file for the probe and
 * plan tests (test code, not part of liblpipe; needs gguf_writer.c).
 *
 * The weights are random: the model is good for measuring memory and
 * time, not for its text. No tokenizer is written.
 */
#ifndef LP_TESTS_TINY_MODEL_H
#define LP_TESTS_TINY_MODEL_H

#include <stdint.h>

#include "quant/quant.h"

struct tiny_spec {
	enum lp_qtype type;    /* of every matrix */
	uint32_t embd, heads, kv_heads, ffn, vocab, layers;
	uint32_t n_ctx_train;  /* llama.context_length */
	int tied;              /* no output.weight: the head is the embedding */
};

/* embd 64, 2 heads of 32, 1 KV head, ffn 128, vocab 256, 2 layers, F32,
 * training context 1024. */
struct tiny_spec tiny_default_spec(void);

/* The default with six layers of embd 128 (4 heads, 2 KV heads, ffn 384):
 * enough layers that streamed weights keep well under the file resident. */
struct tiny_spec tiny_layered_spec(void);

/* Write the model to `path`; returns 0, or -1 with errno set. */
int tiny_model_write(const char *path, const struct tiny_spec *s, uint64_t seed);

#endif
