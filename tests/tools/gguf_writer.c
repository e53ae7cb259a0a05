/* gguf_writer.c - see gguf_writer.h. */
#include "gguf_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bytes {
	unsigned char *p;
	size_t len, cap;
};

struct gw_tensor {
	char *name;
	uint32_t type, n_dims;
	uint64_t ne[4];
	unsigned char *data;
	size_t bytes;
};

struct gw {
	uint32_t version;
	uint64_t n_kv;
	struct bytes kv;        /* serialized key-values */
	uint32_t alignment;
	struct gw_tensor *t;
	size_t n_t, cap_t;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "gguf_writer: out of memory\n");
		abort();
	}
	return p;
}

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = xrealloc(b->p, b->cap);
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_u32(struct bytes *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct bytes *b, uint64_t v) { put(b, &v, 8); }

static void put_str(struct bytes *b, const char *s)
{
	put_u64(b, strlen(s));
	put(b, s, strlen(s));
}

struct gw *gw_new(void)
{
	struct gw *w = xrealloc(NULL, sizeof(*w));

	memset(w, 0, sizeof(*w));
	w->version = 3;
	w->alignment = 32;
	return w;
}

void gw_free(struct gw *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_t; i++) {
		free(w->t[i].name);
		free(w->t[i].data);
	}
	free(w->t);
	free(w->kv.p);
	free(w);
}

void gw_set_version(struct gw *w, uint32_t version)
{
	w->version = version;
}

static void kv_head(struct gw *w, const char *key, enum lp_gguf_type t)
{
	put_str(&w->kv, key);
	put_u32(&w->kv, t);
	w->n_kv++;
}

void gw_add_raw(struct gw *w, const char *key, enum lp_gguf_type type,
		const void *bytes, size_t len)
{
	kv_head(w, key, type);
	put(&w->kv, bytes, len);
}

#define GW_SCALAR(fn, ctype, tag)                                           \
	void fn(struct gw *w, const char *key, ctype v)                     \
	{                                                                   \
		gw_add_raw(w, key, tag, &v, sizeof(v));                     \
	}
GW_SCALAR(gw_add_u8, uint8_t, LP_GGUF_UINT8)
GW_SCALAR(gw_add_i8, int8_t, LP_GGUF_INT8)
GW_SCALAR(gw_add_u16, uint16_t, LP_GGUF_UINT16)
GW_SCALAR(gw_add_i16, int16_t, LP_GGUF_INT16)
GW_SCALAR(gw_add_i32, int32_t, LP_GGUF_INT32)
GW_SCALAR(gw_add_f32, float, LP_GGUF_FLOAT32)
GW_SCALAR(gw_add_u64, uint64_t, LP_GGUF_UINT64)
GW_SCALAR(gw_add_i64, int64_t, LP_GGUF_INT64)
GW_SCALAR(gw_add_f64, double, LP_GGUF_FLOAT64)

void gw_add_u32(struct gw *w, const char *key, uint32_t v)
{
	if (!strcmp(key, "general.alignment") && v && !(v & (v - 1)))
		w->alignment = v;
	gw_add_raw(w, key, LP_GGUF_UINT32, &v, 4);
}

void gw_add_bool(struct gw *w, const char *key, int v)
{
	uint8_t b = v != 0;
	gw_add_raw(w, key, LP_GGUF_BOOL, &b, 1);
}

void gw_add_str(struct gw *w, const char *key, const char *v)
{
	kv_head(w, key, LP_GGUF_STRING);
	put_str(&w->kv, v);
}

static size_t elem_bytes(enum lp_gguf_type t)
{
	switch (t) {
	case LP_GGUF_UINT8: case LP_GGUF_INT8: case LP_GGUF_BOOL: return 1;
	case LP_GGUF_UINT16: case LP_GGUF_INT16: return 2;
	case LP_GGUF_UINT32: case LP_GGUF_INT32: case LP_GGUF_FLOAT32: return 4;
	case LP_GGUF_UINT64: case LP_GGUF_INT64: case LP_GGUF_FLOAT64: return 8;
	default: return 0;
	}
}

