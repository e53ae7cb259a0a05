#include "engine/engine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"

/* A loaded session and the key it was opened with. */
struct slot {
	struct lp_session_params key; /* path, chat_template and openai point
				       * to the copies below */
	char *path, *chat_template;
	struct served *served;         /* a remote session's server, or NULL */
	struct lp_session *s;
	size_t holders;
	unsigned long last_use;        /* engine tick of the last acquire */
};

/* A copy of a remote session's lp_openai_params, strings included. */
struct served {
	struct lp_openai_params p;
	char *url, *model, *api_key_env;
};

static void served_free(struct served *v)
{
	if (!v)
		return;
	free(v->url);
	free(v->model);
	free(v->api_key_env);
	free(v);
}

/* A copy of *p (NULL: none) into *out; 0, or -1 when out of memory. */
static int served_copy(const struct lp_openai_params *p, struct served **out)
{
	struct served *v;

	*out = NULL;
	if (!p)
		return 0;
	if (!(v = calloc(1, sizeof(*v))))
		return -1;
	v->p = *p;
	v->url = p->url ? strdup(p->url) : NULL;
	v->model = p->model ? strdup(p->model) : NULL;
	v->api_key_env = p->api_key_env ? strdup(p->api_key_env) : NULL;
	if ((p->url && !v->url) || (p->model && !v->model) ||
	    (p->api_key_env && !v->api_key_env)) {
		served_free(v);
		return -1;
	}
	v->p.url = v->url;
	v->p.model = v->model;
	v->p.api_key_env = v->api_key_env;
	*out = v;
	return 0;
}

struct lp_engine {
	struct lp_engine_params params;
	struct lp_mem_account *acct;   /* what its runs and what it keeps charge */
	pthread_mutex_t lock;
	pthread_cond_t dense_free;     /* signalled when the embedder is let go */
	struct slot *slots;            /* [n_slots] */
	size_t n_slots, cap_slots;
	struct lp_docstore *docs;      /* keep_documents, else NULL */
	struct lp_embedder *dense;     /* NULL until first asked for */
	char dense_device[8];          /* the device it was asked for on */
	int dense_busy;
	unsigned long dense_last_use;
	unsigned long tick;
	size_t n_opened;
	int closing;                   /* lp_engine_free was called while
				        * something was held: the last release
				        * frees the engine */
};

struct lp_engine_params lp_engine_default_params(void)
{
	struct lp_engine_params p = { 0, 0, 4 };

	return p;
}

enum lp_status lp_engine_new(const struct lp_engine_params *p, struct lp_engine **out,
			     struct lp_diag *d)
{
	struct lp_engine *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the engine");
	e->params = p ? *p : lp_engine_default_params();
	if (!e->params.max_sessions)
		e->params.max_sessions = 4;
	if (!(e->acct = lp_mem_account_new()) ||
	    (e->params.keep_documents && !(e->docs = lp_docstore_new()))) {
		lp_mem_account_free(e->acct);
		free(e);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the engine");
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->dense_free, NULL);
	*out = e;
	return LP_OK;
}

/* What the calling thread was on before shared_begin. */
struct shared {
	struct lp_mem_account *acct;
	uint32_t scope;
};

/* Put the calling thread on e's account under no scope, for what the
 * engine keeps for every document (sessions, the embedder): it is
 * charged and given back there, whichever thread opens or frees it.
 * shared_end puts the thread back. */
static struct shared shared_begin(const struct lp_engine *e)
{
	struct shared was;

	was.scope = lp_mem_scope_swap(0);
	was.acct = lp_mem_account_use(e->acct);
	return was;
}

static void shared_end(struct shared was)
{
	lp_mem_account_use(was.acct);
	lp_mem_scope_swap(was.scope);
}

/* Free a session or the embedder as shared memory (no document's). */
static void free_session(const struct lp_engine *e, struct lp_session *s)
{
	struct shared was = shared_begin(e);

	lp_session_free(s);
	shared_end(was);
}

static void free_dense(const struct lp_engine *e, struct lp_embedder *x)
{
	struct shared was = shared_begin(e);

	lp_embedder_free(x);
	shared_end(was);
}

static void drop_slot(struct lp_engine *e, size_t i)
{
	free_session(e, e->slots[i].s);
	free(e->slots[i].path);
	free(e->slots[i].chat_template);
	served_free(e->slots[i].served);
	e->slots[i] = e->slots[--e->n_slots];
}

