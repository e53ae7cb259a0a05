#include "core/arena.h"
#include "core/mem.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ARENA_BLOCK_BYTES (64 * 1024)
#define ARENA_ALIGN 16

struct lp_arena_block {
	struct lp_arena_block *next;
	size_t cap;   /* usable bytes after the header */
	size_t used;
	max_align_t data[];
};

void lp_arena_init(struct lp_arena *a)
{
	a->head = NULL;
	a->used_bytes = 0;
}

void lp_arena_release(struct lp_arena *a)
{
	struct lp_arena_block *b = a->head;

	while (b) {
		struct lp_arena_block *next = b->next;
		lp_mem_free(b);
		b = next;
	}
	a->head = NULL;
	a->used_bytes = 0;
}

void *lp_arena_alloc(struct lp_arena *a, size_t size)
{
	struct lp_arena_block *b = a->head;
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (need < size)
		return NULL;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > ARENA_BLOCK_BYTES ? need : ARENA_BLOCK_BYTES;
		if (cap > SIZE_MAX - sizeof(*b))
			return NULL;
		b = lp_mem_alloc(LP_MEM_OTHER, sizeof(*b) + cap, NULL);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	p = (char *)b->data + b->used;
	b->used += need;
	a->used_bytes += need;
	memset(p, 0, size);
	return p;
}

char *lp_arena_strndup(struct lp_arena *a, const char *s, size_t n)
{
	char *p = lp_arena_alloc(a, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

char *lp_arena_strdup(struct lp_arena *a, const char *s)
{
	return lp_arena_strndup(a, s, strlen(s));
}

char *lp_arena_printf(struct lp_arena *a, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	p = lp_arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
