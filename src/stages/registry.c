#include "stages/stage.h"

#include <string.h>

extern const struct lp_stage_kind lp_stage_split;
extern const struct lp_stage_kind lp_stage_retrieve;
extern const struct lp_stage_kind lp_stage_summarize;
extern const struct lp_stage_kind lp_stage_verify;
extern const struct lp_stage_kind lp_stage_truncate;
extern const struct lp_stage_kind lp_stage_answer;
extern const struct lp_stage_kind lp_stage_generate;
extern const struct lp_stage_kind lp_stage_extract;

/* One line per stage kind; keep in the order of a typical pipeline. */
static const struct lp_stage_kind *const stage_kinds[] = {
	&lp_stage_split,
	&lp_stage_truncate,
	&lp_stage_retrieve,
	&lp_stage_summarize,
	&lp_stage_answer,
	&lp_stage_generate,
	&lp_stage_extract,
	&lp_stage_verify,
	NULL
};

#define MAX_STAGE_KINDS 64

static const struct lp_stage_kind *const *active_kinds = stage_kinds;
static const char *stage_kind_names[MAX_STAGE_KINDS + 1];

void lp_stage_registry_override(const struct lp_stage_kind *const *kinds)
{
	active_kinds = kinds ? kinds : stage_kinds;
}

const struct lp_stage_kind *lp_stage_find(const char *name)
{
	for (size_t i = 0; active_kinds[i]; i++)
		if (!strcmp(active_kinds[i]->name, name))
			return active_kinds[i];
	return NULL;
}

const char *const *lp_stage_names(void)
{
	size_t i;

	for (i = 0; active_kinds[i] && i < MAX_STAGE_KINDS; i++)
		stage_kind_names[i] = active_kinds[i]->name;
	stage_kind_names[i] = NULL;
	return stage_kind_names;
}
