#include "retrieve/wordpiece.h"

#include <string.h>
#include <utf8proc.h>

#include "core/hash.h"
#include "core/fileio.h"
#include "core/mem.h"
#include "core/utf8.h"

struct lp_wordpiece {
	char *blob;         /* vocab text, each token NUL-terminated */
	uint32_t *offs;     /* [n] offset of token i in blob */
	uint32_t *lens;     /* [n] bytes of token i */
	int32_t *slots;     /* [n_slots] open addressing: token id or -1 */
	size_t n, n_slots;
	int32_t cls, sep, pad, unk;
};

/* Bytes a word may occupy before it is known to be too long. */
#define WORD_BYTES (4 * LP_WORDPIECE_MAX_WORD_CHARS + 8)

struct word {
	char b[WORD_BYTES];
	size_t nb, nchars;
	int punct;          /* the word is one punctuation mark */
};

/* Words and unknown words seen, for lp_wordpiece_coverage. */
struct wp_count {
	size_t words, unknown;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
	return lp_hash_fnv1a(LP_HASH_FNV_BASIS, s, n);
}

int32_t lp_wordpiece_id(const struct lp_wordpiece *wp, const char *token, size_t len)
{
	size_t mask = wp->n_slots - 1, i = hash_bytes(token, len) & mask;

	for (;; i = (i + 1) & mask) {
		int32_t id = wp->slots[i];
		if (id < 0)
			return -1;
		if (wp->lens[id] == len && !memcmp(wp->blob + wp->offs[id], token, len))
			return id;
	}
}

const char *lp_wordpiece_token(const struct lp_wordpiece *wp, int32_t id)
{
	return id >= 0 && (size_t)id < wp->n ? wp->blob + wp->offs[id] : NULL;
}

size_t lp_wordpiece_vocab_size(const struct lp_wordpiece *wp) { return wp->n; }
int32_t lp_wordpiece_cls(const struct lp_wordpiece *wp) { return wp->cls; }
int32_t lp_wordpiece_sep(const struct lp_wordpiece *wp) { return wp->sep; }
int32_t lp_wordpiece_pad(const struct lp_wordpiece *wp) { return wp->pad; }
int32_t lp_wordpiece_unk(const struct lp_wordpiece *wp) { return wp->unk; }

void lp_wordpiece_free(struct lp_wordpiece *wp)
{
	if (!wp)
		return;
	lp_mem_free(wp->blob);
	lp_mem_free(wp->offs);
	lp_mem_free(wp->lens);
	lp_mem_free(wp->slots);
	lp_mem_free(wp);
}

/* Split the blob into lines in place (dropping a CR before each LF). */
static enum lp_status index_lines(struct lp_wordpiece *wp, size_t len, const char *name,
				  struct lp_diag *d)
{
	size_t start = 0, lines = len && wp->blob[len - 1] != '\n';

	for (size_t i = 0; i < len; i++)
		lines += wp->blob[i] == '\n';
	if (!lines || lines > INT32_MAX || len > UINT32_MAX)
		return lp_diag_set(d, LP_E_MODEL, name, 0, 0, "vocabulary is empty or too large");
	wp->offs = lp_mem_alloc(LP_MEM_WEIGHTS, lines * sizeof(*wp->offs), d);
	wp->lens = lp_mem_alloc(LP_MEM_WEIGHTS, lines * sizeof(*wp->lens), d);
	if (!wp->offs || !wp->lens)
		return LP_E_NOMEM;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && wp->blob[i] != '\n')
			continue;
		if (i == len && i == start)
			break;
		size_t e = i;
		if (e > start && wp->blob[e - 1] == '\r')
			e--;
		wp->blob[e] = '\0';
		wp->offs[wp->n] = (uint32_t)start;
		wp->lens[wp->n] = (uint32_t)(e - start);
		wp->n++;
		start = i + 1;
	}
	return LP_OK;
}

static enum lp_status build_table(struct lp_wordpiece *wp, const char *name, struct lp_diag *d)
{
	size_t mask;

	for (wp->n_slots = 16; wp->n_slots < 2 * wp->n; wp->n_slots *= 2)
		;
	mask = wp->n_slots - 1;
	wp->slots = lp_mem_alloc(LP_MEM_WEIGHTS, wp->n_slots * sizeof(*wp->slots), d);
	if (!wp->slots)
		return LP_E_NOMEM;
	memset(wp->slots, 0xff, wp->n_slots * sizeof(*wp->slots));
	for (size_t id = 0; id < wp->n; id++) {
		const char *tok = wp->blob + wp->offs[id];
		size_t i = hash_bytes(tok, wp->lens[id]) & mask;
		if (lp_wordpiece_id(wp, tok, wp->lens[id]) >= 0)
			return lp_diag_set(d, LP_E_MODEL, name, (int)id + 1, 0,
					   "duplicate token '%s'", tok);
		while (wp->slots[i] >= 0)
			i = (i + 1) & mask;
		wp->slots[i] = (int32_t)id;
	}
	return LP_OK;
}

