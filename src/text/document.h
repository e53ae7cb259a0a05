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
 */
#ifndef LP_TEXT_DOCUMENT_H
#define LP_TEXT_DOCUMENT_H

#include <stddef.h>

#include "config/pipeline.h"
#include "core/fileio.h"
#include "core/status.h"

struct lp_document {
	const char *path;     /* as given; "-" is stdin */
	const char *text;     /* normalised UTF-8, NUL-terminated only if copied */
	size_t len;           /* bytes */
	struct lp_mapped map; /* the raw file */
	char *copy;           /* normalised copy (tracked), or NULL when mapped */
	size_t n_replaced;    /* invalid sequences replaced by U+FFFD */
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
void lp_document_release(struct lp_document *doc);

#endif
