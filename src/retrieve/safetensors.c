#include "retrieve/safetensors.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/mem.h"

struct lp_st {
	struct lp_mapped map;  /* owned mapping (map.data NULL when borrowed) */
	const unsigned char *data;
	size_t len;
	char *path;
	json_t *root;          /* keeps tensor names alive */
	struct lp_st_tensor *t;
	size_t n;
};

static const struct {
	const char *name;
	size_t size;
} dtypes[] = {
	[LP_ST_F32] = { "F32", 4 }, [LP_ST_F16] = { "F16", 2 },
	[LP_ST_BF16] = { "BF16", 2 }, [LP_ST_F64] = { "F64", 8 },
	[LP_ST_I64] = { "I64", 8 }, [LP_ST_I32] = { "I32", 4 },
	[LP_ST_I16] = { "I16", 2 }, [LP_ST_I8] = { "I8", 1 },
	[LP_ST_U64] = { "U64", 8 }, [LP_ST_U32] = { "U32", 4 },
	[LP_ST_U16] = { "U16", 2 }, [LP_ST_U8] = { "U8", 1 },
	[LP_ST_BOOL] = { "BOOL", 1 },
};
#define N_DTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

const char *lp_st_dtype_name(enum lp_st_dtype dt)
{
	return (size_t)dt < N_DTYPES ? dtypes[dt].name : "?";
}

size_t lp_st_dtype_size(enum lp_st_dtype dt)
{
	return (size_t)dt < N_DTYPES ? dtypes[dt].size : 0;
}

static int dtype_parse(const char *s, enum lp_st_dtype *dt)
{
	for (size_t i = 0; i < N_DTYPES; i++)
		if (!strcmp(s, dtypes[i].name)) {
			*dt = (enum lp_st_dtype)i;
			return 1;
		}
	return 0;
}

/* A JSON integer in [0, 2^53] as uint64 (json_int_t is signed). */
static int json_u64(const json_t *v, uint64_t *out)
{
	json_int_t x;

	if (!json_is_integer(v))
		return 0;
	x = json_integer_value(v);
	if (x < 0)
		return 0;
	*out = (uint64_t)x;
	return 1;
}

static int mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a && b > UINT64_MAX / a)
		return 0;
	*out = a * b;
	return 1;
}

/* Fill t from one header entry; `base` is the offset of the byte buffer
 * and `buf_len` its length. */
static enum lp_status parse_entry(struct lp_st *st, const char *name, json_t *v,
				  size_t base, size_t buf_len, struct lp_st_tensor *t,
				  struct lp_diag *d)
{
	json_t *dt = json_object_get(v, "dtype");
	json_t *shape = json_object_get(v, "shape");
	json_t *offs = json_object_get(v, "data_offsets");
	uint64_t begin, end, bytes;

	memset(t, 0, sizeof(*t));
	t->name = name;
	if (!json_is_object(v) || !json_is_string(dt) || !json_is_array(shape) ||
	    !json_is_array(offs) || json_array_size(offs) != 2)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 8,
					  "tensor '%s' needs dtype, shape and two data_offsets", name);
	if (!dtype_parse(json_string_value(dt), &t->dtype))
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 8,
					  "tensor '%s' has unknown dtype '%s'", name,
					  json_string_value(dt));
	if (json_array_size(shape) > LP_ST_MAX_DIMS)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 8,
					  "tensor '%s' has more than %d dimensions", name,
					  LP_ST_MAX_DIMS);
	t->n_dims = (int)json_array_size(shape);
	t->n_elems = 1;
	for (int i = 0; i < t->n_dims; i++)
		if (!json_u64(json_array_get(shape, (size_t)i), &t->shape[i]) ||
		    !mul_ok(t->n_elems, t->shape[i], &t->n_elems))
			return lp_diag_set_offset(d, LP_E_MODEL, st->path, 8,
						  "tensor '%s' has a bad or overflowing shape", name);
	if (!json_u64(json_array_get(offs, 0), &begin) || !json_u64(json_array_get(offs, 1), &end) ||
	    begin > end)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 8,
					  "tensor '%s' has bad data_offsets", name);
	if (end > buf_len)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, (long long)base,
					  "tensor '%s' ends at byte %llu of the data, past its end (%zu)",
					  name, (unsigned long long)end, buf_len);
	if (!mul_ok(t->n_elems, dtypes[t->dtype].size, &bytes) || bytes != end - begin)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, (long long)(base + begin),
					  "tensor '%s' shape needs %llu elements but its range holds %llu bytes",
					  name, (unsigned long long)t->n_elems,
					  (unsigned long long)(end - begin));
	t->file_offset = base + (size_t)begin;
	t->data = st->data + t->file_offset;
	t->bytes = (size_t)bytes;
	return LP_OK;
}

