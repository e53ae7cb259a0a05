#include "retrieve/embcache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fileio.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/hash.h"

#define MAGIC "LPEMBC01"
#define HEADER_BYTES 32
#define SEED_HEADER 0x6c70656d62680001ULL
#define SEED_RECORD 0x6c70656d62720001ULL
#define SEED_KEY    0x6c70656d626b0001ULL
#define EMPTY ((uint32_t)-1)

struct lp_embcache {
	char *path;
	size_t dim;
	uint64_t model_id;
	uint64_t *keys;          /* [cap] */
	unsigned char *used;     /* [cap] asked for or put by this run */
	float *vecs;             /* [cap, dim], LP_MEM_INDEX */
	size_t n, cap;
	uint32_t *slots;         /* [n_slots] record numbers, EMPTY when free */
	size_t n_slots;          /* a power of two, at least 2 * cap */
	int dirty;
	struct lp_embcache_stats st;
};

const char *lp_embcache_default_dir(char *buf, size_t cap)
{
	const char *env = getenv("LPIPE_CACHE_DIR"), *home = getenv("HOME");
	int n;

	if (env && *env)
		n = snprintf(buf, cap, "%s", env);
	else if (home && *home)
		n = snprintf(buf, cap, "%s/.cache/lpipe/embeddings", home);
	else
		return NULL;
	return n > 0 && (size_t)n < cap ? buf : NULL;
}

uint64_t lp_embcache_key(const char *text, size_t len)
{
	return lp_hash_bytes(text, len, SEED_KEY);
}

static size_t record_bytes(size_t dim)
{
	return 16 + dim * sizeof(float);
}

static size_t slot_of(const struct lp_embcache *c, uint64_t key)
{
	size_t s = (size_t)(lp_hash_mix(key) & (c->n_slots - 1));

	while (c->slots[s] != EMPTY && c->keys[c->slots[s]] != key)
		s = (s + 1) & (c->n_slots - 1);
	return s;
}

/* Room for one more record: double the arrays and rebuild the table. */
static enum lp_status grow(struct lp_embcache *c, struct lp_diag *d)
{
	size_t cap = c->cap ? 2 * c->cap : 64, n_slots = 4 * cap;
	uint64_t *keys = lp_mem_realloc(LP_MEM_INDEX, c->keys, cap * sizeof(*keys), d);
	unsigned char *used;
	float *vecs;
	uint32_t *slots;

	if (!keys)
		return LP_E_NOMEM;
	c->keys = keys;
	if (!(used = lp_mem_realloc(LP_MEM_INDEX, c->used, cap, d)))
		return LP_E_NOMEM;
	c->used = used;
	if (!(vecs = lp_mem_realloc(LP_MEM_INDEX, c->vecs, cap * c->dim * sizeof(*vecs), d)))
		return LP_E_NOMEM;
	c->vecs = vecs;
	if (!(slots = lp_mem_alloc(LP_MEM_INDEX, n_slots * sizeof(*slots), d)))
		return LP_E_NOMEM;
	lp_mem_free(c->slots);
	c->slots = slots;
	c->n_slots = n_slots;
	c->cap = cap;
	memset(slots, 0xff, n_slots * sizeof(*slots));
	for (size_t i = 0; i < c->n; i++)
		slots[slot_of(c, c->keys[i])] = (uint32_t)i;
	return LP_OK;
}

static enum lp_status store(struct lp_embcache *c, uint64_t key, const float *vec,
			    int used, struct lp_diag *d)
{
	size_t s;
	uint32_t r;

	if (c->n == c->cap && grow(c, d) != LP_OK)
		return LP_E_NOMEM;
	s = slot_of(c, key);
	if (c->slots[s] == EMPTY) {
		r = (uint32_t)c->n++;
		c->slots[s] = r;
		c->keys[r] = key;
		c->used[r] = 0;
	} else {
		r = c->slots[s];
	}
	/* memmove: load() passes the free row itself as vec. */
	memmove(c->vecs + (size_t)r * c->dim, vec, c->dim * sizeof(*vec));
	c->used[r] |= (unsigned char)used;
	return LP_OK;
}

static void header(unsigned char *h, size_t dim, uint64_t model_id)
{
	uint32_t d32 = (uint32_t)dim, zero = 0;
	uint64_t check;

	memcpy(h, MAGIC, 8);
	memcpy(h + 8, &d32, 4);
	memcpy(h + 12, &zero, 4);
	memcpy(h + 16, &model_id, 8);
	check = lp_hash_bytes(h, 24, SEED_HEADER);
	memcpy(h + 24, &check, 8);
}

/* Read the records of a mapped file into the cache. */
static enum lp_status load(struct lp_embcache *c, const unsigned char *p, size_t len,
			   struct lp_diag *d)
{
	unsigned char want[HEADER_BYTES];
	size_t rb = record_bytes(c->dim), off;

	header(want, c->dim, c->model_id);
	if (len < HEADER_BYTES || memcmp(p, want, HEADER_BYTES) != 0) {
		lp_debug("embedding cache '%s': header does not match; discarding it", c->path);
		c->st.discarded = 1;
		c->dirty = 1;
		return LP_OK;
	}
	for (off = HEADER_BYTES; len - off >= rb; off += rb) {
		uint64_t key, check;
		memcpy(&key, p + off, 8);
		memcpy(&check, p + off + rb - 8, 8);
		if (lp_hash_bytes(p + off, rb - 8, SEED_RECORD) != check) {
			lp_debug("embedding cache '%s': record at byte %zu is corrupt; "
				 "it will be recomputed", c->path, off);
			c->st.corrupt++;
			c->dirty = 1;
			continue;
		}
		/* memcpy: the mapping gives no float alignment past the header. */
		if (c->n == c->cap && grow(c, d) != LP_OK)
			return LP_E_NOMEM;
		{
			float *tmp = c->vecs + c->n * c->dim; /* the next free row */
			memcpy(tmp, p + off + 8, c->dim * sizeof(float));
			if (store(c, key, tmp, 0, d) != LP_OK)
				return LP_E_NOMEM;
		}
		c->st.loaded++;
	}
	if (off < len) {
		lp_debug("embedding cache '%s': truncated record at byte %zu; dropped",
			 c->path, off);
		c->st.truncated = 1;
		c->dirty = 1;
	}
	return LP_OK;
}

