/*
 * choose.c - a chunk's sentences chosen without a model (see choose.h).
 */
#include "text/choose.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "core/mem.h"
#include "text/alone.h"
#include "text/extractive.h"
#include "text/keyphrase.h"
#include "text/match.h"
#include "text/outline.h"
#include "text/points.h"
#include "text/sentence.h"

struct sent {
	size_t off, len;  /* the sentence, without its part's term line */
	size_t part;      /* in the outline */
	double central;   /* lp_extractive_rank */
	uint32_t kp;      /* keyphrases of the chunk it holds */
	int ok, taken;    /* eligible; chosen */
	int pronoun;      /* opens with a pronoun: eligible only after its lead */
};

struct central {
	const char *text;
	struct sent *s;
	size_t n;
	const struct lp_outline_part *parts;
	size_t n_parts;
	size_t *chosen, n_chosen; /* sentence indices, in the order chosen */
	uint32_t held;            /* keyphrases held by the chosen */
	uint32_t names;           /* the keys that are names (first_name on) */
};

/* Bit mask of the keys kp[0..n_kp) (the first LP_CHOOSE_MAX_KEYS) held by s[0..len). */
static enum lp_status kp_mask(const char *s, size_t len, const char *const *kp, size_t n_kp,
			      uint32_t *mask, struct lp_diag *d)
{
	uint64_t m;
	enum lp_status st = lp_match_held(s, len, kp, n_kp < LP_CHOOSE_MAX_KEYS ? n_kp :
				       LP_CHOOSE_MAX_KEYS, &m, NULL, d);

	*mask = (uint32_t)m;
	return st;
}

/* Is s[i] (eligible, not taken) a near repeat of a chosen sentence? */
static int repeats(const struct central *c, size_t i)
{
	for (size_t j = 0; j < c->n_chosen; j++) {
		const struct sent *x = &c->s[c->chosen[j]];
		if (lp_points_similar(c->text + c->s[i].off, c->s[i].len, c->text + x->off, x->len))
			return 1;
	}
	return 0;
}

/* May sentence x be taken on its own (not as its lead's next)? */
static int alone(const struct sent *x)
{
	return x->ok && !x->pronoun;
}

/* Is a better than b: more fresh keyphrases, then more central? */
static int better(const struct central *c, size_t a, size_t b)
{
	int fa = __builtin_popcount(c->s[a].kp & ~c->held);
	int fb = __builtin_popcount(c->s[b].kp & ~c->held);

	return fa != fb ? fa > fb : c->s[a].central > c->s[b].central;
}

static void take(struct central *c, size_t i)
{
	c->s[i].taken = 1;
	c->held |= c->s[i].kp;
	c->chosen[c->n_chosen++] = i;
}

/* Does text[from, to) hold a paragraph break (a blank line)? */
static int paragraph_break(const char *text, size_t from, size_t to)
{
	for (size_t k = from, nl = 0; k < to; k++)
		if (text[k] == '\n' && ++nl == 2)
			return 1;
	return 0;
}

/* Lead i with its next sentence when that one says what i does not: it
 * is eligible, of the same part and paragraph, and holds at least
 * LEAD_NEXT_KEYS names (the keys from first_name on; not keyphrases,
 * whose common words most sentences hold) held by neither i nor the
 * sentences taken. A section that opens with its subject ("When Bash is
 * invoked as an interactive login shell, ... it first reads
 * '/etc/profile'") often names what a reader looks for in the sentence
 * after ("After reading that file, it looks for '~/.bash_profile', ..."),
 * which reads as a sentence only after it. Call before take(c, i). */
#define LEAD_NEXT_KEYS 1
static void with_next(struct central *c, size_t i)
{
	struct sent *x = &c->s[i], *y = x + 1;
	size_t end = x->off + x->len;

	if (i + 1 >= c->n || y->part != x->part || !y->ok || y->taken ||
	    __builtin_popcount(y->kp & c->names & ~x->kp & ~c->held) < LEAD_NEXT_KEYS)
		return;
	if (paragraph_break(c->text, end, y->off))
		return;
	x->len = y->off + y->len - x->off;
	x->kp |= y->kp;
	y->taken = 1;
}

