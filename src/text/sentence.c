#include "text/sentence.h"

#include <stdint.h>
#include <string.h>
#include <utf8proc.h>

#include "core/utf8.h"

/*
 * Every look-ahead or look-behind below is bounded (by white space already
 * scanned once, or by ABBREV_MAX bytes), so the scan stays linear even on a
 * single 50 MB line.
 */
#define ABBREV_MAX 16

/* Words that end in a full stop without ending the sentence, even before a
 * capital ("Dr. Smith", "Fig. 3"). Lower case, without the dot. Words that
 * often close a sentence ("etc.", "Inc.") are deliberately absent. */
static const char *const abbreviations[] = {
	"mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "mt", "rev", "gen",
	"col", "lt", "sgt", "capt", "cmdr", "hon", "pres", "gov", "sen", "rep",
	"vs", "fig", "figs", "eq", "eqs", "no", "nos", "vol", "vols", "pp",
	"ch", "sec", "art", "cf", "approx", "dept", "est", "ca", "jan", "feb",
	"mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
	NULL
};

/* Decode at text[i]; an invalid byte counts as one code point U+FFFD so a
 * damaged input never stalls the scan. Returns the bytes consumed (>= 1). */
static size_t decode_at(const char *text, size_t len, size_t i, uint32_t *cp)
{
	unsigned char c = (unsigned char)text[i];
	int n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	n = lp_utf8_decode((const unsigned char *)text + i, len - i, cp);
	return n ? (size_t)n : 1;
}

static int is_space_at(const char *text, size_t len, size_t i, size_t *n)
{
	uint32_t cp;

	*n = decode_at(text, len, i, &cp);
	return lp_utf8_is_space(cp);
}

static size_t skip_space(const char *text, size_t len, size_t i)
{
	size_t n;

	while (i < len && is_space_at(text, len, i, &n))
		i += n;
	return i;
}

/* End of text[start, end) without its trailing white space; start must be
 * a non-space character, so the result stays past it. */
static size_t trim_end(const char *text, size_t len, size_t start, size_t end)
{
	while (end > start) {
		size_t b = end - 1, n;
		while (b > start && ((unsigned char)text[b] & 0xC0) == 0x80)
			b--;
		if (!is_space_at(text, len, b, &n) || b + n != end)
			break;
		end = b;
	}
	return end;
}

/* Terminators that need no space after them: 。！？； and the half-width
 * ideographic full stop. */
static int is_cjk_terminator(uint32_t cp)
{
	return cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F || cp == 0xFF1B || cp == 0xFF61;
}

static int is_terminator(uint32_t cp)
{
	return cp == '.' || cp == '!' || cp == '?' || cp == 0x2026 /* … */ ||
	       cp == 0x203C /* ‼ */ || is_cjk_terminator(cp);
}

/* Closing quotes and brackets that belong to the sentence they follow. */
static int is_closer(uint32_t cp)
{
	switch (cp) {
	case '"': case '\'': case ')': case ']': case '}':
	case 0x2019: case 0x201D: case 0x00BB: case 0x203A: /* ’ ” » › */
	case 0x300D: case 0x300F: case 0x3011: case 0x300B: /* 」 』 】 》 */
	case 0x3009: case 0x3015: case 0x3017: case 0x3019: /* 〉 〕 〗 〙 */
	case 0xFF09: case 0xFF3D: case 0xFF5D: case 0xFF02: /* ） ］ ｝ ＂ */
	case 0xFF07: case 0xFF63: /* ＇ ｣ */
		return 1;
	}
	return 0;
}

/* Past a run of terminators and then of closers, starting at i. */
static size_t skip_terminal_run(const char *text, size_t len, size_t i)
{
	uint32_t cp;
	size_t n;

	while (i < len && (n = decode_at(text, len, i, &cp)) && is_terminator(cp))
		i += n;
	while (i < len && (n = decode_at(text, len, i, &cp)) && is_closer(cp))
		i += n;
	return i;
}

/* A line break at text[i] followed by a line holding only white space. */
static int blank_line_after(const char *text, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		char c = text[i];
		if (c == '\n')
			return 1;
		if (c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f')
			return 0;
	}
	return 0;
}

static int is_lower_letter(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= 'a' && cp <= 'z';
	return utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_LL;
}

/* The word ending at the full stop text[dot] is an abbreviation, an
 * initial ("J. Smith") or a dotted acronym ("e.g.", "U.S.A."). The price:
 * a sentence that really ends in "U.S.A." or an initial runs on into the
 * next one, which costs a chunker less than cutting "J. | Smith" would. */