enum lp_status lp_embcache_open(const char *dir, uint64_t model_id, uint64_t doc_id,
				size_t dim, struct lp_embcache **out, struct lp_diag *d)
{
	struct lp_embcache *c = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*c), d);
	struct lp_mapped m;
	struct lp_diag ignored;
	struct stat sb;
	size_t plen = strlen(dir) + 48;
	enum lp_status st = LP_OK;

	*out = NULL;
	if (!c)
		return LP_E_NOMEM;
	c->dim = dim;
	c->model_id = model_id;
	c->path = lp_mem_alloc(LP_MEM_OTHER, plen, d);
	if (!c->path || grow(c, d) != LP_OK) {
		lp_embcache_free(c);
		return LP_E_NOMEM;
	}
	snprintf(c->path, plen, "%s/%016llx-%016llx.emb", dir,
		 (unsigned long long)model_id, (unsigned long long)doc_id);
	lp_diag_init(&ignored);
	if (stat(c->path, &sb) != 0 && errno == ENOENT) {
		/* Nothing cached yet. */
	} else if (lp_file_map(c->path, LP_FILE_CACHE, LP_MEM_INDEX, &m, &ignored) == LP_OK) {
		st = load(c, m.data, m.len, d);
		lp_file_unmap(&m);
	} else {
		lp_debug("embedding cache '%s': %s; starting empty", c->path, ignored.msg);
		c->dirty = 1;
	}
	if (st != LP_OK) {
		lp_embcache_free(c);
		return st;
	}
	*out = c;
	return LP_OK;
}

void lp_embcache_free(struct lp_embcache *c)
{
	if (!c)
		return;
	lp_mem_free(c->path);
	lp_mem_free(c->keys);
	lp_mem_free(c->used);
	lp_mem_free(c->vecs);
	lp_mem_free(c->slots);
	lp_mem_free(c);
}

int lp_embcache_get(struct lp_embcache *c, uint64_t key, float *out)
{
	size_t s = slot_of(c, key);
	uint32_t r = c->slots[s];

	if (r == EMPTY) {
		c->st.misses++;
		return 0;
	}
	memcpy(out, c->vecs + (size_t)r * c->dim, c->dim * sizeof(*out));
	c->used[r] = 1;
	c->st.hits++;
	return 1;
}

enum lp_status lp_embcache_put(struct lp_embcache *c, uint64_t key, const float *vec,
			       struct lp_diag *d)
{
	enum lp_status st = store(c, key, vec, 1, d);

	if (st == LP_OK)
		c->dirty = 1;
	return st;
}

/* mkdir -p for the directory part of path. */
static int make_dirs(const char *path)
{
	char tmp[4096];
	size_t len = strlen(path);

	if (len >= sizeof(tmp))
		return -1;
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static int write_record(FILE *fp, const struct lp_embcache *c, size_t r,
			unsigned char *rec)
{
	size_t rb = record_bytes(c->dim);
	uint64_t check;

	memcpy(rec, &c->keys[r], 8);
	memcpy(rec + 8, c->vecs + r * c->dim, c->dim * sizeof(float));
	check = lp_hash_bytes(rec, rb - 8, SEED_RECORD);
	memcpy(rec + rb - 8, &check, 8);
	return fwrite(rec, 1, rb, fp) == rb ? 0 : -1;
}

enum lp_status lp_embcache_save(struct lp_embcache *c, struct lp_diag *d)
{
	unsigned char h[HEADER_BYTES], *rec;
	struct lp_afile af = { 0 };
	int keep_unused = c->n <= LP_EMBCACHE_MAX_RECORDS, bad = 0;
	enum lp_status st;

	if (!c->dirty)
		return LP_OK;
	if (make_dirs(c->path) != 0)
		return lp_diag_set(d, LP_E_IO, c->path, 0, 0, "unable to create directory: %s",
				   strerror(errno));
	rec = lp_mem_alloc(LP_MEM_SCRATCH, record_bytes(c->dim), d);
	if (!rec)
		return LP_E_NOMEM;
	if ((st = lp_afile_open(&af, c->path, d)) != LP_OK) {
		lp_mem_free(rec);
		return st;
	}
	header(h, c->dim, c->model_id);
	bad = fwrite(h, 1, sizeof(h), af.fp) != sizeof(h);
	for (size_t r = 0, written = 0; r < c->n && !bad; r++) {
		if (!c->used[r] && !keep_unused)
			continue;
		if (written++ >= LP_EMBCACHE_MAX_RECORDS)
			break;
		bad = write_record(af.fp, c, r, rec) != 0;
	}
	lp_mem_free(rec);
	if (bad) {
		lp_afile_abort(&af);
		return lp_diag_set(d, LP_E_IO, c->path, 0, 0, "unable to write: %s",
				   strerror(errno));
	}
	st = lp_afile_commit(&af, d);
	if (st == LP_OK)
		c->dirty = 0;
	return st;
}

const char *lp_embcache_path(const struct lp_embcache *c)
{
	return c->path;
}

struct lp_embcache_stats lp_embcache_stats(const struct lp_embcache *c)
{
	return c->st;
}
