/*
 * verify_levels.h - each level of a summary tree checked against its own
 * inputs (the verify stage's keyphrases.levels).
 *
 * The verify stage checks the result against the source; a tree loses
 * what it loses one level at a time. So, with levels: N, every summary of
 * the tree is checked against the texts it summarises: the N topics of
 * its inputs (keyphrases weighed by their spread, as stages/topics.h
 * weighs a document's; chunks for level 0, the summaries of the level
 * below above it) are looked for in it, and each level reports
 * how many of all its summaries' phrases it kept. A level that keeps
 * fewer than min_survival fails the verification, naming the level; the
 * trace gets an event per level.
 *
 * The inputs of level 0 are read in place (whole chunks, never copied
 * together), those above are the tree's own texts; the tables a scan
 * builds are freed before the next summary's, so the memory is that of
 * the largest input, not of the document.
 */
#ifndef LP_STAGES_VERIFY_LEVELS_H
#define LP_STAGES_VERIFY_LEVELS_H

#include <stddef.h>

#include "core/status.h"
#include "stages/doc.h"

/*
 * Check the `n` keyphrases of each summary's inputs against it, level by
 * level, into doc->verify.levels (doc->arena) and n_levels. Returns LP_OK,
 * or LP_E_NOMEM with `d` filled.
 */
enum lp_status lp_verify_levels(struct lp_doc *doc, size_t n, struct lp_diag *d);

#endif
