/*
 * block.h - the unit a document reader produces: one block of a document's
 * structure, and the sink readers push blocks into.
 *
 * Every reader (plain text, Markdown, HTML, PDF) turns the bytes of a file
 * into a sequence of blocks, in reading order, and hands each one to a
 * struct lp_doc_sink as soon as it has it. A reader never builds the whole
 * document itself: the sink decides where blocks go (the document model of
 * doc/model.h, a test's array, a fuzz target's counter), so a reader that
 * streams its input keeps memory flat in the document's size.
 *
 * A block's text is clean UTF-8: no markup, entities decoded, runs of
 * white space folded to one space (code blocks keep their lines). It is
 * only valid during the call; the sink copies what it keeps.
 *
 * Kinds:
 *   HEADING     a heading; `level` 1 (top) .. 6
 *   PARAGRAPH   running text
 *   LIST_ITEM   one item of a list; `level` is its nesting depth (1 = top)
 *   DEF_TERM    the term of a definition list entry ("--delete", "SHLVL")
 *   DEF_BODY    the body of the entry whose DEF_TERM came just before
 *   TABLE_ROW   one row of a table: `cells`, `n_cells`; `header` when it
 *               is a header row (a table's header rows come first)
 *   CODE        preformatted text or a code block, lines kept
 *   QUOTE       a block quotation
 *
 * Positions: `src_off`/`src_len` are the block's bytes in the original
 * file (for a PDF, the page's place in the file is not meaningful: the
 * reader gives 0/0 and `page` instead). `page` is 1-based for paged
 * formats and 0 otherwise.
 */
#ifndef LP_DOC_BLOCK_H
#define LP_DOC_BLOCK_H

#include <stddef.h>

#include "core/status.h"

enum lp_block_kind {
	LP_BLOCK_HEADING,
	LP_BLOCK_PARAGRAPH,
	LP_BLOCK_LIST_ITEM,
	LP_BLOCK_DEF_TERM,
	LP_BLOCK_DEF_BODY,
	LP_BLOCK_TABLE_ROW,
	LP_BLOCK_CODE,
	LP_BLOCK_QUOTE,
	LP_BLOCK_N_KINDS
};

/* "heading", "paragraph", "list_item", "definition_term",
 * "definition_body", "table_row", "code", "quote": the names the JSON
 * report uses. */
const char *lp_block_kind_name(enum lp_block_kind kind);

/* One block as a reader hands it to a sink. */
struct lp_block_in {
	enum lp_block_kind kind;
	unsigned level;            /* heading level, list depth; else 0 */
	const char *text;          /* clean text, `len` bytes (not NUL-terminated) */
	size_t len;
	const char *const *cells;  /* TABLE_ROW: each cell's clean text */
	const size_t *cell_lens;   /* TABLE_ROW: their lengths in bytes */
	size_t n_cells;            /* TABLE_ROW: how many; else 0 */
	int header;                /* TABLE_ROW: a header row */
	size_t src_off, src_len;   /* bytes in the original file */
	unsigned page;             /* 1-based page; 0 for unpaged formats */
};

/* Where blocks go. `block` returns LP_OK to go on, or an error (with `d`
 * filled) that the reader returns at once, unchanged. `passed`, when not
 * NULL, is told that the reader is past byte `off` of its input in the
 * current pass, so that a sink over a mapped file can release the pages
 * behind it (a reader making several passes calls it in each; reading the
 * bytes again is still allowed). */
struct lp_doc_sink {
	enum lp_status (*block)(struct lp_doc_sink *sink, const struct lp_block_in *b,
				struct lp_diag *d);
	void *ctx;
	void (*passed)(struct lp_doc_sink *sink, size_t off); /* may be NULL */
};

/* Call sink->passed when there is one. */
static inline void lp_doc_sink_passed(struct lp_doc_sink *sink, size_t off)
{
	if (sink->passed)
		sink->passed(sink, off);
}

#endif
