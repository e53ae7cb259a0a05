/* check_stream.c - streamed weights on tiny generated models: the same
 * logits as mapped weights, bit for bit; the tracked weights equal to the
 * window and the resident pages of the file within it; and a budget that
 * refuses the mapped weights but not the window, which a session and a
 * pipeline with on_oom: shrink get through by streaming, and one with
 * on_oom: fail does not. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/runner.h"
#include "config/pipeline.h"
#include "core/buf.h"
#include "core/mem.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/model.h"
#include "model/plan.h"
#include "model/session.h"
#include "stages/model_stage.h"
#include "stages/doc.h"
#include "tools/chat_model.h"
#include "tools/tiny_model.h"

static char model_path[64];

/* A model whose layers make most of the file: 6 layers of about 0.8 MB
 * (F32), large enough that the window is well below the file. */
static struct tiny_spec big_spec(enum lp_qtype type)
{
	struct tiny_spec s = tiny_layered_spec();

	s.type = type;
	s.vocab = 320;
	return s;
}

static void write_tiny(const struct tiny_spec *s)
{
	int fd;

	strcpy(model_path, "/tmp/lpipe-stream-XXXXXX");
	fd = mkstemp(model_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(tiny_model_write(model_path, s, 5), 0);
}

struct loaded {
	struct lp_gguf *g;
	struct lp_model *m;
	struct lp_forward *c;
	size_t weights;   /* LP_MEM_WEIGHTS taken by opening and loading */
};

static void load(struct loaded *l, int stream, uint32_t n_ctx)
{
	struct lp_forward_params p = lp_forward_default_params();
	size_t before = lp_mem_current(LP_MEM_WEIGHTS);
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_msg((stream ? lp_gguf_open_streamed(model_path, &l->g, &d)
			      : lp_gguf_open(model_path, &l->g, &d)) == LP_OK, "%s", d.msg);
	ck_assert_msg(lp_model_load(l->g, &l->m, &d) == LP_OK, "%s", d.msg);
	l->weights = lp_mem_current(LP_MEM_WEIGHTS) - before;
	ck_assert_int_eq(lp_model_streamed(l->m), stream);
	ck_assert_int_eq(lp_gguf_streamed(l->g), stream);
	p.n_ctx = n_ctx;
	p.n_threads = 2;
	ck_assert_msg(lp_forward_new(l->m, &p, &l->c, &d) == LP_OK, "%s", d.msg);
}

static void unload(struct loaded *l)
{
	lp_forward_free(l->c);
	lp_model_free(l->m);
	lp_gguf_close(l->g);
}

/* ---- the same arithmetic --------------------------------------------- */

static void same_logits(enum lp_qtype type)
{
	struct tiny_spec s = big_spec(type);
	struct loaded map, str;
	struct lp_diag d;
	int32_t toks[48];
	float *a, *b;

	write_tiny(&s);
	load(&map, 0, 128);
	load(&str, 1, 128);
	for (int i = 0; i < 48; i++)
		toks[i] = (int32_t)((i * 37 + 11) % s.vocab);
	a = malloc((size_t)40 * s.vocab * sizeof(float));
	b = malloc((size_t)40 * s.vocab * sizeof(float));
	lp_diag_init(&d);
	/* a prompt (the sgemm path), then single tokens (the matvec path) */
	ck_assert_int_eq(lp_forward_eval_all(map.c, toks, 40, 0, a, &d), LP_OK);
	ck_assert_int_eq(lp_forward_eval_all(str.c, toks, 40, 0, b, &d), LP_OK);
	ck_assert_int_eq(memcmp(a, b, (size_t)40 * s.vocab * sizeof(float)), 0);
	/* single tokens: the mapped model's layers are in row groups where
	 * the CPU's kernels take them (quant/rowgroup.h), whose float sums
	 * run in another order than the streamed file's rows; then the
	 * logits agree to float rounding, else bit for bit */
	for (uint32_t i = 40; i < 48; i++) {
		double worst = 0, mag = 0;
		ck_assert_int_eq(lp_forward_eval(map.c, &toks[i], 1, i, a, &d), LP_OK);
		ck_assert_int_eq(lp_forward_eval(str.c, &toks[i], 1, i, b, &d), LP_OK);
		if (!map.m->layers[0].wq.rowgroups) {
			ck_assert_msg(memcmp(a, b, s.vocab * sizeof(float)) == 0, "token %u differs", i);
			continue;
		}
		for (uint32_t k = 0; k < s.vocab; k++) {
			worst = fmax(worst, fabs(a[k] - b[k]));
			mag = fmax(mag, fabs(b[k]));
		}
		ck_assert_msg(worst <= 1e-4 * mag, "token %u differs by %g of %g", i, worst, mag);
	}
	/* and the logits are not trivially equal: they vary over the vocab */
	ck_assert(a[0] != a[1] || a[1] != a[2]);
	free(a);
	free(b);
	unload(&str);
	unload(&map);
	unlink(model_path);
}

START_TEST(test_same_logits_f32) { same_logits(LP_Q_F32); }
END_TEST
START_TEST(test_same_logits_q4_1) { same_logits(LP_Q_Q4_1); }
END_TEST
START_TEST(test_same_logits_q8_0) { same_logits(LP_Q_Q8_0); }
END_TEST

/* ---- the window ------------------------------------------------------ */

static size_t pages(const void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p;

	return len ? ((a + len + page - 1) / page - a / page) * page : 0;
}

/* The window written out from the file's tensor table: metadata pages,
 * the pages of the tensors outside the layers, twice the pages of the
 * largest layer (its tensors are stored together), and each layer's
 * partial first and last pages. */
static size_t ref_window(const struct lp_gguf *g, uint32_t n_layer)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), always = 0, layer = 0, edges = 0;

	for (uint32_t il = 0; il < n_layer; il++) {
		char prefix[32];
		uintptr_t lo = UINTPTR_MAX, hi = 0;
		snprintf(prefix, sizeof(prefix), "blk.%u.", il);
		for (size_t i = 0; i < lp_gguf_n_tensors(g); i++) {
			const struct lp_gguf_tensor *t = lp_gguf_tensor_at(g, i);
			uintptr_t p = (uintptr_t)t->data;
			if (t->name.len <= strlen(prefix) ||
			    memcmp(t->name.ptr, prefix, strlen(prefix)))
				continue;
			lo = p < lo ? p : lo;
			hi = p + t->bytes > hi ? p + t->bytes : hi;
		}
		if (pages((const void *)lo, hi - lo) > layer)
			layer = pages((const void *)lo, hi - lo);
		/* a page shared with the next tensor is never dropped */
		edges += (lo % page ? page : 0) + (hi % page ? page : 0);
	}
	for (size_t i = 0; i < lp_gguf_n_tensors(g); i++) {
		const struct lp_gguf_tensor *t = lp_gguf_tensor_at(g, i);
		if (t->name.len < 4 || memcmp(t->name.ptr, "blk.", 4))
			always += pages(t->data, t->bytes);
	}
	return (lp_gguf_data_offset(g) + page - 1) / page * page + always + 2 * layer + edges;
}

