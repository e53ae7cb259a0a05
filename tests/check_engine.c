/* check_engine.c - the engine that outlives documents (sessions kept and
 * shared by key, freed when idle or when the budget needs room), memory
 * scopes (each document's peaks apart from its neighbours'), SHA-256, and
 * the shard function of lpipe batch; an engine freed while a session is
 * still held. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/runner.h"
#include "core/mem.h"
#include "core/sha256.h"
#include "engine/engine.h"
#include "cli/shard.h"
#include "model/session.h"
#include "tools/chat_model.h"

static char model_path[256];

static void write_model(void)
{
	snprintf(model_path, sizeof(model_path), "/tmp/lpipe-engine-%ld.gguf", (long)getpid());
	ck_assert_int_eq(chat_model_write(model_path, 7), 0);
}

static struct lp_session_params params(uint32_t n_ctx)
{
	struct lp_session_params p = lp_session_default_params();

	p.path = model_path;
	p.n_ctx = n_ctx;
	p.n_threads = 1;
	return p;
}

static struct lp_session *acquire(struct lp_engine *e, uint32_t n_ctx, int want_opened)
{
	struct lp_session_params p = params(n_ctx);
	struct lp_session *s;
	struct lp_diag d;
	int opened;

	lp_diag_init(&d);
	ck_assert_msg(lp_engine_session(e, &p, &s, &opened, &d) == LP_OK, "%s", d.msg);
	ck_assert_int_eq(opened, want_opened);
	return s;
}

/* Put the test's thread on e's memory account, holding a reference so
 * that it outlives the engine: what the test reads of lp_mem_* are then
 * the engine's figures and what it sets is the engine's budget. */
static void watch(struct lp_engine *e)
{
	lp_mem_account_ref(lp_engine_account(e));
	lp_mem_account_use(lp_engine_account(e));
}

/* A new engine that keeps idle sessions, over a freshly written model,
 * watched. */
static struct lp_engine *keeping_engine(void)
{
	struct lp_engine_params ep = lp_engine_default_params();
	struct lp_engine *e;
	struct lp_diag d;

	write_model();
	ep.keep_idle = 1;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_engine_new(&ep, &e, &d), LP_OK);
	watch(e);
	return e;
}

START_TEST(test_sessions_shared_by_key)
{
	struct lp_engine *e;
	struct lp_session *a, *b, *c;

	e = keeping_engine();
	a = acquire(e, 512, 1);
	b = acquire(e, 512, 0);  /* same key: the same session */
	ck_assert_ptr_eq(a, b);
	c = acquire(e, 1024, 1); /* another context: another session */
	ck_assert_ptr_ne(a, c);
	ck_assert_uint_eq(lp_engine_n_sessions(e), 2);
	lp_engine_session_release(e, a);
	lp_engine_session_release(e, b);
	lp_engine_session_release(e, c);
	/* kept while idle: the next document opens nothing */
	ck_assert_uint_eq(lp_engine_n_sessions(e), 2);
	a = acquire(e, 512, 0);
	lp_engine_session_release(e, a);
	ck_assert_uint_eq(lp_engine_n_opened(e), 2);
	lp_engine_free(e);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	unlink(model_path);
}
END_TEST

/* Remote sessions are keyed by their server too: two pipelines that
 * differ only in the url, the served model or the concurrency never share
 * one, and none is taken for a local session on the same file. */
