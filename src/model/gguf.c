/*
 * gguf.c - GGUF v2/v3 reader.
 *
 * Layout (all little endian):
 *   "GGUF" u32 version u64 n_tensors u64 n_kv
 *   n_kv x { string key, u32 type, value }
 *   n_tensors x { string name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset }
 *   padding to general.alignment (default 32), then the data section.
 * A string is u64 length + bytes; an array is u32 element type + u64 count +
 * elements (arrays may nest).
 *
 * Every read goes through struct rd, which checks the remaining bytes first;
 * counts are bounded by the bytes left, and the tables grow only as entries
 * are actually parsed, so a hostile count fails at the end of the data
 * instead of asking for memory it claims.
 */
#include "model/gguf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "core/fileio.h"
#include "core/mem.h"

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4
#define GGUF_MAX_ARRAY_DEPTH 8

struct lp_gguf {
	char *path;
	struct lp_mapped map;       /* when opened from a file */
	int mapped;
	int streamed;               /* mapped without a reservation */
	const unsigned char *base;  /* file bytes */
	size_t len;
	uint32_t version;
	size_t alignment;
	uint64_t data_offset;

	size_t n_kv, kv_cap;
	struct lp_gguf_kv *kv;
	size_t n_tensors, tensor_cap;
	struct lp_gguf_tensor *tensors;
	/* open-addressing hash tables of indexes + 1 (0 = empty) */
	uint32_t *kv_hash, *tensor_hash;
	size_t kv_hash_cap, tensor_hash_cap;
};

/* A bounds-checked cursor over the file. */
struct rd {
	const unsigned char *p;
	size_t len;
	size_t pos;
	const char *name;
	struct lp_diag *d;
};

