/*
 * override.c - --set KEY=VALUE on the node tree (see override.h).
 */
#include "config/override.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

#define SET_FILE "--set"
#define MAX_SEGMENTS 32

struct set_ctx {
	const char *set;      /* the whole argument */
	int number;           /* which --set, 1-based: the "line" of messages */
	struct lp_arena *arena;
	struct lp_diag *d;
};

/* One path segment: set[start .. start+len). */
struct segment {
	size_t start, len;
};

static enum lp_status set_error(struct set_ctx *s, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum lp_status set_error(struct set_ctx *s, size_t at, const char *fmt, ...)
{
	char msg[sizeof(s->d->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return lp_diag_set(s->d, LP_E_CONFIG, SET_FILE, s->number, (int)at + 1, "%s", msg);
}

static enum lp_status set_nomem(struct set_ctx *s)
{
	return lp_diag_set(s->d, LP_E_NOMEM, SET_FILE, s->number, 1, "out of memory");
}

static struct lp_node *new_node(struct set_ctx *s, enum lp_node_kind kind, size_t at)
{
	struct lp_node *n = lp_arena_alloc(s->arena, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->line = s->number;
		n->col = (int)at + 1;
		n->file = SET_FILE;
		n->scalar = "";
	}
	return n;
}

static int seg_is(const struct set_ctx *s, const struct segment *g, const char *word)
{
	return strlen(word) == g->len && !memcmp(s->set + g->start, word, g->len);
}

/* Split "a.b.c" (up to `end`) into segments; an empty one is an error. */
static enum lp_status split_path(struct set_ctx *s, size_t end, struct segment *segs,
				 size_t *n)
{
	size_t start = 0;

	*n = 0;
	for (size_t i = 0; i <= end; i++) {
		if (i < end && s->set[i] != '.')
			continue;
		if (i == start)
			return set_error(s, start, "empty key in the path of '--set %.*s'",
					 (int)end, s->set);
		if (*n == MAX_SEGMENTS)
			return set_error(s, start, "path has more than %d keys", MAX_SEGMENTS);
		segs[*n].start = start;
		segs[(*n)++].len = i - start;
		start = i + 1;
	}
	return LP_OK;
}

static enum lp_status parse_value(struct set_ctx *s, size_t value_at,
				  const struct lp_vars *vars, struct lp_node **v)
{
	const char *text = s->set + value_at;

	return lp_yaml_parse_value(SET_FILE, text, strlen(text), s->number, (int)value_at + 1,
				   vars, s->arena, v, s->d);
}

/* Add key `g` with value `v` to `map`. */
static enum lp_status map_add(struct set_ctx *s, struct lp_node *map,
			      const struct segment *g, struct lp_node *v)
{
	struct lp_node **keys = lp_arena_alloc(s->arena, (map->n + 1) * sizeof(*keys));
	struct lp_node **values = lp_arena_alloc(s->arena, (map->n + 1) * sizeof(*values));
	struct lp_node *k = new_node(s, LP_NODE_SCALAR, g->start);

	if (!keys || !values || !k ||
	    !(k->scalar = lp_arena_strndup(s->arena, s->set + g->start, g->len)))
		return set_nomem(s);
	if (map->n) {
		memcpy(keys, map->keys, map->n * sizeof(*keys));
		memcpy(values, map->values, map->n * sizeof(*values));
	}
	keys[map->n] = k;
	values[map->n] = v;
	map->keys = keys;
	map->values = values;
	map->n++;
	return LP_OK;
}

/* Index of a decimal segment, or -1 when it is not a number. */
static long seg_index(const struct set_ctx *s, const struct segment *g)
{
	long v = 0;

	if (g->len == 0 || g->len > 9)
		return -1;
	for (size_t i = 0; i < g->len; i++) {
		char c = s->set[g->start + i];
		if (!isdigit((unsigned char)c))
			return -1;
		v = v * 10 + (c - '0');
	}
	return v;
}

/* Error for a stage segment that is neither an index nor a kind present. */
static enum lp_status no_such_stage(struct set_ctx *s, const struct lp_node *seq,
				    const struct segment *g)
{
	const char *kinds[65];
	char word[128];
	const char *hint;
	size_t n = 0;

	for (size_t i = 0; i < seq->n && n < 64; i++)
		if (seq->values[i]->kind == LP_NODE_MAP && seq->values[i]->n == 1)
			kinds[n++] = seq->values[i]->keys[0]->scalar;
	kinds[n] = NULL;
	snprintf(word, sizeof(word), "%.*s", (int)g->len, s->set + g->start);
	hint = lp_cfg_suggest(word, kinds);
	if (hint)
		return set_error(s, g->start, "no stage '%s' in this pipeline (did you mean '%s'?)",
				 word, hint);
	return set_error(s, g->start, "no stage '%s' in this pipeline: give a stage kind "
			 "or an index from 0 to %zu", word, seq->n ? seq->n - 1 : 0);
}

/*
 * The slot a segment names inside a sequence: for `stages`, the options of
 * the selected stage; elsewhere the item itself. *slot is where to store.
 */
static enum lp_status seq_slot(struct set_ctx *s, struct lp_node *seq, int is_stages,
			       const struct segment *g, size_t path_end,
			       struct lp_node ***slot)
{
	long idx = seg_index(s, g);
	struct lp_node *item;

	if (idx < 0 && !is_stages)
		return set_error(s, g->start, "'%.*s' is a sequence: select an item by its index",
				 (int)path_end, s->set);
	if (idx >= (long)seq->n)
		return set_error(s, g->start, "index %ld is out of range ('%.*s' has %zu items)",
				 idx, (int)path_end, s->set, seq->n);
	if (idx < 0) {
		for (size_t i = 0; i < seq->n && idx < 0; i++) {
			item = seq->values[i];
			if (item->kind == LP_NODE_MAP && item->n == 1 &&
			    seg_is(s, g, item->keys[0]->scalar))
				idx = (long)i;
		}
		if (idx < 0)
			return no_such_stage(s, seq, g);
	}
	item = seq->values[idx];
	if (is_stages && item->kind == LP_NODE_MAP && item->n == 1)
		*slot = &item->values[0];
	else
		*slot = &seq->values[idx];
	return LP_OK;
}

/* The slot for segment `g` in `cur` (a map or a sequence), creating a
 * missing key with a null value. */
static enum lp_status find_slot(struct set_ctx *s, struct lp_node *cur, int is_stages,
				const struct segment *g, struct lp_node ***slot)
{
	size_t path_end = g->start ? g->start - 1 : 0;

	if (cur->kind == LP_NODE_SEQ)
		return seq_slot(s, cur, is_stages, g, path_end, slot);
	if (cur->kind != LP_NODE_MAP)
		return set_error(s, g->start, "cannot set '%.*s' inside '%.*s', which is a scalar",
				 (int)g->len, s->set + g->start, (int)path_end, s->set);
	for (size_t i = 0; i < cur->n; i++)
		if (seg_is(s, g, cur->keys[i]->scalar)) {
			*slot = &cur->values[i];
			return LP_OK;
		}
	{
		struct lp_node *null = new_node(s, LP_NODE_SCALAR, g->start);
		enum lp_status st = null ? map_add(s, cur, g, null) : set_nomem(s);
		if (st != LP_OK)
			return st;
		*slot = &cur->values[cur->n - 1];
	}
	return LP_OK;
}

enum lp_status lp_override_apply(struct lp_node *root, const char *set, size_t number,
				 const struct lp_vars *vars, struct lp_arena *arena,
				 struct lp_diag *d)
{
	struct set_ctx s = { .set = set, .number = (int)number, .arena = arena, .d = d };
	struct segment segs[MAX_SEGMENTS];
	const char *eq = strchr(set, '=');
	struct lp_node *cur = root, *v, **slot = NULL;
	size_t n;
	enum lp_status st;

	if (!eq)
		return set_error(&s, 0, "expected KEY=VALUE, got '%s'", set);
	if (root->kind != LP_NODE_MAP)
		return set_error(&s, 0, "cannot apply --set: the pipeline file is not a map");
	if ((st = split_path(&s, (size_t)(eq - set), segs, &n)) != LP_OK ||
	    (st = parse_value(&s, (size_t)(eq - set) + 1, vars, &v)) != LP_OK)
		return st;
	for (size_t k = 0; k < n; k++) {
		int is_stages = k == 1 && seg_is(&s, &segs[0], "stages");
		if ((st = find_slot(&s, cur, is_stages, &segs[k], &slot)) != LP_OK)
			return st;
		if (k + 1 == n)
			break;
		/* Descending through nothing makes a map to hold the rest. */
		if (lp_node_is_null(*slot)) {
			struct lp_node *m = new_node(&s, LP_NODE_MAP, segs[k].start);
			if (!m)
				return set_nomem(&s);
			*slot = m;
		}
		cur = *slot;
	}
	*slot = v;
	return LP_OK;
}
