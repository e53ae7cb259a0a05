/*
 * choose.h - the sentences that stand for a chunk of a manual, chosen
 * without a model (the summarize stage's `map: compress`).
 *
 * The chunk is cut into parts (text/outline.h: sections and definition
 * entries) and every part that holds an eligible sentence (prose,
 * lp_points_is_prose; no meta-talk with drop_meta) offers its lead, the
 * first eligible sentence: a manual's section opens with what it is
 * about, an entry with what the term does, while its most central
 * sentences are the boilerplate every entry repeats ("The return status
 * is zero unless ..."). Taken in this order:
 *
 *  - with `lead` (the document's first chunk) its opening ranks first: the
 *    first of its first sentences that says what its subject is ("Rsync
 *    is a fast ... copying tool."), else the first lead;
 *  - when the parts are no more than `want`, the lead of each; else the
 *    parts are grouped in runs of consecutive parts of about equal prose,
 *    `want` runs, and each run gives the lead that holds the most
 *    keys of the chunk not yet held (ties: the more central), with its
 *    next sentence when that one names a key neither holds; the keys are
 *    keyphrases (the summarize stage gives the document's topics,
 *    stages/topics.h) and the names the chunk repeats (lp_choose_keys);
 *  - the rest, one at a time, to the part with the most prose per
 *    sentence taken from it: its sentence that holds the most keys not
 *    yet held, ties to the more central.
 *
 * A sentence that nearly repeats one taken (lp_points_similar) is
 * skipped, and so is a lead-in without its list (text/alone.h: "The
 * following packages caught my eyes."), which says nothing out of place.
 * A sentence that opens with a pronoun as its subject ("It also reads
 * ...", "This means ...") is taken only as its lead's next sentence,
 * where what it stands for comes just before. A sentence is cut off the
 * title or term line of its part when
 * it runs over it, and past a one-word label alone on the line above it
 * ("Tip", "Note"). A sentence of a definition entry comes with its term,
 * so that the caller can say what it defines ("bg: Resume each suspended
 * job ...").
 *
 * Nothing is read but the text; nothing is kept after a call but what it
 * returns.
 */
#ifndef LP_TEXT_CHOOSE_H
#define LP_TEXT_CHOOSE_H

#include <stddef.h>

#include "core/arena.h"
#include "core/status.h"

#define LP_CHOOSE_MAX_KEYS 32   /* keys tracked per sentence (a bit mask) */
#define LP_CHOOSE_KEYPHRASES 16 /* keyphrases among them, at most */

struct lp_choose_opts {
	size_t want;              /* sentences to take, at most */
	int lead;                 /* the first part's lead is taken first */
	int drop_meta;            /* meta-talk (lp_points_is_meta) is not eligible */
	const char *const *keys;  /* the chunk's keys, best first; the first
				   * LP_CHOOSE_MAX_KEYS are read */
	size_t n_keys;
	size_t first_name;        /* keys[first_name..] are names: a lead takes
				   * its next sentence when that one names one
				   * (>= n_keys: never) */
	const char *const *must;  /* phrases to keep: see lp_choose_sentences */
	size_t n_must;            /* the first LP_CHOOSE_MAX_KEYS are read */
};

/* One chosen sentence. */
struct lp_choice {
	size_t off, len;           /* the sentence: text[off, off + len) */
	size_t term_off, term_len; /* the term its part defines; term_len 0: none */
	size_t rank;               /* its place in the order chosen, 0: first */
};

/*
 * Choose up to o->want sentences of text[0..len) (see above), then, for
 * each of o->must[0..n_must) that none of them holds, the first eligible
 * sentence that holds it (beyond want, and first in the order chosen: a
 * verification asked for it). On LP_OK,
 * *out is an array of *n choices in document order (tracked scratch: the
 * caller frees it with lp_mem_free; NULL when *n is 0). Returns LP_E_NOMEM
 * with `d` filled when memory or the budget runs out.
 */
enum lp_status lp_choose_sentences(const char *text, size_t len, const struct lp_choose_opts *o,
				   struct lp_choice **out, size_t *n, struct lp_diag *d);

/*
 * The keys to choose by: the chunk's keyphrases kp[0..n_kp) (at most
 * LP_CHOOSE_KEYPHRASES), then the names text[0..len) repeats
 * (lp_keyphrase_terms) that no keyphrase is (case aside), up to
 * LP_CHOOSE_MAX_KEYS in all. On LP_OK, *keys is an array of *n_keys
 * strings in `arena` and *first_name the index of the first name.
 * Returns LP_E_NOMEM with `d` filled when memory or the budget runs out.
 */
enum lp_status lp_choose_keys(const char *text, size_t len, const char *const *kp, size_t n_kp,
			      struct lp_arena *arena, const char ***keys, size_t *n_keys,
			      size_t *first_name, struct lp_diag *d);

#endif
