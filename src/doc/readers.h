/*
 * readers.h - the document readers: bytes of a file in one format, blocks
 * out (see doc/block.h).
 *
 * Each reader wraps a well-kept library (md4c for Markdown, libxml2 for
 * HTML, poppler-glib for PDF) or, for plain text, the repair rules of
 * doc/textread.h. A reader whose library was not found by configure is
 * still declared: it returns LP_E_INPUT with a message naming the Debian
 * package to install (lp_reader_package), so a build without it refuses
 * such documents clearly instead of reading them as text.
 *
 * Contract shared by every reader:
 *  - `name` is the file's name as the user gave it, used in messages only;
 *    `bytes`/`len` is the whole file (mapped or read by the caller);
 *  - blocks go to `sink` in reading order as soon as they are known; an
 *    error from the sink is returned unchanged;
 *  - bad input never crashes or hangs: it fails with LP_E_INPUT and a
 *    message "NAME: line L: ..." / "NAME: page P: ..." / "NAME: byte B: ..."
 *    naming where the reader stopped;
 *  - the library's own allocations are counted against the memory budget
 *    (tag LP_MEM_DOC), or bounded by reading piecewise (a PDF page at a
 *    time), so that no input makes a reader exceed the budget.
 */
#ifndef LP_DOC_READERS_H
#define LP_DOC_READERS_H

#include <stddef.h>

#include "core/status.h"
#include "doc/block.h"

enum lp_doc_format {
	LP_DOC_FORMAT_AUTO,     /* sniff: lp_doc_sniff */
	LP_DOC_FORMAT_TEXT,
	LP_DOC_FORMAT_MARKDOWN,
	LP_DOC_FORMAT_HTML,
	LP_DOC_FORMAT_PDF
};

/* "auto", "text", "markdown", "html", "pdf" */
const char *lp_doc_format_name(enum lp_doc_format f);

/* The format of a file from its name's extension and its first bytes
 * (`head`, `n` bytes; the content wins when it is unmistakable: "%PDF-",
 * "<!DOCTYPE html", "<html"). Never returns LP_DOC_FORMAT_AUTO. */
enum lp_doc_format lp_doc_sniff(const char *path, const char *head, size_t n);

/* Whether this build has the reader for `f` (text: always). */
int lp_reader_available(enum lp_doc_format f);
/* The Debian package that provides the reader's library ("libmd4c-dev"),
 * or NULL for text. */
const char *lp_reader_package(enum lp_doc_format f);

/* Read `bytes` of format `f` (not AUTO) into `sink`. */
enum lp_status lp_read_document(enum lp_doc_format f, const char *name, const char *bytes,
				size_t len, struct lp_doc_sink *sink, struct lp_diag *d);

enum lp_status lp_read_markdown(const char *name, const char *bytes, size_t len,
				struct lp_doc_sink *sink, struct lp_diag *d);
enum lp_status lp_read_html(const char *name, const char *bytes, size_t len,
			    struct lp_doc_sink *sink, struct lp_diag *d);
enum lp_status lp_read_pdf(const char *name, const char *bytes, size_t len,
			   struct lp_doc_sink *sink, struct lp_diag *d);
enum lp_status lp_read_text(const char *name, const char *bytes, size_t len,
			    struct lp_doc_sink *sink, struct lp_diag *d);

#endif
