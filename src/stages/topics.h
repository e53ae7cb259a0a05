/*
 * topics.h - what a document is about, at the scale of its summary.
 *
 * A summary of a few hundred words can keep a document's topics, not the
 * terms of one of its sections: so the topics are keyphrases
 * (text/keyphrase.h) weighed by their spread, the share of equal parts
 * of the text (about 1 KiB each, at most TOPICS_MAX_PARTS) they occur in.
 * A term one table or one glossary entry repeats ("double quotation
 * marks", "Multipurpose Internet Mail Extensions") scores low, one the
 * whole text comes back to ("Debian system", "job control") high; and
 * one common word ("file", "value") counts a quarter unless the text
 * writes it capitalised (a name: "Debian", "GNU").
 *
 * They are drawn from the prose of the document (code blocks and table
 * rows left out, doc/model.h): from the whole text while it is at most
 * TOPICS_MAX_SOURCE bytes, else from whole working-set chunks spread
 * evenly over it (every k-th), up to that size in all. The candidate
 * tables grow with the distinct phrases scanned, so a fixed amount keeps
 * the memory the same for any longer document; the chunks are read in
 * place and released from the resident set as the scan passes them.
 * Under on_oom: shrink, a scan that runs out of budget is tried again on
 * half as much text, down to TOPICS_MIN_SOURCE.
 *
 * The summarize stage chooses its sentences to cover them; the verify
 * stage checks that they survived. Same document, same topics: the first
 * n of a longer list are the list of n, so the list is kept on the doc and
 * the next stage asking for as many or fewer, from the same text (the
 * whole document, or the same working set), reads it without a scan.
 */
#ifndef LP_STAGES_TOPICS_H
#define LP_STAGES_TOPICS_H

#include <stddef.h>

#include "core/status.h"
#include "stages/doc.h"

#define TOPICS_MAX_SOURCE (1u << 20)
#define TOPICS_MIN_SOURCE (16u << 10)
#define TOPICS_PART_BYTES 1024
#define TOPICS_MAX_PARTS 16

/* The parts to weigh spread by (lp_keyphrase_extract_spans) for `len`
 * bytes of text: one per TOPICS_PART_BYTES, at most TOPICS_MAX_PARTS. */
size_t lp_topic_parts(size_t len);

/*
 * Up to `n` topics of doc, best first (*out: strings in doc->arena, NULL
 * when *n_out is 0). Returns LP_E_NOMEM with `d` filled when the budget
 * runs out even on the least text.
 */
enum lp_status lp_doc_topics(struct lp_doc *doc, size_t n, const char ***out, size_t *n_out,
			     struct lp_diag *d);

#endif
