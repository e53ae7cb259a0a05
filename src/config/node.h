/*
 * node.h - a YAML document as a tree of positioned nodes.
 *
 * The pipeline loader never walks libyaml events directly: lp_yaml_parse
 * turns a file into this tree first, with every node remembering its line and
 * column, so that any later check can report "file:line:col". All nodes and
 * strings live in the caller's arena.
 *
 * Invariants after a successful parse:
 *  - map keys are scalars and unique within their map (duplicates are errors);
 *  - aliases and anchors are rejected (no expansion blow-up);
 *  - ${name} and ${name:-default} in scalar values have been substituted
 *    (see lp_vars); an undefined variable without a default is an error;
 *    "$$" stands for one "$". Keys are never substituted;
 *  - nesting is at most LP_YAML_MAX_DEPTH levels, a map at most
 *    LP_YAML_MAX_KEYS keys, and the stream holds one document.
 */
#ifndef LP_CONFIG_NODE_H
#define LP_CONFIG_NODE_H

#include <stddef.h>

#include "core/arena.h"
#include "core/status.h"

#define LP_YAML_MAX_DEPTH 64
#define LP_YAML_MAX_KEYS 4096

enum lp_node_kind { LP_NODE_SCALAR, LP_NODE_MAP, LP_NODE_SEQ };

struct lp_node {
	enum lp_node_kind kind;
	int line, col;           /* 1-based position of the node in the file */
	const char *file;        /* where the node was read: the path given to
				  * lp_yaml_parse ("--set" for overrides) */
	const char *scalar;      /* SCALAR: the value, substituted; NUL-terminated */
	int quoted;              /* SCALAR: written in quotes (always a string) */
	size_t n;                /* MAP: pairs; SEQ: items; SCALAR: 0 */
	struct lp_node **keys;   /* MAP: key scalars [n] */
	struct lp_node **values; /* MAP: values [n]; SEQ: items [n] */
};

/* Variables for ${name}: looked up here first, then in the environment.
 * ${name:-default} takes `default` when the variable is unset or empty. */
struct lp_vars {
	const char *const *names;
	const char *const *values;
	size_t n;
};

/*
 * Parse YAML text (`len` bytes, need not be NUL-terminated) into a tree.
 * `path` is used in messages only. On success *root is a node in `arena`
 * (an empty file gives an empty MAP). On failure returns LP_E_CONFIG with
 * `d` holding path:line:col and the reason.
 */
enum lp_status lp_yaml_parse(const char *path, const char *text, size_t len,
			     const struct lp_vars *vars, struct lp_arena *arena,
			     struct lp_node **root, struct lp_diag *d);

/*
 * Same for a single value that begins at `line`:`col` (1-based) of its
 * source, such as the VALUE of "--set KEY=VALUE": positions in nodes and
 * messages are shifted to match, and an empty or null text gives a null
 * SCALAR instead of an empty map.
 */
enum lp_status lp_yaml_parse_value(const char *path, const char *text, size_t len,
				   int line, int col, const struct lp_vars *vars,
				   struct lp_arena *arena, struct lp_node **root,
				   struct lp_diag *d);

/* A plain (unquoted) scalar that YAML reads as null: empty, "~", "null".
 * Sections and options written as `model:` are such nodes. */
int lp_node_is_null(const struct lp_node *n);

/* Name of a node kind for messages: "a scalar", "a map", "a sequence". */
const char *lp_node_kind_name(const struct lp_node *n);

/* Value of `key` in MAP `map`, or NULL (also when map is NULL or not a map). */
struct lp_node *lp_node_get(const struct lp_node *map, const char *key);
/* Key node of `key` in `map` (for positions), or NULL. */
struct lp_node *lp_node_key(const struct lp_node *map, const char *key);

#endif
