/*
 * tokenizer.h - text to token ids and back, for byte-level BPE ("gpt2") and
 * SentencePiece ("llama") vocabularies.
 *
 * Encoding
 *   BPE: the text is cut into pieces by the pre-tokenizer regexes that
 *   tokenizer.ggml.pre names (PCRE2 with Unicode properties; see
 *   lp_tok_pre_patterns), each piece is spelt in bytes and the vocabulary's
 *   merges are applied lowest rank first (leftmost first among equal ranks),
 *   O(n log n) in the piece length.
 *   SPM: spaces become "▁", a "▁" is put in front when the vocabulary asks
 *   (add_space_prefix) at the start and after each special token, and
 *   adjacent pieces merge highest score first while the result is a token;
 *   what remains without a token falls back to "<0xXX>" byte tokens (or the
 *   unknown token).
 *   Special tokens (control and user-defined types, e.g. "<|im_start|>") are
 *   recognised in the text ONLY when LP_TOK_SPECIAL is passed, which chat
 *   templates do; plain user text that happens to contain such a string is
 *   tokenized as ordinary text. Invalid UTF-8 is accepted: its bytes are
 *   encoded as bytes, so decode(encode(s)) == s for every byte string.
 *
 * Decoding
 *   Each token stands for bytes (lp_vocab_raw). A token may end in the middle
 *   of a UTF-8 character; struct lp_detok holds such an incomplete tail back
 *   until the next token completes it, so streamed output is always whole
 *   characters. Control tokens decode to nothing unless LP_TOK_SPECIAL.
 *
 * Threads: a struct lp_tok is immutable after lp_tok_new; encode and decode
 * may run concurrently on one tokenizer (each call has its own scratch).
 */
#ifndef LP_MODEL_TOKENIZER_H
#define LP_MODEL_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/status.h"
#include "model/vocab.h"

struct lp_gguf;
struct lp_tok;

enum lp_tok_flag {
	/* encode: match special-token texts; decode: print control tokens */
	LP_TOK_SPECIAL = 1u << 0,
	/* encode: add BOS / EOS when the vocabulary asks for them */
	LP_TOK_ADD_SPECIAL = 1u << 1,
	/* encode: also record each token's byte offset in the input */
	LP_TOK_OFFSETS = 1u << 2,
};

/*
 * A growable list of token ids (tracked under LP_MEM_DOC). offsets[i] is the
 * byte offset in the encoded text where ids[i] starts; it is filled only
 * when LP_TOK_OFFSETS was passed (added BOS/EOS get 0 and the text length).
 */
struct lp_tokens {
	int32_t *ids;
	size_t *offsets;
	size_t n;
	size_t cap;
};

void lp_tokens_init(struct lp_tokens *t);
void lp_tokens_release(struct lp_tokens *t);
/* Forget the ids, keep the storage. */
void lp_tokens_reset(struct lp_tokens *t);
/* Append one id (offset 0); LP_OK or LP_E_NOMEM (list unchanged). */
enum lp_status lp_tokens_push(struct lp_tokens *t, int32_t id);

/*
 * Make a tokenizer over `vocab`, which it now owns (freed by lp_tok_free,
 * also on failure). Compiles the pre-tokenizer of lp_vocab_pre(vocab); an
 * unknown name falls back to the GPT-2 pattern with a warning. Returns
 * LP_E_MODEL when a pattern does not compile, LP_E_NOMEM.
 */
enum lp_status lp_tok_new(struct lp_vocab *vocab, struct lp_tok **out, struct lp_diag *d);
/* lp_vocab_from_gguf + lp_tok_new. */
enum lp_status lp_tok_from_gguf(const struct lp_gguf *g, struct lp_tok **out,
				struct lp_diag *d);
void lp_tok_free(struct lp_tok *t);

/* The vocabulary (owned by the tokenizer). */
const struct lp_vocab *lp_tok_vocab(const struct lp_tok *t);

/*
 * The pre-tokenizer regexes for a tokenizer.ggml.pre name, applied in turn
 * (each splits the pieces of the previous one; text between matches is a
 * piece too). Returns the number of patterns (1 or 2) and stores them in
 * pats[0..1]; *known is set to 0 when the name was not recognised and the
 * GPT-2 pattern was returned instead. Strings are static.
 */
int lp_tok_pre_patterns(const char *pre, const char *pats[2], int *known);

/*
 * Append the ids of text[0..len) to `out`. flags: LP_TOK_*. Returns LP_OK,
 * or LP_E_NOMEM (out keeps the ids appended so far).
 */
enum lp_status lp_tok_encode(const struct lp_tok *t, const char *text, size_t len,
			     unsigned flags, struct lp_tokens *out, struct lp_diag *d);
/* A byte range of a text. */
struct lp_tok_span {
	size_t start;
	size_t len;
};

/*
 * lp_tok_encode with LP_TOK_SPECIAL, except that no special token is
 * matched overlapping plain[0..n_plain) (sorted, disjoint byte ranges):
 * a rendered chat prompt is tokenized exactly as a whole, while special
 * strings inside message contents stay plain text. Returns LP_E_INTERNAL
 * for unsorted or overlapping spans, else as lp_tok_encode.
 */
enum lp_status lp_tok_encode_guarded(const struct lp_tok *t, const char *text, size_t len,
				     unsigned flags, const struct lp_tok_span *plain,
				     size_t n_plain, struct lp_tokens *out, struct lp_diag *d);
/* Number of tokens lp_tok_encode would produce, without storing them. */
enum lp_status lp_tok_count(const struct lp_tok *t, const char *text, size_t len,
			    unsigned flags, size_t *n_tokens, struct lp_diag *d);

/*
 * The bytes token `id` stands for. Control tokens give "" unless
 * LP_TOK_SPECIAL; ids out of range give "". Never NULL; *len set.
 * The pointer stays valid while the tokenizer lives.
 */
const char *lp_tok_piece(const struct lp_tok *t, int32_t id, unsigned flags, size_t *len);

/*
 * Append the text of ids[0..n) to `out` (whole, not streamed: partial UTF-8
 * at the end is written as is). For SPM vocabularies with a space prefix the
 * leading space of the first piece is dropped. LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_tok_decode(const struct lp_tok *t, const int32_t *ids, size_t n,
			     unsigned flags, struct lp_buf *out);

/* Streaming decoder: an embedded struct, no allocation of its own. */
struct lp_detok {
	const struct lp_tok *tok;
	unsigned flags;
	int at_start;             /* no text emitted yet (SPM prefix removal) */
	size_t n_pending;
	unsigned char pending[4]; /* start of an incomplete UTF-8 character */
};

void lp_detok_init(struct lp_detok *s, const struct lp_tok *t, unsigned flags);
/* Append to `out` the text that token `id` completes; an incomplete UTF-8
 * character at the end is held back. LP_OK or LP_E_NOMEM. */
enum lp_status lp_detok_push(struct lp_detok *s, int32_t id, struct lp_buf *out);
/* Append whatever is held back (bytes as they are) and reset. */
enum lp_status lp_detok_flush(struct lp_detok *s, struct lp_buf *out);

#endif
