/* check_api_threads.c - the public library (lpipe.h) from several threads
 * at once, through its exported functions only: one pipeline and one
 * engine shared by every thread, each run with its own result equal to the
 * single-threaded run's on the same document; a failing run leaves its
 * message to its own thread; results outlive their pipeline and engine;
 * two engines run side by side each under its own memory budget.
 *
 * The model stage runs on the tiny random model that
 * tests/tools/gen_chat_model writes (under $top_builddir, "." outside
 * make check): its text is junk, but greedy and the same for a document
 * whichever thread runs it. */
#include <check.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/lpipe.h"

extern char **environ;

#define N_THREADS 6
#define N_DOCS 4
#define ROUNDS 3 /* runs per thread */

/* The model summarizes (map-reduce, short summaries joined at the top). */
static const char model_yaml[] =
	"version: 1\n"
	"name: threads-model\n"
	"model: {path: \"${model}\", context: 512}\n"
	"stages:\n"
	"  - split: {unit: tokens, size: 96, overlap: 0, boundary: sentence}\n"
	"  - summarize: {strategy: tree, fanout: 4, max_tokens: 12, final: join,\n"
	"                final_tokens: 200}\n"
	"  - verify: {keyphrases: {auto: 4}, min_survival: 0, on_fail: fail}\n";

/* Retrieval by the hashed embedder, then extractive: no model. */
#define EXTRACTIVE_STAGES \
	"retrieval: {scorer: hash}\n" \
	"stages:\n" \
	"  - split: {unit: tokens, size: 48, overlap: 0, boundary: sentence}\n" \
	"  - retrieve: {query: \"${question}\", top_k: 4, order: document}\n" \
	"  - summarize: {strategy: extractive, fanout: 4, max_words: 30}\n" \
	"  - verify: {keyphrases: {auto: 4}, min_survival: 0, min_words: 5, on_fail: fail}\n"

static const char extractive_yaml[] =
	"version: 1\n"
	"name: threads-extractive\n" EXTRACTIVE_STAGES;

static const char *const sentences[] = {
	"The lighthouse keeper climbs the stairs before dusk every evening.",
	"Whale oil burned in the lamps until kerosene replaced it.",
	"A fog bell rang every fifteen seconds when the light could not be seen.",
	"Ships counted the flashes to tell one lighthouse from the next.",
	"The lens of the tower was ground in Paris and shipped in crates.",
	"Storms in November broke the windows of the lantern room twice.",
	"The keeper wrote the weather and every passing ship in a log book.",
	"Supplies came by boat once a month when the sea allowed it.",
};
#define N_SENTENCES (sizeof(sentences) / sizeof(sentences[0]))

static char workdir[64];
static char model_path[128];
static char doc_path[N_DOCS][128];
static char *doc_text[N_DOCS];

/* What the single-threaded run gave for document k. */
struct ref {
	char *text, *json, *report; /* the product, masked JSON, text report */
	int code, passed;
};

/* ---- setup ------------------------------------------------------------- */

/* Document k: the sentences from k on, twice round, so every document
 * differs and has several chunks. */
static char *make_doc(int k)
{
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < 2 * N_SENTENCES - (size_t)k; i++) {
		len += (size_t)snprintf(s + len, cap - len, "%s ",
					sentences[(i + (size_t)k) % N_SENTENCES]);
		ck_assert_uint_lt(len, cap);
	}
	s[len - 1] = '\n';
	return s;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

/* The tiny model, written by tests/tools/gen_chat_model. */
static void write_model(void)
{
	const char *top = getenv("top_builddir");
	char tool[512];
	char *argv[] = { tool, model_path, NULL };
	pid_t pid;
	int status;

	snprintf(tool, sizeof(tool), "%s/tests/tools/gen_chat_model", top && *top ? top : ".");
	ck_assert_msg(posix_spawn(&pid, tool, NULL, NULL, argv, environ) == 0,
		      "cannot run %s", tool);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed", tool);
}

