/*
 * alone.h - whether a sentence taken out of its document still stands
 * alone, as every sentence of an extractive summary must.
 *
 * Two ways a sentence leans on what is around it, both read from the
 * sentence alone:
 *
 *  - a lead-in: it points at what comes after it ("... by the following:",
 *    "The following packages caught my eye.", "as follows", "listed
 *    below", "如下", "以下", "下列"), unless its list comes in the same
 *    sentence (a colon and at least three words, or four Han characters,
 *    after it);
 *  - a pronoun opener: it starts with a pronoun as its subject, which
 *    points back at a sentence the summary may not hold: "It", "They",
 *    "He", "She", "Its", "Their" always; "This", "These", "Those", "That"
 *    when a verb follows ("This is ...", not "This option ..."); Chinese
 *    它, 它们, 他们, 这些, 此外, 这, 此, 其.
 *
 * These are the rules of the stand-alone check of scripts/quality_metrics.py
 * (its fragment and glued-heading checks aside), so that what the
 * summarizer refuses is what the evaluation would count against it.
 */
#ifndef LP_TEXT_ALONE_H
#define LP_TEXT_ALONE_H

#include <stddef.h>

enum lp_alone {
	LP_ALONE_OK,
	LP_ALONE_LEAD_IN, /* points at what follows it */
	LP_ALONE_PRONOUN  /* opens with a pronoun as subject */
};

/* Whether the sentence s[0..len) (UTF-8) stands alone, and if not, why. */
enum lp_alone lp_alone_check(const char *s, size_t len);

#endif