static int is_abbreviation(const char *text, size_t start, size_t dot)
{
	size_t b = dot, wlen;
	int has_dot = 0;
	char w[ABBREV_MAX + 1];

	while (b > start && dot - b < ABBREV_MAX) {
		unsigned char c = (unsigned char)text[b - 1];
		if (c == '.')
			has_dot = 1;
		else if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
			break;
		b--;
	}
	if (b > start && (unsigned char)text[b - 1] >= 0x80)
		return 0; /* part of a longer non-ASCII word */
	if (b > start && dot - b >= ABBREV_MAX)
		return 0;
	wlen = dot - b;
	if (wlen == 0 || text[b] == '.')
		return 0;
	if (has_dot || wlen == 1)
		return 1;
	if (wlen > 6) /* longer than any listed abbreviation */
		return 0;
	for (size_t k = 0; k < wlen; k++)
		w[k] = (char)(text[b + k] | 0x20);
	w[wlen] = '\0';
	for (size_t k = 0; abbreviations[k]; k++)
		if (w[0] == abbreviations[k][0] && !strcmp(w, abbreviations[k]))
			return 1;
	return 0;
}

/*
 * Does the sentence end after the terminal run text[t, j)? Yes at the end
 * of the text, at a blank line, or before white space and a character that
 * is not a lower-case letter (unless a lone full stop closes an
 * abbreviation); also directly before a CJK character ("OK.好的").
 */
static int ends_after(const char *text, size_t len, size_t start, size_t t, size_t j)
{
	uint32_t cp;
	size_t k, n;

	if (j >= len)
		return 1;
	decode_at(text, len, j, &cp);
	if (!lp_utf8_is_space(cp))
		return lp_utf8_is_cjk(cp) && !is_terminator(cp);
	for (k = j; k < len && is_space_at(text, len, k, &n); k += n)
		if (text[k] == '\n' && blank_line_after(text, len, k))
			return 1;
	if (k >= len)
		return 1;
	decode_at(text, len, k, &cp);
	if (is_lower_letter(cp))
		return 0;
	if (text[t] == '.' && j - t >= 1 && text[t + 1] != '.' &&
	    is_abbreviation(text, start, t))
		return 0;
	return 1;
}

int lp_sentence_next(const char *text, size_t len, size_t *pos, struct lp_span *s)
{
	size_t i = skip_space(text, len, *pos), start = i, end = len;

	if (i >= len) {
		*pos = len;
		return 0;
	}
	while (i < len) {
		uint32_t cp;
		size_t n, j;
		unsigned char c = (unsigned char)text[i];

		/* Most bytes are ASCII that can neither end a sentence nor
		 * start a blank line: skip them without decoding. */
		if (c < 0x80 && c != '.' && c != '!' && c != '?' && c != '\n') {
			i++;
			continue;
		}
		n = decode_at(text, len, i, &cp);

		if (cp == '\n' && blank_line_after(text, len, i)) {
			end = i;
			break;
		}
		if (!is_terminator(cp)) {
			i += n;
			continue;
		}
		j = skip_terminal_run(text, len, i);
		if (is_cjk_terminator(cp) || ends_after(text, len, start, i, j)) {
			end = j;
			break;
		}
		i = j;
	}
	end = trim_end(text, len, start, end);
	s->off = start;
	s->len = end - start;
	*pos = end;
	return 1;
}

int lp_paragraph_next(const char *text, size_t len, size_t *pos, struct lp_span *p)
{
	size_t i = skip_space(text, len, *pos), start = i, end = len;
	const char *nl;

	if (i >= len) {
		*pos = len;
		return 0;
	}
	while ((nl = memchr(text + i, '\n', len - i))) {
		i = (size_t)(nl - text);
		if (blank_line_after(text, len, i)) {
			end = i;
			break;
		}
		i++;
	}
	end = trim_end(text, len, start, end);
	p->off = start;
	p->len = end - start;
	*pos = end;
	return 1;
}

size_t lp_sentence_mark_before(const char *s, size_t i)
{
	uint32_t cp;

	if (!i)
		return 0;
	if (s[i - 1] == '.' || s[i - 1] == '!' || s[i - 1] == '?')
		return 1;
	if (i >= 3 && lp_utf8_decode((const unsigned char *)s + i - 3, 3, &cp) == 3 &&
	    is_cjk_terminator(cp))
		return 3;
	return 0;
}

static int is_ascii_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

size_t lp_sentence_end_at(const char *s, size_t len, size_t i)
{
	size_t n = lp_sentence_mark_before(s, i);

	if (n == 1 && i < len && !is_ascii_space(s[i]))
		return 0;
	return n;
}

/* Start of the code point that ends right before s[i] (0 < i). */
static size_t cp_start_before(const char *s, size_t i)
{
	size_t b = i - 1;

	while (b > 0 && i - b < 4 && ((unsigned char)s[b] & 0xC0) == 0x80)
		b--;
	return b;
}

size_t lp_sentence_trim_closers(const char *s, size_t len)
{
	uint32_t cp;
	size_t b;

	while (len) {
		if (is_ascii_space(s[len - 1])) {
			len--;
			continue;
		}
		b = cp_start_before(s, len);
		if (decode_at(s, len, b, &cp) != len - b || !is_closer(cp))
			break;
		len = b;
	}
	return len;
}