void gw_add_arr(struct gw *w, const char *key, enum lp_gguf_type elem_type,
		const void *data, uint64_t n)
{
	kv_head(w, key, LP_GGUF_ARRAY);
	put_u32(&w->kv, elem_type);
	put_u64(&w->kv, n);
	put(&w->kv, data, (size_t)n * elem_bytes(elem_type));
}

void gw_add_arr_str(struct gw *w, const char *key, const char *const *v, uint64_t n)
{
	kv_head(w, key, LP_GGUF_ARRAY);
	put_u32(&w->kv, LP_GGUF_STRING);
	put_u64(&w->kv, n);
	for (uint64_t i = 0; i < n; i++)
		put_str(&w->kv, v[i]);
}

void gw_add_tensor_raw(struct gw *w, const char *name, uint32_t type, uint32_t n_dims,
		       const uint64_t *ne, const void *data, size_t bytes)
{
	struct gw_tensor *t;

	if (w->n_t == w->cap_t) {
		w->cap_t = w->cap_t * 2 + 8;
		w->t = xrealloc(w->t, w->cap_t * sizeof(*w->t));
	}
	t = &w->t[w->n_t++];
	memset(t, 0, sizeof(*t));
	t->name = xrealloc(NULL, strlen(name) + 1);
	strcpy(t->name, name);
	t->type = type;
	t->n_dims = n_dims;
	for (uint32_t i = 0; i < 4; i++)
		t->ne[i] = i < n_dims ? ne[i] : 1;
	t->data = xrealloc(NULL, bytes);
	if (bytes)
		memcpy(t->data, data, bytes);
	t->bytes = bytes;
}

void gw_add_tensor(struct gw *w, const char *name, enum lp_qtype type, uint32_t n_dims,
		   const uint64_t *ne, const float *data)
{
	uint64_t rows = 1;
	size_t rb = lp_qtype_row_bytes(type, ne[0]);
	unsigned char *q;

	if (!rb) {
		fprintf(stderr, "gguf_writer: tensor '%s': %llu is not a multiple of the %s block\n",
			name, (unsigned long long)ne[0], lp_qtype_name(type));
		abort();
	}
	for (uint32_t i = 1; i < n_dims; i++)
		rows *= ne[i];
	q = xrealloc(NULL, rb * rows);
	for (uint64_t r = 0; r < rows; r++)
		lp_quantize_row(type, data + r * ne[0], q + r * rb, ne[0]);
	gw_add_tensor_raw(w, name, type, n_dims, ne, q, rb * rows);
	free(q);
}

static void pad(struct bytes *b, size_t align)
{
	static const unsigned char zeros[64];

	while (b->len % align) {
		size_t n = align - b->len % align;
		put(b, zeros, n < sizeof(zeros) ? n : sizeof(zeros));
	}
}

void gw_write_mem(struct gw *w, unsigned char **out, size_t *len)
{
	struct bytes b = { 0 };
	uint64_t off = 0;

	put(&b, "GGUF", 4);
	put_u32(&b, w->version);
	put_u64(&b, w->n_t);
	put_u64(&b, w->n_kv);
	put(&b, w->kv.p, w->kv.len);
	for (size_t i = 0; i < w->n_t; i++) {
		struct gw_tensor *t = &w->t[i];
		put_str(&b, t->name);
		put_u32(&b, t->n_dims);
		for (uint32_t d = 0; d < t->n_dims; d++)
			put_u64(&b, t->ne[d]);
		put_u32(&b, t->type);
		put_u64(&b, off);
		off += t->bytes;
		off = (off + w->alignment - 1) / w->alignment * w->alignment;
	}
	pad(&b, w->alignment);
	for (size_t i = 0; i < w->n_t; i++) {
		put(&b, w->t[i].data, w->t[i].bytes);
		if (i + 1 < w->n_t)
			pad(&b, w->alignment);
	}
	*out = b.p;
	*len = b.len;
}

int gw_write_file(struct gw *w, const char *path)
{
	unsigned char *p;
	size_t len;
	FILE *f;
	int ok;

	gw_write_mem(w, &p, &len);
	f = fopen(path, "wb");
	if (!f) {
		free(p);
		return -1;
	}
	ok = fwrite(p, 1, len, f) == len;
	ok = !fclose(f) && ok;
	free(p);
	return ok ? 0 : -1;
}
