/* check_serve.c - the parts of lpipe serve below HTTP: the document store
 * (ids, LRU, held documents), the request parser, the metrics text, and
 * the two core hooks the server stands on (the progress observer and the
 * cancel flag). The HTTP side is tested with real clients in
 * tests/cli/serve*.sh. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cancel.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/sha256.h"
#include "serve/docs.h"
#include "serve/metrics.h"
#include "serve/request.h"

START_TEST(test_docs_id_and_dedup)
{
	struct lp_serve_docs *s = lp_serve_docs_new(1000);
	char id[65], id2[65], want[65];
	struct lp_diag d;
	size_t bytes, count;
	int created;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_serve_docs_add(s, "hello world", 11, NULL, id, &created, &d), LP_OK);
	ck_assert_int_eq(created, 1);
	lp_sha256_hex("hello world", 11, want);
	ck_assert_str_eq(id, want);
	ck_assert_int_eq(lp_serve_docs_add(s, "hello world", 11, NULL, id2, &created, &d), LP_OK);
	ck_assert_int_eq(created, 0);
	ck_assert_str_eq(id, id2);
	lp_serve_docs_usage(s, &bytes, &count);
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(bytes, 11);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 11);
	ck_assert_int_eq(lp_serve_docs_add(s, "", 0, NULL, id2, &created, &d), LP_E_INPUT);
	{
		char name[LP_SERVE_DOC_NAME_MAX + 1];
		lp_serve_docs_clean_name("../../etc/my notes.md", name);
		ck_assert_str_eq(name, "mynotes.md");
		lp_serve_docs_clean_name(".hidden", name);
		ck_assert_str_eq(name, "hidden");
		lp_serve_docs_clean_name("dir/", name);
		ck_assert_str_eq(name, "");
		lp_serve_docs_clean_name(NULL, name);
		ck_assert_str_eq(name, "");
	}
	lp_serve_docs_free(s);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 0);
}
END_TEST

START_TEST(test_docs_lru_spares_held)
{
	struct lp_serve_docs *s = lp_serve_docs_new(300);
	char a[65], b[65], c[65], e[65];
	char buf[200];
	const struct lp_serve_doc *held;
	struct lp_diag d;
	size_t bytes, count;
	int created;

	lp_diag_init(&d);
	memset(buf, 'a', sizeof(buf));
	ck_assert_int_eq(lp_serve_docs_add(s, buf, 100, NULL, a, &created, &d), LP_OK);
	buf[0] = 'b';
	ck_assert_int_eq(lp_serve_docs_add(s, buf, 100, NULL, b, &created, &d), LP_OK);
	buf[0] = 'c';
	ck_assert_int_eq(lp_serve_docs_add(s, buf, 100, NULL, c, &created, &d), LP_OK);
	/* a is held and was used last: b is the one to go */
	held = lp_serve_docs_get(s, a);
	ck_assert_ptr_nonnull(held);
	ck_assert_uint_eq(held->len, 100);
	buf[0] = 'e';
	ck_assert_int_eq(lp_serve_docs_add(s, buf, 100, NULL, e, &created, &d), LP_OK);
	ck_assert_ptr_null(lp_serve_docs_get(s, b));
	lp_serve_docs_usage(s, &bytes, &count);
	ck_assert_uint_eq(count, 3);
	ck_assert_uint_le(bytes, 300);
	/* 200 more bytes fit once every unheld document is dropped */
	ck_assert_int_eq(lp_serve_docs_add(s, buf, 200, NULL, e, &created, &d), LP_OK);
	lp_serve_docs_usage(s, &bytes, &count);
	ck_assert_uint_eq(count, 2);
	ck_assert_ptr_nonnull(lp_serve_docs_get(s, a)); /* a second hold */
	/* larger than the cap: refused, naming the cache */
	lp_diag_init(&d);
	{
		char big[400];
		memset(big, 'z', sizeof(big));
		ck_assert_int_eq(lp_serve_docs_add(s, big, sizeof(big), NULL, e, &created, &d),
				 LP_E_NOMEM);
		ck_assert_ptr_nonnull(strstr(d.msg, "document cache"));
	}
	lp_serve_docs_put(s, held);
	lp_serve_docs_put(s, held);
	lp_serve_docs_free(s);
}
END_TEST

