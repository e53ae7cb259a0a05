/* http.c - libmicrohttpd glue: limits, timeouts, the token (http.h). */
#include "serve/http.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <jansson.h>

#include "core/mem.h"
#include "core/progress.h"
#include "serve/metrics.h"

/* A connection, from its start to its close (the header deadline). */
struct track {
	int fd;
	double t0;          /* start, or the end of its last request */
	int in_request;     /* its headers are in */
	struct track *next, *prev;
};

/* A request while its body arrives. */
struct pending {
	double t0;
	char *body;         /* tracked, NUL-terminated */
	size_t len, cap;
	unsigned refuse;    /* a status decided before the body was read */
	int over;           /* the body passed max_body */
};

struct lp_serve_http {
	struct lp_serve_http_config c;
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	struct track *tracks;
	pthread_t reaper;
	int reaper_on, stopping;
	pthread_cond_t stop;
};

int lp_serve_token_equal(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	unsigned char diff = (unsigned char)(na != nb);

	/* every byte of the longer is looked at, whatever matches */
	for (size_t i = 0, n = na > nb ? na : nb; i < n; i++)
		diff |= (unsigned char)((i < na ? a[i] : 0) ^ (i < nb ? b[i] : 0));
	return diff == 0;
}

enum MHD_Result lp_serve_queue(struct MHD_Connection *conn, unsigned status,
			       struct MHD_Response *r)
{
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	lp_serve_metrics_status(status);
	return rc;
}

enum MHD_Result lp_serve_reply(struct MHD_Connection *conn, unsigned status,
			       const char *content_type, const char *text, size_t len)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", content_type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	return lp_serve_queue(conn, status, r);
}

enum MHD_Result lp_serve_reply_json(struct MHD_Connection *conn, unsigned status, char *json)
{
	enum MHD_Result rc;

	if (!json)
		return lp_serve_reply_error(conn, 500, 0, "out of memory");
	rc = lp_serve_reply(conn, status, "application/json", json, strlen(json));
	free(json);
	return rc;
}

