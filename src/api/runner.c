#include "api/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/sha256.h"
#include "engine/engine.h"
#include "stages/model_stage.h"
#include "stages/stage.h"
#include "text/document.h"

enum lp_status lp_runner_load_pipeline(const char *path, const char *question,
				       const char *const *sets, size_t n_sets,
				       struct lp_pipeline **out, struct lp_diag *d)
{
	static const char *const names[] = { "question" };
	const char *values[] = { question };
	struct lp_vars vars = { names, values, question ? 1 : 0 };

	return lp_pipeline_load(path, &vars, sets, n_sets, out, d);
}

static int is_pipeline_name(const char *s)
{
	size_t n = strlen(s);

	return (n > 5 && !strcmp(s + n - 5, ".yaml")) || (n > 4 && !strcmp(s + n - 4, ".yml"));
}

enum lp_status lp_runner_model_arg(const char *arg, const char *lang, char *buf, size_t cap,
				   struct lp_diag *d)
{
	struct lp_pipeline *p = NULL;
	struct lp_stage_model pick;
	enum lp_status st;
	int known = 0;

	for (int i = 0; lang && lp_model_lang_name(i); i++)
		known |= !strcmp(lang, lp_model_lang_name(i));
	if (lang && !known)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "unknown language '%s' for --lang (en, zh or und)", lang);
	if (!is_pipeline_name(arg)) {
		if (lang)
			return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
					   "--lang chooses a pipeline's model: '%s' is not a "
					   "pipeline (.yaml)", arg);
		snprintf(buf, cap, "%s", arg);
		return LP_OK;
	}
	if ((st = lp_runner_load_pipeline(arg, "${question}", NULL, 0, &p, d)))
		return st;
	lp_stage_pick_model(&p->model, lang, &pick);
	if (pick.notice[0])
		lp_info("%s", pick.notice);
	snprintf(buf, cap, "%s", pick.path);
	lp_pipeline_free(p);
	return LP_OK;
}

enum lp_status lp_runner_budget(const struct lp_pipeline *p, const char *cli_value,
				size_t *bytes, struct lp_diag *d)
{
	const char *env = getenv("LPIPE_MEM_BUDGET");

	if (cli_value) {
		if (lp_mem_parse_size(cli_value, bytes))
			return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
					   "invalid --mem-budget '%s' (expected a size such as 512MiB)",
					   cli_value);
		return LP_OK;
	}
	if (env && *env) {
		if (lp_mem_parse_size(env, bytes))
			return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
					   "invalid LPIPE_MEM_BUDGET '%s' (expected a size such as 512MiB)",
					   env);
		return LP_OK;
	}
	*bytes = p ? p->memory.budget : 0;
	return LP_OK;
}

/* Fold the allocator's current peaks into the run's. */
static void fold_peaks(struct lp_run_stats *st)
{
	for (int t = 0; t < LP_MEM_NTAGS; t++)
		if (lp_mem_scope_peak(t) > st->peak_by_tag[t])
			st->peak_by_tag[t] = lp_mem_scope_peak(t);
	if (lp_mem_scope_peak_total() > st->peak_tracked_bytes)
		st->peak_tracked_bytes = lp_mem_scope_peak_total();
}

/* The document from the engine's store (engine/docstore.h): its key names
 * the bytes and all that shapes their parse, the reader chosen by the
 * name's extension included. */
static enum lp_status load_shared(struct lp_doc *doc, const char *name, const void *data,
				  size_t len, struct lp_diag *d)
{
	const char *dot = strrchr(name, '.'), *slash = strrchr(name, '/');
	const struct lp_document *shared;
	char hex[65];
	enum lp_status s;

	if (dot && slash && dot < slash)
		dot = NULL;
	lp_sha256_hex(data, len, hex);
	snprintf(doc->store_key, sizeof(doc->store_key), "%s|%d|%d|%.16s", hex,
		 (int)doc->pipeline->input.format, (int)doc->pipeline->input.invalid_utf8,
		 dot ? dot : "");
	s = lp_docstore_document(doc->store, doc->store_key, name, data, len,
				 doc->pipeline->input.invalid_utf8, doc->pipeline->input.format,
				 &shared, d);
	if (s)
		return s;
	doc->shared_src = shared;
	doc->src = *shared;
	doc->src.path = name;
	return LP_OK;
}

/* The file doc_path, or the bytes data[0..len) named doc_path when data is
 * not NULL. */
