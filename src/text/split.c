#include "text/split.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <string.h>

#include "core/mem.h"
#include "core/utf8.h"

/* Pieces of the token approximation, and the longest letter run handed to
 * a custom counter in one call (keeps each call short and bounded). */
#define APPROX_PIECE_CPS 4
#define COUNTER_PIECE_CPS 32

const char *const lp_split_unit_names[] = {
	"chars", "words", "sentences", "paragraphs", "tokens", "regex", NULL
};
const char *const lp_split_boundary_names[] = { "none", "sentence", "paragraph", NULL };

struct lp_splitter {
	struct lp_split_params p;
	char *pattern;          /* owned copy of p.pattern */
	pcre2_code *re;
	pcre2_match_data *md;
	int match_rc;           /* first failing pcre2_match result, 0 if none */
};

/* One unit: text[off, end), non-space at both ends, weighing w. */
struct atom {
	size_t off, end, w;
};

enum cls { C_SPACE, C_CJK, C_ALNUM, C_OTHER };

struct lp_split_params lp_split_default_params(void)
{
	struct lp_split_params p;

	memset(&p, 0, sizeof(p));
	p.unit = LP_SPLIT_TOKENS;
	p.size = 384;
	p.boundary = LP_BOUNDARY_SENTENCE;
	return p;
}

/* ASCII classes, so that the common case is one table load. */
#define S C_SPACE
#define A C_ALNUM
#define O C_OTHER
static const unsigned char ascii_cls[128] = {
	O, O, O, O, O, O, O, O, O, S, S, S, S, S, O, O,
	O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
	S, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
	A, A, A, A, A, A, A, A, A, A, O, O, O, O, O, O,
	O, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A,
	A, A, A, A, A, A, A, A, A, A, A, O, O, O, O, O,
	O, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A,
	A, A, A, A, A, A, A, A, A, A, A, O, O, O, O, O,
};
#undef S
#undef A
#undef O

static enum cls classify_multibyte(const char *text, size_t len, size_t i, size_t *n)
{
	uint32_t cp;
	int k = lp_utf8_decode((const unsigned char *)text + i, len - i, &cp);

	if (!k) {
		*n = 1;
		return C_OTHER;
	}
	*n = (size_t)k;
	if (lp_utf8_is_space(cp))
		return C_SPACE;
	if (lp_utf8_is_cjk(cp))
		return C_CJK;
	return lp_utf8_is_alnum(cp) ? C_ALNUM : C_OTHER;
}

/* Class of the code point at text[i]; *n gets its length in bytes (an
 * invalid byte is one C_OTHER unit of one byte). */
static inline enum cls classify(const char *text, size_t len, size_t i, size_t *n)
{
	unsigned char c = (unsigned char)text[i];

	if (c < 0x80) {
		*n = 1;
		return (enum cls)ascii_cls[c];
	}
	return classify_multibyte(text, len, i, n);
}

static size_t skip_space(const char *text, size_t len, size_t i)
{
	size_t n;

	while (i < len && classify(text, len, i, &n) == C_SPACE)
		i += n;
	return i;
}

/* End of text[start, end) without trailing white space; text[start] must
 * not be white space. */
static size_t trim_end(const char *text, size_t start, size_t end)
{
	while (end > start) {
		size_t b = end - 1, n;
		while (b > start && ((unsigned char)text[b] & 0xC0) == 0x80)
			b--;
		if (classify(text, end, b, &n) != C_SPACE || b + n != end)
			break;
		end = b;
	}
	return end;
}

/* Past the run of code points starting at i that ends before the first one
 * whose class is in `stop_mask`, or after `max` of them (0: unbounded). */
static size_t run_end(const char *text, size_t len, size_t i, unsigned stop_mask,
		      size_t max)
{
	size_t n, cps = 0;

	while (i < len && !((1u << classify(text, len, i, &n)) & stop_mask)) {
		i += n;
		if (max && ++cps == max)
			break;
	}
	return i;
}

static int span_atom(int found, const struct lp_span *sp, size_t *pos, struct atom *a)
{
	if (!found)
		return 0;
	a->off = sp->off;
	a->end = sp->off + sp->len;
	a->w = 1;
	*pos = a->end;
	return 1;
}

static size_t counter_weight(const struct lp_splitter *s, const char *text, size_t off,
			     size_t end)
{
	size_t w = s->p.counter.count(s->p.counter.ctx, text + off, end - off);

	if (w < 1)
		return 1;
	return w > s->p.size ? s->p.size : w;
}

