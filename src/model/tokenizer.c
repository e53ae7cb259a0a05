#include "model/tok_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"

/* ---- pre-tokenizer patterns ---------------------------------------------- */

/* GPT-2: contractions, words and numbers with an optional leading space,
 * runs of other symbols, and whitespace that leaves the last space to the
 * following word. */
#define PAT_GPT2 \
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
/* Llama 3: case-insensitive contractions, a word may take one leading
 * non-letter, numbers in groups of at most three digits, newlines kept
 * together. */
#define PAT_LLAMA3 \
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}" \
	"| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* Qwen 2: as Llama 3 but every digit stands alone. */
#define PAT_QWEN2 \
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}" \
	"| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* Every digit alone first (SmolLM, StarCoder), then GPT-2. */
#define PAT_DIGIT "\\p{N}"

struct pre_entry {
	const char *name;
	const char *pat[2];
	int ignore_merges;
};

static const struct pre_entry pre_table[] = {
	{ "default", { PAT_GPT2, NULL }, 0 },
	{ "gpt2", { PAT_GPT2, NULL }, 0 },
	{ "gpt-2", { PAT_GPT2, NULL }, 0 },
	{ "mpt", { PAT_GPT2, NULL }, 0 },
	{ "olmo", { PAT_GPT2, NULL }, 0 },
	{ "smollm", { PAT_DIGIT, PAT_GPT2 }, 0 },
	{ "starcoder", { PAT_DIGIT, PAT_GPT2 }, 0 },
	{ "refact", { PAT_DIGIT, PAT_GPT2 }, 0 },
	{ "codeshell", { PAT_DIGIT, PAT_GPT2 }, 0 },
	{ "llama-bpe", { PAT_LLAMA3, NULL }, 1 },
	{ "llama3", { PAT_LLAMA3, NULL }, 1 },
	{ "qwen2", { PAT_QWEN2, NULL }, 0 },
	{ "stablelm2", { PAT_QWEN2, NULL }, 0 },
	{ "deepseek-r1-qwen", { PAT_QWEN2, NULL }, 0 },
};

static const struct pre_entry *pre_lookup(const char *pre)
{
	for (size_t i = 0; i < sizeof(pre_table) / sizeof(pre_table[0]); i++)
		if (pre && !strcmp(pre, pre_table[i].name))
			return &pre_table[i];
	return NULL;
}

int lp_tok_pre_patterns(const char *pre, const char *pats[2], int *known)
{
	const struct pre_entry *e = pre_lookup(pre);

	*known = e != NULL;
	if (!e)
		e = &pre_table[0];
	pats[0] = e->pat[0];
	pats[1] = e->pat[1];
	return pats[1] ? 2 : 1;
}

static enum lp_status compile_pre(struct lp_tok *t, struct lp_diag *d)
{
	const char *pats[2];
	int known;
	const struct pre_entry *e = pre_lookup(lp_vocab_pre(t->v));

	t->n_re = lp_tok_pre_patterns(lp_vocab_pre(t->v), pats, &known);
	if (!known)
		lp_warn("unknown pre-tokenizer '%s': using the gpt2 pattern", lp_vocab_pre(t->v));
	t->ignore_merges = e ? e->ignore_merges : 0;
	for (int i = 0; i < t->n_re; i++) {
		int err;
		PCRE2_SIZE at;

		t->re[i] = pcre2_compile((PCRE2_SPTR)pats[i], PCRE2_ZERO_TERMINATED,
					 PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF,
					 &err, &at, NULL);
		if (!t->re[i])
			return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
					   "pre-tokenizer pattern %d does not compile at %zu", i,
					   (size_t)at);
		/* JIT is an optimisation: the interpreter gives the same matches. */
		(void)pcre2_jit_compile(t->re[i], PCRE2_JIT_COMPLETE);
	}
	return LP_OK;
}

/* ---- special tokens -------------------------------------------------------- */

static int cmp_special(const void *a, const void *b, void *vocab)
{
	size_t la, lb;

	lp_vocab_text(vocab, *(const int32_t *)a, &la);
	lp_vocab_text(vocab, *(const int32_t *)b, &lb);
	if (la != lb)
		return la > lb ? -1 : 1;
	return *(const int32_t *)a - *(const int32_t *)b;
}

