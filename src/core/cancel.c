/* cancel.c - the per-thread stop flag (cancel.h). */
#include "core/cancel.h"

#include <stddef.h>

static _Thread_local atomic_int *watched;

void lp_cancel_watch(atomic_int *flag)
{
	watched = flag;
}

int lp_cancel_requested(void)
{
	return watched && atomic_load(watched) != 0;
}

enum lp_status lp_cancel_check(const char *where, struct lp_diag *d)
{
	if (!lp_cancel_requested())
		return LP_OK;
	return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0, "run cancelled %s", where);
}
