/* plan.c - a run's planned memory (plan.h). */
#include "serve/plan.h"

#include <stdio.h>
#include <string.h>

#include "api/runner.h"
#include "core/mem.h"
#include "model/gguf.h"
#include "model/model.h"
#include "model/plan.h"
#include "model/tokenizer.h"
#include "stages/model_stage.h"

static enum lp_qtype kv_qtype(enum lp_kv_type t)
{
	return t == LP_KV_F32 ? LP_Q_F32 : t == LP_KV_Q8_0 ? LP_Q_Q8_0 : LP_Q_F16;
}

enum lp_status lp_serve_plan_model(const char *path, const char *lang,
				   struct lp_serve_model_plan *out, struct lp_diag *d)
{
	struct lp_pipeline *p = NULL;
	struct lp_stage_model pick;
	struct lp_gguf *g = NULL;
	struct lp_model *m = NULL;
	struct lp_tok *tok = NULL;
	struct lp_forward_params cp = lp_forward_default_params();
	struct lp_plan_bytes pb;
	enum lp_status st;
	size_t other0;

	memset(out, 0, sizeof(*out));
	if ((st = lp_runner_load_pipeline(path, "${question}", NULL, 0, &p, d)))
		return st;
	if (!p->model.present || p->model.backend != LP_BACKEND_LOCAL) {
		lp_pipeline_free(p);
		return LP_OK;
	}
	lp_stage_pick_model(&p->model, lang, &pick);
	snprintf(out->key, sizeof(out->key), "%s", pick.path);
	other0 = lp_mem_current(LP_MEM_OTHER);
	st = lp_gguf_open(pick.path, &g, d);
	if (!st)
		st = lp_model_load(g, &m, d);
	if (!st) {
		if (pick.cfg->context > 0)
			cp.n_ctx = (uint32_t)pick.cfg->context;
		cp.kv_type = kv_qtype(pick.cfg->kv_type);
		lp_plan_predict(m, lp_mem_current(LP_MEM_OTHER) - other0, &cp, &pb);
		out->bytes = pb.total;
		/* the session builds the tokenizer's tables too (vocabulary,
		 * merges: 5 MB for SmolLM2), which the planner leaves to its
		 * margin: measure them */
		other0 = lp_mem_current_total();
		if (!(st = lp_tok_from_gguf(g, &tok, d)))
			out->bytes += lp_mem_current_total() - other0;
		lp_tok_free(tok);
		/* and 1%: qa's runs on SmolLM2 reach up to 0.3% more than
		 * prediction and tokenizer together (scratch, buffers) */
		out->bytes += out->bytes / 100;
	}
	lp_model_free(m);
	lp_gguf_close(g);
	lp_pipeline_free(p);
	return st;
}
