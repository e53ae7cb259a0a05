/*
 * gather.h - the text of the block a reader is building, cleaned as it
 * comes, and handed to the sink when the block ends.
 *
 * The Markdown, HTML and PDF readers all get a block's text in pieces
 * (a text node, a span, a line of a page) and all owe the sink the same
 * thing (doc/block.h): clean UTF-8, runs of white space folded to one
 * space and none at either end, except in code blocks, whose lines are
 * kept as they are. A gatherer does that once for the three of them.
 *
 * Invariants:
 *  - the text held is valid UTF-8: an invalid byte becomes U+FFFD;
 *  - it never holds more than LP_GATHER_MAX bytes: a block that grows
 *    past it (a 1 GB paragraph on one line) goes to the sink in pieces of
 *    the same kind, cut at a space where there is one, so a reader's
 *    memory does not grow with its input;
 *  - a table row's cells live in the same buffer, one after the other;
 *  - storage is tracked (tag LP_MEM_DOC).
 *
 * Use: lp_gather_text adds text; lp_gather_at widens the block's source
 * range; lp_gather_cell ends a table cell; lp_gather_end hands the block
 * to the sink (nothing when it holds no text) and starts an empty one.
 *
 * Kinds come from contexts: an element that gives its content a kind (a
 * list item, a quote, a heading) opens one with lp_gather_push and closes
 * it with lp_gather_pop; text gets the kind of the innermost open context,
 * or PARAGRAPH. So "<li>a<p>b</p></li>" and "> a\n>\n> b" give a list
 * item and a quote in two blocks each. Contexts nested deeper than
 * LP_GATHER_DEPTH are counted but keep the kind of the last one kept.
 */
#ifndef LP_DOC_GATHER_H
#define LP_DOC_GATHER_H

#include <stddef.h>

#include "core/status.h"
#include "doc/block.h"

/* Bytes of text one block holds at most before it is handed on in parts. */
#define LP_GATHER_MAX ((size_t)1 << 20)
/* Open contexts whose kind is remembered. */
#define LP_GATHER_DEPTH 256

struct lp_gather {
	struct lp_doc_sink *sink;
	char *text;           /* `len` bytes of clean text, tracked */
	size_t len, cap;
	int space;            /* white space seen since the last text */
	enum lp_block_kind kind;
	unsigned level;
	int header;           /* TABLE_ROW: a header row */
	unsigned page;
	size_t *cell_ends;    /* TABLE_ROW: where each finished cell ends in `text` */
	size_t n_cells, cells_cap;
	size_t cell_start;    /* where the open cell began */
	size_t src_lo, src_hi; /* source bytes seen for this block; lo > hi: none */
	unsigned char ctx_kind[LP_GATHER_DEPTH], ctx_level[LP_GATHER_DEPTH];
	unsigned n_ctx;       /* open contexts (may exceed LP_GATHER_DEPTH) */
};

void lp_gather_init(struct lp_gather *g, struct lp_doc_sink *sink);
void lp_gather_release(struct lp_gather *g);

/* The kind (and level) of the block being gathered from now on, for a
 * reader without contexts (PDF). */
void lp_gather_begin(struct lp_gather *g, enum lp_block_kind kind, unsigned level);
/* End the block gathered so far and open a context of `kind`. */
enum lp_status lp_gather_push(struct lp_gather *g, enum lp_block_kind kind, unsigned level,
			      struct lp_diag *d);
/* End the block gathered so far and close the innermost context. */
enum lp_status lp_gather_pop(struct lp_gather *g, struct lp_diag *d);
/* End the block gathered so far; what follows has the same context. */
enum lp_status lp_gather_break(struct lp_gather *g, struct lp_diag *d);

/* Add `n` bytes of text; white space folds unless the kind is CODE.
 * Returns LP_OK, LP_E_NOMEM, or the sink's error when the block was full
 * and a part of it went out. */
enum lp_status lp_gather_text(struct lp_gather *g, const char *s, size_t n, struct lp_diag *d);
/* White space between two pieces (a soft line break, the end of an
 * inline element that separates words). */
void lp_gather_space(struct lp_gather *g);
/* The block covers source byte `off` (and the `n` bytes after it). */
void lp_gather_at(struct lp_gather *g, size_t off, size_t n);
/* End the open table cell (TABLE_ROW). */
enum lp_status lp_gather_cell(struct lp_gather *g, struct lp_diag *d);
/* Hand the block to the sink if it holds text (or, for a row, a cell
 * with text) and start an empty one of the same kind. Returns LP_OK or
 * the sink's error. */
enum lp_status lp_gather_end(struct lp_gather *g, struct lp_diag *d);
/* The refusal of a reader this build lacks: LP_E_INPUT, naming the file
 * and the Debian package to install (`format` "HTML", `package`
 * "libxml2-dev"). */
enum lp_status lp_gather_missing(struct lp_diag *d, const char *name, const char *format,
				 const char *package);

/* A reader's last word on a failure `st`: when the diagnostic names no
 * file (the tracked allocator's refusals name only the phase), it names
 * `name`; the status and message stay as they are. Returns `st`. */
enum lp_status lp_gather_blame(struct lp_diag *d, const char *name, enum lp_status st);

/* 1 when the block holds no text yet. */
int lp_gather_empty(const struct lp_gather *g);

#endif
