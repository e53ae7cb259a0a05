/*
 * http.h - the HTTP side of lpipe serve, on libmicrohttpd.
 *
 * One thread per connection (a run's events are written by a reader that
 * waits on the run), a connection limit, and these guards before a
 * request reaches a route:
 *
 *  - headers: at most `max_header` bytes of them (libmicrohttpd's
 *    connection memory; it answers 431 beyond), and they must be complete
 *    within `header_timeout_s` of the connection's start or of the end of
 *    its last request, else the connection is shut: a client that sends a
 *    byte a second cannot hold a thread for long;
 *  - the body: a Content-Length over `max_body` is answered 413 before a
 *    byte of it is read; a chunked body is cut off at `max_body` and
 *    answered 413; a request not received whole within
 *    `request_timeout_s` has its connection closed;
 *  - the token: with one configured, every request but GET /v1/health
 *    needs "Authorization: Bearer TOKEN", compared in constant time (401
 *    otherwise). The token is never logged.
 *
 * Bodies are held in tracked memory (LP_MEM_DOC) while they arrive.
 */
#ifndef LP_SERVE_HTTP_H
#define LP_SERVE_HTTP_H

#include <microhttpd.h>
#include <stddef.h>

#include "core/status.h"

/* A request as the routes see it: complete, checked, with its body. */
struct lp_serve_request {
	struct MHD_Connection *conn;
	const char *method;
	const char *url;
	const char *body;   /* NUL-terminated copy; len bytes */
	size_t len;
};

/* The router: queue a response on r->conn and return what
 * MHD_queue_response returned. */
typedef enum MHD_Result (*lp_serve_router)(void *ctx, const struct lp_serve_request *r);

struct lp_serve_http_config {
	const struct sockaddr *addr;   /* where to listen */
	size_t addr_len;
	size_t max_body, max_header;   /* bytes */
	unsigned header_timeout_s, request_timeout_s, idle_timeout_s;
	unsigned max_connections;
	const char *token;             /* NULL: none needed */
	lp_serve_router route;
	void *route_ctx;
};

struct lp_serve_http;

/* Listen and serve from the daemon's threads. LP_OK and *out; LP_E_IO
 * with `d` saying why (address in use, ...). */
enum lp_status lp_serve_http_start(const struct lp_serve_http_config *c,
				   struct lp_serve_http **out, struct lp_diag *d);
/* The port listened on (the one chosen for port 0). */
unsigned lp_serve_http_port(const struct lp_serve_http *h);
/* Stop listening, close every connection, free; NULL is a no-op. */
void lp_serve_http_stop(struct lp_serve_http *h);

/* Responses. Each queues on `conn`, counts the status in the metrics and
 * returns MHD_queue_response's result. `text` is copied. */
enum MHD_Result lp_serve_reply(struct MHD_Connection *conn, unsigned status,
			       const char *content_type, const char *text, size_t len);
/* {"error": {"status": N, "message": "..."}}; with retry_after > 0 a
 * Retry-After header. */
enum MHD_Result lp_serve_reply_error(struct MHD_Connection *conn, unsigned status,
				     unsigned retry_after, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Queue `r` (NULL: MHD_NO) with `status`, drop the caller's reference
 * and count the status: every response goes through here. */
enum MHD_Result lp_serve_queue(struct MHD_Connection *conn, unsigned status,
			       struct MHD_Response *r);
/* Takes ownership of `json` (malloc'd; NULL answers 500). */
enum MHD_Result lp_serve_reply_json(struct MHD_Connection *conn, unsigned status, char *json);

/* 1 when a[0..) equals b[0..) in time that depends only on the lengths. */
int lp_serve_token_equal(const char *a, const char *b);

#endif
