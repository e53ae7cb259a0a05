/* runs.c - the run table, queue, admission and workers (runs.h). */
#include "serve/runs.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "api/internal.h"
#include "api/lpipe.h"
#include "core/cancel.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "serve/plan.h"

enum state { QUEUED, RUNNING, DONE, FAILED, CANCELLED };
static const char *const state_names[] = { "queued", "running", "done", "failed", "cancelled" };

static const char *const langs[] = { "en", "zh", "und" };
#define N_LANGS 3

struct offer {                      /* a pipeline clients may name */
	char name[LP_SERVE_NAME_MAX + 1];
	char path[4200];
	struct lp_serve_model_plan model[N_LANGS];
};

struct resident {                   /* a model the engine keeps loaded */
	const char *key;            /* an offer's model key (its GGUF file) */
	size_t bytes;               /* planned */
	unsigned long used;         /* admission tick of its last start */
};

struct lp_serve_run {
	char id[33];
	enum state state;
	const struct offer *offer;
	const struct lp_serve_doc *doc;  /* held until the run ends */
	char doc_id[65];
	lpipe_pipeline *pipeline;        /* loaded at submission, freed at the end */
	char *question;
	size_t own, model_bytes;         /* planned */
	const char *model_key;           /* "" for none */
	double t_submit, t_start, t_end;
	atomic_int cancel;
	int code;                        /* lpipe_code of the run */
	char *error;                     /* malloc'd message, failed/cancelled */
	char *result;                    /* the JSON report, done: tracked */
	size_t result_len;
	size_t peak_bytes;
	unsigned long fail_at;           /* LPIPE_FAIL_ALLOC_RUN: its allocation
					  * to fail, 0: none */
	/* progress, under the table lock */
	char stage[64], what[64], unit[16];
	size_t done, total, tokens, tokens0;
	double p_start, last_event;
	unsigned long seq;               /* events made so far */
	unsigned refs;                   /* readers and the table */
	struct lp_serve_run *next;       /* table, newest first */
	struct lp_serve_run *qnext;      /* queue */
};

struct lp_serve_runs {
	struct lp_serve_runs_config c;
	struct lp_serve_docs *docs;
	lpipe_engine *engine;
	struct offer *offers;
	size_t n_offers;
	struct resident *resident;       /* [n_resident], room for every
					  * model key of the offers */
	size_t n_resident;
	unsigned long tick;
	size_t capacity;                 /* budget less the document cache and
					  * the room for reports */
	size_t results_cap, result_bytes; /* kept reports: cap and bytes now */
	pthread_mutex_t lock;
	pthread_cond_t work;             /* the queue or admission changed */
	pthread_cond_t event;            /* a run made an event */
	struct lp_serve_run *table;
	struct lp_serve_run *qhead, *qtail;
	size_t n_queued, n_running, n_done, n_failed, n_cancelled, n_finished_kept;
	double run_s_sum;                /* of finished runs, for Retry-After */
	size_t run_s_n;
	int stopping, draining;
	unsigned long n_started;         /* runs started so far */
	unsigned long fail_run, fail_at; /* LPIPE_FAIL_ALLOC_RUN=K:N, 0: none */
	pthread_t *workers;
	int n_workers;
};

static void run_free(struct lp_serve_runs *r, struct lp_serve_run *run)
{
	lpipe_pipeline_free(run->pipeline);
	lp_serve_docs_put(r->docs, run->doc);
	free(run->question);
	free(run->error);
	lp_mem_free(run->result);
	free(run);
}

/* ---- planning the offered pipelines ---- */

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n > m && !strcmp(s + n - m, tail);
}

static enum lp_status add_offer(struct lp_serve_runs *r, const char *dir, const char *file)
{
	struct offer o;
	struct lp_diag d;
	size_t n = strlen(file) - 5;
	void *grown;

	memset(&o, 0, sizeof(o));
	if (n > LP_SERVE_NAME_MAX)
		return LP_OK;
	memcpy(o.name, file, n);
	if (!lp_serve_name_ok(o.name))
		return LP_OK;
	snprintf(o.path, sizeof(o.path), "%s/%s", dir, file);
	for (int l = 0; l < N_LANGS; l++) {
		lp_diag_init(&d);
		if (lp_serve_plan_model(o.path, langs[l], &o.model[l], &d)) {
			lp_warn("pipeline '%s' is not offered: %s", o.name, d.msg);
			return LP_OK;
		}
	}
	if (!(grown = realloc(r->offers, (r->n_offers + 1) * sizeof(o))))
		return LP_E_NOMEM;
	r->offers = grown;
	r->offers[r->n_offers++] = o;
	return LP_OK;
}