static enum lp_status fail_at(struct rd *r, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum lp_status fail_at(struct rd *r, size_t off, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return lp_diag_set_offset(r->d, LP_E_MODEL, r->name, (long long)off, "%s", msg);
}

static size_t rd_left(const struct rd *r)
{
	return r->len - r->pos;
}

static enum lp_status rd_need(struct rd *r, uint64_t n, const char *what)
{
	if (n > rd_left(r))
		return fail_at(r, r->pos, "truncated file: %s needs %llu bytes, %zu left",
			       what, (unsigned long long)n, rd_left(r));
	return LP_OK;
}

static uint64_t load_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static enum lp_status rd_uint(struct rd *r, int bytes, uint64_t *out, const char *what)
{
	enum lp_status s = rd_need(r, (uint64_t)bytes, what);

	if (s)
		return s;
	*out = load_le(r->p + r->pos, bytes);
	r->pos += (size_t)bytes;
	return LP_OK;
}

static enum lp_status rd_u32(struct rd *r, uint32_t *out, const char *what)
{
	uint64_t v;
	enum lp_status s = rd_uint(r, 4, &v, what);

	if (!s)
		*out = (uint32_t)v;
	return s;
}

/* Entries whose table is allocated without first checking that the file
 * can hold them (a few hundred KiB at most). */
#define LP_GGUF_SMALL_COUNT 4096

static enum lp_status rd_str(struct rd *r, struct lp_gguf_str *out, const char *what)
{
	size_t at = r->pos;
	uint64_t n;
	enum lp_status s = rd_uint(r, 8, &n, what);

	if (s)
		return s;
	if (n > rd_left(r))
		return fail_at(r, at, "%s: string length %llu runs past the end of the file",
			       what, (unsigned long long)n);
	out->ptr = (const char *)r->p + r->pos;
	out->len = n;
	r->pos += (size_t)n;
	return LP_OK;
}

const char *lp_gguf_type_name(enum lp_gguf_type t)
{
	static const char *const names[] = {
		"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
		"bool", "string", "array", "uint64", "int64", "float64",
	};
	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

/* Bytes of a fixed-size scalar type; 0 for string, array and unknown. */
static int scalar_bytes(uint32_t t)
{
	switch (t) {
	case LP_GGUF_UINT8: case LP_GGUF_INT8: case LP_GGUF_BOOL: return 1;
	case LP_GGUF_UINT16: case LP_GGUF_INT16: return 2;
	case LP_GGUF_UINT32: case LP_GGUF_INT32: case LP_GGUF_FLOAT32: return 4;
	case LP_GGUF_UINT64: case LP_GGUF_INT64: case LP_GGUF_FLOAT64: return 8;
	}
	return 0;
}

static int is_signed(uint32_t t)
{
	return t == LP_GGUF_INT8 || t == LP_GGUF_INT16 || t == LP_GGUF_INT32 ||
	       t == LP_GGUF_INT64;
}

static int is_float(uint32_t t)
{
	return t == LP_GGUF_FLOAT32 || t == LP_GGUF_FLOAT64;
}

/* Decode a scalar at p of type t into the kv union. */
static void decode_scalar(uint32_t t, const unsigned char *p, struct lp_gguf_kv *kv)
{
	int n = scalar_bytes(t);
	uint64_t raw = load_le(p, n);

	if (t == LP_GGUF_FLOAT32) {
		float f;
		uint32_t u = (uint32_t)raw;
		memcpy(&f, &u, 4);
		kv->v.f64 = f;
	} else if (t == LP_GGUF_FLOAT64) {
		memcpy(&kv->v.f64, &raw, 8);
	} else if (is_signed(t)) {
		int shift = 64 - 8 * n;
		/* sign-extend through the top bits */
		kv->v.i64 = (int64_t)(raw << shift) >> shift;
	} else {
		kv->v.u64 = raw;
	}
}

static enum lp_status skip_array(struct rd *r, int depth, uint32_t *elem_type,
				 uint64_t *count, const char *key);

/* Skip one array element of type t (validating it). */
static enum lp_status skip_value(struct rd *r, uint32_t t, int depth, const char *key)
{
	struct lp_gguf_str str;
	uint32_t et;
	uint64_t n;
	enum lp_status s;

	if (t == LP_GGUF_STRING)
		return rd_str(r, &str, key);
	if (t == LP_GGUF_ARRAY)
		return skip_array(r, depth + 1, &et, &n, key);
	if ((s = rd_need(r, (uint64_t)scalar_bytes(t), key)))
		return s;
	if (t == LP_GGUF_BOOL && r->p[r->pos] > 1)
		return fail_at(r, r->pos, "'%s': bool value %u is neither 0 nor 1", key,
			       r->p[r->pos]);
	r->pos += (size_t)scalar_bytes(t);
	return LP_OK;
}

/* Read an array header and skip (validate) its elements. */
static enum lp_status skip_array(struct rd *r, int depth, uint32_t *elem_type,
				 uint64_t *count, const char *key)
{
	size_t at = r->pos;
	uint32_t et;
	uint64_t n;
	enum lp_status s;
	int eb;

	if (depth > GGUF_MAX_ARRAY_DEPTH)
		return fail_at(r, at, "'%s': arrays nested deeper than %d", key,
			       GGUF_MAX_ARRAY_DEPTH);
	if ((s = rd_u32(r, &et, key)) || (s = rd_uint(r, 8, &n, key)))
		return s;
	if (et > LP_GGUF_FLOAT64)
		return fail_at(r, at, "'%s': unknown array element type %u", key, et);
	eb = scalar_bytes(et);
	/* the smallest element: a scalar, an empty string (8), an empty array (12) */
	{
		uint64_t min = eb ? (uint64_t)eb : et == LP_GGUF_STRING ? 8 : 12;
		if (n > rd_left(r) / min)
			return fail_at(r, at, "'%s': array of %llu elements does not fit in the "
				       "%zu bytes left", key, (unsigned long long)n, rd_left(r));
	}
	*elem_type = et;
	*count = n;
	if (eb && et != LP_GGUF_BOOL) {
		r->pos += (size_t)(n * (uint64_t)eb);
		return LP_OK;
	}
	for (uint64_t i = 0; i < n; i++)
		if ((s = skip_value(r, et, depth, key)))
			return s;
	return LP_OK;
}

/* Key text for messages (NUL-terminated, truncated). */
static const char *key_text(const struct lp_gguf_str *k, char *buf, size_t cap)
{
	size_t n = k->len < cap - 1 ? (size_t)k->len : cap - 1;

	memcpy(buf, k->ptr, n);
	buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = '?';
	return buf;
}

static uint64_t hash_bytes(const char *p, size_t n)
{
	return lp_hash_fnv1a(LP_HASH_FNV_BASIS, p, n);
}

static int str_eq(const struct lp_gguf_str *s, const char *p, size_t n)
{
	return s->len == n && !memcmp(s->ptr, p, n);
}

/* Find the slot for name in a table; *found = index + 1 or 0. */
static size_t hash_slot(const uint32_t *tab, size_t cap, const char *p, size_t n,
			const void *items, size_t stride, size_t name_off, uint32_t *found)
{
	size_t i = (size_t)hash_bytes(p, n) & (cap - 1);

	for (;; i = (i + 1) & (cap - 1)) {
		const struct lp_gguf_str *s;
		if (!tab[i]) {
			*found = 0;
			return i;
		}
		s = (const void *)((const char *)items + (tab[i] - 1) * stride + name_off);
		if (str_eq(s, p, n)) {
			*found = tab[i];
			return i;
		}
	}
}

/* Make room for `need` elements of `elem` bytes in a tracked table. */
static enum lp_status grow(void **p, size_t *cap, size_t need, size_t elem, struct lp_diag *d)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return LP_OK;
	while (c < need)
		c *= 2;
	q = lp_mem_realloc(LP_MEM_OTHER, *p, c * elem, d);
	if (!q)
		return LP_E_NOMEM;
	memset((char *)q + *cap * elem, 0, (c - *cap) * elem);
	*p = q;
	*cap = c;
	return LP_OK;
}

static enum lp_status hash_alloc(size_t n, uint32_t **tab, size_t *cap, struct lp_diag *d)
{
	size_t c = 16;

	while (c < 2 * n)
		c *= 2;
	*tab = lp_mem_calloc(LP_MEM_OTHER, c, sizeof(**tab), d);
	*cap = c;
	return *tab ? LP_OK : LP_E_NOMEM;
}

/* Build the per-element offsets of a string array. */
static enum lp_status index_strings(struct rd *r, struct lp_gguf_kv *kv)
{
	const unsigned char *base = kv->v.arr.data;
	uint64_t *offs, at = 0;

	if (!kv->v.arr.n)
		return LP_OK;
	offs = lp_mem_alloc(LP_MEM_OTHER, (size_t)kv->v.arr.n * sizeof(*offs), r->d);
	if (!offs)
		return LP_E_NOMEM;
	/* the array was validated by skip_array: lengths are in bounds */
	for (uint64_t i = 0; i < kv->v.arr.n; i++) {
		offs[i] = at;
		at += 8 + load_le(base + at, 8);
	}
	kv->v.arr.offs = offs;
	return LP_OK;
}

static enum lp_status parse_kv(struct rd *r, struct lp_gguf_kv *kv)
{
	char key[128];
	uint32_t t;
	enum lp_status s;

	if ((s = rd_str(r, &kv->key, "metadata key")))
		return s;
	key_text(&kv->key, key, sizeof(key));
	if ((s = rd_u32(r, &t, key)))
		return s;
	if (t > LP_GGUF_FLOAT64)
		return fail_at(r, r->pos - 4, "'%s': unknown metadata value type %u", key, t);
	kv->type = t;
	if (t == LP_GGUF_STRING)
		return rd_str(r, &kv->v.str, key);
	if (t == LP_GGUF_ARRAY) {
		size_t hdr = r->pos;
		if ((s = skip_array(r, 1, &t, &kv->v.arr.n, key)))
			return s;
		kv->v.arr.elem_type = t;
		kv->v.arr.data = r->p + hdr + 12;
		kv->v.arr.offs = NULL;
		return t == LP_GGUF_STRING ? index_strings(r, kv) : LP_OK;
	}
	if ((s = rd_need(r, (uint64_t)scalar_bytes(t), key)))
		return s;
	if (t == LP_GGUF_BOOL && r->p[r->pos] > 1)
		return fail_at(r, r->pos, "'%s': bool value %u is neither 0 nor 1", key,
			       r->p[r->pos]);
	decode_scalar(t, r->p + r->pos, kv);
	r->pos += (size_t)scalar_bytes(t);
	return LP_OK;
}

/* Byte offset in the file of a string's length field. */
static size_t str_at(const struct rd *r, const struct lp_gguf_str *str)
{
	return (size_t)((const unsigned char *)str->ptr - r->p) - 8;
}

static enum lp_status parse_kvs(struct lp_gguf *g, struct rd *r, uint64_t n_kv)
{
	enum lp_status s;
	uint32_t found;

	for (uint64_t i = 0; i < n_kv; i++) {
		if ((s = grow((void **)&g->kv, &g->kv_cap, g->n_kv + 1, sizeof(*g->kv), r->d)))
			return s;
		/* counted first, so that close() frees a half-parsed string index */
		s = parse_kv(r, &g->kv[g->n_kv++]);
		if (s)
			return s;
	}
	if ((s = hash_alloc(g->n_kv, &g->kv_hash, &g->kv_hash_cap, r->d)))
		return s;
	for (size_t i = 0; i < g->n_kv; i++) {
		const struct lp_gguf_kv *kv = &g->kv[i];
		char key[128];
		size_t slot = hash_slot(g->kv_hash, g->kv_hash_cap, kv->key.ptr,
					(size_t)kv->key.len, g->kv, sizeof(*kv),
					offsetof(struct lp_gguf_kv, key), &found);
		if (found)
			return fail_at(r, str_at(r, &kv->key), "duplicate metadata key '%s'",
				       key_text(&kv->key, key, sizeof(key)));
		g->kv_hash[slot] = (uint32_t)i + 1;
	}
	return LP_OK;
}

static enum lp_status read_alignment(struct lp_gguf *g, struct rd *r)
{
	const struct lp_gguf_kv *kv = lp_gguf_find(g, "general.alignment");
	uint64_t a;

	g->alignment = GGUF_DEFAULT_ALIGNMENT;
	if (!kv)
		return LP_OK;
	if (kv->type != LP_GGUF_UINT32 && kv->type != LP_GGUF_UINT64 &&
	    kv->type != LP_GGUF_UINT16 && kv->type != LP_GGUF_UINT8)
		return fail_at(r, (size_t)(kv->key.ptr - (const char *)r->p),
			       "'general.alignment' has type %s, expected uint32",
			       lp_gguf_type_name(kv->type));
	a = kv->v.u64;
	if (a == 0 || (a & (a - 1)) || a > (1u << 30))
		return fail_at(r, (size_t)(kv->key.ptr - (const char *)r->p),
			       "'general.alignment' is %llu, not a power of two",
			       (unsigned long long)a);
	g->alignment = (size_t)a;
	return LP_OK;
}

static enum lp_status tensor_bytes(struct rd *r, size_t at, const struct lp_gguf_tensor *t,
				   const char *name, uint64_t *bytes)
{
	uint64_t total = lp_qtype_row_bytes(t->type, t->ne[0]);

	if (!total)
		return fail_at(r, at, "tensor '%s': row of %llu elements is not a multiple "
			       "of the %s block (%zu)", name, (unsigned long long)t->ne[0],
			       lp_qtype_name(t->type), lp_qtype_block_elems(t->type));
	for (int i = 1; i < GGUF_MAX_DIMS; i++) {
		if (total > UINT64_MAX / t->ne[i])
			return fail_at(r, at, "tensor '%s': size overflows", name);
		total *= t->ne[i];
	}
	if (total > r->len)
		return fail_at(r, at, "tensor '%s': %llu bytes do not fit in the file (size %zu)",
			       name, (unsigned long long)total, r->len);
	*bytes = total;
	return LP_OK;
}

static enum lp_status parse_tensor_info(struct rd *r, struct lp_gguf_tensor *t)
{
	char name[128];
	uint32_t type;
	uint64_t nel = 1;
	size_t at = r->pos;
	enum lp_status s;

	if ((s = rd_str(r, &t->name, "tensor name")))
		return s;
	key_text(&t->name, name, sizeof(name));
	if ((s = rd_u32(r, &t->n_dims, name)))
		return s;
	if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS)
		return fail_at(r, r->pos - 4, "tensor '%s': %u dimensions (1 to %d allowed)",
			       name, t->n_dims, GGUF_MAX_DIMS);
	for (int i = 0; i < GGUF_MAX_DIMS; i++)
		t->ne[i] = 1;
	for (uint32_t i = 0; i < t->n_dims; i++) {
		size_t dim_at = r->pos;
		if ((s = rd_uint(r, 8, &t->ne[i], name)))
			return s;
		if (t->ne[i] == 0 || t->ne[i] > INT64_MAX)
			return fail_at(r, dim_at, "tensor '%s': dimension %u is %llu", name, i,
				       (unsigned long long)t->ne[i]);
		if (nel > UINT64_MAX / t->ne[i])
			return fail_at(r, dim_at, "tensor '%s': element count overflows", name);
		nel *= t->ne[i];
	}
	if ((s = rd_u32(r, &type, name)))
		return s;
	if (!lp_qtype_supported(type))
		return fail_at(r, r->pos - 4, "tensor '%s': unsupported tensor type %u", name,
			       type);
	t->type = (enum lp_qtype)type;
	if ((s = rd_uint(r, 8, &t->offset, name)))
		return s;
	return tensor_bytes(r, at, t, name, &t->bytes);
}

