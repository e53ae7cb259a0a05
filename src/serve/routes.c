/* routes.c - the endpoints (routes.h). */
#include "serve/routes.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/lpipe.h"
#include "core/buf.h"
#include "core/fileio.h"
#include "core/mem.h"
#include "serve/events.h"
#include "serve/metrics.h"
#include "serve/page.h"
#include "serve/request.h"

static enum MHD_Result not_found(struct MHD_Connection *conn, const char *what, const char *id)
{
	lp_serve_metrics_reject(LP_REJ_NOT_FOUND);
	return lp_serve_reply_error(conn, 404, 0, "no %s '%.80s'", what, id);
}

static enum MHD_Result bad_request(struct MHD_Connection *conn, const char *msg)
{
	lp_serve_metrics_reject(LP_REJ_BAD_REQUEST);
	return lp_serve_reply_error(conn, 400, 0, "%s", msg);
}

static enum MHD_Result wrong_method(struct MHD_Connection *conn, const char *allow)
{
	struct MHD_Response *r;
	static const char body[] = "{\"error\":{\"status\":405,\"message\":\"method not allowed\"}}";

	r = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Allow", allow);
	MHD_add_response_header(r, "Content-Type", "application/json");
	return lp_serve_queue(conn, 405, r);
}

static enum MHD_Result health(struct lp_serve_routes *rt, struct MHD_Connection *conn)
{
	struct lp_serve_gauges g;
	json_t *o = json_object();
	char *s;

	lp_serve_runs_gauges(rt->runs, &g);
	json_object_set_new(o, "status",
			    json_string(lp_serve_runs_draining(rt->runs) ? "draining" : "ok"));
	json_object_set_new(o, "version", json_string(lpipe_version()));
	json_object_set_new(o, "queued", json_integer((json_int_t)g.queued));
	json_object_set_new(o, "running", json_integer((json_int_t)g.running));
	json_object_set_new(o, "token", json_boolean(rt->has_token));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return lp_serve_reply_json(conn, lp_serve_runs_draining(rt->runs) ? 503 : 200, s);
}

static enum MHD_Result metrics(struct lp_serve_routes *rt, struct MHD_Connection *conn)
{
	struct lp_serve_gauges g;
	struct lp_buf b;
	enum MHD_Result rc;

	lp_serve_runs_gauges(rt->runs, &g);
	lp_buf_init(&b);
	if (lp_serve_metrics_write(&g, &b)) {
		lp_buf_release(&b);
		return lp_serve_reply_error(conn, 503, 1, "out of memory for the metrics");
	}
	rc = lp_serve_reply(conn, 200, "text/plain; version=0.0.4; charset=utf-8", b.data, b.len);
	lp_buf_release(&b);
	return rc;
}

static enum MHD_Result add_document(struct lp_serve_routes *rt, struct MHD_Connection *conn,
				    const void *data, size_t len)
{
	const char *name = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "name");
	struct lp_diag d;
	char id[65], *s;
	int created;
	json_t *o;
	enum lp_status st;

	lp_diag_init(&d);
	if ((st = lp_serve_docs_add(rt->docs, data, len, name, id, &created, &d))) {
		if (st == LP_E_NOMEM) {
			lp_serve_metrics_reject(LP_REJ_TOO_LARGE);
			return lp_serve_reply_error(conn, 413, 0, "%s", d.msg);
		}
		return bad_request(conn, d.msg);
	}
	o = json_object();
	json_object_set_new(o, "id", json_string(id));
	json_object_set_new(o, "bytes", json_integer((json_int_t)len));
	json_object_set_new(o, "created", json_boolean(created));
	{
		const struct lp_serve_doc *doc = lp_serve_docs_get(rt->docs, id);
		json_object_set_new(o, "name", json_string(doc ? doc->name : ""));
		lp_serve_docs_put(rt->docs, doc);
	}
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return lp_serve_reply_json(conn, created ? 201 : 200, s);
}

/*
 * The document a run names by path: inside --documents only, symlinks
 * resolved before the check, so neither "../" nor a link leads out.
 * Stored like an upload; its id goes to req->document.
 */
static enum MHD_Result document_path(struct lp_serve_routes *rt, struct MHD_Connection *conn,
				     struct lp_serve_run_req *req, int *done)
{
	char joined[PATH_MAX + 2], real[PATH_MAX];
	size_t n;
	struct lp_mapped m;
	struct lp_diag d;
	int created;
	enum lp_status st;

	*done = 1;
	if (!rt->documents_dir)
		return bad_request(conn, "document_path needs a server started with --documents");
	n = strlen(rt->documents_dir);
	if (req->document_path[0] == '/' ||
	    snprintf(joined, sizeof(joined), "%s/%s", rt->documents_dir, req->document_path) >=
		    (int)sizeof(joined))
		return bad_request(conn, "document_path must be a relative name inside --documents");
	if (!realpath(joined, real))
		return not_found(conn, "document", req->document_path);
	if (strncmp(real, rt->documents_dir, n) || real[n] != '/') {
		lp_serve_metrics_reject(LP_REJ_BAD_REQUEST);
		return lp_serve_reply_error(conn, 403, 0, "'%.80s' is outside the documents directory",
					    req->document_path);
	}
	lp_diag_init(&d);
	if (lp_file_map(real, LP_FILE_DOCUMENT, LP_MEM_DOC, &m, &d))
		return not_found(conn, "readable document", req->document_path);
	st = lp_serve_docs_add(rt->docs, m.data, m.len, real, req->document, &created, &d);
	lp_file_unmap(&m);
	if (st) {
		lp_serve_metrics_reject(LP_REJ_TOO_LARGE);
		return lp_serve_reply_error(conn, st == LP_E_NOMEM ? 413 : 400, 0, "%s", d.msg);
	}
	*done = 0;
	return MHD_YES;
}

