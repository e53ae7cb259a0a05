/*
 * tok_impl.h - internals shared by tokenizer.c, bpe.c and spm.c; not part of
 * the public API.
 *
 * An encode call owns one struct lp_tok_ws (scratch sized by the longest
 * piece seen, grown on demand, tracked under LP_MEM_SCRATCH) and one sink
 * that receives the ids. Algorithms keep words as doubly linked lists of
 * symbols over arrays, with a binary heap of candidate merges ordered by
 * (key, position); stale heap entries are detected when popped.
 */
#ifndef LP_MODEL_TOK_IMPL_H
#define LP_MODEL_TOK_IMPL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "model/tokenizer.h"

struct lp_tok {
	struct lp_vocab *v;
	pcre2_code *re[2];
	int n_re;
	int ignore_merges;    /* a piece that is a whole token is not merged (llama 3) */
	int32_t *specials;    /* special ids, longest text first */
	size_t n_specials;
};

/* Where ids go: a list (with offsets or not), or just a count. */
struct lp_tok_sink {
	struct lp_tokens *out;
	int with_offsets;
	size_t count;
};

enum lp_status lp_tok_emit(struct lp_tok_sink *s, int32_t id, size_t offset);

struct lp_tok_heap_item {
	double key;   /* BPE: merge rank; SPM: minus the merged token's score */
	int32_t pos;  /* left symbol */
	int32_t a, b; /* BPE: left/right ids; SPM: byte length of the pair */
	int32_t res;  /* id the merge produces */
};

struct lp_tok_ws {
	void *block;         /* one tracked allocation holding the arrays */
	size_t cap;          /* symbols the arrays hold */
	int32_t *id;         /* [cap] token id of each symbol (-1: none) */
	int32_t *next, *prev;/* [cap] linked list, -1 at the ends */
	uint32_t *start;     /* [cap] byte offset of the symbol in the word */
	uint32_t *len;       /* [cap] byte length of the symbol */
	uint32_t *src;       /* [cap] input offset of each byte of the word (SPM) */
	char *bytes;         /* [4 * cap] scratch text (byte-level spelling, SPM text) */
	struct lp_tok_heap_item *heap; /* [3 * cap] */
	size_t heap_n;
	pcre2_match_data *md;
};

void lp_tok_ws_init(struct lp_tok_ws *ws);
void lp_tok_ws_release(struct lp_tok_ws *ws);
/* Room for `n` symbols; LP_OK or LP_E_NOMEM. */
enum lp_status lp_tok_ws_reserve(struct lp_tok_ws *ws, size_t n, struct lp_diag *d);

void lp_tok_heap_push(struct lp_tok_ws *ws, struct lp_tok_heap_item it);
/* Pop the smallest (key, pos); 0 when empty. */
int lp_tok_heap_pop(struct lp_tok_ws *ws, struct lp_tok_heap_item *it);

/* Encode text[start, end) (no special tokens inside) with the BPE path:
 * pre-tokenize, then merge each piece. */
enum lp_status lp_tok_bpe_segment(const struct lp_tok *t, struct lp_tok_ws *ws,
				  const char *text, size_t start, size_t end,
				  struct lp_tok_sink *sink, struct lp_diag *d);
/* Encode text[start, end) with the SentencePiece path; `prefix` adds the
 * "▁" dummy prefix. */
enum lp_status lp_tok_spm_segment(const struct lp_tok *t, struct lp_tok_ws *ws,
				  const char *text, size_t start, size_t end, int prefix,
				  struct lp_tok_sink *sink, struct lp_diag *d);

#endif