START_TEST(test_window_tracked)
{
	struct tiny_spec s = big_spec(LP_Q_F32);
	struct loaded map, str;

	write_tiny(&s);
	load(&map, 0, 64);
	load(&str, 1, 64);
	/* mapped: the whole file; streamed: the window and nothing else (the
	 * norms are F32, used in place, so nothing is converted) */
	ck_assert_uint_eq(map.weights, lp_gguf_file_bytes(map.g));
	ck_assert_uint_eq(str.weights, lp_model_window_bytes(str.m));
	ck_assert_uint_eq(str.weights, ref_window(str.g, s.layers));
	ck_assert_uint_eq(lp_model_window_bytes(map.m), str.weights);
	ck_assert_uint_lt(str.weights * 2, map.weights);
	/* the planner sees what the budget sees, in either mode */
	ck_assert_uint_eq(lp_plan_weight_bytes(str.m), str.weights);
	ck_assert_uint_eq(lp_plan_weight_bytes(map.m), map.weights);
	ck_assert_uint_eq(lp_plan_stream_weight_bytes(map.m), str.weights);
	unload(&str);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), map.weights);
	unload(&map);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), 0);
	unlink(model_path);
}
END_TEST

/* Resident bytes of this process's mappings of `path` (/proc/self/smaps). */
static size_t mapped_rss(const char *path)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	size_t total = 0, kb;
	int in = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n');
		unsigned long lo, hi;
		if (nl)
			*nl = '\0';
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' '))
			in = strlen(line) >= strlen(path) &&
			     !strcmp(line + strlen(line) - strlen(path), path);
		else if (in && sscanf(line, "Rss: %zu kB", &kb) == 1)
			total += kb * 1024;
	}
	fclose(f);
	return total;
}

