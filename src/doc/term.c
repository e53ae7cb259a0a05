/*
 * term.c - the shape of a definition term (term.h).
 */
#include "doc/term.h"

#include <string.h>

int lp_term_ends_clause(char c)
{
	return c == '.' || c == '!' || c == '?' || c == ':' || c == ';' || c == ',';
}

int lp_term_ends_cjk_clause(const char *s, size_t n)
{
	return n >= 3 && (!memcmp(s + n - 3, "\xe3\x80\x82", 3) ||  /* 。 */
			  !memcmp(s + n - 3, "\xef\xbc\x9a", 3));   /* ： */
}

int lp_term_fits(const char *s, size_t n, size_t words)
{
	return n && n <= LP_TERM_BYTES && words >= 1 && words <= LP_TERM_WORDS &&
	       !lp_term_ends_clause(s[n - 1]);
}
