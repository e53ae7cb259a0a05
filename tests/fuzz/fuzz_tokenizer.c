/*
 * fuzz_tokenizer.c - encode/decode on tiny BPE and SentencePiece vocabularies.
 *
 * The first input byte picks the vocabulary (bit 0: SPM), special-token
 * parsing (bit 1) and BOS/EOS (bit 2); the rest is the text. Invariants:
 * encoding succeeds, lp_tok_count agrees with it, ids are in range, decoding
 * gives the text back byte for byte (both vocabularies have a token for every
 * byte; SPM without special parsing, since the "▁" prefix after a special
 * token is not in the text), and the streaming decoder equals the whole one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "model/tokenizer.h"

static struct lp_tok *bpe, *spm;

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_tokenizer: %s\n", what);
	abort();
}

static struct lp_tok *build(struct lp_vocab_spec *s)
{
	struct lp_vocab *v;
	struct lp_tok *t;
	struct lp_diag d;

	lp_diag_init(&d);
	if (lp_vocab_new(s, &v, &d) || lp_tok_new(v, &t, &d))
		fail(d.msg);
	return t;
}

static void setup(void)
{
	static char bytes[256][8];
	static const char *toks[300];
	static int32_t types[300];
	static float scores[300];
	static const char *const merges[] = {
		"\xc4\xa0 t", "h e", "\xc4\xa0t he", "l l", "e ll", "ell o", "1 2", "\xc4\xa0 \xc4\xa0",
	};
	static const char *const bpe_extra[] = {
		"\xc4\xa0t", "he", "\xc4\xa0the", "ll", "ell", "ello", "12", "\xc4\xa0\xc4\xa0",
	};
	static const char *const spm_extra[] = {
		"\xe2\x96\x81", "\xe2\x96\x81t", "he", "\xe2\x96\x81the", "ll", "\xe2\x96\x81\xe2\x96\x81",
		"a", "e", "h", "t", "\xe6\x97\xa5",
	};
	struct lp_vocab_spec s;
	size_t n = 0;

	for (unsigned b = 0; b < 256; b++) {
		lp_utf8_encode(lp_vocab_byte_to_cp((unsigned char)b), (unsigned char *)bytes[b]);
		toks[n] = bytes[b];
		types[n++] = LP_TOKEN_NORMAL;
	}
	for (size_t i = 0; i < sizeof(bpe_extra) / sizeof(bpe_extra[0]); i++) {
		toks[n] = bpe_extra[i];
		types[n++] = LP_TOKEN_NORMAL;
	}
	toks[n] = "<|im_start|>";
	types[n++] = LP_TOKEN_CONTROL;
	toks[n] = "<|im_end|>";
	types[n++] = LP_TOKEN_CONTROL;
	lp_vocab_spec_init(&s, LP_VOCAB_BPE);
	s.pre = "smollm";
	s.n_tokens = n;
	s.tokens = toks;
	s.types = types;
	s.merges = merges;
	s.n_merges = sizeof(merges) / sizeof(merges[0]);
	s.bos = (int32_t)n - 2;
	s.eos = (int32_t)n - 1;
	s.add_bos = s.add_eos = 1;
	bpe = build(&s);

	n = 0;
	static char hex[256][8];
	toks[n] = "<unk>";
	types[n++] = LP_TOKEN_UNKNOWN;
	toks[n] = "<s>";
	types[n++] = LP_TOKEN_CONTROL;
	toks[n] = "</s>";
	types[n++] = LP_TOKEN_CONTROL;
	for (unsigned b = 0; b < 256; b++) {
		snprintf(hex[b], sizeof(hex[b]), "<0x%02X>", b);
		toks[n] = hex[b];
		types[n++] = LP_TOKEN_BYTE;
	}
	for (size_t i = 0; i < sizeof(spm_extra) / sizeof(spm_extra[0]); i++) {
		scores[n] = -(float)i;
		toks[n] = spm_extra[i];
		types[n++] = LP_TOKEN_NORMAL;
	}
	lp_vocab_spec_init(&s, LP_VOCAB_SPM);
	s.n_tokens = n;
	s.tokens = toks;
	s.types = types;
	s.scores = scores;
	s.unk = 0;
	s.bos = 1;
	s.eos = 2;
	spm = build(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_tokens ids;
	struct lp_buf whole, streamed;
	struct lp_detok dt;
	struct lp_diag d;
	const struct lp_tok *t;
	const char *text = (const char *)data + 1;
	unsigned mode, flags = 0;
	size_t len, count;

	if (!bpe)
		setup();
	if (!size)
		return 0;
	mode = data[0];
	len = size - 1;
	t = mode & 1 ? spm : bpe;
	if (mode & 2)
		flags |= LP_TOK_SPECIAL;
	if (mode & 4)
		flags |= LP_TOK_ADD_SPECIAL;
	lp_tokens_init(&ids);
	lp_buf_init(&whole);
	lp_buf_init(&streamed);
	lp_diag_init(&d);
	if (lp_tok_encode(t, text, len, flags | LP_TOK_OFFSETS, &ids, &d))
		fail("encode failed");
	if (lp_tok_count(t, text, len, flags, &count, &d) || count != ids.n)
		fail("count differs from encode");
	for (size_t i = 0; i < ids.n; i++) {
		if (ids.ids[i] < 0 || ids.ids[i] >= lp_vocab_n_tokens(lp_tok_vocab(t)))
			fail("id out of range");
		if (ids.offsets[i] > len || (i && ids.offsets[i] < ids.offsets[i - 1]))
			fail("offsets not monotonic within the text");
	}
	if (lp_tok_decode(t, ids.ids, ids.n, flags & LP_TOK_SPECIAL, &whole))
		fail("decode failed");
	if (!(mode & 1) || !(flags & LP_TOK_SPECIAL)) {
		/* BOS/EOS are control tokens: they print only with LP_TOK_SPECIAL. */
		const char *w = whole.data;
		size_t wl = whole.len;

		if ((flags & LP_TOK_ADD_SPECIAL) && (flags & LP_TOK_SPECIAL) && !(mode & 1)) {
			w += strlen("<|im_start|>");
			wl -= strlen("<|im_start|>") + strlen("<|im_end|>");
		}
		if (wl != len || memcmp(w, text, len))
			fail("decode(encode(text)) != text");
	}
	lp_detok_init(&dt, t, flags & LP_TOK_SPECIAL);
	for (size_t i = 0; i < ids.n; i++)
		if (lp_detok_push(&dt, ids.ids[i], &streamed))
			fail("stream decode failed");
	lp_detok_flush(&dt, &streamed);
	if (streamed.len != whole.len || memcmp(streamed.data, whole.data, whole.len))
		fail("streamed decode differs");
	lp_buf_release(&whole);
	lp_buf_release(&streamed);
	lp_tokens_release(&ids);
	return 0;
}
