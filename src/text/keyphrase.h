/*
 * keyphrase.h - the phrases a faithful summary of a text should keep.
 *
 * The verify stage checks that the keyphrases of the source survive into
 * the output; when the user does not list them, they are extracted here.
 * Candidates come from five detectors over the tokens of text/match.h:
 *
 *  - RAKE phrases: runs of at most 4 content words between stop words,
 *    punctuation, numbers, identifiers and paragraph breaks. A word's
 *    weight is its degree (the lengths of the phrases it occurs in, summed)
 *    over its frequency; a phrase's is the sum of its words';
 *  - numbers with their unit: "128 tokens", "3.5 GiB", "50%";
 *  - identifiers: CAPS words (HISTFILE, UTF8), code-like words
 *    (snake_case, camelCase) and long options (--max-words); the unit of
 *    a number is used up by the number ("3.5 GiB", not "GiB");
 *  - quoted terms of 1 to 6 words on one line: "...", '...', `...`,
 *    “...”, ‘...’, «...», 「...」, 『...』;
 *  - in CJK text, character n-grams of 2 to 4 letters that occur at least
 *    twice, do not cross punctuation or spaces, and neither start nor
 *    end with a function character (的, 了, 是, ...).
 *
 * A candidate scores log2(1 + frequency) times the weight of its kind
 * (RAKE: as above, halved for a phrase seen once; numbers 3; quoted terms and identifiers 4; a CJK n-gram
 * n - 1/2), taking the best kind when several detectors found the same
 * phrase. The logarithm keeps a generic word seen thousands of times from
 * burying a specific term seen fifty times. Candidates are
 * ranked by score (ties: first occurrence first) and deduplicated
 * case-insensitively: one whose normal form contains, or is contained in,
 * an already chosen one is skipped ("bash shell" hides "shell").
 *
 * List-like lines name parts of a document rather than say what it says,
 * and a table of contents repeats every heading: so an occurrence counts
 * for nothing in the score when it is on a line with a dotted leader
 * ("Intro ....... 3"), an Info menu or index entry ("* name: Title."), an
 * Info node line ("Node: X, Next: Y"), a short line that starts with a
 * section number ("2.2. Basic package management", "Table 2.6. ..."), the
 * line above an underline ("*****", "====="), or in the title a
 * cross-reference points at ("see Section 1.1.6, “Virtual consoles”",
 * "*note Bash Builtins::"). A candidate's frequency of each kind is scaled
 * by the share of its occurrences outside such lines; "see", "note",
 * "section", "chapter" and "appendix" also end a RAKE phrase.
 *
 * Memory is bounded whatever the input size: at most
 * LP_KEYPHRASE_MAX_CANDIDATES distinct phrases (and as many distinct words)
 * are tracked; once the table is full, new phrases are ignored while known
 * ones keep counting. Time is linear in the text plus a sort of the table.
 */
#ifndef LP_TEXT_KEYPHRASE_H
#define LP_TEXT_KEYPHRASE_H

#include <stddef.h>

#include "core/arena.h"
#include "core/status.h"
#include "text/sentence.h"

#define LP_KEYPHRASE_MAX_CANDIDATES 65536

/*
 * Extract up to `n` keyphrases from text[0..len), best first. Each phrase
 * is its first occurrence in the text with white space collapsed (case
 * kept). On LP_OK, *out is an array of *n_out strings, all in `arena`
 * (*out is NULL when n_out is 0). Returns LP_E_NOMEM with `d` filled when
 * memory or the budget runs out. Tolerates invalid UTF-8.
 */
enum lp_status lp_keyphrase_extract(const char *text, size_t len, size_t n,
				    struct lp_arena *arena, const char ***out,
				    size_t *n_out, struct lp_diag *d);

/*
 * The names text[0..len) repeats: up to `n` of its paths, options,
 * identifiers (text/ground.h's PATH, OPTION, IDENT), one-word quoted
 * strings ('wait', “sudo”) and commands cited with a manual section
 * ("journalctl(1)": the name), that occur at least twice (case aside, in
 * any of those forms), most frequent first (ties: first seen). Each is its
 * first occurrence, without quotes. A manual says what it is about in
 * prose, but names the files, options and commands a reader acts on in
 * its tables and examples as well: a name the text keeps coming back to
 * is one a summary should keep, even when no RAKE phrase holds it. On
 * LP_OK, *out is an array of *n_out strings in `arena`. Returns
 * LP_E_NOMEM with `d` filled when memory or the budget runs out.
 */
#define LP_KEYPHRASE_TERMS_MAX 512 /* distinct names tracked */
enum lp_status lp_keyphrase_terms(const char *text, size_t len, size_t n,
				  struct lp_arena *arena, const char ***out, size_t *n_out,
				  struct lp_diag *d);

/* Told that the scan is done with text[off, off + len) (it reads those
 * bytes again only to copy out the few phrases chosen). */
typedef void (*lp_keyphrase_done_fn)(void *ctx, size_t off, size_t len);

/*
 * Same over the pieces text[spans[i].off, + spans[i].len) of a larger text,
 * in order, as if each stood alone (no phrase, quote or number runs from
 * one into the next), without copying them together. With `parts` > 1
 * the phrases are a document's topics rather than its terms: the pieces,
 * end to end, are cut into that many equal parts, and a phrase's score is
 * multiplied by the share of the parts it occurs in; a one-word phrase
 * that is mostly a lower-case RAKE word (not an identifier, not quoted,
 * capitalised in under 4 of 5 occurrences: "file", not "Debian") counts
 * a quarter, since a common word spreads everywhere without being what
 * the text is about. Phrases are taken
 * from the pieces, so the text outside them is never read. `done` (may be
 * NULL) is called after each piece, every LP_KEYPHRASE_STEP bytes within a
 * long one, and for the occurrence of each chosen phrase once it is copied
 * out, so a caller can release what was read (a mapped document's pages)
 * and keep the resident text bounded.
 */
#define LP_KEYPHRASE_STEP ((size_t)256 << 10)
enum lp_status lp_keyphrase_extract_spans(const char *text, const struct lp_span *spans,
					  size_t n_spans, size_t parts, size_t n,
					  struct lp_arena *arena,
					  const char ***out, size_t *n_out,
					  lp_keyphrase_done_fn done, void *ctx,
					  struct lp_diag *d);

#endif