START_TEST(test_request_json_and_form)
{
	struct lp_serve_run_req r;
	struct lp_diag d;
	char body[512], id[65];

	memset(id, 'a', 64);
	id[64] = 0;
	lp_diag_init(&d);
	snprintf(body, sizeof(body),
		 "{\"pipeline\":\"qa\",\"document\":\"%s\",\"question\":\"why?\","
		 "\"set\":{\"stages.retrieve.top_k\":3,\"stages.answer.temperature\":0.5}}", id);
	ck_assert_int_eq(lp_serve_parse_run(body, strlen(body), 0, &r, &d), LP_OK);
	ck_assert_str_eq(r.pipeline, "qa");
	ck_assert_str_eq(r.question, "why?");
	ck_assert_uint_eq(r.n_sets, 2);
	ck_assert_str_eq(r.sets[0], "stages.retrieve.top_k=3");
	ck_assert_str_eq(r.sets[1], "stages.answer.temperature=0.5");
	lp_serve_run_req_release(&r);
	snprintf(body, sizeof(body),
		 "pipeline=qa&document=%s&question=how+now%%3F&set=stages.split.size%%3D128", id);
	ck_assert_int_eq(lp_serve_parse_run(body, strlen(body), 1, &r, &d), LP_OK);
	ck_assert_str_eq(r.question, "how now?");
	ck_assert_str_eq(r.sets[0], "stages.split.size=128");
	lp_serve_run_req_release(&r);
	/* a NUL smuggled into a field, a truncated escape, a path */
	snprintf(body, sizeof(body), "pipeline=q%%00a&document=%s", id);
	ck_assert_int_eq(lp_serve_parse_run(body, strlen(body), 1, &r, &d), LP_E_USAGE);
	ck_assert_int_eq(lp_serve_parse_run("pipeline=qa%2", 13, 1, &r, &d), LP_E_USAGE);
	ck_assert_int_eq(lp_serve_parse_run("{\"pipeline\":\"a/b\"}", 18, 0, &r, &d), LP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(d.msg, "bare name"));
	/* the body need not end in a NUL: only len bytes are read */
	ck_assert_int_eq(lp_serve_parse_run("{\"pipeline\":\"qa\"}XXXX", 17, 0, &r, &d),
			 LP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(d.msg, "exactly one of document"));
}
END_TEST

START_TEST(test_request_allow_list)
{
	ck_assert(lp_serve_set_key_ok("stages.split.size"));
	ck_assert(lp_serve_set_key_ok("stages.retrieve.top_k"));
	ck_assert(!lp_serve_set_key_ok("model.path"));
	ck_assert(!lp_serve_set_key_ok("memory.budget"));
	ck_assert(!lp_serve_set_key_ok("stages.generate.prompt_file"));
	ck_assert(!lp_serve_set_key_ok("stages.0.size"));
	ck_assert(!lp_serve_set_key_ok("stages.split.size.x"));
	ck_assert(!lp_serve_set_key_ok("output.format"));
	ck_assert(lp_serve_set_value_ok("0.5"));
	ck_assert(!lp_serve_set_value_ok("${HOME}"));
	ck_assert(!lp_serve_set_value_ok("{path: /x}"));
	ck_assert(!lp_serve_set_value_ok(""));
	ck_assert(lp_serve_name_ok("extractive-summary"));
	ck_assert(!lp_serve_name_ok("qa.yaml"));
	ck_assert(!lp_serve_name_ok(".."));
	ck_assert(!lp_serve_name_ok(""));
}
END_TEST

