/* cmd_serve.c - `lpipe serve`: run pipelines for many clients over HTTP,
 * under one memory budget (src/serve/serve.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "config/pipeline.h"
#include "core/status.h"
#ifdef LP_HAVE_MHD
#include "serve/serve.h"
#endif

const char lp_usage_serve[] =
	"usage: lpipe serve [--listen ADDR:PORT] [--pipelines DIR] [--mem-budget SIZE]\n"
	"                   [--jobs N] [--queue N] [--token-file FILE] [--documents DIR]\n"
	"                   [--doc-cache SIZE] [--max-body SIZE] [--max-header SIZE]\n"
	"                   [--max-connections N] [--client-timeout SEC]\n"
	"                   [--drain-timeout SEC] [--ready-file FILE]\n"
	"\n"
	"Serve the pipelines of DIR over HTTP (a REST API, Server-Sent Events of\n"
	"progress, Prometheus metrics and a web page at /), every run under one\n"
	"memory budget: a run starts when its planned peak fits what the budget\n"
	"has left, else waits in a bounded queue (429 when full; 413 for a run that\n"
	"could never fit). See lpipe-serve(1).\n"
	"\n"
	"  --listen ADDR:PORT   where to listen (default 127.0.0.1:8080; port 0: any\n"
	"                       free port); an address other than loopback needs\n"
	"                       --token-file\n"
	"  --pipelines DIR      the pipelines clients name, DIR/NAME.yaml (default:\n"
	"                       the ready pipelines)\n"
	"  --mem-budget SIZE    the budget of the whole server (default 1GiB)\n"
	"  --jobs N             runs at once at most (default 2)\n"
	"  --queue N            runs waiting at most (default 16)\n"
	"  --token-file FILE    clients must send \"Authorization: Bearer TOKEN\", the\n"
	"                       file's first line\n"
	"  --documents DIR      runs may also name a file inside DIR (document_path)\n"
	"  --doc-cache SIZE     bytes of uploaded documents kept (default: a quarter\n"
	"                       of the budget)\n"
	"  --max-body SIZE      largest request body (default 16MiB)\n"
	"  --max-header SIZE    room for a request's headers (default 32KiB)\n"
	"  --max-connections N  connections at once (default 2048)\n"
	"  --client-timeout SEC headers must arrive within SEC, a whole request\n"
	"                       within 3 x SEC (default 10)\n"
	"  --drain-timeout SEC  on SIGTERM or SIGINT, how long running runs may\n"
	"                       finish (default 30)\n"
	"  --ready-file FILE    write the port to FILE once listening\n"
	"\n"
	"Exit status 0 after SIGTERM or SIGINT, 2 for bad options, 3 when it cannot\n"
	"listen or read DIR, 4 out of memory.\n";

/* --help, -h: 1 when the usage was printed. */
static int wants_help(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(lp_usage_serve, stdout);
		return 1;
	}
	return 0;
}

#ifndef LP_HAVE_MHD
int cmd_serve(int argc, char **argv)
{
	if (wants_help(argc, argv))
		return LP_EXIT_OK;
	fprintf(stderr, "lpipe serve: error: this lpipe was built without libmicrohttpd: "
		"install the Debian package 'libmicrohttpd-dev' and rebuild\n");
	return LP_EXIT_USAGE;
}
#else

static const char *const opts[] = { "--listen", "--pipelines", "--mem-budget", "--jobs",
				    "--queue", "--token-file", "--documents", "--doc-cache",
				    "--max-body", "--max-header", "--max-connections",
				    "--client-timeout", "--drain-timeout", "--ready-file", NULL };

/* The first line of `path`, trimmed, into buf; the token is never printed. */
static int read_token(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	struct stat st;
	size_t n;

	if (!f)
		return lp_cli_usage_error("serve", "cannot read --token-file '%s'", path);
	if (!fgets(buf, (int)cap, f))
		buf[0] = 0;
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
		fprintf(stderr, "lpipe serve: warning: '%s' can be read by others\n", path);
	fclose(f);
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = 0;
	if (n < 16)
		return lp_cli_usage_error("serve", "the token in '%s' is shorter than 16 bytes",
					  path);
	return 0;
}

