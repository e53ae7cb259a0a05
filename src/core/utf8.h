/*
 * utf8.h - small UTF-8 helpers used by the text, retrieval and model code.
 *
 * Character classes (letters, digits, case) come from utf8proc; this module
 * only adds strict decoding (no overlongs, no surrogates, nothing past
 * U+10FFFF) and the CJK ranges the splitter and tokenisers care about.
 */
#ifndef LP_UTF8_H
#define LP_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* What a reader does with an invalid sequence: stop with an error that
 * names its offset, or replace it by U+FFFD (a pipeline's
 * input.invalid_utf8, text/document.h). */
enum lp_invalid_utf8 { LP_UTF8_ERROR, LP_UTF8_REPLACE };

/*
 * Decode one code point at s[0..len). Returns the number of bytes (1-4) and
 * stores the code point, or returns 0 for an invalid or truncated sequence
 * (then *cp is U+FFFD). len must be > 0.
 */
int lp_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* Encode `cp` into out (4 bytes of room); returns bytes written (1-4),
 * or 0 for a value that is not a scalar value. */
int lp_utf8_encode(uint32_t cp, unsigned char *out);

/* Offset of the first invalid byte in s[0..len), or len if all is valid. */
size_t lp_utf8_find_invalid(const unsigned char *s, size_t len);

/* Number of code points in a valid UTF-8 string. */
size_t lp_utf8_count(const unsigned char *s, size_t len);

/* Han ideographs, kana, hangul and CJK punctuation/fullwidth forms. */
int lp_utf8_is_cjk(uint32_t cp);
/* Unicode letter (L*), mark (M*) or number (N*) per utf8proc. */
int lp_utf8_is_alnum(uint32_t cp);
/* Unicode white space (Zs, \t \n \v \f \r, U+0085, U+2028/9). */
int lp_utf8_is_space(uint32_t cp);
/* Simple lower-case mapping per utf8proc. */
uint32_t lp_utf8_tolower(uint32_t cp);

#endif
