/* serve.c - the life of the server process (serve.h). */
#include "serve/serve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/lpipe.h"
#include "core/log.h"
#include "core/mem.h"
#include "serve/docs.h"
#include "serve/http.h"
#include "serve/metrics.h"
#include "serve/routes.h"
#include "serve/runs.h"

/* Split "HOST:PORT" or "[HOST6]:PORT" into host[0..cap) and *port. */
static int split_listen(const char *listen, char *host, size_t cap, const char **port)
{
	const char *colon;
	size_t n;

	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');
		if (!end || end[1] != ':')
			return 0;
		n = (size_t)(end - listen - 1);
		if (n >= cap)
			return 0;
		memcpy(host, listen + 1, n);
		*port = end + 2;
	} else {
		if (!(colon = strrchr(listen, ':')))
			return 0;
		n = (size_t)(colon - listen);
		if (n >= cap)
			return 0;
		memcpy(host, listen, n);
		*port = colon + 1;
	}
	host[n] = 0;
	return **port != 0;
}

static struct addrinfo *resolve(const char *listen)
{
	struct addrinfo hints, *ai = NULL;
	char host[256];
	const char *port;

	if (!split_listen(listen, host, sizeof(host), &port))
		return NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &ai))
		return NULL;
	return ai;
}

int lp_serve_listen_kind(const char *listen)
{
	struct addrinfo *ai = resolve(listen);
	int lo = 0;

	if (!ai)
		return -1;
	if (ai->ai_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)ai->ai_addr;
		lo = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	} else if (ai->ai_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ai->ai_addr;
		lo = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	}
	freeaddrinfo(ai);
	return lo;
}

/* PORT and a newline, written whole: a reader never sees half of it. */
static int write_ready(const char *path, unsigned port)
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	if (!(f = fopen(tmp, "w")))
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int wait_for_signal(void)
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigwait(&set, &sig);
	return sig;
}

int lp_serve_main(const struct lp_serve_config *c)
{
	struct lp_serve_runs_config rc = { c->pipelines_dir, c->budget, c->jobs, c->queue };
	struct lp_serve_http_config hc;
	struct lp_serve_routes rt;
	struct lp_serve_docs *docs = NULL;
	struct lp_serve_runs *runs = NULL;
	struct lp_serve_http *http = NULL;
	struct addrinfo *ai;
	struct lp_diag d;
	char budget[32], size[32], docdir[4096];
	sigset_t set;
	int status = 0, sig;
	size_t left;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* every thread from here on */
	signal(SIGPIPE, SIG_IGN);
	if (!(ai = resolve(c->listen))) {
		fprintf(stderr, "lpipe serve: error: cannot parse --listen '%s' (ADDR:PORT)\n",
			c->listen);
		return 2;
	}
	memset(&rt, 0, sizeof(rt));
	if (c->documents_dir) {
		if (!realpath(c->documents_dir, docdir)) {
			fprintf(stderr, "lpipe serve: error: cannot resolve --documents '%s'\n",
				c->documents_dir);
			freeaddrinfo(ai);
			return 2;
		}
		rt.documents_dir = docdir;
	}
	snprintf(budget, sizeof(budget), "%zu", c->budget);
	lpipe_set_mem_budget(budget);
	lpipe_set_progress(0);
	lp_serve_metrics_init();
	lp_diag_init(&d);
	if (!(docs = lp_serve_docs_new(c->doc_cache))) {
		status = 4;
		goto out;
	}
	if (lp_serve_runs_new(&rc, docs, &runs, &d)) {
		fprintf(stderr, "lpipe serve: error: %s\n", d.msg);
		status = d.status == LP_E_NOMEM ? 4 : 3;
		goto out;
	}
	{
		/* planning mapped models for a moment */
		struct lp_mem_account *was = lp_mem_account_use(lp_serve_runs_account(runs));

		lp_mem_reset_peaks();
		lp_mem_account_use(was);
	}
	rt.runs = runs;
	rt.docs = docs;
	rt.has_token = c->token != NULL;
	memset(&hc, 0, sizeof(hc));
	hc.addr = ai->ai_addr;
	hc.addr_len = ai->ai_addrlen;
	hc.max_body = c->max_body;
	hc.max_header = c->max_header;
	hc.header_timeout_s = c->header_timeout_s;
	hc.request_timeout_s = c->request_timeout_s;
	hc.idle_timeout_s = c->idle_timeout_s;
	hc.max_connections = c->max_connections;
	hc.token = c->token;
	hc.route = lp_serve_route;
	hc.route_ctx = &rt;
	if (lp_serve_http_start(&hc, &http, &d)) {
		fprintf(stderr, "lpipe serve: error: %s: %s\n", c->listen, d.msg);
		status = 3;
		goto out;
	}
	fprintf(stderr, "lpipe serve: listening on %s, port %u (budget %s, document cache %s, "
		"%d jobs, queue %zu)\n", c->listen, lp_serve_http_port(http),
		lp_mem_format_size(c->budget, budget, sizeof(budget)),
		lp_mem_format_size(c->doc_cache, size, sizeof(size)), c->jobs, c->queue);
	if (c->ready_file && write_ready(c->ready_file, lp_serve_http_port(http)))
		fprintf(stderr, "lpipe serve: warning: cannot write '%s'\n", c->ready_file);
	sig = wait_for_signal();
	fprintf(stderr, "lpipe serve: %s: draining (at most %.0f s)\n",
		sig == SIGINT ? "SIGINT" : "SIGTERM", c->drain_timeout_s);
	left = lp_serve_runs_drain(runs, c->drain_timeout_s);
	if (left) {
		/* they hold memory and threads the process is about to lose
		 * anyway: nothing of them was written anywhere */
		fprintf(stderr, "lpipe serve: %zu run%s still inside a stage: abandoned\n", left,
			left == 1 ? "" : "s");
		lp_serve_http_stop(http);
		freeaddrinfo(ai);
		return 0;
	}
	fprintf(stderr, "lpipe serve: stopped\n");
out:
	lp_serve_http_stop(http);
	lp_serve_runs_free(runs);
	lp_serve_docs_free(docs);
	freeaddrinfo(ai);
	return status;
}
