/* check_cli.c - the stage runner, the reports and command suggestions,
 * with stage kinds defined here so no real stage is needed. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "api/runner.h"
#include "core/mem.h"
#include "report/report.h"
#include "stages/stage.h"

static int ran_count;

/* Three chunks: the text cut in thirds (at byte offsets; ASCII text). */
static enum lp_status fake_split(struct lp_doc *doc, const void *o, struct lp_diag *d)
{
	size_t third = doc->len / 3;

	doc->chunks = lp_arena_alloc(&doc->arena, 3 * sizeof(*doc->chunks));
	if (!doc->chunks)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "no chunks");
	for (size_t i = 0; i < 3; i++) {
		doc->chunks[i].off = i * third;
		doc->chunks[i].len = i == 2 ? doc->len - 2 * third : third;
	}
	doc->n_chunks = 3;
	lp_doc_note(doc, "%d chunks", 3);
	return LP_OK;
}

static enum lp_status fake_count(struct lp_doc *doc, const void *o, struct lp_diag *d)
{
	ran_count++;
	return doc->n_chunks ? LP_OK : lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0, "no chunk");
}

/* Select the last chunk only, as a retrieve stage would. */
static enum lp_status fake_pick(struct lp_doc *doc, const void *o, struct lp_diag *d)
{
	doc->selection = lp_arena_alloc(&doc->arena, sizeof(size_t));
	doc->selection[0] = doc->n_chunks - 1;
	doc->n_selection = 1;
	doc->chunks[doc->n_chunks - 1].selected = 1;
	doc->chunks[doc->n_chunks - 1].score = 2.5;
	return LP_OK;
}

static struct lp_keyphrase phrases[] = {
	{ "lighthouse", "auto", 1 }, { "fog signal", "must", 0 },
};

static enum lp_status fake_verify(struct lp_doc *doc, const void *o, struct lp_diag *d)
{
	doc->verify.done = 1;
	doc->verify.phrases = phrases;
	doc->verify.n_phrases = 2;
	doc->verify.n_survived = 1;
	doc->verify.survival_rate = 0.5;
	doc->verify.words = 9;
	doc->verify.min_words = 5;
	return lp_diag_set(d, LP_E_VERIFY, NULL, 0, 0, "missing 'fog signal'");
}

static enum lp_status fake_boom(struct lp_doc *doc, const void *o, struct lp_diag *d)
{
	return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0, "boom");
}

/* One MiB of scratch, freed again: only the peak remembers it. */
static enum lp_status fake_hog(struct lp_doc *doc, const void *o, struct lp_diag *d)
{
	void *p = lp_mem_alloc(LP_MEM_SCRATCH, 1 << 20, d);

	if (!p)
		return LP_E_NOMEM;
	memset(p, 1, 1 << 20);
	lp_mem_free(p);
	return LP_OK;
}

/* Asks the runner to run again from stage `rerun_from` while `reruns_wanted`
 * is positive, failing its verification until the last pass; counts its
 * runs and the passes it saw in the trace. */
static int reruns_wanted, redo_runs, redo_last_pass;
static size_t rerun_from;

static enum lp_status fake_redo(struct lp_doc *doc, const void *o, struct lp_diag *d)
{
	redo_runs++;
	redo_last_pass = doc->trace[doc->n_trace - 1].pass;
	if (reruns_wanted-- > 0) {
		doc->rerun.requested = 1;
		doc->rerun.from = rerun_from;
		return lp_diag_set(d, LP_E_VERIFY, NULL, 0, 0, "not yet");
	}
	return LP_OK;
}

static const struct lp_stage_kind k_redo = { "redo", NULL, fake_redo, NULL };
static const struct lp_stage_kind k_split = { "split", NULL, fake_split, NULL };
static const struct lp_stage_kind k_count = { "count", NULL, fake_count, NULL };
static const struct lp_stage_kind k_pick = { "pick", NULL, fake_pick, NULL };
static const struct lp_stage_kind k_verify = { "verify", NULL, fake_verify, NULL };
static const struct lp_stage_kind k_boom = { "boom", NULL, fake_boom, NULL };
static const struct lp_stage_kind k_hog = { "hog", NULL, fake_hog, NULL };

