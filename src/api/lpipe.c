/*
 * lpipe.c - the public library (lpipe.h) over the runner that `lpipe run`
 * and `lpipe batch` use (api/runner.h), the engine (engine/engine.h) and
 * the report writers (report/report.h). Nothing here runs a stage or
 * formats a report itself.
 */
#include "api/lpipe.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "api/runner.h"
#include "config/pipeline.h"
#include "core/global.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/status.h"
#include "engine/engine.h"
#include "model/session.h"
#include "report/report.h"
#include "stages/doc.h"
#include "stages/plan.h"

#include "config.h"

/* A loaded pipeline, shared by the handle and the results made with it. */
struct loaded {
	struct lp_pipeline *p;
	char *plan;             /* lp_pipeline_print's text */
	atomic_int refs;
};

struct lpipe_pipeline {
	char **names, **values; /* variables, [n_vars] */
	size_t n_vars;
	char **sets;            /* overrides, [n_sets] */
	size_t n_sets;
	char *path;             /* the file loaded, or NULL */
	char *name, *text;      /* or the string loaded */
	size_t len;
	struct loaded *cur;     /* NULL before a successful load */
};

struct lpipe_engine {
	struct lp_engine *e;
	char *mem_budget;       /* lpipe_engine_set_mem_budget's, or NULL */
};

struct lpipe_result {
	struct loaded *pl;
	struct lp_doc doc;
	struct lp_run_stats stats;
	size_t tokens_in, tokens_out;
	char *question, *data;
	char *report[4];        /* by enum lp_format, made on demand */
	struct lp_mem_account *acct; /* the run's (a reference), NULL: none */
};

static _Thread_local char errmsg[sizeof(((struct lp_diag *)0)->msg) + 600];

const char *lpipe_errmsg(void)
{
	return errmsg;
}

const char *lpipe_version(void)
{
	return PACKAGE_VERSION;
}

/* Remember `d` (or the status's name) as the thread's message and return
 * the exit code of `s`. */
static int fail(enum lp_status s, struct lp_diag *d)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f;

	if (!d->msg[0])
		lp_diag_set(d, s, NULL, 0, 0, "%s", lp_status_str(s));
	f = open_memstream(&buf, &n);
	if (f) {
		lp_diag_print(d, f);
		fclose(f);
	}
	if (buf) {
		const char *m = strncmp(buf, "lpipe: ", 7) ? buf : buf + 7;

		snprintf(errmsg, sizeof(errmsg), "%.*s", (int)strcspn(m, "\n"), m);
	} else {
		snprintf(errmsg, sizeof(errmsg), "%s", d->msg);
	}
	free(buf);
	return lp_status_exit_code(s);
}

static int fail_msg(enum lp_status s, const char *msg)
{
	struct lp_diag d;

	lp_diag_init(&d);
	lp_diag_set(&d, s, NULL, 0, 0, "%s", msg);
	return fail(s, &d);
}

static int ok(void)
{
	errmsg[0] = '\0';
	return LPIPE_OK;
}

static void loaded_put(struct loaded *l)
{
	if (l && atomic_fetch_sub(&l->refs, 1) == 1) {
		lp_pipeline_free(l->p);
		free(l->plan);
		free(l);
	}
}

/* ---- process-wide settings (core/global.h) ---------------------------------- */

void lpipe_set_log_level(enum lpipe_log_level level)
{
	lp_log_set_level(level <= LPIPE_LOG_ERROR ? LP_LOG_ERROR
			 : level == LPIPE_LOG_WARN ? LP_LOG_WARN
			 : level == LPIPE_LOG_INFO ? LP_LOG_INFO
						   : LP_LOG_DEBUG);
}

void lpipe_set_progress(int mode)
{
	lp_progress_enable(mode < 0 ? -1 : mode > 0);
}

/* Replace *slot by a copy of the budget `size` (NULL: none), checked. */
static int set_budget(char **slot, const char *size)
{
	size_t bytes;
	char *copy = NULL;

	if (size && lp_mem_parse_size(size, &bytes)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "invalid memory budget '%.60s' (expected a size such as "
			 "512MiB)", size);
		return fail_msg(LP_E_USAGE, msg);
	}
	if (size && !(copy = strdup(size)))
		return fail_msg(LP_E_NOMEM, "out of memory");
	free(*slot);
	*slot = copy;
	return ok();
}