/* The next code-point boundary after i (for searching strictly past i). */
static size_t next_cp(const char *text, size_t len, size_t i)
{
	size_t n;

	classify(text, len, i, &n);
	return i + n;
}

/* Start of the first separator match strictly after `from`, or len. */
static size_t next_match(struct lp_splitter *s, const char *text, size_t len, size_t from)
{
	size_t start = next_cp(text, len, from);
	int rc;

	while (start <= len) {
		rc = pcre2_match(s->re, (PCRE2_SPTR)text, len, start, PCRE2_NO_UTF_CHECK, s->md, NULL);
		if (rc == PCRE2_ERROR_NOMATCH)
			return len;
		if (rc < 0) {
			if (!s->match_rc)
				s->match_rc = rc;
			return len;
		}
		size_t q = pcre2_get_ovector_pointer(s->md)[0];
		if (q > from)
			return q;
		if (start >= len)
			break;
		start = next_cp(text, len, start);
	}
	return len;
}

/* Pieces between separator matches; *pos is where a piece begins. */
static int regex_atom(struct lp_splitter *s, const char *text, size_t len, size_t *pos,
		      struct atom *a)
{
	while (*pos < len) {
		size_t q = next_match(s, text, len, *pos);
		size_t b = skip_space(text, len, *pos);
		if (b < q) {
			a->off = b;
			a->end = trim_end(text, b, q);
			a->w = 1;
			*pos = q;
			return 1;
		}
		*pos = q;
	}
	return 0;
}

/*
 * The next unit at or after *pos; advances *pos past it. Restarting at the
 * offset of any unit it returned yields that unit again and then the same
 * sequence, which is what lets the chunker rescan instead of storing units.
 */
static int next_atom(struct lp_splitter *s, const char *text, size_t len, size_t *pos,
		     struct atom *a)
{
	struct lp_span sp;
	size_t i, n;
	enum cls c;

	switch (s->p.unit) {
	case LP_SPLIT_SENTENCES:
		return span_atom(lp_sentence_next(text, len, pos, &sp), &sp, pos, a);
	case LP_SPLIT_PARAGRAPHS:
		return span_atom(lp_paragraph_next(text, len, pos, &sp), &sp, pos, a);
	case LP_SPLIT_REGEX:
		return regex_atom(s, text, len, pos, a);
	default:
		break;
	}
	i = skip_space(text, len, *pos);
	if (i >= len) {
		*pos = len;
		return 0;
	}
	c = classify(text, len, i, &n);
	a->off = i;
	a->end = i + n;
	a->w = 1;
	if (s->p.unit == LP_SPLIT_WORDS && c != C_CJK)
		a->end = run_end(text, len, i, 1u << C_SPACE | 1u << C_CJK, 0);
	else if (s->p.unit == LP_SPLIT_TOKENS && c == C_ALNUM)
		a->end = run_end(text, len, i, ~(1u << C_ALNUM),
				 s->p.counter.count ? COUNTER_PIECE_CPS : APPROX_PIECE_CPS);
	if (s->p.unit == LP_SPLIT_TOKENS && s->p.counter.count)
		a->w = counter_weight(s, text, a->off, a->end);
	*pos = a->end;
	return 1;
}

/* Sentence or paragraph ends, walked alongside the units. */
struct bcursor {
	int (*next)(const char *, size_t, size_t *, struct lp_span *);
	size_t pos, end; /* end: the current span's end, SIZE_MAX past the last */
};

static void bc_step(struct bcursor *b, const char *text, size_t len)
{
	struct lp_span sp;

	b->end = b->next(text, len, &b->pos, &sp) ? sp.off + sp.len : SIZE_MAX;
}

/* Move to the first span ending after `off`. */
static void bc_seek(struct bcursor *b, const char *text, size_t len, size_t off, int strict)
{
	while (b->end != SIZE_MAX && (strict ? b->end <= off : b->end < off))
		bc_step(b, text, len);
}

/* Boundaries the unit does not already imply. */
static int boundary_cursor(const struct lp_splitter *s, struct bcursor *b)
{
	enum lp_split_boundary k = s->p.boundary;

	if (k == LP_BOUNDARY_NONE || s->p.unit == LP_SPLIT_PARAGRAPHS ||
	    s->p.unit == LP_SPLIT_REGEX ||
	    (s->p.unit == LP_SPLIT_SENTENCES && k == LP_BOUNDARY_SENTENCE))
		return 0;
	b->next = k == LP_BOUNDARY_SENTENCE ? lp_sentence_next : lp_paragraph_next;
	b->pos = 0;
	b->end = 0;
	return 1;
}

