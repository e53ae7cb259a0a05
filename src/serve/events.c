/* events.c - a run's Server-Sent Events (events.h). */
#include "serve/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/http.h"
#include "serve/metrics.h"

struct stream {
	struct lp_serve_runs *runs;
	struct lp_serve_run *run;  /* held */
	unsigned long seq;
	char *out;                 /* text not yet written */
	size_t len, at;
	int ended;
};

static void stream_free(void *cls)
{
	struct stream *s = cls;

	lp_serve_runs_release(s->runs, s->run);
	free(s->out);
	free(s);
}

/* Next text to write: an event, a keep-alive, or 0 at the end. */
static int refill(struct stream *s)
{
	const char *event = NULL;
	char *data = NULL;
	int rc;

	free(s->out);
	s->out = NULL;
	s->len = s->at = 0;
	if (s->ended)
		return 0;
	rc = lp_serve_runs_wait(s->runs, s->run, &s->seq, LP_SERVE_SSE_KEEPALIVE_S, &event, &data);
	if (rc < 0) {
		s->ended = 1;
		return 0;
	}
	if (rc == 0) {
		s->out = strdup(": keep-alive\n\n");
	} else {
		size_t n = strlen(data) + 64;
		if ((s->out = malloc(n)))
			snprintf(s->out, n, "id: %lu\nevent: %s\ndata: %s\n\n", s->seq, event, data);
		free(data);
	}
	if (!s->out)
		return -1;
	s->len = strlen(s->out);
	return 1;
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	size_t n;

	if (s->at == s->len) {
		int rc = refill(s);
		if (rc == 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (rc < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = s->len - s->at < max ? s->len - s->at : max;
	memcpy(buf, s->out + s->at, n);
	s->at += n;
	return (ssize_t)n;
}

enum MHD_Result lp_serve_events_reply(struct MHD_Connection *conn, struct lp_serve_runs *runs,
				      const char *id)
{
	struct stream *s = calloc(1, sizeof(*s));
	struct MHD_Response *r;
	const char *last;

	if (!s)
		return lp_serve_reply_error(conn, 503, 1, "out of memory");
	if (!(s->run = lp_serve_runs_hold(runs, id))) {
		free(s);
		lp_serve_metrics_reject(LP_REJ_NOT_FOUND);
		return lp_serve_reply_error(conn, 404, 0, "no run '%.40s'", id);
	}
	s->runs = runs;
	last = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
	if (last)
		s->seq = strtoul(last, NULL, 10);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader, s, stream_free);
	if (!r) {
		stream_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	/* a stream is quiet for as long as a run waits: the idle timeout of
	 * the connection would cut it, and the keep-alive comments are what
	 * tell a dead client (their write fails) */
	MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned int)0);
	return lp_serve_queue(conn, 200, r);
}
