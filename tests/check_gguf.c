/* check_gguf.c - GGUF reader: round trips through the test writer and
 * hostile files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "core/mem.h"
#include "core/status.h"
#include "model/gguf.h"
#include "quant/quant.h"
#include "tools/gguf_writer.h"

static const enum lp_qtype all_types[] = {
	LP_Q_F32, LP_Q_F16, LP_Q_BF16, LP_Q_Q4_0, LP_Q_Q4_1, LP_Q_Q5_0, LP_Q_Q5_1,
	LP_Q_Q8_0, LP_Q_Q4_K, LP_Q_Q5_K, LP_Q_Q6_K,
};
#define N_TYPES (sizeof(all_types) / sizeof(all_types[0]))

static uint64_t rng = 0x243F6A8885A308D3ull;

static float frand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 11) * 0x1p-53 * 2.0 - 1.0);
}

/* Open bytes, expecting failure; returns the diagnostic. */
static struct lp_diag expect_fail(const void *p, size_t len)
{
	struct lp_gguf *g = (struct lp_gguf *)1;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_gguf_open_bytes("t.gguf", p, len, &g, &d), LP_E_MODEL);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(d.status, LP_E_MODEL);
	ck_assert_str_eq(d.file, "t.gguf");
	ck_assert_int_ge(d.offset, 0);
	return d;
}

static struct lp_gguf *expect_ok(const void *p, size_t len)
{
	struct lp_gguf *g = NULL;
	struct lp_diag d;

	lp_diag_init(&d);
	if (lp_gguf_open_bytes("t.gguf", p, len, &g, &d))
		ck_abort_msg("open failed: byte %lld: %s", d.offset, d.msg);
	return g;
}

/* A small valid file with metadata of every type and one tensor per type. */
static struct gw *full_writer(float *data, size_t n_per_tensor)
{
	static const char *const toks[] = { "<s>", "", "hello", "w\xc3\xb6rld" };
	int32_t ints[] = { -1, 0, 7, 2147483647 };
	float floats[] = { 0.5f, -2.0f, 1e30f };
	uint8_t bools[] = { 1, 0, 1 };
	struct gw *w = gw_new();

	gw_add_u8(w, "t.u8", 200);
	gw_add_i8(w, "t.i8", -100);
	gw_add_u16(w, "t.u16", 60000);
	gw_add_i16(w, "t.i16", -30000);
	gw_add_u32(w, "t.u32", 4000000000u);
	gw_add_i32(w, "t.i32", -2000000000);
	gw_add_f32(w, "t.f32", 0.25f);
	gw_add_bool(w, "t.bool", 1);
	gw_add_str(w, "general.architecture", "llama");
	gw_add_u64(w, "t.u64", 18000000000000000000ull);
	gw_add_i64(w, "t.i64", -9000000000000000000ll);
	gw_add_f64(w, "t.f64", 1e-300);
	gw_add_arr_str(w, "tokenizer.ggml.tokens", toks, 4);
	gw_add_arr(w, "t.arr_i32", LP_GGUF_INT32, ints, 4);
	gw_add_arr(w, "t.arr_f32", LP_GGUF_FLOAT32, floats, 3);
	gw_add_arr(w, "t.arr_bool", LP_GGUF_BOOL, bools, 3);
	gw_add_arr(w, "t.arr_empty", LP_GGUF_UINT8, NULL, 0);
	{
		/* an array of two arrays of uint16: [[1, 2], []] */
		unsigned char nested[12 + 12 + 4 + 12];
		uint32_t t_arr = LP_GGUF_UINT16, t_u16 = LP_GGUF_UINT16;
		uint64_t n2 = 2, n0 = 0;
		uint16_t v[2] = { 1, 2 };
		unsigned char *p = nested;
		uint32_t et = LP_GGUF_ARRAY;
		memcpy(p, &et, 4); memcpy(p + 4, &n2, 8); p += 12;
		memcpy(p, &t_arr, 4); memcpy(p + 4, &n2, 8); memcpy(p + 12, v, 4); p += 16;
		memcpy(p, &t_u16, 4); memcpy(p + 4, &n0, 8); p += 12;
		gw_add_raw(w, "t.nested", LP_GGUF_ARRAY, nested, (size_t)(p - nested));
	}
	for (size_t i = 0; i < N_TYPES; i++) {
		char name[64];
		uint64_t ne[2] = { 256, n_per_tensor / 256 };
		snprintf(name, sizeof(name), "w.%s", lp_qtype_name(all_types[i]));
		gw_add_tensor(w, name, all_types[i], 2, ne, data);
	}
	return w;
}

