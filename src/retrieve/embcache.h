/*
 * embcache.h - embeddings kept on disk between runs, so a document is
 * embedded by a dense model once, not at every question.
 *
 * One cache file holds the embeddings of one document under one model:
 *
 *     DIR/MODEL-DOC.emb     MODEL, DOC: 16 hex digits (lp_embcache_model_id
 *                           of the embedder, lp_hash_bytes of the text)
 *
 * where DIR is $LPIPE_CACHE_DIR, else ~/.cache/lpipe/embeddings. Inside,
 * a 32-byte header (magic "LPEMBC01", dim, model id, header checksum) is
 * followed by fixed-size records: the key (lp_embcache_key of the chunk's
 * text), dim floats, and a checksum of both. Numbers are in the machine's
 * byte order; a file from a machine of the other order fails its checksums
 * and is recomputed.
 *
 * Reading is forgiving: a missing file is an empty cache; a header that
 * does not match (another model, another dim, damage) discards the file;
 * a record whose checksum fails, and a truncated record at the end, are
 * skipped and counted. Each such event is logged at debug level. Skipped
 * records are simply missing, so the caller recomputes them, puts them
 * back, and the next save writes a clean file. Saving rewrites the whole
 * file atomically (fileio.h lp_afile), so a crash leaves the old file or
 * the new one, never a mix; records not used by this run are kept unless
 * the file would hold more than LP_EMBCACHE_MAX_RECORDS.
 *
 * Vectors are held in LP_MEM_INDEX memory. Not thread-safe.
 */
#ifndef LP_RETRIEVE_EMBCACHE_H
#define LP_RETRIEVE_EMBCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LP_EMBCACHE_MAX_RECORDS 50000

struct lp_embcache;

struct lp_embcache_stats {
	size_t loaded;    /* records read back intact */
	size_t corrupt;   /* records skipped: checksum failed */
	size_t truncated; /* 1 when the file ended inside a record */
	int discarded;    /* 1 when the header did not match */
	size_t hits, misses; /* lp_embcache_get calls */
};

/* The cache directory ($LPIPE_CACHE_DIR, else $HOME/.cache/lpipe/embeddings)
 * into buf (cap bytes). Returns buf, or NULL when neither variable is set
 * or the path does not fit. */
const char *lp_embcache_default_dir(char *buf, size_t cap);

/* Key of a chunk text. */
uint64_t lp_embcache_key(const char *text, size_t len);

/*
 * Open the cache of document `doc_id` under model `model_id` with vectors
 * of `dim` floats, in directory `dir` (created on save when missing), and
 * read what it holds. Returns LP_OK with *out owned by the caller
 * (lp_embcache_free), or LP_E_NOMEM. A missing, unreadable or damaged file
 * is not an error (see above).
 */
enum lp_status lp_embcache_open(const char *dir, uint64_t model_id, uint64_t doc_id,
				size_t dim, struct lp_embcache **out, struct lp_diag *d);
/* NULL is a no-op (unsaved records are lost). */
void lp_embcache_free(struct lp_embcache *c);

/* Copy the vector for `key` into out[0..dim) and return 1, or return 0
 * when the cache does not have it. */
int lp_embcache_get(struct lp_embcache *c, uint64_t key, float *out);

/* Store a copy of vec[0..dim) under `key` (replacing any). Returns LP_OK
 * or LP_E_NOMEM. */
enum lp_status lp_embcache_put(struct lp_embcache *c, uint64_t key, const float *vec,
			       struct lp_diag *d);

/* Write the file if anything changed since it was read (or it was
 * damaged). Returns LP_OK or LP_E_IO (the old file is then untouched). */
enum lp_status lp_embcache_save(struct lp_embcache *c, struct lp_diag *d);

/* The file's path (owned by the cache). */
const char *lp_embcache_path(const struct lp_embcache *c);
struct lp_embcache_stats lp_embcache_stats(const struct lp_embcache *c);

#endif
