/*
 * term.h - the shape of a definition term in plain text: the one rule
 * that the plain-text reader (doc/textread.c, which turns a rendered
 * manual into DEF_TERM and DEF_BODY blocks) and the outline of a chunk
 * (text/outline.c, which finds the entries a summary names) share, so
 * that both call the same line a term.
 *
 * A term is a name, not a sentence: at most LP_TERM_WORDS words and
 * LP_TERM_BYTES bytes ("--verbose, -v", "'PROMPT_COMMAND'", "bg
 * [JOBSPEC ...]"), and it does not end as a sentence or a clause does.
 * Each caller adds what its own input needs (the reader: the body deeper
 * below it; the outline: no list, code or CJK marks) and counts words its
 * own way; the limits and the end marks are these.
 */
#ifndef LP_DOC_TERM_H
#define LP_DOC_TERM_H

#include <stddef.h>

#define LP_TERM_WORDS 5
#define LP_TERM_BYTES 48

/* 1 when a line ending with `c` ends a sentence or a clause (. ! ? : ; ,),
 * as no term and no title does; else 0. */
int lp_term_ends_clause(char c);

/* 1 when s[0..n) ends with the CJK full stop or colon (。 ：), which end
 * a sentence or a clause as lp_term_ends_clause's marks do; else 0. */
int lp_term_ends_cjk_clause(const char *s, size_t n);

/* 1 when s[0..n), a line's text without the white space around it, of
 * `words` words (the caller's count), has a term's shape: 1 to
 * LP_TERM_WORDS words, 1 to LP_TERM_BYTES bytes, no clause end; else 0. */
int lp_term_fits(const char *s, size_t n, size_t words);

#endif