/* A form body is one sent as a form that is not a JSON object: curl -d
 * labels everything a form, and a form field never starts with "{". */
static int is_form(struct MHD_Connection *conn, const char *body, size_t len)
{
	const char *t = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	size_t i = 0;

	while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r'))
		i++;
	return t && !strncmp(t, "application/x-www-form-urlencoded", 33) &&
	       !(i < len && body[i] == '{');
}

static enum MHD_Result submit(struct lp_serve_routes *rt, const struct lp_serve_request *r)
{
	struct lp_serve_run_req req;
	struct lp_serve_submit out;
	struct MHD_Response *resp;
	struct lp_diag d;
	char loc[64], *s;
	enum MHD_Result rc;
	json_t *o;

	lp_diag_init(&d);
	if (lp_serve_parse_run(r->body, r->len, is_form(r->conn, r->body, r->len), &req, &d))
		return bad_request(r->conn, d.msg);
	if (req.document_path) {
		int done;
		rc = document_path(rt, r->conn, &req, &done);
		if (done) {
			lp_serve_run_req_release(&req);
			return rc;
		}
	}
	lp_serve_runs_submit(rt->runs, &req, &out);
	lp_serve_run_req_release(&req);
	if (out.status != 202)
		return lp_serve_reply_error(r->conn, out.status, out.retry_after, "%s", out.message);
	o = json_object();
	json_object_set_new(o, "id", json_string(out.id));
	json_object_set_new(o, "state", json_string("queued"));
	snprintf(loc, sizeof(loc), "/v1/runs/%s", out.id);
	json_object_set_new(o, "href", json_string(loc));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		return lp_serve_reply_error(r->conn, 503, 1, "out of memory");
	resp = MHD_create_response_from_buffer(strlen(s), s, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(s);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Location", loc);
	return lp_serve_queue(r->conn, 202, resp);
}

/* /v1/runs/ID and /v1/runs/ID/events. */
static enum MHD_Result run_routes(struct lp_serve_routes *rt, const struct lp_serve_request *r,
				  const char *rest)
{
	char id[40];
	const char *slash = strchr(rest, '/');
	size_t n = slash ? (size_t)(slash - rest) : strlen(rest);

	if (n == 0 || n >= sizeof(id))
		return not_found(r->conn, "run", rest);
	memcpy(id, rest, n);
	id[n] = 0;
	if (slash) {
		if (strcmp(slash, "/events"))
			return not_found(r->conn, "resource", r->url);
		if (strcmp(r->method, "GET"))
			return wrong_method(r->conn, "GET");
		return lp_serve_events_reply(r->conn, rt->runs, id);
	}
	if (!strcmp(r->method, "GET")) {
		char *s = lp_serve_runs_describe(rt->runs, id);
		return s ? lp_serve_reply_json(r->conn, 200, s) : not_found(r->conn, "run", id);
	}
	if (!strcmp(r->method, "DELETE")) {
		int rc = lp_serve_runs_cancel(rt->runs, id);
		char *s;
		if (!rc)
			return not_found(r->conn, "run", id);
		if (rc == 2)
			return lp_serve_reply_error(r->conn, 409, 0, "run '%s' has ended already", id);
		s = lp_serve_runs_describe(rt->runs, id);
		return lp_serve_reply_json(r->conn, 202, s);
	}
	return wrong_method(r->conn, "GET, DELETE");
}

static enum MHD_Result route(struct lp_serve_routes *rt, const struct lp_serve_request *r)
{
	const char *u = r->url;
	int get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
	int post = !strcmp(r->method, "POST");

	if (!strcmp(u, "/"))
		return get ? lp_serve_page_reply(r->conn) : wrong_method(r->conn, "GET");
	if (!strcmp(u, "/v1/health"))
		return get ? health(rt, r->conn) : wrong_method(r->conn, "GET");
	if (!strcmp(u, "/metrics"))
		return get ? metrics(rt, r->conn) : wrong_method(r->conn, "GET");
	if (!strcmp(u, "/v1/pipelines"))
		return get ? lp_serve_reply_json(r->conn, 200, lp_serve_runs_pipelines(rt->runs))
			   : wrong_method(r->conn, "GET");
	if (!strcmp(u, "/v1/documents"))
		return post ? add_document(rt, r->conn, r->body, r->len)
			    : wrong_method(r->conn, "POST");
	if (!strcmp(u, "/v1/runs"))
		return post ? submit(rt, r) : wrong_method(r->conn, "POST");
	if (!strncmp(u, "/v1/runs/", 9))
		return run_routes(rt, r, u + 9);
	return not_found(r->conn, "resource", u);
}

enum MHD_Result lp_serve_route(void *ctx, const struct lp_serve_request *r)
{
	struct lp_serve_routes *rt = ctx;
	/* uploads, results and /metrics are the engine's, under its budget */
	struct lp_mem_account *was = lp_mem_account_use(lp_serve_runs_account(rt->runs));
	enum MHD_Result res = route(rt, r);

	lp_mem_account_use(was);
	return res;
}