static void setup(void)
{
	snprintf(workdir, sizeof(workdir), "/tmp/lpipe-api-threads.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(workdir));
	snprintf(model_path, sizeof(model_path), "%s/tiny.gguf", workdir);
	write_model();
	for (int k = 0; k < N_DOCS; k++) {
		doc_text[k] = make_doc(k);
		snprintf(doc_path[k], sizeof(doc_path[k]), "%s/doc%d.txt", workdir, k);
		write_file(doc_path[k], doc_text[k]);
	}
}

static void teardown(void)
{
	for (int k = 0; k < N_DOCS; k++) {
		unlink(doc_path[k]);
		free(doc_text[k]);
		doc_text[k] = NULL;
	}
	unlink(model_path);
	rmdir(workdir);
}

static lpipe_pipeline *load(const char *yaml)
{
	lpipe_pipeline *p = lpipe_pipeline_new();

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(lpipe_pipeline_set_var(p, "model", model_path), LPIPE_OK);
	ck_assert_int_eq(lpipe_pipeline_set_var(p, "question", "what did the keeper write?"),
			 LPIPE_OK);
	ck_assert_msg(lpipe_pipeline_load_string(p, NULL, yaml, strlen(yaml)) == LPIPE_OK, "%s",
		      lpipe_errmsg());
	return p;
}

/* ---- comparing results ------------------------------------------------- */

/* The JSON report without what no two runs share: the seconds of each
 * stage, and the memory figures. A run's peaks count what the process
 * holds besides the run's own (the model, the results other threads keep,
 * and, as a run of the library opens no memory scope, their runs' scratch
 * too), and "current" is read when the report is made. Every such number
 * becomes "#". Returns a new string. */
static char *mask_json(const char *json)
{
	static const char *const keys[] = {
		"\"seconds\": ", "\"peak_tracked_bytes\": ", "\"peak_rss_bytes\": ",
		"\"current\": ", "\"peak\": ",
	};
	size_t n = strlen(json), len = 0;
	char *out = malloc(n + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t k;

		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strncmp(json + i, keys[k], strlen(keys[k])))
				break;
		if (k == sizeof(keys) / sizeof(keys[0])) {
			out[len++] = json[i++];
			continue;
		}
		memcpy(out + len, keys[k], strlen(keys[k]));
		len += strlen(keys[k]);
		i += strlen(keys[k]);
		out[len++] = '#';
		i += strspn(json + i, "0123456789.eE+-");
	}
	out[len] = '\0';
	return out;
}

static void ref_make(struct ref *ref, lpipe_result *r, int code)
{
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_nonnull(lpipe_result_text(r));
	ck_assert_ptr_nonnull(lpipe_result_json(r));
	ck_assert_ptr_nonnull(lpipe_result_report(r, "text"));
	ref->text = strdup(lpipe_result_text(r));
	ref->json = mask_json(lpipe_result_json(r));
	ref->report = strdup(lpipe_result_report(r, "text"));
	ck_assert(ref->text && ref->json && ref->report);
	ref->code = code;
	ref->passed = lpipe_result_passed(r);
}

/* The single-threaded runs of every document, on file. */
static void refs_make(lpipe_pipeline *p, lpipe_engine *e, struct ref *refs)
{
	for (int k = 0; k < N_DOCS; k++) {
		lpipe_result *r;
		int code = lpipe_run_file(p, e, doc_path[k], &r);

		ck_assert_msg(code == LPIPE_OK || code == LPIPE_VERIFY, "doc%d: %s", k,
			      lpipe_errmsg());
		ref_make(&refs[k], r, code);
		ck_assert_uint_gt(strlen(refs[k].text), 0);
		lpipe_result_free(r);
	}
	/* the documents give different results, so a result handed to the
	 * wrong run cannot pass for its own */
	for (int k = 1; k < N_DOCS; k++)
		ck_assert_str_ne(refs[0].json, refs[k].json);
}

static void refs_free(struct ref *refs)
{
	for (int k = 0; k < N_DOCS; k++) {
		free(refs[k].text);
		free(refs[k].json);
		free(refs[k].report);
	}
}

/* NULL when `r` (from a run that returned `code`) is refs[k]'s equal,
 * else what differs, as a static string. */
static const char *differs(lpipe_result *r, int code, const struct ref *ref)
{
	const char *text, *json, *report;
	char *masked;
	int same;

	if (code != ref->code || lpipe_result_code(r) != ref->code)
		return "return code";
	if (lpipe_result_passed(r) != ref->passed)
		return "verification";
	if (!(text = lpipe_result_text(r)) || strcmp(text, ref->text))
		return "text";
	if (!(report = lpipe_result_report(r, "text")) || strcmp(report, ref->report))
		return "text report";
	if (!(json = lpipe_result_json(r)) || !(masked = mask_json(json)))
		return "no JSON";
	same = !strcmp(masked, ref->json);
	free(masked);
	return same ? NULL : "JSON";
}

/* ---- threads ----------------------------------------------------------- */