static enum lp_status parse_tensors(struct lp_gguf *g, struct rd *r, uint64_t n_tensors)
{
	enum lp_status s;
	uint32_t found;

	for (uint64_t i = 0; i < n_tensors; i++) {
		if ((s = grow((void **)&g->tensors, &g->tensor_cap, g->n_tensors + 1,
			      sizeof(*g->tensors), r->d)))
			return s;
		if ((s = parse_tensor_info(r, &g->tensors[g->n_tensors])))
			return s;
		g->n_tensors++;
	}
	if ((s = hash_alloc(g->n_tensors, &g->tensor_hash, &g->tensor_hash_cap, r->d)))
		return s;
	for (size_t i = 0; i < g->n_tensors; i++) {
		const struct lp_gguf_tensor *t = &g->tensors[i];
		char name[128];
		size_t slot = hash_slot(g->tensor_hash, g->tensor_hash_cap, t->name.ptr,
					(size_t)t->name.len, g->tensors, sizeof(*t),
					offsetof(struct lp_gguf_tensor, name), &found);
		if (found)
			return fail_at(r, str_at(r, &t->name), "duplicate tensor name '%s'",
				       key_text(&t->name, name, sizeof(name)));
		g->tensor_hash[slot] = (uint32_t)i + 1;
	}
	return LP_OK;
}

