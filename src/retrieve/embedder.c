#include "retrieve/embedder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fileio.h"
#include "core/log.h"
#include "core/mem.h"
#include "backend/backend.h"
#include "retrieve/bert.h"
#include "retrieve/embcache.h"
#include "core/hash.h"
#include "retrieve/hashembed.h"

/* Bump when the hashed features change, so old caches are not reused. */
#define HASH_VERSION 2 /* 2: a fullwidth capital is lower-cased after folding */
#define SEED_ID 0x6c70656d62640001ULL

/* The hashed embedder's state: its scratch, and the device backend that
 * runs the projection (NULL: the CPU, lp_hashembed_embed). */
struct hashe {
	struct lp_hashembed *h;
	struct lp_backend *be;
};

/* Host pairs of a batch: text i's at [off[i], off[i+1]). */
struct pairs {
	uint32_t *off, *bucket;
	float *val;
	size_t n, cap;
};

static enum lp_status pairs_add(struct pairs *p, const uint32_t *b, const float *v, size_t n,
				struct lp_diag *d)
{
	if (p->n + n > p->cap) {
		size_t cap = p->cap ? p->cap : 4096;
		while (cap < p->n + n)
			cap *= 2;
		uint32_t *nb = lp_mem_realloc(LP_MEM_SCRATCH, p->bucket, cap * sizeof(*nb), d);
		if (!nb)
			return LP_E_NOMEM;
		p->bucket = nb;
		float *nv = lp_mem_realloc(LP_MEM_SCRATCH, p->val, cap * sizeof(*nv), d);
		if (!nv)
			return LP_E_NOMEM;
		p->val = nv;
		p->cap = cap;
	}
	memcpy(p->bucket + p->n, b, n * sizeof(*b));
	memcpy(p->val + p->n, v, n * sizeof(*v));
	p->n += n;
	return LP_OK;
}

/* The features are hashed on the host; the projection (scatter into the
 * buckets and normalisation) of the whole batch is one op on the device. */
static enum lp_status hash_embed_dev(struct hashe *x, size_t dim, const char *const *texts,
				     const size_t *lens, size_t n, float *out, struct lp_diag *d)
{
	struct lp_backend *be = x->be;
	const struct lp_backend_ops *o = be->ops;
	struct pairs p = { 0 };
	struct lp_backend_buf *bo = NULL, *bb = NULL, *bv = NULL, *bout = NULL;
	enum lp_status st = LP_E_NOMEM;

	if (!(p.off = lp_mem_alloc(LP_MEM_SCRATCH, (n + 1) * sizeof(*p.off), d)))
		return LP_E_NOMEM;
	p.off[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const uint32_t *b;
		const float *v;
		size_t k;
		if ((st = lp_hashembed_pairs(x->h, texts[i], lens[i], &b, &v, &k, d)) ||
		    (st = pairs_add(&p, b, v, k, d)))
			goto out;
		p.off[i + 1] = (uint32_t)p.n;
	}
	st = LP_E_NOMEM;
	if (!(bo = o->buf_alloc(be, be->place, LP_MEM_SCRATCH, (n + 1) * 4, d)) ||
	    !(bb = o->buf_alloc(be, be->place, LP_MEM_SCRATCH, p.n * 4 + 4, d)) ||
	    !(bv = o->buf_alloc(be, be->place, LP_MEM_SCRATCH, p.n * 4 + 4, d)) ||
	    !(bout = o->buf_alloc(be, be->place, LP_MEM_SCRATCH, n * dim * 4, d)))
		goto out;
	o->upload(be, bo, 0, p.off, (n + 1) * 4);
	o->upload(be, bb, 0, p.bucket, p.n * 4);
	o->upload(be, bv, 0, p.val, p.n * 4);
	o->scatter_l2(be, bout->data, n, dim, bo->data, bb->data, bv->data);
	st = o->download(be, out, bout, 0, n * dim * 4, d);
out:
	o->buf_free(be, bo);
	o->buf_free(be, bb);
	o->buf_free(be, bv);
	o->buf_free(be, bout);
	lp_mem_free(p.off);
	lp_mem_free(p.bucket);
	lp_mem_free(p.val);
	return st;
}

static enum lp_status hash_embed(struct lp_embedder *e, const char *const *texts,
				 const size_t *lens, size_t n, float *out,
				 struct lp_diag *d)
{
	struct hashe *x = e->impl;

	if (x->be)
		return n ? hash_embed_dev(x, e->dim, texts, lens, n, out, d) : LP_OK;
	for (size_t i = 0; i < n; i++) {
		enum lp_status st = lp_hashembed_embed(x->h, texts[i], lens[i],
						       out + i * e->dim, NULL, d);
		if (st != LP_OK)
			return st;
	}
	return LP_OK;
}

static void hash_release(struct lp_embedder *e)
{
	struct hashe *x = e->impl;

	lp_hashembed_free(x->h);
	lp_backend_free(x->be);
	lp_mem_free(x);
}

static const struct lp_embedder_ops hash_ops = { "hash", hash_embed, hash_release, NULL };