struct worker {
	int id;
	lpipe_pipeline *p;
	lpipe_engine *e;
	const struct ref *refs;
	pthread_barrier_t *bar; /* rounds start together (NULL: no barrier) */
	int bad;                /* every other run is a bad document */
	int keep;               /* keep the results, unread, in kept[] */
	lpipe_result *kept[ROUNDS];
	int kept_code[ROUNDS], kept_doc[ROUNDS];
	int n_good;             /* good documents run */
	int runs;               /* runs compared */
	char failure[512];      /* the first failure, "" when none */
};

static void failed(struct worker *w, const char *fmt, const char *a, const char *b)
{
	if (!w->failure[0])
		snprintf(w->failure, sizeof(w->failure), fmt, w->id, a, b);
}

/* A bad document for run `round`: empty, binary, or a missing file, each
 * named after the thread and the round. Its message must name it. */
static void run_bad(struct worker *w, int round)
{
	char name[128];
	lpipe_result *r = (lpipe_result *)w; /* must be reset to NULL */
	int code;

	switch ((w->id + round) % 3) {
	case 0:
		snprintf(name, sizeof(name), "empty-%d-%d", w->id, round);
		code = lpipe_run_buffer(w->p, w->e, name, "", 0, &r);
		break;
	case 1:
		snprintf(name, sizeof(name), "binary-%d-%d", w->id, round);
		code = lpipe_run_buffer(w->p, w->e, name, "a\0b\0c", 5, &r);
		break;
	default:
		snprintf(name, sizeof(name), "%s/missing-%d-%d.txt", workdir, w->id, round);
		code = lpipe_run_file(w->p, w->e, name, &r);
		break;
	}
	if (code != LPIPE_INPUT || r) {
		failed(w, "thread %d: %s: want an input error, got %s", name, lpipe_errmsg());
		lpipe_result_free(r);
		return;
	}
	/* only its own message: another thread's document name is never in it */
	if (!strstr(lpipe_errmsg(), name))
		failed(w, "thread %d: the message for %s is '%s'", name, lpipe_errmsg());
}

static void run_good(struct worker *w, int round)
{
	int k = (w->id + w->n_good) % N_DOCS;
	lpipe_result *r;
	const char *what;
	int code;

	/* by turns on the file and on its bytes, named as the file so that
	 * even the reports are equal */
	if ((w->id + w->n_good++) % 2)
		code = lpipe_run_buffer(w->p, w->e, doc_path[k], doc_text[k], strlen(doc_text[k]),
					&r);
	else
		code = lpipe_run_file(w->p, w->e, doc_path[k], &r);
	if (code != LPIPE_OK && code != LPIPE_VERIFY) {
		failed(w, "thread %d: %s: %s", doc_path[k], lpipe_errmsg());
		return;
	}
	if (code == LPIPE_OK && strcmp(lpipe_errmsg(), "")) {
		failed(w, "thread %d: %s succeeded with the message '%s'", doc_path[k],
		       lpipe_errmsg());
	}
	if (w->keep) {
		w->kept[round] = r;
		w->kept_code[round] = code;
		w->kept_doc[round] = k;
		return;
	}
	if ((what = differs(r, code, &w->refs[k])))
		failed(w, "thread %d: %s: the %s differs from the single-threaded run's",
		       doc_path[k], what);
	w->runs++;
	lpipe_result_free(r);
}

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int round = 0; round < ROUNDS; round++) {
		if (w->bar)
			pthread_barrier_wait(w->bar);
		if (w->bad && (w->id + round) % 2)
			run_bad(w, round);
		else
			run_good(w, round);
	}
	return NULL;
}

/* Run N_THREADS workers on `p` and `e`; each fails the test with its own
 * message. */
static void run_threads(struct worker *w, lpipe_pipeline *p, lpipe_engine *e,
			const struct ref *refs, int bad, int keep)
{
	pthread_t t[N_THREADS];
	pthread_barrier_t bar;

	ck_assert_int_eq(pthread_barrier_init(&bar, NULL, N_THREADS), 0);
	for (int i = 0; i < N_THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		w[i].p = p;
		w[i].e = e;
		w[i].refs = refs;
		w[i].bar = &bar;
		w[i].bad = bad;
		w[i].keep = keep;
		ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&bar);
	for (int i = 0; i < N_THREADS; i++)
		ck_assert_msg(!w[i].failure[0], "%s", w[i].failure);
}

