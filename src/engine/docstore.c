/* docstore.c - the parsed documents and indexes runs share (docstore.h). */
#include "engine/docstore.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

/* A document, or an index (enum lp_docstore_index) from 1 on. */
enum kind { DOCUMENT, BM25, VECTORS };

struct entry {
	char key[LP_DOCSTORE_KEY_MAX + 1];
	enum kind kind;
	void *value;               /* struct lp_document (with its bytes),
				    * lp_bm25 or lp_vecindex */
	void *bytes_copy;          /* a document's bytes, tracked */
	char *name;                /* a document's name (its path points here) */
	size_t bytes;              /* tracked bytes it holds */
	unsigned long holders;
	unsigned long long used;   /* clock of the last get */
	struct entry *next;
};

struct lp_docstore {
	pthread_mutex_t lock;
	struct entry *head;
	struct lp_docstore_stats st;
	unsigned long long clock;
	int closing;
};

struct lp_docstore *lp_docstore_new(void)
{
	struct lp_docstore *s = calloc(1, sizeof(*s));

	if (s)
		pthread_mutex_init(&s->lock, NULL);
	return s;
}

/* Free an entry's value as shared memory: it was built under a scope that
 * ended, so it belongs to no run's scope. */
static void entry_free(struct entry *e)
{
	uint32_t scope = lp_mem_scope_swap(0);

	if (e->kind == DOCUMENT) {
		lp_document_release(e->value);
		free(e->value);
		lp_mem_free(e->bytes_copy);
	} else if (e->kind == BM25) {
		lp_bm25_free(e->value);
	} else {
		lp_vecindex_free(e->value);
	}
	lp_mem_scope_swap(scope);
	free(e->name);
	free(e);
}

static void unlink_entry(struct lp_docstore *s, struct entry **link)
{
	struct entry *e = *link;

	*link = e->next;
	s->st.bytes -= e->bytes;
	s->st.entries--;
	entry_free(e);
}

static void destroy(struct lp_docstore *s)
{
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void lp_docstore_free(struct lp_docstore *s)
{
	int last;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	for (struct entry **l = &s->head; *l;)
		if (!(*l)->holders)
			unlink_entry(s, l);
		else
			l = &(*l)->next;
	s->closing = 1;
	last = !s->head;
	pthread_mutex_unlock(&s->lock);
	if (last)
		destroy(s);
}

/* The entry `key` of `kind`, held, or NULL (under the lock). */
static struct entry *find(struct lp_docstore *s, const char *key, enum kind kind)
{
	for (struct entry *e = s->head; e; e = e->next)
		if (e->kind == kind && !strcmp(e->key, key)) {
			e->holders++;
			e->used = ++s->clock;
			s->st.hits++;
			return e;
		}
	return NULL;
}

/* Keep `e` (built without the lock), held, unless another thread kept the
 * same key meanwhile: that one is then held and `e` freed. */
static struct entry *keep(struct lp_docstore *s, struct entry *e)
{
	struct entry *had;

	pthread_mutex_lock(&s->lock);
	if ((had = find(s, e->key, e->kind))) {
		s->st.hits--; /* built in vain, not found */
		s->st.misses++;
		pthread_mutex_unlock(&s->lock);
		entry_free(e);
		return had;
	}
	e->holders = 1;
	e->used = ++s->clock;
	e->next = s->head;
	s->head = e;
	s->st.bytes += e->bytes;
	s->st.entries++;
	s->st.misses++;
	pthread_mutex_unlock(&s->lock);
	return e;
}

/* The kept value `key` of `kind`, held, in *value; else NULL there and a
 * new entry to build in *fresh. Returns LP_OK, or LP_E_NOMEM or
 * LP_E_INTERNAL (a key too long) with `d` set. */
static enum lp_status start(struct lp_docstore *s, const char *key, enum kind kind,
			    const void **value, struct entry **fresh, struct lp_diag *d)
{
	struct entry *e;

	*value = NULL;
	*fresh = NULL;
	pthread_mutex_lock(&s->lock);
	e = find(s, key, kind);
	pthread_mutex_unlock(&s->lock);
	if (e) {
		*value = e->value;
		return LP_OK;
	}
	if (strlen(key) > LP_DOCSTORE_KEY_MAX)
		return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0, "document store key too long");
	if (!(e = calloc(1, sizeof(*e))))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the document store");
	strcpy(e->key, key);
	e->kind = kind;
	*fresh = e;
	return LP_OK;
}

