/*
 * fuzz_gguf.c - the GGUF reader on arbitrary bytes: open, then touch every
 * metadata value, array element and tensor byte range it hands out (with
 * ASan a bad bound shows up as a read outside the input).
 * Seeds: tests/fuzz/corpus/fuzz_gguf/ (written by tests/tools/gen_gguf_seeds.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/gguf.h"
#include "quant/quant.h"

static volatile unsigned sink;

static void touch(const void *p, uint64_t n)
{
	const unsigned char *b = p;
	unsigned s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += b[i];
	sink += s;
}

static void walk_kv(const struct lp_gguf_kv *kv)
{
	struct lp_gguf_str s;
	int64_t i64;
	double f;

	touch(kv->key.ptr, kv->key.len);
	if (kv->type == LP_GGUF_STRING)
		touch(kv->v.str.ptr, kv->v.str.len);
	if (kv->type != LP_GGUF_ARRAY)
		return;
	for (uint64_t i = 0; i < kv->v.arr.n && i < 4096; i++) {
		if (lp_gguf_arr_str(kv, i, &s))
			touch(s.ptr, s.len);
		if (lp_gguf_arr_i64(kv, i, &i64))
			sink += (unsigned)i64;
		if (lp_gguf_arr_f64(kv, i, &f))
			sink += (unsigned)(f != f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_gguf *g;
	struct lp_diag d;
	float *row;

	/* a private copy, exactly `size` long, so overreads are caught */
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	if (lp_gguf_open_bytes("fuzz.gguf", copy, size, &g, &d)) {
		free(copy);
		return 0;
	}
	for (size_t i = 0; i < lp_gguf_n_kv(g); i++)
		walk_kv(lp_gguf_kv_at(g, i));
	row = malloc(4096 * sizeof(float));
	for (size_t i = 0; i < lp_gguf_n_tensors(g); i++) {
		const struct lp_gguf_tensor *t = lp_gguf_tensor_at(g, i);
		char name[64];
		touch(t->data, t->bytes);
		/* the first row, when small, through the dequantizer */
		if (t->ne[0] <= 4096)
			lp_dequantize_row(t->type, t->data, row, (size_t)t->ne[0]);
		/* names are unique, so a lookup must find this very tensor */
		if (t->name.len < sizeof(name) && !memchr(t->name.ptr, 0, t->name.len)) {
			memcpy(name, t->name.ptr, t->name.len);
			name[t->name.len] = 0;
			if (lp_gguf_find_tensor(g, name) != t)
				abort();
		}
	}
	free(row);
	lp_gguf_close(g);
	free(copy);
	return 0;
}
