/*
 * safetensors.h - a checked reader for the safetensors weight format.
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes of
 * JSON mapping tensor names to {dtype, shape, data_offsets}, then the byte
 * buffer those offsets index. The reader maps the file (tag LP_MEM_WEIGHTS)
 * and trusts nothing in it. On success every tensor satisfies:
 *
 *   - its dtype is one of the names of the format (F32, F16, BF16, F64, I64,
 *     I32, I16, I8, U64, U32, U16, U8, BOOL); an unknown name is refused;
 *   - the product of its shape (at most LP_ST_MAX_DIMS dimensions) times the
 *     element size equals its byte range, computed without overflow;
 *   - its range lies inside the file, and the ranges, sorted, tile the byte
 *     buffer exactly: no overlap, no hole, nothing after the last one (as the
 *     format requires, so a file cannot hide a second payload);
 *   - names are unique; "__metadata__" (an object) is skipped.
 *
 * Only F32, F16 and BF16 can be read as floats (lp_st_read_f32); the other
 * dtypes are listed so that files carrying e.g. I64 position ids still open.
 * Errors are LP_E_MODEL naming the file and the byte offset of the fault.
 */
#ifndef LP_SAFETENSORS_H
#define LP_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LP_ST_MAX_DIMS 8
/* Headers above this are refused (the format's own limit is 100 MB). */
#define LP_ST_MAX_HEADER (100u * 1000u * 1000u)

enum lp_st_dtype {
	LP_ST_F32, LP_ST_F16, LP_ST_BF16, LP_ST_F64,
	LP_ST_I64, LP_ST_I32, LP_ST_I16, LP_ST_I8,
	LP_ST_U64, LP_ST_U32, LP_ST_U16, LP_ST_U8, LP_ST_BOOL,
};

struct lp_st_tensor {
	const char *name;              /* owned by the file object */
	enum lp_st_dtype dtype;
	int n_dims;                    /* 0 for a scalar */
	uint64_t shape[LP_ST_MAX_DIMS];
	uint64_t n_elems;              /* product of shape (1 for a scalar) */
	const unsigned char *data;     /* into the mapping; may be unaligned */
	size_t bytes;
	size_t file_offset;            /* absolute offset of data in the file */
};

struct lp_st; /* opaque */

/*
 * Map and validate `path`. On success *out owns the mapping; free it with
 * lp_st_free. On failure *out is NULL and returns LP_E_IO (cannot open),
 * LP_E_NOMEM, or LP_E_MODEL (malformed; d has the path and byte offset).
 */
enum lp_status lp_st_open(const char *path, struct lp_st **out, struct lp_diag *d);

/*
 * Validate a file already in memory. `data` is borrowed and must outlive the
 * object; `name` (may be NULL) is used in diagnostics. Same results as
 * lp_st_open.
 */
enum lp_status lp_st_open_mem(const void *data, size_t len, const char *name,
			      struct lp_st **out, struct lp_diag *d);

/* Free a file object and its mapping; NULL is a no-op. */
void lp_st_free(struct lp_st *st);

/* Number of tensors, and the i-th in file order (sorted by offset). */
size_t lp_st_count(const struct lp_st *st);
const struct lp_st_tensor *lp_st_tensor(const struct lp_st *st, size_t i);

/* The tensor called `name`, or NULL. */
const struct lp_st_tensor *lp_st_find(const struct lp_st *st, const char *name);

/* Name of a dtype as spelled in the format ("F32", ...). */
const char *lp_st_dtype_name(enum lp_st_dtype dt);
/* Bytes per element. */
size_t lp_st_dtype_size(enum lp_st_dtype dt);

/*
 * Convert all n_elems of `t` to float into out[t->n_elems]. Returns LP_OK,
 * or LP_E_MODEL for a dtype other than F32, F16 or BF16.
 */
enum lp_status lp_st_read_f32(const struct lp_st *st, const struct lp_st_tensor *t,
			      float *out, struct lp_diag *d);

/*
 * Find `name` and check it has `n_dims` dimensions equal to dims[]. Returns
 * LP_OK with *t set, or LP_E_MODEL ("missing tensor 'x'", "tensor 'x' has
 * shape [..], expected [..]").
 */
enum lp_status lp_st_expect(const struct lp_st *st, const char *name, int n_dims,
			    const uint64_t *dims, const struct lp_st_tensor **t,
			    struct lp_diag *d);

/* Path or name given at open (for diagnostics). */
const char *lp_st_path(const struct lp_st *st);

/* IEEE half and bfloat16 to float. */
float lp_st_f16_to_f32(uint16_t h);
float lp_st_bf16_to_f32(uint16_t h);

#endif
