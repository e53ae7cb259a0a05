/*
 * outline.c - sections and definition entries of a plain text (outline.h).
 */
#include "text/outline.h"

#include <string.h>
#include <strings.h>

#include "core/mem.h"
#include "doc/term.h"
#include "text/match.h"

struct line {
	size_t off;    /* first byte of the line */
	size_t a, b;   /* its text without the white space around it */
	size_t indent; /* columns before a (a tab to the next multiple of 8) */
};

static int blank_line(const struct line *l)
{
	return l->a == l->b;
}

#define NBSP "\xc2\xa0" /* no-break space, as in "3.7.1.\u00a0Title" */

/* Bytes of the white space at text[i] (before end): space, tab, CR or a
 * no-break space; 0 when none. */
static size_t space_at(const char *text, size_t end, size_t i)
{
	if (i >= end)
		return 0;
	if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')
		return 1;
	return end - i >= 2 && !memcmp(text + i, NBSP, 2) ? 2 : 0;
}

/* The lines of text[0..len) into *out (tracked, scratch). */
static enum lp_status lines_of(const char *text, size_t len, struct line **out, size_t *n,
			       struct lp_diag *d)
{
	struct line *v = NULL;
	size_t cap = 0, k = 0;

	for (size_t pos = 0; pos < len;) {
		struct line l = { pos, pos, pos, 0 };
		size_t end = pos;
		while (end < len && text[end] != '\n')
			end++;
		size_t sp;
		while ((sp = space_at(text, end, l.a))) {
			l.indent = text[l.a] == '\t' ? (l.indent / 8 + 1) * 8 : l.indent + 1;
			l.a += sp;
		}
		l.b = end;
		while (l.b > l.a && (text[l.b - 1] == ' ' || text[l.b - 1] == '\t' ||
				     text[l.b - 1] == '\r' ||
				     (l.b - l.a >= 2 && !memcmp(text + l.b - 2, NBSP, 2))))
			l.b -= text[l.b - 1] == '\xa0' ? 2 : 1;
		if (k == cap) {
			struct line *g;
			cap = cap ? 2 * cap : 128;
			if (!(g = lp_mem_realloc(LP_MEM_SCRATCH, v, cap * sizeof(*v), d))) {
				lp_mem_free(v);
				return LP_E_NOMEM;
			}
			v = g;
		}
		v[k++] = l;
		pos = end + 1;
	}
	*out = v;
	*n = k;
	return LP_OK;
}

/* A line of one repeated mark: "=====", "*****", "-----", ".....". */
static int underline(const char *text, const struct line *l)
{
	if (l->b - l->a < 3 || !strchr("=*-~#._", text[l->a]))
		return 0;
	for (size_t i = l->a; i < l->b; i++)
		if (text[i] != text[l->a])
			return 0;
	return 1;
}

/* Does the line's text open with `w` (case aside) and a space? */
static int opens_with(const char *text, const struct line *l, const char *w)
{
	size_t k = strlen(w);

	return l->b - l->a > k && !strncasecmp(text + l->a, w, k) &&
	       space_at(text, l->b, l->a + k);
}

/* The indent of the text's running lines: the 5th percentile of the
 * indents of lines that go on a paragraph (the line above is not blank).
 * Info wraps at column 0, the Debian Reference's text format at 4; an
 * entry's text is deeper than this, and a short line over text that is
 * not ("Copyright (c) 2013 ..." over a paragraph) is no term. */
#define INDENT_CAP 64
static size_t running_indent(const struct line *v, size_t n)
{
	size_t hist[INDENT_CAP + 1] = { 0 }, total = 0, seen = 0;

	for (size_t k = 1; k < n; k++)
		if (!blank_line(&v[k]) && !blank_line(&v[k - 1])) {
			hist[v[k].indent < INDENT_CAP ? v[k].indent : INDENT_CAP]++;
			total++;
		}
	for (size_t i = 0; i <= INDENT_CAP; i++)
		if ((seen += hist[i]) * 20 > total)
			return i;
	return 0;
}

/* "7.1 Job Control Basics", "3.2.1. The hostname", "Chapter 3 ...",
 * "第 4 章 ...": a numbered title, at most 12 words, no sentence end.
 * Returns its level (the count of its numbers), 0 when it is none. */