int lpipe_set_mem_budget(const char *size)
{
	return set_budget(&lp_global.mem_budget, size);
}

/* The budget given outside any pipeline: e's own, else the process's. */
static const char *budget_set(const lpipe_engine *e)
{
	return e && e->mem_budget ? e->mem_budget : lp_global.mem_budget;
}

/* 1 when a budget is given outside the pipeline (on `e`, the process or
 * in the environment): it wins over memory.budget and covers loading. */
static int budget_given(const lpipe_engine *e)
{
	const char *env = getenv("LPIPE_MEM_BUDGET");

	return budget_set(e) || (env && *env);
}

/* The budget for `p` (NULL: before a pipeline is read) run on `e` (may be
 * NULL) into *bytes. */
static int budget_of(const struct lp_pipeline *p, const lpipe_engine *e, size_t *bytes)
{
	struct lp_diag d;
	enum lp_status s;

	lp_diag_init(&d);
	s = lp_runner_budget(p, budget_set(e), bytes, &d);
	return s ? fail(s, &d) : LPIPE_OK;
}

/* ---- pipelines ------------------------------------------------------------ */

lpipe_pipeline *lpipe_pipeline_new(void)
{
	return calloc(1, sizeof(struct lpipe_pipeline));
}

/* (Re)load from the source last given, with the variables and overrides. */
static int reload(lpipe_pipeline *p)
{
	struct lp_vars vars = { (const char *const *)p->names, (const char *const *)p->values,
				p->n_vars };
	const char *const *sets = (const char *const *)p->sets;
	struct lp_pipeline *pl = NULL;
	struct loaded *l;
	struct lp_diag d;
	enum lp_status s;

	size_t budget;
	char *plan = NULL;
	size_t plan_len = 0;
	FILE *mem;
	int rc;

	if (!p->path && !p->text)
		return ok();
	/* a budget given outside the pipeline covers reading it */
	if ((rc = budget_of(NULL, NULL, &budget)))
		return rc;
	if (budget_given(NULL))
		lp_mem_set_budget(budget);
	lp_mem_set_phase("config");
	lp_diag_init(&d);
	if (p->path)
		s = lp_pipeline_load(p->path, &vars, sets, p->n_sets, &pl, &d);
	else
		s = lp_pipeline_load_text(p->name, p->text, p->len, &vars, sets, p->n_sets, &pl, &d);
	if (s)
		return fail(s, &d);
	mem = open_memstream(&plan, &plan_len);
	s = mem ? lp_pipeline_print(pl, mem) : LP_E_NOMEM;
	if ((mem && fclose(mem)) || s || !(l = malloc(sizeof(*l)))) {
		free(plan);
		lp_pipeline_free(pl);
		return fail_msg(LP_E_NOMEM, "out of memory");
	}
	l->p = pl;
	l->plan = plan;
	atomic_init(&l->refs, 1);
	loaded_put(p->cur);
	p->cur = l;
	return ok();
}

int lpipe_pipeline_set_var(lpipe_pipeline *p, const char *name, const char *value)
{
	size_t i;
	char *v = NULL;

	if (!p || !name || !*name)
		return fail_msg(LP_E_USAGE, "a variable needs a name");
	if (value && !(v = strdup(value)))
		return fail_msg(LP_E_NOMEM, "out of memory");
	for (i = 0; i < p->n_vars && strcmp(p->names[i], name); i++)
		;
	if (i == p->n_vars) {
		char **n = realloc(p->names, (i + 1) * sizeof(*n)), **w;

		if (n)
			p->names = n;
		w = n ? realloc(p->values, (i + 1) * sizeof(*w)) : NULL;
		if (w)
			p->values = w;
		if (!n || !w || !(p->names[i] = strdup(name))) {
			free(v);
			return fail_msg(LP_E_NOMEM, "out of memory");
		}
		p->values[i] = NULL;
		p->n_vars++;
	}
	free(p->values[i]);
	p->values[i] = v;
	if (!v) { /* unbind: move the last one here */
		free(p->names[i]);
		p->names[i] = p->names[--p->n_vars];
		p->values[i] = p->values[p->n_vars];
	}
	return reload(p);
}

