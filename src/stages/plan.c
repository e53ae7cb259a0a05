/* plan.c - the planner of a run's own memory (plan.h). */
#include "stages/plan.h"

#include "config/stage_kind.h"

size_t lp_stage_plan_line(size_t a, size_t num, size_t den, size_t doc_len)
{
	return a + doc_len / den * num + doc_len % den * num / den;
}

size_t lp_stage_plan_small(size_t doc_len)
{
	return lp_stage_plan_line((size_t)256 << 10, 1, 4, doc_len);
}

void lp_stage_plan(const struct lp_pipeline *p, size_t doc_len, struct lp_stage_plan *out)
{
	size_t most = 0;

	out->doc = lp_stage_plan_line(LP_STAGE_PLAN_BASE, LP_STAGE_PLAN_DOC_NUM,
				      LP_STAGE_PLAN_DOC_DEN, doc_len);
	out->n_stages = p->n_stages < LP_PIPELINE_MAX_STAGES ? p->n_stages : LP_PIPELINE_MAX_STAGES;
	out->largest = "";
	for (size_t i = 0; i < out->n_stages; i++) {
		const struct lp_stage_kind *k = p->stages[i].kind;
		out->stage[i] = k->plan ? k->plan(p->stages[i].opts, p, doc_len)
					: lp_stage_plan_small(doc_len);
		if (!i || out->stage[i] > most) {
			most = out->stage[i];
			out->largest = k->name;
		}
	}
	out->total = out->doc + most;
}