START_TEST(test_round_trip_all_types)
{
	enum { N = 512 };
	float data[N], out[N];
	unsigned char *bytes;
	size_t len;
	struct gw *w;
	struct lp_gguf *g;
	const struct lp_gguf_kv *kv;
	struct lp_gguf_str s;
	uint64_t u;
	int64_t i;
	double f;
	char buf[16];

	for (int k = 0; k < N; k++)
		data[k] = frand();
	w = full_writer(data, N);
	gw_write_mem(w, &bytes, &len);
	g = expect_ok(bytes, len);

	ck_assert_uint_eq(lp_gguf_version(g), 3);
	ck_assert_uint_eq(lp_gguf_n_kv(g), 18);
	ck_assert(lp_gguf_get_u64(g, "t.u8", &u) && u == 200);
	ck_assert(lp_gguf_get_i64(g, "t.i8", &i) && i == -100);
	ck_assert(!lp_gguf_get_u64(g, "t.i8", &u)); /* negative: no u64 */
	ck_assert(lp_gguf_get_u64(g, "t.u16", &u) && u == 60000);
	ck_assert(lp_gguf_get_i64(g, "t.i16", &i) && i == -30000);
	ck_assert(lp_gguf_get_u64(g, "t.u32", &u) && u == 4000000000u);
	ck_assert(lp_gguf_get_i64(g, "t.i32", &i) && i == -2000000000);
	ck_assert(lp_gguf_get_f64(g, "t.f32", &f) && f == 0.25);
	ck_assert(lp_gguf_get_u64(g, "t.bool", &u) && u == 1);
	ck_assert(lp_gguf_get_u64(g, "t.u64", &u) && u == 18000000000000000000ull);
	ck_assert(!lp_gguf_get_i64(g, "t.u64", &i)); /* does not fit */
	ck_assert(lp_gguf_get_i64(g, "t.i64", &i) && i == -9000000000000000000ll);
	ck_assert(lp_gguf_get_f64(g, "t.f64", &f) && f == 1e-300);
	ck_assert(!lp_gguf_get_f64(g, "t.u8", &f));
	ck_assert(!lp_gguf_get_u64(g, "t.f64", &u));
	ck_assert(!lp_gguf_get_u64(g, "absent", &u));
	ck_assert(lp_gguf_get_str(g, "general.architecture", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "llama");
	ck_assert(lp_gguf_get_str(g, "general.architecture", buf, 3));
	ck_assert_str_eq(buf, "ll");
	ck_assert(!lp_gguf_get_str(g, "t.u8", buf, sizeof(buf)));

	kv = lp_gguf_find(g, "tokenizer.ggml.tokens");
	ck_assert_ptr_nonnull(kv);
	ck_assert_int_eq(kv->type, LP_GGUF_ARRAY);
	ck_assert_uint_eq(kv->v.arr.n, 4);
	ck_assert(lp_gguf_arr_str(kv, 3, &s));
	ck_assert(s.len == 6 && !memcmp(s.ptr, "w\xc3\xb6rld", 6));
	ck_assert(lp_gguf_arr_str(kv, 1, &s) && s.len == 0);
	ck_assert(lp_gguf_arr_str(kv, 2, &s) && s.len == 5 && !memcmp(s.ptr, "hello", 5));
	ck_assert(!lp_gguf_arr_str(kv, 4, &s));
	ck_assert(!lp_gguf_arr_i64(kv, 0, &i));

	kv = lp_gguf_find(g, "t.arr_i32");
	ck_assert(lp_gguf_arr_i64(kv, 0, &i) && i == -1);
	ck_assert(lp_gguf_arr_i64(kv, 3, &i) && i == 2147483647);
	ck_assert(!lp_gguf_arr_i64(kv, 4, &i));
	ck_assert(!lp_gguf_arr_str(kv, 0, &s));
	kv = lp_gguf_find(g, "t.arr_f32");
	ck_assert(lp_gguf_arr_f64(kv, 1, &f) && f == -2.0);
	ck_assert(lp_gguf_arr_f64(kv, 2, &f) && (float)f == 1e30f);
	kv = lp_gguf_find(g, "t.arr_bool");
	ck_assert(lp_gguf_arr_i64(kv, 1, &i) && i == 0);
	kv = lp_gguf_find(g, "t.arr_empty");
	ck_assert(kv && kv->v.arr.n == 0 && kv->v.arr.elem_type == LP_GGUF_UINT8);
	kv = lp_gguf_find(g, "t.nested");
	ck_assert(kv && kv->v.arr.n == 2 && kv->v.arr.elem_type == LP_GGUF_ARRAY);
	ck_assert(!lp_gguf_arr_i64(kv, 0, &i));
	/* the key after a nested array was found, so the array was skipped right */
	ck_assert_ptr_eq(lp_gguf_kv_at(g, 17), kv);

	ck_assert_uint_eq(lp_gguf_n_tensors(g), N_TYPES);
	ck_assert_uint_eq(lp_gguf_data_offset(g) % 32, 0);
	for (size_t k = 0; k < N_TYPES; k++) {
		char name[64];
		const struct lp_gguf_tensor *t;
		float ref[N];
		unsigned char q[4 * N];
		snprintf(name, sizeof(name), "w.%s", lp_qtype_name(all_types[k]));
		t = lp_gguf_find_tensor(g, name);
		ck_assert_ptr_nonnull(t);
		ck_assert_ptr_eq(t, lp_gguf_tensor_at(g, k));
		ck_assert_int_eq(t->type, all_types[k]);
		ck_assert_uint_eq(t->n_dims, 2);
		ck_assert(t->ne[0] == 256 && t->ne[1] == 2 && t->ne[2] == 1 && t->ne[3] == 1);
		ck_assert_uint_eq(t->bytes, 2 * lp_qtype_row_bytes(t->type, 256));
		ck_assert_uint_eq(((const unsigned char *)t->data - bytes) % 32, 0);
		/* the stored bytes are what the quantizer produced */
		lp_quantize_row(t->type, data, q, N);
		ck_assert(!memcmp(q, t->data, t->bytes));
		lp_dequantize_row(t->type, t->data, out, N);
		lp_dequantize_row(t->type, q, ref, N);
		ck_assert(!memcmp(out, ref, sizeof(out)));
	}
	ck_assert_ptr_null(lp_gguf_find_tensor(g, "w.nope"));
	ck_assert_ptr_null(lp_gguf_find(g, "t.u"));
	lp_gguf_close(g);
	gw_free(w);
	free(bytes);
}
END_TEST

START_TEST(test_file_open_and_alignment)
{
	char path[] = "/tmp/check_gguf_XXXXXX";
	float data[64];
	struct gw *w = gw_new();
	struct lp_gguf *g;
	struct lp_diag d;
	int fd = mkstemp(path);
	size_t before = lp_mem_current(LP_MEM_WEIGHTS);
	const struct lp_gguf_tensor *t;

	ck_assert_int_ge(fd, 0);
	close(fd);
	for (int k = 0; k < 64; k++)
		data[k] = (float)k;
	gw_set_version(w, 2);
	gw_add_u32(w, "general.alignment", 256);
	gw_add_tensor(w, "a", LP_Q_F32, 1, (uint64_t[]){ 3 }, data);
	gw_add_tensor(w, "b", LP_Q_F32, 1, (uint64_t[]){ 64 }, data);
	ck_assert_int_eq(gw_write_file(w, path), 0);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_gguf_open(path, &g, &d), LP_OK);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), before + lp_gguf_file_bytes(g));
	ck_assert_uint_eq(lp_gguf_version(g), 2);
	ck_assert_uint_eq(lp_gguf_alignment(g), 256);
	ck_assert_uint_eq(lp_gguf_data_offset(g) % 256, 0);
	t = lp_gguf_find_tensor(g, "b");
	ck_assert_uint_eq(t->offset, 256);
	ck_assert(((const float *)t->data)[63] == 63.0f);
	ck_assert_str_eq(lp_gguf_path(g), path);
	lp_gguf_close(g);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), before);
	lp_gguf_close(NULL);
	unlink(path);
	ck_assert_int_eq(lp_gguf_open(path, &g, &d), LP_E_IO);
	ck_assert_ptr_null(g);
	gw_free(w);
}
END_TEST