START_TEST(test_metrics_text)
{
	struct lp_serve_gauges g = { .queued = 2, .running = 1, .queue_cap = 8, .jobs = 3 };
	struct lp_buf b;

	lp_serve_metrics_init();
	lp_serve_metrics_reject(LP_REJ_QUEUE_FULL);
	lp_serve_metrics_reject(LP_REJ_QUEUE_FULL);
	lp_serve_metrics_wait(0.07);
	lp_serve_metrics_wait(7);
	lp_serve_metrics_end("done", 0.3);
	lp_serve_metrics_status(429);
	lp_buf_init(&b);
	ck_assert_int_eq(lp_serve_metrics_write(&g, &b), LP_OK);
	ck_assert_ptr_nonnull(strstr(b.data, "lpipe_serve_queue_depth 2\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "lpipe_serve_rejections_total{cause=\"queue_full\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "lpipe_serve_responses_total{code=\"429\"} 1\n"));
	/* cumulative buckets */
	ck_assert_ptr_nonnull(strstr(b.data, "lpipe_serve_queue_wait_seconds_bucket{le=\"0.05\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "lpipe_serve_queue_wait_seconds_bucket{le=\"0.1\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "lpipe_serve_queue_wait_seconds_bucket{le=\"10\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "lpipe_serve_queue_wait_seconds_count 2\n"));
	ck_assert_ptr_nonnull(strstr(b.data,
		"lpipe_serve_run_seconds_bucket{state=\"done\",le=\"0.25\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(b.data,
		"lpipe_serve_run_seconds_bucket{state=\"done\",le=\"0.5\"} 1\n"));
	lp_buf_release(&b);
}
END_TEST

struct seen {
	int calls, ended;
	size_t done, tokens;
	char stage[64];
};

static void observe(void *ctx, const struct lp_progress *p, int ended, const char *stage,
		    size_t tokens)
{
	struct seen *s = ctx;

	s->calls++;
	s->ended += ended;
	if (p)
		s->done = p->done;
	s->tokens = tokens;
	snprintf(s->stage, sizeof(s->stage), "%s", stage);
}

START_TEST(test_progress_observer_and_cancel)
{
	struct lp_progress p;
	struct seen s = { 0 };
	atomic_int flag = 0;
	size_t t0 = lp_progress_tokens();

	lp_progress_enable(0); /* observed even when nothing is shown */
	lp_progress_observe(observe, &s);
	lp_progress_set_stage("1/2 split");
	lp_progress_begin(&p, "split", "chunks", 10);
	lp_progress_update(&p, 4);
	ck_assert_uint_eq(s.done, 4);
	lp_progress_add_tokens(5);
	ck_assert_uint_eq(s.tokens, t0 + 5);
	lp_progress_end(&p);
	ck_assert_int_eq(s.ended, 1);
	ck_assert_str_eq(s.stage, "1/2 split");
	ck_assert_int_eq(s.calls, 4);
	lp_progress_observe(NULL, NULL);
	lp_progress_update(&p, 5);
	ck_assert_int_eq(s.calls, 4);
	lp_progress_set_stage(NULL);

	ck_assert_int_eq(lp_cancel_requested(), 0);
	lp_cancel_watch(&flag);
	ck_assert_int_eq(lp_cancel_requested(), 0);
	atomic_store(&flag, 1);
	ck_assert_int_eq(lp_cancel_requested(), 1);
	lp_cancel_watch(NULL);
	ck_assert_int_eq(lp_cancel_requested(), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("serve");
	TCase *tc = tcase_create("serve");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_docs_id_and_dedup);
	tcase_add_test(tc, test_docs_lru_spares_held);
	tcase_add_test(tc, test_request_json_and_form);
	tcase_add_test(tc, test_request_allow_list);
	tcase_add_test(tc, test_metrics_text);
	tcase_add_test(tc, test_progress_observer_and_cancel);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