static enum lp_status collect_specials(struct lp_tok *t, struct lp_diag *d)
{
	int32_t n = lp_vocab_n_tokens(t->v);
	size_t k = 0, len;

	for (int32_t id = 0; id < n; id++)
		if (lp_vocab_is_special(t->v, id) && (lp_vocab_text(t->v, id, &len), len))
			k++;
	t->specials = lp_mem_alloc(LP_MEM_OTHER, (k ? k : 1) * sizeof(int32_t), d);
	if (!t->specials)
		return LP_E_NOMEM;
	for (int32_t id = 0; id < n; id++)
		if (lp_vocab_is_special(t->v, id) && (lp_vocab_text(t->v, id, &len), len))
			t->specials[t->n_specials++] = id;
	qsort_r(t->specials, t->n_specials, sizeof(int32_t), cmp_special, t->v);
	return LP_OK;
}

/* ---- lifecycle ---------------------------------------------------------------- */

enum lp_status lp_tok_new(struct lp_vocab *vocab, struct lp_tok **out, struct lp_diag *d)
{
	struct lp_tok *t;
	enum lp_status st;

	*out = NULL;
	t = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*t), d);
	if (!t) {
		lp_vocab_free(vocab);
		return LP_E_NOMEM;
	}
	t->v = vocab;
	st = collect_specials(t, d);
	if (!st && lp_vocab_kind(vocab) == LP_VOCAB_BPE)
		st = compile_pre(t, d);
	if (st) {
		lp_tok_free(t);
		return st;
	}
	*out = t;
	return LP_OK;
}

void lp_tok_free(struct lp_tok *t)
{
	if (!t)
		return;
	for (int i = 0; i < 2; i++)
		pcre2_code_free(t->re[i]);
	lp_mem_free(t->specials);
	lp_vocab_free(t->v);
	lp_mem_free(t);
}

const struct lp_vocab *lp_tok_vocab(const struct lp_tok *t) { return t->v; }

/* ---- token lists -------------------------------------------------------------- */

void lp_tokens_init(struct lp_tokens *t)
{
	memset(t, 0, sizeof(*t));
}

void lp_tokens_release(struct lp_tokens *t)
{
	lp_mem_free(t->ids);
	lp_mem_free(t->offsets);
	lp_tokens_init(t);
}

void lp_tokens_reset(struct lp_tokens *t)
{
	t->n = 0;
}

static enum lp_status tokens_grow(struct lp_tokens *t, int with_offsets, struct lp_diag *d)
{
	size_t cap = t->cap;

	if (t->n == cap) {
		int32_t *ids;

		cap = cap ? 2 * cap : 64;
		ids = lp_mem_realloc(LP_MEM_DOC, t->ids, cap * sizeof(int32_t), d);
		if (!ids)
			return LP_E_NOMEM;
		t->ids = ids;
	}
	if ((with_offsets || t->offsets) && (cap != t->cap || !t->offsets)) {
		size_t *off = lp_mem_realloc(LP_MEM_DOC, t->offsets, cap * sizeof(size_t), d);

		if (!off)
			return LP_E_NOMEM;
		if (!t->offsets)
			memset(off, 0, cap * sizeof(size_t));
		t->offsets = off;
	}
	t->cap = cap;
	return LP_OK;
}

enum lp_status lp_tokens_push(struct lp_tokens *t, int32_t id)
{
	if (tokens_grow(t, 0, NULL))
		return LP_E_NOMEM;
	if (t->offsets)
		t->offsets[t->n] = 0;
	t->ids[t->n++] = id;
	return LP_OK;
}

enum lp_status lp_tok_emit(struct lp_tok_sink *s, int32_t id, size_t offset)
{
	struct lp_tokens *t = s->out;

	s->count++;
	if (!t)
		return LP_OK;
	if ((t->n == t->cap || (s->with_offsets && !t->offsets)) &&
	    tokens_grow(t, s->with_offsets, NULL))
		return LP_E_NOMEM;
	if (t->offsets)
		t->offsets[t->n] = offset;
	t->ids[t->n++] = id;
	return LP_OK;
}

