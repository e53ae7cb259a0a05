/*
 * model.h - the document model: a document as the blocks its reader found
 * (doc/block.h) and the clean text they make up together.
 *
 * Why: every stage after loading (split, retrieval, evidence, summaries,
 * citations, reports) works on byte offsets into one text. The model keeps
 * that: its clean text is the blocks' texts in reading order, each block a
 * range of it, separated by blank lines, so that the sentence and
 * paragraph code of text/ sees every block as a paragraph of its own. Next
 * to the text it keeps, per block, what the text cannot say: the kind, the
 * level, the section it is in, where it came from in the original file and
 * on which page, and for a definition body the term it defines.
 *
 * How it is built: a reader pushes blocks into lp_doc_model_sink(m); the
 * model appends each block's text to a spool (an unlinked temporary file,
 * written through a fixed stdio buffer) and records the block; then
 * lp_doc_model_finish maps the spool read-only through core/fileio.h's
 * window (LP_DOCUMENT_WINDOW resident bytes reserved, not the text's
 * length). The clean text is therefore never held whole in tracked memory.
 *
 * Verbatim text: a plain-text reader that hands a block whose `text` is the
 * source itself (b->text == src + b->src_off, b->len == b->src_len) marks it
 * verbatim; between two verbatim blocks the source's own white space is
 * kept when it holds a blank line, and gets one more line break when it
 * holds only a line break (so the next line keeps its indentation, which
 * text/outline.c reads, and the sentence code still sees two paragraphs).
 * When every block is verbatim and every gap was kept as it was, the clean
 * text IS the source, byte for byte: no spool is made
 * (lp_doc_model_is_source says so) and the caller keeps using its mapping.
 * That is how a plain-text document that needs no repair reads exactly as
 * before the model existed.
 *
 * Sections: a heading of level L closes every open heading of level >= L;
 * every block's `section` is the innermost heading open above it (a
 * heading's own is its parent), LP_DOC_NONE at top level. A DEF_BODY's
 * `term` is the DEF_TERM block before it (several bodies may share one).
 * lp_doc_model_section_path writes "OPTIONS › --delete" for the body of
 * the --delete entry under the OPTIONS heading.
 *
 * Memory (tag LP_MEM_DOC): flat in the document's size. The block and
 * cell tables are spooled too (two more unlinked files) and mapped; they
 * are read by binary search (a few pages) or once in order by a report,
 * so LP_DOC_TABLE_RESIDENT bytes are reserved for their resident pages,
 * not their length. While building, the model holds only the last block
 * and the open headings.
 *
 * Ownership: the model owns its tables and its spool mapping; block and
 * cell pointers are valid until lp_doc_model_release.
 */
#ifndef LP_DOC_MODEL_H
#define LP_DOC_MODEL_H

#include <stddef.h>
#include <stdio.h>

#include "core/fileio.h"
#include "core/status.h"
#include "doc/block.h"

#define LP_DOC_NONE ((size_t)-1)

/* Resident bytes reserved for the mapped block and cell tables. */
#define LP_DOC_TABLE_RESIDENT ((size_t)256 << 10)

/* Separator between the cells of a table row in the clean text. */
#define LP_DOC_CELL_SEP " | "

struct lp_doc_block {
	enum lp_block_kind kind;
	unsigned level;          /* heading level 1..6, list depth; else 0 */
	unsigned page;           /* 1-based; 0 for unpaged formats */
	int header;              /* TABLE_ROW: a header row */
	int verbatim;            /* the text is the source's bytes unchanged */
	size_t off, len;         /* the block's clean text: text[off, off + len) */
	size_t src_off, src_len; /* its bytes in the original file */
	size_t section;          /* innermost heading above (block index) or NONE */
	size_t term;             /* DEF_BODY: its DEF_TERM's index, else NONE */
	size_t first_cell;       /* TABLE_ROW: cells[first_cell .. + n_cells) */
	size_t n_cells;
};

/* A table cell: text[off, off + len) of the clean text. */
struct lp_doc_cell {
	size_t off, len;
};

