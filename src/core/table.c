/*
 * table.c - the open-addressing hash table (table.h).
 */
#include "core/table.h"

#include <string.h>

static uint64_t hash_of(const unsigned char *slot)
{
	uint64_t h;

	memcpy(&h, slot, sizeof(h));
	return h;
}

void lp_table_init(struct lp_table *t, size_t slot_bytes, size_t first_cap,
		   enum lp_mem_tag tag)
{
	*t = (struct lp_table){ NULL, slot_bytes, 0, 0, first_cap, tag };
}

void lp_table_release(struct lp_table *t)
{
	lp_mem_free(t->slots);
	lp_table_init(t, t->slot_bytes, t->first_cap, t->tag);
}

int lp_table_needs_room(const struct lp_table *t)
{
	return (t->n + 1) * 2 > t->cap;
}

enum lp_status lp_table_grow(struct lp_table *t, struct lp_diag *d)
{
	size_t cap = t->cap ? 2 * t->cap : t->first_cap, mask = cap - 1;
	unsigned char *slots = lp_mem_calloc(t->tag, cap, t->slot_bytes, d);

	if (!slots)
		return LP_E_NOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		const unsigned char *s = t->slots + i * t->slot_bytes;
		uint64_t h = hash_of(s);
		size_t j;

		if (!h)
			continue;
		for (j = (size_t)h & mask; hash_of(slots + j * t->slot_bytes); j = (j + 1) & mask)
			;
		memcpy(slots + j * t->slot_bytes, s, t->slot_bytes);
	}
	lp_mem_free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return LP_OK;
}

void *lp_table_find(const struct lp_table *t, uint64_t h, lp_table_same_fn same, void *ctx)
{
	size_t mask = t->cap - 1;

	if (!t->cap)
		return NULL;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		unsigned char *s = t->slots + i * t->slot_bytes;
		uint64_t sh = hash_of(s);

		if (!sh || (sh == h && same(s, ctx)))
			return s;
	}
}

void lp_table_put(struct lp_table *t, void *slot, uint64_t h)
{
	memcpy(slot, &h, sizeof(h));
	t->n++;
}

void *lp_table_slot(const struct lp_table *t, size_t i)
{
	return t->slots + i * t->slot_bytes;
}