static const char TEXT[] = "Lighthouses mark the coast. Keepers trim the wicks. "
			   "Fog hides the beam.\n";
static char doc_path[64];

static void write_doc(void)
{
	int fd;

	strcpy(doc_path, "/tmp/check_cli.XXXXXX");
	fd = mkstemp(doc_path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, TEXT, strlen(TEXT)), (int)strlen(TEXT));
	close(fd);
}

/* A pipeline of the given kinds, built by hand (no config module). */
static struct lp_pipeline *make_pipeline(const struct lp_stage_kind *const *kinds, size_t n)
{
	struct lp_pipeline *p = calloc(1, sizeof(*p));

	lp_arena_init(&p->arena);
	p->path = "test.yaml";
	p->name = "test";
	p->stages = lp_arena_alloc(&p->arena, (n + 1) * sizeof(*p->stages));
	for (size_t i = 0; i < n; i++)
		p->stages[i].kind = kinds[i];
	p->n_stages = n;
	return p;
}

static void free_pipeline(struct lp_pipeline *p)
{
	lp_arena_release(&p->arena);
	free(p);
}

/* The report of `doc` in `format`, as a malloc'd string. */
static char *report(struct lp_doc *doc, enum lp_format format, const struct lp_run_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_report_write(doc, format, st, f, &d), LP_OK);
	fclose(f);
	return buf;
}

START_TEST(test_runner_whole_text_chunk)
{
	const struct lp_stage_kind *kinds[] = { &k_count };
	struct lp_pipeline *p = make_pipeline(kinds, 1);
	struct lp_doc doc;
	struct lp_diag d;
	char *out;

	write_doc();
	lp_diag_init(&d);
	ran_count = 0;
	ck_assert_int_eq(lp_runner_run(p, doc_path, "why?", NULL, &doc, NULL, &d), LP_OK);
	ck_assert_int_eq(ran_count, 1);
	ck_assert_uint_eq(doc.n_chunks, 1);
	ck_assert_uint_eq(doc.chunks[0].off, 0);
	ck_assert_uint_eq(doc.chunks[0].len, strlen(TEXT));
	ck_assert_str_eq(doc.question, "why?");
	ck_assert_uint_eq(doc.n_trace, 1);
	ck_assert_str_eq(doc.trace[0].kind, "count");
	ck_assert_ptr_null(doc.trace[0].note);
	out = report(&doc, LP_FORMAT_TEXT, NULL);
	ck_assert_str_eq(out, TEXT); /* the product, untouched */
	free(out);
	lp_doc_release(&doc);
	free_pipeline(p);
	unlink(doc_path);
}
END_TEST

START_TEST(test_runner_verify_goes_on_and_traces)
{
	const struct lp_stage_kind *kinds[] = { &k_split, &k_hog, &k_pick, &k_verify, &k_count };
	struct lp_pipeline *p = make_pipeline(kinds, 5);
	struct lp_run_stats st;
	struct lp_doc doc;
	struct lp_diag d;
	char *out;

	write_doc();
	lp_diag_init(&d);
	ran_count = 0;
	ck_assert_int_eq(lp_runner_run(p, doc_path, NULL, NULL, &doc, &st, &d), LP_E_VERIFY);
	ck_assert_str_eq(d.msg, "missing 'fog signal'");
	ck_assert_int_eq(st.status, LP_E_VERIFY);
	ck_assert_int_eq(ran_count, 1); /* the stage after verify still ran */
	ck_assert_uint_eq(doc.n_trace, 5);
	ck_assert_str_eq(doc.trace[0].note, "3 chunks");
	ck_assert_uint_ge(doc.trace[1].peak_tracked_bytes, 1 << 20);
	ck_assert_uint_lt(doc.trace[2].peak_tracked_bytes, 1 << 20);
	ck_assert_str_eq(doc.trace[2].note, "kept 1 of 3 chunks"); /* derived */
	ck_assert_ptr_nonnull(strstr(doc.trace[3].note, "1/2 keyphrases"));
	ck_assert_uint_ge(st.peak_tracked_bytes, 1 << 20);
	ck_assert_uint_ge(st.peak_by_tag[LP_MEM_SCRATCH], 1 << 20);

	out = report(&doc, LP_FORMAT_TEXT, &st);
	ck_assert_ptr_nonnull(strstr(out, "Fog hides the beam.\n\nverification: 1/2 keyphrases "
					  "survived (50%), 9 words; missing: fog signal\n"));
	free(out);
	out = report(&doc, LP_FORMAT_MARKDOWN, &st);
	ck_assert_ptr_nonnull(strstr(out, "# test\n\n## Result\n"));
	ck_assert_ptr_nonnull(strstr(out, "| fog signal | must | ✗ |"));
	ck_assert_ptr_nonnull(strstr(out, "- selected: 1\n"));
	free(out);
	lp_doc_release(&doc);
	free_pipeline(p);
	unlink(doc_path);
}
END_TEST

