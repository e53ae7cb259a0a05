#include "config/schema.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "config/pipeline.h"
#include "config/stage_kind.h"
#include "core/buf.h"

/* Nested maps deeper than this are not looked into (none is yet). */
#define MAX_DEPTH 4

struct probe {
	int line, col;              /* the empty map's place in the text */
	const char *const *allowed; /* what its parser allowed; NULL: a leaf */
};

static void watch(const struct lp_node *map, const char *const *allowed, void *arg)
{
	struct probe *pr = arg;

	if (map->line == pr->line && map->col == pr->col && !pr->allowed)
		pr->allowed = allowed;
}

/*
 * Load "version: 1" plus `path` (n keys) nested as block maps, the last
 * with an empty map as its value; under "stages" the next key is a stage
 * kind, written as a sequence item. Returns the keys its parser allows,
 * NULL for a leaf, in *allowed.
 */
static enum lp_status keys_at(const char *const *path, size_t n,
			      const char *const **allowed, struct lp_diag *d)
{
	struct probe pr = { 1, 1, NULL }; /* no path: the root map */
	struct lp_pipeline *p = NULL;
	struct lp_diag ignored;
	struct lp_buf t;
	enum lp_status st = LP_OK;
	int indent = 0;

	lp_buf_init(&t);
	if (lp_buf_adds(&t, "version: 1\n"))
		st = LP_E_NOMEM;
	for (size_t i = 0; i < n && !st; i++) {
		int item = i == 1 && !strcmp(path[0], "stages");
		if (lp_buf_addf(&t, "%*s%s%s:%s\n", indent, "", item ? "- " : "", path[i],
				  i + 1 == n ? " {}" : ""))
			st = LP_E_NOMEM;
		pr.line++;
		pr.col = indent + (item ? 2 : 0) + (int)strlen(path[i]) + 3; /* the '{' */
		indent += item ? 6 : 2;
	}
	if (st) {
		lp_buf_release(&t);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory listing the keys");
	}
	lp_diag_init(&ignored);
	lp_cfg_set_keys_hook(watch, &pr);
	/* most of these pipelines are invalid (no stages, a map where a
	 * number goes): only the parsers' calls matter */
	st = lp_pipeline_load_text("<keys>", t.data, t.len, NULL, NULL, 0, &p, &ignored);
	lp_cfg_set_keys_hook(NULL, NULL);
	lp_pipeline_free(p);
	lp_buf_release(&t);
	if (st == LP_E_NOMEM) {
		*d = ignored;
		return st;
	}
	*allowed = pr.allowed;
	return LP_OK;
}

static enum lp_status walk(const char **path, size_t n, lp_schema_emit_fn emit, void *arg,
			   struct lp_diag *d)
{
	const char *const *keys = NULL;
	enum lp_status st;
	char dotted[256];
	size_t len = 0;

	if (n == 1 && !strcmp(path[0], "stages")) { /* one walk per stage kind */
		const char *const *kinds = lp_stage_names();
		for (size_t i = 0; kinds[i]; i++) {
			path[1] = kinds[i];
			if ((st = walk(path, 2, emit, arg, d)))
				return st;
		}
		return LP_OK;
	}
	if (n == 1 && !strcmp(path[0], "version"))
		return LP_OK; /* the first line of every generated pipeline */
	if (n < MAX_DEPTH && (st = keys_at(path, n, &keys, d)))
		return st;
	if (keys) {
		for (size_t i = 0; keys[i]; i++) {
			path[n] = keys[i];
			if ((st = walk(path, n + 1, emit, arg, d)))
				return st;
		}
		return LP_OK;
	}
	if (n == 2 && !strcmp(path[0], "stages"))
		return LP_OK; /* a stage kind that takes no options */
	for (size_t i = 0; i < n && len < sizeof(dotted); i++)
		len += (size_t)snprintf(dotted + len, sizeof(dotted) - len, "%s%s", i ? "." : "",
					path[i]);
	emit(dotted, arg);
	return LP_OK;
}

enum lp_status lp_schema_keys(lp_schema_emit_fn emit, void *arg, struct lp_diag *d)
{
	const char *path[MAX_DEPTH + 1] = { NULL };
	const char *const *top = NULL;
	enum lp_status st;

	if ((st = keys_at(path, 0, &top, d)))
		return st;
	for (size_t i = 0; top && top[i]; i++) {
		path[0] = top[i];
		if ((st = walk(path, 1, emit, arg, d)))
			return st;
	}
	return LP_OK;
}
