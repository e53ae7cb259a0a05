#include "model/remote/openai.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/buf.h"
#include "core/cancel.h"
#include "core/log.h"
#include "core/mem.h"

/* A reply larger than this is not a chat completion of ours. */
#define REPLY_MAX ((size_t)16 << 20)
/* How much of a server's error reply a message quotes. */
#define QUOTE_MAX 200

struct lp_openai {
	char *endpoint;     /* {url}/chat/completions */
	char *model;
	char *key;          /* NULL without one; wiped at free */
	char *auth;         /* "Authorization: Bearer KEY", likewise */
	long timeout_ms;
	int retries;
	long delay_ms;
	struct lp_sampler_params sampler;
	int concurrency;          /* attempts in flight at once; 0: no cap */
	int in_flight;            /* attempts now between slot_take and slot_give */
	pthread_mutex_t slot_lock; /* guards in_flight */
	pthread_cond_t slot_free;  /* signalled when in_flight drops */
};

/* One attempt's outcome. */
struct reply {
	struct lp_buf body;
	long status;        /* HTTP status, 0 when none came */
	long retry_after_ms; /* from a Retry-After header, -1 when none */
	CURLcode code;
	char err[CURL_ERROR_SIZE];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_code = CURLE_FAILED_INIT;

static void curl_init(void)
{
	curl_init_code = curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct lp_openai_params lp_openai_default_params(void)
{
	struct lp_openai_params p;

	memset(&p, 0, sizeof(p));
	p.timeout_ms = 60000;
	p.retries = 4;
	p.retry_delay_ms = 500;
	p.concurrency = 4;
	p.sampler = lp_sampler_default_params();
	p.sampler.temperature = 0.0f;
	return p;
}

static void wipe_free(char *s)
{
	if (!s)
		return;
	/* volatile: the stores must happen although s is freed next */
	for (volatile char *p = s; *p; p++)
		*p = 0;
	free(s);
}

void lp_openai_free(struct lp_openai *c)
{
	if (!c)
		return;
	pthread_cond_destroy(&c->slot_free);
	pthread_mutex_destroy(&c->slot_lock);
	wipe_free(c->auth);
	wipe_free(c->key);
	free(c->endpoint);
	free(c->model);
	free(c);
}

const char *lp_openai_endpoint(const struct lp_openai *c)
{
	return c->endpoint;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);

	if (s) {
		memcpy(s, a, la);
		memcpy(s + la, b, lb + 1);
	}
	return s;
}

enum lp_status lp_openai_new(const struct lp_openai_params *p, struct lp_openai **out,
			     struct lp_diag *d)
{
	struct lp_openai *c;
	const char *key = NULL;
	size_t n;

	*out = NULL;
	if (!p->url || !*p->url || !p->model || !*p->model)
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
				   "backend openai needs model.url and model.name");
	if (strncmp(p->url, "http://", 7) && strncmp(p->url, "https://", 8))
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
				   "model.url '%s' is not an http:// or https:// URL", p->url);
	if (p->api_key_env && *p->api_key_env) {
		key = getenv(p->api_key_env);
		if (!key || !*key)
			return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
					   "model.api_key_env names '%s', which is not set "
					   "in the environment", p->api_key_env);
	}
	pthread_once(&curl_once, curl_init);
	if (curl_init_code != CURLE_OK)
		return lp_diag_set(d, LP_E_IO, NULL, 0, 0, "unable to start libcurl: %s",
				   curl_easy_strerror(curl_init_code));
	c = calloc(1, sizeof(*c));
	if (!c)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a model client");
	pthread_mutex_init(&c->slot_lock, NULL);
	pthread_cond_init(&c->slot_free, NULL);
	n = strlen(p->url);
	while (n > 0 && p->url[n - 1] == '/')
		n--;
	c->endpoint = malloc(n + sizeof("/chat/completions"));
	if (c->endpoint) {
		memcpy(c->endpoint, p->url, n);
		strcpy(c->endpoint + n, "/chat/completions");
	}
	c->model = strdup(p->model);
	if (key) {
		c->key = strdup(key);
		c->auth = join("Authorization: Bearer ", key);
	}
	if (!c->endpoint || !c->model || (key && (!c->key || !c->auth))) {
		lp_openai_free(c);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a model client");
	}
	c->timeout_ms = p->timeout_ms > 0 ? p->timeout_ms : 60000;
	c->retries = p->retries > 0 ? p->retries : 0;
	c->delay_ms = p->retry_delay_ms > 0 ? p->retry_delay_ms : 500;
	c->sampler = p->sampler;
	c->concurrency = p->concurrency > 0 ? p->concurrency : 0;
	*out = c;
	return LP_OK;
}