/* Every run of every worker was compared. */
static void assert_all_compared(const struct worker *w, int bad)
{
	int runs = 0;

	for (int i = 0; i < N_THREADS; i++)
		runs += w[i].runs;
	ck_assert_int_eq(runs, bad ? N_THREADS * ROUNDS / 2 : N_THREADS * ROUNDS);
}

/* ---- tests ------------------------------------------------------------- */

/*
 * Run `yaml` from N_THREADS threads on an engine (keep_models `keep`), and
 * again with no engine when `no_engine_too`: every run equals the
 * single-threaded one. With `all_pass`, every reference passed its
 * verification.
 */
static void compare_threaded(const char *yaml, int keep, int no_engine_too, int all_pass)
{
	struct ref refs[N_DOCS];
	struct worker w[N_THREADS];
	lpipe_pipeline *p = load(yaml);
	lpipe_engine *e;

	ck_assert_int_eq(lpipe_engine_new(keep, &e), LPIPE_OK);
	refs_make(p, e, refs);
	for (int k = 0; all_pass && k < N_DOCS; k++)
		ck_assert_int_eq(refs[k].passed, 1);
	run_threads(w, p, e, refs, 0, 0);
	assert_all_compared(w, 0);
	if (no_engine_too) {
		run_threads(w, p, NULL, refs, 0, 0);
		assert_all_compared(w, 0);
	}
	lpipe_engine_free(e);
	lpipe_pipeline_free(p);
	refs_free(refs);
}

/* The model pipeline on one engine that keeps its model: every thread's
 * runs equal the single-threaded ones; the model is loaded once. */
START_TEST(test_model_shared_engine)
{
	compare_threaded(model_yaml, 1, 0, 0);
}
END_TEST

/* The extractive pipeline, on an engine and on none. */
START_TEST(test_extractive)
{
	compare_threaded(extractive_yaml, 1, 1, 1);
}
END_TEST

/* An engine that frees the model when no run holds it: threads open and
 * free it side by side, and so does a run with no engine at all. */
START_TEST(test_model_engine_not_kept)
{
	compare_threaded(model_yaml, 0, 1, 0);
}
END_TEST

/* Bad documents in some threads while the others succeed: each failing
 * run's message names its own document, each succeeding run's is "". */
START_TEST(test_errors_stay_in_their_thread)
{
	struct ref refs[N_DOCS];
	struct worker w[N_THREADS];
	lpipe_pipeline *p = load(model_yaml);
	lpipe_engine *e;

	ck_assert_int_eq(lpipe_engine_new(1, &e), LPIPE_OK);
	refs_make(p, e, refs);
	run_threads(w, p, e, refs, 1, 0);
	assert_all_compared(w, 1);
	/* this thread's message is its own: the last run here succeeded */
	ck_assert_str_eq(lpipe_errmsg(), "");
	lpipe_engine_free(e);
	lpipe_pipeline_free(p);
	refs_free(refs);
}
END_TEST

/* Results made on several threads, read only after their pipeline and
 * their engine are freed (lpipe.h: a result keeps what it needs). The
 * reports are made then, on first use. */
START_TEST(test_results_outlive)
{
	struct ref refs[N_DOCS];
	struct worker w[N_THREADS];
	lpipe_pipeline *p = load(model_yaml);
	lpipe_engine *e;
	int n = 0;

	ck_assert_int_eq(lpipe_engine_new(1, &e), LPIPE_OK);
	refs_make(p, e, refs);
	run_threads(w, p, e, refs, 0, 1);
	lpipe_pipeline_free(p);
	lpipe_engine_free(e);
	for (int i = 0; i < N_THREADS; i++)
		for (int round = 0; round < ROUNDS; round++) {
			const char *what = differs(w[i].kept[round], w[i].kept_code[round],
						   &refs[w[i].kept_doc[round]]);

			ck_assert_msg(!what, "thread %d, run %d: the %s differs", i, round, what);
			lpipe_result_free(w[i].kept[round]);
			n++;
		}
	ck_assert_int_eq(n, N_THREADS * ROUNDS);
	refs_free(refs);
}
END_TEST

/* ---- budgets ----------------------------------------------------------- */

/* The extractive pipeline under a budget no run of it fits in. */
static const char tight_yaml[] =
	"version: 1\n"
	"name: threads-tight\n"
	"memory: {budget: 16KiB, on_oom: fail}\n" EXTRACTIVE_STAGES;

