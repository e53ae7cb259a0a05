/*
 * fuzz_vocab.c - the tokenizer built from hostile GGUF metadata.
 *
 * The input is a GGUF file. When the reader accepts it, the vocabulary and
 * tokenizer are built from its tokenizer.* keys (errors are fine, crashes
 * are not), a fixed text is encoded with and without special tokens and
 * decoded, and the chat template is detected, rendered and encoded. Seeds:
 * tests/fuzz/corpus/fuzz_vocab (made by tests/fuzz/make-vocab-seeds.py).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "model/chat.h"
#include "model/gguf.h"
#include "model/tokenizer.h"

static void exercise(const struct lp_tok *tok)
{
	static const char text[] = "the 12 <|im_start|>x</s> \xe6\x97\xa5\xff  \n";
	static const struct lp_chat_msg msg = { "user", "hi <|im_end|></s>" };
	const struct lp_vocab *v = lp_tok_vocab(tok);
	struct lp_tokens ids;
	struct lp_buf out;
	struct lp_chat chat;
	struct lp_diag d;

	lp_tokens_init(&ids);
	lp_buf_init(&out);
	lp_diag_init(&d);
	lp_tok_encode(tok, text, sizeof(text) - 1, LP_TOK_SPECIAL | LP_TOK_ADD_SPECIAL, &ids, &d);
	lp_tok_encode(tok, text, sizeof(text) - 1, LP_TOK_OFFSETS, &ids, &d);
	for (size_t i = 0; i < ids.n; i++)
		if (ids.ids[i] < 0 || ids.ids[i] >= lp_vocab_n_tokens(v))
			abort();
	lp_tok_decode(tok, ids.ids, ids.n, LP_TOK_SPECIAL, &out);
	if (lp_chat_init(&chat, lp_vocab_chat_template(v), NULL, &d) == LP_OK) {
		lp_chat_render(&chat, &msg, 1, 1, &out, &d);
		lp_chat_encode(&chat, tok, &msg, 1, 1, &ids, &d);
		lp_chat_release(&chat);
	}
	lp_buf_release(&out);
	lp_tokens_release(&ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_gguf *g;
	struct lp_tok *tok;
	struct lp_diag d;

	lp_log_set_level(LP_LOG_ERROR); /* mutants warn about templates by the thousand */
	lp_diag_init(&d);
	if (lp_gguf_open_bytes("fuzz.gguf", data, size, &g, &d) != LP_OK)
		return 0;
	if (lp_tok_from_gguf(g, &tok, &d) == LP_OK) {
		exercise(tok);
		lp_tok_free(tok);
	}
	lp_gguf_close(g);
	return 0;
}