/* A stage asks for a rerun: the runner runs the stages from the one asked
 * for through the asking one again, each with a trace entry of the next
 * pass, then goes on; the verification judged is the last one. */
START_TEST(test_runner_reruns_on_request)
{
	const struct lp_stage_kind *kinds[] = { &k_split, &k_count, &k_hog, &k_redo, &k_count };
	struct lp_pipeline *p = make_pipeline(kinds, 5);
	static const char *const want[] = { "split", "count", "hog", "redo", "count", "hog", "redo",
					    "count", "hog", "redo", "count" };
	static const int pass[] = { 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3 };
	struct lp_run_stats st;
	struct lp_doc doc;
	struct lp_diag d;

	write_doc();
	lp_diag_init(&d);
	ran_count = redo_runs = 0;
	reruns_wanted = 2;
	rerun_from = 1;
	ck_assert_int_eq(lp_runner_run(p, doc_path, NULL, NULL, &doc, &st, &d), LP_OK);
	ck_assert_int_eq(redo_runs, 3);
	ck_assert_int_eq(redo_last_pass, 3);
	ck_assert_int_eq(ran_count, 4); /* count ran in every pass, and after */
	ck_assert_uint_eq(doc.rerun.count, 2);
	ck_assert_uint_eq(doc.n_trace, 11);
	for (size_t i = 0; i < 11; i++) {
		ck_assert_str_eq(doc.trace[i].kind, want[i]);
		ck_assert_int_eq(doc.trace[i].pass, pass[i]);
	}
	ck_assert_uint_eq(doc.trace[5].stage, 2);
	/* a rerun step has its own peaks, like any step */
	ck_assert_uint_ge(doc.trace[5].peak_tracked_bytes, 1 << 20);
	ck_assert_uint_ge(doc.trace[8].peak_tracked_bytes, 1 << 20);
	lp_doc_release(&doc);

	/* bounded: a stage that always asks gets LP_DOC_MAX_RERUNS reruns,
	 * and its last failed verification is the run's */
	redo_runs = 0;
	reruns_wanted = 1000;
	ck_assert_int_eq(lp_runner_run(p, doc_path, NULL, NULL, &doc, &st, &d), LP_E_VERIFY);
	ck_assert_str_eq(d.msg, "not yet");
	ck_assert_int_eq(redo_runs, LP_DOC_MAX_RERUNS + 1);
	ck_assert_uint_eq(doc.rerun.count, LP_DOC_MAX_RERUNS);
	lp_doc_release(&doc);

	/* a request for a later stage is ignored */
	redo_runs = 0;
	reruns_wanted = 1;
	rerun_from = 4;
	ck_assert_int_eq(lp_runner_run(p, doc_path, NULL, NULL, &doc, &st, &d), LP_E_VERIFY);
	ck_assert_int_eq(redo_runs, 1);
	ck_assert_uint_eq(doc.n_trace, 5);
	lp_doc_release(&doc);
	free_pipeline(p);
	unlink(doc_path);
}
END_TEST