/* Where one chunk, starting at a unit, ends. */
struct cut {
	size_t end, w;  /* byte end and weight of the chunk */
	size_t w_next;  /* weight of the unit right after it */
	int last;       /* the chunk reaches the last unit */
};

static void scan_chunk(struct lp_splitter *s, const char *text, size_t len, size_t start,
		       const struct bcursor *bc0, int use_b, struct cut *cut)
{
	struct bcursor bc = use_b ? *bc0 : (struct bcursor){ 0 };
	struct cut hard = { 0 }, bnd = { 0 }, kept = { 0 };
	int have_bnd = 0, prev_bnd = 0, have_kept = 0, prev_kept = 0;
	size_t pos = start, ks = 0, ke = 0;
	int keep = s->p.keep.next && s->p.keep.next(s->p.keep.ctx, start, &ks, &ke);
	struct atom a;

	hard.last = 1;
	while (next_atom(s, text, len, &pos, &a)) {
		int inside;

		if (prev_bnd)
			bnd.w_next = a.w;
		if (prev_kept)
			kept.w_next = a.w;
		prev_bnd = prev_kept = 0;
		if (hard.w && hard.w + a.w > s->p.size) {
			hard.w_next = a.w;
			hard.last = 0;
			break;
		}
		hard.w += a.w;
		hard.end = a.end;
		while (keep && ke <= a.end)
			keep = s->p.keep.next(s->p.keep.ctx, a.end, &ks, &ke);
		/* a cut here would split a span that began after the chunk did */
		inside = keep && ks < a.end && a.end < ke && ks > start;
		if (!inside && hard.w > s->p.overlap) {
			kept = hard;
			have_kept = prev_kept = 1;
		}
		if (use_b) {
			bc_seek(&bc, text, len, a.end, 0);
			if (bc.end == a.end && hard.w > s->p.overlap && !inside) {
				bnd.end = a.end;
				bnd.w = hard.w;
				have_bnd = prev_bnd = 1;
			}
		}
	}
	if (hard.last)
		*cut = hard;
	else if (have_bnd)
		*cut = bnd;
	else if (have_kept && s->p.keep.next) {
		*cut = kept;
		cut->last = 0;
	} else
		*cut = hard;
}

/* First unit of the next chunk: the overlap is the longest suffix of the
 * chunk weighing at most `overlap` that still leaves room for the unit after
 * the chunk; never the chunk's own first unit. Returns 0 when none. */
static int next_start(struct lp_splitter *s, const char *text, size_t len, size_t start,
		      const struct cut *cut, size_t *out)
{
	size_t pos = start, before = 0, k = 0;
	struct atom a;

	while (next_atom(s, text, len, &pos, &a)) {
		size_t tail = cut->w > before ? cut->w - before : 0;
		if (k > 0 && tail <= s->p.overlap && tail + cut->w_next <= s->p.size) {
			*out = a.off;
			return 1;
		}
		before += a.w;
		k++;
	}
	return 0;
}

enum lp_status lp_split_each(struct lp_splitter *s, const char *text, size_t len,
			     lp_split_fn fn, void *ctx, struct lp_diag *d)
{
	struct bcursor bc;
	int use_b = boundary_cursor(s, &bc);
	size_t pos = 0, start;
	struct atom a;
	struct cut cut;

	s->match_rc = 0;
	/* PCRE2 is told not to re-check the subject on every call (that
	 * would make the split quadratic), so it is checked once here. */
	if (s->re && !s->p.text_is_utf8) {
		size_t bad = lp_utf8_find_invalid((const unsigned char *)text, len);
		if (bad < len)
			return lp_diag_set_offset(d, LP_E_INPUT, NULL, (long long)bad,
						  "invalid UTF-8 at byte %zu: a pattern needs valid text",
						  bad);
	}
	if (!next_atom(s, text, len, &pos, &a))
		goto done;
	start = a.off;
	if (use_b)
		bc_step(&bc, text, len);
	for (;;) {
		if (use_b)
			bc_seek(&bc, text, len, start, 1);
		scan_chunk(s, text, len, start, &bc, use_b, &cut);
		if (fn(ctx, start, cut.end - start) || cut.last)
			break;
		if (!next_start(s, text, len, start, &cut, &start))
			break;
	}
done:
	if (s->match_rc) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(s->match_rc, msg, sizeof(msg));
		return lp_diag_set(d, LP_E_INPUT, NULL, 0, 0,
				   "pattern '%s' failed to match: %s", s->pattern, (char *)msg);
	}
	return LP_OK;
}

