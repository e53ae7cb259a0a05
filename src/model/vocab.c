#include "model/vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/utf8.h"

/* Merge table slot: key 0 is empty; otherwise (left+1) << 32 | (right+1). */
struct merge_slot {
	uint64_t key;
	int32_t rank;
	int32_t result;
};

struct lp_vocab {
	enum lp_vocab_kind kind;
	char pre[64];
	int32_t n;
	char *text_pool;        /* all stored texts, back to back */
	uint32_t *text_off;     /* [n + 1] offsets into text_pool */
	char *raw_pool;         /* all raw forms, back to back */
	uint32_t *raw_off;      /* [n + 1] offsets into raw_pool */
	float *scores;          /* [n] */
	uint8_t *types;         /* [n] enum lp_token_type */
	uint32_t *ht;           /* text -> id + 1, open addressing, 0 = empty */
	uint32_t ht_mask;
	struct merge_slot *mt;  /* (left, right) -> rank, result */
	uint32_t mt_mask;
	size_t n_merges, n_bad_merges;
	int32_t byte_tok[256];
	int32_t bos, eos, eot, unk, pad;
	int add_bos, add_eos, add_space_prefix;
	char *chat_template;
	size_t bytes;
};

/* ---- GPT-2 byte-level alphabet ---------------------------------------- */

/* Bytes that are printable stand for themselves; the 68 others are moved,
 * in order, to U+0100 and up, so every byte is a visible character. */
static int byte_is_self(unsigned b)
{
	return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
}

uint32_t lp_vocab_byte_to_cp(unsigned char b)
{
	unsigned moved = 0;

	if (byte_is_self(b))
		return b;
	for (unsigned i = 0; i < b; i++)
		moved += !byte_is_self(i);
	return 256 + moved;
}

int lp_vocab_cp_to_byte(uint32_t cp)
{
	static int16_t moved_byte[68];
	static int ready;

	if (cp < 256)
		return byte_is_self(cp) ? (int)cp : -1;
	if (cp >= 256 + 68)
		return -1;
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		/* Idempotent: racing threads write the same values. */
		for (unsigned b = 0, k = 0; b < 256; b++)
			if (!byte_is_self(b))
				moved_byte[k++] = (int16_t)b;
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	return moved_byte[cp - 256];
}

/* ---- hashing ------------------------------------------------------------ */

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = lp_hash_fnv1a(LP_HASH_FNV_BASIS, s, len);

	return h ^ (h >> 29);
}

static uint64_t hash_pair(uint64_t key)
{
	key *= 0x9E3779B97F4A7C15ull;
	return key ^ (key >> 31);
}

static uint32_t table_size(size_t n)
{
	uint32_t cap = 16;

	while (cap < 2 * n)
		cap <<= 1;
	return cap;
}

/* ---- tracked allocations ------------------------------------------------ */

static void *vmalloc(struct lp_vocab *v, size_t n, size_t size, struct lp_diag *d)
{
	void *p = lp_mem_calloc(LP_MEM_OTHER, n ? n : 1, size, d);

	if (p)
		v->bytes += n * size;
	return p;
}

void lp_vocab_spec_init(struct lp_vocab_spec *s, enum lp_vocab_kind kind)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->bos = s->eos = s->eot = s->unk = s->pad = -1;
	s->add_bos = s->add_eos = s->add_space_prefix = -1;
}

void lp_vocab_free(struct lp_vocab *v)
{
	if (!v)
		return;
	lp_mem_free(v->text_pool);
	lp_mem_free(v->text_off);
	lp_mem_free(v->raw_pool);
	lp_mem_free(v->raw_off);
	lp_mem_free(v->scores);
	lp_mem_free(v->types);
	lp_mem_free(v->ht);
	lp_mem_free(v->mt);
	lp_mem_free(v->chat_template);
	lp_mem_free(v);
}

/* ---- building ------------------------------------------------------------ */

