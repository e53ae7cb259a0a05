#include "retrieve/embedder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "retrieve/bert.h"
#include "retrieve/hash.h"
#include "retrieve/hashembed.h"

/* Bump when the hashed features change, so old caches are not reused. */
#define HASH_VERSION 1
#define SEED_ID 0x6c70656d62640001ULL

static enum lp_status hash_embed(struct lp_embedder *e, const char *const *texts,
				 const size_t *lens, size_t n, float *out,
				 struct lp_diag *d)
{
	for (size_t i = 0; i < n; i++) {
		enum lp_status st = lp_hashembed_embed(e->impl, texts[i], lens[i],
						       out + i * e->dim, NULL, d);
		if (st != LP_OK)
			return st;
	}
	return LP_OK;
}

static void hash_release(struct lp_embedder *e)
{
	lp_hashembed_free(e->impl);
}

static const struct lp_embedder_ops hash_ops = { "hash", hash_embed, hash_release };

static enum lp_status dense_embed(struct lp_embedder *e, const char *const *texts,
				  const size_t *lens, size_t n, float *out,
				  struct lp_diag *d)
{
	return lp_bert_embed(e->impl, texts, lens, n, out, d);
}

static void dense_release(struct lp_embedder *e)
{
	lp_bert_free(e->impl);
}

static const struct lp_embedder_ops dense_ops = { "dense", dense_embed, dense_release };

static struct lp_embedder *wrap(const struct lp_embedder_ops *ops, size_t dim,
				uint64_t id, void *impl, struct lp_diag *d)
{
	struct lp_embedder *e = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*e), d);

	if (!e)
		return NULL;
	e->ops = ops;
	e->dim = dim;
	e->id = id;
	e->impl = impl;
	return e;
}

enum lp_status lp_embedder_new_hash(size_t dim, struct lp_embedder **out,
				    struct lp_diag *d)
{
	struct lp_hashembed *h = lp_hashembed_new(dim, d);
	uint64_t v[3] = { 0x68617368 /* "hash" */, HASH_VERSION, dim };

	*out = NULL;
	if (!h)
		return d ? d->status : LP_E_NOMEM;
	*out = wrap(&hash_ops, dim, lp_hash_bytes(v, sizeof(v), SEED_ID), h, d);
	if (!*out) {
		lp_hashembed_free(h);
		return LP_E_NOMEM;
	}
	return LP_OK;
}

const char *lp_embedder_dense_dir(char *buf, size_t cap)
{
	const char *e = getenv("LPIPE_EMBED_MODEL"), *base = getenv("LPIPE_MODEL_DIR");
	const char *home = getenv("HOME");
	int n;

	if (e && *e)
		n = snprintf(buf, cap, "%s", e);
	else if (base && *base)
		n = snprintf(buf, cap, "%s/%s", base, LP_EMBEDDER_DENSE_MODEL);
	else if (home && *home)
		n = snprintf(buf, cap, "%s/.cache/lpipe/models/%s", home,
			     LP_EMBEDDER_DENSE_MODEL);
	else
		return NULL;
	return n > 0 && (size_t)n < cap ? buf : NULL;
}

/* Fold the bytes of dir/name into *h, a block at a time (a missing file
 * folds in nothing: the load that follows reports it). */
static enum lp_status hash_file(const char *dir, const char *name, uint64_t *h,
				unsigned char *block, size_t cap, struct lp_diag *d)
{
	char path[4096];
	FILE *fp;
	size_t got;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(fp = fopen(path, "rb")))
		return LP_OK;
	while ((got = fread(block, 1, cap, fp)) > 0)
		*h = lp_hash_bytes(block, got, *h);
	if (ferror(fp)) {
		fclose(fp);
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to read");
	}
	fclose(fp);
	return LP_OK;
}

static enum lp_status model_id(const char *dir, uint64_t *id, struct lp_diag *d)
{
	static const char *const files[] = { "config.json", "vocab.txt", "model.safetensors" };
	const size_t cap = 1 << 20;
	unsigned char *block = lp_mem_alloc(LP_MEM_SCRATCH, cap, d);
	enum lp_status st = LP_OK;

	if (!block)
		return LP_E_NOMEM;
	*id = SEED_ID ^ 0x64656e7365ULL; /* "dense" */
	for (size_t i = 0; i < 3 && st == LP_OK; i++)
		st = hash_file(dir, files[i], id, block, cap, d);
	lp_mem_free(block);
	return st;
}

enum lp_status lp_embedder_new_dense(const char *dir, struct lp_embedder **out,
				     struct lp_diag *d)
{
	char buf[4096], probe[4200];
	struct lp_bert *m = NULL;
	struct stat sb;
	uint64_t id;
	enum lp_status st;

	*out = NULL;
	if (!dir && !(dir = lp_embedder_dense_dir(buf, sizeof(buf))))
		return lp_diag_set(d, LP_E_MODEL, NULL, 0, 0,
				   "dense scorer needs the MiniLM model: run "
				   "scripts/fetch-embedder (or make models)");
	snprintf(probe, sizeof(probe), "%s/model.safetensors", dir);
	if (stat(probe, &sb) != 0)
		return lp_diag_set(d, LP_E_MODEL, dir, 0, 0,
				   "dense scorer needs the MiniLM model: run "
				   "scripts/fetch-embedder (or make models)");
	if ((st = model_id(dir, &id, d)) != LP_OK ||
	    (st = lp_bert_load(dir, &m, d)) != LP_OK)
		return st;
	*out = wrap(&dense_ops, lp_bert_dim(m), id, m, d);
	if (!*out) {
		lp_bert_free(m);
		return LP_E_NOMEM;
	}
	return LP_OK;
}

void lp_embedder_free(struct lp_embedder *e)
{
	if (!e)
		return;
	e->ops->release(e);
	lp_mem_free(e);
}

enum lp_status lp_embedder_embed(struct lp_embedder *e, const char *const *texts,
				 const size_t *lens, size_t n, float *out,
				 struct lp_diag *d)
{
	return e->ops->embed(e, texts, lens, n, out, d);
}
