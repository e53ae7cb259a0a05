/*
 * page.h - the web page at /: drop a document, choose a pipeline, ask,
 * watch the progress events, read the answer with its quote and the
 * cited passages highlighted in the document. Self-contained (one HTML
 * response, inline script and style) under a strict Content-Security-
 * Policy: nothing may load from elsewhere, the script and the style are
 * allowed by their SHA-256 alone, and the page talks only to its own
 * origin. English or Chinese labels, by the browser's language.
 */
#ifndef LP_SERVE_PAGE_H
#define LP_SERVE_PAGE_H

#include <microhttpd.h>

/* Queue the page on `conn` with its security headers. */
enum MHD_Result lp_serve_page_reply(struct MHD_Connection *conn);

#endif