/* ---- scratch ------------------------------------------------------------------ */

void lp_tok_ws_init(struct lp_tok_ws *ws)
{
	memset(ws, 0, sizeof(*ws));
}

void lp_tok_ws_release(struct lp_tok_ws *ws)
{
	lp_mem_free(ws->block);
	pcre2_match_data_free(ws->md);
	lp_tok_ws_init(ws);
}

enum lp_status lp_tok_ws_reserve(struct lp_tok_ws *ws, size_t n, struct lp_diag *d)
{
	size_t cap = ws->cap ? ws->cap : 256, per;
	char *p;

	if (n <= ws->cap)
		return LP_OK;
	while (cap < n)
		cap *= 2;
	/* id, next, prev, start, len, src: 6 x 4 bytes; bytes: 4; heap: 3 items */
	per = 6 * 4 + 4 + 3 * sizeof(struct lp_tok_heap_item);
	if (cap > ((size_t)-1) / per)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "text piece too long to tokenize");
	p = lp_mem_alloc(LP_MEM_SCRATCH, cap * per, d);
	if (!p)
		return LP_E_NOMEM;
	lp_mem_free(ws->block);
	ws->block = p;
	ws->cap = cap;
	ws->heap = (struct lp_tok_heap_item *)p;
	p += 3 * cap * sizeof(struct lp_tok_heap_item);
	ws->id = (int32_t *)p;
	ws->next = ws->id + cap;
	ws->prev = ws->next + cap;
	ws->start = (uint32_t *)(ws->prev + cap);
	ws->len = ws->start + cap;
	ws->src = ws->len + cap;
	ws->bytes = (char *)(ws->src + cap);
	return LP_OK;
}

static int heap_less(const struct lp_tok_heap_item *x, const struct lp_tok_heap_item *y)
{
	return x->key < y->key || (x->key == y->key && x->pos < y->pos);
}

void lp_tok_heap_push(struct lp_tok_ws *ws, struct lp_tok_heap_item it)
{
	size_t i = ws->heap_n++;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!heap_less(&it, &ws->heap[parent]))
			break;
		ws->heap[i] = ws->heap[parent];
		i = parent;
	}
	ws->heap[i] = it;
}

int lp_tok_heap_pop(struct lp_tok_ws *ws, struct lp_tok_heap_item *it)
{
	struct lp_tok_heap_item last;
	size_t i = 0, n;

	if (!ws->heap_n)
		return 0;
	*it = ws->heap[0];
	n = --ws->heap_n;
	if (!n)
		return 1;
	last = ws->heap[n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && heap_less(&ws->heap[c + 1], &ws->heap[c]))
			c++;
		if (!heap_less(&ws->heap[c], &last))
			break;
		ws->heap[i] = ws->heap[c];
		i = c;
	}
	ws->heap[i] = last;
	return 1;
}

/* ---- encoding ------------------------------------------------------------------ */

static enum lp_status encode_segment(const struct lp_tok *t, struct lp_tok_ws *ws,
				     const char *text, size_t start, size_t end,
				     int after_special, struct lp_tok_sink *sink,
				     struct lp_diag *d)
{
	if (start >= end)
		return LP_OK;
	if (lp_vocab_kind(t->v) == LP_VOCAB_BPE)
		return lp_tok_bpe_segment(t, ws, text, start, end, sink, d);
	return lp_tok_spm_segment(t, ws, text, start, end,
				  after_special && lp_vocab_add_space_prefix(t->v), sink, d);
}

/* next[i]: -1 not searched yet, NONE_LEFT no more occurrences. */
#define NONE_LEFT ((size_t)-2)

/* Text where special tokens may not be matched (sorted, disjoint). */
struct plain_spans {
	const struct lp_tok_span *v;
	size_t n;
};

