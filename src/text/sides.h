/*
 * sides.h - the sides of a sentence that sets things side by side, and
 * the shape of a name.
 *
 * "If no magic rule matches the data, use the default type of
 * application/octet-stream for binary data, or text/plain for textual
 * data." names two things, each with what it is for; "A value of
 * 'ignoreboth' is shorthand for 'ignorespace' and 'ignoredups'. A value
 * of 'erasedups' causes ..." two more. An answer that names one of them
 * is right only when its side is the one the question asks about (the
 * answer stage's check, stages/answer.c). The sides are the clauses of
 * the text cut after a ';', before ", or " and after a sentence's end
 * (a '.', '!' or '?', white space, then a capital or a quote mark).
 *
 * A name's shape is what makes a word a name rather than a word of
 * prose: an inner '/' ("text/plain"), a leading dash ("--delete"), an
 * '_' ("TAR_GNAME"), capitals alone ("EPOCHSECONDS"), a quote mark before
 * it ('erasedups'). Two names of one shape are things of one kind.
 *
 * Nothing here allocates; nothing outside the spans given is read.
 */
#ifndef LP_TEXT_SIDES_H
#define LP_TEXT_SIDES_H

#include <stddef.h>

#include "text/sentence.h"

enum {
	LP_SHAPE_SLASH = 1,  /* an inner '/' */
	LP_SHAPE_OPTION = 2, /* a leading dash, then more */
	LP_SHAPE_SNAKE = 4,  /* an '_' */
	LP_SHAPE_CAPS = 8,   /* two capitals or more, no small letter */
	LP_SHAPE_QUOTED = 16 /* a quote mark (' ` ") just before it */
};

/* The sides of s[0..n) (see above) into side[0..max) as spans, in order,
 * covering s; returns how many (0 for an empty text). */
size_t lp_sides_of(const char *s, size_t n, struct lp_span *side, size_t max);

/* The shape (LP_SHAPE_ bits) of the word s[at, at + n), s[at - 1] read
 * for a quote mark when at > 0; 0 for a plain word. */
unsigned lp_name_shape(const char *s, size_t at, size_t n);

/* 1 when s[0..n) holds a word sharing a bit of `shape`; words are cut at
 * white space, quote marks and , ; : ( ), a final '.' not counted. */
int lp_sides_holds_like(const char *s, size_t n, unsigned shape);

#endif