static void destroy(struct lp_engine *e)
{
	free(e->slots);
	lp_mem_account_free(e->acct);
	pthread_cond_destroy(&e->dense_free);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* After a release by a closing engine: 1 when nothing is held any more (the
 * caller then unlocks and destroys it). Caller holds the lock. */
static int closed(const struct lp_engine *e)
{
	return e->closing && !e->n_slots && !e->dense_busy;
}

void lp_engine_free(struct lp_engine *e)
{
	struct shared was;

	if (!e)
		return;
	/* the store outlives the engine while runs hold its entries */
	was = shared_begin(e);
	lp_docstore_free(e->docs);
	shared_end(was);
	e->docs = NULL;
	pthread_mutex_lock(&e->lock);
	for (size_t i = e->n_slots; i-- > 0;)
		if (!e->slots[i].holders)
			drop_slot(e, i);
	if (e->dense && !e->dense_busy) {
		free_dense(e, e->dense);
		e->dense = NULL;
	}
	e->closing = 1;
	if (!closed(e)) {
		/* a result of the library still holds a session: the
		 * engine goes with the last release */
		pthread_mutex_unlock(&e->lock);
		return;
	}
	pthread_mutex_unlock(&e->lock);
	destroy(e);
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The same server, asked the same way (both NULL: both local). */
static int served_equal(const struct lp_openai_params *a, const struct lp_openai_params *b)
{
	if (!a || !b)
		return a == b;
	return str_eq(a->url, b->url) && str_eq(a->model, b->model) &&
	       str_eq(a->api_key_env, b->api_key_env) && a->timeout_ms == b->timeout_ms &&
	       a->retries == b->retries && a->retry_delay_ms == b->retry_delay_ms &&
	       a->concurrency == b->concurrency &&
	       !memcmp(&a->sampler, &b->sampler, sizeof(a->sampler));
}

/* Same key: every parameter that makes the session differ. */
static int key_equal(const struct lp_session_params *a, const struct lp_session_params *b)
{
	return served_equal(a->openai, b->openai) && str_eq(a->path, b->path) &&
	       str_eq(a->chat_template, b->chat_template) &&
	       str_eq(a->device ? a->device : "cpu", b->device ? b->device : "cpu") &&
	       a->n_ctx == b->n_ctx && a->kv_type == b->kv_type &&
	       a->n_threads == b->n_threads && a->stream_weights == b->stream_weights &&
	       a->shrink == b->shrink && a->min_ctx == b->min_ctx &&
	       a->gpu_layers == b->gpu_layers && a->gpu_budget == b->gpu_budget &&
	       !memcmp(&a->sampler, &b->sampler, sizeof(a->sampler));
}

/*
 * Free the least recently used thing nobody holds: an idle session, or the
 * idle embedder. Returns 1 when something went, 0 when nothing is idle.
 * Caller holds the lock.
 */
static int evict_one(struct lp_engine *e)
{
	size_t best = (size_t)-1;
	unsigned long when = (unsigned long)-1;

	for (size_t i = 0; i < e->n_slots; i++)
		if (!e->slots[i].holders && e->slots[i].last_use < when) {
			best = i;
			when = e->slots[i].last_use;
		}
	if (e->dense && !e->dense_busy && e->dense_last_use < when) {
		lp_debug("engine: unloading the dense embedder to make room");
		free_dense(e, e->dense);
		e->dense = NULL;
		return 1;
	}
	if (best == (size_t)-1)
		return 0;
	lp_debug("engine: unloading the idle model '%s' to make room", e->slots[best].path);
	drop_slot(e, best);
	return 1;
}

static int anything_idle(const struct lp_engine *e)
{
	for (size_t i = 0; i < e->n_slots; i++)
		if (!e->slots[i].holders)
			return 1;
	return e->dense && !e->dense_busy;
}

/*
 * Open a session under no scope. While something idle is loaded, first
 * without shrinking: a refusal then frees idle things and tries again,
 * so that only a budget truly full of held things makes a context shrink.
 */
static enum lp_status open_session(struct lp_engine *e, const struct lp_session_params *p,
				   struct lp_session **out, struct lp_diag *d)
{
	struct shared was = shared_begin(e);
	enum lp_status st;

	while (anything_idle(e)) {
		struct lp_session_params q = *p;
		q.shrink = 0;
		st = lp_session_open(&q, out, d);
		if (st != LP_E_NOMEM)
			goto done;
		lp_diag_init(d);
		evict_one(e);
	}
	st = lp_session_open(p, out, d);
done:
	shared_end(was);
	return st;
}

static enum lp_status add_slot(struct lp_engine *e, const struct lp_session_params *key,
			       struct lp_session *s, struct lp_diag *d)
{
	struct slot *sl;

	if (e->n_slots == e->cap_slots) {
		size_t cap = e->cap_slots ? 2 * e->cap_slots : 4;
		struct slot *v = realloc(e->slots, cap * sizeof(*v));
		if (!v)
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the engine");
		e->slots = v;
		e->cap_slots = cap;
	}
	sl = &e->slots[e->n_slots];
	memset(sl, 0, sizeof(*sl));
	sl->key = *key;
	sl->path = strdup(key->path);
	sl->chat_template = key->chat_template ? strdup(key->chat_template) : NULL;
	if (!sl->path || (key->chat_template && !sl->chat_template) ||
	    served_copy(key->openai, &sl->served)) {
		free(sl->path);
		free(sl->chat_template);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the engine");
	}
	sl->key.path = sl->path;
	sl->key.chat_template = sl->chat_template;
	sl->key.openai = sl->served ? &sl->served->p : NULL;
	sl->s = s;
	sl->holders = 1;
	sl->last_use = ++e->tick;
	e->n_slots++;
	return LP_OK;
}

enum lp_status lp_engine_session(struct lp_engine *e, const struct lp_session_params *p,
				 struct lp_session **out, int *opened, struct lp_diag *d)
{
	struct lp_session_params key = *p;
	struct lp_session *s = NULL;
	enum lp_status st;

	*out = NULL;
	*opened = 0;
	pthread_mutex_lock(&e->lock);
	/* under the lock: the default path is a static buffer */
	if (!key.path)
		key.path = lp_session_default_path();
	for (size_t i = 0; i < e->n_slots; i++)
		if (key_equal(&e->slots[i].key, &key)) {
			e->slots[i].holders++;
			e->slots[i].last_use = ++e->tick;
			*out = e->slots[i].s;
			pthread_mutex_unlock(&e->lock);
			return LP_OK;
		}
	while (e->n_slots >= e->params.max_sessions && evict_one(e))
		;
	st = open_session(e, p, &s, d);
	if (!st && (st = add_slot(e, &key, s, d)))
		free_session(e, s);
	if (!st) {
		e->n_opened++;
		*out = s;
		*opened = 1;
	}
	pthread_mutex_unlock(&e->lock);
	return st;
}

void lp_engine_session_release(struct lp_engine *e, struct lp_session *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&e->lock);
	for (size_t i = 0; i < e->n_slots; i++) {
		if (e->slots[i].s != s)
			continue;
		if (e->slots[i].holders)
			e->slots[i].holders--;
		if (!e->slots[i].holders && (!e->params.keep_idle || e->closing))
			drop_slot(e, i);
		break;
	}
	if (closed(e)) {
		pthread_mutex_unlock(&e->lock);
		destroy(e);
		return;
	}
	pthread_mutex_unlock(&e->lock);
}

/* Load the dense embedder under no scope, freeing idle sessions while the
 * budget refuses it. Caller holds the lock. */
static enum lp_status load_dense(struct lp_engine *e, const char *device,
				 struct lp_diag *d)
{
	struct shared was = shared_begin(e);
	enum lp_status st;

	for (;;) {
		st = lp_embedder_new_dense_on(NULL, device, &e->dense, d);
		if (st != LP_E_NOMEM || !evict_one(e))
			break;
		lp_diag_init(d);
	}
	shared_end(was);
	if (!st)
		snprintf(e->dense_device, sizeof e->dense_device, "%s", device);
	return st;
}

enum lp_status lp_engine_dense(struct lp_engine *e, const char *device,
			       struct lp_embedder **out, struct lp_diag *d)
{
	enum lp_status st = LP_OK;

	*out = NULL;
	pthread_mutex_lock(&e->lock);
	while (e->dense_busy)
		pthread_cond_wait(&e->dense_free, &e->lock);
	if (e->dense && strcmp(e->dense_device, device) != 0) {
		/* asked for on another device: load it there instead */
		free_dense(e, e->dense);
		e->dense = NULL;
	}
	if (!e->dense)
		st = load_dense(e, device, d);
	if (!st) {
		e->dense_busy = 1;
		e->dense_last_use = ++e->tick;
		*out = e->dense;
	}
	pthread_mutex_unlock(&e->lock);
	return st;
}

void lp_engine_dense_release(struct lp_engine *e, struct lp_embedder *x)
{
	if (!x)
		return;
	pthread_mutex_lock(&e->lock);
	if (x == e->dense) {
		e->dense_busy = 0;
		if (!e->params.keep_idle || e->closing) {
			free_dense(e, e->dense);
			e->dense = NULL;
		}
		pthread_cond_signal(&e->dense_free);
	}
	if (closed(e)) {
		pthread_mutex_unlock(&e->lock);
		destroy(e);
		return;
	}
	pthread_mutex_unlock(&e->lock);
}

struct lp_docstore *lp_engine_docs(struct lp_engine *e)
{
	return e->docs;
}

size_t lp_engine_unload_idle(struct lp_engine *e, const char *path)
{
	size_t n = 0;

	pthread_mutex_lock(&e->lock);
	for (size_t i = e->n_slots; i-- > 0;)
		if (!e->slots[i].holders && !strcmp(e->slots[i].path, path)) {
			lp_debug("engine: unloading the idle model '%s' as asked", path);
			drop_slot(e, i);
			n++;
		}
	pthread_mutex_unlock(&e->lock);
	return n;
}

/* A counter of the engine, read under its lock. */
static size_t read_count(struct lp_engine *e, const size_t *field)
{
	size_t n;

	pthread_mutex_lock(&e->lock);
	n = *field;
	pthread_mutex_unlock(&e->lock);
	return n;
}

size_t lp_engine_n_sessions(struct lp_engine *e)
{
	return read_count(e, &e->n_slots);
}

size_t lp_engine_n_opened(struct lp_engine *e)
{
	return read_count(e, &e->n_opened);
}

struct lp_mem_account *lp_engine_account(struct lp_engine *e)
{
	return e ? e->acct : NULL;
}
