/*
 * docstore.h - what the runs of one document share: its parsed form and
 * the BM25 indexes made of its chunks, kept for the next run of the same
 * document.
 *
 * A service answers several questions on one uploaded document; each run
 * would parse it again and index the same chunks again. An engine made to
 * keep documents (lp_engine_params.keep_documents) holds a store: the
 * runner asks it for the parsed document by a key that names the bytes
 * (their SHA-256) and everything that shapes the parse (format, UTF-8
 * mode, the name's extension); the retrieve stage asks it for an index by
 * the document's key and what shapes the index (the BM25 parameters, or
 * the embedder, and the spans of the working set); the hash and dense
 * scorers likewise for the vectors of the spans (their query is embedded
 * by each run). What is missing is built by the caller's
 * thread and kept.
 *
 * Memory: what the store keeps is built under a memory scope of its own
 * that ends when it is built (core/mem.h), so it is shared memory, no
 * run's, measured exactly (its bytes). The store has no cap of its own:
 * its owner counts its bytes against the budget and drops the least
 * recently used entries that nobody holds when it needs the room
 * (lp_docstore_drop). lpipe serve's admission does that beside the kept
 * models; a caller that never drops must not make an engine that keeps
 * documents.
 *
 * A caller holds what it is given until it puts it back; an entry held is
 * never dropped. lp_docstore_free may be called while entries are held:
 * it frees the rest, and the store goes at the last put. Thread-safe.
 */
#ifndef LP_ENGINE_DOCSTORE_H
#define LP_ENGINE_DOCSTORE_H

#include <stddef.h>

#include "core/status.h"
#include "retrieve/bm25.h"
#include "retrieve/vecindex.h"
#include "text/document.h"

struct lp_docstore;

/* Counts for reports and metrics. */
struct lp_docstore_stats {
	size_t bytes;            /* tracked bytes kept now */
	size_t entries;          /* documents and indexes kept now */
	unsigned long long hits; /* asked for and found */
	unsigned long long misses; /* asked for and built */
};

/* A new, empty store, or NULL when out of memory. */
struct lp_docstore *lp_docstore_new(void);
/* Free what nobody holds; the rest, and the store, at its last put. NULL
 * is a no-op. */
void lp_docstore_free(struct lp_docstore *s);

/*
 * The document `key` (at most LP_DOCSTORE_KEY_MAX bytes), held for the
 * caller: the kept one, or a new one that lp_document_from_bytes_as
 * makes of a copy of data[0..len) named `name` with `mode` and `format`.
 * Returns LP_OK and *out, or what the parse returns (nothing is kept).
 */
#define LP_DOCSTORE_KEY_MAX 200
enum lp_status lp_docstore_document(struct lp_docstore *s, const char *key, const char *name,
				    const void *data, size_t len, enum lp_invalid_utf8 mode,
				    enum lp_doc_format format, const struct lp_document **out,
				    struct lp_diag *d);

/* What an index is of a document's working set. */
enum lp_docstore_index {
	LP_DOCSTORE_BM25,     /* struct lp_bm25, finished by the store */
	LP_DOCSTORE_VECTORS,  /* struct lp_vecindex: the spans' embeddings */
};

/*
 * The index `key` of kind `kind`, held for the caller: the kept one, else
 * one made by build(ctx, &ix, d), which must make a new one of that kind
 * (the store finishes a BM25 index, so that runs read it at once, and
 * keeps it). Returns LP_OK and *out, or what build returns (nothing is
 * kept).
 */
enum lp_status lp_docstore_index(struct lp_docstore *s, const char *key,
				 enum lp_docstore_index kind,
				 enum lp_status (*build)(void *ctx, void **ix, struct lp_diag *d),
				 void *ctx, const void **out, struct lp_diag *d);

/* Give back what lp_docstore_document or lp_docstore_index gave; NULL is
 * a no-op. */
void lp_docstore_put(struct lp_docstore *s, const void *value);

/* Drop the least recently used entries nobody holds until at least
 * `bytes` went, or none is left to drop. Returns the bytes dropped. */
size_t lp_docstore_drop(struct lp_docstore *s, size_t bytes);

void lp_docstore_stats(struct lp_docstore *s, struct lp_docstore_stats *out);

#endif