static int parse_opt(struct lp_serve_config *c, const char *a, const char *v, int *doc_cache_set,
		     const char **token_file)
{
	long long n;
	double x;
	int rc = 0;

	if (!v)
		return lp_cli_usage_error("serve", "'%s' needs a value", a);
	if (!strcmp(a, "--listen"))
		c->listen = v;
	else if (!strcmp(a, "--pipelines"))
		c->pipelines_dir = v;
	else if (!strcmp(a, "--documents"))
		c->documents_dir = v;
	else if (!strcmp(a, "--ready-file"))
		c->ready_file = v;
	else if (!strcmp(a, "--token-file"))
		*token_file = v;
	else if (!strcmp(a, "--mem-budget"))
		rc = lp_opt_size("serve", a, v, (size_t)16 << 20, 0, &c->budget);
	else if (!strcmp(a, "--doc-cache")) {
		rc = lp_opt_size("serve", a, v, 1, 0, &c->doc_cache);
		*doc_cache_set = 1;
	} else if (!strcmp(a, "--max-body"))
		rc = lp_opt_size("serve", a, v, 1024, 0, &c->max_body);
	else if (!strcmp(a, "--max-header"))
		rc = lp_opt_size("serve", a, v, 1024, 0, &c->max_header);
	else if (!strcmp(a, "--jobs") && !(rc = lp_opt_int("serve", a, v, 1, 64, &n)))
		c->jobs = (int)n;
	else if (!strcmp(a, "--queue") && !(rc = lp_opt_int("serve", a, v, 0, 100000, &n)))
		c->queue = (size_t)n;
	else if (!strcmp(a, "--max-connections") &&
		 !(rc = lp_opt_int("serve", a, v, 1, 100000, &n)))
		c->max_connections = (unsigned)n;
	else if (!strcmp(a, "--client-timeout") && !(rc = lp_opt_int("serve", a, v, 1, 3600, &n))) {
		c->header_timeout_s = (unsigned)n;
		c->request_timeout_s = 3 * (unsigned)n;
		c->idle_timeout_s = (unsigned)n;
	} else if (!strcmp(a, "--drain-timeout") &&
		   !(rc = lp_opt_real("serve", a, v, 0, 86400, &x)))
		c->drain_timeout_s = x;
	return rc;
}

static int known(const char *s)
{
	for (const char *const *o = opts; *o; o++)
		if (!strcmp(*o, s))
			return 1;
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct lp_serve_config c = {
		.listen = "127.0.0.1:8080", .budget = (size_t)1 << 30, .jobs = 2, .queue = 16,
		.max_body = (size_t)16 << 20, .max_header = (size_t)32 << 10,
		.header_timeout_s = 10, .request_timeout_s = 30, .idle_timeout_s = 10,
		.max_connections = 2048, .drain_timeout_s = 30,
	};
	const char *token_file = NULL;
	char token[512], dir[4096];
	int doc_cache_set = 0, rc;

	if (wants_help(argc, argv))
		return LP_EXIT_OK;
	for (int i = 1; i < argc; i++) {
		if (!known(argv[i])) {
			const char *near = lp_cli_nearest(argv[i], opts);
			if (near)
				return lp_cli_usage_error("serve", "unknown option '%s'; did you "
							  "mean '%s'?", argv[i], near);
			return lp_cli_usage_error("serve", "unknown option or argument '%s'",
						  argv[i]);
		}
		if ((rc = parse_opt(&c, argv[i], i + 1 < argc ? argv[i + 1] : NULL,
				    &doc_cache_set, &token_file)))
			return rc;
		i++;
	}
	if (!doc_cache_set)
		c.doc_cache = c.budget / 4;
	if (c.doc_cache >= c.budget)
		return lp_cli_usage_error("serve", "--doc-cache must be smaller than --mem-budget");
	if (lp_serve_listen_kind(c.listen) < 0)
		return lp_cli_usage_error("serve", "--listen '%s' is no numeric ADDR:PORT",
					  c.listen);
	if (token_file) {
		if ((rc = read_token(token_file, token, sizeof(token))))
			return rc;
		c.token = token;
	} else if (lp_serve_listen_kind(c.listen) != 1) {
		return lp_cli_usage_error("serve", "listening on '%s', off loopback, needs "
					  "--token-file", c.listen);
	}
	if (!c.pipelines_dir)
		c.pipelines_dir = lp_pipeline_dir(dir, sizeof(dir));
	return lp_serve_main(&c);
}
#endif