START_TEST(test_every_truncation_fails_cleanly)
{
	float data[512];
	unsigned char *bytes;
	size_t len;
	struct gw *w;

	for (int k = 0; k < 512; k++)
		data[k] = frand();
	w = full_writer(data, 512);
	gw_write_mem(w, &bytes, &len);
	for (size_t n = 0; n < len; n++) {
		/* a fresh copy of exactly n bytes, so ASan sees any overread */
		unsigned char *p = malloc(n ? n : 1);
		memcpy(p, bytes, n);
		expect_fail(p, n);
		free(p);
	}
	gw_free(w);
	free(bytes);
}
END_TEST

/* Build a header: magic, version, n_tensors, n_kv. */
static size_t header(unsigned char *p, uint32_t version, uint64_t n_t, uint64_t n_kv)
{
	memcpy(p, "GGUF", 4);
	memcpy(p + 4, &version, 4);
	memcpy(p + 8, &n_t, 8);
	memcpy(p + 16, &n_kv, 8);
	return 24;
}

START_TEST(test_bad_magic_and_versions)
{
	unsigned char p[64] = { 0 };
	struct lp_diag d;

	header(p, 3, 0, 0);
	memcpy(p, "GGML", 4);
	d = expect_fail(p, sizeof(p));
	ck_assert_ptr_nonnull(strstr(d.msg, "magic"));
	ck_assert_int_eq(d.offset, 0);
	header(p, 1, 0, 0);
	d = expect_fail(p, sizeof(p));
	ck_assert_str_eq(d.msg, "GGUF version 1 is not supported");
	ck_assert_int_eq(d.offset, 4);
	header(p, 4, 0, 0);
	d = expect_fail(p, sizeof(p));
	ck_assert_ptr_nonnull(strstr(d.msg, "version 4"));
	header(p, 0x03000000, 0, 0);
	d = expect_fail(p, sizeof(p));
	ck_assert_ptr_nonnull(strstr(d.msg, "big-endian"));
	/* an empty valid file opens */
	header(p, 3, 0, 0);
	lp_gguf_close(expect_ok(p, 24));
	expect_fail(NULL, 0);
}
END_TEST