/* Begin building what the store keeps: a scope of its own, put on the
 * thread in place of the caller's (returned in *was). */
static uint32_t build_begin(uint32_t *was)
{
	*was = lp_mem_scope_swap(0);
	return lp_mem_scope_begin();
}

/* End it: the bytes it still holds (from now on shared memory). */
static size_t build_end(uint32_t scope, uint32_t was)
{
	size_t bytes = scope ? lp_mem_scope_own_total() : 0;

	lp_mem_scope_end(scope);
	lp_mem_scope_swap(was);
	return bytes;
}

enum lp_status lp_docstore_document(struct lp_docstore *s, const char *key, const char *name,
				    const void *data, size_t len, enum lp_invalid_utf8 mode,
				    enum lp_doc_format format, const struct lp_document **out,
				    struct lp_diag *d)
{
	struct entry *e;
	const void *had;
	enum lp_status st;
	uint32_t was, scope;

	st = start(s, key, DOCUMENT, &had, &e, d);
	if ((*out = had) || st)
		return st;
	scope = build_begin(&was);
	e->value = calloc(1, sizeof(struct lp_document));
	e->name = strdup(name ? name : "");
	if (!e->value || !e->name)
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a document");
	else if (!(e->bytes_copy = lp_mem_alloc(LP_MEM_DOC, len ? len : 1, d)))
		st = LP_E_NOMEM;
	else {
		memcpy(e->bytes_copy, data, len);
		st = lp_document_from_bytes_as(e->name, e->bytes_copy, len, mode, format, e->value,
					       d);
	}
	if (st) {
		lp_mem_free(e->bytes_copy);
		free(e->value);
		free(e->name);
		build_end(scope, was);
		free(e);
		return st;
	}
	e->bytes = build_end(scope, was);
	e = keep(s, e);
	*out = e->value;
	return LP_OK;
}

/* Free an index of `kind` that was not kept. */
static void index_free(enum kind kind, void *ix)
{
	if (kind == BM25)
		lp_bm25_free(ix);
	else
		lp_vecindex_free(ix);
}

enum lp_status lp_docstore_index(struct lp_docstore *s, const char *key,
				 enum lp_docstore_index kind,
				 enum lp_status (*build)(void *ctx, void **ix, struct lp_diag *d),
				 void *ctx, const void **out, struct lp_diag *d)
{
	enum kind k = kind == LP_DOCSTORE_BM25 ? BM25 : VECTORS;
	struct entry *e;
	void *ix = NULL;
	enum lp_status st;
	uint32_t was, scope;

	if ((st = start(s, key, k, out, &e, d)) || *out)
		return st;
	scope = build_begin(&was);
	st = build(ctx, &ix, d);
	/* finished, it is read by many runs at once and never changes */
	if (!st && k == BM25)
		st = lp_bm25_finish(ix, d);
	if (st) {
		index_free(k, ix);
		build_end(scope, was);
		free(e);
		return st;
	}
	e->value = ix;
	e->bytes = build_end(scope, was);
	e = keep(s, e);
	*out = e->value;
	return LP_OK;
}

void lp_docstore_put(struct lp_docstore *s, const void *value)
{
	int last = 0;

	if (!s || !value)
		return;
	pthread_mutex_lock(&s->lock);
	for (struct entry **l = &s->head; *l; l = &(*l)->next) {
		if ((*l)->value != value)
			continue;
		if (!--(*l)->holders && s->closing)
			unlink_entry(s, l);
		break;
	}
	last = s->closing && !s->head;
	pthread_mutex_unlock(&s->lock);
	if (last)
		destroy(s);
}

size_t lp_docstore_drop(struct lp_docstore *s, size_t bytes)
{
	size_t dropped = 0;

	pthread_mutex_lock(&s->lock);
	while (dropped < bytes) {
		struct entry **best = NULL;
		for (struct entry **l = &s->head; *l; l = &(*l)->next)
			if (!(*l)->holders && (!best || (*l)->used < (*best)->used))
				best = l;
		if (!best)
			break;
		dropped += (*best)->bytes;
		unlink_entry(s, best);
	}
	pthread_mutex_unlock(&s->lock);
	return dropped;
}

void lp_docstore_stats(struct lp_docstore *s, struct lp_docstore_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
}
