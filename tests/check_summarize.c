/* check_summarize.c - extractive ranking and selection, and the
 * summarize stage's tree. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/node.h"
#include "config/pipeline.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/mem.h"
#include "core/status.h"
#include "stages/doc.h"
#include "stages/stage.h"
#include "text/extractive.h"
#include "text/match.h"
#include "text/sentence.h"

extern const struct lp_stage_kind lp_stage_summarize;

/* Sentence 1 shares its terms with every other sentence but the last,
 * which shares nothing: 1 is the centre, 4 the outlier. */
static const char *const farm[] = {
	"Cats chase mice around the old barn.",
	"Cats, dogs and mice all live in the old barn with the farmer.",
	"Dogs guard the farmer and the barn at night.",
	"The farmer feeds the cats and the dogs.",
	"Quantum chromodynamics describes gluons and quarks.",
};

static char *join(const char *const *v, size_t n, const char *sep)
{
	struct lp_buf b;
	size_t len;

	lp_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		if (i)
			lp_buf_adds(&b, sep);
		lp_buf_adds(&b, v[i]);
	}
	return lp_buf_detach(&b, &len);
}

static size_t spans_of(const char *text, struct lp_span *s, size_t cap)
{
	size_t pos = 0, n = 0;

	while (n < cap && lp_sentence_next(text, strlen(text), &pos, &s[n]))
		n++;
	return n;
}

static char *summarize(const char *text, size_t max_words, size_t max_sentences)
{
	struct lp_extractive_opts o = {max_words, max_sentences, NULL};
	struct lp_diag d;
	char *out = NULL;
	size_t len = 0;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_extractive_summarize(text, strlen(text), &o, &out, &len, &d), LP_OK);
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(strlen(out), len);
	return out;
}

START_TEST(test_rank_central_sentence)
{
	char *text = join(farm, 5, " ");
	struct lp_span s[8];
	double score[8], sum = 0;
	size_t n = spans_of(text, s, 8), best = 0, worst = 0;
	struct lp_diag d;

	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(lp_extractive_rank(text, s, n, score, &d), LP_OK);
	for (size_t i = 0; i < n; i++) {
		sum += score[i];
		best = score[i] > score[best] ? i : best;
		worst = score[i] < score[worst] ? i : worst;
	}
	ck_assert_double_eq_tol(sum, 1.0, 1e-9);
	ck_assert_uint_eq(best, 1);
	ck_assert_uint_eq(worst, 4);
	/* the outlier has no edges: it gets the teleport share plus what it
	 * spreads evenly to itself, (0.15 + 0.85 p4) / 5, i.e. p4 = 0.15 / 4.15 */
	ck_assert_double_eq_tol(score[4], 0.15 / 4.15, 1e-5);
	lp_mem_free(text);
}
END_TEST

START_TEST(test_max_sentences_and_order)
{
	char *text = join(farm, 5, "\n");
	char *one = summarize(text, 0, 1), *three = summarize(text, 0, 3), *all = summarize(text, 0, 0);
	const char *p0, *p1, *p3;

	ck_assert_str_eq(one, farm[1]);
	/* the three best, printed in document order */
	p0 = strstr(three, farm[0]);
	p1 = strstr(three, farm[1]);
	p3 = strstr(three, farm[3]);
	ck_assert_msg(p0 && p1 && p3 && p0 < p1 && p1 < p3, "%s", three);
	ck_assert_ptr_null(strstr(three, "Quantum"));
	/* no limit: every sentence, newlines collapsed to spaces */
	lp_mem_free(text);
	text = join(farm, 5, " ");
	ck_assert_str_eq(all, text);
	lp_mem_free(one);
	lp_mem_free(three);
	lp_mem_free(all);
	lp_mem_free(text);
}
END_TEST

START_TEST(test_max_words)
{
	char *text = join(farm, 5, " ");
	size_t w1 = lp_match_count_words(farm[1], strlen(farm[1]));

	for (size_t max = 1; max <= 60; max++) {
		char *s = summarize(text, max, 0);
		size_t w = lp_match_count_words(s, strlen(s));
		ck_assert_uint_le(w, max);
		ck_assert_uint_gt(w, 0); /* never empty */
		/* the centre is kept as soon as it fits */
		if (max >= w1)
			ck_assert_msg(strstr(s, farm[1]), "max %zu: %s", max, s);
		lp_mem_free(s);
	}
	lp_mem_free(text);
}
END_TEST