/* Place every tensor in the data section and check it lies in the file. */
static enum lp_status place_tensors(struct lp_gguf *g, struct rd *r)
{
	uint64_t a = g->alignment;

	g->data_offset = ((uint64_t)r->pos + a - 1) & ~(a - 1);
	for (size_t i = 0; i < g->n_tensors; i++) {
		struct lp_gguf_tensor *t = &g->tensors[i];
		char name[128];
		uint64_t begin = g->data_offset + t->offset, end = begin + t->bytes;
		size_t at = str_at(r, &t->name);

		key_text(&t->name, name, sizeof(name));
		if (t->offset % a)
			return fail_at(r, at, "tensor '%s': offset %llu is not a multiple "
				       "of the alignment %llu", name,
				       (unsigned long long)t->offset, (unsigned long long)a);
		if (t->offset > r->len || begin > r->len || end < begin || end > r->len)
			return fail_at(r, at, "tensor '%s': data [%llu, %llu) outside the "
				       "file (size %zu)", name,
				       (unsigned long long)(t->offset > r->len ? t->offset : begin),
				       (unsigned long long)(t->offset > r->len ? t->offset + t->bytes
							    : end), r->len);
		t->data = r->p + begin;
	}
	return LP_OK;
}

static enum lp_status parse_header(struct lp_gguf *g, struct rd *r, uint64_t *n_tensors,
				   uint64_t *n_kv)
{
	enum lp_status s;

	if (r->len < 4 || memcmp(r->p, "GGUF", 4))
		return fail_at(r, 0, "not a GGUF file (bad magic)");
	r->pos = 4;
	if ((s = rd_u32(r, &g->version, "version")))
		return s;
	if (g->version == 1)
		return fail_at(r, 4, "GGUF version 1 is not supported");
	if ((g->version & 0xffff) == 0 && g->version)
		return fail_at(r, 4, "big-endian GGUF files are not supported");
	if (g->version != 2 && g->version != 3)
		return fail_at(r, 4, "unsupported GGUF version %u", g->version);
	if ((s = rd_uint(r, 8, n_tensors, "tensor count")) ||
	    (s = rd_uint(r, 8, n_kv, "metadata count")))
		return s;
	/* a key-value takes at least 13 bytes, a tensor info at least 32: a
	 * count that cannot fit is refused before its table is allocated. A
	 * small count is left to the parse, which names the field that runs
	 * past the end (a string length, say) rather than the count. */
	if (*n_kv > LP_GGUF_SMALL_COUNT && *n_kv > rd_left(r) / 13)
		return fail_at(r, 16, "metadata count %llu does not fit in the file",
			       (unsigned long long)*n_kv);
	if (*n_tensors > LP_GGUF_SMALL_COUNT && *n_tensors > rd_left(r) / 32)
		return fail_at(r, 8, "tensor count %llu does not fit in the file",
			       (unsigned long long)*n_tensors);
	return LP_OK;
}