static size_t spec_tok_len(const struct lp_vocab_spec *s, size_t i)
{
	return s->token_lens ? s->token_lens[i] : strlen(s->tokens[i]);
}

static enum lp_status copy_texts(struct lp_vocab *v, const struct lp_vocab_spec *s,
				 struct lp_diag *d)
{
	size_t total = 0;

	for (size_t i = 0; i < s->n_tokens; i++) {
		if (!s->tokens[i])
			return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0, "token %zu has no text", i);
		total += spec_tok_len(s, i);
	}
	if (total > UINT32_MAX / 2)
		return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0, "token texts too large");
	v->text_pool = vmalloc(v, total + 1, 1, d);
	v->text_off = vmalloc(v, s->n_tokens + 1, sizeof(uint32_t), d);
	v->scores = vmalloc(v, s->n_tokens, sizeof(float), d);
	v->types = vmalloc(v, s->n_tokens, 1, d);
	if (!v->text_pool || !v->text_off || !v->scores || !v->types)
		return LP_E_NOMEM;
	total = 0;
	for (size_t i = 0; i < s->n_tokens; i++) {
		size_t len = spec_tok_len(s, i);
		int32_t type = s->types ? s->types[i] : LP_TOKEN_NORMAL;

		if (type < LP_TOKEN_UNDEFINED || type > LP_TOKEN_BYTE)
			return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
					   "token %zu has unknown type %d", i, (int)type);
		v->text_off[i] = (uint32_t)total;
		memcpy(v->text_pool + total, s->tokens[i], len);
		total += len;
		v->scores[i] = s->scores ? s->scores[i] : 0.0f;
		v->types[i] = (uint8_t)(type == LP_TOKEN_UNDEFINED ? LP_TOKEN_NORMAL : type);
	}
	v->text_off[s->n_tokens] = (uint32_t)total;
	return LP_OK;
}

static enum lp_status build_hash(struct lp_vocab *v, struct lp_diag *d)
{
	uint32_t cap = table_size((size_t)v->n);

	v->ht = vmalloc(v, cap, sizeof(uint32_t), d);
	if (!v->ht)
		return LP_E_NOMEM;
	v->ht_mask = cap - 1;
	for (int32_t id = 0; id < v->n; id++) {
		size_t len;
		const char *t = lp_vocab_text(v, id, &len);
		uint32_t h = (uint32_t)hash_bytes(t, len) & v->ht_mask;

		/* A duplicate text keeps its first id, as lookups by text expect. */
		if (lp_vocab_find(v, t, len) >= 0)
			continue;
		while (v->ht[h])
			h = (h + 1) & v->ht_mask;
		v->ht[h] = (uint32_t)id + 1;
	}
	return LP_OK;
}

int32_t lp_vocab_find(const struct lp_vocab *v, const char *text, size_t len)
{
	uint32_t h = (uint32_t)hash_bytes(text, len) & v->ht_mask;

	for (;;) {
		uint32_t slot = v->ht[h];
		size_t tlen;
		const char *t;

		if (!slot)
			return -1;
		t = lp_vocab_text(v, (int32_t)(slot - 1), &tlen);
		if (tlen == len && !memcmp(t, text, len))
			return (int32_t)(slot - 1);
		h = (h + 1) & v->ht_mask;
	}
}

/* "<0xAB>" -> 0xAB, or -1. */
static int parse_byte_token(const char *t, size_t len)
{
	unsigned val;
	char tmp[7];

	if (len != 6 || memcmp(t, "<0x", 3) || t[5] != '>')
		return -1;
	memcpy(tmp, t, 6);
	tmp[6] = '\0';
	if (sscanf(tmp + 3, "%2x", &val) != 1)
		return -1;
	return (int)val;
}