START_TEST(test_near_repeats_skipped)
{
	const char *v[] = {farm[0], farm[1], farm[2], farm[3], farm[4],
			   "Cats, dogs and mice all live in the old barn with the farmer today."};
	char *text = join(v, 6, " ");
	struct lp_span s[8];
	double score[8];
	struct lp_diag d;
	char *two;

	/* the repeat is as central as the original: ranked second */
	ck_assert_uint_eq(spans_of(text, s, 8), 6);
	ck_assert_int_eq(lp_extractive_rank(text, s, 6, score, &d), LP_OK);
	for (size_t i = 0; i < 5; i++)
		if (i != 1)
			ck_assert_double_gt(score[5], score[i]);
	/* ... but not kept next to it */
	two = summarize(text, 0, 2);
	ck_assert_msg(strstr(two, farm[1]) && !strstr(two, "today"), "%s", two);
	ck_assert_uint_eq(lp_match_count_words(two, strlen(two)),
			  lp_match_count_words(farm[1], strlen(farm[1])) +
			  lp_match_count_words(farm[3], strlen(farm[3])));
	lp_mem_free(two);
	lp_mem_free(text);
}
END_TEST

START_TEST(test_cut_when_nothing_fits)
{
	char *s = summarize("One two three four five six seven.", 3, 0);

	ck_assert_str_eq(s, "One two three");
	lp_mem_free(s);
	s = summarize("   \n\n  ", 10, 0);
	ck_assert_str_eq(s, "");
	lp_mem_free(s);
}
END_TEST

START_TEST(test_cjk)
{
	const char *text = "人工智能是计算机科学的一个分支。人工智能研究如何让计算机模拟人类智能。"
			   "机器学习是人工智能的核心技术之一。今天天气很好，我们去公园散步。";
	char *s = summarize(text, 40, 0);
	size_t w = lp_match_count_words(s, strlen(s));

	/* characters count as words; sentences are joined without a space;
	 * the weather sentence, unrelated to the rest, is dropped */
	ck_assert_uint_le(w, 40);
	ck_assert_uint_ge(w, 30);
	ck_assert_msg(!strchr(s, ' '), "%s", s);
	ck_assert_msg(strstr(s, "人工智能研究如何让计算机模拟人类智能。"), "%s", s);
	ck_assert_msg(!strstr(s, "天气"), "%s", s);
	lp_mem_free(s);
	/* hard-wrapped CJK loses its line breaks */
	s = summarize("人工智能\n是一个分支。", 0, 0);
	ck_assert_str_eq(s, "人工智能是一个分支。");
	lp_mem_free(s);
}
END_TEST

START_TEST(test_groups_bound_cost)
{
	struct lp_buf b;
	struct lp_span *s;
	double *score, sum = 0;
	size_t n = 1001, m, len;
	char *text, *out;
	struct lp_diag d;

	lp_buf_init(&b);
	for (size_t i = 0; i < n; i++)
		lp_buf_addf(&b, "Sentence %zu mentions topic%zu and shared words here. ", i, i % 7);
	text = lp_buf_detach(&b, &len);
	s = malloc(n * sizeof(*s));
	score = malloc(n * sizeof(*score));
	m = spans_of(text, s, n);
	ck_assert_uint_eq(m, n);
	lp_mem_reset_peaks();
	ck_assert_int_eq(lp_extractive_rank(text, s, n, score, &d), LP_OK);
	/* 3 groups of at most 334: the similarity matrix of one group, not of
	 * all 1001 sentences (8 MB) */
	ck_assert_uint_lt(lp_mem_peak_total(), 2u << 20);
	for (size_t i = 0; i < n; i++)
		sum += score[i];
	ck_assert_double_eq_tol(sum, 1.0, 1e-9);
	out = summarize(text, 50, 0);
	ck_assert_uint_le(lp_match_count_words(out, strlen(out)), 50);
	ck_assert_uint_gt(strlen(out), 0);
	lp_mem_free(out);
	lp_mem_free(text);
	free(s);
	free(score);
}
END_TEST

/* ---- the summarize stage ------------------------------------------- */

struct fixture {
	struct lp_arena cfg;
	struct lp_diag d;
	struct lp_doc doc;
	void *opts;
	char *text;
};

/* Parse the stage's options; `p` is the pipeline around it (NULL: none,
 * so no model). */
