/*
 * check_embed.c - the safetensors reader, the WordPiece tokenizer and the
 * BERT encoder.
 *
 * Built twice: as check_embed (files the tests write themselves: hostile
 * safetensors headers, a tiny vocabulary, a tiny random BERT compared with a
 * naive double-precision reference below) and, with CHECK_REAL_MODEL, as
 * check_embed_model, which compares all-MiniLM-L6-v2 with the fixtures in
 * tests/data/minilm/ and exits 77 when the model directory is absent
 * ($LPIPE_EMBED_MODEL, else ${LPIPE_MODEL_DIR:-$HOME/.cache/lpipe/models}/
 * all-MiniLM-L6-v2; fetched by scripts/fetch-embedder).
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/status.h"
#include "retrieve/bert.h"
#include "retrieve/embedder.h"
#include "retrieve/safetensors.h"
#include "retrieve/wordpiece.h"

/* ---- safetensors files built in memory ---- */

struct blob {
	unsigned char *p;
	size_t n;
};

/* 8-byte length of `json`, the JSON, then `data_len` bytes of data. */
static struct blob st_build(const char *json, const void *data, size_t data_len)
{
	size_t h = strlen(json);
	struct blob b = { malloc(8 + h + data_len + 1), 8 + h + data_len };

	for (int i = 0; i < 8; i++)
		b.p[i] = (unsigned char)((uint64_t)h >> (8 * i));
	memcpy(b.p + 8, json, h);
	if (data_len)
		memcpy(b.p + 8 + h, data, data_len);
	return b;
}

/* Open `json` + `data_len` zero bytes; return the status and keep d. */
static enum lp_status st_try(const char *json, size_t data_len, struct lp_diag *d)
{
	unsigned char *zeros = calloc(1, data_len + 1);
	struct blob b = st_build(json, zeros, data_len);
	struct lp_st *st;
	enum lp_status s;

	lp_diag_init(d);
	s = lp_st_open_mem(b.p, b.n, "t.safetensors", &st, d);
	if (s == LP_OK)
		ck_assert_ptr_nonnull(st);
	else
		ck_assert_ptr_null(st);
	lp_st_free(st);
	free(b.p);
	free(zeros);
	return s;
}

static void st_refused(const char *json, size_t data_len, const char *msg_part)
{
	struct lp_diag d;

	ck_assert_int_eq(st_try(json, data_len, &d), LP_E_MODEL);
	ck_assert_msg(strstr(d.msg, msg_part), "'%s' lacks '%s'", d.msg, msg_part);
	ck_assert_str_eq(d.file, "t.safetensors");
	ck_assert_int_ge(d.offset, 0);
}

static uint16_t f32_to_f16_trunc(float f)
{
	/* Exact for the values used below (small integers and halves). */
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
	if (!exp)
		return (uint16_t)sign;
	return (uint16_t)(sign | (exp - 112) << 10 | man >> 13);
}

START_TEST(test_st_round_trip)
{
	const char *json =
		"{\"__metadata__\":{\"format\":\"pt\"},"
		"\"b\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[24,32]},"
		"\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
		"\"c\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[32,36]},"
		"\"ids\":{\"dtype\":\"I64\",\"shape\":[1,1],\"data_offsets\":[36,44]},"
		"\"empty\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[44,44]}}";
	unsigned char data[44];
	float a[6] = { 1, -2, 3.5f, 0, 1e-3f, -7 }, out[6];
	float bv[4] = { 0.5f, -1, 2048, 0 }, cv[2] = { 1.5f, -3 };
	char dir[] = "/tmp/check_embed_XXXXXX", path[64];
	struct lp_diag d;
	struct lp_st *st;
	const struct lp_st_tensor *t;

	memcpy(data, a, 24);
	for (int i = 0; i < 4; i++) {
		uint16_t h = f32_to_f16_trunc(bv[i]);
		data[24 + 2 * i] = h & 0xff;
		data[25 + 2 * i] = h >> 8;
	}
	for (int i = 0; i < 2; i++) {
		uint32_t x;
		memcpy(&x, &cv[i], 4);
		data[32 + 2 * i] = (x >> 16) & 0xff;
		data[33 + 2 * i] = x >> 24;
	}
	memset(data + 36, 0, 8);
	data[36] = 7;
	struct blob b = st_build(json, data, sizeof(data));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.safetensors", dir);
	FILE *f = fopen(path, "wb");
	fwrite(b.p, 1, b.n, f);
	fclose(f);

	lp_diag_init(&d);
	ck_assert_int_eq(lp_st_open(path, &st, &d), LP_OK);
	ck_assert_uint_gt(lp_mem_current(LP_MEM_WEIGHTS), 0);
	ck_assert_uint_eq(lp_st_count(st), 5);
	/* File order is offset order, whatever the JSON order. */
	ck_assert_str_eq(lp_st_tensor(st, 0)->name, "a");
	ck_assert_str_eq(lp_st_tensor(st, 1)->name, "b");
	t = lp_st_find(st, "a");
	ck_assert_int_eq(t->dtype, LP_ST_F32);
	ck_assert_int_eq(t->n_dims, 2);
	ck_assert_uint_eq(t->shape[1], 3);
	ck_assert_uint_eq(t->file_offset, 8 + strlen(json));
	ck_assert_int_eq(lp_st_read_f32(st, t, out, &d), LP_OK);
	ck_assert_mem_eq(out, a, sizeof(a));
	ck_assert_int_eq(lp_st_read_f32(st, lp_st_find(st, "b"), out, &d), LP_OK);
	for (int i = 0; i < 4; i++)
		ck_assert_float_eq(out[i], bv[i]);
	ck_assert_int_eq(lp_st_read_f32(st, lp_st_find(st, "c"), out, &d), LP_OK);
	ck_assert_float_eq(out[0], 1.5f);
	ck_assert_float_eq(out[1], -3.0f);
	/* Integer tensors open but cannot be read as floats. */
	t = lp_st_find(st, "ids");
	ck_assert_int_eq(t->data[0], 7);
	ck_assert_int_eq(lp_st_read_f32(st, t, out, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "dtype I64"));
	ck_assert_ptr_null(lp_st_find(st, "__metadata__"));
	ck_assert_ptr_null(lp_st_find(st, "zz"));
	/* Shape expectations. */
	uint64_t want[2] = { 2, 3 }, bad[2] = { 3, 2 };
	ck_assert_int_eq(lp_st_expect(st, "a", 2, want, &t, &d), LP_OK);
	ck_assert_int_eq(lp_st_expect(st, "a", 2, bad, &t, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "shape [2, 3], expected [3, 2]"));
	ck_assert_int_eq(lp_st_expect(st, "nope", 1, want, &t, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "missing tensor 'nope'"));
	lp_st_free(st);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), 0);
	lp_st_free(NULL);
	unlink(path);
	rmdir(dir);
	free(b.p);
}
END_TEST

