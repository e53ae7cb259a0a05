/*
 * check_tokenizer.c - vocabulary, BPE and SentencePiece tokenizers.
 *
 * Built twice (see src/model/local.mk): check_tokenizer runs the unit tests
 * on tiny vocabularies made here; check_tokenizer_model (LP_TOK_REAL_MODEL)
 * compares SmolLM2-135M-Instruct with tests/data/smollm2/tokens.tsv and
 * exits 77 (skip) when the model file is absent.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/utf8.h"
#include "model/chat.h"
#include "model/gguf.h"
#include "model/tokenizer.h"
#include "tools/gguf_writer.h"

#ifdef LP_TOK_REAL_MODEL
/* This build registers only the real-model tests; the others stay compiled. */
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

/* ---- tiny vocabularies ---------------------------------------------------- */

#define MAX_TOKS 400

struct tiny {
	const char *toks[MAX_TOKS];
	char store[MAX_TOKS][16];
	int32_t types[MAX_TOKS];
	float scores[MAX_TOKS];
	size_t n;
};

static int32_t tiny_add(struct tiny *t, const char *text, int32_t type, float score)
{
	snprintf(t->store[t->n], sizeof(t->store[0]), "%s", text);
	t->toks[t->n] = t->store[t->n];
	t->types[t->n] = type;
	t->scores[t->n] = score;
	return (int32_t)t->n++;
}

/* Byte-level BPE: ids 0..255 are the bytes, then `extra`, then one control
 * token "<|im_start|>" and one "<|im_start|>x" (a longer special). */
static struct lp_tok *bpe_tok(const char *pre, const char *const *extra,
			      const char *const *merges, size_t n_merges)
{
	static struct tiny t;
	struct lp_vocab_spec s;
	struct lp_vocab *v;
	struct lp_tok *tok;
	struct lp_diag d;

	t.n = 0;
	for (unsigned b = 0; b < 256; b++) {
		unsigned char u[5] = { 0 };

		lp_utf8_encode(lp_vocab_byte_to_cp((unsigned char)b), u);
		tiny_add(&t, (const char *)u, LP_TOKEN_NORMAL, 0);
	}
	for (size_t i = 0; extra && extra[i]; i++)
		tiny_add(&t, extra[i], LP_TOKEN_NORMAL, 0);
	tiny_add(&t, "<|im_start|>", LP_TOKEN_CONTROL, 0);
	tiny_add(&t, "<|im_start|>x", LP_TOKEN_CONTROL, 0);
	lp_vocab_spec_init(&s, LP_VOCAB_BPE);
	s.pre = pre;
	s.n_tokens = t.n;
	s.tokens = t.toks;
	s.types = t.types;
	s.merges = merges;
	s.n_merges = n_merges;
	s.eos = (int32_t)t.n - 2;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_vocab_new(&s, &v, &d), LP_OK);
	ck_assert_int_eq(lp_tok_new(v, &tok, &d), LP_OK);
	return tok;
}

static int32_t id_of(const struct lp_tok *t, const char *text)
{
	int32_t id = lp_vocab_find(lp_tok_vocab(t), text, strlen(text));

	ck_assert_msg(id >= 0, "no token '%s'", text);
	return id;
}

/* Encode and render the ids as stored texts joined by '|'. */
static const char *enc_str(const struct lp_tok *t, const char *text, unsigned flags)
{
	static char out[1024];
	struct lp_tokens ids;
	struct lp_diag d;
	size_t k = 0;

	lp_tokens_init(&ids);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_tok_encode(t, text, strlen(text), flags, &ids, &d), LP_OK);
	out[0] = '\0';
	for (size_t i = 0; i < ids.n; i++) {
		size_t len;
		const char *s = lp_vocab_text(lp_tok_vocab(t), ids.ids[i], &len);

		k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%.*s", i ? "|" : "", (int)len, s);
	}
	lp_tokens_release(&ids);
	return out;
}

/* ---- BPE -------------------------------------------------------------------- */

START_TEST(test_bpe_merge_rank_order)
{
	static const char *const extra[] = { "ab", "bc", "abc", NULL };
	static const char *const m1[] = { "a b", "b c", "ab c" };
	static const char *const m2[] = { "b c", "a b", "a bc" };
	struct lp_tok *t = bpe_tok("gpt2", extra, m1, 3);

	/* "a b" ranks first: ab|c, then "ab c" -> abc. */
	ck_assert_str_eq(enc_str(t, "abc", 0), "abc");
	lp_tok_free(t);
	t = bpe_tok("gpt2", extra, m1, 2);
	ck_assert_str_eq(enc_str(t, "abc", 0), "ab|c");
	lp_tok_free(t);
	t = bpe_tok("gpt2", extra, m2, 2);
	ck_assert_str_eq(enc_str(t, "abc", 0), "a|bc");
	lp_tok_free(t);
	t = bpe_tok("gpt2", extra, m2, 3);
	ck_assert_str_eq(enc_str(t, "abc", 0), "abc");
	lp_tok_free(t);
}
END_TEST