START_TEST(test_runner_stops_at_first_error)
{
	const struct lp_stage_kind *kinds[] = { &k_split, &k_boom, &k_count };
	struct lp_pipeline *p = make_pipeline(kinds, 3);
	struct lp_doc doc;
	struct lp_diag d;

	write_doc();
	lp_diag_init(&d);
	ran_count = 0;
	ck_assert_int_eq(lp_runner_run(p, doc_path, NULL, NULL, &doc, NULL, &d), LP_E_INTERNAL);
	ck_assert_str_eq(d.msg, "boom");
	ck_assert_int_eq(ran_count, 0);
	ck_assert_uint_eq(doc.n_trace, 2);
	lp_doc_release(&doc);
	free_pipeline(p);
	unlink(doc_path);
}
END_TEST

START_TEST(test_runner_budget_names_the_stage)
{
	const struct lp_stage_kind *kinds[] = { &k_hog };
	struct lp_pipeline *p = make_pipeline(kinds, 1);
	struct lp_doc doc;
	struct lp_diag d;

	write_doc();
	lp_diag_init(&d);
	lp_mem_set_budget(lp_mem_current_total() + (512 << 10));
	ck_assert_int_eq(lp_runner_run(p, doc_path, NULL, NULL, &doc, NULL, &d), LP_E_NOMEM);
	ck_assert_ptr_nonnull(strstr(d.msg, "hog"));
	lp_doc_release(&doc);
	lp_mem_set_budget(0);
	free_pipeline(p);
	unlink(doc_path);
}
END_TEST

START_TEST(test_runner_budget_precedence)
{
	struct lp_pipeline p;
	struct lp_diag d;
	size_t b = 0;

	memset(&p, 0, sizeof(p));
	p.memory.budget = 3 << 20;
	lp_diag_init(&d);
	unsetenv("LPIPE_MEM_BUDGET");
	ck_assert_int_eq(lp_runner_budget(&p, NULL, &b, &d), LP_OK);
	ck_assert_uint_eq(b, 3 << 20);
	setenv("LPIPE_MEM_BUDGET", "2MiB", 1);
	ck_assert_int_eq(lp_runner_budget(&p, NULL, &b, &d), LP_OK);
	ck_assert_uint_eq(b, 2 << 20);
	ck_assert_int_eq(lp_runner_budget(&p, "1MiB", &b, &d), LP_OK);
	ck_assert_uint_eq(b, 1 << 20);
	ck_assert_int_eq(lp_runner_budget(&p, "0", &b, &d), LP_OK);
	ck_assert_uint_eq(b, 0);
	ck_assert_int_eq(lp_runner_budget(&p, "lots", &b, &d), LP_E_USAGE);
	setenv("LPIPE_MEM_BUDGET", "lots", 1);
	ck_assert_int_eq(lp_runner_budget(&p, NULL, &b, &d), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(d.msg, "LPIPE_MEM_BUDGET"));
	unsetenv("LPIPE_MEM_BUDGET");
}
END_TEST

