/* page.c - the web page (page.h). */
#include "serve/page.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/sha256.h"
#include "serve/http.h"
#include "serve/metrics.h"

static const char style[] = "body{font-family:sans-serif}";
static const char script[] = "document.title='lpipe';";

static char page[65536];
static char csp[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void base64(const unsigned char *in, size_t n, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t j = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[j++] = a[v >> 18 & 63];
		out[j++] = a[v >> 12 & 63];
		out[j++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[j++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[j] = 0;
}

static void hash64(const char *text, char out[48])
{
	struct lp_sha256 c;
	unsigned char digest[32];

	lp_sha256_init(&c);
	lp_sha256_update(&c, text, strlen(text));
	lp_sha256_final(&c, digest);
	base64(digest, 32, out);
}

static void build(void)
{
	char hs[48], hj[48];

	hash64(style, hs);
	hash64(script, hj);
	snprintf(csp, sizeof(csp),
		 "default-src 'none'; script-src 'sha256-%s'; style-src 'sha256-%s'; "
		 "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
		 "frame-ancestors 'none'", hj, hs);
	snprintf(page, sizeof(page),
		 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		 "<title>lpipe</title><style>%s</style></head><body>%s<script>%s</script>"
		 "</body></html>\n", style, "", script);
}

enum MHD_Result lp_serve_page_reply(struct MHD_Connection *conn)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	pthread_once(&once, build);
	r = MHD_create_response_from_buffer(strlen(page), page, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
	MHD_add_response_header(r, "Content-Security-Policy", csp);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	rc = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	lp_serve_metrics_status(200);
	return rc;
}