/* What really stays resident: the window, not the file; mapped, the file. */
START_TEST(test_resident_within_window)
{
	struct tiny_spec s = big_spec(LP_Q_F32);
	struct loaded l;
	struct lp_diag d;
	int32_t toks[40];

	write_tiny(&s);
	for (int i = 0; i < 40; i++)
		toks[i] = (int32_t)((i * 13 + 5) % s.vocab);
	lp_diag_init(&d);
	for (int stream = 0; stream <= 1; stream++) {
		load(&l, stream, 64);
		ck_assert_int_eq(lp_forward_eval(l.c, toks, 32, 0, NULL, &d), LP_OK);
		for (uint32_t i = 32; i < 40; i++)
			ck_assert_int_eq(lp_forward_eval(l.c, &toks[i], 1, i, NULL, &d), LP_OK);
		if (stream)
			ck_assert_msg(mapped_rss(model_path) <= lp_model_window_bytes(l.m),
				      "resident %zu > window %zu", mapped_rss(model_path),
				      lp_model_window_bytes(l.m));
		else
			ck_assert_msg(mapped_rss(model_path) > 2 * lp_model_window_bytes(l.m),
				      "mapped: resident %zu, window %zu", mapped_rss(model_path),
				      lp_model_window_bytes(l.m));
		unload(&l);
	}
	unlink(model_path);
}
END_TEST

/* ---- under a budget -------------------------------------------------- */

#define CHAT_LAYERS 48

static void write_chat(void)
{
	snprintf(model_path, sizeof(model_path), "/tmp/lpipe-stream-%ld.gguf", (long)getpid());
	ck_assert_int_eq(chat_model_write_layers(model_path, 7, CHAT_LAYERS), 0);
}

static enum lp_status open_session(int stream, int shrink, struct lp_session **s,
				   struct lp_diag *d)
{
	struct lp_session_params p = lp_session_default_params();

	p.path = model_path;
	p.n_ctx = 256;
	p.n_threads = 1;
	p.stream_weights = stream;
	p.shrink = shrink;
	lp_diag_init(d);
	return lp_session_open(&p, s, d);
}

/* Tracked bytes of an open session, mapped or streamed; *weights gets the
 * weights part. */
static size_t session_bytes(int stream, size_t *weights)
{
	struct lp_session *s;
	struct lp_diag d;
	size_t total;

	ck_assert_msg(open_session(stream, 0, &s, &d) == LP_OK, "%s", d.msg);
	ck_assert_int_eq(lp_session_streamed(s), stream);
	ck_assert_ptr_null(lp_session_note(s));
	total = lp_mem_current_total();
	*weights = lp_mem_current(LP_MEM_WEIGHTS);
	lp_session_free(s);
	return total;
}

START_TEST(test_session_streams_under_budget)
{
	static const struct lp_chat_msg msgs[] = { { "user", "a boat on the river" } };
	struct lp_session *s;
	struct lp_diag d;
	size_t w_map, w_str, t_map, t_str, n_out;
	char *text;

	write_chat();
	t_map = session_bytes(0, &w_map);
	t_str = session_bytes(1, &w_str);
	ck_assert_uint_lt(w_str * 3, w_map);
	ck_assert_uint_eq(t_map - t_str, w_map - w_str);
	/* the mapped weights alone are over it, the streamed session is not */
	lp_mem_set_budget(t_str + (w_map - t_str) / 2);
	ck_assert_uint_gt(t_str, 0);
	ck_assert_uint_lt(t_str, lp_mem_budget());
	ck_assert_uint_gt(w_map, lp_mem_budget());
	ck_assert_int_eq(open_session(0, 0, &s, &d), LP_E_NOMEM);
	ck_assert_ptr_null(s);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	ck_assert_msg(open_session(0, 1, &s, &d) == LP_OK, "%s", d.msg);
	ck_assert_int_eq(lp_session_streamed(s), 1);
	ck_assert_uint_eq(lp_session_n_ctx(s), 256);
	ck_assert_str_eq(lp_session_note_at(s, 0), "shrink: weights streamed per layer (budget)");
	ck_assert_ptr_null(lp_session_note_at(s, 1));
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), w_str);
	ck_assert_msg(lp_session_generate(s, msgs, 1, NULL, 8, &text, NULL, &n_out, &d) == LP_OK,
		      "%s", d.msg);
	ck_assert_uint_gt(n_out, 0);
	lp_mem_free(text);
	lp_session_free(s);
	lp_mem_set_budget(0);
	unlink(model_path);
}
END_TEST

