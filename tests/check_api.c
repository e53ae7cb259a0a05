/* check_api.c - the public library (lpipe.h), through its exported
 * functions only: error codes and messages, variables, overrides, a run
 * on a buffer against the same run on a file, the process-wide settings,
 * what a loaded pipeline tells, and a result's measures. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/lpipe.h"
#include "config.h"

/* Extractive: no model needed. */
static const char extractive[] =
	"version: 1\n"
	"name: api-test\n"
	"stages:\n"
	"  - split: {unit: tokens, size: 64, overlap: 0, boundary: sentence}\n"
	"  - summarize: {strategy: extractive, fanout: 4, max_words: 40}\n"
	"  - verify: {keyphrases: {auto: 4}, min_survival: 0.2, min_words: 5, on_fail: fail}\n";

static const char doc_text[] =
	"The bootstrap script installs the compiler and the libraries. "
	"It then configures the build directory and runs make. "
	"Memory budgets keep the pipeline within its limits on small machines. "
	"Each stage of the pipeline records its peak memory in the trace. "
	"The verify stage checks that keyphrases of the source survive in the summary. "
	"A summary that loses too many keyphrases fails the verification. "
	"The report can be written as text, markdown, JSON or HTML. "
	"Pipelines are YAML files with a list of stages and their options.\n";

static lpipe_pipeline *load_string(const char *text, int want)
{
	lpipe_pipeline *p = lpipe_pipeline_new();

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(lpipe_pipeline_load_string(p, "t.yaml", text, strlen(text)), want);
	return p;
}

