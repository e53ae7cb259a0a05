#include "stages/stage.h"

#include <string.h>

/* One line per stage kind; keep in the order of a typical pipeline. */
static const struct lp_stage_kind *const stage_kinds[] = {
	NULL
};

static const char *stage_kind_names[sizeof(stage_kinds) / sizeof(stage_kinds[0])];

const struct lp_stage_kind *lp_stage_find(const char *name)
{
	for (size_t i = 0; stage_kinds[i]; i++)
		if (!strcmp(stage_kinds[i]->name, name))
			return stage_kinds[i];
	return NULL;
}

const char *const *lp_stage_names(void)
{
	for (size_t i = 0; stage_kinds[i]; i++)
		stage_kind_names[i] = stage_kinds[i]->name;
	return stage_kind_names;
}
