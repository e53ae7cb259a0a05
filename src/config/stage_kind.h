/*
 * stage_kind.h - what the pipeline loader knows of a stage kind: its name
 * and its parse, run and describe functions (a small vtable), and the
 * table of kinds it looks names up in.
 *
 * A stage kind lives in src/stages/<name>.c and exports one
 * `const struct lp_stage_kind lp_stage_<name>`; stages/registry.c lists
 * them and defines the look-ups below. The loader (config/pipeline.c,
 * config/schema.c) calls them through this header and never includes
 * stages/: config sits below the stages, which include it (src/LAYERS).
 * parse() validates the stage's option map once, when the pipeline is
 * loaded (every error names file:line:col through struct lp_cfg_ctx), and
 * returns an options struct allocated in c->arena. run() works on the shared
 * document state (stages/doc.h). describe() prints the resolved options
 * (defaults filled in) as a YAML flow map for `lpipe check` and the JSON
 * trace.
 */
#ifndef LP_CONFIG_STAGE_KIND_H
#define LP_CONFIG_STAGE_KIND_H

#include "config/config.h"
#include "config/pipeline.h"
#include "core/buf.h"
#include "core/status.h"

struct lp_doc;

struct lp_stage_kind {
	const char *name;
	/* `opts` is the stage's map (an empty map when written as `- split: {}`
	 * or `- split:`). Returns LP_OK and *out, or LP_E_CONFIG. */
	enum lp_status (*parse)(struct lp_cfg_ctx *c, const struct lp_node *opts,
				const struct lp_pipeline *p, void **out);
	/* Returns LP_OK, LP_E_VERIFY (verification failed; the run still
	 * produces its output), or another error with `d` filled. */
	enum lp_status (*run)(struct lp_doc *doc, const void *opts, struct lp_diag *d);
	/* Append "{key: value, ...}" to `out`. A remark for the reader that is
	 * no option (a prompt file's size) goes between LP_STAGE_COMMENT_START
	 * and LP_STAGE_COMMENT_END anywhere in it: the plan prints it as a
	 * YAML comment after the map. */
	void (*describe)(const void *opts, struct lp_buf *out);
	/* The tracked bytes the stage takes at its peak beyond what the run
	 * holds throughout (the document and its chunks), for a document of
	 * `doc_len` bytes: the memory planner's figure for the stage
	 * (stages/plan.h). NULL: a stage of little memory of its own
	 * (lp_stage_plan_small). */
	size_t (*plan)(const void *opts, const struct lp_pipeline *p, size_t doc_len);
};

#define LP_STAGE_COMMENT_START "\x1f"
#define LP_STAGE_COMMENT_END "\x1e"

/* The stage kind called `name`, or NULL. */
const struct lp_stage_kind *lp_stage_find(const char *name);
/* NULL-terminated list of every stage kind name, for suggestions. */
const char *const *lp_stage_names(void);

/* Tests only: replace the table of stage kinds by the NULL-terminated
 * `kinds` (NULL restores the built-in table). Not thread-safe. */
void lp_stage_registry_override(const struct lp_stage_kind *const *kinds);

#endif