START_TEST(test_remote_sessions_keyed_by_server)
{
	struct lp_openai_params o1 = lp_openai_default_params(), o2, o3;
	struct lp_session_params p = params(512);
	struct lp_session *a, *b, *c, *l, *a2;
	struct lp_engine *e;
	struct lp_diag d;
	char url[64];
	int opened;

	e = keeping_engine();
	o1.url = "http://127.0.0.1:9/v1";
	o1.model = "m";
	o2 = o1;
	o2.url = "http://127.0.0.1:10/v1";
	o3 = o1;
	o3.concurrency = 2;
	p.openai = &o1;
	ck_assert_msg(lp_engine_session(e, &p, &a, &opened, &d) == LP_OK, "%s", d.msg);
	p.openai = &o2;
	ck_assert_int_eq(lp_engine_session(e, &p, &b, &opened, &d), LP_OK);
	ck_assert_int_eq(opened, 1);
	p.openai = &o3;
	ck_assert_int_eq(lp_engine_session(e, &p, &c, &opened, &d), LP_OK);
	ck_assert_int_eq(opened, 1);
	l = acquire(e, 512, 1); /* local, same file and context */
	ck_assert(a != b && a != c && b != c && l != a);
	/* an equal server in another buffer is the same key (copied, not
	 * pointed to) */
	snprintf(url, sizeof(url), "%s", o1.url);
	o2 = o1;
	o2.url = url;
	p.openai = &o2;
	ck_assert_int_eq(lp_engine_session(e, &p, &a2, &opened, &d), LP_OK);
	ck_assert_int_eq(opened, 0);
	ck_assert_ptr_eq(a, a2);
	lp_engine_session_release(e, a);
	lp_engine_session_release(e, a2);
	lp_engine_session_release(e, b);
	lp_engine_session_release(e, c);
	lp_engine_session_release(e, l);
	ck_assert_uint_eq(lp_engine_n_sessions(e), 4);
	lp_engine_free(e);
	unlink(model_path);
}
END_TEST

/* A finished run gives its model back: a document kept for its report
 * holds no session, and with an engine that keeps nothing the model is
 * freed before the report is written. */
START_TEST(test_run_gives_model_back)
{
	static const char text[] =
		"The shell reads commands from a file. It expands words, then runs them. "
		"Each command returns an exit status. A status of zero means success.\n";
	char yaml[512];
	struct lp_engine_params ep = lp_engine_default_params();
	struct lp_pipeline *p = NULL;
	struct lp_run_stats stats;
	struct lp_engine *e;
	struct lp_doc doc;
	struct lp_diag d;
	enum lp_status st;

	write_model();
	snprintf(yaml, sizeof(yaml),
		 "version: 1\n"
		 "model: {path: \"%s\", context: 512}\n"
		 "stages:\n"
		 "  - split: {unit: tokens, size: 32, overlap: 0, boundary: sentence}\n"
		 "  - summarize: {strategy: tree, fanout: 4, max_tokens: 8, final: join}\n",
		 model_path);
	lp_diag_init(&d);
	ck_assert_msg(lp_pipeline_load_text("t.yaml", yaml, strlen(yaml), NULL, NULL, 0, &p, &d) ==
			      LP_OK, "%s", d.msg);
	ck_assert_int_eq(lp_engine_new(&ep, &e, &d), LP_OK);
	watch(e);
	st = lp_runner_run_bytes(p, "doc", text, strlen(text), NULL, e, &doc, &stats, &d);
	ck_assert_msg(st == LP_OK, "%s", d.msg);
	ck_assert_ptr_nonnull(doc.summary);
	ck_assert_uint_eq(lp_engine_n_opened(e), 1);
	ck_assert_ptr_null(doc.session);
	ck_assert_uint_eq(lp_engine_n_sessions(e), 0);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), 0);
	/* the report still says what the run held at its end */
	ck_assert_uint_gt(stats.current_by_tag[LP_MEM_WEIGHTS], 0);
	lp_doc_release(&doc);
	lp_engine_free(e);
	lp_pipeline_free(p);
	unlink(model_path);
}
END_TEST

START_TEST(test_batch_of_one_frees_at_release)
{
	struct lp_engine *e;
	struct lp_session *a;
	struct lp_diag d;

	write_model();
	lp_diag_init(&d);
	ck_assert_int_eq(lp_engine_new(NULL, &e, &d), LP_OK);
	watch(e);
	a = acquire(e, 512, 1);
	ck_assert_uint_gt(lp_mem_current_total(), 0);
	lp_engine_session_release(e, a);
	ck_assert_uint_eq(lp_engine_n_sessions(e), 0);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	lp_engine_free(e);
	unlink(model_path);
}
END_TEST

/* An engine freed while a document still holds a session (a library
 * result kept after its engine): the idle session goes at once, the held
 * one still works and goes with its release, and the engine with it. */
START_TEST(test_free_while_held)
{
	struct lp_engine *e;
	struct lp_session *held, *idle;
	size_t both, one;

	e = keeping_engine();
	held = acquire(e, 512, 1);
	idle = acquire(e, 1024, 1);
	lp_engine_session_release(e, idle);
	both = lp_mem_current_total();
	lp_engine_free(e);
	one = lp_mem_current_total();
	ck_assert_uint_gt(one, 0);
	ck_assert_uint_lt(one, both);
	ck_assert_uint_eq(lp_session_count_tokens(held, "xyz", 3), 3);
	lp_engine_session_release(e, held);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	unlink(model_path);
}
END_TEST

