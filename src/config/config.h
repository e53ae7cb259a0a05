/*
 * config.h - typed, validated access to pipeline options.
 *
 * Every reader of a map (top-level sections and each stage's parse function)
 * goes through these helpers, so all configuration errors look alike:
 *
 *     pipelines/x.yaml:12:7: error: stages[0].split: unknown key 'overlp'
 *         (did you mean 'overlap'?)
 *
 * A struct lp_cfg_ctx carries the file path, the arena that owns parsed
 * values, the diagnostic to fill and a "section" label ("model",
 * "stages[2].retrieve") used as the message prefix. Getters take a default
 * used when the key is absent or its value is a YAML null (`key:`, `key: ~`);
 * they return LP_OK, LP_E_CONFIG (the message names the key and, for a range,
 * the allowed range) or LP_E_NOMEM. A map or sequence where a scalar is
 * expected is an error. Messages point at the value (file:line:col of the
 * node; a node from --set names "--set" as its file).
 */
#ifndef LP_CONFIG_H
#define LP_CONFIG_H

#include <stddef.h>

#include "config/node.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/status.h"

struct lp_cfg_ctx {
	const char *path;       /* pipeline file, for messages */
	const char *section;    /* "model", "stages[1].split", ... */
	struct lp_arena *arena; /* owns strings and lists returned by getters */
	struct lp_diag *diag;
};

/* Fail with "path:line:col: error: SECTION: message" at `node`. */
enum lp_status lp_cfg_error(struct lp_cfg_ctx *c, const struct lp_node *node,
			    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Fail with LP_E_NOMEM ("out of memory while reading the pipeline"): a
 * parse function whose allocation fails must say so, never report a
 * configuration error (the exit status differs: 4, not 2). */
enum lp_status lp_cfg_nomem(struct lp_cfg_ctx *c);

/* Require `node` to be a MAP whose keys are all in the NULL-terminated list
 * `allowed`; an unknown key fails with the nearest allowed one suggested. */
enum lp_status lp_cfg_check_keys(struct lp_cfg_ctx *c, const struct lp_node *map,
				 const char *const *allowed);

/*
 * Keys that only some variants of an option use (the strategies of a
 * summarize stage, the scorers of retrieval): each entry names a key and
 * the variants that read it, as a bit mask over the indexes of `names`
 * (1u << index). A key present in `map` that the chosen variant does not
 * read fails at the key, naming the variants that would:
 *
 *     x.yaml:7:28: error: stages[1].summarize: key 'max_tokens' is not used
 *         by strategy 'extractive' (only by strategy tree or refine)
 *
 * `option` is the key that chooses ("strategy"), `names` its values
 * (NULL-terminated) and `chosen` the index of the one chosen. The list
 * ends with a NULL key. Returns LP_OK or LP_E_CONFIG.
 */
struct lp_cfg_key_use {
	const char *key;
	unsigned variants; /* bit i: names[i] reads the key */
};
enum lp_status lp_cfg_check_key_use(struct lp_cfg_ctx *c, const struct lp_node *map,
				    const struct lp_cfg_key_use *uses, const char *option,
				    const char *const *names, int chosen);
/* Whether variant `chosen` reads `key` by the table `uses` (a key the table
 * does not list is read by every variant): what a printed plan shows. */
int lp_cfg_key_used(const struct lp_cfg_key_use *uses, const char *key, int chosen);

/* Schema discovery (config/schema.h): when a hook is set, every call of
 * lp_cfg_check_keys with a map on the same thread first reports the map
 * and its `allowed` list (a static array of the caller's). The hook is the
 * calling thread's, so pipelines loaded on other threads meanwhile are
 * neither watched nor slowed. NULL removes it. */
typedef void (*lp_cfg_keys_hook_fn)(const struct lp_node *map, const char *const *allowed,
				    void *arg);
void lp_cfg_set_keys_hook(lp_cfg_keys_hook_fn fn, void *arg);

/* Closest word to `word` in `words` by edit distance, or NULL when nothing
 * is close enough to be a plausible typo. */
const char *lp_cfg_suggest(const char *word, const char *const *words);

enum lp_status lp_cfg_get_int(struct lp_cfg_ctx *c, const struct lp_node *map,
			      const char *key, long long def, long long min,
			      long long max, long long *out);
enum lp_status lp_cfg_get_double(struct lp_cfg_ctx *c, const struct lp_node *map,
				 const char *key, double def, double min, double max,
				 double *out);
/* true/false/yes/no/on/off. */
enum lp_status lp_cfg_get_bool(struct lp_cfg_ctx *c, const struct lp_node *map,
			       const char *key, int def, int *out);
/* Any scalar; the string is owned by the arena (def is returned as is). */
enum lp_status lp_cfg_get_string(struct lp_cfg_ctx *c, const struct lp_node *map,
				 const char *key, const char *def, const char **out);
/* One of the NULL-terminated `names`; *out is its index. */
enum lp_status lp_cfg_get_enum(struct lp_cfg_ctx *c, const struct lp_node *map,
			       const char *key, const char *const *names, int def,
			       int *out);
/* Byte size such as "1GiB" or 1048576 (see lp_mem_parse_size). */
enum lp_status lp_cfg_get_size(struct lp_cfg_ctx *c, const struct lp_node *map,
			       const char *key, size_t def, size_t *out);
/* A sequence of scalars (or a single scalar, taken as one item); absent
 * gives *n == 0. The array is owned by the arena. */
enum lp_status lp_cfg_get_string_list(struct lp_cfg_ctx *c, const struct lp_node *map,
				      const char *key, const char ***out, size_t *n);

/*
 * Append `s` to `out` as a YAML scalar that reads back as exactly `s`
 * through lp_yaml_parse: plain when that is unambiguous, otherwise double
 * quoted with escapes; "$" is doubled so no ${var} is substituted on the way
 * back; NULL is written as "~". For describe() functions. Returns LP_OK or
 * LP_E_NOMEM.
 */
enum lp_status lp_cfg_quote(struct lp_buf *out, const char *s);

#endif
