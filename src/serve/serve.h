/*
 * serve.h - lpipe serve: many clients, one engine, one memory budget.
 *
 * The service is made of: http.h (libmicrohttpd, limits, the token),
 * routes.h (the endpoints), runs.h (queue, admission, workers), docs.h
 * (the uploaded documents), plan.h (a run's planned memory), events.h
 * (Server-Sent Events), metrics.h (/metrics) and page.h (the web page).
 * This file ties them together and owns the process's life: listen, say
 * where (--ready-file), wait for SIGTERM or SIGINT, drain, exit.
 *
 * Nothing is written to disk but the ready file (written whole under a
 * temporary name, then renamed): a server killed with -9 leaves no state
 * behind that the next one could read half-written; runs in flight are
 * lost with it.
 */
#ifndef LP_SERVE_SERVE_H
#define LP_SERVE_SERVE_H

#include <stddef.h>

struct lp_serve_config {
	const char *listen;          /* "ADDR:PORT", "[ADDR6]:PORT" */
	const char *pipelines_dir;
	size_t budget;               /* bytes, > 0 */
	size_t doc_cache;            /* bytes of the document store */
	int jobs;
	size_t queue;
	const char *token;           /* NULL: loopback only */
	const char *documents_dir;   /* NULL: no server paths */
	size_t max_body, max_header;
	unsigned header_timeout_s, request_timeout_s, idle_timeout_s;
	unsigned max_connections;
	double drain_timeout_s;
	const char *ready_file;      /* NULL: none */
};

/* What --listen names: 1 a loopback address, 0 another one, -1 no
 * numeric ADDR:PORT at all. */
int lp_serve_listen_kind(const char *listen);

/* Serve until SIGTERM/SIGINT; returns the exit status (0 after a drain,
 * 2 for a bad setting, 3 when it cannot listen, 4 out of memory). */
int lp_serve_main(const struct lp_serve_config *c);

#endif
