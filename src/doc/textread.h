/*
 * textread.h - the plain-text reader: text that was rendered from
 * something else (a man page through `man X | col -b`, wrapped e-mail, a
 * PDF converted by another tool) read back into blocks.
 *
 * What it repairs and recognises, line by line (tabs count to the next
 * multiple of 8, as col(1) wrote them):
 *
 *  - words broken at a line end: "re‐" + "turned" on the next line. The
 *    hyphens: U+2010, U+2011, U+00AD (soft: always dropped), ASCII '-' and
 *    U+2212 (what man renders for \-). Whether the hyphen was the break's
 *    or the word's is decided with a word list built from the document
 *    itself: the joined form ("returned") and the hyphenated one ("x86-64")
 *    are counted where they occur whole; the more frequent wins. Neither
 *    seen: a hyphen after an option ("--no-" + "OPTION"), a digit, before
 *    an upper-case letter or a digit ("UTF-" + "8"), or U+2011 (a
 *    non-breaking hyphen) is kept, and the line break alone is removed;
 *    otherwise the word is joined.
 *  - headings: a short upper-case line at column 0 ("OPTIONS", level 1),
 *    a short capitalised line at column 3 above deeper text (a man page's
 *    subsection, level 2), or a title centred on a 72-column page, indented
 *    10 columns or more, of capitalised words ("GNU GENERAL PUBLIC
 *    LICENSE", "Preamble"; level 1), not the term of an entry.
 *  - definition lists: a short term line above deeper-indented lines
 *    ("--verbose, -v" / "   This option increases ..."), or a hanging term
 *    whose body starts on the same line at the column of the lines below
 *    ("-a     Mark variables ..."); following paragraphs deeper than the term
 *    are more of its body.
 *  - tables and option summaries: runs of lines whose cells (cut at gaps
 *    of two or more columns, or a tab) start at the same columns on every
 *    line ("--verbose, -v <tab> increase verbosity"; justified prose has
 *    gaps too, but not aligned from line to line), at least three of them
 *    or two that start with '-'; and ASCII tables drawn with '|' and
 *    '+---+' borders. Each row is a TABLE_ROW, so that no "sentence" runs
 *    through a whole summary; a word broken at a cell's line end is
 *    repaired as in prose. In a grid (a border under every row, some row
 *    over several lines) the lines between two borders are one row. Two aligned columns whose rows end like
 *    sentences ("-x  Print commands ... executed.") are a definition list
 *    instead: a DEF_TERM and a DEF_BODY per row.
 *  - an entry inside a body (a builtin's options): a term line after a
 *    line that ends a sentence starts a nested entry.
 *  - an info manual's node line ("File: bash.info,  Node: Readline vi
 *    Mode,  Next: ...,  Up: ...", what `info -o -` writes above each
 *    node): navigation, as an HTML page's <nav> is, so it is dropped.
 *  - everything else: paragraphs, separated by blank lines.
 *
 * A block that needed no repair is handed over as the source's own bytes
 * (see "verbatim" in doc/model.h), so a document with nothing to repair
 * keeps its text byte for byte. Repaired text keeps its lines (only the
 * break is joined), so line-based heuristics downstream still see them.
 *
 * Memory: the word list holds only the candidates of the breaks found
 * (tracked, LP_MEM_DOC); a paragraph is examined at most LP_TEXTREAD_MAX_LINES
 * lines at a time and repaired only when under LP_TEXTREAD_MAX_REPAIR bytes
 * (a longer one is passed on as it is), so nothing grows with a line's or
 * a document's length but the list. Three passes over the input (breaks,
 * word counts, blocks), each telling the sink how far it got.
 */
#ifndef LP_DOC_TEXTREAD_H
#define LP_DOC_TEXTREAD_H

#include <stddef.h>

#include "core/status.h"
#include "doc/block.h"

#define LP_TEXTREAD_MAX_LINES 4096
#define LP_TEXTREAD_MAX_REPAIR ((size_t)1 << 20)

/* What a read found, for tests and measurements. */
struct lp_textread_stats {
	size_t breaks;     /* words broken at a line end (repaired) */
	size_t joined;     /* of them, joined without the hyphen */
	size_t headings, terms, rows, paragraphs;
};

/* lp_read_text with the figures in *stats (may be NULL). */
enum lp_status lp_textread_run(const char *name, const char *bytes, size_t len,
			       struct lp_doc_sink *sink, struct lp_textread_stats *stats,
			       struct lp_diag *d);

/* Words broken at line ends in text[0..len) as lp_textread_run would find
 * them (a measure of what is left to repair). */
size_t lp_textread_count_breaks(const char *text, size_t len);

#endif