/* The dense embedder's state: the model and the backend that runs it (a
 * device backend this embedder opened, or NULL: the model's own CPU
 * backend and its pool, one thread per online CPU), both kept for the
 * embedder's lifetime rather than made per call. */
struct dense {
	struct lp_bert *m;
	struct lp_backend *be;
};

static enum lp_status dense_embed(struct lp_embedder *e, const char *const *texts,
				  const size_t *lens, size_t n, float *out,
				  struct lp_diag *d)
{
	struct dense *x = e->impl;

	return lp_bert_embed(x->m, texts, lens, n, out, d);
}

static void dense_release(struct lp_embedder *e)
{
	struct dense *x = e->impl;

	lp_bert_free(x->m);
	lp_backend_free(x->be);
	lp_mem_free(x);
}

static enum lp_status dense_coverage(struct lp_embedder *e, const char *text, size_t len,
				     size_t *n_words, size_t *n_unknown, struct lp_diag *d)
{
	struct dense *x = e->impl;

	return lp_wordpiece_coverage(lp_bert_tokenizer(x->m), text, len, n_words, n_unknown, d);
}

static const struct lp_embedder_ops dense_ops = { "dense", dense_embed, dense_release,
						  dense_coverage };

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

static enum lp_status open_device(const char *device, struct lp_backend **be,
				  struct lp_diag *d);

enum lp_status lp_embedder_new_hash(size_t dim, struct lp_embedder **out,
				    struct lp_diag *d)
{
	return lp_embedder_new_hash_on(dim, NULL, out, d);
}

enum lp_status lp_embedder_new_hash_on(size_t dim, const char *device, struct lp_embedder **out,
				       struct lp_diag *d)
{
	struct lp_hashembed *h;
	struct hashe *x = NULL;
	struct lp_backend *be = NULL;
	uint64_t v[3] = { 0x68617368 /* "hash" */, HASH_VERSION, dim };
	enum lp_status st;

	*out = NULL;
	if (!(h = lp_hashembed_new(dim, d)))
		return d ? d->status : LP_E_NOMEM;
	if ((st = open_device(device, &be, d))) {
		lp_hashembed_free(h);
		return st;
	}
	if (!(x = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*x), d)) ||
	    !(*out = wrap(&hash_ops, dim, lp_hash_bytes(v, sizeof(v), SEED_ID), x, d))) {
		lp_mem_free(x);
		lp_hashembed_free(h);
		lp_backend_free(be);
		return LP_E_NOMEM;
	}
	x->h = h;
	x->be = be;
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
	struct stat st;
	FILE *fp;
	size_t got;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(fp = fopen(path, "rb")))
		return LP_OK;
	/* a device or pipe would be read without end: the load refuses it */
	if (fstat(fileno(fp), &st) || !S_ISREG(st.st_mode)) {
		fclose(fp);
		return lp_diag_set(d, LP_E_IO, path, 0, 0,
				   "not a regular file (a model file is mapped, not read from "
				   "a device or pipe)");
	}
	while ((got = fread(block, 1, cap, fp)) > 0)
		*h = lp_hash_bytes(block, got, *h);
	if (ferror(fp)) {
		fclose(fp);
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to read");
	}
	fclose(fp);
	return LP_OK;
}

static const char *const model_files[] = { "config.json", "vocab.txt", "model.safetensors" };
#define N_MODEL_FILES (sizeof(model_files) / sizeof(model_files[0]))

/* The id from the files' bytes: 0.1 s for MiniLM's 90 MB with the file in
 * the page cache, most of a run whose embeddings are all cached. */
static enum lp_status hash_model(const char *dir, uint64_t *id, struct lp_diag *d)
{
	const size_t cap = 1 << 20;
	unsigned char *block = lp_mem_alloc(LP_MEM_SCRATCH, cap, d);
	enum lp_status st = LP_OK;

	if (!block)
		return LP_E_NOMEM;
	*id = SEED_ID ^ 0x64656e7365ULL; /* "dense" */
	for (size_t i = 0; i < N_MODEL_FILES && st == LP_OK; i++)
		st = hash_file(dir, model_files[i], id, block, cap, d);
	lp_mem_free(block);
	return st;
}

/*
 * What identifies the model files' current bytes without reading them:
 * device, inode, size, mtime and ctime (both to the nanosecond) of each.
 * Any write changes ctime, which unlike mtime cannot be set back, so a
 * file edited in place, replaced, or touched gets another key. Returns 0
 * when a file cannot be stat'ed (no memo then).
 */
static uint64_t files_key(const char *dir)
{
	uint64_t v[N_MODEL_FILES][7];
	char path[4096];
	struct stat sb;

	for (size_t i = 0; i < N_MODEL_FILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, model_files[i]);
		if (stat(path, &sb) != 0)
			return 0;
		v[i][0] = (uint64_t)sb.st_dev;
		v[i][1] = (uint64_t)sb.st_ino;
		v[i][2] = (uint64_t)sb.st_size;
		v[i][3] = (uint64_t)sb.st_mtim.tv_sec;
		v[i][4] = (uint64_t)sb.st_mtim.tv_nsec;
		v[i][5] = (uint64_t)sb.st_ctim.tv_sec;
		v[i][6] = (uint64_t)sb.st_ctim.tv_nsec;
	}
	return lp_hash_bytes(v, sizeof(v), SEED_ID ^ 0x6b6579ULL /* "key" */);
}

