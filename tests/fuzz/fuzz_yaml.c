/*
 * fuzz_yaml.c - pipeline files: YAML tree, ${var}, --set, validation, print.
 *
 * Leading lines "#set KEY=VALUE" (YAML comments, so the rest still parses)
 * become --set overrides, so the override paths are fuzzed with the file.
 * A small stage table of test kinds is installed so that stage options go
 * through every typed getter. A pipeline that loads is printed, reloaded
 * and printed again: both prints must be equal.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/pipeline.h"
#include "core/mem.h"
#include "stages/stage.h"

#define MAX_SETS 4

struct fz_opts {
	long long n;
	double x;
	int flag, mode;
	size_t bytes;
	const char *text;
	const char **list;
	size_t n_list;
	long long deep;
};

static enum lp_status fz_parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
			       const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "size", "ratio", "strict", "mode", "budget",
					    "query", "must", "nested", NULL };
	static const char *const modes[] = { "tokens", "chars", NULL };
	struct fz_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	const struct lp_node *nested = lp_node_get(opts, "nested");
	enum lp_status st;

	if (!o)
		return LP_E_NOMEM;
	if ((st = lp_cfg_check_keys(c, opts, keys)) != LP_OK ||
	    (st = lp_cfg_get_int(c, opts, "size", 1, 1, p->model.context, &o->n)) != LP_OK ||
	    (st = lp_cfg_get_double(c, opts, "ratio", 0.5, 0, 1, &o->x)) != LP_OK ||
	    (st = lp_cfg_get_bool(c, opts, "strict", 0, &o->flag)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, opts, "mode", modes, 0, &o->mode)) != LP_OK ||
	    (st = lp_cfg_get_size(c, opts, "budget", 0, &o->bytes)) != LP_OK ||
	    (st = lp_cfg_get_string(c, opts, "query", NULL, &o->text)) != LP_OK ||
	    (st = lp_cfg_get_string_list(c, opts, "must", &o->list, &o->n_list)) != LP_OK ||
	    (st = lp_cfg_check_keys(c, nested, keys)) != LP_OK ||
	    (st = lp_cfg_get_int(c, nested, "size", 0, -5, 5, &o->deep)) != LP_OK)
		return st;
	*out = o;
	return LP_OK;
}

/* Every option, exactly, so that printing and reloading round-trips. */
static void fz_describe(const void *opts, struct lp_buf *out)
{
	static const char *const modes[] = { "tokens", "chars" };
	const struct fz_opts *o = opts;

	lp_buf_addf(out, "{size: %lld, ratio: %.17g, strict: %s, mode: %s, budget: %zu, query: ",
		    o->n, o->x, o->flag ? "true" : "false", modes[o->mode], o->bytes);
	lp_cfg_quote(out, o->text);
	lp_buf_adds(out, ", must: [");
	for (size_t i = 0; i < o->n_list; i++) {
		if (i)
			lp_buf_adds(out, ", ");
		lp_cfg_quote(out, o->list[i]);
	}
	lp_buf_addf(out, "], nested: {size: %lld}}", o->deep);
}

static const struct lp_stage_kind fz_split = { "split", fz_parse, NULL, fz_describe };
static const struct lp_stage_kind fz_answer = { "answer", fz_parse, NULL, fz_describe };
static const struct lp_stage_kind *const fz_kinds[] = { &fz_split, &fz_answer, NULL };

static const char *const var_names[] = { "question", "empty" };
static const char *const var_values[] = { "why?", "" };
static const struct lp_vars vars = { var_names, var_values, 2 };

/* Cut leading "#set ..." lines out of `text` (`size` bytes plus a NUL,
 * modified); returns the bytes they took. */
static size_t take_sets(char *text, size_t size, const char **sets, size_t *n)
{
	size_t off = 0;

	*n = 0;
	while (*n < MAX_SETS && size - off >= 5 && !strncmp(text + off, "#set ", 5)) {
		char *nl = memchr(text + off, '\n', size - off);
		sets[(*n)++] = text + off + 5;
		if (!nl)
			return size;
		*nl = '\0';
		off = (size_t)(nl - text) + 1;
	}
	return off;
}

static char *print(const struct lp_pipeline *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	lp_pipeline_print(p, f);
	fclose(f);
	return buf;
}

/* What `lpipe check` prints must load back to the same plan. */
static void check_round_trip(const struct lp_pipeline *p, int verbose)
{
	struct lp_pipeline *q = NULL;
	struct lp_diag d;
	size_t n1, n2;
	char *once = print(p, &n1), *twice;

	lp_diag_init(&d);
	if (lp_pipeline_load_text("printed.yaml", once, n1, NULL, NULL, 0, &q, &d) != LP_OK) {
		fprintf(stderr, "printed plan does not load:\n%s", once);
		lp_diag_print(&d, stderr);
		abort();
	}
	twice = print(q, &n2);
	if (n1 != n2 || memcmp(once, twice, n1)) {
		fprintf(stderr, "plan changed on reload:\n%s---\n%s", once, twice);
		abort();
	}
	if (verbose)
		fputs(once, stderr);
	free(once);
	free(twice);
	lp_pipeline_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int verbose = -1; /* LPIPE_FUZZ_VERBOSE: print each outcome */
	const char *sets[MAX_SETS];
	struct lp_pipeline *p = NULL;
	struct lp_diag d;
	char *copy;
	size_t n_sets, skip;

	if (verbose < 0)
		verbose = getenv("LPIPE_FUZZ_VERBOSE") != NULL;
	lp_stage_registry_override(fz_kinds);
	/* The sets are cut from a copy; the YAML is the original bytes past
	 * them (not NUL-terminated, as a mapped file would not be). */
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	skip = take_sets(copy, size, sets, &n_sets);
	lp_diag_init(&d);
	if (lp_pipeline_load_text("fuzz.yaml", (const char *)data + skip, size - skip, &vars,
				  sets, n_sets, &p, &d) == LP_OK) {
		check_round_trip(p, verbose);
		lp_pipeline_free(p);
	} else if (!d.msg[0]) {
		abort(); /* every failure must say why */
	} else if (verbose) {
		lp_diag_print(&d, stderr);
	}
	free(copy);
	lp_stage_registry_override(NULL);
	return 0;
}
