/*
 * lang.h - which script a text is written in, so prompts and outputs can
 * follow the document's language.
 *
 * The detector counts letters, not bytes: each Han ideograph (and kana or
 * hangul) counts as one CJK letter, each Latin letter as one Latin letter,
 * digits, punctuation and white space count for nothing. A text is Han when
 * CJK letters are at least a fifth of its letters: a Chinese manual quotes
 * many commands and paths in Latin letters, and one Han character carries
 * about as much as a short English word, so a simple majority would call
 * such manuals English. Only the first LP_LANG_SAMPLE_BYTES are read, so the
 * cost is bounded on a mapped document of any size; invalid UTF-8 is skipped
 * byte by byte, never read past `len`.
 */
#ifndef LP_LANG_H
#define LP_LANG_H

#include <stddef.h>

/* Bytes of a text that lp_lang_script() looks at. */
#define LP_LANG_SAMPLE_BYTES ((size_t)64 * 1024)

enum lp_script {
	LP_SCRIPT_LATIN = 0, /* Latin letters dominate, or no letters at all */
	LP_SCRIPT_HAN,       /* Chinese (Han, with kana/hangul counted alike) */
	LP_SCRIPT_OTHER      /* letters of some other script dominate */
};

/* The dominant script of text[0..len). Never fails; an empty text or one
 * without letters is LP_SCRIPT_LATIN. */
enum lp_script lp_lang_script(const char *text, size_t len);

/* A short language tag for a script: "en", "zh" or "und". Static string. */
const char *lp_lang_tag(enum lp_script script);

#endif
