/* bpe.c - byte-level BPE: regex pre-tokenization and rank-ordered merges. */
#include "model/tok_impl.h"

#include "core/utf8.h"

/* A byte without a token (-1) becomes the unknown token, or nothing. */
static enum lp_status emit_id(const struct lp_tok *t, struct lp_tok_sink *sink, int32_t id,
			      size_t offset)
{
	if (id < 0 && (id = lp_vocab_unk(t->v)) < 0)
		return LP_OK;
	return lp_tok_emit(sink, id, offset);
}

static void try_pair(const struct lp_tok *t, struct lp_tok_ws *ws, int32_t left)
{
	int32_t right, result, rank;
	struct lp_tok_heap_item it;

	if (left < 0 || (right = ws->next[left]) < 0)
		return;
	rank = lp_vocab_merge(t->v, ws->id[left], ws->id[right], &result);
	if (rank < 0)
		return;
	it.key = rank;
	it.pos = left;
	it.a = ws->id[left];
	it.b = ws->id[right];
	it.res = result;
	lp_tok_heap_push(ws, it);
}

/* The piece spelt in the byte-level alphabet, as a whole-token lookup. */
static int32_t whole_token(const struct lp_tok *t, struct lp_tok_ws *ws,
			   const unsigned char *w, size_t n)
{
	size_t k = 0;
	int32_t id;

	for (size_t i = 0; i < n; i++)
		k += (size_t)lp_utf8_encode(lp_vocab_byte_to_cp(w[i]),
					    (unsigned char *)ws->bytes + k);
	id = lp_vocab_find(t->v, ws->bytes, k);
	return id >= 0 && lp_vocab_type(t->v, id) == LP_TOKEN_NORMAL ? id : -1;
}

/* Merge one pre-tokenized piece, text[start, end), and emit its ids. */
static enum lp_status bpe_word(const struct lp_tok *t, struct lp_tok_ws *ws,
			       const char *text, size_t start, size_t end,
			       struct lp_tok_sink *sink, struct lp_diag *d)
{
	const unsigned char *w = (const unsigned char *)text + start;
	size_t n = end - start;
	struct lp_tok_heap_item it;
	enum lp_status st;
	int32_t id;

	if (n == 1)
		return emit_id(t, sink, lp_vocab_byte_token(t->v, w[0]), start);
	if ((st = lp_tok_ws_reserve(ws, n, d)))
		return st;
	if (t->ignore_merges && (id = whole_token(t, ws, w, n)) >= 0)
		return lp_tok_emit(sink, id, start);
	for (size_t i = 0; i < n; i++) {
		ws->id[i] = lp_vocab_byte_token(t->v, w[i]);
		ws->prev[i] = (int32_t)i - 1;
		ws->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
		ws->start[i] = (uint32_t)i;
	}
	ws->heap_n = 0;
	for (size_t i = 0; i + 1 < n; i++)
		try_pair(t, ws, (int32_t)i);
	while (lp_tok_heap_pop(ws, &it)) {
		int32_t l = it.pos, r = ws->next[l], nr;

		/* Stale: one side merged since this pair was queued. */
		if (r < 0 || ws->id[l] != it.a || ws->id[r] != it.b)
			continue;
		ws->id[l] = it.res;
		ws->id[r] = -1;
		nr = ws->next[r];
		ws->next[l] = nr;
		if (nr >= 0)
			ws->prev[nr] = l;
		try_pair(t, ws, ws->prev[l]);
		try_pair(t, ws, l);
	}
	for (int32_t i = 0; i >= 0; i = ws->next[i])
		if ((st = emit_id(t, sink, ws->id[i], start + ws->start[i])))
			return st;
	return LP_OK;
}

/* Split text[start, end) with pattern `level` and pass every piece, matched
 * or between matches, to the next level; past the last level, merge it. */
static enum lp_status split(const struct lp_tok *t, struct lp_tok_ws *ws, int level,
			    const char *text, size_t start, size_t end,
			    struct lp_tok_sink *sink, struct lp_diag *d)
{
	size_t pos = start;
	enum lp_status st;

	if (start >= end)
		return LP_OK;
	if (level == t->n_re)
		return bpe_word(t, ws, text, start, end, sink, d);
	while (pos < end) {
		/* The subject ends at `end`, so lookaheads see this piece only. */
		int rc = pcre2_match(t->re[level], (PCRE2_SPTR)text, end, pos, 0, ws->md, NULL);
		PCRE2_SIZE *ov, ms, me;

		if (rc < 0)
			break; /* no match (or a matching limit): the rest is one piece */
		/* Copy: the nested levels reuse the same match data. */
		ov = pcre2_get_ovector_pointer(ws->md);
		ms = ov[0];
		me = ov[1];
		if (me <= ms)
			break; /* the patterns never match empty; stop rather than spin */
		if ((st = split(t, ws, level + 1, text, pos, ms, sink, d)) ||
		    (st = split(t, ws, level + 1, text, ms, me, sink, d)))
			return st;
		pos = me;
	}
	return split(t, ws, level + 1, text, pos, end, sink, d);
}

enum lp_status lp_tok_bpe_segment(const struct lp_tok *t, struct lp_tok_ws *ws,
				  const char *text, size_t start, size_t end,
				  struct lp_tok_sink *sink, struct lp_diag *d)
{
	if (!ws->md && !(ws->md = pcre2_match_data_create(1, NULL)))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for regex matching");
	return split(t, ws, 0, text, start, end, sink, d);
}