START_TEST(test_json_report)
{
	static const char *const keys[] = {
		"lpipe_version", "pipeline", "document", "stages", "chunks", "selected",
		"summary_levels", "summary", "answer", "cited", "quote", "answer_check", "abstained", "items", "result",
		"verification", "memory", "status", "exit_code", NULL
	};
	const struct lp_stage_kind *kinds[] = { &k_split, &k_pick, &k_verify };
	struct lp_pipeline *p = make_pipeline(kinds, 3);
	struct lp_run_stats st;
	struct lp_doc doc;
	struct lp_diag d;
	json_error_t err;
	json_t *r, *sel, *v;
	const char *key;
	json_t *val;
	size_t i = 0;
	char *out;

	write_doc();
	lp_diag_init(&d);
	ck_assert_int_eq(lp_runner_run(p, doc_path, NULL, NULL, &doc, &st, &d), LP_E_VERIFY);
	out = report(&doc, LP_FORMAT_JSON, &st);
	ck_assert_ptr_nonnull(strstr(out, "\n  \"pipeline\": {\n    \"path\"")); /* 2-space indent */
	r = json_loads(out, 0, &err);
	ck_assert_msg(r != NULL, "%s", err.text);
	json_object_foreach(r, key, val)
		ck_assert_str_eq(key, keys[i++]);
	ck_assert_ptr_null(keys[i]);
	ck_assert_int_eq(json_array_size(json_object_get(r, "chunks")), 3);
	sel = json_object_get(r, "selected");
	ck_assert_int_eq(json_array_size(sel), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(sel, 0), "id")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(sel, 0), "text")),
			 TEXT + 2 * (strlen(TEXT) / 3));
	v = json_object_get(r, "verification");
	ck_assert(json_is_false(json_object_get(v, "passed")));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(v, "missing"), 0)),
			 "fog signal");
	ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "verification failed");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "exit_code")), 1);
	ck_assert(json_is_null(json_object_get(r, "summary")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "document"), "bytes")),
			 (json_int_t)strlen(TEXT));
	json_decref(r);
	free(out);
	lp_doc_release(&doc);
	free_pipeline(p);
	unlink(doc_path);
}
END_TEST

/* Occurrences of `needle` in `s`. */
static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The HTML report of a hand-made doc whose every string is hostile: all of
 * it is escaped, invalid UTF-8 and controls become U+FFFD, and the links
 * of the tree reach the chunks the summaries came from. */
