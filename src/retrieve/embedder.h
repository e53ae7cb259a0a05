/*
 * embedder.h - one interface over the ways to turn texts into vectors, so
 * the retrieve stage treats the hashed embedder and a dense model alike.
 *
 * An embedder has a width (dim), an identity (a 64-bit id that changes
 * whenever the vectors it produces could change: the kind, the dim, the
 * model's bytes; embedding caches are keyed by it) and one operation,
 * embedding a batch of texts into unit-length rows [n, dim] (a text with
 * nothing to embed may give the zero row). Implementations fill struct
 * lp_embedder_ops; callers use only the functions below.
 *
 * The dense embedder loads a BERT sentence model (bert.h) from a directory:
 * the one given, else $LPIPE_EMBED_MODEL, else
 * ${LPIPE_MODEL_DIR:-~/.cache/lpipe/models}/all-MiniLM-L6-v2. Its id
 * hashes the bytes of config.json, vocab.txt and model.safetensors. Reading
 * 90 MB costs 0.1 s, most of a run whose embeddings are all cached, so the
 * id is memoized in the embedding cache directory (embcache.h) as
 * model-KEY.id, KEY hashing each file's device, inode, size, mtime and
 * ctime: any change to a file (ctime cannot be set back) means another KEY
 * and a fresh hash. A memo that cannot be read or written is ignored.
 *
 * The dense embedder keeps the loaded model and the backend it runs on
 * (on the CPU, a pool of one thread per online CPU) until
 * lp_embedder_free, so a process that embeds many batches loads the model
 * and starts the threads once. It runs on the CPU or, with
 * lp_embedder_new_dense_on, on the GPU (the CUDA backend, backend.h); the
 * vectors agree to float rounding (cosine >= 0.9999), so both share one
 * embedding cache.
 *
 * An embedder is not thread-safe (the hashed one keeps scratch, the dense
 * one a pool that runs one loop at a time).
 */
#ifndef LP_RETRIEVE_EMBEDDER_H
#define LP_RETRIEVE_EMBEDDER_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

struct lp_backend;

#define LP_EMBEDDER_DENSE_MODEL "all-MiniLM-L6-v2"

struct lp_embedder;

struct lp_embedder_ops {
	const char *name; /* "hash", "dense" */
	enum lp_status (*embed)(struct lp_embedder *e, const char *const *texts,
				const size_t *lens, size_t n, float *out,
				struct lp_diag *d);
	void (*release)(struct lp_embedder *e); /* free what `impl` holds */
	/* Optional (NULL: no vocabulary, every word covered): add text's
	 * words and its words outside the vocabulary, as lp_wordpiece_coverage. */
	enum lp_status (*coverage)(struct lp_embedder *e, const char *text, size_t len,
				   size_t *n_words, size_t *n_unknown, struct lp_diag *d);
};

struct lp_embedder {
	const struct lp_embedder_ops *ops;
	size_t dim;
	uint64_t id;
	void *impl;
};

/* The hashed n-gram embedder (hashembed.h) with `dim` buckets. Returns
 * LP_OK with *out owned by the caller, LP_E_USAGE (bad dim) or
 * LP_E_NOMEM. */
enum lp_status lp_embedder_new_hash(size_t dim, struct lp_embedder **out,
				    struct lp_diag *d);

/* lp_embedder_new_hash on `device` (as lp_embedder_new_dense_on): on a
 * GPU the features are hashed on the host and the projection of each
 * batch runs as one kernel (the backends' scatter_l2), the vectors equal
 * to the CPU's up to the rounding of the norm. */
enum lp_status lp_embedder_new_hash_on(size_t dim, const char *device, struct lp_embedder **out,
				       struct lp_diag *d);

/*
 * The dense embedder from `dir` (NULL: the default, see above). Returns
 * LP_OK with *out owned by the caller; LP_E_MODEL when the directory has
 * no model ("dense scorer needs the MiniLM model: run
 * scripts/fetch-embedder (or make models)") or a bad one; LP_E_IO,
 * LP_E_NOMEM.
 */
enum lp_status lp_embedder_new_dense(const char *dir, struct lp_embedder **out,
				     struct lp_diag *d);

/*
 * lp_embedder_new_dense on `device`: NULL or "cpu"; "cuda" (fails with
 * LP_E_DEVICE, "device cuda is unusable: REASON", when the CUDA backend
 * cannot be opened); "auto" (the GPU when CUDA opens, else the CPU). The
 * embedder owns the backend it opened. Same returns, and LP_E_USAGE for
 * an unknown device.
 */
enum lp_status lp_embedder_new_dense_on(const char *dir, const char *device,
					struct lp_embedder **out, struct lp_diag *d);

/* The device backend an embedder runs on, or NULL (the CPU). Owned by
 * the embedder. */
struct lp_backend *lp_embedder_backend(const struct lp_embedder *e);

/* The default dense model directory into buf (cap bytes); NULL when no
 * variable gives one or it does not fit. */
const char *lp_embedder_dense_dir(char *buf, size_t cap);

/* NULL is a no-op. */
void lp_embedder_free(struct lp_embedder *e);

static inline size_t lp_embedder_dim(const struct lp_embedder *e) { return e->dim; }
static inline uint64_t lp_embedder_id(const struct lp_embedder *e) { return e->id; }
static inline const char *lp_embedder_name(const struct lp_embedder *e) { return e->ops->name; }

/* Embed texts[i] (lens[i] bytes) for i < n into out[n * dim]. Returns
 * LP_OK, or LP_E_NOMEM (out is then unspecified). */
enum lp_status lp_embedder_embed(struct lp_embedder *e, const char *const *texts,
				 const size_t *lens, size_t n, float *out,
				 struct lp_diag *d);

/*
 * Add to *n_words the words of text[0..len) and to *n_unknown those the
 * embedder's vocabulary does not cover (the dense embedder: words its
 * tokenizer turns into [UNK], wordpiece.h lp_wordpiece_coverage; the hashed one
 * has no vocabulary and adds nothing). Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_embedder_coverage(struct lp_embedder *e, const char *text, size_t len,
				    size_t *n_words, size_t *n_unknown, struct lp_diag *d);

#endif