static int numbered_title(const char *text, const struct line *l)
{
	size_t i = l->a, words = lp_match_count_words(text + l->a, l->b - l->a);
	char last = text[l->b - 1];
	int level = 1;

	if (words > 12 || last == '.' || last == ':' || last == ';' || last == ',')
		return 0;
	if (!strncmp(text + i, "\xe7\xac\xac", 3)) { /* 第 N 章 / 节 */
		size_t k;
		for (i += 3; i < l->b && ((k = space_at(text, l->b, i)) || (text[i] >= '0' && text[i] <= '9'));
		     i += k ? k : 1)
			;
		if (l->b - i >= 3 && !strncmp(text + i, "\xe7\xab\xa0", 3))
			return 1;
		return l->b - i >= 3 && !strncmp(text + i, "\xe8\x8a\x82", 3) ? 2 : 0;
	}
	if (opens_with(text, l, "chapter") || opens_with(text, l, "appendix"))
		return 1;
	if (text[i] < '0' || text[i] > '9')
		return 0;
	while (i < l->b && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) {
		level += text[i] == '.' && i + 1 < l->b && text[i + 1] >= '0' && text[i + 1] <= '9';
		i++;
	}
	if (!space_at(text, l->b, i) || words < 2)
		return 0;
	return level < LP_OUTLINE_MAX_LEVEL ? level : LP_OUTLINE_MAX_LEVEL;
}

/* Is line k a heading (see outline.h)? Returns its level plus one
 * (numbered: its count of numbers; node line: 0; other titles: `below`,
 * one under the last numbered title), 0 when it is none. */
static int heading(const char *text, const struct line *v, size_t n, size_t k, int below)
{
	int lv;
	const struct line *l = &v[k];
	int alone_before = k == 0 || blank_line(&v[k - 1]) || underline(text, &v[k - 1]);
	int alone_after = k + 1 == n || blank_line(&v[k + 1]) || underline(text, &v[k + 1]);

	if (blank_line(l) || underline(text, l))
		return 0;
	if (opens_with(text, l, "File:") && memmem(text + l->a, l->b - l->a, "Node:", 5))
		return 1;
	lv = numbered_title(text, l);
	if (k + 1 < n && underline(text, &v[k + 1]) && alone_before)
		return 1 + (lv ? lv : below);
	return alone_before && alone_after && lv ? 1 + lv : 0;
}

/* Could line l name a defined term: a term's shape (doc/term.h), and no
 * list, table, prompt, comment or code mark? */
static int term_shape(const char *text, const struct line *l)
{
	size_t n = l->b - l->a;

	/* the cheap test first: most lines are longer than a term */
	if (!n || n > LP_TERM_BYTES ||
	    !lp_term_fits(text + l->a, n, lp_match_count_words(text + l->a, n)))
		return 0;
	if (strchr("*-+|#$%>[(", text[l->a]) || underline(text, l))
		return 0;
	if (lp_term_ends_cjk_clause(text + l->a, n) ||
	    (n >= 3 && !memcmp(text + l->a, "\xe2\x80\xa2", 3))) /* • */
		return 0;
	for (size_t i = l->a; i < l->b; i++)
		if (text[i] == ';' || text[i] == '$' || text[i] == '=' || text[i] == '{')
			return 0; /* a line of code: "if [ -z "$PS1" ]; then" */
	return 1;
}

/* Is line k a definition term: term-shaped, after a blank line or another
 * term-shaped line of the same indent (two names of one thing), its next
 * non-blank line, past such names, deeper than it and than the running
 * text (`base`, running_indent)? */
static int term(const char *text, const struct line *v, size_t n, size_t k, size_t base)
{
	size_t j = k + 1;

	if (!term_shape(text, &v[k]))
		return 0;
	if (k && !blank_line(&v[k - 1]) &&
	    !(term_shape(text, &v[k - 1]) && v[k - 1].indent == v[k].indent))
		return 0;
	while (j < n && v[j].indent == v[k].indent && term_shape(text, &v[j]))
		j++;
	while (j < n && blank_line(&v[j]))
		j++;
	return j < n && v[j].indent > v[k].indent && v[j].indent > base;
}