static enum lp_status load_document(struct lp_doc *doc, const char *doc_path,
				    const void *data, size_t len, struct lp_diag *d)
{
	enum lp_invalid_utf8 mode = doc->pipeline->input.invalid_utf8;
	enum lp_doc_format fmt = doc->pipeline->input.format;
	enum lp_status s;

	lp_mem_set_phase("load");
	if (data && doc->engine && (doc->store = lp_engine_docs(doc->engine)))
		s = load_shared(doc, doc_path, data, len, d);
	else
		s = data ? lp_document_from_bytes_as(doc_path, data, len, mode, fmt, &doc->src, d)
			 : lp_document_load_as(doc_path, mode, fmt, &doc->src, d);
	if (s)
		return s;
	doc->path = doc->src.path ? doc->src.path : doc_path;
	doc->text = doc->src.text;
	doc->len = doc->src.len;
	if (doc->src.n_replaced)
		lp_warn("%s: replaced %zu invalid UTF-8 sequence%s with U+FFFD", doc_path,
			doc->src.n_replaced, doc->src.n_replaced == 1 ? "" : "s");
	return LP_OK;
}

/* Without a split stage, the whole text is the one chunk. */
static enum lp_status whole_text_chunk(struct lp_doc *doc, struct lp_diag *d)
{
	doc->chunks = lp_arena_alloc(&doc->arena, sizeof(*doc->chunks));
	if (!doc->chunks)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the chunk table");
	doc->chunks[0].off = 0;
	doc->chunks[0].len = doc->len;
	doc->n_chunks = 1;
	return LP_OK;
}

/* What a stage changed, for stages that set no note themselves. */
struct doc_shape {
	size_t n_chunks, n_selected, n_levels;
	const char *summary, *answer;
	int verified;
};

static struct doc_shape shape_of(const struct lp_doc *doc)
{
	struct doc_shape sh = { doc->n_chunks, 0, doc->n_levels, doc->summary,
				doc->answer, doc->verify.done };

	for (size_t i = 0; i < doc->n_chunks; i++)
		sh.n_selected += doc->chunks[i].selected != 0;
	return sh;
}

static void default_note(struct lp_doc *doc, const struct doc_shape *was)
{
	struct doc_shape now = shape_of(doc);

	if (now.verified && !was->verified)
		lp_doc_note(doc, "%zu/%zu keyphrases survived, %zu words",
			    doc->verify.n_survived, doc->verify.n_phrases, doc->verify.words);
	else if (now.answer != was->answer)
		lp_doc_note(doc, "answer of %zu bytes", strlen(now.answer ? now.answer : ""));
	else if (now.n_levels != was->n_levels || now.summary != was->summary)
		lp_doc_note(doc, "%zu level%s, summary of %zu bytes", now.n_levels,
			    now.n_levels == 1 ? "" : "s",
			    strlen(now.summary ? now.summary : ""));
	else if (now.n_selected != was->n_selected)
		lp_doc_note(doc, "kept %zu of %zu chunks", now.n_selected, now.n_chunks);
	else if (now.n_chunks != was->n_chunks)
		lp_doc_note(doc, "%zu chunk%s", now.n_chunks, now.n_chunks == 1 ? "" : "s");
}

/* Room for one more trace entry (a rerun adds entries beyond one per
 * stage; the arena copy is cheap and happens only between stages, so a
 * stage's pointer to its own entry stays valid while it runs). */
static enum lp_status trace_room(struct lp_doc *doc, struct lp_diag *d)
{
	struct lp_stage_trace *t;
	size_t cap;

	if (doc->n_trace < doc->cap_trace)
		return LP_OK;
	cap = doc->cap_trace ? 2 * doc->cap_trace : 8;
	t = lp_arena_alloc(&doc->arena, cap * sizeof(*t));
	if (!t)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the stage trace");
	memset(t, 0, cap * sizeof(*t));
	if (doc->n_trace)
		memcpy(t, doc->trace, doc->n_trace * sizeof(*t));
	doc->trace = t;
	doc->cap_trace = cap;
	return LP_OK;
}

static enum lp_status run_stage(struct lp_doc *doc, const struct lp_stage *st, size_t index,
				struct lp_run_stats *stats, struct lp_diag *d)
{
	struct lp_stage_trace *tr;
	struct lp_progress pr;
	struct doc_shape was;
	char label[64];
	enum lp_status s;
	double t0;

	if ((s = trace_room(doc, d)))
		return s;
	tr = &doc->trace[doc->n_trace++];
	tr->kind = st->kind->name;
	tr->stage = index;
	tr->pass = (int)doc->rerun.count + 1;
	if (!doc->n_chunks && strcmp(st->kind->name, "split")) {
		s = whole_text_chunk(doc, d);
		if (s)
			return s;
	}
	was = shape_of(doc);
	lp_mem_set_phase(st->kind->name);
	lp_mem_scope_reset_peaks();
	snprintf(label, sizeof(label), "%zu/%zu %s", index + 1, doc->pipeline->n_stages,
		 st->kind->name);
	lp_progress_set_stage(label);
	lp_progress_begin(&pr, NULL, NULL, 0);
	t0 = lp_now_s();
	s = st->kind->run(doc, st->opts, d);
	tr->seconds = lp_now_s() - t0;
	lp_progress_end(&pr);
	lp_progress_set_stage(NULL);
	tr->peak_tracked_bytes = lp_mem_scope_peak_total();
	fold_peaks(stats);
	if (!tr->note && (s == LP_OK || s == LP_E_VERIFY))
		default_note(doc, &was);
	if (lp_log_level() >= LP_LOG_DEBUG) {
		char peak[32];
		lp_debug("stage %zu %s (pass %d): %.3f s, tracked peak %s%s%s", index + 1, tr->kind,
			 tr->pass, tr->seconds,
			 lp_mem_format_size(tr->peak_tracked_bytes, peak, sizeof(peak)),
			 tr->note ? ", " : "", tr->note ? tr->note : "");
	}
	return s;
}

