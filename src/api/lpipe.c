/*
 * lpipe.c - the public library (lpipe.h) over the runner that `lpipe run`
 * and `lpipe batch` use (cli/runner.h), the engine (engine/engine.h) and
 * the report writers (report/report.h). Nothing here runs a stage or
 * formats a report itself.
 */
#include "api/lpipe.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/runner.h"
#include "config/pipeline.h"
#include "core/mem.h"
#include "core/status.h"
#include "engine/engine.h"
#include "report/report.h"
#include "stages/doc.h"

#include "config.h"

/* A loaded pipeline, shared by the handle and the results made with it. */
struct loaded {
	struct lp_pipeline *p;
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
};

struct lpipe_result {
	struct loaded *pl;
	struct lp_doc doc;
	struct lp_run_stats stats;
	char *question, *data;
	char *report[4];        /* by enum lp_format, made on demand */
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
		free(l);
	}
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

	lp_diag_init(&d);
	if (p->path)
		s = lp_pipeline_load(p->path, &vars, sets, p->n_sets, &pl, &d);
	else if (p->text)
		s = lp_pipeline_load_text(p->name, p->text, p->len, &vars, sets, p->n_sets, &pl, &d);
	else
		return ok();
	if (s)
		return fail(s, &d);
	if (!(l = malloc(sizeof(*l)))) {
		lp_pipeline_free(pl);
		return fail_msg(LP_E_NOMEM, "out of memory");
	}
	l->p = pl;
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

int lpipe_engine_new(int keep_models, lpipe_engine **out)
{
	struct lp_engine_params ep = lp_engine_default_params();
	struct lp_diag d;
	enum lp_status s;

	*out = calloc(1, sizeof(**out));
	if (!*out)
		return fail_msg(LP_E_NOMEM, "out of memory");
	ep.keep_idle = keep_models != 0;
	lp_diag_init(&d);
	if ((s = lp_engine_new(&ep, &(*out)->e, &d))) {
		free(*out);
		*out = NULL;
		return fail(s, &d);
	}
	return ok();
}

void lpipe_engine_free(lpipe_engine *e)
{
	if (!e)
		return;
	lp_engine_free(e->e);
	free(e);
}

/* ---- runs ----------------------------------------------------------------- */

static const char *question_of(const lpipe_pipeline *p)
{
	for (size_t i = 0; i < p->n_vars; i++)
		if (!strcmp(p->names[i], "question"))
			return p->values[i];
	return NULL;
}

/* Run on the file `path`, or on data[0..len) when data is not NULL. */
static int run(lpipe_pipeline *p, lpipe_engine *e, const char *path, const void *data,
	       size_t len, lpipe_result **out)
{
	struct lp_diag d;
	lpipe_result *r;
	enum lp_status s;
	size_t budget;

	if (!out)
		return fail_msg(LP_E_USAGE, "no place for the result given");
	*out = NULL;
	if (!p || !p->cur)
		return fail_msg(LP_E_USAGE, "no pipeline loaded");
	lp_diag_init(&d);
	if ((s = lp_runner_budget(p->cur->p, NULL, &budget, &d)))
		return fail(s, &d);
	if (!(r = calloc(1, sizeof(*r))))
		return fail_msg(LP_E_NOMEM, "out of memory");
	r->pl = p->cur;
	atomic_fetch_add(&r->pl->refs, 1);
	if (question_of(p) && !(r->question = strdup(question_of(p)))) {
		lpipe_result_free(r);
		return fail_msg(LP_E_NOMEM, "out of memory");
	}
	lp_mem_set_budget(budget);
	/* the copy of a buffer is the document's text: tracked, and budgeted */
	if (data && !(r->data = lp_mem_alloc(LP_MEM_DOC, len ? len : 1, &d))) {
		lpipe_result_free(r);
		return fail(LP_E_NOMEM, &d);
	}
	if (data) {
		if (len)
			memcpy(r->data, data, len);
		s = lp_runner_run_bytes(r->pl->p, path, r->data, len, r->question,
					e ? e->e : NULL, &r->doc, &r->stats, &d);
	} else {
		s = lp_runner_run(r->pl->p, path, r->question, e ? e->e : NULL, &r->doc,
				  &r->stats, &d);
	}
	if (s && s != LP_E_VERIFY) {
		lpipe_result_free(r);
		return fail(s, &d);
	}
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
	const char *t = r ? lp_doc_result(&r->doc) : NULL;

	if (!t) {
		struct lp_diag d;

		lp_diag_init(&d);
		fail(lp_report_result_nomem(&d), &d);
	}
	return t;
}

const char *lpipe_result_report(lpipe_result *r, const char *format)
{
	enum lp_format f;
	struct lp_diag d;
	enum lp_status s;
	char *buf = NULL;
	size_t n = 0;
	FILE *out;

	if (!r)
		return NULL;
	f = r->pl->p->output.format;
	if (format && lp_report_parse_format(format, &f)) {
		fail_msg(LP_E_USAGE, "unknown format (expected text, markdown, json or html)");
		return NULL;
	}
	if (r->report[f])
		return r->report[f];
	if (!(out = open_memstream(&buf, &n))) {
		fail_msg(LP_E_NOMEM, "out of memory");
		return NULL;
	}
	lp_diag_init(&d);
	s = lp_report_write(&r->doc, f, &r->stats, out, &d);
	if (fclose(out) && !s)
		s = lp_diag_set(&d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the report");
	if (s) {
		free(buf);
		fail(s, &d);
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

void lpipe_result_free(lpipe_result *r)
{
	if (!r)
		return;
	if (r->doc.pipeline)
		lp_doc_release(&r->doc);
	for (size_t i = 0; i < sizeof(r->report) / sizeof(r->report[0]); i++)
		free(r->report[i]);
	loaded_put(r->pl);
	free(r->question);
	lp_mem_free(r->data);
	free(r);
}
