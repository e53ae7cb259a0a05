/*
 * document.h - loading a document: the one place outside text enters.
 *
 * A file is mapped, not copied, when it is already clean: valid UTF-8, no
 * byte-order mark, no CR. Otherwise a normalised copy is made in tracked
 * memory (tag LP_MEM_DOC): the BOM is dropped, CRLF and lone CR become LF,
 * and invalid sequences either stop the load (LP_UTF8_ERROR: the message
 * gives the byte offset of the first one) or become U+FFFD
 * (LP_UTF8_REPLACE). Binary input (a NUL byte) and empty input (nothing
 * but white space) are refused with LP_E_INPUT and a message naming the file.
 *
 * Memory does not grow with the document's length when it is mapped: the
 * mapping reserves LP_DOCUMENT_WINDOW bytes (or the file's size when
 * smaller) under LP_MEM_DOC, not the whole file, and every pass over the
 * text (the load's own check, the split, each summarised chunk, keyphrase
 * extraction) releases what it has read with lp_document_done, so that the
 * text resident at any time is at most the range one pass holds at once. A
 * pass that holds more than the window (a chunk larger than it) reserves
 * the difference first with lp_document_need.
 *
 * Two cases hold the text whole in tracked memory (LP_MEM_DOC) instead, and
 * their memory is the document's length: input from a pipe or stdin (read
 * into a buffer that doubles as it fills, so up to twice the length while
 * it is read), and a file that needs normalising (the copy; the raw mapping
 * is released behind the copy as it is written, and unmapped after).
 *
 * Every load also builds the document model (doc/model.h): the format is
 * the one asked for, or under LP_DOC_FORMAT_AUTO the one lp_doc_sniff finds;
 * the file goes through that format's reader (doc/readers.h), and `text`
 * becomes the model's clean text. Plain text that needs no repair keeps
 * its own bytes (the model's text is the source: nothing above changes);
 * repaired text and the other formats are read from the model's spool, a
 * mapped temporary file with the same window, so the memory above holds
 * for them too. A reader's refusal (a format not built in, a PDF without
 * a text layer) fails the load with LP_E_INPUT naming the file; only a
 * Markdown file found by LP_DOC_FORMAT_AUTO in a build without the
 * Markdown reader is read as plain text instead, with a warning (it is
 * text; HTML or PDF read as text would be markup or binary).
 */
#ifndef LP_TEXT_DOCUMENT_H
#define LP_TEXT_DOCUMENT_H

#include <stddef.h>

#include "core/fileio.h"
#include "core/status.h"
#include "core/utf8.h"
#include "doc/model.h"
#include "doc/readers.h"

/* Bytes of a mapped document reserved against the budget as its resident
 * window (see above). */
#define LP_DOCUMENT_WINDOW ((size_t)1 << 20)

struct lp_document {
	const char *path;     /* as given; "-" is stdin */
	const char *text;     /* normalised UTF-8, NUL-terminated only if copied */
	size_t len;           /* bytes */
	struct lp_mapped map; /* the raw file */
	char *copy;           /* normalised copy (tracked), or NULL when mapped */
	size_t n_replaced;    /* invalid sequences replaced by U+FFFD */
	enum lp_doc_format format;   /* what was read (never AUTO after a load) */
	struct lp_doc_model model;   /* the blocks; text == model.text */
};

/* Load `path` ("-" for stdin). Returns LP_OK, LP_E_INPUT (invalid UTF-8,
 * binary, empty), LP_E_IO or LP_E_NOMEM with `d` naming the file and, for
 * content errors, the byte offset. */
enum lp_status lp_document_load(const char *path, enum lp_invalid_utf8 mode,
				struct lp_document *doc, struct lp_diag *d);
/* Same from bytes in memory (tests, fuzzing); the bytes must outlive doc. */
enum lp_status lp_document_from_bytes(const char *name, const void *data, size_t len,
				      enum lp_invalid_utf8 mode,
				      struct lp_document *doc, struct lp_diag *d);
/* The two above with the format given (LP_DOC_FORMAT_AUTO: sniffed). */
enum lp_status lp_document_load_as(const char *path, enum lp_invalid_utf8 mode,
				   enum lp_doc_format format, struct lp_document *doc,
				   struct lp_diag *d);
enum lp_status lp_document_from_bytes_as(const char *name, const void *data, size_t len,
					 enum lp_invalid_utf8 mode, enum lp_doc_format format,
					 struct lp_document *doc, struct lp_diag *d);
void lp_document_release(struct lp_document *doc);

/* A pass is done with text[off, off + len): release those pages of a mapped
 * document from the resident set (a later read brings them back). A no-op
 * for text in memory. */
void lp_document_done(struct lp_document *doc, size_t off, size_t len);

/* For a pass that reads pieces mostly in order (chunks of a working set):
 * release everything from *from up to off + len, the gaps between pieces
 * too (a fault may have mapped them), and move *from there; a piece before
 * *from releases the blocks of lp_file_fault_bytes() around it. Start with
 * *from = 0. */
void lp_document_done_upto(struct lp_document *doc, size_t *from, size_t off, size_t len);

/* A pass is about to hold `bytes` of the text resident at once; see
 * lp_file_need. Returns LP_OK or LP_E_NOMEM with `d` filled. */
enum lp_status lp_document_need(struct lp_document *doc, size_t bytes, struct lp_diag *d);

#endif
