/*
 * events.h - GET /v1/runs/ID/events: a run's progress as Server-Sent
 * Events.
 *
 * The stream opens with the run's latest event (its state, or its progress
 * while it runs), then carries an
 * "event: progress" for each progress event of the run (runs.h: stage,
 * step, done/total, tokens/s, ETA), an "event: state" for each change of
 * state, and a comment line (": keep-alive") after LP_SERVE_SSE_KEEPALIVE_S
 * seconds without news, so proxies and clients keep the stream open. It
 * ends after the event that says the run ended (done, failed, cancelled).
 * Each event has an id (the run's event number): a client that reconnects
 * with Last-Event-ID is given only newer events.
 */
#ifndef LP_SERVE_EVENTS_H
#define LP_SERVE_EVENTS_H

#include <microhttpd.h>

#include "serve/runs.h"

#define LP_SERVE_SSE_KEEPALIVE_S 5.0

/* Queue the event stream of run `id` on `conn` (404 when there is none). */
enum MHD_Result lp_serve_events_reply(struct MHD_Connection *conn, struct lp_serve_runs *runs,
				      const char *id);

#endif