/* Streamed, and still too little room for the context: both shrinks, in
 * the order they happened. */
START_TEST(test_session_streams_and_shrinks_context)
{
	struct lp_session_params p = lp_session_default_params();
	struct lp_session *s;
	struct lp_diag d;
	size_t w_map, w_str, t_str;

	write_chat();
	session_bytes(0, &w_map);
	t_str = session_bytes(1, &w_str);
	/* room for a context of 256 tokens streamed, not for 1024 */
	lp_mem_set_budget(t_str + 1024);
	p.path = model_path;
	p.n_ctx = 1024;
	p.n_threads = 1;
	p.shrink = 1;
	lp_diag_init(&d);
	ck_assert_msg(lp_session_open(&p, &s, &d) == LP_OK, "%s", d.msg);
	ck_assert_int_eq(lp_session_streamed(s), 1);
	ck_assert_uint_eq(lp_session_n_ctx(s), 256);
	ck_assert_str_eq(lp_session_note_at(s, 0), "shrink: weights streamed per layer (budget)");
	ck_assert_str_eq(lp_session_note_at(s, 1), "shrink: context 1024 -> 256 tokens (budget)");
	lp_session_free(s);
	lp_mem_set_budget(0);
	unlink(model_path);
}
END_TEST

/* Tracked bytes of a session opened at n_ctx tokens, mapped or streamed. */
static size_t session_bytes_at(int stream, uint32_t n_ctx)
{
	struct lp_session_params p = lp_session_default_params();
	struct lp_session *s;
	struct lp_diag d;
	size_t total;

	p.path = model_path;
	p.n_ctx = n_ctx;
	p.n_threads = 1;
	p.stream_weights = stream;
	lp_diag_init(&d);
	ck_assert_msg(lp_session_open(&p, &s, &d) == LP_OK, "%s", d.msg);
	total = lp_mem_current_total();
	lp_session_free(s);
	return total;
}

/* The budget cut the context below what a step needs, and streaming the
 * weights would keep it: the step gets the streamed session at the context
 * asked for, not "context too small". */
START_TEST(test_step_streams_before_context_too_small)
{
	static const struct lp_chat_msg msgs[] = { { "user", "a boat on the river" } };
	struct lp_session_params p = lp_session_default_params();
	struct lp_session *s;
	struct lp_diag d;
	size_t map_small, map_full, str_full, budget = 0;

	write_chat();
	map_small = session_bytes_at(0, 256);
	map_full = session_bytes_at(0, 1024);
	str_full = session_bytes_at(1, 1024);
	ck_assert_uint_lt(str_full, map_full);
	/* room for either, and a little for rendering the prompt */
	lp_mem_set_budget((str_full > map_small ? str_full : map_small) + 131072);
	ck_assert_uint_lt(lp_mem_budget(), map_full);
	p.path = model_path;
	p.n_ctx = 1024;
	p.n_threads = 1;
	p.shrink = 1;
	lp_diag_init(&d);
	ck_assert_msg(lp_session_open(&p, &s, &d) == LP_OK, "%s", d.msg);
	ck_assert_int_eq(lp_session_streamed(s), 0);
	ck_assert_uint_lt(lp_session_n_ctx(s), 1024);
	/* 900 tokens of answer do not fit the shrunk context */
	lp_diag_init(&d);
	ck_assert_msg(lp_stage_input_budget(s, msgs, 1, 900, 0, &budget, &d) == LP_OK, "%s",
		      d.msg);
	ck_assert_int_eq(lp_session_streamed(s), 1);
	ck_assert_uint_eq(lp_session_n_ctx(s), 1024);
	ck_assert_uint_gt(budget, 0);
	ck_assert_ptr_nonnull(strstr(lp_session_note_at(s, 0), "weights streamed"));
	lp_session_free(s);
	lp_mem_set_budget(0);
	unlink(model_path);
}
END_TEST