START_TEST(test_huge_counts_fail_fast)
{
	unsigned char p[256] = { 0 };
	struct lp_diag d;
	size_t n;

	lp_mem_set_budget(1 << 20); /* any attempt to allocate for the count fails */
	header(p, 3, 0, 1ull << 60);
	d = expect_fail(p, sizeof(p));
	ck_assert_ptr_nonnull(strstr(d.msg, "metadata count"));
	header(p, 3, 1ull << 60, 0);
	d = expect_fail(p, sizeof(p));
	ck_assert_ptr_nonnull(strstr(d.msg, "tensor count"));
	/* an array claiming 2^60 elements */
	n = header(p, 3, 0, 1);
	{
		uint64_t klen = 1, cnt = 1ull << 60;
		uint32_t t = LP_GGUF_ARRAY, et = LP_GGUF_UINT32;
		memcpy(p + n, &klen, 8); p[n + 8] = 'k'; n += 9;
		memcpy(p + n, &t, 4); memcpy(p + n + 4, &et, 4); memcpy(p + n + 8, &cnt, 8);
	}
	d = expect_fail(p, sizeof(p));
	ck_assert_ptr_nonnull(strstr(d.msg, "array of"));
	ck_assert_int_eq(d.offset, 24 + 9 + 4);
	/* the same with strings (8 bytes minimum each) */
	{
		uint32_t et = LP_GGUF_STRING;
		uint64_t cnt = (sizeof(p) - n) / 8 + 1;
		memcpy(p + n + 4, &et, 4);
		memcpy(p + n + 8, &cnt, 8);
	}
	d = expect_fail(p, sizeof(p));
	ck_assert_ptr_nonnull(strstr(d.msg, "array of"));
	/* the largest count that could fit, with one real entry followed by
	 * junk: the tables grow only with parsed entries, so this is a model
	 * error at the junk, not an allocation of count-sized tables */
	{
		size_t len = 1 << 20;
		unsigned char *big = malloc(len);
		uint64_t klen = 1;
		uint32_t t = LP_GGUF_UINT32;
		memset(big, 0xff, len);
		n = header(big, 3, 0, (len - 24) / 13);
		memcpy(big + n, &klen, 8); big[n + 8] = 'k'; n += 9;
		memcpy(big + n, &t, 4); n += 8;
		d = expect_fail(big, len);
		ck_assert_int_eq(d.offset, (long long)n);
		ck_assert_ptr_nonnull(strstr(d.msg, "past the end"));
		free(big);
	}
	lp_mem_set_budget(0);
}
END_TEST