START_TEST(test_st_f16_values)
{
	ck_assert_float_eq(lp_st_f16_to_f32(0x3c00), 1.0f);
	ck_assert_float_eq(lp_st_f16_to_f32(0xc000), -2.0f);
	ck_assert_float_eq(lp_st_f16_to_f32(0x7bff), 65504.0f);
	ck_assert_float_eq(lp_st_f16_to_f32(0x0001), ldexpf(1, -24)); /* subnormal */
	ck_assert_float_eq(lp_st_f16_to_f32(0x8000), 0.0f);
	ck_assert(isinf(lp_st_f16_to_f32(0x7c00)));
	ck_assert(isnan(lp_st_f16_to_f32(0x7e00)));
	ck_assert_float_eq(lp_st_bf16_to_f32(0x3f80), 1.0f);
}
END_TEST

START_TEST(test_st_hostile_headers)
{
	struct lp_diag d;
	unsigned char tiny[7] = { 0 };
	struct lp_st *st;
	struct blob b;

	ck_assert_int_eq(lp_st_open_mem(tiny, sizeof(tiny), "t.safetensors", &st, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "too short"));
	/* Header length past the end of the file, and absurdly large. */
	b = st_build("{}", NULL, 0);
	b.p[0] = 3;
	ck_assert_int_eq(lp_st_open_mem(b.p, b.n, "t.safetensors", &st, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "past the end"));
	b.p[7] = 0x80;
	ck_assert_int_eq(lp_st_open_mem(b.p, b.n, "t.safetensors", &st, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "exceeds the limit"));
	free(b.p);
	ck_assert_int_eq(st_try("{}", 0, &d), LP_OK);
	/* Bad JSON reports the byte offset of the fault in the file. */
	st_refused("{\"a\": }", 0, "bad header JSON");
	ck_assert_int_eq(st_try("{\"a\": }", 0, &d), LP_E_MODEL);
	ck_assert_int_ge(d.offset, 8 + 6); /* at or just after the '}' */
	ck_assert_int_le(d.offset, 8 + 7);
	st_refused("[1,2]", 0, "not a JSON object");
	st_refused("{\"__metadata__\": 3}", 0, "'__metadata__'");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		   "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "bad header JSON");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "two data_offsets");
	st_refused("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2,
		   "unknown dtype 'F8_E4M3'");
	/* Ranges past the end, shape/range mismatch, overflow. */
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, "past its end");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "holds 8 bytes");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4],\"data_offsets\":[0,8]}}",
		   8, "overflowing shape");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "bad or overflowing");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
		   "more than 8 dimensions");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "bad data_offsets");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,18446744073709551615]}}",
		   8, "too big integer");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}}", 8, "bad data_offsets");
	/* Overlap, hole, unindexed tail. */
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		   "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, "overlaps");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
		   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, "unindexed bytes before");
	st_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 12, "unindexed bytes after");
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

START_TEST(test_st_missing_file)
{
	struct lp_diag d;
	struct lp_st *st;

	ck_assert_int_eq(lp_st_open("/nonexistent/m.safetensors", &st, &d), LP_E_IO);
	ck_assert_ptr_null(st);
}
END_TEST

/* ---- WordPiece on a tiny vocabulary ---- */

static const char tiny_vocab[] =
	"[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\nquick\nbrown\nfox\nun\n##aff\n##able\n,\n.\n!\n"
	"cafe\nnaive\n\xe6\x88\x91\n\xe7\x88\xb1\nhello\na\n##a\n##s\njump\n$\nfa\n##cade\r\n";

static struct lp_wordpiece *tiny_wp(void)
{
	struct lp_wordpiece *wp;
	struct lp_diag d;

	ck_assert_int_eq(lp_wordpiece_new(tiny_vocab, strlen(tiny_vocab), "vocab.txt", &wp, &d),
			 LP_OK);
	return wp;
}

/* Tokens of `text` joined with spaces. */
static const char *pieces(const struct lp_wordpiece *wp, const char *text)
{
	static char out[4096];
	struct lp_wordpiece_ids v = { 0 };
	struct lp_diag d;
	size_t at = 0;

	ck_assert_int_eq(lp_wordpiece_tokenize(wp, text, strlen(text), &v, &d), LP_OK);
	out[0] = '\0';
	for (size_t i = 0; i < v.n; i++)
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s", i ? " " : "",
				       lp_wordpiece_token(wp, v.ids[i]));
	lp_wordpiece_ids_release(&v);
	return out;
}

START_TEST(test_wp_basic)
{
	struct lp_wordpiece *wp = tiny_wp();

	ck_assert_uint_eq(lp_wordpiece_vocab_size(wp), 26);
	ck_assert_int_eq(lp_wordpiece_cls(wp), 2);
	ck_assert_int_eq(lp_wordpiece_sep(wp), 3);
	ck_assert_int_eq(lp_wordpiece_pad(wp), 0);
	ck_assert_int_eq(lp_wordpiece_unk(wp), 1);
	ck_assert_int_eq(lp_wordpiece_id(wp, "##cade", 6), 25); /* CRLF line */
	ck_assert_int_eq(lp_wordpiece_id(wp, "##cad", 5), -1);
	ck_assert_ptr_null(lp_wordpiece_token(wp, 26));
	ck_assert_str_eq(pieces(wp, "The Quick, brown FOX!"), "the quick , brown fox !");
	ck_assert_str_eq(pieces(wp, "  unaffable\tjumps\n"), "un ##aff ##able jump ##s");
	/* A word that cannot be cut to the end is one [UNK]. */
	ck_assert_str_eq(pieces(wp, "unx foxes"), "[UNK] [UNK]");
	ck_assert_str_eq(pieces(wp, "xyz.hello"), "[UNK] . hello");
	ck_assert_str_eq(pieces(wp, "$5"), "$ [UNK]");
	ck_assert_str_eq(pieces(wp, ""), "");
	ck_assert_str_eq(pieces(wp, " \t\r\n"), "");
	lp_wordpiece_free(wp);
	lp_wordpiece_free(NULL);
}
END_TEST

