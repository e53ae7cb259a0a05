/*
 * override.h - --set KEY=VALUE applied to a parsed pipeline tree.
 *
 * Internal to the config module (pipeline.c calls it between parsing and
 * validation, so overridden values are validated like written ones).
 *
 * KEY is a dotted path of map keys. Inside the top-level `stages` sequence a
 * segment is an index (stages.0.size) or a stage kind (stages.split.size,
 * the first stage of that kind); either selects that stage's options map.
 * Elsewhere in a sequence only an index is accepted. Missing intermediate
 * maps and a missing final key are created; anything else is replaced.
 *
 * VALUE is read as YAML (so "[a, b]", "{x: 1}" and "1GiB" all work) with
 * ${var} substitution; an empty VALUE is null. Nodes made from the value
 * carry the file "--set", line = the 1-based number of the --set, column =
 * the position inside that argument, so later validation errors point at the
 * argument. Errors in the path or value are reported the same way.
 */
#ifndef LP_CONFIG_OVERRIDE_H
#define LP_CONFIG_OVERRIDE_H

#include <stddef.h>

#include "config/node.h"

/*
 * Apply the `number`-th (1-based) override `set` to `root`. Returns LP_OK,
 * LP_E_CONFIG with `d` at "--set:NUMBER:COL", or LP_E_NOMEM. New nodes live
 * in `arena`, which must be the arena of the tree.
 */
enum lp_status lp_override_apply(struct lp_node *root, const char *set, size_t number,
				 const struct lp_vars *vars, struct lp_arena *arena,
				 struct lp_diag *d);

#endif
