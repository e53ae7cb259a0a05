/*
 * verify_ground.h - the verify stage's grounding check (grounded: true) on
 * a run's output: which sentences hold numbers or identifiers that the
 * source does not (text/ground.h), and taking them out.
 *
 * The output is lp_doc_result; the source is the whole loaded document
 * (doc->src, before any truncate stage cut it; doc->text in tests that set
 * no document) read in one windowed pass whose pages are released behind
 * it, plus the question, which an answer may repeat.
 */
#ifndef LP_STAGES_VERIFY_GROUND_H
#define LP_STAGES_VERIFY_GROUND_H

#include <stddef.h>

#include "core/status.h"
#include "stages/doc.h"

/* Which sentences of the output checked are ungrounded. */
struct lp_verify_ground {
	unsigned char *bad; /* [n_sentences] 1: ungrounded (tracked memory) */
	size_t n_sentences;
};

/*
 * Check the output: fill doc->verify's grounding fields (grounded,
 * ground_tokens, ground_found, grounding_rate, ungrounded, n_ungrounded;
 * n_removed 0) and `g`. Returns LP_OK or LP_E_NOMEM (`d` filled). Release
 * `g` with lp_verify_ground_release in every case.
 */
enum lp_status lp_verify_ground_check(struct lp_doc *doc, struct lp_verify_ground *g,
				      struct lp_diag *d);

/*
 * Take the ungrounded sentences out of the output (doc->answer, else
 * doc->summary; the working set, being source text, is left as it is),
 * joining what is left with the white space kind that separated it (a
 * paragraph break, a line break or a space). Nothing is removed when
 * every sentence is ungrounded (an empty result helps no one; passed
 * stays false). Marks doc->verify.ungrounded[i].removed and n_removed.
 * Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_verify_ground_remove(struct lp_doc *doc, const struct lp_verify_ground *g,
				       struct lp_diag *d);

void lp_verify_ground_release(struct lp_verify_ground *g);

/*
 * A scan of the whole document (keyphrases, grounding) that releases the
 * pages behind it: pass lp_verify_source_done as the scan's "done with
 * this window" callback and a source pass { doc, 0 } as its context.
 */
struct lp_verify_source_pass {
	struct lp_doc *doc;
	size_t from; /* released up to here */
};
void lp_verify_source_done(void *ctx, size_t off, size_t len);

#endif