START_TEST(test_bpe_equal_ranks_merge_leftmost)
{
	static const char *const extra[] = { "aa", "aaaa", NULL };
	static const char *const m[] = { "a a", "aa aa" };
	struct lp_tok *t = bpe_tok("gpt2", extra, m, 2);

	ck_assert_str_eq(enc_str(t, "aaa", 0), "aa|a");
	ck_assert_str_eq(enc_str(t, "aaaaa", 0), "aaaa|a");
	lp_tok_free(t);
}
END_TEST

START_TEST(test_bpe_pretokenizer_bounds_merges)
{
	/* "aĠ" would merge across the word boundary if the regex did not cut
	 * "a b" into "a" and " b" first. */
	static const char *const extra[] = { "a\xc4\xa0", "\xc4\xa0" "b", "12", NULL };
	static const char *const m[] = { "a \xc4\xa0", "\xc4\xa0 b", "1 2" };
	struct lp_tok *t = bpe_tok("gpt2", extra, m, 3);

	ck_assert_str_eq(enc_str(t, "a b", 0), "a|\xc4\xa0" "b");
	ck_assert_str_eq(enc_str(t, "123", 0), "12|3");
	lp_tok_free(t);
	/* SmolLM: every digit is its own piece. */
	t = bpe_tok("smollm", extra, m, 3);
	ck_assert_str_eq(enc_str(t, "123", 0), "1|2|3");
	lp_tok_free(t);
}
END_TEST

START_TEST(test_pre_tokenizers_split_differently)
{
	/* "3 4" ranks first: it shows whether 3 and 4 share a piece. */
	static const char *const extra[] = { "34", "12", ".H", NULL };
	static const char *const m[] = { "3 4", "1 2", ". H" };
	struct lp_tok *t = bpe_tok("gpt2", extra, m, 3);

	ck_assert_str_eq(enc_str(t, "12345", 0), "12|34|5");  /* one piece */
	ck_assert_str_eq(enc_str(t, ".H", 0), ".|H");         /* symbol, word */
	lp_tok_free(t);
	t = bpe_tok("llama-bpe", extra, m, 3);
	ck_assert_str_eq(enc_str(t, "12345", 0), "12|3|4|5"); /* 123 | 45 */
	ck_assert_str_eq(enc_str(t, ".H", 0), ".H");          /* one leading symbol */
	lp_tok_free(t);
	t = bpe_tok("qwen2", extra, m, 3);
	ck_assert_str_eq(enc_str(t, "12345", 0), "1|2|3|4|5");
	lp_tok_free(t);
	t = bpe_tok("smollm", extra, m, 3);
	ck_assert_str_eq(enc_str(t, "12345", 0), "1|2|3|4|5");
	ck_assert_str_eq(enc_str(t, ".H", 0), ".|H");
	lp_tok_free(t);
}
END_TEST

START_TEST(test_pre_patterns_by_name)
{
	const char *p[2];
	int known;

	ck_assert_int_eq(lp_tok_pre_patterns("smollm", p, &known), 2);
	ck_assert_int_eq(known, 1);
	ck_assert_str_eq(p[0], "\\p{N}");
	ck_assert_int_eq(lp_tok_pre_patterns("llama-bpe", p, &known), 1);
	ck_assert_ptr_nonnull(strstr(p[0], "\\p{N}{1,3}"));
	ck_assert_int_eq(lp_tok_pre_patterns("qwen2", p, &known), 1);
	ck_assert_ptr_null(strstr(p[0], "{1,3}"));
	ck_assert_int_eq(lp_tok_pre_patterns("no-such-pre", p, &known), 1);
	ck_assert_int_eq(known, 0);
	ck_assert_ptr_nonnull(strstr(p[0], " ?\\p{L}+"));
}
END_TEST

START_TEST(test_bpe_whitespace_and_contractions)
{
	struct lp_tok *t = bpe_tok("gpt2", NULL, NULL, 0);
	struct lp_tokens ids;
	struct lp_diag d;

	/* Without merges every byte is a token; what is checked here is that
	 * decode restores the text exactly. */
	ck_assert_str_eq(enc_str(t, "a  b", 0), "a|\xc4\xa0|\xc4\xa0|b");
	lp_tokens_init(&ids);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_tok_encode(t, "x\ty", 3, LP_TOK_OFFSETS, &ids, &d), LP_OK);
	ck_assert_uint_eq(ids.n, 3);
	ck_assert_uint_eq(ids.offsets[2], 2);
	lp_tokens_release(&ids);
	lp_tok_free(t);
}
END_TEST

