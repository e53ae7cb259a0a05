/*
 * outline.h - the parts of a plain-text document: sections and the
 * entries of definition lists.
 *
 * A reader who summarises a manual says a little about every part: what
 * the chapter is for, then one line per builtin, option or variable it
 * defines. Centrality alone does not do that: a reference section repeats
 * its boilerplate ("The return status is zero unless ...") in every entry,
 * so the most central sentences are the least informative ones. The
 * summarize stage takes the lead sentence of each part first (see
 * text/choose.h), and names the term an entry defines.
 *
 * A part starts at:
 *
 *  - a heading: a line above an underline ("=====", "*****", "-----",
 *    "....."), a short line that starts with a section number ("7.1 Job
 *    Control Basics", "3.2.1. The hostname") or with "Chapter N",
 *    "Appendix X", "第 4 章", or an Info node line ("File: bash.info,
 *    Node: ...");
 *  - a definition term: a line of a term's shape (doc/term.h: at most 5
 *    words and 48 bytes, no sentence or clause end, the rule the
 *    plain-text reader uses too) after a blank line (or after another
 *    term: "'--init-file FILE'" above "'--rcfile FILE'"), that does not
 *    open with a list, table, prompt or comment mark, holds no ; $ = {
 *    (code), and whose next non-blank line is indented deeper. The entry runs while lines stay deeper than the term, until
 *    a paragraph that starts no deeper than the text's own paragraphs do
 *    (the deepest start, up to 8 columns, of a paragraph of 5+ words
 *    outside any entry: Info indents them by 3, its entries by 5); a term
 *    inside it (an option of a builtin) stays part of it;
 *  - the paragraph that ends an entry (the section's text goes on,
 *    without a term).
 *
 * Nothing is allocated but the array of parts.
 */
#ifndef LP_TEXT_OUTLINE_H
#define LP_TEXT_OUTLINE_H

#include <stddef.h>

#include "core/status.h"

#define LP_OUTLINE_MAX_LEVEL 8

/* One part: text[off, off + len), parts in order, covering the text. */
struct lp_outline_part {
	size_t off, len;
	size_t term_off, term_len; /* the defined term without its quotes;
				    * term_len 0: a section, no term */
	int heading;               /* starts at a heading */
	int level;                 /* depth in the outline, 0 (a node line,
				    * the text before any title) to
				    * LP_OUTLINE_MAX_LEVEL: a numbered title
				    * has one level per number ("3.2.1." 3,
				    * "Chapter 3" 1), another title one more
				    * than the numbered title above it, an
				    * entry one more than its section, the
				    * text after an entry its section's */
	size_t body;               /* the first byte after the heading (and
				    * its underline) or the term line; off
				    * when neither */
};

/*
 * The parts of text[0..len). On LP_OK *parts is an array of *n_parts
 * (at least 1 when len > 0) allocated with the tracked allocator (tag
 * scratch); the caller frees it with lp_mem_free. Returns LP_E_NOMEM with
 * `d` filled when memory or the budget runs out.
 */
enum lp_status lp_outline_parts(const char *text, size_t len, struct lp_outline_part **parts,
				size_t *n_parts, struct lp_diag *d);

/* The index of the part of parts[0..n) that holds byte `off`
 * (the last part when off is past the end); 0 when n is 0. */
size_t lp_outline_find(const struct lp_outline_part *parts, size_t n, size_t off);

#endif
