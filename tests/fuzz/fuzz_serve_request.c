/* fuzz_serve_request.c - the request parser of lpipe serve
 * (src/serve/request.h) on any bytes, as JSON and as a form: it must never
 * read past the input, crash or leak, and whatever it accepts must hold
 * the promises of its header (a bare pipeline name, a document id, allowed
 * override keys and plain values). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/request.h"

static void check(const struct lp_serve_run_req *r)
{
	if (!lp_serve_name_ok(r->pipeline))
		abort();
	if (r->document[0] && !lp_serve_id_ok(r->document))
		abort();
	if (!r->document[0] == !r->document_path)
		abort();
	for (size_t i = 0; i < r->n_sets; i++) {
		char *eq = strchr(r->sets[i], '=');
		if (!eq)
			abort();
		*eq = 0;
		if (!lp_serve_set_key_ok(r->sets[i]) || !lp_serve_set_value_ok(eq + 1))
			abort();
		*eq = '=';
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_serve_run_req r;
	struct lp_diag d;
	/* a copy of exactly `size` bytes, so a read past the end is caught */
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	for (int form = 0; form < 2; form++) {
		lp_diag_init(&d);
		if (lp_serve_parse_run(copy, size, form, &r, &d) == LP_OK) {
			check(&r);
			lp_serve_run_req_release(&r);
		}
	}
	free(copy);
	return 0;
}