struct lp_doc_model {
	const char *text;            /* the clean text (after finish), len bytes */
	size_t len;
	const struct lp_doc_block *blocks; /* [n_blocks] in reading order
					    * (mapped, after finish) */
	size_t n_blocks;
	const struct lp_doc_cell *cells;   /* [n_cells] (mapped, after finish) */
	size_t n_cells;
	struct lp_mapped map;        /* the text spool's mapping; empty when
				      * the clean text is the source */
	struct lp_mapped block_map, cell_map;
	size_t reserved;             /* bytes reserved for the tables' pages */
	size_t n_kind[LP_BLOCK_N_KINDS]; /* blocks of each kind */
	size_t keep_from, keep_block; /* lp_doc_model_keep_next's cursor */
	size_t keep_dropped;         /* its block-table bytes released */

	/* Building (private). */
	struct lp_doc_sink sink;
	const char *src;             /* the source, for verbatim blocks; may be NULL */
	size_t src_len;
	struct lp_mapped *src_map;   /* when set, sink->passed drops its pages */
	size_t src_dropped;          /* dropped up to here in this pass */
	FILE *spool;                 /* NULL until the text departs from src */
	FILE *block_spool, *cell_spool;
	struct lp_doc_block prev;    /* the last block added */
	size_t out;                  /* bytes of clean text so far */
	size_t src_end;              /* end of the last block in the source */
	int same;                    /* clean text so far == src[0, out) */
	size_t open[7];              /* open heading per level 1..6, or NONE */
	size_t last_term;            /* the DEF_TERM bodies attach to, or NONE */
	int finished;
};

/*
 * Start an empty model. `src`/`src_len` is the text a plain-text reader
 * reads (its blocks may point into it, see "verbatim"); NULL for other
 * formats. `src` must outlive the model when lp_doc_model_is_source.
 */
void lp_doc_model_init(struct lp_doc_model *m, const char *src, size_t src_len);

/* The sink to hand a reader. */
struct lp_doc_sink *lp_doc_model_sink(struct lp_doc_model *m);

/* Append one block directly (what the sink does). Returns LP_OK, LP_E_NOMEM
 * or LP_E_IO (the spool could not be written), `d` filled. */
enum lp_status lp_doc_model_add(struct lp_doc_model *m, const struct lp_block_in *b,
				struct lp_diag *d);

/* Done adding: map the spool (or, when the clean text is the source, point
 * text at src). `name` names the document in messages. Returns LP_OK,
 * LP_E_INPUT when no block holds any text ("empty document"), LP_E_IO or
 * LP_E_NOMEM. */
enum lp_status lp_doc_model_finish(struct lp_doc_model *m, const char *name,
				   struct lp_diag *d);

/* The clean text is the source given to init (no copy was made). */
int lp_doc_model_is_source(const struct lp_doc_model *m);

/* NULL is a no-op; the model may be reused after init. */
void lp_doc_model_release(struct lp_doc_model *m);

/* The block holding clean-text byte `off`: the last block starting at or
 * before it (a separator belongs to the block before it); 0 when off is
 * before the first; LP_DOC_NONE when there are no blocks. */
size_t lp_doc_model_find(const struct lp_doc_model *m, size_t off);

/* The blocks that overlap text[off, off + len): *first and the count. */
size_t lp_doc_model_range(const struct lp_doc_model *m, size_t off, size_t len,
			  size_t *first);

/*
 * Write block i's section path into buf (cap bytes, NUL-terminated, cut at
 * a character boundary when short): the headings above it, outermost
 * first, then for a definition body or term the term, joined by " › ";
 * each name is the block's text folded to one line and cut at 60 bytes.
 * Returns the length written; 0 (an empty string) for a block under no
 * heading and no term.
 */
size_t lp_doc_model_section_path(const struct lp_doc_model *m, size_t i, char *buf,
				 size_t cap);

/* The page of the block holding `off`, 0 when unpaged. */
unsigned lp_doc_model_page(const struct lp_doc_model *m, size_t off);

/*
 * For the splitter (text/split.h, struct lp_split_keep): the first span
 * ending after clean-text byte `from` that a chunk must not be cut inside:
 * a table row, a code block, or a table's header rows with the row after
 * them. Returns 1 with [*start, *end), or 0 when none is left. Calls with
 * growing `from` cost O(1) each on average (a cursor in the model).
 */
int lp_doc_model_keep_next(void *model, size_t from, size_t *start, size_t *end);

/* A block holds code or a table row: summaries and keyphrases skip it. */
int lp_doc_block_is_data(const struct lp_doc_block *b);

#endif
