/* check_split.c - the split stage: options, errors at load, chunks in a run. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config/pipeline.h"
#include "core/buf.h"
#include "stages/doc.h"
#include "stages/stage.h"
#include "text/split.h"

static enum lp_status load(const char *yaml, struct lp_pipeline **p, struct lp_diag *d)
{
	lp_diag_init(d);
	*p = NULL;
	return lp_pipeline_load_text("p.yaml", yaml, strlen(yaml), NULL, NULL, 0, p, d);
}

/* The stage's describe() output for a one-stage pipeline. */
static char *described(const char *yaml)
{
	static char out[512];
	struct lp_pipeline *p;
	struct lp_diag d;
	struct lp_buf b;

	ck_assert_msg(load(yaml, &p, &d) == LP_OK, "%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
	ck_assert_uint_eq(p->n_stages, 1);
	lp_buf_init(&b);
	p->stages[0].kind->describe(p->stages[0].opts, &b);
	snprintf(out, sizeof(out), "%s", b.data);
	lp_buf_release(&b);
	lp_pipeline_free(p);
	return out;
}

static void expect_error(const char *yaml, int line, int col, const char *msg)
{
	struct lp_pipeline *p;
	struct lp_diag d;

	ck_assert_int_eq(load(yaml, &p, &d), LP_E_CONFIG);
	ck_assert_ptr_null(p);
	ck_assert_msg(d.line == line && d.col == col && strstr(d.msg, msg),
		      "expected %d:%d '%s', got %d:%d '%s'", line, col, msg, d.line, d.col, d.msg);
}

START_TEST(test_split_stage_defaults_and_describe)
{
	ck_assert_str_eq(described("version: 1\nstages:\n  - split: {}\n"),
			 "{unit: tokens, size: 384, overlap: 0, boundary: sentence}");
	ck_assert_str_eq(described("version: 1\nstages:\n  - split:\n"),
			 "{unit: tokens, size: 384, overlap: 0, boundary: sentence}");
	ck_assert_str_eq(described("version: 1\nstages:\n"
				   "  - split: {unit: tokens, size: 384, overlap: 48, boundary: sentence}\n"),
			 "{unit: tokens, size: 384, overlap: 48, boundary: sentence}");
	ck_assert_str_eq(described("version: 1\nstages:\n"
				   "  - split: {unit: regex, pattern: \"(?m)^#+ 'x'\", size: 1, boundary: none}\n"),
			 "{unit: regex, size: 1, overlap: 0, boundary: none, pattern: '(?m)^#+ ''x'''}");
}
END_TEST

START_TEST(test_split_stage_errors_at_load)
{
	expect_error("version: 1\nstages:\n  - split: {size: 384, overlap: 400}\n", 3, 33,
		     "overlap (400) must be smaller than size (384)");
	expect_error("version: 1\nstages:\n  - split: {overlap: 400}\n", 3, 22,
		     "overlap (400) must be smaller than size (384)");
	expect_error("version: 1\nstages:\n  - split: {size: 0}\n", 3, 19, "size");
	expect_error("version: 1\nstages:\n  - split: {unit: lines}\n", 3, 19, "unit");
	expect_error("version: 1\nstages:\n  - split: {overlp: 4}\n", 3, 13, "overlap");
	expect_error("version: 1\nstages:\n  - split: {unit: regex}\n", 3, 19,
		     "unit regex needs a pattern");
	expect_error("version: 1\nstages:\n  - split: {unit: words, pattern: x}\n", 3, 35,
		     "pattern is only used with unit: regex");
	expect_error("version: 1\nstages:\n  - split: {unit: regex, pattern: \"ab(c\"}\n", 3, 35,
		     "invalid pattern 'ab(c': ");
}
END_TEST

START_TEST(test_split_stage_run_fills_chunks)
{
	const char *text = "One two three. Four five six seven. Eight nine.";
	struct lp_pipeline *p;
	struct lp_diag d;
	struct lp_doc doc;
	struct lp_stage_trace trace = { 0 };
	size_t n;

	ck_assert_int_eq(load("version: 1\nstages:\n"
			      "  - split: {unit: words, size: 5, overlap: 1, boundary: sentence}\n",
			      &p, &d), LP_OK);
	lp_doc_init(&doc, p);
	doc.text = text;
	doc.len = strlen(text);
	doc.trace = &trace;
	doc.n_trace = 1;
	ck_assert_ptr_nonnull(lp_doc_working_set(&doc, &n)); /* a stale selection */
	ck_assert_int_eq(p->stages[0].kind->run(&doc, p->stages[0].opts, &d), LP_OK);
	ck_assert_uint_eq(doc.n_chunks, 3);
	ck_assert_ptr_null(doc.selection);
	ck_assert_uint_eq(doc.chunks[0].off, 0);
	ck_assert_uint_eq(doc.chunks[0].len, strlen("One two three."));
	ck_assert_int_eq(memcmp(text + doc.chunks[1].off, "three. Four", 11), 0);
	ck_assert_uint_eq(doc.chunks[2].off + doc.chunks[2].len, doc.len);
	ck_assert(doc.chunks[1].score == 0.0 && !doc.chunks[1].selected);
	ck_assert_str_eq(trace.note, "3 chunks");
	lp_doc_release(&doc);
	lp_pipeline_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("split");
	TCase *tc = tcase_create("stage");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_split_stage_defaults_and_describe);
	tcase_add_test(tc, test_split_stage_errors_at_load);
	tcase_add_test(tc, test_split_stage_run_fills_chunks);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
