/*
 * lang.c - dominant script of a text; see lang.h for the rule.
 */
#include "text/lang.h"

#include <stdint.h>

#include "core/utf8.h"

static int is_latin_letter(uint32_t cp)
{
	return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
	       (cp >= 0xC0 && cp <= 0x24F && cp != 0xD7 && cp != 0xF7);
}

enum lp_script lp_lang_script(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = len < LP_LANG_SAMPLE_BYTES ? len : LP_LANG_SAMPLE_BYTES;
	size_t cjk = 0, latin = 0, other = 0;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		int k = lp_utf8_decode(s + i, n - i, &cp);
		if (k == 0) {
			i++;
			continue;
		}
		i += (size_t)k;
		if (is_latin_letter(cp))
			latin++;
		else if (lp_utf8_is_cjk(cp) && lp_utf8_is_alnum(cp))
			cjk++;
		else if (cp > 0x7F && lp_utf8_is_alnum(cp))
			other++;
	}
	size_t letters = cjk + latin + other;
	if (letters == 0)
		return LP_SCRIPT_LATIN;
	if (cjk * 5 >= letters)
		return LP_SCRIPT_HAN;
	if (other > latin)
		return LP_SCRIPT_OTHER;
	return LP_SCRIPT_LATIN;
}

const char *lp_lang_tag(enum lp_script script)
{
	switch (script) {
	case LP_SCRIPT_LATIN:
		return "en";
	case LP_SCRIPT_HAN:
		return "zh";
	case LP_SCRIPT_OTHER:
		break;
	}
	return "und";
}