static enum lp_status parse(struct lp_gguf *g, struct lp_diag *d)
{
	struct rd r = { g->base, g->len, 0, g->path, d };
	uint64_t n_tensors = 0, n_kv = 0;
	enum lp_status s;

	if ((s = parse_header(g, &r, &n_tensors, &n_kv)) || (s = parse_kvs(g, &r, n_kv)) ||
	    (s = read_alignment(g, &r)) || (s = parse_tensors(g, &r, n_tensors)))
		return s;
	return place_tensors(g, &r);
}

static enum lp_status open_common(struct lp_gguf *g, struct lp_gguf **out, struct lp_diag *d)
{
	enum lp_status s = parse(g, d);

	if (s) {
		lp_gguf_close(g);
		return s;
	}
	*out = g;
	return LP_OK;
}

static struct lp_gguf *gguf_new(const char *name, struct lp_diag *d)
{
	struct lp_gguf *g = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*g), d);

	if (!g)
		return NULL;
	g->path = lp_mem_strdup(name ? name : "<memory>");
	if (!g->path) {
		lp_mem_free(g);
		lp_diag_set(d, LP_E_NOMEM, name, 0, 0, "out of memory");
		return NULL;
	}
	return g;
}

static enum lp_status open_file(const char *path, int streamed, struct lp_gguf **out,
				struct lp_diag *d)
{
	struct lp_gguf *g;
	enum lp_status s;

