/*
 * ref_rank.h - the ranking order of retrieve/topk.h, by a plain sort: the
 * independent reference the top-k ops are tested against.
 */
#ifndef LP_TESTS_REF_RANK_H
#define LP_TESTS_REF_RANK_H

#include <math.h>
#include <stdint.h>

struct ranked {
	float s;
	int32_t i;
};

/* qsort order: higher score first, ties by lower index, NaN last. */
static inline int rank_cmp(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (isnan(a->s) != isnan(b->s))
		return isnan(a->s) ? 1 : -1;
	if (!isnan(a->s) && a->s != b->s)
		return a->s > b->s ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

#endif