/* Raw form of one token, appended at raw_pool + *pos (room: 4x the text). */
static void raw_one(const struct lp_vocab *v, int32_t id, size_t *pos)
{
	size_t len, i = 0;
	const char *t = lp_vocab_text(v, id, &len);
	char *out = v->raw_pool + *pos;
	enum lp_token_type type = (enum lp_token_type)v->types[id];
	int b;

	if (type == LP_TOKEN_CONTROL || (v->kind == LP_VOCAB_BPE && type == LP_TOKEN_USER_DEFINED)) {
		memcpy(out, t, len);
		*pos += len;
		return;
	}
	if (v->kind == LP_VOCAB_SPM && (b = parse_byte_token(t, len)) >= 0 &&
	    (type == LP_TOKEN_BYTE || type == LP_TOKEN_NORMAL)) {
		out[0] = (char)b;
		*pos += 1;
		return;
	}
	while (i < len) {
		uint32_t cp;
		int n = lp_utf8_decode((const unsigned char *)t + i, len - i, &cp);

		if (!n) {
			*out++ = t[i++];
			continue;
		}
		if (v->kind == LP_VOCAB_BPE && (b = lp_vocab_cp_to_byte(cp)) >= 0)
			*out++ = (char)b;
		else if (v->kind == LP_VOCAB_SPM && cp == 0x2581)
			*out++ = ' ';
		else {
			memcpy(out, t + i, (size_t)n);
			out += n;
		}
		i += (size_t)n;
	}
	*pos = (size_t)(out - v->raw_pool);
}

static enum lp_status build_raw(struct lp_vocab *v, struct lp_diag *d)
{
	size_t pos = 0;

	/* Raw forms are never longer than the text: each code point maps to at
	 * most its own bytes, "▁" (3 bytes) to 1, "<0xXX>" (6) to 1. */
	v->raw_pool = vmalloc(v, v->text_off[v->n] + 1, 1, d);
	v->raw_off = vmalloc(v, (size_t)v->n + 1, sizeof(uint32_t), d);
	if (!v->raw_pool || !v->raw_off)
		return LP_E_NOMEM;
	for (int32_t id = 0; id < v->n; id++) {
		v->raw_off[id] = (uint32_t)pos;
		raw_one(v, id, &pos);
	}
	v->raw_off[v->n] = (uint32_t)pos;
	return LP_OK;
}

static enum lp_status build_bytes(struct lp_vocab *v, struct lp_diag *d)
{
	for (unsigned b = 0; b < 256; b++) {
		char t[8];
		size_t len;

		if (v->kind == LP_VOCAB_BPE) {
			len = (size_t)lp_utf8_encode(lp_vocab_byte_to_cp((unsigned char)b),
						     (unsigned char *)t);
			/* May be -1: SmolLM2 has no token for bytes that never
			 * occur in UTF-8 text (0xC0, 0xF5..) and a few controls. */
			v->byte_tok[b] = lp_vocab_find(v, t, len);
		} else {
			snprintf(t, sizeof(t), "<0x%02X>", b);
			v->byte_tok[b] = lp_vocab_find(v, t, 6);
		}
	}
	return LP_OK;
}

static void merge_insert(struct lp_vocab *v, uint64_t key, int32_t rank, int32_t result)
{
	uint32_t h = (uint32_t)hash_pair(key) & v->mt_mask;

	while (v->mt[h].key) {
		if (v->mt[h].key == key)
			return; /* a later duplicate never wins over the lower rank */
		h = (h + 1) & v->mt_mask;
	}
	v->mt[h].key = key;
	v->mt[h].rank = rank;
	v->mt[h].result = result;
}

static enum lp_status build_merges(struct lp_vocab *v, const struct lp_vocab_spec *s,
				   struct lp_diag *d)
{
	uint32_t cap = table_size(s->n_merges);
	char *joined = NULL;
	size_t joined_cap = 0;