enum lp_status lp_span_list_push(struct lp_span_list *l, size_t off, size_t len,
				 struct lp_diag *d)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct lp_span *v = lp_mem_realloc(LP_MEM_DOC, l->v, cap * sizeof(*v), d);
		if (!v)
			return LP_E_NOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].off = off;
	l->v[l->n].len = len;
	l->n++;
	return LP_OK;
}

struct collect {
	struct lp_span_list list;
	struct lp_diag *d;
	int failed;
};

static int collect_one(void *ctx, size_t off, size_t len)
{
	struct collect *c = ctx;

	c->failed = lp_span_list_push(&c->list, off, len, c->d) != LP_OK;
	return c->failed;
}

enum lp_status lp_split_run(struct lp_splitter *s, const char *text, size_t len,
			    struct lp_span **out, size_t *n, struct lp_diag *d)
{
	struct collect c = { .d = d };
	enum lp_status st = lp_split_each(s, text, len, collect_one, &c, d);

	if (!st && c.failed)
		st = LP_E_NOMEM;
	if (st) {
		lp_mem_free(c.list.v);
		c.list.v = NULL;
		c.list.n = 0;
	}
	*out = c.list.v;
	*n = c.list.n;
	return st;
}

size_t lp_split_count(struct lp_splitter *s, const char *text, size_t len)
{
	size_t pos = 0, w = 0;
	struct atom a;

	while (next_atom(s, text, len, &pos, &a))
		w += a.w;
	return w;
}

static enum lp_status compile_pattern(struct lp_splitter *s, struct lp_diag *d)
{
	int err;
	PCRE2_SIZE eoff;
	size_t n;

	if (!s->p.pattern || !*s->p.pattern)
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0, "unit regex needs a pattern");
	n = strlen(s->p.pattern) + 1;
	s->pattern = lp_mem_alloc(LP_MEM_OTHER, n, d);
	if (!s->pattern)
		return LP_E_NOMEM;
	memcpy(s->pattern, s->p.pattern, n);
	s->p.pattern = s->pattern;
	s->re = pcre2_compile((PCRE2_SPTR)s->pattern, PCRE2_ZERO_TERMINATED,
			      PCRE2_UTF | PCRE2_UCP, &err, &eoff, NULL);
	if (!s->re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof(msg));
		lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0, "invalid pattern '%s': %s at offset %zu",
			    s->pattern, (char *)msg, (size_t)eoff);
		if (d)
			d->offset = (long long)eoff;
		return LP_E_CONFIG;
	}
	pcre2_jit_compile(s->re, PCRE2_JIT_COMPLETE); /* optional speed-up */
	s->md = pcre2_match_data_create_from_pattern(s->re, NULL);
	if (!s->md)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
	return LP_OK;
}

enum lp_status lp_split_new(const struct lp_split_params *p, struct lp_splitter **out,
			    struct lp_diag *d)
{
	struct lp_splitter *s;
	enum lp_status st;

	*out = NULL;
	if (p->size == 0)
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0, "size must be greater than 0");
	if (p->overlap >= p->size)
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
				   "overlap (%zu) must be smaller than size (%zu)",
				   p->overlap, p->size);
	if ((unsigned)p->unit > LP_SPLIT_REGEX || (unsigned)p->boundary > LP_BOUNDARY_PARAGRAPH)
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0, "unknown unit or boundary");
	s = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*s), d);
	if (!s)
		return LP_E_NOMEM;
	s->p = *p;
	s->p.pattern = NULL;
	if (p->unit == LP_SPLIT_REGEX) {
		s->p.pattern = p->pattern;
		if ((st = compile_pattern(s, d))) {
			lp_split_free(s);
			return st;
		}
	}
	if (p->unit != LP_SPLIT_TOKENS)
		s->p.counter.count = NULL;
	*out = s;
	return LP_OK;
}

void lp_split_free(struct lp_splitter *s)
{
	if (!s)
		return;
	pcre2_match_data_free(s->md);
	pcre2_code_free(s->re);
	lp_mem_free(s->pattern);
	lp_mem_free(s);
}

const struct lp_split_params *lp_split_params_of(const struct lp_splitter *s)
{
	return &s->p;
}