	*out = NULL;
	if (!(g = gguf_new(path, d)))
		return LP_E_NOMEM;
	s = streamed ? lp_file_map_unreserved(path, LP_FILE_MODEL, LP_MEM_WEIGHTS, &g->map, d)
		     : lp_file_map(path, LP_FILE_MODEL, LP_MEM_WEIGHTS, &g->map, d);
	if (s) {
		lp_gguf_close(g);
		return s;
	}
	g->mapped = 1;
	/* a pipe was read into tracked memory: nothing there can be dropped */
	g->streamed = streamed && g->map.is_mmap;
	g->base = g->map.data;
	g->len = g->map.len;
	return open_common(g, out, d);
}

enum lp_status lp_gguf_open(const char *path, struct lp_gguf **out, struct lp_diag *d)
{
	return open_file(path, 0, out, d);
}

enum lp_status lp_gguf_open_streamed(const char *path, struct lp_gguf **out,
				     struct lp_diag *d)
{
	return open_file(path, 1, out, d);
}

int lp_gguf_streamed(const struct lp_gguf *g)
{
	return g->streamed;
}

int lp_gguf_advise(const struct lp_gguf *g, const void *p, size_t len,
		   enum lp_file_advice advice)
{
	const unsigned char *b = p;

	if (!g->streamed || b < g->base || b > g->base + g->len)
		return 0;
	return lp_file_advise(&g->map, (size_t)(b - g->base), len, advice);
}