/* 1 when [at, at + n) overlaps a plain span. */
static int in_plain(const struct plain_spans *p, size_t at, size_t n)
{
	size_t lo = 0, hi = p->n;

	/* First span that ends after `at`. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].start + p->v[mid].len <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n && p->v[lo].start < at + n;
}

/* Next occurrence of special i at or after `pos` outside the plain spans,
 * cached in next[i]. */
static size_t special_next(const struct lp_tok *t, size_t *next, size_t i,
			   const char *text, size_t len, size_t pos,
			   const struct plain_spans *plain)
{
	size_t slen;
	const char *s, *hit = NULL;

	if (next[i] == NONE_LEFT)
		return (size_t)-1;
	if (next[i] != (size_t)-1 && next[i] >= pos)
		return next[i];
	s = lp_vocab_text(t->v, t->specials[i], &slen);
	while (pos < len && (hit = memmem(text + pos, len - pos, s, slen)) &&
	       in_plain(plain, (size_t)(hit - text), slen))
		pos = (size_t)(hit - text) + 1;
	if (pos >= len)
		hit = NULL;
	next[i] = hit ? (size_t)(hit - text) : NONE_LEFT;
	return hit ? next[i] : (size_t)-1;
}

static enum lp_status encode_with_specials(const struct lp_tok *t, struct lp_tok_ws *ws,
					   const char *text, size_t len,
					   const struct plain_spans *plain,
					   struct lp_tok_sink *sink, struct lp_diag *d)
{
	size_t *next, pos = 0;
	int after_special = 1;
	enum lp_status st = LP_OK;

	next = lp_mem_alloc(LP_MEM_SCRATCH, (t->n_specials + 1) * sizeof(size_t), d);
	if (!next)
		return LP_E_NOMEM;
	for (size_t i = 0; i < t->n_specials; i++)
		next[i] = (size_t)-1;
	while (pos < len && !st) {
		size_t best = (size_t)-1, best_i = 0, slen;

		/* Earliest match wins; at one position the longest (listed first). */
		for (size_t i = 0; i < t->n_specials; i++) {
			size_t at = special_next(t, next, i, text, len, pos, plain);

			if (at < best) {
				best = at;
				best_i = i;
			}
		}
		if (best == (size_t)-1)
			break;
		st = encode_segment(t, ws, text, pos, best, after_special, sink, d);
		if (!st)
			st = lp_tok_emit(sink, t->specials[best_i], best);
		lp_vocab_text(t->v, t->specials[best_i], &slen);
		pos = best + slen;
		after_special = 1;
	}
	if (!st && pos < len)
		st = encode_segment(t, ws, text, pos, len, after_special, sink, d);
	lp_mem_free(next);
	return st;
}

static enum lp_status encode_run(const struct lp_tok *t, const char *text, size_t len,
				 unsigned flags, const struct plain_spans *plain,
				 struct lp_tok_sink *sink, struct lp_diag *d)
{
	struct lp_tok_ws ws;
	enum lp_status st = LP_OK;
	const struct lp_vocab *v = t->v;

	lp_tok_ws_init(&ws);
	if ((flags & LP_TOK_ADD_SPECIAL) && lp_vocab_add_bos(v))
		st = lp_tok_emit(sink, lp_vocab_bos(v), 0);
	if (!st && (flags & LP_TOK_SPECIAL) && t->n_specials)
		st = encode_with_specials(t, &ws, text, len, plain, sink, d);
	else if (!st)
		st = encode_segment(t, &ws, text, 0, len, 1, sink, d);
	if (!st && (flags & LP_TOK_ADD_SPECIAL) && lp_vocab_add_eos(v))
		st = lp_tok_emit(sink, lp_vocab_eos(v), len);
	lp_tok_ws_release(&ws);
	if (st == LP_E_NOMEM && d && d->status == LP_OK)
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory while tokenizing");
	return st;
}

enum lp_status lp_tok_encode(const struct lp_tok *t, const char *text, size_t len,
			     unsigned flags, struct lp_tokens *out, struct lp_diag *d)
{
	struct lp_tok_sink sink = { out, (flags & LP_TOK_OFFSETS) != 0, 0 };
	struct plain_spans none = { NULL, 0 };

	return encode_run(t, text, len, flags, &none, &sink, d);
}

enum lp_status lp_tok_encode_guarded(const struct lp_tok *t, const char *text, size_t len,
				     unsigned flags, const struct lp_tok_span *plain,
				     size_t n_plain, struct lp_tokens *out, struct lp_diag *d)
{
	struct lp_tok_sink sink = { out, (flags & LP_TOK_OFFSETS) != 0, 0 };
	struct plain_spans spans = { plain, n_plain };

	for (size_t i = 1; i < n_plain; i++)
		if (plain[i].start < plain[i - 1].start + plain[i - 1].len)
			return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0,
					   "plain spans are not sorted and disjoint");
	return encode_run(t, text, len, flags | LP_TOK_SPECIAL, &spans, &sink, d);
}