/* The lead of part p: its first eligible sentence that is no repeat;
 * c->n when none. */
static size_t lead_of(const struct central *c, size_t p)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->s[i].part == p && alone(&c->s[i]) && !c->s[i].taken && !repeats(c, i))
			return i;
	return c->n;
}

/* Does s[0..len) open by saying what its subject is ("Rsync is a fast
 * ... tool.", "The GNU General Public License is a free, copyleft license
 * ...")? A subject of 1 to DEFINES_WORDS words, the first capitalised,
 * no comma in it, then "is a" or "is an". */
#define DEFINES_WORDS 6
static int defines(const char *s, size_t len)
{
	size_t i = 0, words = 0;

	if (!len || s[0] < 'A' || s[0] > 'Z')
		return 0;
	while (i < len && words <= DEFINES_WORDS) {
		size_t w = i;
		while (i < len && s[i] != ' ' && s[i] != '\n')
			i++;
		if (words && i - w == 2 && !strncmp(s + w, "is", 2)) {
			while (i < len && (s[i] == ' ' || s[i] == '\n'))
				i++;
			return (len - i > 2 && !strncmp(s + i, "a ", 2)) ||
			       (len - i > 3 && !strncmp(s + i, "an ", 3));
		}
		if (memchr(s + w, ',', i - w) || memchr(s + w, ';', i - w) ||
		    memchr(s + w, ':', i - w))
			return 0;
		words++;
		while (i < len && (s[i] == ' ' || s[i] == '\n'))
			i++;
	}
	return 0;
}

/* A defining opening i with the rest of its paragraph, up to
 * OPENING_MORE eligible sentences (a pronoun opener among them: what it
 * stands for is just before): a document's overview paragraph says what
 * the thing is and what it is for ("It can copy locally, to/from another
 * host ... It is famous for its delta-transfer algorithm ..."). Call
 * before take(c, i). */
#define OPENING_MORE 3
static void with_paragraph(struct central *c, size_t i)
{
	struct sent *x = &c->s[i];

	for (size_t k = i + 1, more = 0; k < c->n && more < OPENING_MORE; k++, more++) {
		struct sent *y = &c->s[k];
		if (y->part != x->part || !y->ok || y->taken ||
		    paragraph_break(c->text, x->off + x->len, y->off))
			return;
		x->len = y->off + y->len - x->off;
		x->kp |= y->kp;
		y->taken = 1;
	}
}

/* The sentence that opens the document's summary: the first of the
 * first LEAD_SCAN eligible sentences that says what its subject is
 * (defines), as a reader's summary starts with what the thing is ("Rsync
 * is a fast ... copying tool." after the synopsis' "Usages with just one
 * SRC argument ..."); else the lead of the first part that has one; c->n
 * when there is none. */
#define LEAD_SCAN 12
static size_t opening(const struct central *c, size_t first_part)
{
	for (size_t i = 0, seen = 0; i < c->n && seen < LEAD_SCAN; i++) {
		if (!alone(&c->s[i]))
			continue;
		if (defines(c->text + c->s[i].off, c->s[i].len))
			return i;
		seen++;
	}
	return first_part < c->n_parts ? lead_of(c, first_part) : c->n;
}

/* Take up to `want` sentences (see above). */
static enum lp_status choose_sentences(struct central *c, size_t want, int lead,
				       struct lp_diag *d)
{
	size_t *bytes = lp_mem_calloc(LP_MEM_SCRATCH, c->n_parts + 1, sizeof(*bytes), d);
	size_t *slots = lp_mem_calloc(LP_MEM_SCRATCH, c->n_parts + 1, sizeof(*slots), d);
	size_t first = c->n_parts;

