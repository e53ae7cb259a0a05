/*
 * docs.h - the uploaded documents, kept under the memory budget.
 *
 * A document is stored once, by the SHA-256 of its bytes (its id, 64 hex
 * digits), so the same upload twice is one document and several questions
 * on it read the same copy. The bytes live in tracked memory (LP_MEM_DOC)
 * within a cap of their own (--doc-cache), which admission (runs.h) keeps
 * out of what runs may plan to use: the store never competes with a run
 * for the budget. When a new document does not fit, the least recently
 * used documents that no run holds are dropped until it does; one that
 * cannot fit even then is refused.
 *
 * A document may carry the file name it was uploaded as (its first
 * upload's): the name's extension is what tells lpipe's loading a
 * Markdown file from text (doc/readers.h lp_doc_sniff), so a run is given
 * the bytes under that name. Names are cut to their last path component
 * and to [A-Za-z0-9._-].
 *
 * A run holds its document (lp_serve_docs_get ... _put) from submission to
 * its end, so a document is never dropped under a run. Thread-safe.
 */
#ifndef LP_SERVE_DOCS_H
#define LP_SERVE_DOCS_H

#include <stddef.h>

#include "core/status.h"

struct lp_serve_docs;

#define LP_SERVE_DOC_NAME_MAX 128

struct lp_serve_doc {
	char id[65];
	char name[LP_SERVE_DOC_NAME_MAX + 1]; /* the first upload's file name, or "" */
	const unsigned char *data; /* owned by the store */
	size_t len;
	char lang[8];              /* "en", "zh", "und": the script of the text */
};

/* A store of at most `cap` bytes; NULL when out of memory. */
struct lp_serve_docs *lp_serve_docs_new(size_t cap);
void lp_serve_docs_free(struct lp_serve_docs *s);

/*
 * Store data[0..len) (copied), named `name` (may be NULL; cleaned as
 * below) when it is new. LP_OK with id[65] set and *created 1 when
 * it is new, 0 when it was there; LP_E_NOMEM when it cannot fit (`d` names
 * the size, the cap and what is held); LP_E_INPUT for an empty body.
 */
enum lp_status lp_serve_docs_add(struct lp_serve_docs *s, const void *data, size_t len,
				 const char *name, char id[65], int *created, struct lp_diag *d);
/* `name` (may be NULL) as a document name into out[0..LP_SERVE_DOC_NAME_MAX]:
 * its last path component, other bytes than [A-Za-z0-9._-] dropped, no
 * leading dot; "" when nothing is left. */
void lp_serve_docs_clean_name(const char *name, char *out);
/* The document `id`, held for the caller (lp_serve_docs_put), or NULL. */
const struct lp_serve_doc *lp_serve_docs_get(struct lp_serve_docs *s, const char *id);
void lp_serve_docs_put(struct lp_serve_docs *s, const struct lp_serve_doc *doc);

/* Bytes and documents stored now; the cap. */
void lp_serve_docs_usage(struct lp_serve_docs *s, size_t *bytes, size_t *count);
size_t lp_serve_docs_cap(const struct lp_serve_docs *s);

#endif