START_TEST(test_string_past_eof)
{
	unsigned char p[64] = { 0 };
	size_t n = header(p, 3, 0, 1);
	uint64_t klen = 1, slen = 1000;
	uint32_t t = LP_GGUF_STRING;
	struct lp_diag d;

	memcpy(p + n, &klen, 8); p[n + 8] = 'k'; n += 9;
	memcpy(p + n, &t, 4); n += 4;
	memcpy(p + n, &slen, 8);
	d = expect_fail(p, sizeof(p));
	ck_assert_ptr_nonnull(strstr(d.msg, "string length 1000"));
	ck_assert_int_eq(d.offset, (long long)n);
	/* a key length of 2^64-1 */
	klen = UINT64_MAX;
	memcpy(p + 24, &klen, 8);
	d = expect_fail(p, sizeof(p));
	ck_assert_int_eq(d.offset, 24);
}
END_TEST

START_TEST(test_bad_values)
{
	unsigned char *bytes;
	size_t len;
	struct gw *w;
	struct lp_diag d;
	unsigned char deep[20 * 12];

	w = gw_new();
	gw_add_raw(w, "k", 13, "", 0);
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "unknown metadata value type 13"));
	gw_free(w);
	free(bytes);

	w = gw_new();
	gw_add_raw(w, "k", LP_GGUF_BOOL, "\x02", 1);
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "bool"));
	gw_free(w);
	free(bytes);

	w = gw_new();
	gw_add_u32(w, "k", 1);
	gw_add_u32(w, "k", 2);
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "duplicate metadata key 'k'"));
	gw_free(w);
	free(bytes);

	w = gw_new();
	gw_add_raw(w, "general.alignment", LP_GGUF_UINT32, "\x30\0\0\0", 4);
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "power of two"));
	gw_free(w);
	free(bytes);

	w = gw_new();
	gw_add_str(w, "general.alignment", "32");
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "general.alignment"));
	gw_free(w);
	free(bytes);

	/* arrays nested 20 deep, each with one element */
	for (int k = 0; k < 20; k++) {
		uint32_t et = k < 19 ? LP_GGUF_ARRAY : LP_GGUF_UINT8;
		uint64_t one = k < 19 ? 1 : 0;
		memcpy(deep + 12 * k, &et, 4);
		memcpy(deep + 12 * k + 4, &one, 8);
	}
	w = gw_new();
	gw_add_raw(w, "deep", LP_GGUF_ARRAY, deep, sizeof(deep));
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "nested deeper"));
	gw_free(w);
	free(bytes);
}
END_TEST

/* Byte offset of the u64 tensor offset field of the only tensor. */
static size_t tensor_offset_field(const unsigned char *bytes, size_t len, const char *name,
				  uint32_t n_dims)
{
	for (size_t i = 0; i + strlen(name) <= len; i++)
		if (!memcmp(bytes + i, name, strlen(name)))
			return i + strlen(name) + 4 + 8 * n_dims + 4;
	ck_abort_msg("name not found");
	return 0;
}