	if (!bytes || !slots) {
		lp_mem_free(bytes);
		lp_mem_free(slots);
		return LP_E_NOMEM;
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->s[i].ok) {
			first = c->s[i].part < first ? c->s[i].part : first;
			bytes[c->s[i].part] += c->s[i].len;
		}
	size_t opener = lead ? opening(c, first) : c->n;

	if (opener < c->n) {
		if (defines(c->text + c->s[opener].off, c->s[opener].len))
			with_paragraph(c, opener);
		else
			with_next(c, opener);
		take(c, opener);
		slots[c->s[opener].part]++;
	}
	for (int lv = 0; lv <= LP_OUTLINE_MAX_LEVEL && c->n_chosen < want; lv++) {
		/* the leads of the parts of level lv: all of them when they fit,
		 * else one per run of parts of about equal prose */
		size_t lm = 0, ltotal = 0, room = want - c->n_chosen;
		for (size_t p = 0; p < c->n_parts; p++)
			if (bytes[p] && !slots[p] && c->parts[p].level == lv) {
				lm++;
				ltotal += bytes[p];
			}
		for (size_t r = 0, p = 0, cum = 0; lm && p < c->n_parts && c->n_chosen < want; r++) {
			size_t best = c->n, best_part = 0;
			for (; p < c->n_parts && (lm <= room || cum * room < (r + 1) * ltotal); p++) {
				size_t i;
				if (!bytes[p] || slots[p] || c->parts[p].level != lv)
					continue;
				i = lead_of(c, p);
				cum += bytes[p];
				if (i < c->n && (best == c->n || better(c, i, best))) {
					best = i;
					best_part = p;
				}
				if (lm <= room) {
					p++;
					break;
				}
			}
			if (best < c->n) {
				with_next(c, best);
				take(c, best);
				slots[best_part]++;
			}
		}
	}
	while (c->n_chosen < want) { /* the rest, to the parts with the most prose */
		size_t best = c->n, best_part = c->n_parts;
		for (size_t p = 0; p < c->n_parts; p++)
			if (bytes[p] && (best_part == c->n_parts ||
					 bytes[p] * (slots[best_part] + 1) >
						 bytes[best_part] * (slots[p] + 1))) {
				size_t pick = c->n;
				for (size_t i = 0; i < c->n; i++)
					if (c->s[i].part == p && alone(&c->s[i]) && !c->s[i].taken &&
					    (pick == c->n || better(c, i, pick)) && !repeats(c, i))
						pick = i;
				if (pick == c->n) {
					bytes[p] = 0; /* nothing more to take */
					continue;
				}
				best = pick;
				best_part = p;
			}
		if (best == c->n)
			break;
		take(c, best);
		slots[best_part]++;
	}
	lp_mem_free(bytes);
	lp_mem_free(slots);
	return LP_OK;
}

/* Cut sentence x off the title or term line of its part when it runs
 * over it. */
static void past_title(const char *text, const struct lp_outline_part *p, struct sent *x)
{
	size_t end = x->off + x->len, t = p->body;

	if (x->off >= t)
		return;
	if (t >= end) { /* the sentence is the title */
		x->len = 0;
		return;
	}
	while (t < end && (text[t] == ' ' || text[t] == '\t' || text[t] == '\n' || text[t] == '\r'))
		t++;
	x->len = end - t;
	x->off = t;
}

/* Cut sentence x past a label on a line of its own that opens it: one
 * word without punctuation, alone on its line ("Tip", "Caution", "Note" over the paragraph
 * they mark), which the sentence splitter leaves in front of the
 * paragraph's first sentence ("Tip The top level ..."). */