/* The term of line l without the quotes around it: 'bg', `x', "x", “x”. */
static void term_text(const char *text, const struct line *l, size_t *off, size_t *len)
{
	static const char *const pairs[][2] = {
		{ "'", "'" }, { "`", "'" }, { "`", "`" }, { "\"", "\"" },
		{ "\xe2\x80\x9c", "\xe2\x80\x9d" }, { "\xe2\x80\x98", "\xe2\x80\x99" },
	};
	size_t a = l->a, b = l->b;

	for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		size_t o = strlen(pairs[k][0]), c = strlen(pairs[k][1]);
		if (b - a > o + c && !memcmp(text + a, pairs[k][0], o) &&
		    !memcmp(text + b - c, pairs[k][1], c)) {
			a += o;
			b -= c;
			break;
		}
	}
	*off = a;
	*len = b - a;
}

static enum lp_status push(struct lp_outline_part **v, size_t *n, size_t *cap,
			   const struct lp_outline_part *p, struct lp_diag *d)
{
	if (*n == *cap) {
		struct lp_outline_part *g;
		*cap = *cap ? 2 * *cap : 32;
		if (!(g = lp_mem_realloc(LP_MEM_SCRATCH, *v, *cap * sizeof(**v), d)))
			return LP_E_NOMEM;
		*v = g;
	}
	(*v)[(*n)++] = *p;
	return LP_OK;
}

enum lp_status lp_outline_parts(const char *text, size_t len, struct lp_outline_part **parts,
				size_t *n_parts, struct lp_diag *d)
{
	struct line *v = NULL;
	struct lp_outline_part *out = NULL, p = { 0 };
	size_t n = 0, n_out = 0, cap = 0, term_indent = 0, para_indent = 0, base;
	int in_entry = 0, numbered = 0, section = 0, lv;
	enum lp_status st;

	*parts = NULL;
	*n_parts = 0;
	if (!len)
		return LP_OK;
	if ((st = lines_of(text, len, &v, &n, d)))
		return lp_diag_set(d, st, NULL, 0, 0, "out of memory reading the outline");
	base = running_indent(v, n);
	for (size_t k = 0; k < n && !st; k++) {
		const struct line *l = &v[k];
		struct lp_outline_part next = { .off = l->off, .body = l->off };
		size_t after = k + 1 < n ? v[k + 1].off : len; /* the next line */
		int start = 0, para = !k || blank_line(&v[k - 1]);
		if (blank_line(l))
			continue;
		if ((lv = heading(text, v, n, k, numbered + 1 < LP_OUTLINE_MAX_LEVEL ?
							  numbered + 1 : LP_OUTLINE_MAX_LEVEL))) {
			next.heading = 1;
			next.level = section = lv - 1;
			if (lv > 1 && numbered_title(text, l))
				numbered = lv - 1;
			next.body = k + 2 < n && underline(text, &v[k + 1]) ? v[k + 2].off : after;
			in_entry = 0;
			start = 1;
		} else if (in_entry && !para && l->indent == term_indent && term(text, v, n, k, base)) {
			continue; /* the entry's other name, under its first */
		} else if (term(text, v, n, k, base) && !(in_entry && l->indent > term_indent)) {
			term_text(text, l, &next.term_off, &next.term_len);
			next.body = after;
			next.level = section < LP_OUTLINE_MAX_LEVEL ? section + 1 : section;
			in_entry = 1;
			term_indent = l->indent;
			start = 1;
		} else if (in_entry && l->indent > term_indent &&
			   !(para && l->indent <= para_indent)) {
			continue;
		} else if (in_entry) {
			in_entry = 0;
			start = para;
			next.level = section;
		} else if (para && l->indent > para_indent && l->indent <= 8 &&
			   lp_match_count_words(text + l->a, l->b - l->a) >= 5 &&
			   ((text[l->a] | 0x20) >= 'a' && (text[l->a] | 0x20) <= 'z')) {
			para_indent = l->indent; /* where the text's paragraphs start */
		}
		if (!start)
			continue;
		if (next.off > p.off) { /* close the part before */
			p.len = next.off - p.off;
			st = push(&out, &n_out, &cap, &p, d);
		}
		p = next;
	}
	p.len = len - p.off;
	if (!st)
		st = push(&out, &n_out, &cap, &p, d);
	lp_mem_free(v);
	if (st) {
		lp_mem_free(out);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory reading the outline");
	}
	*parts = out;
	*n_parts = n_out;
	return LP_OK;
}

size_t lp_outline_find(const struct lp_outline_part *parts, size_t n, size_t off)
{
	size_t lo = 0, hi = n;

	if (!n)
		return 0;
	while (hi - lo > 1) { /* parts[lo].off <= off < parts[hi].off */
		size_t mid = lo + (hi - lo) / 2;
		if (parts[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