	v->mt = vmalloc(v, cap, sizeof(struct merge_slot), d);
	if (!v->mt)
		return LP_E_NOMEM;
	v->mt_mask = cap - 1;
	for (size_t i = 0; i < s->n_merges; i++) {
		const char *m = s->merges[i];
		size_t len = m ? (s->merge_lens ? s->merge_lens[i] : strlen(m)) : 0;
		const char *sp = len > 1 ? memchr(m + 1, ' ', len - 1) : NULL;
		int32_t l, r, res;
		size_t ll, rl;

		if (!sp) {
			v->n_bad_merges++;
			continue;
		}
		ll = (size_t)(sp - m);
		rl = len - ll - 1;
		if (ll + rl > joined_cap) {
			char *nj;

			joined_cap = 2 * (ll + rl) + 16;
			nj = lp_mem_realloc(LP_MEM_OTHER, joined, joined_cap, d);
			if (!nj) {
				lp_mem_free(joined);
				return LP_E_NOMEM;
			}
			joined = nj;
		}
		memcpy(joined, m, ll);
		memcpy(joined + ll, sp + 1, rl);
		l = lp_vocab_find(v, m, ll);
		r = lp_vocab_find(v, sp + 1, rl);
		res = lp_vocab_find(v, joined, ll + rl);
		if (l < 0 || r < 0 || res < 0) {
			v->n_bad_merges++;
			continue;
		}
		merge_insert(v, ((uint64_t)(uint32_t)(l + 1) << 32) | (uint32_t)(r + 1),
			     (int32_t)i, res);
		v->n_merges++;
	}
	lp_mem_free(joined);
	if (v->n_bad_merges)
		lp_warn("vocabulary: %zu merges ignored (a part or the result is not a token)",
			v->n_bad_merges);
	return LP_OK;
}

static enum lp_status check_id(int32_t id, int32_t n, const char *what, struct lp_diag *d)
{
	if (id < -1 || id >= n)
		return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
				   "%s id %d is out of range (vocabulary of %d tokens)",
				   what, (int)id, (int)n);
	return LP_OK;
}

static enum lp_status check_specials(struct lp_vocab *v, const struct lp_vocab_spec *s,
				     struct lp_diag *d)
{
	enum lp_status st;

	if ((st = check_id(s->bos, v->n, "bos", d)) || (st = check_id(s->eos, v->n, "eos", d)) ||
	    (st = check_id(s->eot, v->n, "eot", d)) || (st = check_id(s->unk, v->n, "unknown", d)) ||
	    (st = check_id(s->pad, v->n, "padding", d)))
		return st;
	v->bos = s->bos;
	v->eos = s->eos;
	v->eot = s->eot;
	v->unk = s->unk;
	v->pad = s->pad;
	v->add_bos = s->add_bos >= 0 ? s->add_bos : v->kind == LP_VOCAB_SPM;
	v->add_eos = s->add_eos >= 0 ? s->add_eos : 0;
	v->add_space_prefix = s->add_space_prefix >= 0 ? s->add_space_prefix
						       : v->kind == LP_VOCAB_SPM;
	if (v->add_bos && v->bos < 0)
		v->add_bos = 0;
	if (v->add_eos && v->eos < 0)
		v->add_eos = 0;
	return LP_OK;
}

static enum lp_status vocab_build(struct lp_vocab *v, const struct lp_vocab_spec *s,
				  struct lp_diag *d)
{
	enum lp_status st;

	if (!s->n_tokens || s->n_tokens > INT32_MAX / 2)
		return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
				   "vocabulary size %zu is not usable", s->n_tokens);
	v->kind = s->kind;
	snprintf(v->pre, sizeof(v->pre), "%s", s->pre && *s->pre ? s->pre : "default");
	v->n = (int32_t)s->n_tokens;
	if ((st = copy_texts(v, s, d)) || (st = build_hash(v, d)) || (st = build_raw(v, d)) ||
	    (st = build_bytes(v, d)) || (st = check_specials(v, s, d)))
		return st;
	if (s->kind == LP_VOCAB_BPE && (st = build_merges(v, s, d)))
		return st;
	if (s->chat_template && !(v->chat_template = lp_mem_strdup(s->chat_template)))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the chat template");
	return LP_OK;
}

