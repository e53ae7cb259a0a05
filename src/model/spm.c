/* spm.c - SentencePiece: score-ordered merges with byte fallback. */
#include "model/tok_impl.h"

#include "core/utf8.h"

/* Pieces a merge may produce: not control, byte or unused tokens. */
static int32_t mergeable(const struct lp_vocab *v, const char *s, size_t len)
{
	int32_t id = lp_vocab_find(v, s, len);
	enum lp_token_type ty = lp_vocab_type(v, id);

	return id >= 0 && (ty == LP_TOKEN_NORMAL || ty == LP_TOKEN_USER_DEFINED ||
			   ty == LP_TOKEN_UNKNOWN) ? id : -1;
}

static void try_pair(const struct lp_tok *t, struct lp_tok_ws *ws, int32_t left)
{
	int32_t right, id;
	uint32_t total;
	struct lp_tok_heap_item it;

	if (left < 0 || (right = ws->next[left]) < 0)
		return;
	total = ws->len[left] + ws->len[right];
	id = mergeable(t->v, ws->bytes + ws->start[left], total);
	if (id < 0)
		return;
	it.key = -(double)lp_vocab_score(t->v, id);
	it.pos = left;
	it.a = (int32_t)total;
	it.b = 0;
	it.res = id;
	lp_tok_heap_push(ws, it);
}

/* Spell the segment with "▁" for spaces (and in front when asked), keeping
 * for every byte the input offset it came from. Returns the length. */
static size_t transform(struct lp_tok_ws *ws, const char *text, size_t start, size_t end,
			int prefix)
{
	static const char bar[3] = { '\xE2', '\x96', '\x81' }; /* U+2581 */
	size_t m = 0;

	if (prefix)
		for (int k = 0; k < 3; k++) {
			ws->bytes[m] = bar[k];
			ws->src[m++] = (uint32_t)start;
		}
	for (size_t i = start; i < end; i++) {
		if (text[i] == ' ')
			for (int k = 0; k < 3; k++) {
				ws->bytes[m] = bar[k];
				ws->src[m++] = (uint32_t)i;
			}
		else {
			ws->bytes[m] = text[i];
			ws->src[m++] = (uint32_t)i;
		}
	}
	return m;
}

static enum lp_status emit_symbol(const struct lp_tok *t, struct lp_tok_ws *ws, int32_t i,
				  struct lp_tok_sink *sink)
{
	const char *s = ws->bytes + ws->start[i];
	int32_t id = lp_vocab_find(t->v, s, ws->len[i]);
	enum lp_token_type ty = lp_vocab_type(t->v, id);
	enum lp_status st;

	if (id >= 0 && ty != LP_TOKEN_CONTROL && ty != LP_TOKEN_BYTE)
		return lp_tok_emit(sink, id, ws->src[ws->start[i]]);
	/* No piece for this character: one token per byte, or unknown. */
	for (uint32_t k = 0; k < ws->len[i]; k++) {
		int32_t b = lp_vocab_byte_token(t->v, (unsigned char)s[k]);

		if (b < 0)
			b = lp_vocab_unk(t->v);
		if (b >= 0 && (st = lp_tok_emit(sink, b, ws->src[ws->start[i] + k])))
			return st;
	}
	return LP_OK;
}

enum lp_status lp_tok_spm_segment(const struct lp_tok *t, struct lp_tok_ws *ws,
				  const char *text, size_t start, size_t end, int prefix,
				  struct lp_tok_sink *sink, struct lp_diag *d)
{
	size_t m = prefix ? 3 : 0, n = 0, i = 0;
	struct lp_tok_heap_item it;
	enum lp_status st;

	for (size_t k = start; k < end; k++)
		m += text[k] == ' ' ? 3 : 1;
	if ((st = lp_tok_ws_reserve(ws, m, d)))
		return st;
	m = transform(ws, text, start, end, prefix);
	while (i < m) {
		uint32_t cp;
		int len = lp_utf8_decode((const unsigned char *)ws->bytes + i, m - i, &cp);

		if (!len)
			len = 1; /* an invalid byte is a symbol of its own */
		ws->start[n] = (uint32_t)i;
		ws->len[n] = (uint32_t)len;
		ws->prev[n] = (int32_t)n - 1;
		ws->next[n] = (int32_t)n + 1;
		n++;
		i += (size_t)len;
	}
	if (!n)
		return LP_OK;
	ws->next[n - 1] = -1;
	ws->heap_n = 0;
	for (size_t k = 0; k + 1 < n; k++)
		try_pair(t, ws, (int32_t)k);
	while (lp_tok_heap_pop(ws, &it)) {
		int32_t l = it.pos, r = ws->next[l], nr;

		/* Stale: either side changed since this pair was queued. */
		if (r < 0 || !ws->len[l] || ws->len[l] + ws->len[r] != (uint32_t)it.a)
			continue;
		ws->len[l] += ws->len[r];
		ws->len[r] = 0;
		nr = ws->next[r];
		ws->next[l] = nr;
		if (nr >= 0)
			ws->prev[nr] = l;
		try_pair(t, ws, ws->prev[l]);
		try_pair(t, ws, l);
	}
	for (int32_t k = 0; k >= 0; k = ws->next[k])
		if ((st = emit_symbol(t, ws, k, sink)))
			return st;
	return LP_OK;
}
