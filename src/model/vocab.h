/*
 * vocab.h - a model's vocabulary: token texts, scores, types, merges and the
 * special ids, built from plain arrays or from a GGUF file's tokenizer.ggml.*
 * metadata.
 *
 * Two kinds exist, named after GGUF's tokenizer.ggml.model:
 *   "gpt2"  byte-level BPE: token texts are written in GPT-2's byte-to-unicode
 *           alphabet (a space is "Ġ"); merges "A B" are applied by rank.
 *   "llama" SentencePiece: a space is "▁" (U+2581), pieces merge by score,
 *           bytes without a piece fall back to "<0xXX>" tokens.
 *
 * Invariants once built (lp_vocab_new succeeded):
 *   - every id in [0, n_tokens) has a text (possibly empty), a score, a type
 *     and a "raw" form: the bytes the token stands for in the output
 *     (byte-level alphabet undone, "▁" turned into a space, <0xXX> into the
 *     byte; control tokens keep their text);
 *   - every special id (bos, eos, eot, unk, pad) is -1 or in range;
 *   - every merge kept refers to three existing tokens (left, right and their
 *     concatenation); merges that do not are dropped with a warning count;
 *   - the object is immutable and may be shared between threads.
 *
 * Memory: all tables live in tracked memory under LP_MEM_OTHER.
 */
#ifndef LP_MODEL_VOCAB_H
#define LP_MODEL_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

struct lp_gguf;

enum lp_vocab_kind {
	LP_VOCAB_BPE, /* tokenizer.ggml.model = "gpt2" */
	LP_VOCAB_SPM, /* tokenizer.ggml.model = "llama" */
};

/* Token types, with GGUF's numbers (tokenizer.ggml.token_type). */
enum lp_token_type {
	LP_TOKEN_UNDEFINED = 0,
	LP_TOKEN_NORMAL = 1,
	LP_TOKEN_UNKNOWN = 2,
	LP_TOKEN_CONTROL = 3,
	LP_TOKEN_USER_DEFINED = 4,
	LP_TOKEN_UNUSED = 5,
	LP_TOKEN_BYTE = 6,
};

/*
 * What lp_vocab_new needs. Arrays are read during the call only (the vocab
 * copies what it keeps). NULL `token_lens`/`merge_lens` mean NUL-terminated
 * strings; NULL `scores` means all 0; NULL `types` means all NORMAL. Special
 * ids are -1 when absent. add_bos/add_eos/add_space_prefix: 0, 1, or -1 for
 * the kind's default (SPM: add BOS and a space prefix; BPE: neither).
 */
struct lp_vocab_spec {
	enum lp_vocab_kind kind;
	const char *pre;              /* tokenizer.ggml.pre, NULL = "default" */
	size_t n_tokens;
	const char *const *tokens;
	const size_t *token_lens;
	const float *scores;
	const int32_t *types;
	size_t n_merges;
	const char *const *merges;    /* "left right" */
	const size_t *merge_lens;
	int32_t bos, eos, eot, unk, pad;
	int add_bos, add_eos, add_space_prefix;
	const char *chat_template;    /* tokenizer.chat_template, or NULL */
};

/* A spec with every field empty and the special ids at -1, the flags at -1. */
void lp_vocab_spec_init(struct lp_vocab_spec *s, enum lp_vocab_kind kind);

struct lp_vocab;

/*
 * Build a vocabulary. On success *out belongs to the caller (lp_vocab_free).
 * Returns LP_E_MODEL for an empty vocabulary, a special id out of range or
 * an unknown token type;
 * LP_E_NOMEM when tracked memory runs out.
 */
enum lp_status lp_vocab_new(const struct lp_vocab_spec *spec, struct lp_vocab **out,
			    struct lp_diag *d);

/*
 * Read tokenizer.ggml.* (and tokenizer.chat_template) from an open GGUF file.
 * Returns LP_E_MODEL, naming the key, when a required key is missing or
 * mistyped or when tokenizer.ggml.model is neither "gpt2" nor "llama".
 */
enum lp_status lp_vocab_from_gguf(const struct lp_gguf *g, struct lp_vocab **out,
				  struct lp_diag *d);

void lp_vocab_free(struct lp_vocab *v);

enum lp_vocab_kind lp_vocab_kind(const struct lp_vocab *v);
/* tokenizer.ggml.pre ("default" when absent); never NULL. */
const char *lp_vocab_pre(const struct lp_vocab *v);
int32_t lp_vocab_n_tokens(const struct lp_vocab *v);

/* Token text as stored in the model (byte-level / "▁" alphabet), not
 * NUL-terminated; *len gets its length. NULL for an id out of range. */
const char *lp_vocab_text(const struct lp_vocab *v, int32_t id, size_t *len);
/* The bytes the token stands for (see above); NULL when out of range. */
const char *lp_vocab_raw(const struct lp_vocab *v, int32_t id, size_t *len);
float lp_vocab_score(const struct lp_vocab *v, int32_t id);
/* LP_TOKEN_UNDEFINED for an id out of range. */
enum lp_token_type lp_vocab_type(const struct lp_vocab *v, int32_t id);
/* Control and user-defined tokens: those special-token parsing may match. */
int lp_vocab_is_special(const struct lp_vocab *v, int32_t id);

/* Id of the token whose stored text is exactly text[0..len), or -1. */
int32_t lp_vocab_find(const struct lp_vocab *v, const char *text, size_t len);

/* Merge rank of the pair (left, right) and the id it produces, or -1 when
 * the pair does not merge (BPE only). */
int32_t lp_vocab_merge(const struct lp_vocab *v, int32_t left, int32_t right,
		       int32_t *result);
/* Token standing for the single byte `b` (BPE: its byte-level character;
 * SPM: "<0xXX>"), or -1 when the vocabulary has none (then the tokenizers
 * emit the unknown token, or nothing when there is none either). */
int32_t lp_vocab_byte_token(const struct lp_vocab *v, unsigned char b);

/* Special ids, -1 when absent. eot falls back to nothing (not to eos). */
int32_t lp_vocab_bos(const struct lp_vocab *v);
int32_t lp_vocab_eos(const struct lp_vocab *v);
int32_t lp_vocab_eot(const struct lp_vocab *v);
int32_t lp_vocab_unk(const struct lp_vocab *v);
int32_t lp_vocab_pad(const struct lp_vocab *v);
int lp_vocab_add_bos(const struct lp_vocab *v);
int lp_vocab_add_eos(const struct lp_vocab *v);
int lp_vocab_add_space_prefix(const struct lp_vocab *v);
/* tokenizer.chat_template, or NULL. */
const char *lp_vocab_chat_template(const struct lp_vocab *v);
/* Merges dropped because a part or the result was not a token. */
size_t lp_vocab_n_bad_merges(const struct lp_vocab *v);
/* Tracked bytes held by the tables (for reports). */
size_t lp_vocab_bytes(const struct lp_vocab *v);

/* GPT-2's byte-to-unicode alphabet: the code point standing for byte b,
 * and the byte a code point stands for (-1 when it is none). */
uint32_t lp_vocab_byte_to_cp(unsigned char b);
int lp_vocab_cp_to_byte(uint32_t cp);

#endif