START_TEST(test_wp_unicode)
{
	struct lp_wordpiece *wp = tiny_wp();

	/* Accents stripped after NFD, both precomposed and combining. */
	ck_assert_str_eq(pieces(wp, "Caf\xc3\xa9 NA\xc3\x8f" "VE fa\xc3\xa7" "ade"), "cafe naive fa ##cade");
	ck_assert_str_eq(pieces(wp, "cafe\xcc\x81"), "cafe");
	/* CJK ideographs are words of their own, even inside Latin text. */
	ck_assert_str_eq(pieces(wp, "\xe6\x88\x91\xe7\x88\xb1\xe4\xbd\xa0the"), "\xe6\x88\x91 \xe7\x88\xb1 [UNK] the");
	/* Unicode punctuation splits; NBSP and ideographic space separate. */
	ck_assert_str_eq(pieces(wp, "hello\xe2\x80\x94the\xc2\xa0" "fox\xe3\x80\x80" "a"),
			 "hello [UNK] the fox a");
	/* Control characters vanish without splitting; NUL too. */
	ck_assert_str_eq(pieces(wp, "fo\x01x qu\xe2\x80\x8bick"), "fox quick");
	/* Invalid UTF-8 is dropped. */
	ck_assert_str_eq(pieces(wp, "bro\xffwn"), "brown");
	lp_wordpiece_free(wp);
}
END_TEST

START_TEST(test_wp_long_words)
{
	struct lp_wordpiece *wp = tiny_wp();
	char w[160];
	const char *p;

	memset(w, 'a', 100);
	w[100] = '\0';
	p = pieces(wp, w);
	ck_assert_uint_eq(strlen(p), 1 + 99 * 4); /* "a" then 99 " ##a" */
	memset(w, 'a', 101);
	w[101] = '\0';
	ck_assert_str_eq(pieces(wp, w), "[UNK]");
	/* 101 characters of two bytes each: still counted in characters. */
	for (int i = 0; i < 50; i++)
		memcpy(w + 2 * i, "\xc3\xa0", 2); /* a-grave strips to "a" */
	w[100] = '\0';
	ck_assert_uint_eq(strlen(pieces(wp, w)), 1 + 49 * 4);
	lp_wordpiece_free(wp);
}
END_TEST

START_TEST(test_wp_encode_and_errors)
{
	struct lp_wordpiece *wp = tiny_wp();
	int32_t ids[8];
	size_t n;
	struct lp_diag d;

	ck_assert_int_eq(lp_wordpiece_encode(wp, "the quick brown fox", 19, 4, ids, &n, &d), LP_OK);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(ids[0], 2);
	ck_assert_int_eq(ids[1], 4);
	ck_assert_int_eq(ids[2], 5);
	ck_assert_int_eq(ids[3], 3);
	ck_assert_int_eq(lp_wordpiece_encode(wp, "fox", 3, 8, ids, &n, &d), LP_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(ids[1], 7);
	ck_assert_int_eq(lp_wordpiece_encode(wp, "fox", 3, 1, ids, &n, &d), LP_E_INTERNAL);
	lp_wordpiece_free(wp);

	ck_assert_int_eq(lp_wordpiece_new("[PAD]\n[CLS]\n[SEP]\n", 18, "v", &wp, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "'[UNK]'"));
	ck_assert_int_eq(lp_wordpiece_new("[PAD]\n[UNK]\n[CLS]\n[SEP]\nx\nx\n", 28, "v", &wp, &d),
			 LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "duplicate token 'x'"));
	ck_assert_int_eq(d.line, 6);
	ck_assert_int_eq(lp_wordpiece_new("", 0, "v", &wp, &d), LP_E_MODEL);
	ck_assert_int_eq(lp_wordpiece_load("/nonexistent/vocab.txt", &wp, &d), LP_E_IO);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

/* ---- a tiny random BERT against a naive reference ---- */

enum { TE = 32, TH = 2, TL = 2, TF = 64, TP = 24, TT = 2, TV = 26 };

struct tiny_weights {
	/* name, dims, values (double, as written after rounding to the dtype) */
	char name[96];
	int n_dims;
	int dims[2];
	double *v;
};

static struct tiny_weights tw[5 + TL * 16];
static int n_tw;
static uint64_t rng = 88172645463325252ull;

static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

static void add_w(const char *name, int d0, int d1, double scale, double offset)
{
	struct tiny_weights *w = &tw[n_tw++];
	int n = d0 * (d1 ? d1 : 1);

	snprintf(w->name, sizeof(w->name), "%s", name);
	w->n_dims = d1 ? 2 : 1;
	w->dims[0] = d0;
	w->dims[1] = d1;
	w->v = malloc((size_t)n * sizeof(double));
	for (int i = 0; i < n; i++)
		w->v[i] = offset + scale * urand();
}

static const double *W(const char *name)
{
	for (int i = 0; i < n_tw; i++)
		if (!strcmp(tw[i].name, name))
			return tw[i].v;
	ck_abort_msg("no weight %s", name);
	return NULL;
}

static const double *LW(int l, const char *name)
{
	char full[128];

	snprintf(full, sizeof(full), "encoder.layer.%d.%s", l, name);
	return W(full);
}

static void make_tiny_weights(void)
{
	static const char *mats[][2] = {
		{ "attention.self.query", "E" }, { "attention.self.key", "E" },
		{ "attention.self.value", "E" }, { "attention.output.dense", "E" },
		{ "intermediate.dense", "F" }, { "output.dense", "O" },
	};
	char name[128];

	for (int i = 0; i < n_tw; i++) /* a test may write the model again */
		free(tw[i].v);
	n_tw = 0;
	add_w("embeddings.word_embeddings.weight", TV, TE, 1.0, 0);
	add_w("embeddings.position_embeddings.weight", TP, TE, 0.5, 0);
	add_w("embeddings.token_type_embeddings.weight", TT, TE, 0.5, 0);
	add_w("embeddings.LayerNorm.weight", TE, 0, 0.2, 1);
	add_w("embeddings.LayerNorm.bias", TE, 0, 0.1, 0);
	for (int l = 0; l < TL; l++) {
		for (int m = 0; m < 6; m++) {
			int out = mats[m][1][0] == 'F' ? TF : TE, in = mats[m][1][0] == 'O' ? TF : TE;
			snprintf(name, sizeof(name), "encoder.layer.%d.%s.weight", l, mats[m][0]);
			add_w(name, out, in, 1.0 / sqrt(in) * 1.5, 0);
			snprintf(name, sizeof(name), "encoder.layer.%d.%s.bias", l, mats[m][0]);
			add_w(name, out, 0, 0.1, 0);
		}
		snprintf(name, sizeof(name), "encoder.layer.%d.attention.output.LayerNorm.weight", l);
		add_w(name, TE, 0, 0.2, 1);
		snprintf(name, sizeof(name), "encoder.layer.%d.attention.output.LayerNorm.bias", l);
		add_w(name, TE, 0, 0.1, 0);
		snprintf(name, sizeof(name), "encoder.layer.%d.output.LayerNorm.weight", l);
		add_w(name, TE, 0, 0.2, 1);
		snprintf(name, sizeof(name), "encoder.layer.%d.output.LayerNorm.bias", l);
		add_w(name, TE, 0, 0.1, 0);
	}
}

static void write_text(const char *dir, const char *file, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Write the weights as safetensors with `dtype` ("F32" or "F16"); values
 * are rounded to the dtype in tw[] so the reference sees what was stored. */
static void write_tiny_model(const char *dir, const char *dtype)
{
	int f16 = !strcmp(dtype, "F16"), esz = f16 ? 2 : 4;
	char json[16384], path[256];
	size_t at = 0, off = 0, total = 0;
	unsigned char *data;

	make_tiny_weights();
	for (int i = 0; i < n_tw; i++)
		total += (size_t)(tw[i].dims[0] * (tw[i].dims[1] ? tw[i].dims[1] : 1)) * (size_t)esz;
	data = malloc(total);
	at += (size_t)snprintf(json, sizeof(json), "{\"__metadata__\":{\"format\":\"pt\"}");
	for (int i = 0; i < n_tw; i++) {
		size_t n = (size_t)(tw[i].dims[0] * (tw[i].dims[1] ? tw[i].dims[1] : 1));
		if (tw[i].n_dims == 2)
			at += (size_t)snprintf(json + at, sizeof(json) - at,
					       ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}",
					       tw[i].name, dtype, tw[i].dims[0], tw[i].dims[1], off, off + n * (size_t)esz);
		else
			at += (size_t)snprintf(json + at, sizeof(json) - at,
					       ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}",
					       tw[i].name, dtype, tw[i].dims[0], off, off + n * (size_t)esz);
		for (size_t j = 0; j < n; j++) {
			float fv = (float)tw[i].v[j];
			if (f16) {
				uint16_t h = f32_to_f16_trunc(fv);
				data[off + 2 * j] = h & 0xff;
				data[off + 2 * j + 1] = h >> 8;
				tw[i].v[j] = lp_st_f16_to_f32(h);
			} else {
				memcpy(data + off + 4 * j, &fv, 4);
				tw[i].v[j] = fv;
			}
		}
		off += n * (size_t)esz;
	}
	snprintf(json + at, sizeof(json) - at, "}");
	struct blob b = st_build(json, data, total);
	snprintf(path, sizeof(path), "%s/model.safetensors", dir);
	FILE *f = fopen(path, "wb");
	fwrite(b.p, 1, b.n, f);
	fclose(f);
	free(b.p);
	free(data);
	snprintf(json, sizeof(json),
		 "{\"hidden_size\": %d, \"num_hidden_layers\": %d, \"num_attention_heads\": %d,"
		 " \"intermediate_size\": %d, \"max_position_embeddings\": %d, \"type_vocab_size\": %d,"
		 " \"vocab_size\": %d, \"layer_norm_eps\": 1e-12, \"hidden_act\": \"gelu\"}",
		 TE, TL, TH, TF, TP, TT, TV);
	write_text(dir, "config.json", json);
	write_text(dir, "sentence_bert_config.json", "{\"max_seq_length\": 16}");
	write_text(dir, "vocab.txt", tiny_vocab);
}