int lpipe_pipeline_set(lpipe_pipeline *p, const char *key_value)
{
	char **s;

	if (!p || !key_value || !strchr(key_value, '='))
		return fail_msg(LP_E_USAGE, "an override needs KEY=VALUE");
	if (!(s = realloc(p->sets, (p->n_sets + 1) * sizeof(*s))))
		return fail_msg(LP_E_NOMEM, "out of memory");
	p->sets = s;
	if (!(s[p->n_sets] = strdup(key_value)))
		return fail_msg(LP_E_NOMEM, "out of memory");
	p->n_sets++;
	return reload(p);
}

static void forget_source(lpipe_pipeline *p)
{
	free(p->path);
	free(p->name);
	free(p->text);
	p->path = p->name = p->text = NULL;
	p->len = 0;
	loaded_put(p->cur);
	p->cur = NULL;
}

int lpipe_pipeline_load_file(lpipe_pipeline *p, const char *path)
{
	if (!p || !path)
		return fail_msg(LP_E_USAGE, "no pipeline file given");
	forget_source(p);
	if (!(p->path = strdup(path)))
		return fail_msg(LP_E_NOMEM, "out of memory");
	return reload(p);
}

int lpipe_pipeline_load_string(lpipe_pipeline *p, const char *name, const char *text,
			       size_t len)
{
	if (!p || (!text && len))
		return fail_msg(LP_E_USAGE, "no pipeline text given");
	forget_source(p);
	p->name = strdup(name ? name : "<string>");
	p->text = malloc(len + 1);
	if (!p->name || !p->text)
		return fail_msg(LP_E_NOMEM, "out of memory");
	if (len)
		memcpy(p->text, text, len);
	p->text[len] = '\0';
	p->len = len;
	return reload(p);
}

const char *lpipe_pipeline_name(const lpipe_pipeline *p)
{
	return p && p->cur ? p->cur->p->name : NULL;
}

const char *lpipe_pipeline_format(const lpipe_pipeline *p)
{
	return p && p->cur ? lp_format_name(p->cur->p->output.format) : NULL;
}

const char *lpipe_pipeline_plan(const lpipe_pipeline *p)
{
	return p && p->cur ? p->cur->plan : NULL;
}

size_t lpipe_pipeline_plan_bytes(const lpipe_pipeline *p, size_t doc_len, const char **stage)
{
	struct lp_stage_plan plan;

	if (stage)
		*stage = "";
	if (!p || !p->cur)
		return 0;
	lp_stage_plan(p->cur->p, doc_len, &plan);
	if (stage)
		*stage = plan.largest;
	return plan.total;
}

int lpipe_pipeline_concurrency(const lpipe_pipeline *p)
{
	const struct lp_model_cfg *m;

	if (!p || !p->cur)
		return 0;
	m = &p->cur->p->model;
	return m->backend == LP_BACKEND_OPENAI ? (int)m->concurrency : 1;
}

void lpipe_pipeline_free(lpipe_pipeline *p)
{
	if (!p)
		return;
	forget_source(p);
	for (size_t i = 0; i < p->n_vars; i++) {
		free(p->names[i]);
		free(p->values[i]);
	}
	for (size_t i = 0; i < p->n_sets; i++)
		free(p->sets[i]);
	free(p->names);
	free(p->values);
	free(p->sets);
	free(p);
}

/* ---- engines -------------------------------------------------------------- */

/* Put the calling thread on e's account (NULL: stay where it is); returns
 * the account to go back to with leave(). */
static struct lp_mem_account *enter(lpipe_engine *e)
{
	return e ? lp_mem_account_use(lp_engine_account(e->e)) : lp_mem_account_current();
}

static void leave(struct lp_mem_account *was)
{
	lp_mem_account_use(was);
}