enum lp_status lp_tok_count(const struct lp_tok *t, const char *text, size_t len,
			    unsigned flags, size_t *n_tokens, struct lp_diag *d)
{
	struct lp_tok_sink sink = { NULL, 0, 0 };
	struct plain_spans none = { NULL, 0 };
	enum lp_status st = encode_run(t, text, len, flags, &none, &sink, d);

	*n_tokens = sink.count;
	return st;
}

/* ---- decoding ------------------------------------------------------------------- */

const char *lp_tok_piece(const struct lp_tok *t, int32_t id, unsigned flags, size_t *len)
{
	const char *raw = lp_vocab_raw(t->v, id, len);

	if (!raw || (!(flags & LP_TOK_SPECIAL) && lp_vocab_type(t->v, id) == LP_TOKEN_CONTROL)) {
		*len = 0;
		return "";
	}
	return raw;
}

/* Bytes at the end of s[0..n) that start a UTF-8 character still missing
 * continuation bytes (0 when the end is complete or plainly invalid). */
static size_t incomplete_tail(const unsigned char *s, size_t n)
{
	for (size_t k = 1; k <= 3 && k <= n; k++) {
		unsigned c = s[n - k];
		size_t need;

		if ((c & 0xC0) == 0x80)
			continue;
		if (c < 0xC2 || c > 0xF4)
			return 0;
		need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
		return need > k ? k : 0;
	}
	return 0;
}

void lp_detok_init(struct lp_detok *s, const struct lp_tok *t, unsigned flags)
{
	memset(s, 0, sizeof(*s));
	s->tok = t;
	s->flags = flags;
	s->at_start = 1;
}

enum lp_status lp_detok_push(struct lp_detok *s, int32_t id, struct lp_buf *out)
{
	size_t len, base = out->len, hold;
	const char *p = lp_tok_piece(s->tok, id, s->flags, &len);
	const struct lp_vocab *v = s->tok->v;

	if (len && s->at_start && lp_vocab_type(v, id) != LP_TOKEN_CONTROL) {
		if (lp_vocab_kind(v) == LP_VOCAB_SPM && lp_vocab_add_space_prefix(v) && p[0] == ' ') {
			p++;
			len--;
		}
		s->at_start = 0;
	}
	if (lp_buf_grow(out, s->n_pending + len))
		return LP_E_NOMEM;
	lp_buf_add(out, s->pending, s->n_pending);
	lp_buf_add(out, p, len);
	s->n_pending = 0;
	hold = incomplete_tail((const unsigned char *)out->data + base, out->len - base);
	if (hold) {
		memcpy(s->pending, out->data + out->len - hold, hold);
		s->n_pending = hold;
		out->len -= hold;
		out->data[out->len] = '\0';
	}
	return LP_OK;
}

enum lp_status lp_detok_flush(struct lp_detok *s, struct lp_buf *out)
{
	enum lp_status st = lp_buf_add(out, s->pending, s->n_pending);

	if (!st)
		s->n_pending = 0;
	return st;
}

enum lp_status lp_tok_decode(const struct lp_tok *t, const int32_t *ids, size_t n,
			     unsigned flags, struct lp_buf *out)
{
	struct lp_detok s;

	lp_detok_init(&s, t, flags);
	for (size_t i = 0; i < n; i++)
		if (lp_detok_push(&s, ids[i], out))
			return LP_E_NOMEM;
	return lp_detok_flush(&s, out);
}
