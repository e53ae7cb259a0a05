/*
 * gguf_writer.h - a tiny GGUF (v3 by default) writer for tests and fuzz
 * seeds. It is not part of liblpipe.
 *
 * To use it in a test program, add the source to the program's _SOURCES in
 * its local.mk, e.g.
 *     tests_check_model_SOURCES = tests/check_model.c \
 *             tests/tools/gguf_writer.c tests/tools/gguf_writer.h
 * and `#include "tools/gguf_writer.h"` from a file in tests/ (quoted
 * includes look beside the including file first; elsewhere add
 * -I$(top_srcdir)/tests to the program's CPPFLAGS).
 *
 * Usage:
 *     struct gw *w = gw_new();
 *     gw_add_str(w, "general.architecture", "llama");
 *     gw_add_u32(w, "llama.block_count", 2);
 *     gw_add_arr_str(w, "tokenizer.ggml.tokens", toks, n_toks);
 *     gw_add_tensor(w, "token_embd.weight", LP_Q_Q8_0, 2, (uint64_t[]){64, 10}, data);
 *     gw_write_file(w, path);   // or gw_write_mem(w, &bytes, &len)
 *     gw_free(w);
 *
 * Metadata and tensors are written in the order they were added. Tensor
 * data is aligned to general.alignment when such a key (uint32) was added,
 * else to 32. Out of memory aborts: this is test code.
 * Keys and names are copied; the caller keeps ownership of its arrays.
 */
#ifndef LP_TESTS_GGUF_WRITER_H
#define LP_TESTS_GGUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "model/gguf.h"
#include "quant/quant.h"

struct gw;

/* A new, empty writer for GGUF version 3. */
struct gw *gw_new(void);
void gw_free(struct gw *w);
/* Write another version number in the header (2, or a bad one for tests). */
void gw_set_version(struct gw *w, uint32_t version);

void gw_add_u8(struct gw *w, const char *key, uint8_t v);
void gw_add_i8(struct gw *w, const char *key, int8_t v);
void gw_add_u16(struct gw *w, const char *key, uint16_t v);
void gw_add_i16(struct gw *w, const char *key, int16_t v);
void gw_add_u32(struct gw *w, const char *key, uint32_t v);
void gw_add_i32(struct gw *w, const char *key, int32_t v);
void gw_add_f32(struct gw *w, const char *key, float v);
void gw_add_bool(struct gw *w, const char *key, int v);
void gw_add_str(struct gw *w, const char *key, const char *v);
void gw_add_u64(struct gw *w, const char *key, uint64_t v);
void gw_add_i64(struct gw *w, const char *key, int64_t v);
void gw_add_f64(struct gw *w, const char *key, double v);
/* Array of `n` scalars of `elem_type` (not STRING/ARRAY) stored natively
 * (host = little endian) at `data`. */
void gw_add_arr(struct gw *w, const char *key, enum lp_gguf_type elem_type,
		const void *data, uint64_t n);
void gw_add_arr_str(struct gw *w, const char *key, const char *const *v, uint64_t n);
/* A value given as raw bytes after the type field (hostile files, nested
 * arrays). */
void gw_add_raw(struct gw *w, const char *key, enum lp_gguf_type type,
		const void *bytes, size_t len);

/* A tensor from `ne[0]*...*ne[n_dims-1]` floats, stored as `type`
 * (quantized row by row with lp_quantize_row; ne[0] must be a multiple of
 * the block). */
void gw_add_tensor(struct gw *w, const char *name, enum lp_qtype type, uint32_t n_dims,
		   const uint64_t *ne, const float *data);
/* A tensor from ready bytes (`bytes` long); `type` is written as given,
 * so unsupported type numbers can be tested. */
void gw_add_tensor_raw(struct gw *w, const char *name, uint32_t type, uint32_t n_dims,
		       const uint64_t *ne, const void *data, size_t bytes);

/* The file as bytes: *out is malloc'd (caller frees with free()). */
void gw_write_mem(struct gw *w, unsigned char **out, size_t *len);
/* Write the file; returns 0, or -1 with errno set. */
int gw_write_file(struct gw *w, const char *path);

#endif