static void past_label(const char *text, struct sent *x)
{
	size_t i = 0, end, b = x->off;

	while (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\t'))
		b--;
	if (b > 0 && text[b - 1] != '\n')
		return; /* "... end.  The\nkernel ...": a word, not a line */
	while (i < x->len && i <= 16 && ((text[x->off + i] | 0x20) >= 'a' &&
					 (text[x->off + i] | 0x20) <= 'z'))
		i++;
	end = i;
	while (i < x->len && (text[x->off + i] == ' ' || text[x->off + i] == '\t' ||
			      text[x->off + i] == '\r'))
		i++;
	if (!end || end > 16 || i >= x->len || text[x->off + i] != '\n')
		return;
	while (i < x->len && (strchr(" \t\r\n", text[x->off + i]) ||
			      (i + 1 < x->len && !memcmp(text + x->off + i, "\xc2\xa0", 2))))
		i += text[x->off + i] == '\xc2' ? 2 : 1; /* and no-break spaces */
	x->off += i;
	x->len -= i;
}

/* For each must phrase no sentence taken holds, the first eligible one
 * that holds it. */
static enum lp_status choose_must(struct central *c, const struct lp_choose_opts *o,
				  struct lp_diag *d)
{
	uint32_t held = 0, *mask = lp_mem_calloc(LP_MEM_SCRATCH, c->n, sizeof(*mask), d);
	enum lp_status st = mask ? LP_OK : LP_E_NOMEM;

	for (size_t i = 0; !st && i < c->n; i++)
		if (c->s[i].ok || c->s[i].taken)
			st = kp_mask(c->text + c->s[i].off, c->s[i].len, o->must, o->n_must,
				     &mask[i], d);
	for (size_t i = 0; !st && i < c->n; i++)
		if (c->s[i].taken)
			held |= mask[i];
	for (size_t k = 0; !st && k < o->n_must && k < LP_CHOOSE_MAX_KEYS; k++) {
		size_t i = 0;
		if (held >> k & 1)
			continue;
		while (i < c->n && (!(mask[i] >> k & 1) || !alone(&c->s[i]) || c->s[i].taken))
			i++;
		if (i < c->n) { /* asked for: it ranks first */
			take(c, i);
			memmove(c->chosen + 1, c->chosen, (c->n_chosen - 1) * sizeof(*c->chosen));
			c->chosen[0] = i;
			held |= mask[i];
		}
	}
	lp_mem_free(mask);
	return st;
}

/* The sentences of text[0..len) with their part, centrality, keyphrases
 * and eligibility, into c (tracked scratch). */
static enum lp_status read_sentences(struct central *c, const char *text, size_t len,
				     const struct lp_choose_opts *o, struct lp_diag *d)
{
	struct lp_span *spans = NULL, sp;
	double *scores = NULL;
	size_t cap = 0, pos = 0;
	enum lp_status st = lp_outline_parts(text, len, (struct lp_outline_part **)&c->parts,
					     &c->n_parts, d);

	while (!st && lp_sentence_next(text, len, &pos, &sp)) {
		if (c->n == cap) {
			struct lp_span *g;
			cap = cap ? 2 * cap : 64;
			if (!(g = lp_mem_realloc(LP_MEM_SCRATCH, spans, cap * sizeof(*spans), d))) {
				st = LP_E_NOMEM;
				break;
			}
			spans = g;
		}
		spans[c->n++] = sp;
	}
	if (!st && c->n) {
		scores = lp_mem_alloc(LP_MEM_SCRATCH, c->n * sizeof(*scores), d);
		c->s = lp_mem_calloc(LP_MEM_SCRATCH, c->n, sizeof(*c->s), d);
		c->chosen = lp_mem_alloc(LP_MEM_SCRATCH, c->n * sizeof(*c->chosen), d);
		st = scores && c->s && c->chosen ?
		     lp_extractive_rank(text, spans, c->n, scores, d) : LP_E_NOMEM;
	}
	for (size_t i = 0; !st && i < c->n; i++) {
		struct sent *x = &c->s[i];
		x->off = spans[i].off;
		x->len = spans[i].len;
		x->central = scores[i];
		x->part = lp_outline_find(c->parts, c->n_parts, x->off);
		past_title(text, &c->parts[x->part], x);
		past_label(text, x);
		/* a summary's sentence must stand alone (text/alone.h) */
		x->ok = x->len && lp_points_is_prose(text + x->off, x->len) &&
			!(o->drop_meta && lp_points_is_meta(text + x->off, x->len));
		if (x->ok) {
			enum lp_alone a = lp_alone_check(text + x->off, x->len);
			x->ok = a != LP_ALONE_LEAD_IN;
			x->pronoun = a == LP_ALONE_PRONOUN;
		}
		if (x->ok)
			st = kp_mask(text + x->off, x->len, o->keys, o->n_keys, &x->kp, d);
	}
	lp_mem_free(spans);
	lp_mem_free(scores);
	return st;
}

enum lp_status lp_choose_sentences(const char *text, size_t len, const struct lp_choose_opts *o,
				   struct lp_choice **out, size_t *n, struct lp_diag *d)
{
	struct central c = { .text = text };
	struct lp_choice *ch = NULL;
	enum lp_status st;

	*out = NULL;
	*n = 0;
	for (size_t k = o->first_name; k < o->n_keys && k < LP_CHOOSE_MAX_KEYS; k++)
		c.names |= (uint32_t)1 << k;
	st = read_sentences(&c, text, len, o, d);
	if (!st && c.n)
		st = choose_sentences(&c, o->want, o->lead, d);
	if (!st && c.n && o->n_must)
		st = choose_must(&c, o, d);
	if (!st && c.n_chosen &&
	    !(ch = lp_mem_alloc(LP_MEM_SCRATCH, c.n_chosen * sizeof(*ch), d)))
		st = LP_E_NOMEM;
	for (size_t j = 0; !st && j < c.n_chosen; j++) { /* in document order */
		size_t first = SIZE_MAX, at = 0;
		for (size_t k = 0; k < c.n_chosen; k++)
			if (c.chosen[k] != SIZE_MAX && c.chosen[k] < first) {
				first = c.chosen[k];
				at = k;
			}
		const struct sent *x = &c.s[first];
		const struct lp_outline_part *p = &c.parts[x->part];
		ch[j] = (struct lp_choice){ x->off, x->len, p->term_off, p->term_len, at };
		c.chosen[at] = SIZE_MAX;
	}
	if (!st) {
		*out = ch;
		*n = c.n_chosen;
	}
	lp_mem_free(c.s);
	lp_mem_free(c.chosen);
	lp_mem_free((void *)c.parts);
	if (st) {
		lp_mem_free(ch);
		return lp_diag_set(d, st, NULL, 0, 0, "out of memory choosing sentences");
	}
	return LP_OK;
}

enum lp_status lp_choose_keys(const char *text, size_t len, const char *const *kp, size_t n_kp,
			      struct lp_arena *arena, const char ***keys, size_t *n_keys,
			      size_t *first_name, struct lp_diag *d)
{
	const char **terms = NULL, **all = lp_arena_alloc(arena, LP_CHOOSE_MAX_KEYS * sizeof(*all));
	size_t n_terms = 0, n = 0;
	enum lp_status st = all ? lp_keyphrase_terms(text, len, LP_CHOOSE_MAX_KEYS, arena, &terms,
						    &n_terms, d) :
				  lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for names");

	for (size_t k = 0; !st && k < n_kp && n < LP_CHOOSE_KEYPHRASES; k++)
		all[n++] = kp[k];
	*first_name = n;
	for (size_t t = 0; !st && t < n_terms && n < LP_CHOOSE_MAX_KEYS; t++) {
		int held = 0;
		for (size_t k = 0; k < n_kp && !held; k++)
			held = !strcasecmp(kp[k], terms[t]);
		if (!held)
			all[n++] = terms[t];
	}
	*keys = all;
	*n_keys = st ? 0 : n;
	return st;
}
