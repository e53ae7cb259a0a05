/*
 * schema.h - the keys a pipeline file accepts, found by asking the parser.
 *
 * No list of keys is kept by hand: every section and stage parser names
 * the keys it allows when it calls lp_cfg_check_keys, and lp_schema_keys
 * watches those calls (lp_cfg_set_keys_hook) while it loads small
 * generated pipelines: first an empty one (the top-level keys), then one
 * per section and per stage kind with an empty map in its place (their
 * keys), then one per key with an empty map as its value (the keys of a
 * nested map such as stages.verify.keyphrases). A key whose empty map
 * makes no call is a leaf. So a key added to a parser is listed at once.
 *
 * The keys are given in --set form, as dotted paths: "model.context",
 * "stages.split.size", "stages.verify.keyphrases.auto"; a stage's keys
 * once per stage kind (--set stages.KIND.KEY addresses the stages of that
 * kind). `version` and `stages` themselves are not listed.
 */
#ifndef LP_CONFIG_SCHEMA_H
#define LP_CONFIG_SCHEMA_H

#include "core/status.h"

/* Called once per key, in the parsers' order; `path` lives for the call. */
typedef void (*lp_schema_emit_fn)(const char *path, void *arg);

/*
 * Call `emit` for every key a pipeline accepts. Returns LP_OK, or
 * LP_E_NOMEM (with `d` filled) when a generated pipeline could not be
 * loaded for want of memory. Not thread-safe (it sets the keys hook).
 */
enum lp_status lp_schema_keys(lp_schema_emit_fn emit, void *arg, struct lp_diag *d);

#endif