/* A budget that holds one session: a second model's session unloads the
 * idle first one instead of shrinking its own context. */
START_TEST(test_budget_unloads_idle)
{
	struct lp_engine *e;
	struct lp_session *a, *b;
	struct lp_session_params p;
	struct lp_diag d;
	size_t one;

	e = keeping_engine();
	a = acquire(e, 1024, 1);
	one = lp_mem_current_total();
	lp_engine_session_release(e, a);
	lp_mem_set_budget(one + one / 2);
	p = params(1024);
	p.shrink = 1;
	p.sampler.repeat_last_n = 32; /* another key, the same size */
	ck_assert_msg(lp_engine_session(e, &p, &b, &(int){ 0 }, &d) == LP_OK, "%s", d.msg);
	ck_assert_uint_eq(lp_session_n_ctx(b), 1024); /* not shrunk */
	ck_assert_uint_eq(lp_engine_n_sessions(e), 1);
	/* a held session is never unloaded: the first one now shrinks, or
	 * does not fit at all, and the held one is still there and works */
	p = params(1024);
	p.shrink = 1;
	lp_diag_init(&d);
	if (lp_engine_session(e, &p, &a, &(int){ 0 }, &d) == LP_OK) {
		ck_assert_uint_lt(lp_session_n_ctx(a), 1024);
		lp_engine_session_release(e, a);
	} else {
		ck_assert_int_eq(d.status, LP_E_NOMEM);
	}
	ck_assert_uint_eq(lp_session_count_tokens(b, "xyz", 3), 3);
	lp_engine_session_release(e, b);
	lp_engine_free(e);
	lp_mem_set_budget(0);
	unlink(model_path);
}
END_TEST

/* ---- memory scopes ------------------------------------------------- */

struct scoped {
	size_t bytes, peak, own;
	pthread_barrier_t *bar;
};

static void *scoped_doc(void *arg)
{
	struct scoped *s = arg;
	uint32_t h = lp_mem_scope_begin();
	void *p;

	ck_assert_uint_ne(h, 0);
	p = lp_mem_alloc(LP_MEM_SCRATCH, s->bytes, NULL);
	pthread_barrier_wait(s->bar); /* both hold their block */
	s->own = lp_mem_scope_own_total();
	s->peak = lp_mem_scope_peak(LP_MEM_SCRATCH);
	pthread_barrier_wait(s->bar);
	lp_mem_free(p);
	lp_mem_scope_end(h);
	return NULL;
}