static int by_offset(const void *a, const void *b)
{
	const struct lp_st_tensor *x = a, *y = b;

	/* Empty tensors sort before a non-empty one at the same offset. */
	if (x->file_offset != y->file_offset)
		return x->file_offset > y->file_offset ? 1 : -1;
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* Sorted ranges must tile [base, len) exactly. */
static enum lp_status check_tiling(struct lp_st *st, size_t base, struct lp_diag *d)
{
	size_t at = base;

	qsort(st->t, st->n, sizeof(*st->t), by_offset);
	for (size_t i = 0; i < st->n; i++) {
		const struct lp_st_tensor *t = &st->t[i];
		if (t->file_offset < at)
			return lp_diag_set_offset(d, LP_E_MODEL, st->path, (long long)t->file_offset,
						  "tensor '%s' overlaps the tensor before it", t->name);
		if (t->file_offset > at)
			return lp_diag_set_offset(d, LP_E_MODEL, st->path, (long long)at,
						  "unindexed bytes before tensor '%s'", t->name);
		at += t->bytes;
	}
	if (at != st->len)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, (long long)at,
					  "%zu unindexed bytes after the last tensor", st->len - at);
	return LP_OK;
}

static enum lp_status parse_header(struct lp_st *st, struct lp_diag *d)
{
	uint64_t hlen = 0;
	json_error_t jerr;
	const char *key;
	json_t *v;
	size_t base, i = 0;
	enum lp_status s;

	if (st->len < 8)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 0,
					  "file of %zu bytes is too short for a safetensors header", st->len);
	for (int b = 7; b >= 0; b--)
		hlen = hlen << 8 | st->data[b];
	if (hlen > LP_ST_MAX_HEADER)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 0,
					  "header length %llu exceeds the limit of %u bytes",
					  (unsigned long long)hlen, LP_ST_MAX_HEADER);
	if (hlen > st->len - 8)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 0,
					  "header length %llu runs past the end of the file (%zu bytes)",
					  (unsigned long long)hlen, st->len);
	base = 8 + (size_t)hlen;
	st->root = json_loadb((const char *)st->data + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
	if (!st->root)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 8 + (long long)jerr.position,
					  "bad header JSON: %s", jerr.text);
	if (!json_is_object(st->root))
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, 8, "header is not a JSON object");
	st->t = lp_mem_calloc(LP_MEM_OTHER, json_object_size(st->root) + 1, sizeof(*st->t), d);
	if (!st->t)
		return LP_E_NOMEM;
	json_object_foreach(st->root, key, v) {
		if (!strcmp(key, "__metadata__")) {
			if (!json_is_object(v))
				return lp_diag_set_offset(d, LP_E_MODEL, st->path, 8,
							  "'__metadata__' is not an object");
			continue;
		}
		if ((s = parse_entry(st, key, v, base, st->len - base, &st->t[i], d)))
			return s;
		i++;
	}
	st->n = i;
	return check_tiling(st, base, d);
}

static enum lp_status finish_open(struct lp_st *st, const char *name, struct lp_st **out,
				  struct lp_diag *d)
{
	enum lp_status s;

	st->path = lp_mem_strdup(name ? name : "<memory>");
	if (!st->path) {
		lp_st_free(st);
		return lp_diag_set(d, LP_E_NOMEM, name, 0, 0, "out of memory");
	}
	if ((s = parse_header(st, d))) {
		lp_st_free(st);
		return s;
	}
	*out = st;
	return LP_OK;
}

enum lp_status lp_st_open_mem(const void *data, size_t len, const char *name,
			      struct lp_st **out, struct lp_diag *d)
{
	struct lp_st *st;