int lp_gguf_protect(const struct lp_gguf *g, const void *p, size_t len, int writable)
{
	const unsigned char *b = p;

	if (!g->mapped || g->streamed || b < g->base || len > g->len || b > g->base + g->len - len)
		return -1;
	return lp_file_protect(&g->map, (size_t)(b - g->base), len, writable);
}

int lp_gguf_release(const struct lp_gguf *g, const void *p, size_t len)
{
	const unsigned char *b = p;

	if (b < g->base || b > g->base + g->len)
		return 0;
	return lp_file_advise(&g->map, (size_t)(b - g->base), len, LP_ADVISE_DROP);
}

enum lp_status lp_gguf_open_bytes(const char *name, const void *data, size_t len,
				  struct lp_gguf **out, struct lp_diag *d)
{
	struct lp_gguf *g;

	*out = NULL;
	if (!(g = gguf_new(name, d)))
		return LP_E_NOMEM;
	g->base = data;
	g->len = data ? len : 0;
	return open_common(g, out, d);
}

void lp_gguf_close(struct lp_gguf *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_kv; i++)
		if (g->kv[i].type == LP_GGUF_ARRAY)
			lp_mem_free((void *)g->kv[i].v.arr.offs);
	lp_mem_free(g->kv);
	lp_mem_free(g->tensors);
	lp_mem_free(g->kv_hash);
	lp_mem_free(g->tensor_hash);
	if (g->mapped)
		lp_file_unmap(&g->map);
	lp_mem_free(g->path);
	lp_mem_free(g);
}

uint32_t lp_gguf_version(const struct lp_gguf *g) { return g->version; }
size_t lp_gguf_n_kv(const struct lp_gguf *g) { return g->n_kv; }
size_t lp_gguf_n_tensors(const struct lp_gguf *g) { return g->n_tensors; }
const char *lp_gguf_path(const struct lp_gguf *g) { return g->path; }
size_t lp_gguf_file_bytes(const struct lp_gguf *g) { return g->len; }
uint64_t lp_gguf_data_offset(const struct lp_gguf *g) { return g->data_offset; }
size_t lp_gguf_alignment(const struct lp_gguf *g) { return g->alignment; }

const struct lp_gguf_kv *lp_gguf_kv_at(const struct lp_gguf *g, size_t i)
{
	return i < g->n_kv ? &g->kv[i] : NULL;
}

const struct lp_gguf_tensor *lp_gguf_tensor_at(const struct lp_gguf *g, size_t i)
{
	return i < g->n_tensors ? &g->tensors[i] : NULL;
}

const struct lp_gguf_kv *lp_gguf_find(const struct lp_gguf *g, const char *key)
{
	uint32_t found;

	if (!g->kv_hash)
		return NULL;
	hash_slot(g->kv_hash, g->kv_hash_cap, key, strlen(key), g->kv, sizeof(*g->kv),
		  offsetof(struct lp_gguf_kv, key), &found);
	return found ? &g->kv[found - 1] : NULL;
}

const struct lp_gguf_tensor *lp_gguf_find_tensor(const struct lp_gguf *g, const char *name)
{
	uint32_t found;

	if (!g->tensor_hash)
		return NULL;
	hash_slot(g->tensor_hash, g->tensor_hash_cap, name, strlen(name), g->tensors,
		  sizeof(*g->tensors), offsetof(struct lp_gguf_tensor, name), &found);
	return found ? &g->tensors[found - 1] : NULL;
}