START_TEST(test_scopes_apart)
{
	pthread_barrier_t bar;
	struct scoped a = { 1 << 20, 0, 0, &bar }, b = { 3 << 20, 0, 0, &bar };
	pthread_t ta, tb;
	void *shared = lp_mem_alloc(LP_MEM_WEIGHTS, 5 << 20, NULL); /* no scope */

	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&ta, NULL, scoped_doc, &a);
	pthread_create(&tb, NULL, scoped_doc, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_barrier_destroy(&bar);
	/* each sees its own scratch, never the other's */
	ck_assert_uint_eq(a.own, 1 << 20);
	ck_assert_uint_eq(b.own, 3 << 20);
	ck_assert_uint_eq(a.peak, 1 << 20);
	ck_assert_uint_eq(b.peak, 3 << 20);
	lp_mem_free(shared);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

START_TEST(test_scope_sees_shared)
{
	uint32_t h = lp_mem_scope_begin(), was;
	void *own = lp_mem_alloc(LP_MEM_SCRATCH, 1000, NULL), *kept;

	/* what an engine loads under no scope counts in the view, not as own */
	was = lp_mem_scope_swap(0);
	kept = lp_mem_alloc(LP_MEM_WEIGHTS, 4000, NULL);
	lp_mem_scope_swap(was);
	ck_assert_uint_eq(lp_mem_scope_own_total(), 1000);
	ck_assert_uint_eq(lp_mem_scope_peak_total(), 5000);
	ck_assert_uint_eq(lp_mem_scope_peak(LP_MEM_WEIGHTS), 4000);
	lp_mem_free(own);
	lp_mem_scope_reset_peaks();
	ck_assert_uint_eq(lp_mem_scope_peak_total(), 4000);
	lp_mem_scope_end(h);
	/* a block that outlives its scope is freed as shared memory */
	h = lp_mem_scope_begin();
	own = lp_mem_alloc(LP_MEM_SCRATCH, 300, NULL);
	lp_mem_scope_end(h);
	h = lp_mem_scope_begin();
	ck_assert_uint_eq(lp_mem_scope_own_total(), 0);
	ck_assert_uint_eq(lp_mem_scope_peak_total(), 4300);
	lp_mem_free(own);
	lp_mem_free(kept);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	lp_mem_scope_end(h);
	/* without a scope the process values */
	ck_assert_uint_eq(lp_mem_scope_peak_total(), lp_mem_peak_total());
}
END_TEST

/* ---- SHA-256 and shards --------------------------------------------- */

static enum lp_status build_two(void *ctx, void **out, struct lp_diag *d)
{
	struct lp_bm25_params bp = lp_bm25_default_params();
	struct lp_bm25 *ix = lp_bm25_new(&bp, d);

	(void)ctx;
	*out = ix;
	if (!ix || lp_bm25_add(ix, "the lighthouse keeper", 21, d))
		return LP_E_NOMEM;
	return lp_bm25_add(ix, "a ship at sea", 13, d);
}

/* The store keeps a document and an index as shared memory, gives the
 * same ones again, never drops what is held, and drops the least
 * recently used first. */
START_TEST(test_docstore_keeps_and_drops)
{
	static const char text[] = "A lighthouse. A ship.\n";
	struct lp_docstore *s = lp_docstore_new();
	const struct lp_document *a, *b;
	const void *ix, *iy;
	struct lp_docstore_stats st;
	struct lp_diag d;
	uint32_t scope = lp_mem_scope_begin();
	size_t total0 = lp_mem_current_total();

	lp_diag_init(&d);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(lp_docstore_document(s, "k", "a.txt", text, sizeof(text) - 1,
					      LP_UTF8_ERROR, LP_DOC_FORMAT_AUTO, &a, &d), LP_OK);
	ck_assert_int_eq(lp_docstore_document(s, "k", "a.txt", text, sizeof(text) - 1,
					      LP_UTF8_ERROR, LP_DOC_FORMAT_AUTO, &b, &d), LP_OK);
	ck_assert_ptr_eq(a, b);
	ck_assert_int_eq((int)a->len, (int)sizeof(text) - 1);
	ck_assert_int_eq(lp_docstore_index(s, "k|bm25", LP_DOCSTORE_BM25, build_two, NULL, &ix, &d),
			 LP_OK);
	ck_assert_int_eq(lp_docstore_index(s, "k|bm25", LP_DOCSTORE_BM25, build_two, NULL, &iy, &d),
			 LP_OK);
	ck_assert_ptr_eq(ix, iy);
	ck_assert_int_eq((int)lp_bm25_n_spans(ix), 2);
	lp_docstore_stats(s, &st);
	ck_assert_int_eq((int)st.entries, 2);
	ck_assert_int_eq((int)st.hits, 2);
	ck_assert_int_eq((int)st.misses, 2);
	ck_assert_uint_gt(st.bytes, 0);
	/* none of it is the caller's own: it outlives the caller's run */
	ck_assert_uint_eq(lp_mem_scope_own_total(), 0);
	ck_assert_uint_eq(lp_mem_current_total() - total0, st.bytes);
	ck_assert_uint_eq(lp_docstore_drop(s, (size_t)-1), 0); /* all held */
	lp_docstore_put(s, a);
	lp_docstore_put(s, b);
	lp_docstore_put(s, ix);
	ck_assert_uint_gt(lp_docstore_drop(s, 1), 0); /* the document, used first */
	lp_docstore_stats(s, &st);
	ck_assert_int_eq((int)st.entries, 1);
	lp_docstore_free(s);              /* held: the store waits for the put */
	lp_docstore_put(s, iy);
	ck_assert_uint_eq(lp_mem_current_total(), total0);
	lp_mem_scope_end(scope);
}
END_TEST

START_TEST(test_sha256_vectors)
{
	char hex[65], big[1000];
	struct lp_sha256 c;
	unsigned char dg[32];

	lp_sha256_hex("", 0, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	lp_sha256_hex("abc", 3, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	lp_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* a million 'a' in uneven pieces: every path through update */
	memset(big, 'a', sizeof(big));
	lp_sha256_init(&c);
	for (size_t done = 0, k = 1; done < 1000000; k = k % 997 + 1) {
		size_t n = 1000000 - done < k ? 1000000 - done : k;
		lp_sha256_update(&c, big, n);
		done += n;
	}
	lp_sha256_final(&c, dg);
	lp_sha256_to_hex(dg, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(test_shards_partition)
{
	char key[64];
	unsigned long hits[8];

	for (unsigned long n = 1; n <= 7; n++) {
		memset(hits, 0, sizeof(hits));
		for (int i = 0; i < 500; i++) {
			struct lp_shard s = { 0, n };
			int owners = 0;
			snprintf(key, sizeof(key), "dir%d/doc-%d.txt", i % 7, i);
			for (s.index = 0; s.index < n; s.index++)
				owners += lp_shard_mine(&s, key);
			ck_assert_int_eq(owners, 1);
			hits[lp_shard_of(key, n)]++;
		}
		/* no shard left empty by the hash on 500 keys */
		for (unsigned long i = 0; i < n; i++)
			ck_assert_uint_gt(hits[i], 0);
	}
	/* stable: the same key, the same shard, on every machine */
	ck_assert_uint_eq(lp_shard_of("a/b.txt", 4), lp_shard_of("a/b.txt", 4));
	ck_assert_uint_eq(lp_shard_of("anything", 1), 0);
}
END_TEST

START_TEST(test_shard_parse_and_slurm)
{
	struct lp_shard s;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_shard_parse("2/5", &s, &d), LP_OK);
	ck_assert_uint_eq(s.index, 2);
	ck_assert_uint_eq(s.count, 5);
	ck_assert_int_eq(lp_shard_parse("5/5", &s, &d), LP_E_USAGE);
	ck_assert_int_eq(lp_shard_parse("1/0", &s, &d), LP_E_USAGE);
	ck_assert_int_eq(lp_shard_parse("-1/4", &s, &d), LP_E_USAGE);
	ck_assert_int_eq(lp_shard_parse("x", &s, &d), LP_E_USAGE);
	unsetenv("SLURM_ARRAY_TASK_ID");
	ck_assert_int_eq(lp_shard_from_slurm(&s, &d), 0);
	setenv("SLURM_ARRAY_TASK_ID", "7", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "5", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
	ck_assert_int_eq(lp_shard_from_slurm(&s, &d), 1);
	ck_assert_uint_eq(s.index, 2);
	ck_assert_uint_eq(s.count, 4);
	setenv("SLURM_ARRAY_TASK_ID", "9", 1); /* past the array */
	ck_assert_int_eq(lp_shard_from_slurm(&s, &d), -1);
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	setenv("SLURM_ARRAY_TASK_MAX", "13", 1);
	setenv("SLURM_ARRAY_TASK_STEP", "4", 1); /* 5-13:4: tasks 5, 9, 13 */
	ck_assert_int_eq(lp_shard_from_slurm(&s, &d), 1);
	ck_assert_uint_eq(s.index, 1);
	ck_assert_uint_eq(s.count, 3);
	unsetenv("SLURM_ARRAY_TASK_ID");
	unsetenv("SLURM_ARRAY_TASK_MIN");
	unsetenv("SLURM_ARRAY_TASK_MAX");
	unsetenv("SLURM_ARRAY_TASK_STEP");
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *t = tcase_create("engine");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_sessions_shared_by_key);
	tcase_add_test(t, test_remote_sessions_keyed_by_server);
	tcase_add_test(t, test_run_gives_model_back);
	tcase_add_test(t, test_batch_of_one_frees_at_release);
	tcase_add_test(t, test_budget_unloads_idle);
	tcase_add_test(t, test_free_while_held);
	tcase_add_test(t, test_scopes_apart);
	tcase_add_test(t, test_scope_sees_shared);
	tcase_add_test(t, test_docstore_keeps_and_drops);
	tcase_add_test(t, test_sha256_vectors);
	tcase_add_test(t, test_shards_partition);
	tcase_add_test(t, test_shard_parse_and_slurm);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(engine_suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
