/*
 * routes.h - the endpoints of lpipe serve (lpipe-serve(1), and the OpenAPI
 * description in man/lpipe-serve.openapi.json):
 *
 *     GET    /                    the web page (page.h)
 *     GET    /v1/health           {"status": "ok"|"draining", ...}
 *     GET    /v1/pipelines        the pipelines clients may name
 *     POST   /v1/documents[?name=FILE]  upload; 201 (new) or 200,
 *                          {"id", "bytes", "created", "name"}
 *     POST   /v1/runs             202 {"id", ...}, Location: /v1/runs/ID
 *     GET    /v1/runs/ID          the run (runs.h), the report once done
 *     GET    /v1/runs/ID/events   Server-Sent Events (events.h)
 *     DELETE /v1/runs/ID          cancel: 202, or 409 when it had ended
 *     GET    /metrics             Prometheus text (metrics.h)
 *
 * Errors are JSON {"error": {"status", "message"}}: 400 a malformed or
 * refused request, 401 no or a wrong token, 403 a document path outside
 * --documents, 404 no such thing, 405 a method the path does not take,
 * 413 too large (a body, or a run that cannot fit the budget), 429 the
 * queue is full (Retry-After), 503 shutting down.
 */
#ifndef LP_SERVE_ROUTES_H
#define LP_SERVE_ROUTES_H

#include "serve/docs.h"
#include "serve/http.h"
#include "serve/runs.h"

struct lp_serve_routes {
	struct lp_serve_runs *runs;
	struct lp_serve_docs *docs;
	const char *documents_dir;  /* realpath of --documents, or NULL */
	int has_token;
};

/* The router of http.h; `ctx` is a struct lp_serve_routes. */
enum MHD_Result lp_serve_route(void *ctx, const struct lp_serve_request *r);

#endif