/* The request body, a new string (free), or NULL when out of memory. */
static char *request_body(const struct lp_openai *c, const struct lp_chat_msg *msgs, size_t n,
			  const char *prefix, size_t max_tokens)
{
	json_t *root = json_object(), *arr = json_array();
	char *s = NULL;
	int bad = !root || !arr || json_object_set_new(root, "messages", arr);

	if (bad) {
		json_decref(root);
		return NULL;
	}
	for (size_t i = 0; i < n + 1 && !bad; i++) {
		const char *role = i < n ? msgs[i].role : "assistant";
		const char *content = i < n ? msgs[i].content : prefix;
		if (i == n && (!prefix || !*prefix))
			break;
		/* json_string refuses invalid UTF-8: the _nocheck variant
		 * would send it on, and the server would refuse the request */
		bad = json_array_append_new(arr, json_pack("{s:s, s:s}", "role", role,
							   "content", content ? content : ""));
	}
	bad = bad || json_object_set_new(root, "model", json_string(c->model)) ||
	      json_object_set_new(root, "max_tokens", json_integer((json_int_t)max_tokens)) ||
	      json_object_set_new(root, "temperature",
				  json_real(c->sampler.temperature > 0 ? c->sampler.temperature : 0));
	if (!bad && c->sampler.temperature > 0) {
		if (c->sampler.top_p < 1)
			bad = json_object_set_new(root, "top_p", json_real(c->sampler.top_p));
		bad = bad || json_object_set_new(root, "seed",
						 json_integer((json_int_t)(c->sampler.seed &
									   0x7fffffff)));
	}
	if (!bad)
		s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct reply *r = ctx;
	size_t len = size * nmemb;

	if (r->body.len + len > REPLY_MAX || lp_buf_add(&r->body, data, len))
		return 0; /* curl fails the transfer with CURLE_WRITE_ERROR */
	return len;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct reply *r = ctx;
	size_t len = size * nmemb;
	static const char name[] = "retry-after:";

	if (len > sizeof(name) && !strncasecmp(data, name, sizeof(name) - 1)) {
		char *end;
		long secs = strtol(data + sizeof(name) - 1, &end, 10);
		/* a date instead of seconds is left to our own back-off */
		if (end != data + sizeof(name) - 1 && secs >= 0)
			r->retry_after_ms = secs > LP_OPENAI_MAX_DELAY_MS / 1000 ?
						    LP_OPENAI_MAX_DELAY_MS : secs * 1000;
	}
	return len;
}

/* Wait until fewer than c->concurrency attempts are in flight, then count
 * this one in. The wait sleeps on the condition variable, holding nothing. */
static void slot_take(struct lp_openai *c)
{
	if (!c->concurrency)
		return;
	pthread_mutex_lock(&c->slot_lock);
	while (c->in_flight >= c->concurrency)
		pthread_cond_wait(&c->slot_free, &c->slot_lock);
	c->in_flight++;
	pthread_mutex_unlock(&c->slot_lock);
}

/* The attempt is over: its slot goes to one waiting thread, if any. */
static void slot_give(struct lp_openai *c)
{
	if (!c->concurrency)
		return;
	pthread_mutex_lock(&c->slot_lock);
	c->in_flight--;
	pthread_cond_signal(&c->slot_free);
	pthread_mutex_unlock(&c->slot_lock);
}

/* curl's progress callback, called while a request waits: a run that was
 * cancelled (core/cancel.h) abandons its request there rather than wait
 * for a reply it no longer wants (curl then answers
 * CURLE_ABORTED_BY_CALLBACK). */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)ctx, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return lp_cancel_requested();
}

/* One POST of `body`; the outcome in r. Returns LP_E_NOMEM when curl
 * cannot even be set up, else LP_OK (look at r). */