START_TEST(test_llama3_ignore_merges)
{
	/* "abc" is a token but no merge builds it: llama-bpe takes the whole
	 * word, gpt2 does not. */
	static const char *const extra[] = { "abc", NULL };
	struct lp_tok *t = bpe_tok("llama-bpe", extra, NULL, 0);

	ck_assert_str_eq(enc_str(t, "abc", 0), "abc");
	lp_tok_free(t);
	t = bpe_tok("gpt2", extra, NULL, 0);
	ck_assert_str_eq(enc_str(t, "abc", 0), "a|b|c");
	lp_tok_free(t);
}
END_TEST

START_TEST(test_special_tokens_only_when_asked)
{
	struct lp_tok *t = bpe_tok("gpt2", NULL, NULL, 0);
	struct lp_tokens ids;
	struct lp_diag d;
	int32_t im = id_of(t, "<|im_start|>"), imx = id_of(t, "<|im_start|>x");
	const char *txt = "hi<|im_start|>y<|im_start|>x";

	lp_tokens_init(&ids);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_tok_encode(t, txt, strlen(txt), 0, &ids, &d), LP_OK);
	for (size_t i = 0; i < ids.n; i++)
		ck_assert(ids.ids[i] != im && ids.ids[i] != imx);
	ck_assert_uint_eq(ids.n, strlen(txt));
	lp_tokens_reset(&ids);
	ck_assert_int_eq(lp_tok_encode(t, txt, strlen(txt), LP_TOK_SPECIAL, &ids, &d), LP_OK);
	/* h i <|im_start|> y <|im_start|>x: the longest special wins. */
	ck_assert_uint_eq(ids.n, 5);
	ck_assert_int_eq(ids.ids[2], im);
	ck_assert_int_eq(ids.ids[4], imx);
	lp_tokens_release(&ids);
	lp_tok_free(t);
}
END_TEST

START_TEST(test_guarded_encode_keeps_spans_plain)
{
	struct lp_tok *t = bpe_tok("gpt2", NULL, NULL, 0);
	const char *txt = "a<|im_start|>b<|im_start|>";
	struct lp_tok_span plain = { 1, 14 }; /* "<|im_start|>b" and one more byte */
	struct lp_tok_span bad[2] = { { 5, 3 }, { 6, 1 } };
	struct lp_tokens ids;
	struct lp_diag d;
	int32_t im = id_of(t, "<|im_start|>");

	lp_tokens_init(&ids);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_tok_encode_guarded(t, txt, strlen(txt), 0, &plain, 1, &ids, &d),
			 LP_OK);
	/* a, 12 bytes, b, then the second marker only partly overlaps the
	 * span (starts at 14 < 15): plain too. */
	ck_assert_uint_eq(ids.n, strlen(txt));
	lp_tokens_reset(&ids);
	plain.len = 13; /* up to and including "b" */
	ck_assert_int_eq(lp_tok_encode_guarded(t, txt, strlen(txt), 0, &plain, 1, &ids, &d),
			 LP_OK);
	ck_assert_uint_eq(ids.n, 1 + 12 + 1 + 1);
	ck_assert_int_eq(ids.ids[14], im);
	for (size_t i = 0; i < 14; i++)
		ck_assert_int_ne(ids.ids[i], im);
	lp_tokens_reset(&ids);
	ck_assert_int_eq(lp_tok_encode_guarded(t, txt, strlen(txt), 0, bad, 2, &ids, &d),
			 LP_E_INTERNAL);
	lp_tokens_release(&ids);
	lp_tok_free(t);
}
END_TEST

START_TEST(test_decode_control_tokens)
{
	struct lp_tok *t = bpe_tok("gpt2", NULL, NULL, 0);
	int32_t ids[3];
	struct lp_buf b;

	ids[0] = id_of(t, "<|im_start|>");
	ids[1] = id_of(t, "o");
	ids[2] = id_of(t, "k");
	lp_buf_init(&b);
	ck_assert_int_eq(lp_tok_decode(t, ids, 3, 0, &b), LP_OK);
	ck_assert_str_eq(b.data, "ok");
	lp_buf_reset(&b);
	ck_assert_int_eq(lp_tok_decode(t, ids, 3, LP_TOK_SPECIAL, &b), LP_OK);
	ck_assert_str_eq(b.data, "<|im_start|>ok");
	lp_buf_release(&b);
	lp_tok_free(t);
}
END_TEST