/* Set e's account's budget from the one given outside the pipelines, if
 * any (else each run sets its pipeline's). */
static int engine_budget(lpipe_engine *e)
{
	struct lp_mem_account *was;
	size_t bytes;
	int rc;

	if (!budget_given(e))
		return ok();
	if ((rc = budget_of(NULL, e, &bytes)))
		return rc;
	was = enter(e);
	lp_mem_set_budget(bytes);
	leave(was);
	return ok();
}

int lpipe_engine_new(int keep_models, lpipe_engine **out)
{
	struct lp_engine_params ep = lp_engine_default_params();
	struct lp_diag d;
	enum lp_status s;

	*out = calloc(1, sizeof(**out));
	if (!*out)
		return fail_msg(LP_E_NOMEM, "out of memory");
	ep.keep_idle = (keep_models & LPIPE_KEEP_MODELS) != 0;
	ep.keep_documents = (keep_models & LPIPE_KEEP_DOCUMENTS) != 0;
	lp_diag_init(&d);
	if ((s = lp_engine_new(&ep, &(*out)->e, &d))) {
		free(*out);
		*out = NULL;
		return fail(s, &d);
	}
	/* a budget given outside the pipelines holds before the first run */
	return engine_budget(*out);
}

int lpipe_engine_set_mem_budget(lpipe_engine *e, const char *size)
{
	int rc;

	if (!e)
		return fail_msg(LP_E_USAGE, "no engine given");
	if ((rc = set_budget(&e->mem_budget, size)))
		return rc;
	return engine_budget(e);
}

void lpipe_engine_free(lpipe_engine *e)
{
	if (!e)
		return;
	lp_engine_free(e->e);
	free(e->mem_budget);
	free(e);
}

struct lp_mem_account *lp_api_engine_account(lpipe_engine *e)
{
	return e ? lp_engine_account(e->e) : NULL;
}

size_t lpipe_engine_models_loaded(const lpipe_engine *e)
{
	return e ? lp_engine_n_opened((struct lp_engine *)e->e) : 0;
}

size_t lpipe_engine_unload(lpipe_engine *e, const char *path)
{
	return e && path ? lp_engine_unload_idle(e->e, path) : 0;
}

void lpipe_engine_documents(lpipe_engine *e, size_t *bytes, size_t *entries,
			    unsigned long long *hits, unsigned long long *misses)
{
	struct lp_docstore *s = e ? lp_engine_docs(e->e) : NULL;
	struct lp_docstore_stats st = { 0, 0, 0, 0 };

	if (s)
		lp_docstore_stats(s, &st);
	if (bytes)
		*bytes = st.bytes;
	if (entries)
		*entries = st.entries;
	if (hits)
		*hits = st.hits;
	if (misses)
		*misses = st.misses;
}

size_t lpipe_engine_drop_documents(lpipe_engine *e, size_t bytes)
{
	struct lp_docstore *s = e ? lp_engine_docs(e->e) : NULL;
	struct lp_mem_account *was;
	size_t n;

	if (!s)
		return 0;
	/* what a document reserved goes back to the account it was made on */
	was = enter(e);
	n = lp_docstore_drop(s, bytes);
	leave(was);
	return n;
}

/* ---- runs ----------------------------------------------------------------- */

static const char *question_of(const lpipe_pipeline *p)
{
	for (size_t i = 0; i < p->n_vars; i++)
		if (!strcmp(p->names[i], "question"))
			return p->values[i];
	return NULL;
}

/* -v: the run's memory in one line, before any report is built. */
static void log_memory(const struct lp_run_stats *stats)
{
	char tracked[32], doc[32], rss[32];

	if (lp_log_level() < LP_LOG_DEBUG)
		return;
	lp_debug("memory: tracked peak %s (%zu bytes), doc peak %s (%zu bytes), "
		 "peak rss %s (%zu bytes)",
		 lp_mem_format_size(stats->peak_tracked_bytes, tracked, sizeof(tracked)),
		 stats->peak_tracked_bytes,
		 lp_mem_format_size(stats->peak_by_tag[LP_MEM_DOC], doc, sizeof(doc)),
		 stats->peak_by_tag[LP_MEM_DOC],
		 lp_mem_format_size(lp_mem_peak_rss(), rss, sizeof(rss)), lp_mem_peak_rss());
}

