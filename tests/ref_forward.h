/*
 * ref_forward.h - a slow, obvious forward pass used only by the tests.
 *
 * It shares nothing with src/model/forward.c but the hyper-parameters and
 * the reference dequantizer: every weight is read from the GGUF by name,
 * dequantized with lp_dequantize_row and widened to double; every position
 * is recomputed from scratch (no KV cache); loops are the textbook ones.
 */
#ifndef LP_TESTS_REF_FORWARD_H
#define LP_TESTS_REF_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "model/gguf.h"
#include "model/model.h"

/* Logits for every position of tokens[0..n): logits[i*n_vocab + v].
 * Returns 0 on success, -1 when a tensor is missing (malloc failures
 * abort: this is test code). */
int ref_forward(const struct lp_gguf *g, const struct lp_hparams *hp,
		const int32_t *tokens, size_t n, double *logits);

#endif