START_TEST(test_streaming_decode_holds_partial_utf8)
{
	struct lp_tok *t = bpe_tok("gpt2", NULL, NULL, 0);
	const char *s = "\xc3\xa9\xf0\x9f\x98\x80!"; /* é 😀 ! */
	struct lp_tokens ids;
	struct lp_detok dt;
	struct lp_buf out;
	struct lp_diag d;
	size_t lens[7];

	lp_tokens_init(&ids);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_tok_encode(t, s, strlen(s), 0, &ids, &d), LP_OK);
	ck_assert_uint_eq(ids.n, 7); /* one token per byte: no merges */
	lp_buf_init(&out);
	lp_detok_init(&dt, t, 0);
	for (size_t i = 0; i < ids.n; i++) {
		ck_assert_int_eq(lp_detok_push(&dt, ids.ids[i], &out), LP_OK);
		lens[i] = out.len;
		ck_assert_uint_eq(lp_utf8_find_invalid((const unsigned char *)out.data, out.len),
				  out.len);
	}
	ck_assert_uint_eq(lens[0], 0);
	ck_assert_uint_eq(lens[1], 2);
	ck_assert_uint_eq(lens[4], 2);
	ck_assert_uint_eq(lens[5], 6);
	ck_assert_str_eq(out.data, s);
	/* A lead byte with nothing after it comes out on flush. */
	lp_buf_reset(&out);
	lp_detok_init(&dt, t, 0);
	ck_assert_int_eq(lp_detok_push(&dt, ids.ids[2], &out), LP_OK);
	ck_assert_uint_eq(out.len, 0);
	ck_assert_int_eq(lp_detok_flush(&dt, &out), LP_OK);
	ck_assert_uint_eq(out.len, 1);
	ck_assert_int_eq((unsigned char)out.data[0], 0xf0);
	lp_buf_release(&out);
	lp_tokens_release(&ids);
	lp_tok_free(t);
}
END_TEST

START_TEST(test_roundtrip_invalid_utf8)
{
	static const char *const extra[] = { "ab", NULL };
	static const char *const m[] = { "a b" };
	struct lp_tok *t = bpe_tok("smollm", extra, m, 1);
	const char s[] = "\xff\xfe ab \xc3 12\x80\n\n  \t";
	struct lp_tokens ids;
	struct lp_buf out;
	struct lp_diag d;
	size_t n;

	lp_tokens_init(&ids);
	lp_buf_init(&out);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_tok_encode(t, s, sizeof(s) - 1, 0, &ids, &d), LP_OK);
	ck_assert_int_eq(lp_tok_decode(t, ids.ids, ids.n, 0, &out), LP_OK);
	ck_assert_uint_eq(out.len, sizeof(s) - 1);
	ck_assert_mem_eq(out.data, s, sizeof(s) - 1);
	ck_assert_int_eq(lp_tok_count(t, s, sizeof(s) - 1, 0, &n, &d), LP_OK);
	ck_assert_uint_eq(n, ids.n);
	lp_buf_release(&out);
	lp_tokens_release(&ids);
	lp_tok_free(t);
}
END_TEST

/* ---- SentencePiece ----------------------------------------------------------- */

/* <unk> <s> </s>, the 256 byte tokens, then scored pieces. */
static struct lp_tok *spm_tok(float score_ab, float score_bc, int prefix)
{
	static struct tiny t;
	struct lp_vocab_spec s;
	struct lp_vocab *v;
	struct lp_tok *tok;
	struct lp_diag d;

	t.n = 0;
	tiny_add(&t, "<unk>", LP_TOKEN_UNKNOWN, 0);
	tiny_add(&t, "<s>", LP_TOKEN_CONTROL, 0);
	tiny_add(&t, "</s>", LP_TOKEN_CONTROL, 0);
	for (unsigned b = 0; b < 256; b++) {
		char name[8];

		snprintf(name, sizeof(name), "<0x%02X>", b);
		tiny_add(&t, name, LP_TOKEN_BYTE, 0);
	}
	tiny_add(&t, "\xe2\x96\x81", LP_TOKEN_NORMAL, -1);      /* ▁ */
	tiny_add(&t, "a", LP_TOKEN_NORMAL, -2);
	tiny_add(&t, "b", LP_TOKEN_NORMAL, -2);
	tiny_add(&t, "c", LP_TOKEN_NORMAL, -2);
	tiny_add(&t, "h", LP_TOKEN_NORMAL, -2);
	tiny_add(&t, "ab", LP_TOKEN_NORMAL, score_ab);
	tiny_add(&t, "bc", LP_TOKEN_NORMAL, score_bc);
	tiny_add(&t, "\xe2\x96\x81h", LP_TOKEN_NORMAL, -0.1f);  /* ▁h */
	tiny_add(&t, "\xc3\xa9", LP_TOKEN_NORMAL, -3);          /* é */
	lp_vocab_spec_init(&s, LP_VOCAB_SPM);
	s.n_tokens = t.n;
	s.tokens = t.toks;
	s.types = t.types;
	s.scores = t.scores;
	s.unk = 0;
	s.bos = 1;
	s.eos = 2;
	s.add_space_prefix = prefix;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_vocab_new(&s, &v, &d), LP_OK);
	ck_assert_int_eq(lp_tok_new(v, &tok, &d), LP_OK);
	return tok;
}

