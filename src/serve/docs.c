/* docs.c - the document store (docs.h). */
#include "serve/docs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/sha256.h"
#include "text/lang.h"

struct entry {
	struct lp_serve_doc doc;   /* first: a doc pointer is its entry */
	unsigned long refs;
	unsigned long long used;   /* lru clock when last asked for */
	struct entry *next;
};

struct lp_serve_docs {
	pthread_mutex_t lock;
	struct entry *head;
	size_t cap, bytes, count;
	unsigned long long clock;
};

struct lp_serve_docs *lp_serve_docs_new(size_t cap)
{
	struct lp_serve_docs *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->cap = cap;
	return s;
}

static void drop(struct lp_serve_docs *s, struct entry **link)
{
	struct entry *e = *link;

	*link = e->next;
	s->bytes -= e->doc.len;
	s->count--;
	lp_mem_free((void *)e->doc.data);
	free(e);
}

void lp_serve_docs_free(struct lp_serve_docs *s)
{
	if (!s)
		return;
	while (s->head)
		drop(s, &s->head);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Drop the least recently used unheld document; 0 when none is left. */
static int drop_lru(struct lp_serve_docs *s)
{
	struct entry **best = NULL;

	for (struct entry **l = &s->head; *l; l = &(*l)->next)
		if (!(*l)->refs && (!best || (*l)->used < (*best)->used))
			best = l;
	if (!best)
		return 0;
	drop(s, best);
	return 1;
}

static struct entry *find(struct lp_serve_docs *s, const char *id)
{
	for (struct entry *e = s->head; e; e = e->next)
		if (!strcmp(e->doc.id, id))
			return e;
	return NULL;
}

void lp_serve_docs_clean_name(const char *name, char *out)
{
	const char *base = name ? strrchr(name, '/') : NULL;
	size_t j = 0;

	base = base ? base + 1 : name ? name : "";
	for (; *base && j < LP_SERVE_DOC_NAME_MAX; base++) {
		char c = *base;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-' || (c == '.' && j > 0))
			out[j++] = c;
	}
	out[j] = 0;
}

enum lp_status lp_serve_docs_add(struct lp_serve_docs *s, const void *data, size_t len,
				 const char *name, char id[65], int *created, struct lp_diag *d)
{
	struct entry *e;
	void *copy = NULL;
	char need[32], cap[32];

	*created = 0;
	if (!len)
		return lp_diag_set(d, LP_E_INPUT, NULL, 0, 0, "the document is empty");
	lp_sha256_hex(data, len, id);
	pthread_mutex_lock(&s->lock);
	if ((e = find(s, id))) {
		e->used = ++s->clock;
		pthread_mutex_unlock(&s->lock);
		return LP_OK;
	}
	if (len > s->cap) {
		pthread_mutex_unlock(&s->lock);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				   "the document needs %s, more than the document cache's %s",
				   lp_mem_format_size(len, need, sizeof(need)),
				   lp_mem_format_size(s->cap, cap, sizeof(cap)));
	}
	while (s->bytes + len > s->cap && drop_lru(s))
		;
	if (s->bytes + len <= s->cap)
		copy = lp_mem_alloc(LP_MEM_DOC, len, d);
	e = copy ? calloc(1, sizeof(*e)) : NULL;
	if (!e) {
		lp_mem_free(copy);
		pthread_mutex_unlock(&s->lock);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				   "no room for a document of %s: the cache of %s is held by runs",
				   lp_mem_format_size(len, need, sizeof(need)),
				   lp_mem_format_size(s->cap, cap, sizeof(cap)));
	}
	memcpy(copy, data, len);
	memcpy(e->doc.id, id, 65);
	lp_serve_docs_clean_name(name, e->doc.name);
	e->doc.data = copy;
	e->doc.len = len;
	snprintf(e->doc.lang, sizeof(e->doc.lang), "%s",
		 lp_lang_tag(lp_lang_script(copy, len < 65536 ? len : 65536)));
	e->used = ++s->clock;
	e->next = s->head;
	s->head = e;
	s->bytes += len;
	s->count++;
	*created = 1;
	pthread_mutex_unlock(&s->lock);
	return LP_OK;
}

const struct lp_serve_doc *lp_serve_docs_get(struct lp_serve_docs *s, const char *id)
{
	struct entry *e;

	pthread_mutex_lock(&s->lock);
	if ((e = find(s, id))) {
		e->refs++;
		e->used = ++s->clock;
	}
	pthread_mutex_unlock(&s->lock);
	return e ? &e->doc : NULL;
}

void lp_serve_docs_put(struct lp_serve_docs *s, const struct lp_serve_doc *doc)
{
	if (!doc)
		return;
	pthread_mutex_lock(&s->lock);
	((struct entry *)doc)->refs--;
	pthread_mutex_unlock(&s->lock);
}

void lp_serve_docs_usage(struct lp_serve_docs *s, size_t *bytes, size_t *count)
{
	pthread_mutex_lock(&s->lock);
	*bytes = s->bytes;
	*count = s->count;
	pthread_mutex_unlock(&s->lock);
}

size_t lp_serve_docs_cap(const struct lp_serve_docs *s)
{
	return s->cap;
}