static enum lp_status attempt(const struct lp_openai *c, const char *body, struct reply *r)
{
	struct curl_slist *h = NULL, *t;
	CURL *e = curl_easy_init();

	r->body.len = 0;
	r->status = 0;
	r->retry_after_ms = -1;
	r->err[0] = '\0';
	if (!e)
		return LP_E_NOMEM;
	h = curl_slist_append(h, "Content-Type: application/json");
	if (h && c->auth && (t = curl_slist_append(h, c->auth)))
		h = t;
	else if (h && c->auth) {
		curl_slist_free_all(h);
		h = NULL;
	}
	if (!h) {
		curl_easy_cleanup(e);
		return LP_E_NOMEM;
	}
	curl_easy_setopt(e, CURLOPT_URL, c->endpoint);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			 c->timeout_ms < 10000 ? c->timeout_ms : 10000L);
	/* no signals: requests run on several threads */
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->err);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	/* an http:// endpoint must not send the key on to another host */
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	r->code = curl_easy_perform(e);
	if (r->code == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
	if (!r->err[0])
		snprintf(r->err, sizeof(r->err), "%s", curl_easy_strerror(r->code));
	curl_slist_free_all(h);
	curl_easy_cleanup(e);
	return LP_OK;
}

/* Worth another attempt: the transport failed for a reason that may pass,
 * or the server is busy (429) or failing (5xx). */
