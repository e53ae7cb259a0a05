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