static enum lp_status plan_offers(struct lp_serve_runs *r, struct lp_diag *d)
{
	DIR *dir = opendir(r->c.pipelines_dir);
	struct dirent *e;
	enum lp_status s = LP_OK;

	if (!dir)
		return lp_diag_set(d, LP_E_IO, r->c.pipelines_dir, 0, 0,
				   "cannot read the pipelines directory: %s", strerror(errno));
	while (!s && (e = readdir(dir)))
		if (ends_with(e->d_name, ".yaml"))
			s = add_offer(r, r->c.pipelines_dir, e->d_name);
	closedir(dir);
	if (s)
		return lp_diag_set(d, s, NULL, 0, 0, "out of memory planning the pipelines");
	return LP_OK;
}

static const struct offer *find_offer(struct lp_serve_runs *r, const char *name)
{
	for (size_t i = 0; i < r->n_offers; i++)
		if (!strcmp(r->offers[i].name, name))
			return &r->offers[i];
	return NULL;
}

char *lp_serve_runs_pipelines(struct lp_serve_runs *r)
{
	json_t *a = json_array();
	char *s;

	for (size_t i = 0; i < r->n_offers; i++) {
		json_t *o = json_object(), *m = json_object();
		for (int l = 0; l < N_LANGS; l++)
			json_object_set_new(m, langs[l], json_integer((json_int_t)r->offers[i].model[l].bytes));
		json_object_set_new(o, "name", json_string(r->offers[i].name));
		json_object_set_new(o, "model_bytes", m);
		json_array_append_new(a, o);
	}
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

/* ---- admission (under the lock) ---- */

static struct resident *find_resident(struct lp_serve_runs *r, const char *key)
{
	for (size_t i = 0; i < r->n_resident; i++)
		if (!strcmp(r->resident[i].key, key))
			return &r->resident[i];
	return NULL;
}

static int key_running(struct lp_serve_runs *r, const char *key)
{
	for (struct lp_serve_run *a = r->table; a; a = a->next)
		if (a->state == RUNNING && !strcmp(a->model_key, key))
			return 1;
	return 0;
}

/* The bytes the engine keeps of documents: parsed forms and indexes. */
static size_t kept_documents(struct lp_serve_runs *r)
{
	size_t bytes;

	lpipe_engine_documents(r->engine, &bytes, NULL, NULL, NULL);
	return bytes;
}

/* Planned bytes of the running runs' own parts, of every model the engine
 * keeps (a running run's model among them) and of what it keeps of
 * documents, plus what `add` would bring (NULL: nothing). */
static size_t planned_with(struct lp_serve_runs *r, const struct lp_serve_run *add)
{
	size_t sum = 0;

	for (struct lp_serve_run *a = r->table; a; a = a->next)
		if (a->state == RUNNING)
			sum += a->own;
	for (size_t i = 0; i < r->n_resident; i++)
		sum += r->resident[i].bytes;
	sum += kept_documents(r);
	if (add)
		sum += add->own + (add->model_bytes && !find_resident(r, add->model_key)
					   ? add->model_bytes : 0);
	return sum;
}

/* Kept models that no running run uses and `keep` is not: their bytes,
 * and the least recently started of them in *lru (NULL: none). */
static size_t idle_models(struct lp_serve_runs *r, const char *keep, struct resident **lru)
{
	size_t sum = 0;

	*lru = NULL;
	for (size_t i = 0; i < r->n_resident; i++) {
		struct resident *m = &r->resident[i];
		if (!strcmp(m->key, keep) || key_running(r, m->key))
			continue;
		sum += m->bytes;
		if (!*lru || m->used < (*lru)->used)
			*lru = m;
	}
	return sum;
}

/* The head of the queue may start: a job is free and its plan fits,
 * once what is kept of documents and no run holds is dropped, and then
 * kept models that no running run uses are unloaded, least recently
 * started first, as far as that makes it fit (and not at all
 * when even unloading them all would not). The lock order is the runs'
 * lock, then the engine's: the engine never calls back into the runs
 * while it holds its own. */
static int head_fits(struct lp_serve_runs *r)
{
	struct resident *lru;
	size_t need;

	if (!r->qhead || r->n_running >= (size_t)r->c.jobs)
		return 0;
	if ((need = planned_with(r, r->qhead)) <= r->capacity)
		return 1;
	/* nothing goes unless dropping all that may go makes it fit */
	if (need > r->capacity + kept_documents(r) + idle_models(r, r->qhead->model_key, &lru))
		return 0;
	/* what is kept of documents goes first: it is rebuilt in a moment */
	lpipe_engine_drop_documents(r->engine, need - r->capacity);
	while ((need = planned_with(r, r->qhead)) > r->capacity) {
		if (need - idle_models(r, r->qhead->model_key, &lru) > r->capacity || !lru)
			return 0;
		lp_info("unloading the kept model '%s' to make room for a run", lru->key);
		lpipe_engine_unload(r->engine, lru->key);
		*lru = r->resident[--r->n_resident];
	}
	return 1;
}

/* `run` starts: its model is kept from now on (under the lock). */
static void keep_model(struct lp_serve_runs *r, const struct lp_serve_run *run)
{
	struct resident *m;

	if (!run->model_bytes)
		return;
	if (!(m = find_resident(r, run->model_key))) {
		m = &r->resident[r->n_resident++];
		m->key = run->model_key;
		m->bytes = 0;
	}
	if (run->model_bytes > m->bytes)
		m->bytes = run->model_bytes;
	m->used = ++r->tick;
}

/* ---- events ---- */

static void bump(struct lp_serve_runs *r, struct lp_serve_run *run)
{
	run->seq++;
	run->last_event = lp_now_s();
	pthread_cond_broadcast(&r->event);
}

struct watch {                   /* what a worker's observer sees */
	struct lp_serve_runs *r;
	struct lp_serve_run *run;
};

static void observer(void *ctx, const struct lp_progress *p, int ended, const char *stage,
		     size_t tokens)
{
	struct watch *w = ctx;
	struct lp_serve_run *run = w->run;
	double now = lp_now_s();
	int news;

	pthread_mutex_lock(&w->r->lock);
	news = strcmp(run->stage, stage) != 0 || ended;
	snprintf(run->stage, sizeof(run->stage), "%s", stage);
	if (p) {
		if (p->start_s != run->p_start || (p->what && strcmp(run->what, p->what)))
			news = 1;
		snprintf(run->what, sizeof(run->what), "%s", p->what ? p->what : "");
		snprintf(run->unit, sizeof(run->unit), "%s", p->unit ? p->unit : "");
		run->done = p->done;
		run->total = p->total;
		run->p_start = p->start_s;
		run->tokens0 = p->tokens0;
	}
	run->tokens = tokens;
	if (news || now - run->last_event >= 0.2)
		bump(w->r, run);
	pthread_mutex_unlock(&w->r->lock);
}

/* The progress event's data (under the lock). */
static json_t *progress_json(const struct lp_serve_run *run)
{
	json_t *o = json_object();
	double now = lp_now_s(), el = run->p_start ? now - run->p_start : 0;
	size_t tok = run->tokens >= run->tokens0 ? run->tokens - run->tokens0 : 0;

	json_object_set_new(o, "stage", json_string(run->stage));
	json_object_set_new(o, "step", json_string(run->what));
	json_object_set_new(o, "unit", json_string(run->unit));
	json_object_set_new(o, "done", json_integer((json_int_t)run->done));
	json_object_set_new(o, "total", json_integer((json_int_t)run->total));
	json_object_set_new(o, "tokens", json_integer((json_int_t)run->tokens));
	json_object_set_new(o, "tokens_per_s", json_real(el > 0 ? tok / el : 0));
	if (run->total && run->done && run->done <= run->total)
		json_object_set_new(o, "eta_s",
				    json_real(el * (double)(run->total - run->done) / run->done));
	else
		json_object_set_new(o, "eta_s", json_null());
	return o;
}

/* ---- the workers ---- */

static void finish(struct lp_serve_runs *r, struct lp_serve_run *run, enum state st)
{
	/* what a finished run no longer needs goes now, not when it leaves
	 * the table: its pipeline (tens of KB of tracked config) and its
	 * hold on the document, which the store may then drop */
	lpipe_pipeline_free(run->pipeline);
	run->pipeline = NULL;
	lp_serve_docs_put(r->docs, run->doc);
	run->doc = NULL;
	run->state = st;
	run->t_end = lp_now_s();
	r->n_running--;
	if (st == DONE)
		r->n_done++;
	else if (st == FAILED)
		r->n_failed++;
	else
		r->n_cancelled++;
	r->run_s_sum += run->t_end - run->t_start;
	r->run_s_n++;
	lp_serve_metrics_end(state_names[st], run->t_end - run->t_submit);
	bump(r, run);
	pthread_cond_broadcast(&r->work);
}

/* Drop the oldest finished run that nobody reads (under the lock);
 * 0 when there is none. */
static int drop_oldest(struct lp_serve_runs *r)
{
	struct lp_serve_run **last = NULL;

	for (struct lp_serve_run **l = &r->table; *l; l = &(*l)->next)
		if ((*l)->state >= DONE && (*l)->refs == 1)
			last = l;
	if (!last)
		return 0;
	{
		struct lp_serve_run *run = *last;
		*last = run->next;
		r->result_bytes -= run->result_len;
		run_free(r, run);
	}
	return 1;
}

/* Keep a copy of the report `j` in tracked memory, within the room for
 * reports: the oldest finished runs go first. NULL with *why set when it
 * cannot be kept (under the lock). */
static char *keep_report(struct lp_serve_runs *r, const char *j, size_t *len, char **why)
{
	size_t n = strlen(j);
	char *copy = NULL, a[32], b[32];

	while (r->result_bytes + n > r->results_cap && drop_oldest(r))
		;
	if (r->result_bytes + n <= r->results_cap)
		copy = lp_mem_alloc(LP_MEM_OTHER, n + 1, NULL);
	if (!copy) {
		char msg[200];
		snprintf(msg, sizeof(msg), "no room to keep the report of %s (reports may take %s)",
			 lp_mem_format_size(n, a, sizeof(a)),
			 lp_mem_format_size(r->results_cap, b, sizeof(b)));
		*why = strdup(msg);
		return NULL;
	}
	memcpy(copy, j, n + 1);
	r->result_bytes += n;
	*len = n;
	return copy;
}

static void execute(struct lp_serve_runs *r, struct lp_serve_run *run)
{
	struct watch w = { r, run };
	lpipe_result *res = NULL;
	const char *j = NULL;
	char *err = NULL;
	int code;

	lp_cancel_watch(&run->cancel);
	lp_progress_observe(observer, &w);
	lp_mem_fail_thread_after(run->fail_at);
	code = lpipe_run_buffer(run->pipeline, r->engine,
				run->doc->name[0] ? run->doc->name : run->doc->id, run->doc->data,
				run->doc->len, &res);
	lp_mem_fail_thread_after(0);
	lp_progress_observe(NULL, NULL);
	lp_cancel_watch(NULL);
	if (res && !(j = lpipe_result_json(res)))
		err = strdup(lpipe_errmsg());
	else if (!res)
		err = strdup(lpipe_errmsg());
	pthread_mutex_lock(&r->lock);
	run->code = code;
	run->peak_bytes = res ? lpipe_result_peak_bytes(res) : 0;
	if (j)
		run->result = keep_report(r, j, &run->result_len, &err);
	run->error = err;
	finish(r, run, run->result ? DONE : atomic_load(&run->cancel) ? CANCELLED : FAILED);
	pthread_mutex_unlock(&r->lock);
	lpipe_result_free(res);
}

/* Drop the oldest finished runs beyond LP_SERVE_KEEP_RUNS that nobody
 * reads (under the lock). */
static void trim(struct lp_serve_runs *r)
{
	size_t kept = 0;

	for (struct lp_serve_run **l = &r->table; *l;) {
		struct lp_serve_run *run = *l;
		if (run->state >= DONE && ++kept > LP_SERVE_KEEP_RUNS && run->refs == 1) {
			*l = run->next;
			r->result_bytes -= run->result_len;
			run_free(r, run);
			continue;
		}
		l = &run->next;
	}
}

/* LPIPE_FAIL_ALLOC_RUN=K:N: the K-th run started fails its N-th tracked
 * allocation (a test's fault in one run among others); anything else
 * there is ignored with a warning. */
static void read_fault(struct lp_serve_runs *r)
{
	const char *e = getenv("LPIPE_FAIL_ALLOC_RUN");
	char *end;

	if (!e || !*e)
		return;
	r->fail_run = strtoul(e, &end, 10);
	r->fail_at = *end == ':' ? strtoul(end + 1, &end, 10) : 0;
	if (*end || !r->fail_run || !r->fail_at) {
		lp_warn("LPIPE_FAIL_ALLOC_RUN='%s' is ignored: it takes RUN:ALLOCATION, "
			"two numbers from 1", e);
		r->fail_run = r->fail_at = 0;
	}
}

static void *worker(void *arg)
{
	struct lp_serve_runs *r = arg;

	lp_mem_account_use(lp_serve_runs_account(r));
	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct lp_serve_run *run;
		while (!r->stopping && !head_fits(r))
			pthread_cond_wait(&r->work, &r->lock);
		if (r->stopping)
			break;
		run = r->qhead;
		r->qhead = run->qnext;
		if (!r->qhead)
			r->qtail = NULL;
		r->n_queued--;
		r->n_running++;
		run->state = RUNNING;
		run->t_start = lp_now_s();
		run->fail_at = ++r->n_started == r->fail_run ? r->fail_at : 0;
		keep_model(r, run);
		lp_serve_metrics_wait(run->t_start - run->t_submit);
		bump(r, run);
		/* the next head may fit beside it */
		pthread_cond_broadcast(&r->work);
		pthread_mutex_unlock(&r->lock);
		execute(r, run);
		pthread_mutex_lock(&r->lock);
		trim(r);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

enum lp_status lp_serve_runs_new(const struct lp_serve_runs_config *c, struct lp_serve_docs *docs,
				 struct lp_serve_runs **out, struct lp_diag *d)
{
	struct lp_serve_runs *r = calloc(1, sizeof(*r));
	enum lp_status s;

	if (!r)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
	r->c = *c;
	r->docs = docs;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->work, NULL);
	pthread_cond_init(&r->event, NULL);
	read_fault(r);
	r->results_cap = c->budget / LP_SERVE_REPORTS_SHARE;
	r->capacity = c->budget > lp_serve_docs_cap(docs) + r->results_cap
			      ? c->budget - lp_serve_docs_cap(docs) - r->results_cap : 0;
	if ((s = plan_offers(r, d)))
		goto fail;
	if (r->n_offers && !(r->resident = calloc(r->n_offers * N_LANGS, sizeof(*r->resident)))) {
		s = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	if (lpipe_engine_new(LPIPE_KEEP_MODELS | LPIPE_KEEP_DOCUMENTS, &r->engine)) {
		s = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s", lpipe_errmsg());
		goto fail;
	}
	r->workers = calloc((size_t)c->jobs, sizeof(*r->workers));
	if (!r->workers) {
		s = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	for (; r->n_workers < c->jobs; r->n_workers++)
		if (pthread_create(&r->workers[r->n_workers], NULL, worker, r)) {
			s = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "cannot start a worker thread");
			goto fail;
		}
	*out = r;
	return LP_OK;
fail:
	lp_serve_runs_free(r);
	return s;
}

void lp_serve_runs_free(struct lp_serve_runs *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = 1;
	for (struct lp_serve_run *run = r->table; run; run = run->next)
		atomic_store(&run->cancel, 1);
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->lock);
	for (int i = 0; i < r->n_workers; i++)
		pthread_join(r->workers[i], NULL);
	while (r->table) {
		struct lp_serve_run *run = r->table;
		r->table = run->next;
		run_free(r, run);
	}
	lpipe_engine_free(r->engine);
	free(r->workers);
	free(r->resident);
	free(r->offers);
	pthread_cond_destroy(&r->work);
	pthread_cond_destroy(&r->event);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* ---- submission ---- */

static void refuse(struct lp_serve_submit *out, unsigned status, enum lp_serve_reject why,
		   const char *fmt, const char *a, const char *b)
{
	out->status = status;
	snprintf(out->message, sizeof(out->message), fmt, a, b);
	lp_serve_metrics_reject(why);
}

static enum lp_status new_id(char id[33])
{
	unsigned char raw[16];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return LP_E_IO;
	for (int i = 0; i < 16; i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
	return LP_OK;
}

/* Load the pipeline with the request's question and overrides: a bad
 * override is the client's error, found before the run is queued. */
static lpipe_pipeline *load(const struct offer *o, const struct lp_serve_run_req *req,
			    struct lp_serve_submit *out)
{
	lpipe_pipeline *p = lpipe_pipeline_new();
	int rc = p ? 0 : LPIPE_NOMEM;

	if (!rc && req->question)
		rc = lpipe_pipeline_set_var(p, "question", req->question);
	for (size_t i = 0; !rc && i < req->n_sets; i++)
		rc = lpipe_pipeline_set(p, req->sets[i]);
	if (!rc)
		rc = lpipe_pipeline_load_file(p, o->path);
	if (rc) {
		refuse(out, rc == LPIPE_NOMEM ? 503 : 400, LP_REJ_BAD_REQUEST,
		       "pipeline '%s': %s", o->name, p ? lpipe_errmsg() : "out of memory");
		lpipe_pipeline_free(p);
		return NULL;
	}
	return p;
}

static int lang_index(const char *lang)
{
	for (int l = 0; l < N_LANGS; l++)
		if (!strcmp(langs[l], lang))
			return l;
	return N_LANGS - 1;
}

void lp_serve_runs_submit(struct lp_serve_runs *r, const struct lp_serve_run_req *req,
			  struct lp_serve_submit *out)
{
	const struct offer *o = find_offer(r, req->pipeline);
	struct lp_serve_run *run;
	const struct lp_serve_doc *doc;
	const char *largest;
	char need[32], cap[32];
	int l;

	memset(out, 0, sizeof(*out));
	if (lp_serve_runs_draining(r))
		return refuse(out, 503, LP_REJ_DRAINING, "the server is shutting down%s%s", "", "");
	if (!o)
		return refuse(out, 404, LP_REJ_NOT_FOUND, "no pipeline named '%s'%s", req->pipeline,
			      " (GET /v1/pipelines lists them)");
	if (!(doc = lp_serve_docs_get(r->docs, req->document)))
		return refuse(out, 404, LP_REJ_NOT_FOUND, "no document '%s'%s", req->document,
			      " (upload it with POST /v1/documents)");
	if (!(run = calloc(1, sizeof(*run))) || new_id(run->id) ||
	    (req->question && !(run->question = strdup(req->question)))) {
		lp_serve_docs_put(r->docs, doc);
		if (run)
			free(run->question);
		free(run);
		return refuse(out, 503, LP_REJ_DRAINING, "out of memory%s%s", "", "");
	}
	run->doc = doc;
	memcpy(run->doc_id, doc->id, sizeof(run->doc_id));
	run->offer = o;
	l = lang_index(doc->lang);
	run->model_bytes = o->model[l].bytes;
	run->model_key = o->model[l].key;
	run->refs = 1;
	if (!(run->pipeline = load(o, req, out))) {
		run_free(r, run);
		return;
	}
	run->own = lpipe_pipeline_plan_bytes(run->pipeline, doc->len, &largest);
	if (run->own + run->model_bytes > r->capacity) {
		char msg[300], m[32];
		snprintf(msg, sizeof(msg), "%s (model %s, document %s with its largest stage, %s)",
			 lp_mem_format_size(run->own + run->model_bytes, need, sizeof(need)),
			 lp_mem_format_size(run->model_bytes, m, sizeof(m)),
			 lp_mem_format_size(run->own, cap, sizeof(cap)), largest);
		refuse(out, 413, LP_REJ_TOO_LARGE,
		       "the run would need %s, more than the %s runs may use", msg,
		       lp_mem_format_size(r->capacity, cap, sizeof(cap)));
		run_free(r, run);
		return;
	}
	pthread_mutex_lock(&r->lock);
	if (r->n_queued >= r->c.queue) {
		double mean = r->run_s_n ? r->run_s_sum / r->run_s_n : 1;
		out->retry_after = (unsigned)ceil(mean * (double)(r->n_queued + 1) / r->c.jobs);
		if (out->retry_after < 1)
			out->retry_after = 1;
		pthread_mutex_unlock(&r->lock);
		refuse(out, 429, LP_REJ_QUEUE_FULL, "the queue is full (%s runs wait)%s", "", "");
		snprintf(out->message, sizeof(out->message), "the queue is full (%zu runs wait)",
			 r->c.queue);
		run_free(r, run);
		return;
	}
	run->t_submit = lp_now_s();
	run->state = QUEUED;
	run->next = r->table;
	r->table = run;
	if (r->qtail)
		r->qtail->qnext = run;
	else
		r->qhead = run;
	r->qtail = run;
	r->n_queued++;
	bump(r, run);
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->lock);
	out->status = 202;
	memcpy(out->id, run->id, sizeof(out->id));
}

/* ---- reading ---- */

static struct lp_serve_run *find_run(struct lp_serve_runs *r, const char *id)
{
	for (struct lp_serve_run *run = r->table; run; run = run->next)
		if (!strcmp(run->id, id))
			return run;
	return NULL;
}

static size_t queue_position(struct lp_serve_runs *r, const struct lp_serve_run *run)
{
	size_t i = 1;

	for (struct lp_serve_run *q = r->qhead; q; q = q->qnext, i++)
		if (q == run)
			return i;
	return 0;
}

/* The run's state object (under the lock). */
static json_t *state_json(struct lp_serve_runs *r, const struct lp_serve_run *run)
{
	json_t *o = json_object();
	double now = lp_now_s();

	json_object_set_new(o, "id", json_string(run->id));
	json_object_set_new(o, "state", json_string(state_names[run->state]));
	json_object_set_new(o, "pipeline", json_string(run->offer->name));
	json_object_set_new(o, "document", json_string(run->doc_id));
	json_object_set_new(o, "question", run->question ? json_string(run->question) : json_null());
	json_object_set_new(o, "planned_bytes", json_integer((json_int_t)(run->own + run->model_bytes)));
	if (run->state == QUEUED)
		json_object_set_new(o, "queue_position", json_integer((json_int_t)queue_position(r, run)));
	json_object_set_new(o, "wait_s", json_real((run->t_start ? run->t_start : now) - run->t_submit));
	if (run->t_start)
		json_object_set_new(o, "run_s", json_real((run->t_end ? run->t_end : now) - run->t_start));
	if (run->state == RUNNING)
		json_object_set_new(o, "progress", progress_json(run));
	if (run->state >= DONE) {
		json_object_set_new(o, "code", json_integer(run->code));
		json_object_set_new(o, "peak_bytes", json_integer((json_int_t)run->peak_bytes));
	}
	if (run->error)
		json_object_set_new(o, "error", json_string(run->error));
	return o;
}

char *lp_serve_runs_describe(struct lp_serve_runs *r, const char *id)
{
	struct lp_serve_run *run;
	char *meta, *out = NULL;
	json_t *o;

	pthread_mutex_lock(&r->lock);
	if (!(run = find_run(r, id))) {
		pthread_mutex_unlock(&r->lock);
		return NULL;
	}
	o = state_json(r, run);
	meta = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (meta && run->result) {
		/* the report as lpipe run --format json writes it, unparsed */
		size_t n = strlen(meta);
		out = malloc(n + strlen(run->result) + 16);
		if (out) {
			memcpy(out, meta, n - 1);
			sprintf(out + n - 1, ",\"result\":%s}", run->result);
		}
		free(meta);
	} else {
		out = meta;
	}
	pthread_mutex_unlock(&r->lock);
	return out ? out : strdup("");
}

int lp_serve_runs_cancel(struct lp_serve_runs *r, const char *id)
{
	struct lp_serve_run *run;
	int rc;

	pthread_mutex_lock(&r->lock);
	if (!(run = find_run(r, id))) {
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	rc = run->state >= DONE ? 2 : 1;
	atomic_store(&run->cancel, 1);
	if (run->state == QUEUED) {
		struct lp_serve_run **l = &r->qhead, *prev = NULL;
		while (*l != run) {
			prev = *l;
			l = &(*l)->qnext;
		}
		*l = run->qnext;
		if (r->qtail == run)
			r->qtail = prev;
		r->n_queued--;
		r->n_running++; /* finish() counts it down */
		run->t_start = lp_now_s();
		run->error = strdup("cancelled while queued");
		finish(r, run, CANCELLED);
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

struct lp_serve_run *lp_serve_runs_hold(struct lp_serve_runs *r, const char *id)
{
	struct lp_serve_run *run;

	pthread_mutex_lock(&r->lock);
	if ((run = find_run(r, id)))
		run->refs++;
	pthread_mutex_unlock(&r->lock);
	return run;
}

void lp_serve_runs_release(struct lp_serve_runs *r, struct lp_serve_run *run)
{
	if (!run)
		return;
	pthread_mutex_lock(&r->lock);
	run->refs--;
	pthread_cond_broadcast(&r->work); /* a drain may wait for readers */
	pthread_mutex_unlock(&r->lock);
}

/* Event streams still open (under the lock). */
static size_t readers(struct lp_serve_runs *r)
{
	size_t n = 0;

	for (struct lp_serve_run *run = r->table; run; run = run->next)
		n += run->refs - 1;
	return n;
}

int lp_serve_runs_wait(struct lp_serve_runs *r, struct lp_serve_run *run, unsigned long *seq,
		       double timeout_s, const char **event, char **data)
{
	struct timespec ts;
	json_t *o;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)timeout_s;
	ts.tv_nsec += (long)((timeout_s - floor(timeout_s)) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	while (run->seq == *seq && run->state < DONE && !r->stopping)
		if (pthread_cond_timedwait(&r->event, &r->lock, &ts) == ETIMEDOUT)
			break;
	if (run->seq != *seq) {
		*seq = run->seq;
		if (run->state == RUNNING && run->stage[0]) {
			*event = "progress";
			o = progress_json(run);
		} else {
			*event = "state";
			o = state_json(r, run);
		}
		*data = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		rc = *data ? 1 : 0;
	} else if (run->state >= DONE || r->stopping) {
		rc = -1;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void lp_serve_runs_gauges(struct lp_serve_runs *r, struct lp_serve_gauges *g)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_lock(&r->lock);
	g->queued = r->n_queued;
	g->running = r->n_running;
	g->done = r->n_done;
	g->failed = r->n_failed;
	g->cancelled = r->n_cancelled;
	g->planned_bytes = planned_with(r, NULL);
	g->models = r->n_resident;
	g->models_loaded = lpipe_engine_models_loaded(r->engine);
	lpipe_engine_documents(r->engine, &g->shared_bytes, &g->shared_entries, &g->shared_hits,
			       &g->shared_misses);
	for (size_t i = 0; i < r->n_resident; i++)
		g->model_bytes += r->resident[i].bytes;
	g->jobs = (size_t)r->c.jobs;
	g->queue_cap = r->c.queue;
	pthread_mutex_unlock(&r->lock);
	lp_serve_docs_usage(r->docs, &g->doc_bytes, &g->doc_count);
	g->doc_cap = lp_serve_docs_cap(r->docs);
}

int lp_serve_runs_draining(struct lp_serve_runs *r)
{
	int v;

	pthread_mutex_lock(&r->lock);
	v = r->draining;
	pthread_mutex_unlock(&r->lock);
	return v;
}

/* Wait on `work` until no run runs or `until` passes (under the lock). */
static void wait_running(struct lp_serve_runs *r, double until)
{
	while (r->n_running && lp_now_s() < until) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&r->work, &r->lock, &ts);
	}
}

size_t lp_serve_runs_drain(struct lp_serve_runs *r, double timeout_s)
{
	double until = lp_now_s() + timeout_s;
	size_t left;

	pthread_mutex_lock(&r->lock);
	r->draining = 1;
	while (r->qhead) {
		struct lp_serve_run *run = r->qhead;
		r->qhead = run->qnext;
		r->n_queued--;
		r->n_running++;
		run->t_start = lp_now_s();
		atomic_store(&run->cancel, 1);
		run->error = strdup("the server shut down before the run started");
		finish(r, run, CANCELLED);
	}
	r->qtail = NULL;
	wait_running(r, until);
	for (struct lp_serve_run *run = r->table; run; run = run->next)
		if (run->state == RUNNING)
			atomic_store(&run->cancel, 1);
	/* a cancelled run stops at its next step: give it that long */
	wait_running(r, lp_now_s() + LP_SERVE_CANCEL_GRACE_S);
	left = r->n_running;
	/* let the streams of runs that ended write their last event before
	 * the connections close */
	pthread_cond_broadcast(&r->event);
	while (!left && readers(r) && lp_now_s() < until + LP_SERVE_CANCEL_GRACE_S) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&r->work, &r->lock, &ts);
	}
	/* event readers end their streams; idle workers leave */
	r->stopping = 1;
	pthread_cond_broadcast(&r->event);
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->lock);
	return left;
}

struct lp_mem_account *lp_serve_runs_account(struct lp_serve_runs *r)
{
	return r ? lp_api_engine_account(r->engine) : NULL;
}