/* Integer value of a scalar kv as signed/unsigned; returns 0 when not an int. */
static int kv_int(uint32_t t, const struct lp_gguf_kv *kv, int *neg, uint64_t *mag)
{
	if (is_signed(t)) {
		*neg = kv->v.i64 < 0;
		*mag = *neg ? 0 - (uint64_t)kv->v.i64 : (uint64_t)kv->v.i64;
		return 1;
	}
	if (scalar_bytes(t) && !is_float(t)) {
		*neg = 0;
		*mag = kv->v.u64;
		return 1;
	}
	return 0;
}

int lp_gguf_get_u64(const struct lp_gguf *g, const char *key, uint64_t *out)
{
	const struct lp_gguf_kv *kv = lp_gguf_find(g, key);
	uint64_t mag;
	int neg;

	if (!kv || !kv_int(kv->type, kv, &neg, &mag) || neg)
		return 0;
	*out = mag;
	return 1;
}

int lp_gguf_get_i64(const struct lp_gguf *g, const char *key, int64_t *out)
{
	const struct lp_gguf_kv *kv = lp_gguf_find(g, key);
	uint64_t mag;
	int neg;

	if (!kv || !kv_int(kv->type, kv, &neg, &mag))
		return 0;
	if (!neg && mag > (uint64_t)INT64_MAX)
		return 0;
	*out = neg ? kv->v.i64 : (int64_t)mag;
	return 1;
}

int lp_gguf_get_f64(const struct lp_gguf *g, const char *key, double *out)
{
	const struct lp_gguf_kv *kv = lp_gguf_find(g, key);

	if (!kv || !is_float(kv->type))
		return 0;
	*out = kv->v.f64;
	return 1;
}

int lp_gguf_get_str(const struct lp_gguf *g, const char *key, char *buf, size_t cap)
{
	const struct lp_gguf_kv *kv = lp_gguf_find(g, key);
	size_t n;

	if (!kv || kv->type != LP_GGUF_STRING || !cap)
		return 0;
	n = kv->v.str.len < cap - 1 ? (size_t)kv->v.str.len : cap - 1;
	memcpy(buf, kv->v.str.ptr, n);
	buf[n] = 0;
	return 1;
}

int lp_gguf_arr_str(const struct lp_gguf_kv *kv, uint64_t i, struct lp_gguf_str *out)
{
	const unsigned char *p;

	if (!kv || kv->type != LP_GGUF_ARRAY || kv->v.arr.elem_type != LP_GGUF_STRING ||
	    i >= kv->v.arr.n || !kv->v.arr.offs)
		return 0;
	p = (const unsigned char *)kv->v.arr.data + kv->v.arr.offs[i];
	out->len = load_le(p, 8);
	out->ptr = (const char *)p + 8;
	return 1;
}

/* Element i of a scalar array decoded as a kv (type in *t). */
static int arr_scalar(const struct lp_gguf_kv *kv, uint64_t i, struct lp_gguf_kv *e)
{
	uint32_t t;
	int n;

	if (!kv || kv->type != LP_GGUF_ARRAY || i >= kv->v.arr.n)
		return 0;
	t = kv->v.arr.elem_type;
	n = scalar_bytes(t);
	if (!n)
		return 0;
	e->type = t;
	decode_scalar(t, (const unsigned char *)kv->v.arr.data + i * (uint64_t)n, e);
	return 1;
}

int lp_gguf_arr_i64(const struct lp_gguf_kv *kv, uint64_t i, int64_t *out)
{
	struct lp_gguf_kv e;
	uint64_t mag;
	int neg;

	if (!arr_scalar(kv, i, &e) || !kv_int(e.type, &e, &neg, &mag))
		return 0;
	if (!neg && mag > (uint64_t)INT64_MAX)
		return 0;
	*out = neg ? e.v.i64 : (int64_t)mag;
	return 1;
}

int lp_gguf_arr_f64(const struct lp_gguf_kv *kv, uint64_t i, double *out)
{
	struct lp_gguf_kv e;
	uint64_t mag;
	int neg;

	if (!arr_scalar(kv, i, &e))
		return 0;
	if (is_float(e.type))
		*out = e.v.f64;
	else if (kv_int(e.type, &e, &neg, &mag))
		*out = neg ? (double)e.v.i64 : (double)mag;
	else
		return 0;
	return 1;
}
