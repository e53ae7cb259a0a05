/*
 * table.h - an open-addressing hash table whose slots the caller defines:
 * the one table behind the extract stage's items, the keyphrase
 * extractor's phrases and words, and the plain-text reader's word list.
 *
 * A slot is a struct of the caller's that opens with its key's 64-bit
 * hash (uint64_t, never 0); a hash of 0 marks an empty slot. The table
 * compares hashes and lets the caller compare keys, so it knows nothing of
 * what a key is or where its bytes live. Probing is linear, the capacity a
 * power of two, and a caller grows the table before the load would pass
 * one half (lp_table_needs_room), so a probe always ends at an empty slot.
 * Slots move when the table grows; they are visited in slot order, which
 * depends only on the hashes and the capacity.
 *
 * The slots are tracked memory under the tag given to lp_table_init.
 */
#ifndef LP_CORE_TABLE_H
#define LP_CORE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"
#include "core/status.h"

struct lp_table {
	unsigned char *slots;  /* [cap * slot_bytes], zeroed when made */
	size_t slot_bytes;     /* size of the caller's slot struct */
	size_t cap, n;         /* slots (0 or a power of two); slots in use */
	size_t first_cap;      /* capacity of the first allocation */
	enum lp_mem_tag tag;
};

/* An empty table of slot_bytes-byte slots (>= sizeof(uint64_t)); the first
 * growth makes first_cap slots (a power of two). Allocates nothing. */
void lp_table_init(struct lp_table *t, size_t slot_bytes, size_t first_cap,
		   enum lp_mem_tag tag);

/* Free the slots; t is then empty (as after lp_table_init). */
void lp_table_release(struct lp_table *t);

/* 1 when one more slot in use would fill more than half the table (or it
 * has none yet): lp_table_grow it first. */
int lp_table_needs_room(const struct lp_table *t);

/* Double the capacity (or make first_cap slots), moving every used slot.
 * LP_OK, or LP_E_NOMEM with d filled and t unchanged. */
enum lp_status lp_table_grow(struct lp_table *t, struct lp_diag *d);

/* The key's test: 1 when `slot`, whose hash equals the key's, holds the
 * key described by ctx. */
typedef int (*lp_table_same_fn)(const void *slot, void *ctx);

/*
 * The slot of the key with hash h (nonzero) that `same` accepts, or else
 * the empty slot where that key would go (its hash 0: fill the slot and
 * call lp_table_put). `same` is called only on slots whose hash is h.
 * NULL when the table has no slots.
 */
void *lp_table_find(const struct lp_table *t, uint64_t h, lp_table_same_fn same, void *ctx);

/* Mark the empty slot `slot` from lp_table_find as used by hash h. */
void lp_table_put(struct lp_table *t, void *slot, uint64_t h);

/* Slot i (i < t->cap), used when its hash is nonzero: for a walk over all. */
void *lp_table_slot(const struct lp_table *t, size_t i);

#endif