static const char chain_yaml[] =
	"version: 1\n"
	"model: {path: '%s', context: 512, weights: %s}\n"
	"memory: {on_oom: %s}\n"
	"retrieval: {scorer: bm25}\n"
	"stages:\n"
	"  - split: {unit: tokens, size: 48, overlap: 0, boundary: sentence}\n"
	"  - retrieve: {query: '${question}', top_k: 2, order: document}\n"
	"  - summarize: {strategy: tree, fanout: 2, max_tokens: 16}\n"
	"  - answer: {max_tokens: 16}\n";

static char doc_path[64];

static void write_doc(void)
{
	FILE *f;

	snprintf(doc_path, sizeof(doc_path), "/tmp/lpipe-stream-%ld.txt", (long)getpid());
	f = fopen(doc_path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 12; i++)
		fprintf(f, "Part %d. The stone bridge%d crosses the river near the mill. "
			"A farmer walks in the rain.\n\n", i, i);
	fclose(f);
}

static int has_event(const struct lp_doc *doc, const char *text)
{
	for (size_t i = 0; i < doc->n_trace; i++)
		for (size_t k = 0; k < doc->trace[i].n_events; k++)
			if (!strcmp(doc->trace[i].events[k], text))
				return 1;
	return 0;
}

/* Run the chain; *peak gets the tracked peak of the run. */
static enum lp_status run_chain(const char *weights, const char *on_oom, int *streamed,
				size_t *peak, struct lp_diag *d)
{
	static const char *const names[] = { "question" };
	static const char *const values[] = { "Where is the stone bridge?" };
	struct lp_vars vars = { names, values, 1 };
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_buf b;
	enum lp_status st;

	lp_buf_init(&b);
	lp_buf_addf(&b, chain_yaml, model_path, weights, on_oom);
	lp_diag_init(d);
	st = lp_pipeline_load_text("t.yaml", b.data, b.len, &vars, NULL, 0, &p, d);
	lp_buf_release(&b);
	ck_assert_msg(st == LP_OK, "%s", d->msg);
	lp_mem_reset_peaks();
	st = lp_runner_run(p, doc_path, values[0], NULL, &doc, NULL, d);
	*peak = lp_mem_peak_total();
	*streamed = has_event(&doc, "shrink: weights streamed per layer (budget)");
	if (st == LP_OK)
		ck_assert_ptr_nonnull(doc.answer);
	lp_doc_release(&doc);
	lp_pipeline_free(p);
	return st;
}

START_TEST(test_pipeline_shrink_or_fail)
{
	size_t w_map, w_str, peak_str, peak_map, peak;
	struct lp_diag d;
	int streamed;

	write_chat();
	write_doc();
	session_bytes(0, &w_map);
	session_bytes(1, &w_str);
	ck_assert_msg(run_chain("stream", "fail", &streamed, &peak_str, &d) == LP_OK, "%s", d.msg);
	ck_assert_int_eq(streamed, 0); /* asked for, not a shrink */
	ck_assert_int_eq(run_chain("map", "fail", &streamed, &peak_map, &d), LP_OK);
	ck_assert_uint_eq(peak_map - peak_str, w_map - w_str);
	/* below the mapped weights alone, above the streamed run's peak */
	lp_mem_set_budget(peak_str + (w_map - peak_str) / 2);
	ck_assert_uint_lt(lp_mem_budget(), w_map);
	ck_assert_int_eq(run_chain("map", "fail", &streamed, &peak, &d), LP_E_NOMEM);
	ck_assert_msg(strstr(d.msg, "load"), "%s", d.msg);
	ck_assert_int_eq(run_chain("map", "shrink", &streamed, &peak, &d), LP_OK);
	ck_assert_int_eq(streamed, 1);
	ck_assert_uint_le(peak, lp_mem_budget());
	lp_mem_set_budget(0);
	unlink(doc_path);
	unlink(model_path);
}
END_TEST

static Suite *stream_suite(void)
{
	Suite *s = suite_create("stream");
	TCase *tc = tcase_create("weights");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_same_logits_f32);
	tcase_add_test(tc, test_same_logits_q4_1);
	tcase_add_test(tc, test_same_logits_q8_0);
	tcase_add_test(tc, test_window_tracked);
	tcase_add_test(tc, test_resident_within_window);
	tcase_add_test(tc, test_session_streams_under_budget);
	tcase_add_test(tc, test_session_streams_and_shrinks_context);
	tcase_add_test(tc, test_step_streams_before_context_too_small);
	tcase_add_test(tc, test_pipeline_shrink_or_fail);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(stream_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