static enum lp_status parse_in(struct fixture *f, const char *yaml, const struct lp_pipeline *p)
{
	struct lp_node *root;
	struct lp_cfg_ctx c = {"t.yaml", "stages[1].summarize", &f->cfg, &f->d};

	lp_arena_init(&f->cfg);
	lp_diag_init(&f->d);
	ck_assert_int_eq(lp_yaml_parse("t.yaml", yaml, strlen(yaml), NULL, &f->cfg, &root, &f->d),
			 LP_OK);
	return lp_stage_summarize.parse(&c, root, p, &f->opts);
}

static enum lp_status parse_opts(struct fixture *f, const char *yaml)
{
	return parse_in(f, yaml, NULL);
}

/* Parse in a pipeline that has a model section (for tree and refine). */
static enum lp_status parse_with_model(struct fixture *f, const char *yaml)
{
	static struct lp_pipeline p;

	p.model.present = 1;
	return parse_in(f, yaml, &p);
}

/* The options `yaml` fail at line 1, column `col` with `msg` in the message. */
static void parse_fails(const char *yaml, int model, size_t col, const char *msg)
{
	struct fixture f;

	ck_assert_int_eq(model ? parse_with_model(&f, yaml) : parse_opts(&f, yaml), LP_E_CONFIG);
	ck_assert_msg(strstr(f.d.msg, msg), "'%s': got '%s'", yaml, f.d.msg);
	ck_assert_int_eq(f.d.line, 1);
	ck_assert_int_eq(f.d.col, col);
	lp_arena_release(&f.cfg);
}

/* A doc of n chunks, chunk i being two sentences that name it. */
static void make_doc(struct fixture *f, size_t n)
{
	struct lp_buf b;
	size_t len;

	lp_doc_init(&f->doc, NULL);
	f->doc.chunks = lp_arena_alloc(&f->doc.arena, (n + 1) * sizeof(struct lp_chunk));
	lp_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		f->doc.chunks[i].off = b.len;
		lp_buf_addf(&b, "Part %zu is about river%zu and boats. Boats on river%zu are slow.\n",
			    i, i, i);
		f->doc.chunks[i].len = b.len - f->doc.chunks[i].off;
	}
	f->doc.n_chunks = n;
	f->text = lp_buf_detach(&b, &len);
	f->doc.text = f->text;
	f->doc.len = len;
}

static void fixture_release(struct fixture *f)
{
	lp_doc_release(&f->doc);
	lp_arena_release(&f->cfg);
	lp_mem_free(f->text);
}

/* Every level covers the level below exactly, in order, fanout at a time. */
static void check_tree(const struct lp_doc *doc, size_t n0, size_t fanout, size_t max_words)
{
	size_t n = n0, k = 0;

	ck_assert_uint_ge(doc->n_levels, 1);
	for (;; k++) {
		const struct lp_summary_level *l = &doc->levels[k];
		ck_assert_uint_lt(k, doc->n_levels);
		ck_assert_uint_eq(l->n, n);
		for (size_t j = 0; j < l->n; j++) {
			size_t expect = k ? (j + 1 < l->n ? fanout : doc->levels[k - 1].n - j * fanout) : 1;
			ck_assert_uint_eq(l->first_input[j], k ? j * fanout : j);
			ck_assert_uint_eq(l->n_inputs[j], expect);
			ck_assert_uint_le(lp_match_count_words(l->texts[j], strlen(l->texts[j])),
					  max_words);
		}
		if (n == 1)
			break;
		n = (n + fanout - 1) / fanout;
	}
	ck_assert_uint_eq(k + 1, doc->n_levels);
	ck_assert_ptr_eq(doc->summary, doc->levels[k].texts[0]);
}

START_TEST(test_tree_levels)
{
	static const size_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 63, 64, 65, 100};
	static const size_t fs[] = {2, 3, 4, 7, 64};
	char yaml[128];

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
		for (size_t b = 0; b < sizeof(fs) / sizeof(fs[0]); b++) {
			struct fixture f;
			snprintf(yaml, sizeof(yaml), "{fanout: %zu, max_words: 12}", fs[b]);
			ck_assert_int_eq(parse_opts(&f, yaml), LP_OK);
			make_doc(&f, ns[a]);
			ck_assert_int_eq(lp_stage_summarize.run(&f.doc, f.opts, &f.d), LP_OK);
			check_tree(&f.doc, ns[a], fs[b], 12);
			fixture_release(&f);
		}
	}
}
END_TEST