static int retryable(const struct reply *r)
{
	switch (r->code) {
	case CURLE_OK:
		return r->status == 429 || r->status >= 500;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_WRITE_ERROR: /* a reply over REPLY_MAX */
		return 0;
	default:
		return 1;
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Mask each copy of the key in s (a server may echo a request back). */
static void mask_key(const struct lp_openai *c, char *s)
{
	size_t n = c->key ? strlen(c->key) : 0;
	char *p;

	if (!n)
		return;
	while ((p = strstr(s, c->key)))
		memset(p, '*', n);
}

/* What the server said in a failed reply: error.message of a JSON body,
 * else the start of the body, one line, at most QUOTE_MAX bytes. */
static void quote_reply(const struct lp_openai *c, const struct reply *r, char *out,
			size_t cap)
{
	json_t *root = json_loadb(r->body.data ? r->body.data : "", r->body.len, 0, NULL);
	json_t *err = json_object_get(root, "error");
	const char *msg = json_string_value(json_object_get(err, "message"));
	size_t n;

	if (!msg)
		msg = json_string_value(err);
	if (!msg)
		msg = json_string_value(json_object_get(root, "detail"));
	if (msg)
		snprintf(out, cap, "%s", msg);
	else
		snprintf(out, cap, "%.*s", (int)(r->body.len < QUOTE_MAX ? r->body.len : QUOTE_MAX),
			 r->body.data ? r->body.data : "");
	json_decref(root);
	if (strlen(out) > QUOTE_MAX)
		strcpy(out + QUOTE_MAX - 3, "...");
	for (n = 0; out[n]; n++)
		if ((unsigned char)out[n] < 0x20)
			out[n] = ' ';
	mask_key(c, out);
}

/* The reply of a 2xx: choices[0].message.content and the usage counts. */
static enum lp_status parse_reply(const struct lp_openai *c, const struct reply *r,
				  char **out_text, size_t *n_prompt, size_t *n_out,
				  struct lp_diag *d)
{
	json_error_t je;
	json_t *root = json_loadb(r->body.data ? r->body.data : "", r->body.len, 0, &je);
	json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
	json_t *usage = json_object_get(root, "usage");
	json_t *content = json_object_get(json_object_get(choice, "message"), "content");
	enum lp_status st = LP_OK;

	if (!root)
		st = lp_diag_set(d, LP_E_IO, NULL, 0, 0,
				 "'%s' sent a reply that is not JSON: %s", c->endpoint, je.text);
	else if (!json_is_string(content) && !json_is_null(content))
		st = lp_diag_set(d, LP_E_IO, NULL, 0, 0,
				 "'%s' sent no choices[0].message.content", c->endpoint);
	else if (!(*out_text = lp_mem_strdup(json_is_string(content) ?
						      json_string_value(content) : "")))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for generated text");
	if (n_prompt)
		*n_prompt = (size_t)json_integer_value(json_object_get(usage, "prompt_tokens"));
	if (n_out)
		*n_out = (size_t)json_integer_value(json_object_get(usage, "completion_tokens"));
	json_decref(root);
	return st;
}

/* The diagnostic of a request that failed for good after `tries`. */
static enum lp_status give_up(const struct lp_openai *c, const struct reply *r, int tries,
			      struct lp_diag *d)
{
	char said[QUOTE_MAX + 1];
	enum lp_status st = r->status >= 400 && r->status != 429 && r->status < 500 ?
				    LP_E_CONFIG : LP_E_IO;

	if (r->code != CURLE_OK)
		return lp_diag_set(d, LP_E_IO, NULL, 0, 0,
				   "unable to reach '%s': %s (%d attempt%s)", c->endpoint, r->err,
				   tries, tries == 1 ? "" : "s");
	quote_reply(c, r, said, sizeof(said));
	return lp_diag_set(d, st, NULL, 0, 0, "'%s' answered HTTP %ld: %s (%d attempt%s)",
			   c->endpoint, r->status, said[0] ? said : "no message", tries,
			   tries == 1 ? "" : "s");
}

enum lp_status lp_openai_chat(struct lp_openai *c, const struct lp_chat_msg *msgs, size_t n,
			      const char *prefix, size_t max_tokens, char **out_text,
			      size_t *n_prompt, size_t *n_out, struct lp_diag *d)
{
	char *body = request_body(c, msgs, n, prefix, max_tokens);
	long delay = c->delay_ms;
	struct reply r;
	enum lp_status st = LP_OK;
	int tries = 0;

	*out_text = NULL;
	if (!body)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				   "out of memory for a request (or a message is not UTF-8)");
	memset(&r, 0, sizeof(r));
	lp_buf_init(&r.body);
	for (;;) {
		/* a slot per attempt, not per request: a request waiting out
		 * its back-off leaves the server to the others */
		slot_take(c);
		st = attempt(c, body, &r);
		slot_give(c);
		if (st) {
			st = lp_diag_set(d, st, NULL, 0, 0, "out of memory for a request");
			break;
		}
		tries++;
		if (r.code == CURLE_ABORTED_BY_CALLBACK &&
		    (st = lp_cancel_check("while waiting for the model server", d)))
			break;
		if (r.code == CURLE_OK && r.status >= 200 && r.status < 300) {
			st = parse_reply(c, &r, out_text, n_prompt, n_out, d);
			break;
		}
		if (!retryable(&r) || tries > c->retries) {
			st = give_up(c, &r, tries, d);
			break;
		}
		if (r.retry_after_ms > delay)
			delay = r.retry_after_ms;
		if (r.code == CURLE_OK)
			snprintf(r.err, sizeof(r.err), "HTTP %ld", r.status);
		lp_warn("'%s': %s: retrying in %ld ms (attempt %d of %d)", c->endpoint, r.err,
			delay, tries + 1, c->retries + 1);
		sleep_ms(delay);
		if ((st = lp_cancel_check("before a retry of a model request", d)))
			break;
		delay = delay * 2 > LP_OPENAI_MAX_DELAY_MS ? LP_OPENAI_MAX_DELAY_MS : delay * 2;
	}
	free(body);
	lp_buf_release(&r.body);
	return st;
}

size_t lp_openai_estimate_tokens(const char *text, size_t len)
{
	size_t n = 0, ascii = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)text[i];
		if (b < 0x80) {
			ascii++;
			continue;
		}
		n += (ascii + 2) / 3;
		ascii = 0;
		if ((b & 0xC0) != 0x80) /* a lead byte: one character */
			n++;
	}
	return n + (ascii + 2) / 3;
}

size_t lp_openai_estimate_prefix(const char *text, size_t len, size_t max_tokens)
{
	size_t n = 0, ascii = 0, cut = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)text[i];
		if ((b & 0xC0) == 0x80)
			continue;
		/* the cost of text[0..i): i is a character boundary */
		if (n + (ascii + 2) / 3 > max_tokens)
			return cut;
		cut = i;
		if (b < 0x80) {
			ascii++;
		} else {
			n += (ascii + 2) / 3 + 1;
			ascii = 0;
		}
	}
	return n + (ascii + 2) / 3 > max_tokens ? cut : len;
}