/*
 * Act on a rerun request made by stage `i`: returns the index to go on
 * from (the stage asked for), or i + 1 when there is none or it cannot be
 * honoured (a stage after i, or LP_DOC_MAX_RERUNS reached).
 */
static size_t next_stage(struct lp_doc *doc, size_t i)
{
	struct lp_rerun *r = &doc->rerun;

	if (!r->requested)
		return i + 1;
	r->requested = 0;
	if (r->from > i || r->count >= LP_DOC_MAX_RERUNS) {
		lp_warn("stage %zu asked to rerun from stage %zu: ignored", i + 1, r->from + 1);
		return i + 1;
	}
	r->count++;
	lp_debug("rerun %zu: stages %zu to %zu again", r->count, r->from + 1, i + 1);
	return r->from;
}

static enum lp_status run_doc(const struct lp_pipeline *p, const char *doc_path,
			      const void *data, size_t len,
			      const char *question, struct lp_engine *engine, struct lp_doc *doc,
			      struct lp_run_stats *stats, struct lp_diag *d)
{
	struct lp_run_stats local;
	struct lp_diag verify_diag;
	enum lp_status s, verify = LP_OK;
	size_t verify_at = 0; /* the stage whose verification failed first */

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	stats->budget_bytes = lp_mem_budget();
	lp_doc_init_engine(doc, p, engine);
	doc->question = question;
	lp_mem_scope_reset_peaks();
	s = load_document(doc, doc_path, data, len, d);
	fold_peaks(stats);
	if (s)
		goto out;
	lp_diag_init(&verify_diag);
	for (size_t i = 0, next; i < p->n_stages; i = next) {
		if (lp_cancel_requested()) {
			s = lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0,
					"run cancelled before stage %zu %s", i + 1,
					p->stages[i].kind->name);
			goto out;
		}
		s = run_stage(doc, &p->stages[i], i, stats, d);
		if (s && s != LP_E_VERIFY)
			goto out;
		next = next_stage(doc, i);
		/* a failed verification that is run again is judged again */
		if (verify && verify_at >= next && next <= i) {
			verify = LP_OK;
			lp_diag_init(&verify_diag);
		}
		if (s == LP_E_VERIFY && next > i) {
			if (verify == LP_OK) {
				verify_diag = *d;
				verify_at = i;
			}
			verify = LP_E_VERIFY;
		}
		lp_diag_init(d);
	}
	if (!doc->n_chunks && (s = whole_text_chunk(doc, d)))
		goto out;
	if (verify) {
		*d = verify_diag;
		s = verify;
	}
out:
	for (int t = 0; t < LP_MEM_NTAGS; t++)
		stats->current_by_tag[t] = lp_mem_current(t);
	lp_doc_release_model(doc);
	lp_mem_set_phase("output");
	stats->status = s;
	return s;
}

/* run_doc on the engine's memory account (the calling thread's without
 * an engine), so that its budget and its figures are the engine's. */
static enum lp_status run_on(const struct lp_pipeline *p, const char *doc_path,
			     const void *data, size_t len, const char *question,
			     struct lp_engine *engine, struct lp_doc *doc,
			     struct lp_run_stats *stats, struct lp_diag *d)
{
	struct lp_mem_account *was = lp_mem_account_current();
	enum lp_status s;

	if (engine)
		lp_mem_account_use(lp_engine_account(engine));
	s = run_doc(p, doc_path, data, len, question, engine, doc, stats, d);
	lp_mem_account_use(was);
	return s;
}

enum lp_status lp_runner_run(const struct lp_pipeline *p, const char *doc_path,
			     const char *question, struct lp_engine *engine, struct lp_doc *doc,
			     struct lp_run_stats *stats, struct lp_diag *d)
{
	return run_on(p, doc_path, NULL, 0, question, engine, doc, stats, d);
}

enum lp_status lp_runner_run_bytes(const struct lp_pipeline *p, const char *name,
				   const void *data, size_t len, const char *question,
				   struct lp_engine *engine, struct lp_doc *doc,
				   struct lp_run_stats *stats, struct lp_diag *d)
{
	static const char empty[1];

	return run_on(p, name, data ? data : empty, len, question, engine, doc, stats, d);
}