START_TEST(test_spm_score_order)
{
	struct lp_tok *t = spm_tok(-1.0f, -0.5f, 0);

	ck_assert_str_eq(enc_str(t, "abc", 0), "a|bc");
	lp_tok_free(t);
	t = spm_tok(-0.5f, -1.0f, 0);
	ck_assert_str_eq(enc_str(t, "abc", 0), "ab|c");
	lp_tok_free(t);
}
END_TEST

START_TEST(test_spm_prefix_bos_and_byte_fallback)
{
	struct lp_tok *t = spm_tok(-1.0f, -0.5f, 1);
	const char *s = "h\xc3\xa9z\n";
	struct lp_tokens ids;
	struct lp_buf out;
	struct lp_diag d;

	/* ▁h is one piece; z and \n have none and fall back to bytes. */
	ck_assert_str_eq(enc_str(t, s, LP_TOK_ADD_SPECIAL),
			 "<s>|\xe2\x96\x81h|\xc3\xa9|<0x7A>|<0x0A>");
	ck_assert_str_eq(enc_str(t, "a b", 0), "\xe2\x96\x81|a|\xe2\x96\x81|b");
	lp_tokens_init(&ids);
	lp_buf_init(&out);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_tok_encode(t, s, strlen(s), LP_TOK_ADD_SPECIAL, &ids, &d), LP_OK);
	ck_assert_int_eq(lp_tok_decode(t, ids.ids, ids.n, 0, &out), LP_OK);
	ck_assert_str_eq(out.data, s);
	lp_buf_release(&out);
	lp_tokens_release(&ids);
	lp_tok_free(t);
}
END_TEST

START_TEST(test_spm_special_and_prefix_after_special)
{
	struct lp_tok *t = spm_tok(-1.0f, -0.5f, 1);

	ck_assert_str_eq(enc_str(t, "h</s>h", LP_TOK_SPECIAL),
			 "\xe2\x96\x81h|</s>|\xe2\x96\x81h");
	/* Not parsed: '<', '/', 's', '>' are bytes. */
	ck_assert_str_eq(enc_str(t, "</s>", 0),
			 "\xe2\x96\x81|<0x3C>|<0x2F>|<0x73>|<0x3E>");
	lp_tok_free(t);
}
END_TEST

/* ---- vocabulary --------------------------------------------------------------- */

START_TEST(test_vocab_rejects_bad_ids_and_counts_bad_merges)
{
	const char *toks[] = { "a", "b", "ab" };
	const char *merges[] = { "a b", "a c", "nospace" };
	struct lp_vocab_spec s;
	struct lp_vocab *v;
	struct lp_diag d;

	lp_vocab_spec_init(&s, LP_VOCAB_BPE);
	s.n_tokens = 3;
	s.tokens = toks;
	s.eos = 3;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_vocab_new(&s, &v, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "eos id 3"));
	s.eos = 2;
	s.merges = merges;
	s.n_merges = 3;
	ck_assert_int_eq(lp_vocab_new(&s, &v, &d), LP_OK);
	ck_assert_uint_eq(lp_vocab_n_bad_merges(v), 2);
	ck_assert_int_eq(lp_vocab_find(v, "ab", 2), 2);
	ck_assert_int_eq(lp_vocab_find(v, "abc", 3), -1);
	{
		int32_t res = -1;

		ck_assert_int_eq(lp_vocab_merge(v, 0, 1, &res), 0);
		ck_assert_int_eq(res, 2);
		ck_assert_int_eq(lp_vocab_merge(v, 1, 0, &res), -1);
	}
	/* "a" and "b" have no byte tokens other than themselves; the rest are -1. */
	ck_assert_int_eq(lp_vocab_byte_token(v, 'a'), 0);
	ck_assert_int_eq(lp_vocab_byte_token(v, 'z'), -1);
	lp_vocab_free(v);
	lp_vocab_free(NULL);
}
END_TEST