START_TEST(test_tree_content)
{
	struct fixture f;

	ck_assert_int_eq(parse_opts(&f, "{fanout: 2, max_words: 100, max_sentences: 1}"), LP_OK);
	make_doc(&f, 3);
	ck_assert_int_eq(lp_stage_summarize.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert_uint_eq(f.doc.n_levels, 3);
	/* one sentence per summary, taken from its own chunk */
	for (size_t i = 0; i < 3; i++) {
		char want[32];
		snprintf(want, sizeof(want), "river%zu", i);
		ck_assert_msg(strstr(f.doc.levels[0].texts[i], want), "%s", f.doc.levels[0].texts[i]);
		ck_assert_ptr_null(strchr(strchr(f.doc.levels[0].texts[i], '.') + 1, '.'));
	}
	ck_assert_ptr_null(strchr(strchr(f.doc.summary, '.') + 1, '.'));
	ck_assert_str_eq(lp_doc_result(&f.doc), f.doc.summary);
	fixture_release(&f);
}
END_TEST

START_TEST(test_selection_and_no_chunks)
{
	struct fixture f;
	static size_t sel[] = {3, 1};

	ck_assert_int_eq(parse_opts(&f, "{max_sentences: 1}"), LP_OK);
	make_doc(&f, 5);
	f.doc.selection = sel;
	f.doc.n_selection = 2;
	ck_assert_int_eq(lp_stage_summarize.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert_uint_eq(f.doc.levels[0].n, 2);
	ck_assert_ptr_nonnull(strstr(f.doc.levels[0].texts[0], "river3"));
	ck_assert_ptr_nonnull(strstr(f.doc.levels[0].texts[1], "river1"));
	ck_assert_uint_eq(f.doc.n_levels, 2);
	fixture_release(&f);

	/* no split stage: the whole text is one input */
	ck_assert_int_eq(parse_opts(&f, "{max_words: 9}"), LP_OK);
	make_doc(&f, 4);
	f.doc.n_chunks = 0;
	ck_assert_int_eq(lp_stage_summarize.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert_uint_eq(f.doc.n_levels, 1);
	ck_assert_uint_eq(f.doc.levels[0].n, 1);
	ck_assert_uint_eq(f.doc.levels[0].n_inputs[0], 1);
	ck_assert_uint_le(lp_match_count_words(f.doc.summary, strlen(f.doc.summary)), 9);
	ck_assert_uint_gt(strlen(f.doc.summary), 0);
	fixture_release(&f);
}
END_TEST

START_TEST(test_trace_note)
{
	struct fixture f;
	struct lp_stage_trace tr = {"summarize", 0, 0, NULL};

	ck_assert_int_eq(parse_opts(&f, "{fanout: 4}"), LP_OK);
	make_doc(&f, 42);
	f.doc.trace = &tr;
	f.doc.n_trace = 1;
	ck_assert_int_eq(lp_stage_summarize.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert_str_eq(tr.note, "levels: 42 -> 11 -> 3 -> 1");
	f.doc.trace = NULL;
	fixture_release(&f);
}
END_TEST

START_TEST(test_parse)
{
	struct fixture f;
	struct lp_buf b;

	ck_assert_int_eq(parse_opts(&f, "{}"), LP_OK);
	lp_buf_init(&b);
	lp_stage_summarize.describe(f.opts, &b);
	ck_assert_str_eq(b.data, "{strategy: extractive, fanout: 4, max_words: 120, max_sentences: 0}");
	lp_buf_release(&b);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_with_model(&f, "{strategy: tree, prompt: \"Say 'hi'\"}"), LP_OK);
	lp_buf_init(&b);
	lp_stage_summarize.describe(f.opts, &b);
	ck_assert_str_eq(b.data, "{strategy: tree, fanout: 4, max_tokens: 128, extract_words: 0, "
			 "prompt: \"Say 'hi'\"}");
	lp_buf_release(&b);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_with_model(&f, "{strategy: refine, prompt: \"a\\nb\\\\\"}"), LP_OK);
	lp_buf_init(&b);
	lp_stage_summarize.describe(f.opts, &b);
	ck_assert_str_eq(b.data, "{strategy: refine, max_tokens: 128, extract_words: 0, "
			 "prompt: \"a\\nb\\\\\"}");
	lp_buf_release(&b);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{strategy: tree}"), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "strategy 'tree' needs a model: add a model section"));
	ck_assert_int_eq(f.d.line, 1);
	lp_arena_release(&f.cfg);
	ck_assert_int_eq(parse_opts(&f, "{strategy: refine}"), LP_E_CONFIG);
	lp_arena_release(&f.cfg);
	ck_assert_int_eq(parse_opts(&f, "{fanout: 1}"), LP_E_CONFIG);
	lp_arena_release(&f.cfg);
	ck_assert_int_eq(parse_opts(&f, "{fanout: 65}"), LP_E_CONFIG);
	lp_arena_release(&f.cfg);
	ck_assert_int_eq(parse_opts(&f, "{fanuot: 4}"), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "fanout"));
	lp_arena_release(&f.cfg);
}
END_TEST

/* A key the strategy (or the tree's map) does not read is an error at the
 * key that names who would read it, never silently ignored. */
START_TEST(test_parse_keys_of_other_strategies)
{
	struct fixture f;
	struct lp_buf b;

	parse_fails("{prompt: hi}", 0, 2,
		    "key 'prompt' is not used by strategy 'extractive' (only by strategy tree or "
		    "refine)");
	parse_fails("{max_words: 50, max_tokens: 64}", 0, 17,
		    "key 'max_tokens' is not used by strategy 'extractive'");
	parse_fails("{map: points}", 0, 2, "key 'map' is not used by strategy 'extractive' "
		    "(only by strategy tree)");
	parse_fails("{strategy: tree, max_words: 50}", 1, 18,
		    "key 'max_words' is not used by strategy 'tree' (only by strategy extractive)");
	parse_fails("{strategy: refine, fanout: 4}", 1, 20,
		    "key 'fanout' is not used by strategy 'refine' (only by strategy extractive or "
		    "tree)");
	parse_fails("{strategy: refine, final: join}", 1, 20,
		    "key 'final' is not used by strategy 'refine' (only by strategy tree)");
	parse_fails("{strategy: refine, map: points}", 1, 20, "key 'map' is not used");
	parse_fails("{strategy: tree, points: 2}", 1, 18,
		    "key 'points' is not used by map 'summary' (only by map points or compress)");
	parse_fails("{strategy: tree, map: summary, grounded: no}", 1, 32,
		    "key 'grounded' is not used by map 'summary'");
	parse_fails("{strategy: tree, abstract: yes}", 1, 18,
		    "key 'abstract' is not used by map 'summary' (only by map points or compress)");
	parse_fails("{strategy: refine, abstract: yes}", 1, 20,
		    "key 'abstract' is not used by strategy 'refine' (only by strategy tree)");
	/* what each strategy reads is accepted */
	ck_assert_int_eq(parse_with_model(&f, "{strategy: tree, map: compress, points: 2, "
					  "grounded: no, final: join, final_tokens: 300, "
					  "drop_meta: no, extract_words: 80}"), LP_OK);
	lp_arena_release(&f.cfg);
	ck_assert_int_eq(parse_with_model(&f, "{strategy: tree, map: points, abstract: yes}"),
			 LP_OK);
	lp_buf_init(&b);
	lp_stage_summarize.describe(f.opts, &b);
	ck_assert_ptr_nonnull(strstr(b.data, ", abstract: true"));
	lp_buf_release(&b);
	lp_arena_release(&f.cfg);
	ck_assert_int_eq(parse_with_model(&f, "{strategy: refine, max_tokens: 64, "
					  "extract_words: 80, drop_meta: no}"), LP_OK);
	lp_arena_release(&f.cfg);
	ck_assert_int_eq(parse_opts(&f, "{fanout: 8, max_words: 60, max_sentences: 3}"), LP_OK);
	lp_arena_release(&f.cfg);
}
END_TEST

START_TEST(test_budget_failure_is_clean)
{
	struct fixture f;

	ck_assert_int_eq(parse_opts(&f, "{fanout: 2}"), LP_OK);
	make_doc(&f, 20);
	lp_mem_set_budget(lp_mem_current_total() + 2048);
	ck_assert_int_eq(lp_stage_summarize.run(&f.doc, f.opts, &f.d), LP_E_NOMEM);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "summarize"));
	ck_assert_ptr_null(f.doc.summary);
	ck_assert_uint_eq(f.doc.n_levels, 0);
	lp_mem_set_budget(0);
	fixture_release(&f);
}
END_TEST