static void ref_layernorm(double *x, int n, const double *g, const double *b)
{
	for (int i = 0; i < n; i++) {
		double *r = x + i * TE, mean = 0, var = 0;
		for (int j = 0; j < TE; j++)
			mean += r[j];
		mean /= TE;
		for (int j = 0; j < TE; j++)
			var += (r[j] - mean) * (r[j] - mean);
		var /= TE;
		for (int j = 0; j < TE; j++)
			r[j] = (r[j] - mean) / sqrt(var + 1e-12) * g[j] + b[j];
	}
}

/* y[n, out] = x[n, in] W^T + b */
static void ref_linear(const double *x, int n, int in, const double *w, const double *b, int out, double *y)
{
	for (int i = 0; i < n; i++)
		for (int o = 0; o < out; o++) {
			double s = b[o];
			for (int k = 0; k < in; k++)
				s += x[i * in + k] * w[o * in + k];
			y[i * out + o] = s;
		}
}

/* The obvious BERT + mean pooling + L2, in double, one sequence. */
static void ref_embed(const int32_t *ids, int n, double *out)
{
	static double x[TP * TE], q[TP * TE], k[TP * TE], v[TP * TE], ctx[TP * TE], t[TP * TE], h[TP * TF];
	int dh = TE / TH;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < TE; j++)
			x[i * TE + j] = W("embeddings.word_embeddings.weight")[ids[i] * TE + j] +
					W("embeddings.position_embeddings.weight")[i * TE + j] +
					W("embeddings.token_type_embeddings.weight")[j];
	ref_layernorm(x, n, W("embeddings.LayerNorm.weight"), W("embeddings.LayerNorm.bias"));
	for (int l = 0; l < TL; l++) {
		ref_linear(x, n, TE, LW(l, "attention.self.query.weight"), LW(l, "attention.self.query.bias"), TE, q);
		ref_linear(x, n, TE, LW(l, "attention.self.key.weight"), LW(l, "attention.self.key.bias"), TE, k);
		ref_linear(x, n, TE, LW(l, "attention.self.value.weight"), LW(l, "attention.self.value.bias"), TE, v);
		for (int hd = 0; hd < TH; hd++)
			for (int i = 0; i < n; i++) {
				double s[TP], mx = -1e300, sum = 0;
				for (int j = 0; j < n; j++) {
					s[j] = 0;
					for (int c = 0; c < dh; c++)
						s[j] += q[i * TE + hd * dh + c] * k[j * TE + hd * dh + c];
					s[j] /= sqrt(dh);
					mx = fmax(mx, s[j]);
				}
				for (int j = 0; j < n; j++)
					sum += (s[j] = exp(s[j] - mx));
				for (int c = 0; c < dh; c++) {
					double a = 0;
					for (int j = 0; j < n; j++)
						a += s[j] / sum * v[j * TE + hd * dh + c];
					ctx[i * TE + hd * dh + c] = a;
				}
			}
		ref_linear(ctx, n, TE, LW(l, "attention.output.dense.weight"), LW(l, "attention.output.dense.bias"), TE, t);
		for (int i = 0; i < n * TE; i++)
			x[i] += t[i];
		ref_layernorm(x, n, LW(l, "attention.output.LayerNorm.weight"), LW(l, "attention.output.LayerNorm.bias"));
		ref_linear(x, n, TE, LW(l, "intermediate.dense.weight"), LW(l, "intermediate.dense.bias"), TF, h);
		for (int i = 0; i < n * TF; i++)
			h[i] = 0.5 * h[i] * (1 + erf(h[i] / sqrt(2.0)));
		ref_linear(h, n, TF, LW(l, "output.dense.weight"), LW(l, "output.dense.bias"), TE, t);
		for (int i = 0; i < n * TE; i++)
			x[i] += t[i];
		ref_layernorm(x, n, LW(l, "output.LayerNorm.weight"), LW(l, "output.LayerNorm.bias"));
	}
	double norm = 0;
	for (int j = 0; j < TE; j++) {
		out[j] = 0;
		for (int i = 0; i < n; i++)
			out[j] += x[i * TE + j] / n;
		norm += out[j] * out[j];
	}
	for (int j = 0; j < TE; j++)
		out[j] /= sqrt(norm);
}

