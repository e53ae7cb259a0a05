/*
 * fuzz_safetensors.c - the safetensors reader and the WordPiece tokenizer on
 * arbitrary bytes.
 *
 * The input is opened as a safetensors file. When it is accepted, every
 * tensor must lie inside the input, have bytes == n_elems * element size,
 * and the float dtypes must convert; the ranges must not overlap. The same
 * bytes are then used as a vocabulary and tokenized with it (when it loads)
 * to check that ids stay in range. Nothing may leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "retrieve/safetensors.h"
#include "retrieve/wordpiece.h"

static void check_tensors(const struct lp_st *st, const uint8_t *data, size_t size)
{
	size_t end_prev = 0;

	for (size_t i = 0; i < lp_st_count(st); i++) {
		const struct lp_st_tensor *t = lp_st_tensor(st, i);
		if (t->data < data || t->bytes > size || t->file_offset > size - t->bytes ||
		    t->data != data + t->file_offset || t->file_offset < end_prev ||
		    t->bytes != t->n_elems * lp_st_dtype_size(t->dtype) || lp_st_find(st, t->name) == NULL)
			abort();
		end_prev = t->file_offset + t->bytes;
		if (t->dtype == LP_ST_F32 || t->dtype == LP_ST_F16 || t->dtype == LP_ST_BF16) {
			float *out = malloc(t->n_elems * sizeof(float) + 1);
			struct lp_diag d;
			if (lp_st_read_f32(st, t, out, &d) != LP_OK)
				abort();
			free(out);
		}
	}
}

static void check_vocab(const uint8_t *data, size_t size)
{
	struct lp_wordpiece *wp;
	struct lp_wordpiece_ids v = { 0 };
	struct lp_diag d;

	if (lp_wordpiece_new((const char *)data, size, "fuzz", &wp, &d) != LP_OK)
		return;
	if (lp_wordpiece_tokenize(wp, (const char *)data, size, &v, &d) == LP_OK)
		for (size_t i = 0; i < v.n; i++)
			if (v.ids[i] < 0 || (size_t)v.ids[i] >= lp_wordpiece_vocab_size(wp))
				abort();
	lp_wordpiece_ids_release(&v);
	lp_wordpiece_free(wp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_st *st;
	struct lp_diag d;

	if (lp_st_open_mem(data, size, "fuzz", &st, &d) == LP_OK) {
		check_tensors(st, data, size);
		lp_st_free(st);
	}
	check_vocab(data, size);
	if (lp_mem_current_total() != 0)
		abort();
	return 0;
}