START_TEST(test_bad_tensors)
{
	float data[256] = { 0 };
	unsigned char *bytes;
	size_t len, at;
	struct gw *w;
	struct lp_diag d;
	uint64_t v;

	/* data out of bounds: the message names the tensor and range */
	w = gw_new();
	gw_add_tensor(w, "blk.0.attn_q.weight", LP_Q_F32, 2, (uint64_t[]){ 32, 2 }, data);
	gw_write_mem(w, &bytes, &len);
	at = tensor_offset_field(bytes, len, "blk.0.attn_q.weight", 2);
	v = 64;
	memcpy(bytes + at, &v, 8);
	d = expect_fail(bytes, len);
	{
		char want[200];
		size_t data_off = len - 256;
		snprintf(want, sizeof(want),
			 "tensor 'blk.0.attn_q.weight': data [%zu, %zu) outside the file (size %zu)",
			 data_off + 64, data_off + 64 + 256, len);
		ck_assert_str_eq(d.msg, want);
	}
	ck_assert_int_eq(d.offset, (long long)(at - 4 - 16 - 4 - 19 - 8));
	/* misaligned offset */
	v = 4;
	memcpy(bytes + at, &v, 8);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "not a multiple of the alignment"));
	/* offset near 2^64: no wrap-around */
	v = UINT64_MAX - 31;
	memcpy(bytes + at, &v, 8);
	d = expect_fail(bytes, len);
	/* unknown type */
	v = 0;
	memcpy(bytes + at, &v, 8);
	{
		uint32_t t = 10;
		memcpy(bytes + at - 4, &t, 4);
		d = expect_fail(bytes, len);
		ck_assert_str_eq(d.msg, "tensor 'blk.0.attn_q.weight': unsupported tensor type 10");
		t = 0;
		memcpy(bytes + at - 4, &t, 4);
	}
	lp_gguf_close(expect_ok(bytes, len));
	/* dims whose product overflows */
	v = 1ull << 40;
	memcpy(bytes + at - 12, &v, 8);
	memcpy(bytes + at - 20, &v, 8);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "overflows"));
	/* a dimension of 0, and too many dimensions */
	v = 0;
	memcpy(bytes + at - 12, &v, 8);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "dimension 1 is 0"));
	{
		uint32_t nd = 5;
		memcpy(bytes + at - 24, &nd, 4);
		d = expect_fail(bytes, len);
		ck_assert_ptr_nonnull(strstr(d.msg, "5 dimensions"));
	}
	gw_free(w);
	free(bytes);

	/* a quantized row that is not whole blocks */
	w = gw_new();
	gw_add_tensor_raw(w, "q", LP_Q_Q8_0, 1, (uint64_t[]){ 48 }, data, 68);
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "not a multiple of the q8_0 block"));
	gw_free(w);
	free(bytes);

	/* huge but non-overflowing size */
	w = gw_new();
	gw_add_tensor_raw(w, "big", LP_Q_F32, 2, (uint64_t[]){ 1ull << 30, 1ull << 20 }, data, 4);
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "'big'"));
	gw_free(w);
	free(bytes);

	/* duplicate names */
	w = gw_new();
	gw_add_tensor(w, "x", LP_Q_F32, 1, (uint64_t[]){ 8 }, data);
	gw_add_tensor(w, "x", LP_Q_F32, 1, (uint64_t[]){ 8 }, data);
	gw_write_mem(w, &bytes, &len);
	d = expect_fail(bytes, len);
	ck_assert_ptr_nonnull(strstr(d.msg, "duplicate tensor name 'x'"));
	gw_free(w);
	free(bytes);
}
END_TEST

/* Allocation n fails (each loop iteration is its own forked process, so
 * the allocator's counter starts from zero). */
START_TEST(test_allocation_failures_are_clean)
{
	float data[512];
	unsigned char *bytes;
	size_t len;
	struct gw *w;
	char v[16];
	struct lp_gguf *g;
	struct lp_diag d;
	enum lp_status s;

	if (getenv("CK_FORK") && !strcmp(getenv("CK_FORK"), "no"))
		return; /* the allocation counter would carry over between runs */
	for (int k = 0; k < 512; k++)
		data[k] = frand();
	w = full_writer(data, 512);
	gw_write_mem(w, &bytes, &len);
	snprintf(v, sizeof(v), "%d", _i);
	setenv("LPIPE_FAIL_ALLOC", v, 1);
	lp_diag_init(&d);
	s = lp_gguf_open_bytes("t.gguf", bytes, len, &g, &d);
	if (_i <= 8) /* the open makes 8 allocations with this file */
		ck_assert_int_eq(s, LP_E_NOMEM);
	if (s == LP_OK) {
		lp_gguf_close(g);
	} else {
		ck_assert_int_eq(s, LP_E_NOMEM);
		ck_assert_ptr_null(g);
		ck_assert_int_eq(d.status, LP_E_NOMEM);
	}
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	gw_free(w);
	free(bytes);
}
END_TEST

static Suite *gguf_suite(void)
{
	Suite *s = suite_create("gguf");
	TCase *tc = tcase_create("gguf");

	tcase_add_test(tc, test_round_trip_all_types);
	tcase_add_test(tc, test_file_open_and_alignment);
	tcase_add_test(tc, test_every_truncation_fails_cleanly);
	tcase_add_test(tc, test_bad_magic_and_versions);
	tcase_add_test(tc, test_huge_counts_fail_fast);
	tcase_add_test(tc, test_string_past_eof);
	tcase_add_test(tc, test_bad_values);
	tcase_add_test(tc, test_bad_tensors);
	tcase_add_loop_test(tc, test_allocation_failures_are_clean, 1, 12);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(gguf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