static void assert_close(const float *got, const double *want, int n, double tol)
{
	double err = 0, mag = 0;

	for (int i = 0; i < n; i++) {
		err = fmax(err, fabs(got[i] - want[i]));
		mag = fmax(mag, fabs(want[i]));
	}
	ck_assert_msg(err <= tol * mag, "relative error %g > %g", err / mag, tol);
}

static char tiny_dir[64];

static struct lp_bert *tiny_model(const char *dtype)
{
	struct lp_bert *m;
	struct lp_diag d;

	snprintf(tiny_dir, sizeof(tiny_dir), "/tmp/check_bert_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tiny_dir));
	write_tiny_model(tiny_dir, dtype);
	lp_diag_init(&d);
	if (lp_bert_load(tiny_dir, &m, &d))
		ck_abort_msg("load: %s", d.msg);
	return m;
}

static void tiny_cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tiny_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Random sequences of several lengths, embedded in one batch. */
static void check_tiny_vs_reference(const char *dtype)
{
	struct lp_bert *m = tiny_model(dtype);
	enum { NS = 7 };
	static const size_t lens[NS] = { 1, 2, 5, 9, 16, 3, 12 };
	int32_t seq[NS][16];
	const int32_t *ptr[NS];
	float out[NS * TE];
	double want[TE];
	struct lp_diag d;

	ck_assert_uint_eq(lp_bert_dim(m), TE);
	ck_assert_uint_eq(lp_bert_window(m), 16);
	for (int s = 0; s < NS; s++) {
		for (size_t i = 0; i < lens[s]; i++)
			seq[s][i] = (int32_t)((rng = rng * 6364136223846793005ull + 1442695040888963407ull) >> 33) % TV;
		ptr[s] = seq[s];
	}
	ck_assert_int_eq(lp_bert_embed_ids(m, ptr, lens, NS, out, &d), LP_OK);
	for (int s = 0; s < NS; s++) {
		ref_embed(seq[s], (int)lens[s], want);
		assert_close(out + s * TE, want, TE, 1e-4);
	}
	/* Bad inputs are refused. */
	size_t too_long = 17;
	ck_assert_int_eq(lp_bert_embed_ids(m, ptr, &too_long, 1, out, &d), LP_E_USAGE);
	int32_t bad = TV;
	const int32_t *pb = &bad;
	size_t one = 1;
	ck_assert_int_eq(lp_bert_embed_ids(m, &pb, &one, 1, out, &d), LP_E_USAGE);
	lp_bert_free(m);
	tiny_cleanup();
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}

START_TEST(test_bert_tiny_f32) { check_tiny_vs_reference("F32"); }
END_TEST

START_TEST(test_bert_tiny_f16) { check_tiny_vs_reference("F16"); }
END_TEST

/* The scalar exponentials and norms, which CPUs without AVX2 run. */
START_TEST(test_bert_tiny_scalar)
{
	setenv("LPIPE_CPU", "scalar", 1);
	check_tiny_vs_reference("F32");
	unsetenv("LPIPE_CPU");
}
END_TEST

/* Texts: tokenized, wrapped in [CLS]/[SEP], cut into windows, averaged. */
START_TEST(test_bert_tiny_texts_and_windows)
{
	struct lp_bert *m = tiny_model("F32");
	const struct lp_wordpiece *wp = lp_bert_tokenizer(m);
	const char *texts[3] = { "The quick brown fox!", "",
				 "the quick brown fox jumps un affable cafe naive , hello . "
				 "a fox the brown" };
	size_t lens[3] = { strlen(texts[0]), 0, strlen(texts[2]) };
	float out[3 * TE];
	double want[TE], acc[TE], norm = 0;
	struct lp_wordpiece_ids v = { 0 };
	struct lp_diag d;
	int32_t win[16];
	size_t body, n;

	/* Scratch is sized for the texts at hand, not for a full batch. */
	lp_mem_reset_peaks();
	ck_assert_int_eq(lp_bert_embed(m, texts, lens, 1, out, &d), LP_OK);
	ck_assert_uint_gt(lp_mem_peak(LP_MEM_SCRATCH), 0);
	ck_assert_uint_lt(lp_mem_peak(LP_MEM_SCRATCH), 64 * (5 * TE + TF) * sizeof(float));
	ck_assert_int_eq(lp_bert_set_window(m, 8, 3, &d), LP_OK);
	ck_assert_uint_eq(lp_bert_stride(m), 3);
	ck_assert_int_eq(lp_bert_embed(m, texts, lens, 3, out, &d), LP_OK);
	/* Short text: one window. */
	ck_assert_int_eq(lp_wordpiece_encode(wp, texts[0], lens[0], 8, win, &n, &d), LP_OK);
	ck_assert_uint_eq(n, 7);
	ref_embed(win, (int)n, want);
	assert_close(out, want, TE, 1e-4);
	/* Empty text: [CLS] [SEP]. */
	win[0] = 2;
	win[1] = 3;
	ref_embed(win, 2, want);
	assert_close(out + TE, want, TE, 1e-4);
	/* Long text: windows of 6 tokens starting 0, 3, 6, ... the last one
	 * ending at the end; unit mean of unit window embeddings. */
	ck_assert_int_eq(lp_wordpiece_tokenize(wp, texts[2], lens[2], &v, &d), LP_OK);
	ck_assert_uint_eq(v.n, 17);
	body = 6;
	memset(acc, 0, sizeof(acc));
	size_t starts[] = { 0, 3, 6, 9, 11 }, n_windows = 0;
	for (size_t w = 0; w < 5; w++) {
		win[0] = 2;
		memcpy(win + 1, v.ids + starts[w], body * sizeof(int32_t));
		win[body + 1] = 3;
		ref_embed(win, (int)body + 2, want);
		for (int j = 0; j < TE; j++)
			acc[j] += want[j];
		n_windows++;
	}
	ck_assert_uint_eq(n_windows, 5);
	for (int j = 0; j < TE; j++)
		norm += acc[j] * acc[j];
	for (int j = 0; j < TE; j++)
		acc[j] /= sqrt(norm);
	assert_close(out + 2 * TE, acc, TE, 1e-4);
	lp_wordpiece_ids_release(&v);
	ck_assert_int_eq(lp_bert_set_window(m, 2, 0, &d), LP_E_USAGE);
	ck_assert_int_eq(lp_bert_set_window(m, 8, 7, &d), LP_E_USAGE);
	ck_assert_int_eq(lp_bert_set_window(m, 25, 0, &d), LP_E_USAGE);
	lp_bert_free(m);
	tiny_cleanup();
}
END_TEST

/* Many texts cross batch boundaries; each result equals the text alone. */
START_TEST(test_bert_tiny_batches)
{
	struct lp_bert *m = tiny_model("F32");
	enum { N = 300 };
	static const char *words[] = { "the", "quick", "brown", "fox", "cafe", "hello", "jumps", "!" };
	static char buf[N][128];
	const char *texts[N];
	size_t lens[N];
	static float all[N * TE];
	float one[TE];
	struct lp_diag d;

	for (int i = 0; i < N; i++) {
		size_t at = 0;
		for (int w = 0; w < 3 + i % 11; w++)
			at += (size_t)snprintf(buf[i] + at, sizeof(buf[i]) - at, "%s ", words[(i * 7 + w * 3) % 8]);
		texts[i] = buf[i];
		lens[i] = at;
	}
	ck_assert_int_eq(lp_bert_embed(m, texts, lens, N, all, &d), LP_OK);
	for (int i = 0; i < N; i += 37) {
		ck_assert_int_eq(lp_bert_embed(m, &texts[i], &lens[i], 1, one, &d), LP_OK);
		for (int j = 0; j < TE; j++)
			ck_assert_float_eq_tol(all[i * TE + j], one[j], 1e-5f);
	}
	lp_bert_free(m);
	tiny_cleanup();
}
END_TEST

/* The thread count changes who computes which rows, not the result. */
START_TEST(test_bert_tiny_threads)
{
	struct lp_bert *m = tiny_model("F32");
	enum { N = 120 };
	static const char *words[] = { "the", "quick", "brown", "fox", "cafe", "hello", "jumps", "!" };
	static char buf[N][160];
	const char *texts[N];
	size_t lens[N];
	static float one[N * TE], many[N * TE];
	struct lp_diag d;

	for (int i = 0; i < N; i++) {
		size_t at = 0;
		for (int w = 0; w < 2 + i % 19; w++)
			at += (size_t)snprintf(buf[i] + at, sizeof(buf[i]) - at, "%s ", words[(i * 5 + w) % 8]);
		texts[i] = buf[i];
		lens[i] = at;
	}
	lp_bert_set_threads(m, 1);
	ck_assert_int_eq(lp_bert_embed(m, texts, lens, N, one, &d), LP_OK);
	lp_bert_set_threads(m, 3);
	ck_assert_int_eq(lp_bert_embed(m, texts, lens, N, many, &d), LP_OK);
	for (int i = 0; i < N * TE; i++)
		ck_assert_float_eq_tol(one[i], many[i], 1e-5f);
	lp_bert_free(m);
	tiny_cleanup();
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

/* The dense embedder keeps its model and pool across calls: batches
 * embedded one after another on that pool equal lp_bert_embed on a pool of
 * its own, and freeing the embedder frees both. */
START_TEST(test_embedder_dense_pool_kept)
{
	struct lp_bert *m = tiny_model("F32");
	static const char *texts[] = { "the quick brown fox", "hello cafe", "jumps !", "fox" };
	size_t lens[4];
	float want[4 * TE], got[4 * TE];
	struct lp_embedder *e;
	struct lp_diag d;

	lp_diag_init(&d);
	for (int i = 0; i < 4; i++)
		lens[i] = strlen(texts[i]);
	setenv("LPIPE_CACHE_DIR", tiny_dir, 1);
	ck_assert_int_eq(lp_bert_embed(m, texts, lens, 4, want, &d), LP_OK);
	if (lp_embedder_new_dense(tiny_dir, &e, &d))
		ck_abort_msg("dense: %s", d.msg);
	for (int round = 0; round < 3; round++) {
		memset(got, 0, sizeof(got));
		ck_assert_int_eq(lp_embedder_embed(e, texts + round % 2, lens + round % 2,
						   4 - (size_t)(round % 2), got, &d), LP_OK);
		for (int j = 0; j < (4 - round % 2) * TE; j++)
			ck_assert_float_eq_tol(got[j], want[(round % 2) * TE + j], 1e-5f);
	}
	lp_embedder_free(e);
	/* The same again, from the model itself, twice. */
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(lp_bert_embed(m, texts, lens, 4, got, &d), LP_OK);
		for (int j = 0; j < 4 * TE; j++)
			ck_assert_float_eq_tol(got[j], want[j], 1e-5f);
	}
	lp_bert_free(m);
	unsetenv("LPIPE_CACHE_DIR");
	tiny_cleanup();
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

static uint64_t dense_id(const char *dir)
{
	struct lp_embedder *e;
	struct lp_diag d;
	uint64_t id;

	lp_diag_init(&d);
	if (lp_embedder_new_dense(dir, &e, &d))
		ck_abort_msg("dense: %s", d.msg);
	id = lp_embedder_id(e);
	lp_embedder_free(e);
	return id;
}

/* The one model-*.id memo in dir, into path; returns how many there are. */
static int find_memo(const char *dir, char *path, size_t cap)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!dp)
		return 0;
	while ((de = readdir(dp)))
		if (!strncmp(de->d_name, "model-", 6) && strstr(de->d_name, ".id")) {
			snprintf(path, cap, "%s/%s", dir, de->d_name);
			n++;
		}
	closedir(dp);
	return n;
}

