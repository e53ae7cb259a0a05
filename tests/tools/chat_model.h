/*
 * chat_model.h - a tiny random llama model with a byte-level BPE vocabulary
 * and a ChatML template, written as a GGUF file for tests of the model
 * stages. Its text is junk, but every piece of the machinery runs: every
 * byte is one token (plus one merge, "a b"), so token counts are easy to
 * reason about, and <|im_end|> ends a turn. Not part of liblpipe.
 */
#ifndef LP_TESTS_CHAT_MODEL_H
#define LP_TESTS_CHAT_MODEL_H

#include <stdint.h>

/* Write the model to `path`; returns 0, or -1 with errno set. The trained
 * context is 4096 tokens. */
int chat_model_write(const char *path, uint64_t seed);
/* Same with `layers` layers instead of 2 (a file mostly made of layers,
 * for the streamed-weights tests). */
int chat_model_write_layers(const char *path, uint64_t seed, uint32_t layers);

#endif