START_TEST(test_bad_string)
{
	lpipe_pipeline *p = load_string("version: 1\nstagez: []\n", LPIPE_USAGE);

	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "t.yaml:2"));
	ck_assert_ptr_null(lpipe_pipeline_name(p));
	lpipe_pipeline_free(p);
	p = load_string("version: [1\n", LPIPE_USAGE);
	ck_assert_str_ne(lpipe_errmsg(), "");
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_missing_file)
{
	lpipe_pipeline *p = lpipe_pipeline_new();
	lpipe_result *r = (lpipe_result *)p; /* must be reset to NULL */

	ck_assert_int_eq(lpipe_pipeline_load_file(p, "/nonexistent/p.yaml"), LPIPE_INPUT);
	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "/nonexistent/p.yaml"));
	/* nothing loaded: a run is a usage error */
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, NULL, "x", 1, &r), LPIPE_USAGE);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "no pipeline loaded"));
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_missing_document)
{
	lpipe_pipeline *p = load_string(extractive, LPIPE_OK);
	lpipe_result *r;

	ck_assert_str_eq(lpipe_errmsg(), "");
	ck_assert_str_eq(lpipe_pipeline_name(p), "api-test");
	ck_assert_int_eq(lpipe_run_file(p, NULL, "/nonexistent/doc.txt", &r), LPIPE_INPUT);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "/nonexistent/doc.txt"));
	/* binary input is an input error too */
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, "bin", "a\0b", 3, &r), LPIPE_INPUT);
	ck_assert_ptr_null(r);
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_variables)
{
	static const char needs_q[] =
		"version: 1\n"
		"name: ${question}\n"
		"stages:\n"
		"  - split: {unit: tokens, size: 64}\n";
	lpipe_pipeline *p = load_string(needs_q, LPIPE_USAGE);

	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "question"));
	/* set after a load: loaded again with it */
	ck_assert_int_eq(lpipe_pipeline_set_var(p, "question", "what builds"), LPIPE_OK);
	ck_assert_str_eq(lpipe_pipeline_name(p), "what builds");
	ck_assert_int_eq(lpipe_pipeline_set_var(p, "question", "again"), LPIPE_OK);
	ck_assert_str_eq(lpipe_pipeline_name(p), "again");
	/* unbound: the load fails again */
	ck_assert_int_eq(lpipe_pipeline_set_var(p, "question", NULL), LPIPE_USAGE);
	ck_assert_int_eq(lpipe_pipeline_set_var(p, "", "x"), LPIPE_USAGE);
	lpipe_pipeline_free(p);
	/* set before the load */
	p = lpipe_pipeline_new();
	ck_assert_int_eq(lpipe_pipeline_set_var(p, "question", "first"), LPIPE_OK);
	ck_assert_ptr_null(lpipe_pipeline_name(p));
	ck_assert_int_eq(lpipe_pipeline_load_string(p, NULL, needs_q, strlen(needs_q)), LPIPE_OK);
	ck_assert_str_eq(lpipe_pipeline_name(p), "first");
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_overrides)
{
	lpipe_pipeline *p = load_string(extractive, LPIPE_OK);
	lpipe_result *r;
	const char *json;

	ck_assert_int_eq(lpipe_pipeline_set(p, "name=renamed"), LPIPE_OK);
	ck_assert_str_eq(lpipe_pipeline_name(p), "renamed");
	ck_assert_int_eq(lpipe_pipeline_set(p, "no-equals"), LPIPE_USAGE);
	ck_assert_int_eq(lpipe_pipeline_set(p, "stages.split.size=-3"), LPIPE_USAGE);
	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "--set"));
	lpipe_pipeline_free(p);

	/* an override changes the run: JSON output, and the pipeline's name in it */
	p = lpipe_pipeline_new();
	ck_assert_int_eq(lpipe_pipeline_set(p, "output.format=json"), LPIPE_OK);
	ck_assert_int_eq(lpipe_pipeline_load_string(p, NULL, extractive, strlen(extractive)),
			 LPIPE_OK);
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, "doc", doc_text, strlen(doc_text), &r),
			 LPIPE_OK);
	json = lpipe_result_report(r, NULL);
	ck_assert_ptr_nonnull(json);
	ck_assert_ptr_eq(json, lpipe_result_json(r));
	ck_assert_ptr_nonnull(strstr(json, "\"api-test\""));
	ck_assert_ptr_null(lpipe_result_report(r, "yaml"));
	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "unknown format"));
	lpipe_result_free(r);
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_buffer_equals_file)
{
	char path[] = "/tmp/lpipe-check-api.XXXXXX";
	lpipe_pipeline *p = load_string(extractive, LPIPE_OK);
	lpipe_engine *e;
	lpipe_result *rf, *rb;
	char *text_f;
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(doc_text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(lpipe_engine_new(1, &e), LPIPE_OK);
	ck_assert_int_eq(lpipe_run_file(p, e, path, &rf), LPIPE_OK);
	/* the buffer is named as the file, so even the text reports are equal
	 * (markdown and JSON hold the stages' seconds) */
	ck_assert_int_eq(lpipe_run_buffer(p, e, path, doc_text, strlen(doc_text), &rb), LPIPE_OK);
	unlink(path);
	ck_assert_ptr_nonnull(lpipe_result_text(rf));
	ck_assert_uint_gt(strlen(lpipe_result_text(rf)), 0);
	text_f = strdup(lpipe_result_text(rf));
	ck_assert_str_eq(text_f, lpipe_result_text(rb));
	ck_assert_str_eq(lpipe_result_report(rf, "text"), lpipe_result_report(rb, "text"));
	ck_assert_int_eq(lpipe_result_code(rf), LPIPE_OK);
	ck_assert_int_eq(lpipe_result_passed(rf), 1);
	ck_assert_int_eq(lpipe_result_passed(rb), 1);
	ck_assert(lpipe_result_survival(rf) > 0 && lpipe_result_survival(rf) <= 1);
	ck_assert(lpipe_result_survival(rf) == lpipe_result_survival(rb));
	/* the text report ends with the verification line */
	ck_assert_ptr_nonnull(strstr(lpipe_result_report(rf, "text"), "\nverification: "));
	ck_assert_ptr_nonnull(strstr(lpipe_result_json(rb), "\"survival_rate\""));
	/* a result outlives its pipeline */
	lpipe_pipeline_free(p);
	ck_assert_str_eq(text_f, lpipe_result_text(rb));
	free(text_f);
	lpipe_result_free(rf);
	lpipe_result_free(rb);
	lpipe_engine_free(e);
}
END_TEST

START_TEST(test_verify_failed)
{
	lpipe_pipeline *p = load_string(extractive, LPIPE_OK);
	lpipe_result *r;

	/* more words than the summary has: the verification fails, the
	 * result is still made */
	ck_assert_int_eq(lpipe_pipeline_set(p, "stages.verify.min_words=100000"), LPIPE_OK);
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, NULL, doc_text, strlen(doc_text), &r),
			 LPIPE_VERIFY);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_ne(lpipe_errmsg(), "");
	ck_assert_int_eq(lpipe_result_code(r), LPIPE_VERIFY);
	ck_assert_int_eq(lpipe_result_passed(r), 0);
	ck_assert_ptr_nonnull(lpipe_result_text(r));
	lpipe_result_free(r);
	lpipe_pipeline_free(p);
	/* no verify stage: passed is -1 */
	p = load_string("version: 1\nstages:\n  - split: {unit: tokens, size: 32}\n", LPIPE_OK);
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, NULL, doc_text, strlen(doc_text), &r), LPIPE_OK);
	ck_assert_int_eq(lpipe_result_passed(r), -1);
	ck_assert(lpipe_result_survival(r) == 1.0);
	/* the product is the chunks, joined: all of the text is there */
	ck_assert_ptr_nonnull(strstr(lpipe_result_text(r), "The bootstrap script installs"));
	ck_assert_ptr_nonnull(strstr(lpipe_result_text(r), "list of stages and their options."));
	lpipe_result_free(r);
	lpipe_pipeline_free(p);
}
END_TEST

