#include "core/utf8.h"

#include <utf8proc.h>

int lp_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	uint32_t c = s[0], min;
	int n;

	*cp = 0xFFFD;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2; c &= 0x1F; min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3; c &= 0x0F; min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4; c &= 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (len < (size_t)n)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return n;
}

int lp_utf8_encode(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xC0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp >= 0xD800 && cp <= 0xDFFF)
		return 0;
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xE0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	if (cp <= 0x10FFFF) {
		out[0] = (unsigned char)(0xF0 | (cp >> 18));
		out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		out[3] = (unsigned char)(0x80 | (cp & 0x3F));
		return 4;
	}
	return 0;
}

size_t lp_utf8_find_invalid(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint32_t cp;
		int n;
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		n = lp_utf8_decode(s + i, len - i, &cp);
		if (!n)
			return i;
		i += (size_t)n;
	}
	return len;
}

size_t lp_utf8_count(const unsigned char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += (s[i] & 0xC0) != 0x80;
	return n;
}

int lp_utf8_is_cjk(uint32_t cp)
{
	return (cp >= 0x4E00 && cp <= 0x9FFF) ||   /* CJK unified ideographs */
	       (cp >= 0x3400 && cp <= 0x4DBF) ||   /* extension A */
	       (cp >= 0x20000 && cp <= 0x2FA1F) || /* extensions B-F, compat supplement */
	       (cp >= 0xF900 && cp <= 0xFAFF) ||   /* compatibility ideographs */
	       (cp >= 0x3000 && cp <= 0x30FF) ||   /* CJK punctuation, hiragana, katakana */
	       (cp >= 0xAC00 && cp <= 0xD7AF) ||   /* hangul syllables */
	       (cp >= 0xFF00 && cp <= 0xFFEF);     /* halfwidth and fullwidth forms */
}

int lp_utf8_is_alnum(uint32_t cp)
{
	utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);

	return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
	       (c >= UTF8PROC_CATEGORY_MN && c <= UTF8PROC_CATEGORY_ME) ||
	       (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

int lp_utf8_is_space(uint32_t cp)
{
	if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0x2028 || cp == 0x2029)
		return 1;
	return utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_ZS;
}

uint32_t lp_utf8_tolower(uint32_t cp)
{
	return (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp);
}