enum MHD_Result lp_serve_reply_error(struct MHD_Connection *conn, unsigned status,
				     unsigned retry_after, const char *fmt, ...)
{
	char msg[1400], num[16];
	json_t *o = json_object(), *e = json_object();
	struct MHD_Response *r;
	char *text;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(e, "status", json_integer(status));
	json_object_set_new(e, "message", json_string(msg));
	json_object_set_new(o, "error", e);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (retry_after) {
		snprintf(num, sizeof(num), "%u", retry_after);
		MHD_add_response_header(r, "Retry-After", num);
	}
	if (status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
	return lp_serve_queue(conn, status, r);
}

static int authorized(struct lp_serve_http *h, struct MHD_Connection *conn, const char *method,
		      const char *url)
{
	const char *a;

	if (!h->c.token || (!strcmp(method, "GET") && !strcmp(url, "/v1/health")))
		return 1;
	a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	if (!a || strncmp(a, "Bearer ", 7))
		return 0;
	return lp_serve_token_equal(a + 7, h->c.token);
}

static struct track *track_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* The first call of a request: decide what can be decided from the
 * headers alone. */
static struct pending *begin(struct lp_serve_http *h, struct MHD_Connection *conn,
			     const char *method, const char *url)
{
	struct pending *p = calloc(1, sizeof(*p));
	struct track *t = track_of(conn);
	const char *cl;

	if (!p)
		return NULL;
	p->t0 = lp_now_s();
	if (t) {
		pthread_mutex_lock(&h->lock);
		t->in_request = 1;
		pthread_mutex_unlock(&h->lock);
	}
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	if (!authorized(h, conn, method, url)) {
		p->refuse = 401;
	} else if (cl) {
		char *end;
		unsigned long long n;
		errno = 0;
		n = strtoull(cl, &end, 10);
		if (errno || *end || end == cl || n > h->c.max_body)
			p->refuse = 413;
	}
	return p;
}

static void pending_free(struct pending *p)
{
	if (!p)
		return;
	lp_mem_free(p->body);
	free(p);
}

static int take_body(struct lp_serve_http *h, struct pending *p, const char *data, size_t n)
{
	if (p->refuse || p->over)
		return 1; /* read and dropped */
	if (p->len + n > h->c.max_body) {
		p->over = 1;
		return 1;
	}
	if (p->len + n + 1 > p->cap) {
		size_t cap = p->cap ? p->cap : 4096;
		char *b;
		while (cap < p->len + n + 1)
			cap *= 2;
		if (cap > h->c.max_body + 1)
			cap = h->c.max_body + 1;
		if (!(b = lp_mem_realloc(LP_MEM_DOC, p->body, cap, NULL)))
			return 0;
		p->body = b;
		p->cap = cap;
	}
	memcpy(p->body + p->len, data, n);
	p->len += n;
	p->body[p->len] = 0;
	return 1;
}

static enum MHD_Result refusal(struct lp_serve_http *h, struct MHD_Connection *conn,
			       struct pending *p)
{
	if (p->refuse == 401) {
		lp_serve_metrics_reject(LP_REJ_UNAUTHORIZED);
		return lp_serve_reply_error(conn, 401, 0, "a bearer token is needed");
	}
	if (p->refuse == 413 || p->over) {
		lp_serve_metrics_reject(LP_REJ_TOO_LARGE);
		return lp_serve_reply_error(conn, 413, 0, "the body is larger than %zu bytes",
					    h->c.max_body);
	}
	return lp_serve_reply_error(conn, p->refuse, 1, "out of memory for the body");
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version,
				 const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct lp_serve_http *h = cls;
	struct pending *p = *con_cls;
	struct lp_serve_request r;

	if (!p) {
		if (!(*con_cls = p = begin(h, conn, method, url)))
			return MHD_NO;
		/* refused on the headers: answered before a byte of the body is
		 * read, and libmicrohttpd closes the connection after */
		if (p->refuse)
			return refusal(h, conn, p);
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (lp_now_s() - p->t0 > h->c.request_timeout_s)
			return MHD_NO; /* too slow: close the connection */
		if (!take_body(h, p, upload_data, *upload_data_size)) {
			p->refuse = 503;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (p->refuse || p->over)
		return refusal(h, conn, p);
	r.conn = conn;
	r.method = method;
	r.url = url;
	r.body = p->body ? p->body : "";
	r.len = p->len;
	return h->c.route(h->c.route_ctx, &r);
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct lp_serve_http *h = cls;
	struct track *t = track_of(conn);

	pending_free(*con_cls);
	*con_cls = NULL;
	if (t) {
		pthread_mutex_lock(&h->lock);
		t->in_request = 0;
		t->t0 = lp_now_s();
		pthread_mutex_unlock(&h->lock);
	}
}

static void connection_cb(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct lp_serve_http *h = cls;
	struct track *t;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!i || !(t = calloc(1, sizeof(*t))))
			return;
		t->fd = i->connect_fd;
		t->t0 = lp_now_s();
		pthread_mutex_lock(&h->lock);
		t->next = h->tracks;
		if (h->tracks)
			h->tracks->prev = t;
		h->tracks = t;
		pthread_mutex_unlock(&h->lock);
		*socket_context = t;
	} else if ((t = *socket_context)) {
		pthread_mutex_lock(&h->lock);
		if (t->prev)
			t->prev->next = t->next;
		else
			h->tracks = t->next;
		if (t->next)
			t->next->prev = t->prev;
		pthread_mutex_unlock(&h->lock);
		free(t);
		*socket_context = NULL;
	}
}

/* Shut connections whose headers are late; their thread then sees the
 * end of the stream and closes them. */
static void *reaper(void *arg)
{
	struct lp_serve_http *h = arg;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		struct timespec ts;
		double now = lp_now_s();
		for (struct track *t = h->tracks; t; t = t->next)
			if (!t->in_request && now - t->t0 > h->c.header_timeout_s && t->fd >= 0) {
				shutdown(t->fd, SHUT_RDWR);
				t->fd = -1;
			}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&h->stop, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

enum lp_status lp_serve_http_start(const struct lp_serve_http_config *c,
				   struct lp_serve_http **out, struct lp_diag *d)
{
	struct lp_serve_http *h = calloc(1, sizeof(*h));
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_POLL;

	if (!h)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
	h->c = *c;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->stop, NULL);
	if (c->addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, access_cb, h,
				MHD_OPTION_SOCK_ADDR, c->addr,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)c->max_connections,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)c->idle_timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)c->max_header,
				MHD_OPTION_THREAD_STACK_SIZE, (size_t)256 << 10,
				MHD_OPTION_NOTIFY_COMPLETED, completed_cb, h,
				MHD_OPTION_NOTIFY_CONNECTION, connection_cb, h,
				MHD_OPTION_END);
	if (!h->d) {
		int e = errno;
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->stop);
		free(h);
		return lp_diag_set(d, LP_E_IO, NULL, 0, 0, "cannot listen: %s",
				   e ? strerror(e) : "libmicrohttpd refused the settings");
	}
	if (pthread_create(&h->reaper, NULL, reaper, h) == 0)
		h->reaper_on = 1;
	*out = h;
	return LP_OK;
}

unsigned lp_serve_http_port(const struct lp_serve_http *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);

	return i ? i->port : 0;
}

void lp_serve_http_stop(struct lp_serve_http *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->stopping = 1;
	pthread_cond_broadcast(&h->stop);
	pthread_mutex_unlock(&h->lock);
	if (h->reaper_on)
		pthread_join(h->reaper, NULL);
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->stop);
	free(h);
}