struct budget_worker {
	pthread_t t;
	lpipe_pipeline *p;
	lpipe_engine *e;
	int tight;                 /* 1: on the engine the budget refuses */
	char *const *want;         /* [N_DOCS] the roomy engine's texts */
	int bad;                   /* runs that did not go by their engine's budget */
	char why[200];
};

static void *budget_thread(void *arg)
{
	struct budget_worker *w = arg;

	for (int round = 0; round < 4 * ROUNDS; round++) {
		int k = round % N_DOCS, code;
		lpipe_result *r = NULL;

		code = lpipe_run_buffer(w->p, w->e, NULL, doc_text[k], strlen(doc_text[k]), &r);
		if (w->tight ? code != LPIPE_NOMEM || r || !strstr(lpipe_errmsg(), "budget exceeded")
			     : code > LPIPE_VERIFY || !r || strcmp(lpipe_result_text(r), w->want[k])) {
			if (!w->bad++)
				snprintf(w->why, sizeof(w->why), "doc %d: code %d, %s", k, code,
					 lpipe_errmsg());
		}
		lpipe_result_free(r);
	}
	return NULL;
}

/* Two engines in one process, each with its own budget, running the same
 * pipeline side by side: every run on the one that takes the pipeline's
 * 16 KiB fails over budget, every run on the one given 64 MiB of its own
 * succeeds with the text it gives alone; then a run with no engine is
 * under neither. */
START_TEST(test_engines_have_their_own_budgets)
{
	struct budget_worker w[N_THREADS];
	lpipe_pipeline *p = load(tight_yaml);
	lpipe_engine *tight, *roomy;
	char *want[N_DOCS];
	lpipe_result *r;

	ck_assert_int_eq(lpipe_engine_new(1, &tight), LPIPE_OK);
	ck_assert_int_eq(lpipe_engine_new(1, &roomy), LPIPE_OK);
	ck_assert_int_eq(lpipe_engine_set_mem_budget(roomy, "lots"), LPIPE_USAGE);
	ck_assert_int_eq(lpipe_engine_set_mem_budget(roomy, "64MiB"), LPIPE_OK);
	for (int k = 0; k < N_DOCS; k++) {
		ck_assert_int_le(lpipe_run_buffer(p, roomy, NULL, doc_text[k], strlen(doc_text[k]), &r),
				 LPIPE_VERIFY);
		ck_assert_ptr_nonnull(want[k] = strdup(lpipe_result_text(r)));
		lpipe_result_free(r);
	}
	for (int i = 0; i < N_THREADS; i++) {
		w[i] = (struct budget_worker){ .p = p, .want = want, .tight = i % 2 };
		w[i].e = w[i].tight ? tight : roomy;
		ck_assert_int_eq(pthread_create(&w[i].t, NULL, budget_thread, &w[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++)
		ck_assert_int_eq(pthread_join(w[i].t, NULL), 0);
	for (int i = 0; i < N_THREADS; i++)
		ck_assert_msg(!w[i].bad, "thread %d (%s engine): %d runs off their budget; %s", i,
			      w[i].tight ? "tight" : "roomy", w[i].bad, w[i].why);
	/* no engine: the pipeline's budget on the process's account */
	ck_assert_int_eq(lpipe_run_buffer(p, NULL, NULL, doc_text[0], strlen(doc_text[0]), &r),
			 LPIPE_NOMEM);
	ck_assert_int_eq(lpipe_set_mem_budget("64MiB"), LPIPE_OK);
	ck_assert_int_le(lpipe_run_buffer(p, NULL, NULL, doc_text[0], strlen(doc_text[0]), &r),
			 LPIPE_VERIFY);
	ck_assert_str_eq(lpipe_result_text(r), want[0]);
	lpipe_result_free(r);
	ck_assert_int_eq(lpipe_set_mem_budget(NULL), LPIPE_OK);
	for (int k = 0; k < N_DOCS; k++)
		free(want[k]);
	lpipe_engine_free(tight);
	lpipe_engine_free(roomy);
	lpipe_pipeline_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api_threads");
	TCase *tc = tcase_create("api_threads");
	SRunner *sr;
	int failed_n;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_model_shared_engine);
	tcase_add_test(tc, test_extractive);
	tcase_add_test(tc, test_model_engine_not_kept);
	tcase_add_test(tc, test_errors_stay_in_their_thread);
	tcase_add_test(tc, test_results_outlive);
	tcase_add_test(tc, test_engines_have_their_own_budgets);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed_n = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed_n ? EXIT_FAILURE : EXIT_SUCCESS;
}