/*
 * The dense model id is memoized by the files' metadata: a second load
 * takes it from the memo (a planted memo proves it is read), and a model
 * file changed in place, same size and mtime put back, gets a new id.
 */
START_TEST(test_dense_id_memo)
{
	char model[] = "/tmp/check_memo_model_XXXXXX", cache[] = "/tmp/check_memo_cache_XXXXXX";
	char memo[512], path[256], line[160], cmd[160];
	uint64_t id, changed;
	struct stat sb;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(model));
	ck_assert_ptr_nonnull(mkdtemp(cache));
	write_tiny_model(model, "F32");
	setenv("LPIPE_CACHE_DIR", cache, 1);
	id = dense_id(model);
	ck_assert_int_eq(find_memo(cache, memo, sizeof(memo)), 1);
	ck_assert_uint_eq(dense_id(model), id);

	/* the memo is what answers: plant another id under the same key */
	f = fopen(memo, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	char *at = strrchr(line, ' ');   /* before the id's 16 digits */
	ck_assert_ptr_nonnull(at);
	ck_assert_uint_ge(strlen(at), 17);
	memcpy(at + 1, "00000000000000aa", 16);
	f = fopen(memo, "w");
	fputs(line, f);
	fclose(f);
	ck_assert_uint_eq(dense_id(model), 0xaa);
	/* and a damaged memo is ignored (and rewritten) */
	f = fopen(memo, "w");
	fputs("garbage\n", f);
	fclose(f);
	ck_assert_uint_eq(dense_id(model), id);
	ck_assert_uint_eq(dense_id(model), id);

	/* one byte of a weight changed, size and mtime restored */
	snprintf(path, sizeof(path), "%s/model.safetensors", model);
	ck_assert_int_eq(stat(path, &sb), 0);
	f = fopen(path, "r+b");
	ck_assert_int_eq(fseek(f, -1, SEEK_END), 0);
	int c = fgetc(f);
	ck_assert_int_eq(fseek(f, -1, SEEK_END), 0);
	fputc(c ^ 0x01, f);
	fclose(f);
	struct timespec times[2] = { sb.st_atim, sb.st_mtim };
	ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
	changed = dense_id(model);
	ck_assert_uint_ne(changed, id);
	ck_assert_uint_eq(find_memo(cache, memo, sizeof(memo)), 2);
	/* the memo holds the hash a fresh computation gives */
	snprintf(cmd, sizeof(cmd), "rm -f '%s'/model-*.id", cache);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_uint_eq(dense_id(model), changed);

	/* no cache directory: still the same id, computed each time */
	setenv("LPIPE_CACHE_DIR", "/nonexistent/lpipe-cache", 1);
	ck_assert_uint_eq(dense_id(model), changed);
	unsetenv("LPIPE_CACHE_DIR");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", model, cache);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_bert_bad_models)
{
	char dir[] = "/tmp/check_bert_bad_XXXXXX", path[128];
	struct lp_bert *m;
	struct lp_diag d;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_IO);
	ck_assert_ptr_nonnull(strstr(d.file, "config.json"));
	write_tiny_model(dir, "F32");
	write_text(dir, "config.json", "{\"hidden_size\": 33, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
		   " \"intermediate_size\": 64, \"max_position_embeddings\": 24, \"type_vocab_size\": 2,"
		   " \"vocab_size\": 26}");
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "not a multiple"));
	write_text(dir, "config.json", "{\"hidden_size\": 32, \"num_hidden_layers\": 3, \"num_attention_heads\": 2,"
		   " \"intermediate_size\": 64, \"max_position_embeddings\": 24, \"type_vocab_size\": 2,"
		   " \"vocab_size\": 26}");
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "missing tensor 'encoder.layer.2."));
	write_text(dir, "config.json", "{\"hidden_size\": 32, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
		   " \"intermediate_size\": 48, \"max_position_embeddings\": 24, \"type_vocab_size\": 2,"
		   " \"vocab_size\": 26}");
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "expected [48, 32]"));
	write_text(dir, "config.json", "{\"hidden_size\": 32}");
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "'num_hidden_layers'"));
	write_text(dir, "config.json", "{\"hidden_size\": 32, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
		   " \"intermediate_size\": 64, \"max_position_embeddings\": 24, \"type_vocab_size\": 2,"
		   " \"vocab_size\": 26, \"hidden_act\": \"relu\"}");
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "hidden_act"));
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* A model that loads but would embed nonsense is refused at load: a bad
 * layer_norm_eps, a vocabulary that does not match vocab_size, an empty
 * vocabulary (mapped as NULL), a weight that is not finite. */
