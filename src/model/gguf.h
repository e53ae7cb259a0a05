/*
 * gguf.h - reading GGUF model files (versions 2 and 3) safely.
 *
 * The file is mapped read-only (and reserved against the memory budget under
 * LP_MEM_WEIGHTS, unless opened for streaming: then the model reserves the
 * part it keeps resident, see model.h); metadata and tensor infos are parsed into tables owned by
 * the struct lp_gguf; tensor data is never copied: lp_gguf_tensor_data
 * points into the mapping.
 *
 * Every length, count, offset, dimension product and type is checked against
 * the file size before use; a hostile file yields LP_E_MODEL with the byte
 * offset of the bad field, never an out-of-bounds read or an overflow.
 * Version 1 files are refused with a message.
 */
#ifndef LP_MODEL_GGUF_H
#define LP_MODEL_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "core/fileio.h"
#include "core/status.h"
#include "quant/quant.h"

enum lp_gguf_type {
	LP_GGUF_UINT8 = 0, LP_GGUF_INT8 = 1, LP_GGUF_UINT16 = 2, LP_GGUF_INT16 = 3,
	LP_GGUF_UINT32 = 4, LP_GGUF_INT32 = 5, LP_GGUF_FLOAT32 = 6, LP_GGUF_BOOL = 7,
	LP_GGUF_STRING = 8, LP_GGUF_ARRAY = 9, LP_GGUF_UINT64 = 10, LP_GGUF_INT64 = 11,
	LP_GGUF_FLOAT64 = 12,
};

/* A string inside the mapping: not NUL-terminated. */
struct lp_gguf_str {
	const char *ptr;
	uint64_t len;
};

/* One metadata value. Arrays of scalars point into the mapping (`data`,
 * element type `elem_type`, `n` elements; multi-byte values are little
 * endian and may be unaligned: read them with memcpy or the getters). */
struct lp_gguf_kv {
	struct lp_gguf_str key;
	enum lp_gguf_type type;
	union {
		uint64_t u64;   /* all unsigned ints and bool */
		int64_t i64;    /* all signed ints */
		double f64;     /* FLOAT32 and FLOAT64 */
		struct lp_gguf_str str;
		struct {
			enum lp_gguf_type elem_type;
			uint64_t n;
			const void *data; /* first element in the file */
			/* STRING arrays only: byte offset of element i's
			 * length field from `data` (owned by the lp_gguf),
			 * so lp_gguf_arr_str is O(1); NULL otherwise */
			const uint64_t *offs;
		} arr;
	} v;
};

struct lp_gguf_tensor {
	struct lp_gguf_str name;
	uint32_t n_dims;
	uint64_t ne[4];            /* elements per dimension, ne[0] fastest; unused = 1 */
	enum lp_qtype type;
	uint64_t offset;           /* from the start of the data section */
	uint64_t bytes;
	const void *data;          /* into the mapping, checked in bounds */
};

struct lp_gguf;

/* Open and validate `path`. On success *out is owned by the caller (free
 * with lp_gguf_close). On failure returns LP_E_IO, LP_E_MODEL or LP_E_NOMEM
 * with `d` naming the file and the byte offset. */
enum lp_status lp_gguf_open(const char *path, struct lp_gguf **out, struct lp_diag *d);
/* Same, but the mapping reserves nothing against the budget: for a model
 * that streams its weights a layer at a time and reserves that window
 * itself (lp_model_load). */
enum lp_status lp_gguf_open_streamed(const char *path, struct lp_gguf **out,
				     struct lp_diag *d);
/* Same over bytes in memory (tests and fuzzing); `data` must outlive it. */
enum lp_status lp_gguf_open_bytes(const char *name, const void *data, size_t len,
				  struct lp_gguf **out, struct lp_diag *d);
void lp_gguf_close(struct lp_gguf *g);

uint32_t lp_gguf_version(const struct lp_gguf *g);
size_t lp_gguf_n_kv(const struct lp_gguf *g);
const struct lp_gguf_kv *lp_gguf_kv_at(const struct lp_gguf *g, size_t i);
/* Metadata lookup by key; NULL when absent. */
const struct lp_gguf_kv *lp_gguf_find(const struct lp_gguf *g, const char *key);

/* Typed getters: return 1 and set *out when `key` exists with a compatible
 * type (any integer type for _u64/_i64, either float type for _f64),
 * else 0 and *out untouched. Strings are copied into `buf` (truncated to
 * cap-1, NUL-terminated). */
int lp_gguf_get_u64(const struct lp_gguf *g, const char *key, uint64_t *out);
int lp_gguf_get_i64(const struct lp_gguf *g, const char *key, int64_t *out);
int lp_gguf_get_f64(const struct lp_gguf *g, const char *key, double *out);
int lp_gguf_get_str(const struct lp_gguf *g, const char *key, char *buf, size_t cap);
/* Array element i (string arrays: a view into the mapping; scalars: as
 * u64/i64/f64). Return 1 on success, 0 when out of range or mistyped. */
int lp_gguf_arr_str(const struct lp_gguf_kv *kv, uint64_t i, struct lp_gguf_str *out);
int lp_gguf_arr_i64(const struct lp_gguf_kv *kv, uint64_t i, int64_t *out);
int lp_gguf_arr_f64(const struct lp_gguf_kv *kv, uint64_t i, double *out);

size_t lp_gguf_n_tensors(const struct lp_gguf *g);
const struct lp_gguf_tensor *lp_gguf_tensor_at(const struct lp_gguf *g, size_t i);
/* Tensor by name; NULL when absent. */
const struct lp_gguf_tensor *lp_gguf_find_tensor(const struct lp_gguf *g, const char *name);

/* 1 when opened with lp_gguf_open_streamed from a regular file: only then
 * may its pages be dropped (lp_gguf_advise). */
int lp_gguf_streamed(const struct lp_gguf *g);
/* lp_file_advise (core/fileio.h) for bytes [p, p + len) of the file; a
 * no-op unless lp_gguf_streamed(g). Returns 0 or -1 (refused: the bytes
 * stay readable). */
int lp_gguf_advise(const struct lp_gguf *g, const void *p, size_t len,
		   enum lp_file_advice advice);
/* lp_file_protect (core/fileio.h) for bytes [p, p + len) of the file:
 * 0 when they may now be written (writable = 1) or are read-only again
 * (0); -1 when they may not be written: g was opened from the caller's
 * bytes or streamed (whose pages are dropped and read again from the
 * file), or the kernel refused. */
int lp_gguf_protect(const struct lp_gguf *g, const void *p, size_t len, int writable);
/* Unmap bytes [p, p + len) of a file mapped whole, streamed or not, from
 * the process (LP_ADVISE_DROP: the next access maps them again from the
 * page cache), for bytes read seldom and a little at a time; a no-op for a
 * file read into memory. Returns 0 or -1 (refused: the bytes stay). */
int lp_gguf_release(const struct lp_gguf *g, const void *p, size_t len);

/* Path given to open, for messages. */
const char *lp_gguf_path(const struct lp_gguf *g);
/* Total bytes of the mapping. */
size_t lp_gguf_file_bytes(const struct lp_gguf *g);
/* Byte offset of the (aligned) data section, and the alignment in use. */
uint64_t lp_gguf_data_offset(const struct lp_gguf *g);
size_t lp_gguf_alignment(const struct lp_gguf *g);
/* Name of a metadata value type ("uint32", "string", ...). */
const char *lp_gguf_type_name(enum lp_gguf_type t);

#endif