enum lp_status lp_vocab_new(const struct lp_vocab_spec *spec, struct lp_vocab **out,
			    struct lp_diag *d)
{
	struct lp_vocab *v;
	enum lp_status st;

	*out = NULL;
	v = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*v), d);
	if (!v)
		return LP_E_NOMEM;
	v->bytes = sizeof(*v);
	st = vocab_build(v, spec, d);
	if (st) {
		if (st == LP_E_NOMEM && d && !d->msg[0])
			lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory building the vocabulary");
		lp_vocab_free(v);
		return st;
	}
	*out = v;
	return LP_OK;
}

/* ---- accessors ------------------------------------------------------------ */

enum lp_vocab_kind lp_vocab_kind(const struct lp_vocab *v) { return v->kind; }
const char *lp_vocab_pre(const struct lp_vocab *v) { return v->pre; }
int32_t lp_vocab_n_tokens(const struct lp_vocab *v) { return v->n; }

const char *lp_vocab_text(const struct lp_vocab *v, int32_t id, size_t *len)
{
	if (id < 0 || id >= v->n) {
		*len = 0;
		return NULL;
	}
	*len = v->text_off[id + 1] - v->text_off[id];
	return v->text_pool + v->text_off[id];
}

const char *lp_vocab_raw(const struct lp_vocab *v, int32_t id, size_t *len)
{
	if (id < 0 || id >= v->n) {
		*len = 0;
		return NULL;
	}
	*len = v->raw_off[id + 1] - v->raw_off[id];
	return v->raw_pool + v->raw_off[id];
}

float lp_vocab_score(const struct lp_vocab *v, int32_t id)
{
	return id >= 0 && id < v->n ? v->scores[id] : 0.0f;
}

enum lp_token_type lp_vocab_type(const struct lp_vocab *v, int32_t id)
{
	return id >= 0 && id < v->n ? (enum lp_token_type)v->types[id] : LP_TOKEN_UNDEFINED;
}

int lp_vocab_is_special(const struct lp_vocab *v, int32_t id)
{
	enum lp_token_type t = lp_vocab_type(v, id);

	return t == LP_TOKEN_CONTROL || t == LP_TOKEN_USER_DEFINED;
}

int32_t lp_vocab_merge(const struct lp_vocab *v, int32_t left, int32_t right, int32_t *result)
{
	uint64_t key = ((uint64_t)(uint32_t)(left + 1) << 32) | (uint32_t)(right + 1);
	uint32_t h;

	if (!v->mt)
		return -1;
	h = (uint32_t)hash_pair(key) & v->mt_mask;
	while (v->mt[h].key) {
		if (v->mt[h].key == key) {
			*result = v->mt[h].result;
			return v->mt[h].rank;
		}
		h = (h + 1) & v->mt_mask;
	}
	return -1;
}

int32_t lp_vocab_byte_token(const struct lp_vocab *v, unsigned char b) { return v->byte_tok[b]; }
int32_t lp_vocab_bos(const struct lp_vocab *v) { return v->bos; }
int32_t lp_vocab_eos(const struct lp_vocab *v) { return v->eos; }
int32_t lp_vocab_eot(const struct lp_vocab *v) { return v->eot; }
int32_t lp_vocab_unk(const struct lp_vocab *v) { return v->unk; }
int32_t lp_vocab_pad(const struct lp_vocab *v) { return v->pad; }
int lp_vocab_add_bos(const struct lp_vocab *v) { return v->add_bos; }
int lp_vocab_add_eos(const struct lp_vocab *v) { return v->add_eos; }
int lp_vocab_add_space_prefix(const struct lp_vocab *v) { return v->add_space_prefix; }
const char *lp_vocab_chat_template(const struct lp_vocab *v) { return v->chat_template; }
size_t lp_vocab_n_bad_merges(const struct lp_vocab *v) { return v->n_bad_merges; }
size_t lp_vocab_bytes(const struct lp_vocab *v) { return v->bytes; }