static enum lp_status find_special(struct lp_wordpiece *wp, const char *name, struct lp_diag *d)
{
	static const char *names[] = { "[CLS]", "[SEP]", "[PAD]", "[UNK]" };
	int32_t *dst[] = { &wp->cls, &wp->sep, &wp->pad, &wp->unk };

	for (int i = 0; i < 4; i++) {
		*dst[i] = lp_wordpiece_id(wp, names[i], strlen(names[i]));
		if (*dst[i] < 0)
			return lp_diag_set(d, LP_E_MODEL, name, 0, 0,
					   "vocabulary lacks the token '%s'", names[i]);
	}
	return LP_OK;
}

enum lp_status lp_wordpiece_new(const char *text, size_t len, const char *name,
				struct lp_wordpiece **out, struct lp_diag *d)
{
	struct lp_wordpiece *wp;
	enum lp_status s;

	*out = NULL;
	if (!(wp = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*wp), d)))
		return LP_E_NOMEM;
	if (!(wp->blob = lp_mem_alloc(LP_MEM_WEIGHTS, len + 1, d))) {
		lp_wordpiece_free(wp);
		return LP_E_NOMEM;
	}
	if (len) /* an empty vocab.txt maps to NULL, and memcpy wants a pointer */
		memcpy(wp->blob, text, len);
	wp->blob[len] = '\0';
	if ((s = index_lines(wp, len, name, d)) || (s = build_table(wp, name, d)) ||
	    (s = find_special(wp, name, d))) {
		lp_wordpiece_free(wp);
		return s;
	}
	*out = wp;
	return LP_OK;
}

enum lp_status lp_wordpiece_load(const char *vocab_path, struct lp_wordpiece **out,
				 struct lp_diag *d)
{
	struct lp_mapped m;
	enum lp_status s;

	*out = NULL;
	if ((s = lp_file_map(vocab_path, LP_FILE_MODEL, LP_MEM_WEIGHTS, &m, d)))
		return s;
	s = lp_wordpiece_new((const char *)m.data, m.len, vocab_path, out, d);
	lp_file_unmap(&m);
	return s;
}

void lp_wordpiece_ids_release(struct lp_wordpiece_ids *v)
{
	lp_mem_free(v->ids);
	memset(v, 0, sizeof(*v));
}

static enum lp_status push(struct lp_wordpiece_ids *v, int32_t id, struct lp_diag *d)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		int32_t *p = lp_mem_realloc(LP_MEM_SCRATCH, v->ids, cap * sizeof(*p), d);
		if (!p)
			return LP_E_NOMEM;
		v->ids = p;
		v->cap = cap;
	}
	v->ids[v->n++] = id;
	return LP_OK;
}

/* Cut one word into the longest vocabulary pieces, left to right. */
static enum lp_status emit_word(const struct lp_wordpiece *wp, struct word *w,
				struct lp_wordpiece_ids *out, struct wp_count *cnt,
				struct lp_diag *d)
{
	char piece[WORD_BYTES + 2] = "##";
	size_t start = 0, first = out->n;
	enum lp_status s;

	if (!w->nchars)
		return LP_OK;
	if (cnt && !w->punct)
		cnt->words++;
	if (w->nchars > LP_WORDPIECE_MAX_WORD_CHARS)
		goto unknown;
	while (start < w->nb) {
		int32_t id = -1;
		size_t end = w->nb, pre = start ? 2 : 0;
		for (; end > start; end--) {
			if (end < w->nb && ((unsigned char)w->b[end] & 0xc0) == 0x80)
				continue; /* not a code point boundary */
			memcpy(piece + 2, w->b + start, end - start);
			if ((id = lp_wordpiece_id(wp, piece + 2 - pre, end - start + pre)) >= 0)
				break;
		}
		if (id < 0)
			goto unknown;
		if ((s = push(out, id, d)))
			return s;
		start = end;
	}
	w->nb = w->nchars = 0;
	w->punct = 0;
	return LP_OK;
unknown:
	out->n = first;
	if (cnt && !w->punct)
		cnt->unknown++;
	w->nb = w->nchars = 0;
	w->punct = 0;
	return push(out, wp->unk, d);
}

static void word_add(struct word *w, uint32_t cp)
{
	unsigned char tmp[4];
	int k = lp_utf8_encode(cp, tmp);

	w->nchars++;
	if (k > 0 && w->nb + (size_t)k <= WORD_BYTES) {
		memcpy(w->b + w->nb, tmp, (size_t)k);
		w->nb += (size_t)k;
	}
}

/* Dropped by cleaning: NUL, U+FFFD, and "other" categories but tab/LF/CR. */
static int is_dropped(uint32_t cp)
{
	if (cp == 0 || cp == 0xfffd)
		return 1;
	if (cp == '\t' || cp == '\n' || cp == '\r')
		return 0;
	switch (utf8proc_category((utf8proc_int32_t)cp)) {
	case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CN:
	case UTF8PROC_CATEGORY_CO: case UTF8PROC_CATEGORY_CS:
		return 1;
	default:
		return 0;
	}
}