START_TEST(test_bert_hostile_models)
{
	char dir[] = "/tmp/check_bert_hostile_XXXXXX", path[160];
	const float nan_value = NAN;
	struct lp_bert *m = NULL;
	struct lp_diag d;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_tiny_model(dir, "F32");
	write_text(dir, "config.json", "{\"hidden_size\": 32, \"num_hidden_layers\": 2, "
		   "\"num_attention_heads\": 2, \"intermediate_size\": 64, "
		   "\"max_position_embeddings\": 24, \"type_vocab_size\": 2, "
		   "\"vocab_size\": 26, \"layer_norm_eps\": \"x\"}");
	lp_diag_init(&d);
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	ck_assert_msg(strstr(d.msg, "layer_norm_eps"), "%s", d.msg);
	write_tiny_model(dir, "F32");
	write_text(dir, "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nx\n");
	lp_diag_init(&d);
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	ck_assert_msg(strstr(d.msg, "vocabulary has 5 tokens"), "%s", d.msg);
	write_text(dir, "vocab.txt", "");
	lp_diag_init(&d);
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	write_tiny_model(dir, "F32");
	/* the last float of the file is the last weight of the last tensor */
	snprintf(path, sizeof(path), "%s/model.safetensors", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "r+b"));
	ck_assert_int_eq(fseek(f, -4, SEEK_END), 0);
	ck_assert_int_eq(fwrite(&nan_value, 4, 1, f), 1);
	fclose(f);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_bert_load(dir, &m, &d), LP_E_MODEL);
	ck_assert_msg(strstr(d.msg, "not finite"), "%s", d.msg);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* Every tracked allocation of load and embed may fail; none may leak. */