/* Every tracked allocation of a summary, failed in turn: a clean
 * LP_E_NOMEM with a message and nothing leaked, and success once the sweep
 * passes the last allocation. */
START_TEST(test_fault_sweep)
{
	static const char text[] =
		"Cats chase mice around the old barn. Cats, dogs and mice all live in the old "
		"barn with the farmer. Dogs guard the farmer and the barn at night. The farmer "
		"feeds the cats and the dogs. 人工智能研究如何让计算机模拟人类智能。";
	struct lp_extractive_opts o = {20, 0, NULL};
	struct lp_diag d;
	char n[16], *out = NULL;
	size_t len;
	enum lp_status st;

	/* set before the first allocation: the allocator reads it once */
	snprintf(n, sizeof(n), "%d", _i);
	setenv("LPIPE_FAIL_ALLOC", n, 1); /* forked test: stays in this child */
	lp_diag_init(&d);
	st = lp_extractive_summarize(text, strlen(text), &o, &out, &len, &d);
	if (st) {
		ck_assert_int_eq(st, LP_E_NOMEM);
		ck_assert_ptr_null(out);
		ck_assert_msg(d.msg[0], "allocation %d failed without a message", _i);
	}
	if (_i == 1)
		ck_assert_int_eq(st, LP_E_NOMEM);
	if (_i == 40)
		ck_assert_int_eq(st, LP_OK);
	lp_mem_free(out);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

/* The stages as a pipeline runs them: split, summarize, verify. */
START_TEST(test_pipeline_end_to_end)
{
	static const char yaml[] =
		"version: 1\n"
		"stages:\n"
		"  - split: {unit: sentences, size: 2, boundary: none}\n"
		"  - summarize: {fanout: 3, max_sentences: 1}\n"
		"  - verify: {keyphrases: {auto: 4, must: [river]}, min_words: 3, min_survival: 0,"
		" on_fail: fail}\n";
	struct lp_pipeline *p;
	struct lp_diag d;
	struct lp_doc doc;
	struct lp_buf b;
	size_t len;
	char *text;

	lp_diag_init(&d);
	ck_assert_msg(lp_pipeline_load_text("p.yaml", yaml, strlen(yaml), NULL, NULL, 0, &p, &d) ==
		      LP_OK, "%d:%d: %s", d.line, d.col, d.msg);
	ck_assert_uint_eq(p->n_stages, 3);
	lp_buf_init(&b);
	for (size_t i = 0; i < 20; i++)
		lp_buf_addf(&b, "The river%zu carries boats to the river. Boats on the river%zu are "
			    "slow. ", i, i);
	text = lp_buf_detach(&b, &len);
	lp_doc_init(&doc, p);
	doc.text = text;
	doc.len = len;
	for (size_t i = 0; i < p->n_stages; i++)
		ck_assert_msg(p->stages[i].kind->run(&doc, p->stages[i].opts, &d) == LP_OK,
			      "stage %zu: %s", i, d.msg);
	ck_assert_uint_eq(doc.n_chunks, 20);
	ck_assert_uint_eq(doc.n_levels, 4); /* 20 -> 7 -> 3 -> 1 */
	ck_assert_ptr_nonnull(doc.summary);
	ck_assert_ptr_null(strchr(strchr(doc.summary, '.') + 1, '.'));
	ck_assert(doc.verify.done && doc.verify.passed);
	ck_assert_str_eq(doc.verify.phrases[0].text, "river");
	ck_assert_uint_eq(doc.verify.n_phrases, 5);
	lp_doc_release(&doc);
	lp_pipeline_free(p);
	lp_mem_free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("summarize");
	TCase *tc = tcase_create("summarize");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_rank_central_sentence);
	tcase_add_test(tc, test_max_sentences_and_order);
	tcase_add_test(tc, test_max_words);
	tcase_add_test(tc, test_near_repeats_skipped);
	tcase_add_test(tc, test_cut_when_nothing_fits);
	tcase_add_test(tc, test_cjk);
	tcase_add_test(tc, test_groups_bound_cost);
	tcase_add_test(tc, test_tree_levels);
	tcase_add_test(tc, test_tree_content);
	tcase_add_test(tc, test_selection_and_no_chunks);
	tcase_add_test(tc, test_trace_note);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_parse_keys_of_other_strategies);
	tcase_add_test(tc, test_budget_failure_is_clean);
	tcase_add_test(tc, test_pipeline_end_to_end);
	tcase_add_loop_test(tc, test_fault_sweep, 1, 41);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