/* White_Space characters that survive cleaning. */
static int is_space(uint32_t cp)
{
	return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0xa0 ||
	       cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

static int is_punct(uint32_t cp)
{
	if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
	    (cp >= 123 && cp <= 126))
		return 1;
	switch (utf8proc_category((utf8proc_int32_t)cp)) {
	case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
	case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
	case UTF8PROC_CATEGORY_PO:
		return 1;
	default:
		return 0;
	}
}

/* The CJK ideograph blocks BERT isolates (not kana or hangul). */
static int is_cjk_ideograph(uint32_t cp)
{
	return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
	       (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2b73f) ||
	       (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf) ||
	       (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}

/* Feed one input code point through normalisation into the word state. */
static enum lp_status feed(const struct lp_wordpiece *wp, uint32_t cp, struct word *w,
			   struct lp_wordpiece_ids *out, struct wp_count *cnt, struct lp_diag *d)
{
	utf8proc_int32_t dec[16];
	utf8proc_ssize_t nd;
	int cjk = is_cjk_ideograph(cp);
	enum lp_status s;

	if (is_dropped(cp))
		return LP_OK;
	if (is_space(cp))
		return emit_word(wp, w, out, cnt, d);
	if (cjk && (s = emit_word(wp, w, out, cnt, d)))
		return s;
	nd = utf8proc_decompose_char((utf8proc_int32_t)cp, dec, 16, UTF8PROC_DECOMPOSE, NULL);
	if (nd < 0 || nd > 16) {
		dec[0] = (utf8proc_int32_t)cp;
		nd = 1;
	}
	for (utf8proc_ssize_t i = 0; i < nd; i++) {
		uint32_t c = (uint32_t)dec[i];
		if (utf8proc_category(dec[i]) == UTF8PROC_CATEGORY_MN)
			continue;
		c = lp_utf8_tolower(c);
		if (is_punct(c)) {
			if ((s = emit_word(wp, w, out, cnt, d)))
				return s;
			word_add(w, c);
			w->punct = 1;
			if ((s = emit_word(wp, w, out, cnt, d)))
				return s;
		} else {
			word_add(w, c);
		}
	}
	return cjk ? emit_word(wp, w, out, cnt, d) : LP_OK;
}

static enum lp_status tokenize(const struct lp_wordpiece *wp, const char *text, size_t len,
			       struct lp_wordpiece_ids *out, struct wp_count *cnt,
			       struct lp_diag *d)
{
	const unsigned char *p = (const unsigned char *)text;
	struct word w;
	size_t i = 0;
	enum lp_status s;

	w.nb = w.nchars = 0;
	w.punct = 0;
	while (i < len) {
		uint32_t cp;
		int k = lp_utf8_decode(p + i, len - i, &cp);
		if (k <= 0) {
			cp = 0xfffd;
			k = 1;
		}
		i += (size_t)k;
		if ((s = feed(wp, cp, &w, out, cnt, d)))
			return s;
	}
	return emit_word(wp, &w, out, cnt, d);
}

enum lp_status lp_wordpiece_tokenize(const struct lp_wordpiece *wp, const char *text,
				     size_t len, struct lp_wordpiece_ids *out, struct lp_diag *d)
{
	return tokenize(wp, text, len, out, NULL, d);
}

enum lp_status lp_wordpiece_coverage(const struct lp_wordpiece *wp, const char *text, size_t len,
				     size_t *n_words, size_t *n_unknown, struct lp_diag *d)
{
	struct lp_wordpiece_ids v = { 0 };
	struct wp_count cnt = { 0, 0 };
	enum lp_status s = tokenize(wp, text, len, &v, &cnt, d);

	lp_wordpiece_ids_release(&v);
	*n_words += cnt.words;
	*n_unknown += cnt.unknown;
	return s;
}

enum lp_status lp_wordpiece_encode(const struct lp_wordpiece *wp, const char *text, size_t len,
				   size_t max_len, int32_t *ids, size_t *n, struct lp_diag *d)
{
	struct lp_wordpiece_ids v = { 0 };
	enum lp_status s;
	size_t keep;

	*n = 0;
	if (max_len < 2)
		return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0, "max_len %zu leaves no room for [CLS] and [SEP]", max_len);
	if ((s = lp_wordpiece_tokenize(wp, text, len, &v, d))) {
		lp_wordpiece_ids_release(&v);
		return s;
	}
	keep = v.n < max_len - 2 ? v.n : max_len - 2;
	ids[0] = wp->cls;
	if (keep)
		memcpy(ids + 1, v.ids, keep * sizeof(*ids));
	ids[keep + 1] = wp->sep;
	*n = keep + 2;
	lp_wordpiece_ids_release(&v);
	return LP_OK;
}