/* A document of BIG_LEN (1 MiB) bytes: doc_text over and over (free). */
#define BIG_LEN ((size_t)1 << 20)
static char *big_document(void)
{
	char *big = malloc(BIG_LEN);

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < BIG_LEN; i++)
		big[i] = doc_text[i % (sizeof(doc_text) - 1)];
	return big;
}

START_TEST(test_budget)
{
	lpipe_pipeline *p = load_string(extractive, LPIPE_OK);
	size_t len = BIG_LEN;
	char *big = big_document();
	lpipe_result *r;

	/* the budget covers the copy of the buffer: a 1 MiB document under
	 * a 64 KiB budget is out of memory (exit code 4) */
	setenv("LPIPE_MEM_BUDGET", "64KiB", 1);
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, NULL, big, len, &r), LPIPE_NOMEM);
	ck_assert_ptr_null(r);
	ck_assert_str_ne(lpipe_errmsg(), "");
	setenv("LPIPE_MEM_BUDGET", "bogus", 1);
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, NULL, big, len, &r), LPIPE_USAGE);
	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "LPIPE_MEM_BUDGET"));
	unsetenv("LPIPE_MEM_BUDGET");
	free(big);
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_settings)
{
	lpipe_pipeline *p = load_string(extractive, LPIPE_OK);
	size_t len = BIG_LEN;
	char *big = big_document();
	lpipe_result *r;

	ck_assert_int_eq(lpipe_set_mem_budget("lots"), LPIPE_USAGE);
	ck_assert_ptr_nonnull(strstr(lpipe_errmsg(), "'lots'"));
	/* the budget set here wins over the environment... */
	setenv("LPIPE_MEM_BUDGET", "0", 1);
	ck_assert_int_eq(lpipe_set_mem_budget("64KiB"), LPIPE_OK);
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, NULL, big, len, &r), LPIPE_NOMEM);
	ck_assert_ptr_null(r);
	/* ...covers loading a pipeline... */
	lpipe_pipeline_free(p);
	ck_assert_int_eq(lpipe_set_mem_budget("1KiB"), LPIPE_OK);
	p = load_string(extractive, LPIPE_NOMEM);
	ck_assert_str_ne(lpipe_errmsg(), "");
	/* ...and NULL gives the say back to the environment (0: none) */
	ck_assert_int_eq(lpipe_set_mem_budget(NULL), LPIPE_OK);
	ck_assert_int_eq(lpipe_pipeline_load_string(p, "t.yaml", extractive, strlen(extractive)),
			 LPIPE_OK);
	/* (the summary of a text said over and over may fail verification) */
	ck_assert_int_le(lpipe_run_buffer(p, NULL, NULL, big, len, &r), LPIPE_VERIFY);
	ck_assert_ptr_nonnull(r);
	lpipe_result_free(r);
	unsetenv("LPIPE_MEM_BUDGET");
	lpipe_set_log_level(LPIPE_LOG_ERROR);
	lpipe_set_progress(0);
	free(big);
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_pipeline_info)
{
	static const char served[] =
		"version: 1\n"
		"model: {backend: openai, url: 'http://127.0.0.1:9/v1', name: m, context: 2048,\n"
		"        concurrency: 3}\n"
		"stages:\n"
		"  - split: {unit: tokens, size: 64}\n"
		"  - summarize: {strategy: tree}\n";
	lpipe_pipeline *p = lpipe_pipeline_new();
	char *plan;

	ck_assert_ptr_null(lpipe_pipeline_format(p));
	ck_assert_ptr_null(lpipe_pipeline_plan(p));
	ck_assert_int_eq(lpipe_pipeline_concurrency(p), 0);
	ck_assert_int_eq(lpipe_pipeline_load_string(p, "t.yaml", extractive, strlen(extractive)),
			 LPIPE_OK);
	ck_assert_str_eq(lpipe_pipeline_format(p), "text");
	ck_assert_int_eq(lpipe_pipeline_concurrency(p), 1);
	ck_assert_ptr_nonnull(strstr(lpipe_pipeline_plan(p), "summarize"));
	plan = strdup(lpipe_pipeline_plan(p));
	/* an override changes the plan, and the format with output.format */
	ck_assert_int_eq(lpipe_pipeline_set(p, "output.format=json"), LPIPE_OK);
	ck_assert_str_eq(lpipe_pipeline_format(p), "json");
	ck_assert_str_ne(plan, lpipe_pipeline_plan(p));
	free(plan);
	ck_assert_int_eq(lpipe_pipeline_load_string(p, "s.yaml", served, strlen(served)),
			 LPIPE_OK);
	ck_assert_int_eq(lpipe_pipeline_concurrency(p), 3);
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_write_and_measures)
{
	lpipe_pipeline *p = load_string(extractive, LPIPE_OK);
	lpipe_engine *e;
	lpipe_result *r;
	size_t in = 7, out = 7, n = 0;
	char *buf = NULL;
	FILE *f;

	ck_assert_int_eq(lpipe_format_check("html"), LPIPE_OK);
	ck_assert_int_eq(lpipe_format_check("pdf"), LPIPE_USAGE);
	ck_assert_int_eq(lpipe_format_check(NULL), LPIPE_USAGE);
	ck_assert_int_eq(lpipe_engine_new(1, &e), LPIPE_OK);
	ck_assert_int_eq(lpipe_run_buffer(p, e, NULL, doc_text, strlen(doc_text), &r), LPIPE_OK);
	/* written as lpipe_result_report makes it */
	f = open_memstream(&buf, &n);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(lpipe_result_write(r, "markdown", f), LPIPE_OK);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_str_eq(buf, lpipe_result_report(r, "markdown"));
	free(buf);
	ck_assert_int_eq(lpipe_result_write(r, "pdf", stdout), LPIPE_USAGE);
	/* a stream that refuses writes is an input/output error */
	f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		ck_assert_int_eq(lpipe_result_write(r, "text", f), LPIPE_INPUT);
		ck_assert_str_ne(lpipe_errmsg(), "");
		fclose(f);
	}
	/* no model: no tokens, none loaded; the document's memory was counted */
	lpipe_result_tokens(r, &in, &out);
	ck_assert_uint_eq(in, 0);
	ck_assert_uint_eq(out, 0);
	lpipe_result_tokens(r, NULL, NULL);
	ck_assert_uint_ge(lpipe_result_peak_bytes(r), strlen(doc_text));
	ck_assert_uint_eq(lpipe_engine_models_loaded(e), 0);
	lpipe_result_free(r);
	lpipe_engine_free(e);
	lpipe_pipeline_free(p);
}
END_TEST

START_TEST(test_version)
{
	ck_assert_str_eq(lpipe_version(), PACKAGE_VERSION);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_bad_string);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_missing_document);
	tcase_add_test(tc, test_variables);
	tcase_add_test(tc, test_overrides);
	tcase_add_test(tc, test_buffer_equals_file);
	tcase_add_test(tc, test_verify_failed);
	tcase_add_test(tc, test_budget);
	tcase_add_test(tc, test_settings);
	tcase_add_test(tc, test_pipeline_info);
	tcase_add_test(tc, test_write_and_measures);
	tcase_add_test(tc, test_version);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