/*
 * Run r's pipeline on the file `path`, or on r->data[0..len) named `path`
 * when `buffer`, in a memory scope of its own (core/mem.h) unless the
 * calling thread is in one already, so that runs side by side each see
 * their own peaks; count the tokens the thread's model requests took.
 */
static enum lp_status run_scoped(lpipe_result *r, lpipe_engine *e, const char *path,
				 int buffer, size_t len, struct lp_diag *d)
{
	uint32_t scope = lp_mem_scope_current() ? 0 : lp_mem_scope_begin();
	size_t p0, g0, p1, g1;
	enum lp_status s;

	lp_session_thread_tokens(&p0, &g0);
	if (buffer)
		s = lp_runner_run_bytes(r->pl->p, path, r->data, len, r->question,
					e ? e->e : NULL, &r->doc, &r->stats, d);
	else
		s = lp_runner_run(r->pl->p, path, r->question, e ? e->e : NULL, &r->doc,
				  &r->stats, d);
	lp_session_thread_tokens(&p1, &g1);
	r->tokens_in = p1 - p0;
	r->tokens_out = g1 - g0;
	log_memory(&r->stats);
	if (scope)
		lp_mem_scope_end(scope);
	return s;
}

/* Run on the file `path`, or on data[0..len) when data is not NULL. */
static int run(lpipe_pipeline *p, lpipe_engine *e, const char *path, const void *data,
	       size_t len, lpipe_result **out)
{
	struct lp_mem_account *was;
	struct lp_diag d;
	lpipe_result *r;
	enum lp_status s;
	size_t budget;
	int rc;

	if (!out)
		return fail_msg(LP_E_USAGE, "no place for the result given");
	*out = NULL;
	if (!p || !p->cur)
		return fail_msg(LP_E_USAGE, "no pipeline loaded");
	if ((rc = budget_of(p->cur->p, e, &budget)))
		return rc;
	if (!(r = calloc(1, sizeof(*r))))
		return fail_msg(LP_E_NOMEM, "out of memory");
	/* the run, its result and what the result frees later are e's */
	was = enter(e);
	r->acct = lp_mem_account_current();
	lp_mem_account_ref(r->acct);
	r->pl = p->cur;
	atomic_fetch_add(&r->pl->refs, 1);
	if (question_of(p) && !(r->question = strdup(question_of(p)))) {
		lpipe_result_free(r);
		leave(was);
		return fail_msg(LP_E_NOMEM, "out of memory");
	}
	lp_mem_set_budget(budget);
	lp_diag_init(&d);
	/* the thread's phase, not the last one of another thread */
	lp_mem_set_phase("load");
	/* the copy of a buffer is the document's text: tracked, and budgeted */
	if (data && !(r->data = lp_mem_alloc(LP_MEM_DOC, len ? len : 1, &d))) {
		lpipe_result_free(r);
		leave(was);
		return fail(LP_E_NOMEM, &d);
	}
	if (data && len)
		memcpy(r->data, data, len);
	s = run_scoped(r, e, path, data != NULL, len, &d);
	if (s && s != LP_E_VERIFY)
		lpipe_result_free(r);
	leave(was);
	if (s && s != LP_E_VERIFY)
		return fail(s, &d);
	*out = r;
	return s ? fail(s, &d) : ok();
}

int lpipe_run_file(lpipe_pipeline *p, lpipe_engine *e, const char *path, lpipe_result **out)
{
	if (!path) {
		if (out)
			*out = NULL;
		return fail_msg(LP_E_USAGE, "no document given");
	}
	return run(p, e, path, NULL, 0, out);
}

int lpipe_run_buffer(lpipe_pipeline *p, lpipe_engine *e, const char *name, const void *data,
		     size_t len, lpipe_result **out)
{
	if (!data && len) {
		if (out)
			*out = NULL;
		return fail_msg(LP_E_USAGE, "no document given");
	}
	return run(p, e, name ? name : "<buffer>", data ? data : "", len, out);
}