	*out = NULL;
	st = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*st), d);
	if (!st)
		return LP_E_NOMEM;
	st->data = data;
	st->len = len;
	return finish_open(st, name, out, d);
}

enum lp_status lp_st_open(const char *path, struct lp_st **out, struct lp_diag *d)
{
	struct lp_st *st;
	enum lp_status s;

	*out = NULL;
	st = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*st), d);
	if (!st)
		return LP_E_NOMEM;
	if ((s = lp_file_map(path, LP_FILE_MODEL, LP_MEM_WEIGHTS, &st->map, d))) {
		lp_mem_free(st);
		return s;
	}
	st->data = st->map.data;
	st->len = st->map.len;
	return finish_open(st, path, out, d);
}

void lp_st_free(struct lp_st *st)
{
	if (!st)
		return;
	if (st->map.data)
		lp_file_unmap(&st->map);
	if (st->root)
		json_decref(st->root);
	lp_mem_free(st->t);
	lp_mem_free(st->path);
	lp_mem_free(st);
}

size_t lp_st_count(const struct lp_st *st)
{
	return st->n;
}

const struct lp_st_tensor *lp_st_tensor(const struct lp_st *st, size_t i)
{
	return i < st->n ? &st->t[i] : NULL;
}

const struct lp_st_tensor *lp_st_find(const struct lp_st *st, const char *name)
{
	for (size_t i = 0; i < st->n; i++)
		if (!strcmp(st->t[i].name, name))
			return &st->t[i];
	return NULL;
}

const char *lp_st_path(const struct lp_st *st)
{
	return st->path;
}

float lp_st_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	float f;

	if (exp == 0x1f) {
		bits = sign | 0x7f800000u | man << 13;
	} else if (exp) {
		bits = sign | (exp + 112) << 23 | man << 13;
	} else if (!man) {
		bits = sign;
	} else { /* subnormal: value is man * 2^-24 */
		f = (float)man / 16777216.0f;
		return sign ? -f : f;
	}
	memcpy(&f, &bits, 4);
	return f;
}

float lp_st_bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

enum lp_status lp_st_read_f32(const struct lp_st *st, const struct lp_st_tensor *t,
			      float *out, struct lp_diag *d)
{
	const unsigned char *p = t->data;
	uint16_t h;

	switch (t->dtype) {
	case LP_ST_F32:
		/* The format stores little-endian; so do the hosts we build on. */
		memcpy(out, p, t->bytes);
		return LP_OK;
	case LP_ST_F16:
		for (uint64_t i = 0; i < t->n_elems; i++) {
			h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
			out[i] = lp_st_f16_to_f32(h);
		}
		return LP_OK;
	case LP_ST_BF16:
		for (uint64_t i = 0; i < t->n_elems; i++) {
			h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
			out[i] = lp_st_bf16_to_f32(h);
		}
		return LP_OK;
	default:
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, (long long)t->file_offset,
					  "tensor '%s' has dtype %s; only F32, F16 and BF16 are supported",
					  t->name, lp_st_dtype_name(t->dtype));
	}
}

static void shape_str(char *buf, size_t cap, int n, const uint64_t *dims)
{
	size_t at = 0;

	at += (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < n && at < cap; i++)
		at += (size_t)snprintf(buf + at, cap - at, "%s%llu", i ? ", " : "",
				       (unsigned long long)dims[i]);
	if (at < cap)
		snprintf(buf + at, cap - at, "]");
}

enum lp_status lp_st_expect(const struct lp_st *st, const char *name, int n_dims,
			    const uint64_t *dims, const struct lp_st_tensor **t,
			    struct lp_diag *d)
{
	char have[128], want[128];

	*t = lp_st_find(st, name);
	if (!*t)
		return lp_diag_set_offset(d, LP_E_MODEL, st->path, -1, "missing tensor '%s'", name);
	if ((*t)->n_dims == n_dims && !memcmp((*t)->shape, dims, (size_t)n_dims * sizeof(*dims)))
		return LP_OK;
	shape_str(have, sizeof(have), (*t)->n_dims, (*t)->shape);
	shape_str(want, sizeof(want), n_dims, dims);
	return lp_diag_set_offset(d, LP_E_MODEL, st->path, (long long)(*t)->file_offset,
				  "tensor '%s' has shape %s, expected %s", name, have, want);
}