START_TEST(test_byte_alphabet_is_a_bijection)
{
	for (unsigned b = 0; b < 256; b++)
		ck_assert_int_eq(lp_vocab_cp_to_byte(lp_vocab_byte_to_cp((unsigned char)b)), (int)b);
	ck_assert_uint_eq(lp_vocab_byte_to_cp(' '), 0x120); /* Ġ */
	ck_assert_uint_eq(lp_vocab_byte_to_cp('\n'), 0x10A); /* Ċ */
	ck_assert_int_eq(lp_vocab_cp_to_byte(0x2581), -1);
}
END_TEST

/* ---- GGUF ----------------------------------------------------------------------- */

static enum lp_status tok_from_writer(struct gw *w, struct lp_tok **tok, struct lp_diag *d)
{
	unsigned char *bytes;
	size_t len;
	struct lp_gguf *g;
	enum lp_status st;

	gw_write_mem(w, &bytes, &len);
	st = lp_gguf_open_bytes("tiny.gguf", bytes, len, &g, d);
	ck_assert_int_eq(st, LP_OK);
	st = lp_tok_from_gguf(g, tok, d);
	lp_gguf_close(g);
	free(bytes);
	return st;
}

START_TEST(test_gguf_vocab)
{
	const char *toks[260], *merges[] = { "a b" };
	char store[256][5];
	int32_t types[260];
	struct gw *w = gw_new();
	struct lp_tok *tok;
	struct lp_diag d;
	const char *tmpl = "{{'<|im_start|>' + m + '<|im_end|>'}}";

	for (unsigned b = 0; b < 256; b++) {
		memset(store[b], 0, 5);
		lp_utf8_encode(lp_vocab_byte_to_cp((unsigned char)b), (unsigned char *)store[b]);
		toks[b] = store[b];
		types[b] = LP_TOKEN_NORMAL;
	}
	toks[256] = "ab";
	toks[257] = "<|im_start|>";
	toks[258] = "<|im_end|>";
	types[256] = LP_TOKEN_NORMAL;
	types[257] = types[258] = LP_TOKEN_CONTROL;
	gw_add_str(w, "tokenizer.ggml.model", "gpt2");
	gw_add_str(w, "tokenizer.ggml.pre", "smollm");
	gw_add_arr_str(w, "tokenizer.ggml.tokens", toks, 259);
	gw_add_arr(w, "tokenizer.ggml.token_type", LP_GGUF_INT32, types, 259);
	gw_add_arr_str(w, "tokenizer.ggml.merges", merges, 1);
	gw_add_u32(w, "tokenizer.ggml.bos_token_id", 257);
	gw_add_u32(w, "tokenizer.ggml.eos_token_id", 258);
	gw_add_bool(w, "tokenizer.ggml.add_bos_token", 1);
	gw_add_str(w, "tokenizer.chat_template", tmpl);
	lp_diag_init(&d);
	ck_assert_int_eq(tok_from_writer(w, &tok, &d), LP_OK);
	ck_assert_str_eq(lp_vocab_pre(lp_tok_vocab(tok)), "smollm");
	ck_assert_int_eq(lp_vocab_eos(lp_tok_vocab(tok)), 258);
	ck_assert_int_eq(lp_vocab_add_bos(lp_tok_vocab(tok)), 1);
	ck_assert_str_eq(lp_vocab_chat_template(lp_tok_vocab(tok)), tmpl);
	ck_assert_int_eq(lp_chat_detect(lp_vocab_chat_template(lp_tok_vocab(tok))), LP_CHAT_CHATML);
	ck_assert_str_eq(enc_str(tok, "ab", LP_TOK_ADD_SPECIAL), "<|im_start|>|ab");
	lp_tok_free(tok);
	gw_free(w);
}
END_TEST

START_TEST(test_gguf_vocab_errors)
{
	const char *toks[] = { "a" };
	int32_t bad_type[] = { 9 };
	struct gw *w = gw_new();
	struct lp_tok *tok;
	struct lp_diag d;

	lp_diag_init(&d);
	gw_add_arr_str(w, "tokenizer.ggml.tokens", toks, 1);
	ck_assert_int_eq(tok_from_writer(w, &tok, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "tokenizer.ggml.model"));
	ck_assert_str_eq(d.file, "tiny.gguf");
	gw_free(w);

	w = gw_new();
	gw_add_str(w, "tokenizer.ggml.model", "bert");
	gw_add_arr_str(w, "tokenizer.ggml.tokens", toks, 1);
	ck_assert_int_eq(tok_from_writer(w, &tok, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "'bert'"));
	gw_free(w);

	w = gw_new();
	gw_add_str(w, "tokenizer.ggml.model", "llama");
	gw_add_arr_str(w, "tokenizer.ggml.tokens", toks, 1);
	gw_add_arr(w, "tokenizer.ggml.token_type", LP_GGUF_INT32, bad_type, 1);
	ck_assert_int_eq(tok_from_writer(w, &tok, &d), LP_E_MODEL);
	gw_free(w);

	w = gw_new();
	gw_add_str(w, "tokenizer.ggml.model", "llama");
	gw_add_str(w, "tokenizer.ggml.tokens", "not an array");
	ck_assert_int_eq(tok_from_writer(w, &tok, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "wrong type"));
	gw_free(w);
}
END_TEST