/* ---- results -------------------------------------------------------------- */

const char *lpipe_result_text(lpipe_result *r)
{
	struct lp_mem_account *was = lp_mem_account_use(r ? r->acct : NULL);
	const char *t = r ? lp_doc_result(&r->doc) : NULL;

	lp_mem_account_use(was);
	if (!t) {
		struct lp_diag d;

		lp_diag_init(&d);
		fail(lp_report_result_nomem(&d), &d);
	}
	return t;
}

/* The format called `format` (NULL: the pipeline's, when `r` is given)
 * into *f. */
static int format_of(const lpipe_result *r, const char *format, enum lp_format *f)
{
	*f = r ? r->pl->p->output.format : LP_FORMAT_TEXT;
	if ((format || !r) && (!format || lp_report_parse_format(format, f)))
		return fail_msg(LP_E_USAGE, "unknown format (expected text, markdown, json or html)");
	return ok();
}

int lpipe_format_check(const char *format)
{
	enum lp_format f;

	return format_of(NULL, format, &f);
}

int lpipe_result_write(lpipe_result *r, const char *format, FILE *out)
{
	struct lp_mem_account *was;
	enum lp_format f;
	struct lp_diag d;
	enum lp_status s;
	int rc;

	if (!r || !out)
		return fail_msg(LP_E_USAGE, "no result or no stream given");
	if ((rc = format_of(r, format, &f)))
		return rc;
	lp_diag_init(&d);
	was = lp_mem_account_use(r->acct);
	s = lp_report_write(&r->doc, f, &r->stats, out, &d);
	lp_mem_account_use(was);
	return s ? fail(s, &d) : ok();
}

const char *lpipe_result_report(lpipe_result *r, const char *format)
{
	enum lp_format f;
	char *buf = NULL;
	size_t n = 0;
	FILE *out;
	int rc;

	if (!r || format_of(r, format, &f))
		return NULL;
	if (r->report[f])
		return r->report[f];
	if (!(out = open_memstream(&buf, &n))) {
		fail_msg(LP_E_NOMEM, "out of memory");
		return NULL;
	}
	rc = lpipe_result_write(r, format, out);
	if (fclose(out) && !rc)
		rc = fail_msg(LP_E_NOMEM, "out of memory for the report");
	if (rc) {
		free(buf);
		return NULL;
	}
	return r->report[f] = buf;
}

const char *lpipe_result_json(lpipe_result *r)
{
	return lpipe_result_report(r, "json");
}

int lpipe_result_code(const lpipe_result *r)
{
	return r ? lp_status_exit_code(r->stats.status) : LPIPE_USAGE;
}

int lpipe_result_passed(const lpipe_result *r)
{
	return !r || !r->doc.verify.done ? -1 : r->doc.verify.passed != 0;
}

double lpipe_result_survival(const lpipe_result *r)
{
	return r && r->doc.verify.done ? r->doc.verify.survival_rate : 1.0;
}

size_t lpipe_result_peak_bytes(const lpipe_result *r)
{
	return r ? r->stats.peak_tracked_bytes : 0;
}

void lpipe_result_tokens(const lpipe_result *r, size_t *prompt, size_t *generated)
{
	if (prompt)
		*prompt = r ? r->tokens_in : 0;
	if (generated)
		*generated = r ? r->tokens_out : 0;
}

void lpipe_result_free(lpipe_result *r)
{
	struct lp_mem_account *was;

	if (!r)
		return;
	/* what the run reserved (a mapped document) goes back to its account */
	was = lp_mem_account_use(r->acct);
	if (r->doc.pipeline)
		lp_doc_release(&r->doc);
	lp_mem_account_use(was);
	for (size_t i = 0; i < sizeof(r->report) / sizeof(r->report[0]); i++)
		free(r->report[i]);
	loaded_put(r->pl);
	free(r->question);
	lp_mem_free(r->data);
	lp_mem_account_free(r->acct);
	free(r);
}
