/*
 * fuzz_api.c - the public library's pipeline string entry point
 * (lpipe_pipeline_load_string) on any bytes, with ${question} bound and,
 * from leading "#set KEY=VALUE" lines, overrides. A load must answer
 * LPIPE_OK with a name, or an error code with a message; a loaded
 * pipeline runs on a short document with LPIPE_OK, LPIPE_VERIFY or an
 * error code and a message, never a crash. Pipelines that would open a
 * model are not run (no model is at hand here).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/lpipe.h"

#define MAX_SETS 4

static const char doc[] = "One sentence here. Another sentence there.\n\nA second paragraph.\n";

static int uses_model(const char *text, size_t len)
{
	static const char *const kinds[] = { "abstractive", "generate", "answer", "map",
					     "refine", "dense", "hybrid", "model" };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (memmem(text, len, kinds[i], strlen(kinds[i])))
			return 1;
	return 0;
}

static void check_code(int rc)
{
	if (rc < LPIPE_OK || rc > LPIPE_INTERNAL || (rc != LPIPE_OK && !lpipe_errmsg()[0]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	lpipe_pipeline *p = lpipe_pipeline_new();
	lpipe_result *r = NULL;
	size_t n_sets = 0;
	int rc;

	if (!p)
		return 0;
	lpipe_pipeline_set_var(p, "question", "what is it");
	while (n_sets < MAX_SETS && size > 5 && !memcmp(text, "#set ", 5)) {
		const char *nl = memchr(text, '\n', size);
		size_t n = nl ? (size_t)(nl - text) : size;
		char *kv = strndup(text + 5, n - 5);

		if (kv && strlen(kv) == n - 5 && strchr(kv, '='))
			check_code(lpipe_pipeline_set(p, kv));
		free(kv);
		n_sets++;
		text += nl ? n + 1 : n;
		size -= nl ? n + 1 : n;
	}
	rc = lpipe_pipeline_load_string(p, "fuzz.yaml", text, size);
	check_code(rc);
	if ((rc == LPIPE_OK) != (lpipe_pipeline_name(p) != NULL))
		abort();
	if (rc == LPIPE_OK && !uses_model(text, size)) {
		rc = lpipe_run_buffer(p, NULL, "doc", doc, sizeof(doc) - 1, &r);
		check_code(rc);
		if ((rc == LPIPE_OK || rc == LPIPE_VERIFY) != (r != NULL))
			abort();
		if (r && !lpipe_result_text(r))
			abort();
		lpipe_result_free(r);
	}
	lpipe_pipeline_free(p);
	return 0;
}