START_TEST(test_encode_fails_cleanly_without_memory)
{
	static const char *const extra[] = { "ab", NULL };
	static const char *const m[] = { "a b" };
	struct lp_tok *t = bpe_tok("gpt2", extra, m, 1);
	struct lp_tokens ids;
	struct lp_diag d;

	lp_tokens_init(&ids);
	lp_diag_init(&d);
	lp_mem_set_budget(lp_mem_current_total() + 64);
	ck_assert_int_eq(lp_tok_encode(t, "ab ab ab", 8, 0, &ids, &d), LP_E_NOMEM);
	ck_assert_int_eq(d.status, LP_E_NOMEM);
	lp_mem_set_budget(0);
	lp_tokens_release(&ids);
	lp_tok_free(t);
}
END_TEST

/* ---- the real model ------------------------------------------------------------ */

static char model_path[1024];

static int find_model(void)
{
	const char *env = getenv("LPIPE_MODEL"), *dir = getenv("LPIPE_MODEL_DIR");
	const char *home = getenv("HOME");

	if (env && *env)
		snprintf(model_path, sizeof(model_path), "%s", env);
	else if (dir && *dir)
		snprintf(model_path, sizeof(model_path), "%s/SmolLM2-135M-Instruct.Q4_1.gguf", dir);
	else
		snprintf(model_path, sizeof(model_path),
			 "%s/.cache/lpipe/models/SmolLM2-135M-Instruct.Q4_1.gguf", home ? home : "");
	return access(model_path, R_OK) == 0;
}

static size_t unescape(const char *s, char *out)
{
	size_t k = 0;

	for (; *s; s++) {
		unsigned v;

		if (*s != '\\') {
			out[k++] = *s;
			continue;
		}
		switch (*++s) {
		case 'n': out[k++] = '\n'; break;
		case 't': out[k++] = '\t'; break;
		case 'r': out[k++] = '\r'; break;
		case 'x':
			ck_assert_int_eq(sscanf(s + 1, "%2x", &v), 1);
			out[k++] = (char)v;
			s += 2;
			break;
		default: out[k++] = *s; break;
		}
	}
	return k;
}

static struct lp_tok *load_model(struct lp_gguf **g)
{
	struct lp_tok *tok;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_msg(lp_gguf_open(model_path, g, &d) == LP_OK, "%s", d.msg);
	ck_assert_msg(lp_tok_from_gguf(*g, &tok, &d) == LP_OK, "%s", d.msg);
	return tok;
}

/* Compare every line of tests/data/smollm2/FILE; returns the line count. */
static int check_fixture_file(const struct lp_tok *tok, const char *file)
{
	static char line[16384], text[16384], got[16384];
	char path[1024];
	const char *src = getenv("top_srcdir");
	struct lp_tokens ids;
	struct lp_buf out;
	struct lp_diag d;
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/tests/data/smollm2/%s", src ? src : ".", file);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	lp_tokens_init(&ids);
	lp_buf_init(&out);
	lp_diag_init(&d);
	while (fgets(line, sizeof(line), f)) {
		char *name, *esc, *idstr;
		size_t len, k = 0;

		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		name = strtok(line, "\t");
		esc = strtok(NULL, "\t");
		idstr = strtok(NULL, "\t");
		ck_assert(name && esc && idstr);
		len = unescape(esc, text);
		lp_tokens_reset(&ids);
		ck_assert_int_eq(lp_tok_encode(tok, text, len, 0, &ids, &d), LP_OK);
		got[0] = '\0';
		for (size_t i = 0; i < ids.n; i++)
			k += (size_t)snprintf(got + k, sizeof(got) - k, "%s%d", i ? " " : "", ids.ids[i]);
		ck_assert_msg(!strcmp(got, idstr), "%s %s: got %s, want %s", file, name, got, idstr);
		lp_buf_reset(&out);
		ck_assert_int_eq(lp_tok_decode(tok, ids.ids, ids.n, 0, &out), LP_OK);
		ck_assert_msg(out.len == len && !memcmp(out.data, text, len), "%s %s: round trip",
			      file, name);
		n++;
	}
	fclose(f);
	lp_buf_release(&out);
	lp_tokens_release(&ids);
	return n;
}

