/*
 * arena.h - bump allocator for data that dies together (config trees,
 * per-run strings, chunk tables).
 *
 * Blocks are chained; nothing is freed individually; lp_arena_release frees
 * everything in one call. Pointers stay valid until then. Returned memory is
 * aligned for any type and zero-filled. Arena memory is tracked under the tag
 * LP_MEM_OTHER (see mem.h) so it counts against the budget.
 */
#ifndef LP_ARENA_H
#define LP_ARENA_H

#include <stddef.h>

struct lp_arena_block;

struct lp_arena {
	struct lp_arena_block *head;
	size_t used_bytes; /* bytes handed out, for reports */
};

void lp_arena_init(struct lp_arena *a);
/* Free every block; the arena can be reused after lp_arena_init. */
void lp_arena_release(struct lp_arena *a);

/* Zeroed memory of `size` bytes, or NULL when out of memory/budget. */
void *lp_arena_alloc(struct lp_arena *a, size_t size);
/* Arena copies of strings (NUL-terminated); NULL when out of memory. */
char *lp_arena_strdup(struct lp_arena *a, const char *s);
char *lp_arena_strndup(struct lp_arena *a, const char *s, size_t n);
/* printf into the arena. */
char *lp_arena_printf(struct lp_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