#define MEMO_FORMAT "lpipe model id 1 key %016llx id %016llx\n"

/* DIR/model-KEY.id in the embedding cache directory, or NULL. */
static const char *memo_path(uint64_t key, char *buf, size_t cap)
{
	char dir[4096];
	int n;

	if (!key || !lp_embcache_default_dir(dir, sizeof(dir)))
		return NULL;
	n = snprintf(buf, cap, "%s/model-%016llx.id", dir, (unsigned long long)key);
	return n > 0 && (size_t)n < cap ? buf : NULL;
}

static int memo_read(uint64_t key, uint64_t *id)
{
	char path[4200], line[128];
	unsigned long long k, v;
	FILE *fp;
	int ok;

	if (!memo_path(key, path, sizeof(path)) || !(fp = fopen(path, "r")))
		return 0;
	ok = fgets(line, sizeof(line), fp) && sscanf(line, MEMO_FORMAT, &k, &v) == 2 && k == key;
	fclose(fp);
	if (ok)
		*id = v;
	return ok;
}

/* A memo that cannot be written costs the next run 0.1 s, nothing more:
 * no error (the directory appears with the first embedding cache saved). */
static void memo_write(uint64_t key, uint64_t id)
{
	char path[4200], line[128];
	struct lp_diag d;
	int n;

	if (!memo_path(key, path, sizeof(path)))
		return;
	n = snprintf(line, sizeof(line), MEMO_FORMAT, (unsigned long long)key,
		     (unsigned long long)id);
	lp_diag_init(&d);
	if (lp_file_write_atomic(path, line, (size_t)n, &d) != LP_OK)
		lp_debug("embedder: model id not memoized: '%s': %s", d.file, d.msg);
}

/* The id, from the memo when the files are unchanged since it was written. */
static enum lp_status model_id(const char *dir, uint64_t *id, struct lp_diag *d)
{
	uint64_t key = files_key(dir);
	enum lp_status st;

	if (key && memo_read(key, id))
		return LP_OK;
	if ((st = hash_model(dir, id, d)) == LP_OK && key)
		memo_write(key, *id);
	return st;
}

enum lp_status lp_embedder_new_dense(const char *dir, struct lp_embedder **out,
				     struct lp_diag *d)
{
	return lp_embedder_new_dense_on(dir, NULL, out, d);
}

/* The backend for `device` ("cuda", "auto"): *be NULL for the CPU (the
 * embedder then runs on the host: the dense model on a CPU backend of its
 * own). */
static enum lp_status open_device(const char *device, struct lp_backend **be, struct lp_diag *d)
{
	struct lp_backend_params p = lp_backend_default_params();
	char why[512] = "";
	enum lp_status st;

	*be = NULL;
	if (!device || !strcmp(device, "cpu"))
		return LP_OK;
	if (!strcmp(device, "auto")) {
		if ((st = lp_backend_open_auto(&p, be, why, sizeof(why), d)))
			return st;
		if (!strcmp((*be)->name, "cpu")) {
			lp_debug("embedder: dense model on the CPU (%s)", why);
			lp_backend_free(*be);
			*be = NULL;
		}
	} else if ((st = lp_backend_open(device, &p, be, d))) {
		return st;
	}
	if (*be)
		lp_debug("embedder: dense model on %s", (*be)->device);
	return LP_OK;
}

enum lp_status lp_embedder_new_dense_on(const char *dir, const char *device,
					struct lp_embedder **out, struct lp_diag *d)
{
	char buf[4096], probe[4200];
	struct lp_bert *m = NULL;
	struct lp_backend *be = NULL;
	struct dense *x = NULL;
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
	if ((st = model_id(dir, &id, d)) != LP_OK || (st = open_device(device, &be, d)) != LP_OK)
		return st;
	if ((st = lp_bert_load_on(dir, be, &m, d)) != LP_OK) {
		lp_backend_free(be);
		return st;
	}
	if (!(x = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*x), d)) ||
	    !(*out = wrap(&dense_ops, lp_bert_dim(m), id, x, d))) {
		lp_mem_free(x);
		lp_bert_free(m);
		lp_backend_free(be);
		return LP_E_NOMEM;
	}
	x->m = m;
	x->be = be;
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

struct lp_backend *lp_embedder_backend(const struct lp_embedder *e)
{
	if (e->ops == &hash_ops)
		return ((struct hashe *)e->impl)->be;
	return e->ops == &dense_ops ? ((struct dense *)e->impl)->be : NULL;
}

enum lp_status lp_embedder_coverage(struct lp_embedder *e, const char *text, size_t len,
				    size_t *n_words, size_t *n_unknown, struct lp_diag *d)
{
	return e->ops->coverage ? e->ops->coverage(e, text, len, n_words, n_unknown, d) : LP_OK;
}