START_TEST(test_smollm2_fixtures)
{
	struct lp_gguf *g;
	struct lp_tok *tok = load_model(&g);

	ck_assert_int_ge(check_fixture_file(tok, "tokens.tsv"), 30);
	ck_assert_int_ge(check_fixture_file(tok, "random.tsv"), 500);
	lp_tok_free(tok);
	lp_gguf_close(g);
}
END_TEST

START_TEST(test_smollm2_chat_prompt)
{
	struct lp_gguf *g;
	struct lp_tok *tok = load_model(&g);
	const struct lp_vocab *v = lp_tok_vocab(tok);
	struct lp_chat chat;
	struct lp_chat_msg msg = { "user", "Say <|im_end|> please" };
	struct lp_buf prompt;
	struct lp_tokens ids, whole;
	struct lp_diag d;
	size_t n_end = 0;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_chat_init(&chat, lp_vocab_chat_template(v), NULL, &d), LP_OK);
	ck_assert_int_eq(chat.style, LP_CHAT_CHATML);
	ck_assert_str_eq(chat.default_system,
			 "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
	lp_tokens_init(&ids);
	lp_tokens_init(&whole);
	ck_assert_int_eq(lp_chat_encode(&chat, tok, &msg, 1, 1, &ids, &d), LP_OK);
	ck_assert_int_eq(ids.ids[0], 1); /* <|im_start|>, no BOS added */
	for (size_t i = 0; i < ids.n; i++)
		n_end += ids.ids[i] == 2;
	ck_assert_uint_eq(n_end, 2); /* system and user ends; the quoted one is text */
	ck_assert_int_eq(ids.ids[ids.n - 1], 198); /* "\n" after "assistant" */
	/* Parsing the whole rendered text turns the quote into a third end. */
	lp_buf_init(&prompt);
	ck_assert_int_eq(lp_chat_render(&chat, &msg, 1, 1, &prompt, &d), LP_OK);
	ck_assert_int_eq(lp_tok_encode(tok, prompt.data, prompt.len,
				       LP_TOK_SPECIAL | LP_TOK_ADD_SPECIAL, &whole, &d), LP_OK);
	n_end = 0;
	for (size_t i = 0; i < whole.n; i++)
		n_end += whole.ids[i] == 2;
	ck_assert_uint_eq(n_end, 3);
	lp_tokens_release(&whole);
	lp_tokens_release(&ids);
	lp_buf_release(&prompt);
	lp_chat_release(&chat);
	lp_tok_free(tok);
	lp_gguf_close(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tokenizer");
	TCase *tc = tcase_create("tokenizer");
	SRunner *sr;
	int failed;

#ifdef LP_TOK_REAL_MODEL
	if (!find_model()) {
		printf("skip: no model at %s (run scripts/fetch-models)\n", model_path);
		return 77;
	}
	tcase_add_test(tc, test_smollm2_fixtures);
	tcase_add_test(tc, test_smollm2_chat_prompt);
#else
	(void)find_model;
	(void)test_smollm2_fixtures;
	(void)test_smollm2_chat_prompt;
	tcase_add_test(tc, test_bpe_merge_rank_order);
	tcase_add_test(tc, test_bpe_equal_ranks_merge_leftmost);
	tcase_add_test(tc, test_bpe_pretokenizer_bounds_merges);
	tcase_add_test(tc, test_pre_patterns_by_name);
	tcase_add_test(tc, test_pre_tokenizers_split_differently);
	tcase_add_test(tc, test_bpe_whitespace_and_contractions);
	tcase_add_test(tc, test_llama3_ignore_merges);
	tcase_add_test(tc, test_special_tokens_only_when_asked);
	tcase_add_test(tc, test_guarded_encode_keeps_spans_plain);
	tcase_add_test(tc, test_decode_control_tokens);
	tcase_add_test(tc, test_streaming_decode_holds_partial_utf8);
	tcase_add_test(tc, test_roundtrip_invalid_utf8);
	tcase_add_test(tc, test_spm_score_order);
	tcase_add_test(tc, test_spm_prefix_bos_and_byte_fallback);
	tcase_add_test(tc, test_spm_special_and_prefix_after_special);
	tcase_add_test(tc, test_vocab_rejects_bad_ids_and_counts_bad_merges);
	tcase_add_test(tc, test_byte_alphabet_is_a_bijection);
	tcase_add_test(tc, test_gguf_vocab);
	tcase_add_test(tc, test_gguf_vocab_errors);
	tcase_add_test(tc, test_encode_fails_cleanly_without_memory);
#endif
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
