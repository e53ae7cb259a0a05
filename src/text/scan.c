/*
 * scan.c - what a word is (scan.h).
 */
#include "text/scan.h"

#include "core/utf8.h"

static int is_ascii_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

enum lp_scan_class lp_scan_class_of(uint32_t cp)
{
	if (lp_utf8_is_alnum(cp))
		return lp_utf8_is_cjk(cp) ? LP_SCAN_CJK : LP_SCAN_WORD;
	return lp_utf8_is_space(cp) ? LP_SCAN_SPACE : LP_SCAN_OTHER;
}

size_t lp_scan_char(const char *text, size_t len, size_t i, unsigned flags, uint32_t *cp,
		    enum lp_scan_class *cls)
{
	unsigned char c = (unsigned char)text[i];
	int n;

	if (c < 0x80) {
		/* most text is mostly ASCII: no decoding, no table */
		*cp = c;
		*cls = is_ascii_word(c)                     ? LP_SCAN_WORD
		       : c == ' ' || (c >= 0x09 && c <= 0x0D) ? LP_SCAN_SPACE
							    : LP_SCAN_OTHER;
		return 1;
	}
	n = lp_utf8_decode((const unsigned char *)text + i, len - i, cp);
	if (n <= 0) {
		*cp = 0xFFFD;
		*cls = LP_SCAN_OTHER;
		return 1;
	}
	if ((flags & LP_SCAN_FOLD_WIDTH) && *cp >= 0xFF01 && *cp <= 0xFF5E)
		*cp -= 0xFEE0; /* fullwidth ASCII variant */
	*cls = lp_scan_class_of(*cp);
	return (size_t)n;
}

/* Can the connector `c`, after the word character `prev` and before the
 * word character `next`, stay inside a word (LP_SCAN_JOIN)? */
static int joins(uint32_t prev, uint32_t c, uint32_t next)
{
	switch (c) {
	case '_':
	case '-':
	case '.':
	case '\'':
	case 0x2019: /* right single quotation mark used as apostrophe */
		return 1;
	case ',':
		return prev >= '0' && prev <= '9' && next >= '0' && next <= '9';
	default:
		return 0;
	}
}

size_t lp_scan_word_end(const char *text, size_t len, size_t i, unsigned flags)
{
	size_t start = i, n;
	uint32_t prev = 0, cp, next;
	enum lp_scan_class cls, next_cls;

	while (i < len) {
		if (is_ascii_word((unsigned char)text[i])) {
			prev = (unsigned char)text[i++];
			continue;
		}
		n = lp_scan_char(text, len, i, flags, &cp, &cls);
		if (cls == LP_SCAN_WORD) {
			prev = cp;
			i += n;
			continue;
		}
		if (!(flags & LP_SCAN_JOIN) || i == start || i + n >= len)
			break;
		lp_scan_char(text, len, i + n, flags, &next, &next_cls);
		if (next_cls != LP_SCAN_WORD || !joins(prev, cp, next))
			break;
		prev = cp;
		i += n;
	}
	return i;
}