START_TEST(test_bert_alloc_faults)
{
	char n[16];
	struct lp_bert *m = NULL;
	struct lp_diag d;
	const char *text = "the quick brown fox jumps";
	size_t len = strlen(text);
	float out[TE];
	enum lp_status s;

	snprintf(tiny_dir, sizeof(tiny_dir), "/tmp/check_bert_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tiny_dir));
	write_tiny_model(tiny_dir, _i % 2 ? "F16" : "F32");
	snprintf(n, sizeof(n), "%d", _i / 2 + 1);
	setenv("LPIPE_FAIL_ALLOC", n, 1);
	lp_diag_init(&d);
	s = lp_bert_load(tiny_dir, &m, &d);
	if (s == LP_OK)
		s = lp_bert_embed(m, &text, &len, 1, out, &d);
	ck_assert_msg(s == LP_OK || s == LP_E_NOMEM, "status %d: %s", s, d.msg);
	lp_bert_free(m);
	unsetenv("LPIPE_FAIL_ALLOC");
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	tiny_cleanup();
}
END_TEST

/* ---- the real model against fixtures ---- */

#ifdef CHECK_REAL_MODEL
static char model_dir[1024];

static int find_model(void)
{
	const char *e = getenv("LPIPE_EMBED_MODEL"), *base = getenv("LPIPE_MODEL_DIR");
	char path[1100];
	struct stat st;

	if (e && *e)
		snprintf(model_dir, sizeof(model_dir), "%s", e);
	else if (base && *base)
		snprintf(model_dir, sizeof(model_dir), "%s/all-MiniLM-L6-v2", base);
	else
		snprintf(model_dir, sizeof(model_dir), "%s/.cache/lpipe/models/all-MiniLM-L6-v2",
			 getenv("HOME") ? getenv("HOME") : ".");
	snprintf(path, sizeof(path), "%s/model.safetensors", model_dir);
	return stat(path, &st) == 0;
}

static FILE *fixture(const char *name)
{
	const char *top = getenv("top_srcdir");
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/minilm/%s", top ? top : ".", name);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	return f;
}

/* Read line `i` of a fixture into a malloc'd string (newline removed). */
static char *read_lines(const char *name, size_t *n)
{
	FILE *f = fixture(name);
	char *all = NULL;
	size_t cap = 0;
	ssize_t len = getdelim(&all, &cap, '\0', f);

	fclose(f);
	ck_assert_int_gt(len, 0);
	*n = 0;
	for (ssize_t i = 0; i < len; i++)
		if (all[i] == '\n') {
			all[i] = '\0';
			(*n)++;
		}
	return all;
}

/*
 * The real model against sentence-transformers' ids and vectors: the
 * default products (_i = 0: the feed-forward output one in BF16 where the
 * CPU has it) within a cosine of 1e-5; with LPIPE_ENCODER_WEIGHTS=bf16
 * (_i = 1; every product in BF16 where the CPU has it) within 1e-4
 * (measured on AVX-512 BF16: 2.6e-5 at worst); with
 * LPIPE_ENCODER_WEIGHTS=f32 (_i = 2, float products) within 1e-7
 * (measured: under 1e-8).
 */
START_TEST(test_real_model_fixtures)
{
	static const char *const weights[] = { NULL, "bf16", "f32" };
	static const double least_of[] = { 0.99999, 0.9999, 0.9999999 };
	double least = least_of[_i];
	struct lp_bert *m;
	struct lp_diag d;
	size_t n, n_ids, n_emb;
	char *sent = read_lines("sentences.txt", &n);
	char *ids = read_lines("ids.txt", &n_ids);
	char *emb = read_lines("embeddings.txt", &n_emb);
	const char *texts[64];
	size_t lens[64];
	const char *p;

	ck_assert_uint_eq(n, n_ids);
	ck_assert_uint_eq(n, n_emb);
	ck_assert_uint_le(n, 64);
	if (weights[_i])
		setenv("LPIPE_ENCODER_WEIGHTS", weights[_i], 1);
	if (lp_bert_load(model_dir, &m, &d))
		ck_abort_msg("load: %s", d.msg);
	ck_assert_uint_eq(lp_bert_dim(m), 384);
	ck_assert_uint_eq(lp_bert_window(m), 256);
	p = sent;
	for (size_t i = 0; i < n; i++) {
		texts[i] = p;
		lens[i] = strlen(p);
		p += lens[i] + 1;
	}
	/* Token ids: the full sequence, [CLS] and [SEP] around it. */
	p = ids;
	for (size_t i = 0; i < n; i++) {
		struct lp_wordpiece_ids v = { 0 };
		char *end;
		size_t k = 0;
		ck_assert_int_eq(lp_wordpiece_tokenize(lp_bert_tokenizer(m), texts[i], lens[i], &v,
						       &d), LP_OK);
		ck_assert_int_eq(strtol(p, &end, 10), 101);
		for (p = end; k < v.n; k++, p = end)
			ck_assert_msg(strtol(p, &end, 10) == v.ids[k], "text %zu token %zu", i, k);
		ck_assert_int_eq(strtol(p, &end, 10), 102);
		p = end;
		while (*p == ' ')
			p++;
		ck_assert_msg(*p == '\0', "text %zu: reference has more tokens", i);
		p++;
		lp_wordpiece_ids_release(&v);
	}
	/* Embeddings: cosine >= least each. */
	float *out = malloc(n * 384 * sizeof(float));
	ck_assert_int_eq(lp_bert_embed(m, texts, lens, n, out, &d), LP_OK);
	p = emb;
	for (size_t i = 0; i < n; i++) {
		double dot = 0, nr = 0;
		char *end;
		for (int j = 0; j < 384; j++, p = end) {
			double r = strtod(p, &end);
			ck_assert_ptr_ne(end, p);
			dot += r * out[i * 384 + j];
			nr += r * r;
		}
		p = end + 1;
		ck_assert_msg(dot / sqrt(nr) >= least, "text %zu: cosine %.9f", i, dot / sqrt(nr));
	}
	free(out);
	free(sent);
	free(ids);
	free(emb);
	lp_bert_free(m);
	unsetenv("LPIPE_ENCODER_WEIGHTS");
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("embed");
	TCase *tc;
	SRunner *sr;
	int failed;

#ifdef CHECK_REAL_MODEL
	if (!find_model()) {
		printf("skip: no model at %s (run scripts/fetch-embedder)\n", model_dir);
		return 77;
	}
	tc = tcase_create("real-model");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_real_model_fixtures, 0, 3);
	suite_add_tcase(s, tc);
#else
	tc = tcase_create("safetensors");
	tcase_add_test(tc, test_st_round_trip);
	tcase_add_test(tc, test_st_f16_values);
	tcase_add_test(tc, test_st_hostile_headers);
	tcase_add_test(tc, test_st_missing_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("wordpiece");
	tcase_add_test(tc, test_wp_basic);
	tcase_add_test(tc, test_wp_unicode);
	tcase_add_test(tc, test_wp_long_words);
	tcase_add_test(tc, test_wp_encode_and_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("bert");
	tcase_add_test(tc, test_bert_tiny_f32);
	tcase_add_test(tc, test_bert_tiny_f16);
	tcase_add_test(tc, test_bert_tiny_scalar);
	tcase_add_test(tc, test_bert_tiny_texts_and_windows);
	tcase_add_test(tc, test_bert_tiny_batches);
	tcase_add_test(tc, test_bert_tiny_threads);
	tcase_add_test(tc, test_embedder_dense_pool_kept);
	tcase_add_test(tc, test_dense_id_memo);
	tcase_add_test(tc, test_bert_bad_models);
	tcase_add_test(tc, test_bert_hostile_models);
	tcase_add_loop_test(tc, test_bert_alloc_faults, 0, 2 * 70);
	suite_add_tcase(s, tc);
#endif
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