START_TEST(test_html_report)
{
	static const char text[] = "<b>one</b> & \"two\"\nthree\x01 </script>\nfour";
	static const char *lv0[] = { "<img src=x onerror=alert(1)>", "bad \xff\xfe utf-8" };
	static const char *lv1[] = { "top </title>" };
	static size_t first0[] = { 0, 1 }, n0[] = { 1, 1 }, first1[] = { 0 }, n1[] = { 2 };
	static size_t sel[] = { 1, 0 };
	static const char *events[] = { "shrink: <svg onload=x>" };
	struct lp_summary_level levels[2] = {
		{ .n = 2, .texts = lv0, .first_input = first0, .n_inputs = n0 },
		{ .n = 1, .texts = lv1, .first_input = first1, .n_inputs = n1 },
	};
	struct lp_chunk chunks[2] = { { 0, 19, 1.5, 1 }, { 19, sizeof(text) - 20, 2.5, 1 } };
	struct lp_keyphrase ph = { "</script>", "must", 0, 0 };
	struct lp_stage_trace tr = { .kind = "split", .note = "2 <chunks>", .events = events,
				     .n_events = 1 };
	struct lp_run_stats st = { 0 };
	struct lp_doc doc;
	char *out;

	lp_doc_init(&doc, NULL);
	doc.path = "doc<1>.txt";
	doc.text = text;
	doc.len = sizeof(text) - 1;
	doc.question = "why <q>?";
	doc.chunks = chunks;
	doc.n_chunks = 2;
	doc.selection = sel;
	doc.n_selection = 2;
	doc.levels = levels;
	doc.n_levels = 2;
	doc.summary = lv1[0];
	doc.verify = (struct lp_verify_result){ .done = 1, .phrases = &ph, .n_phrases = 1 };
	doc.trace = &tr;
	doc.n_trace = 1;
	st.peak_by_tag[LP_MEM_DOC] = doc.len;
	/* a tracked peak the test process's own resident set cannot have (it
	 * once was 3 MiB, which a small process can reach by chance) */
	st.peak_tracked_bytes = (size_t)3 << 40;
	out = report(&doc, LP_FORMAT_HTML, &st);
	ck_assert_ptr_nonnull(strstr(out, "<!DOCTYPE html>\n"));
	ck_assert_uint_eq(count_of(out, "<script"), 1);
	ck_assert_ptr_null(strstr(out, "<img"));
	ck_assert_ptr_null(strstr(out, "<svg onload"));
	ck_assert_ptr_null(strstr(out, "<b>one"));
	ck_assert_ptr_null(strstr(out, "\x01"));
	ck_assert_ptr_null(strstr(out, "\xff"));
	ck_assert_ptr_nonnull(strstr(out, "&lt;img src=x onerror=alert(1)&gt;"));
	ck_assert_ptr_nonnull(strstr(out, "bad \xef\xbf\xbd\xef\xbf\xbd utf-8"));
	ck_assert_ptr_nonnull(strstr(out, ">&lt;b&gt;one&lt;/b&gt; &amp; &quot;two&quot;\n<"));
	ck_assert_ptr_nonnull(strstr(out, ">three\xef\xbf\xbd &lt;/script&gt;\nfour<"));
	ck_assert_ptr_nonnull(strstr(out, "<title>lpipe report: lpipe</title>"));
	ck_assert_ptr_nonnull(strstr(out, "why &lt;q&gt;?"));
	ck_assert_ptr_nonnull(strstr(out, "shrink: &lt;svg onload=x&gt;"));
	ck_assert_ptr_nonnull(strstr(out, "<li class=\"lost\">&lt;/script&gt;"));
	/* level-0 input i is the i-th chunk of the selection: S0.0 is chunk 1 */
	ck_assert_ptr_nonnull(strstr(out, "<summary><b>S0.0</b>"));
	ck_assert_ptr_nonnull(strstr(strstr(out, "id=\"s-0-0\""), "chunks <a href=\"#c-1\">"));
	ck_assert_ptr_nonnull(strstr(strstr(out, "id=\"s-1-0\""),
				     "from <a href=\"#s-0-0\">S0.0</a>, <a href=\"#s-0-1\">S0.1</a>; "
				     "chunks <a href=\"#c-1\">chunk 1</a>, <a href=\"#c-0\">"));
	ck_assert_ptr_nonnull(strstr(out, "<details class=\"chunk\" id=\"c-1\"><summary><b>chunk 1"
				    "</b> <span class=\"range\">bytes 19&ndash;"));
	ck_assert_ptr_nonnull(strstr(out, "(lines 2&ndash;3,"));
	ck_assert_ptr_nonnull(strstr(out, "tracked peak 3.00 TiB, budget none, peak resident set "));
	ck_assert_ptr_null(strstr(out, "peak resident set 3.00 TiB")); /* its own figure */
	ck_assert_ptr_nonnull(strstr(out, "</html>\n"));
	free(out);
	doc.chunks = NULL;
	doc.levels = NULL;
	doc.selection = NULL;
	doc.trace = NULL;
	doc.verify.phrases = NULL;
	lp_doc_release(&doc);
}
END_TEST

START_TEST(test_nearest_command)
{
	static const char *const words[] = { "run", "check", "help", "version", NULL };

	ck_assert_str_eq(lp_cli_nearest("rn", words), "run");
	ck_assert_str_eq(lp_cli_nearest("chekc", words), "check");
	ck_assert_str_eq(lp_cli_nearest("versoin", words), "version");
	ck_assert_str_eq(lp_cli_nearest("vers", words), "version"); /* unique prefix */
	ck_assert_ptr_null(lp_cli_nearest("frobnicate", words));
	ck_assert_ptr_null(lp_cli_nearest("x", words));
	ck_assert_str_eq(lp_cli_nearest_command("hlep"), "help");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("cli");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_runner_whole_text_chunk);
	tcase_add_test(tc, test_runner_verify_goes_on_and_traces);
	tcase_add_test(tc, test_runner_reruns_on_request);
	tcase_add_test(tc, test_runner_stops_at_first_error);
	tcase_add_test(tc, test_runner_budget_names_the_stage);
	tcase_add_test(tc, test_runner_budget_precedence);
	tcase_add_test(tc, test_json_report);
	tcase_add_test(tc, test_html_report);
	tcase_add_test(tc, test_nearest_command);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
