/* check_retrieve.c - retrieval terms, the BM25 index, top-k selection and
 * the retrieve stage. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/pipeline.h"
#include "core/buf.h"
#include "core/mem.h"
#include "core/status.h"
#include "retrieve/bm25.h"
#include "retrieve/hashembed.h"
#include "text/evidence.h"
#include "text/terms.h"
#include "text/match.h"
#include "text/stem.h"
#include "retrieve/topk.h"
#include "stages/doc.h"
#include "stages/stage.h"

extern const struct lp_stage_kind lp_stage_retrieve;

/* Join the terms of `text` with '|' into out. */
static const char *cut(const char *text, unsigned flags)
{
	static char out[1024];
	struct lp_terms it;
	const char *t;
	size_t len, used = 0;

	lp_terms_init(&it, text, strlen(text), flags);
	out[0] = '\0';
	while (lp_terms_next(&it, &t, &len)) {
		ck_assert_uint_gt(len, 0);
		ck_assert_uint_eq(strlen(t), len);
		ck_assert_uint_lt(used + len + 2, sizeof(out));
		if (used)
			out[used++] = '|';
		memcpy(out + used, t, len);
		used += len;
		out[used] = '\0';
	}
	/* Exhausted stays exhausted. */
	ck_assert_int_eq(lp_terms_next(&it, &t, &len), 0);
	return out;
}

/* The hashed embedder reads words as the terms do: fullwidth ASCII folded
 * and then lower-cased, so "ＵＳＢ Ｄｒｉｖｅ" embeds as "usb drive". */
START_TEST(test_hashembed_folds_width_then_case)
{
	static const char full[] = "\xef\xbc\xb5\xef\xbc\xb3\xef\xbc\xa2 "
				   "\xef\xbc\xa4\xef\xbd\x92\xef\xbd\x89\xef\xbd\x96\xef\xbd\x85";
	struct lp_hashembed *h = lp_hashembed_new(64, NULL);
	float a[64], b[64];

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(lp_hashembed_embed(h, full, strlen(full), a, NULL, NULL), LP_OK);
	ck_assert_int_eq(lp_hashembed_embed(h, "usb drive", 9, b, NULL, NULL), LP_OK);
	for (size_t i = 0; i < 64; i++)
		ck_assert_float_eq(a[i], b[i]);
	lp_hashembed_free(h);
}
END_TEST

START_TEST(test_terms_ascii)
{
	ck_assert_str_eq(cut("Hello, World! 42x y-z", 0), "hello|world|42x|y|z");
	ck_assert_str_eq(cut("  don't   stop\n\tNOW ", 0), "don|t|stop|now");
	ck_assert_str_eq(cut("x86_64 3.14 v2.0-rc1", 0), "x86|64|3|14|v2|0|rc1");
	ck_assert_str_eq(cut("", 0), "");
	ck_assert_str_eq(cut("... --- !!!", 0), "");
}
END_TEST

START_TEST(test_terms_unicode_letters)
{
	ck_assert_str_eq(cut("ÉCOLE Straße Αθήνα ПРИВЕТ", 0), "école|straße|αθήνα|привет");
	/* Combining accent stays inside the word; a dash or NBSP splits. */
	ck_assert_str_eq(cut("cafe\xcc\x81\xc2\xa0na\xc3\xafve\xe2\x80\x94ok", 0),
			 "cafe\xcc\x81|na\xc3\xafve|ok");
	/* Fullwidth ASCII folds to ASCII (it would otherwise be bigrammed). */
	ck_assert_str_eq(cut("ＵＳＢ２ port", 0), "usb2|port");
	/* Invalid bytes separate terms. */
	ck_assert_str_eq(cut("ab\xff" "cd\xc3", 0), "ab|cd");
}
END_TEST

START_TEST(test_terms_cjk_bigrams)
{
	ck_assert_str_eq(cut("内存管理", 0), "内存|存管|管理");
	ck_assert_str_eq(cut("我", 0), "我");
	ck_assert_str_eq(cut("我，你。", 0), "我|你");
	ck_assert_str_eq(cut("中a文", 0), "中|a|文");
	ck_assert_str_eq(cut("USB设备，很好", 0), "usb|设备|很好");
	ck_assert_str_eq(cut("用apt-get安装软件包", 0), "用|apt|get|安装|装软|软件|件包");
	ck_assert_str_eq(cut("メモリ 한국어", 0), "メモ|モリ|한국|국어");
	/* No CJK stop words with the English list on, but the question
	 * words' bigrams */
	ck_assert_str_eq(cut("的是", LP_TERMS_STOPWORDS), "的是");
	ck_assert_str_eq(cut("用什么命令启用它？", LP_TERMS_STOPWORDS), "命令|令启|启用|用它");
	ck_assert_str_eq(cut("用什么命令启用它？", 0), "用什|什么|么命|命令|令启|启用|用它");
	ck_assert_str_eq(cut("哪一节", LP_TERMS_STOPWORDS), "一节");
	ck_assert_str_eq(cut("如何设置，多少个", LP_TERMS_STOPWORDS), "设置|少个");
	ck_assert_str_eq(cut("谁", LP_TERMS_STOPWORDS), "");
}
END_TEST

START_TEST(test_terms_stopwords_and_long_words)
{
	char big[200];

	ck_assert_str_eq(cut("The cat of THE hat", 0), "the|cat|of|the|hat");
	ck_assert_str_eq(cut("The cat of THE hat", LP_TERMS_STOPWORDS), "cat|hat");
	ck_assert_str_eq(cut("How does Bash check mail?", LP_TERMS_STOPWORDS), "bash|check|mail");
	ck_assert_int_eq(lp_match_is_function_word("the", 3), 1);
	ck_assert_int_eq(lp_match_is_function_word("then", 3), 1);
	ck_assert_int_eq(lp_match_is_function_word("bash", 4), 0);
	ck_assert_int_eq(lp_match_is_function_word("", 0), 0);
	/* a weak word is a stop word to keyphrases, not to retrieval: it is a
	 * question's clue ("How often ...?") */
	ck_assert_int_eq(lp_match_is_function_word("often", 5), 0);
	ck_assert_int_eq(lp_match_is_stopword("often", 5), 1);
	ck_assert_int_eq(lp_match_is_stopword("the", 3), 1);
	ck_assert_int_eq(lp_match_is_stopword("t", 1), 0);

	memset(big, 'A', 150);
	strcpy(big + 150, " end");
	ck_assert_uint_eq(strlen(cut(big, 0)), LP_TERMS_MAX_BYTES + 4);
	ck_assert_str_eq(cut(big, 0) + LP_TERMS_MAX_BYTES, "|end");
	/* A cut never splits a character: 40 two-byte letters, 64 bytes kept. */
	big[0] = '\0';
	for (int i = 0; i < 40; i++)
		strcat(big, "\xc3\xa9");
	ck_assert_uint_eq(strlen(cut(big, 0)), 64);
	/* Once a character is cut, nothing after it joins the term. */
	memset(big, 'a', 63);
	strcpy(big + 63, "\xc3\xa9" "bc");
	ck_assert_uint_eq(strlen(cut(big, 0)), 63);
}
END_TEST

/*
 * The toy corpus, after terms (stop words dropped, lower case):
 *   D0 "Apple banana, APPLE."           -> apple apple banana      |D0| = 3
 *   D1 "banana; cherry"                  -> banana cherry           |D1| = 2
 *   D2 "Cherry cherry the cherry date"   -> cherry x3, date         |D2| = 4
 * N = 3, avgdl = 3.
 * idf(df=1) = ln(1 + 2.5/1.5) = ln(8/3) = 0.980829
 * idf(df=2) = ln(1 + 1.5/2.5) = ln(1.6) = 0.470004
 * With k1 = 1.2, b = 0.75, K(D) = k1 * (0.25 + 0.75 * |D|/3):
 *   K(D0) = 1.2, K(D1) = 0.9, K(D2) = 1.5
 * "apple":  D0 = 0.980829 * 2 * 2.2 / (2 + 1.2) = 1.348640
 * "banana": D0 = 0.470004 * 2.2 / 2.2 = 0.470004
 *           D1 = 0.470004 * 2.2 / 1.9 = 0.544215
 * "cherry": D1 = 0.544215
 *           D2 = 0.470004 * 3 * 2.2 / 4.5 = 0.689339
 * k1 = 0 (presence only): "cherry" D1 = D2 = 0.470004
 * b = 0 (no length penalty): K = 1.2 for all:
 *   "cherry" D2 = 0.470004 * 6.6 / 4.2 = 0.738577, D1 = 0.470004
 */
static const char *const toy[] = {
	"Apple banana, APPLE.",
	"banana; cherry",
	"Cherry cherry the cherry date",
};

/* Tests that take `_i` run twice: 0 queries the index as built, 1 after
 * lp_bm25_finish; both must give the hand-computed scores. */
static int toy_finish;

static struct lp_bm25 *toy_index(double k1, double b)
{
	struct lp_bm25_params p = { k1, b };
	struct lp_diag d;
	struct lp_bm25 *ix;

	lp_diag_init(&d);
	ix = lp_bm25_new(&p, &d);
	ck_assert_ptr_nonnull(ix);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(lp_bm25_add(ix, toy[i], strlen(toy[i]), &d), LP_OK);
	if (toy_finish)
		ck_assert_int_eq(lp_bm25_finish(ix, &d), LP_OK);
	return ix;
}

static void score(struct lp_bm25 *ix, const char *q, double s[3], size_t *n_terms)
{
	struct lp_diag d;

	lp_diag_init(&d);
	s[0] = s[1] = s[2] = -1;
	ck_assert_int_eq(lp_bm25_score(ix, q, strlen(q), s, n_terms, &d), LP_OK);
}

#define EPS 1e-6

START_TEST(test_bm25_hand_computed)
{
	struct lp_bm25 *ix;

	toy_finish = _i;
	ix = toy_index(1.2, 0.75);
	double s[3];
	size_t n;

	ck_assert_uint_eq(lp_bm25_n_spans(ix), 3);
	ck_assert_uint_eq(lp_bm25_n_terms(ix), 5); /* with "the" */
	ck_assert_uint_eq(lp_bm25_n_postings(ix), 6);
	ck_assert_uint_eq(lp_bm25_df(ix, "banana", 6), 2);
	ck_assert_uint_eq(lp_bm25_df(ix, "the", 3), 0);

	score(ix, "apple", s, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_double_eq_tol(s[0], 1.348640, EPS);
	ck_assert_double_eq(s[1], 0.0);
	ck_assert_double_eq(s[2], 0.0);

	score(ix, "Banana?", s, NULL);
	ck_assert_double_eq_tol(s[0], 0.470004, EPS);
	ck_assert_double_eq_tol(s[1], 0.544215, EPS);
	ck_assert_double_eq(s[2], 0.0);

	/* Scores add over query terms; a repeated query term counts once. */
	score(ix, "the banana and cherry, cherry", s, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_double_eq_tol(s[0], 0.470004, EPS);
	ck_assert_double_eq_tol(s[1], 2 * 0.544215, 2 * EPS);
	ck_assert_double_eq_tol(s[2], 0.689339, EPS);
	lp_bm25_free(ix);
}
END_TEST

START_TEST(test_bm25_k1_b)
{
	struct lp_bm25 *ix;
	double s[3];

	toy_finish = _i;
	/* k1 = 0: only presence counts, so D1 and D2 tie on "cherry". */
	ix = toy_index(0.0, 0.75);
	score(ix, "cherry", s, NULL);
	ck_assert_double_eq_tol(s[1], 0.470004, EPS);
	ck_assert_double_eq_tol(s[2], 0.470004, EPS);
	lp_bm25_free(ix);

	/* b = 0: the short D1 loses its bonus, the long D2 its penalty. */
	ix = toy_index(1.2, 0.0);
	score(ix, "cherry", s, NULL);
	ck_assert_double_eq_tol(s[1], 0.470004, EPS);
	ck_assert_double_eq_tol(s[2], 0.738577, EPS);
	lp_bm25_free(ix);
}
END_TEST

START_TEST(test_bm25_empty_and_unknown)
{
	struct lp_bm25 *ix;
	struct lp_diag d;
	double s[3];
	size_t n = 99;

	toy_finish = _i;
	ix = toy_index(1.2, 0.75);
	score(ix, "", s, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert(s[0] == 0 && s[1] == 0 && s[2] == 0);
	score(ix, "The... of, is?", s, &n);
	ck_assert_uint_eq(n, 0);
	score(ix, "zebra quokka", s, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert(s[0] == 0 && s[1] == 0 && s[2] == 0);
	lp_bm25_free(ix);

	/* Empty spans and an unfinished index. */
	lp_diag_init(&d);
	ix = lp_bm25_new(NULL, &d);
	ck_assert_int_eq(lp_bm25_add(ix, "", 0, &d), LP_OK);
	ck_assert_int_eq(lp_bm25_add(ix, "the", 3, &d), LP_OK);
	ck_assert_int_eq(lp_bm25_finish(ix, &d), LP_OK);
	ck_assert_int_eq(lp_bm25_finish(ix, &d), LP_OK);
	ck_assert_int_eq(lp_bm25_add(ix, "late", 4, &d), LP_E_INTERNAL);
	score(ix, "anything", s, &n);
	ck_assert(s[0] == 0 && s[1] == 0);
	lp_bm25_free(ix);
	lp_bm25_free(NULL);
}
END_TEST

START_TEST(test_bm25_cjk_and_memory)
{
	const char *spans[] = {
		"使用 apt-get 安装软件包。",
		"内存管理和交换分区的设置。",
		"网络接口的配置文件。",
	};
	struct lp_diag d;
	struct lp_bm25 *ix;
	double s[3];

	lp_diag_init(&d);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_INDEX), 0);
	ix = lp_bm25_new(NULL, &d);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(lp_bm25_add(ix, spans[i], strlen(spans[i]), &d), LP_OK);
	ck_assert_int_eq(lp_bm25_finish(ix, &d), LP_OK);
	/* Every byte the index holds is tracked, and reported exactly. */
	ck_assert_uint_eq(lp_mem_current(LP_MEM_INDEX), lp_bm25_bytes(ix));
	score(ix, "如何管理内存？", s, NULL);
	ck_assert(s[1] > 0 && s[0] == 0 && s[2] == 0);
	score(ix, "怎样安装软件", s, NULL);
	ck_assert(s[0] > 0 && s[1] == 0 && s[2] == 0);
	lp_bm25_free(ix);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_INDEX), 0);
}
END_TEST

/* A corpus big enough to grow every table several times. */
static void add_generated(struct lp_bm25 *ix, size_t n_spans, struct lp_diag *d,
			  enum lp_status *st)
{
	char text[512];

	*st = LP_OK;
	for (size_t s = 0; s < n_spans && *st == LP_OK; s++) {
		size_t used = 0;
		for (size_t w = 0; w < 40; w++)
			used += (size_t)snprintf(text + used, sizeof(text) - used, "w%zu ",
						 (s * 7 + w * w) % 3001);
		*st = lp_bm25_add(ix, text, used, d);
	}
}

START_TEST(test_bm25_growth)
{
	struct lp_diag d;
	struct lp_bm25 *ix;
	enum lp_status st;
	double *s = malloc(2000 * sizeof(*s));
	size_t total = 0;

	double *before = malloc(2000 * sizeof(*before));
	const char *q = "w0 w17 w17 w2999 w1500 nothing";

	lp_diag_init(&d);
	ix = lp_bm25_new(NULL, &d);
	add_generated(ix, 2000, &d, &st);
	ck_assert_int_eq(st, LP_OK);
	/* As built and after finish, the same scores. */
	ck_assert_int_eq(lp_bm25_score(ix, q, strlen(q), before, NULL, &d), LP_OK);
	ck_assert_int_eq(lp_bm25_finish(ix, &d), LP_OK);
	ck_assert_int_eq(lp_bm25_score(ix, q, strlen(q), s, NULL, &d), LP_OK);
	for (size_t sp = 0; sp < 2000; sp++)
		ck_assert_double_eq_tol(s[sp], before[sp], 1e-9);
	free(before);
	ck_assert_uint_eq(lp_bm25_n_spans(ix), 2000);
	ck_assert_uint_le(lp_bm25_n_terms(ix), 3001);
	ck_assert_uint_gt(lp_bm25_n_terms(ix), 1024);
	/* Postings per span are its distinct words: recount "w0" by hand. */
	for (size_t sp = 0; sp < 2000; sp++)
		for (size_t w = 0; w < 40; w++)
			if ((sp * 7 + w * w) % 3001 == 0) {
				total++;
				break;
			}
	ck_assert_uint_eq(lp_bm25_df(ix, "w0", 2), total);
	ck_assert_int_eq(lp_bm25_score(ix, "w0", 2, s, NULL, &d), LP_OK);
	for (size_t sp = 0; sp < 2000; sp++)
		total -= s[sp] > 0;
	ck_assert_uint_eq(total, 0);
	lp_bm25_free(ix);
	free(s);
}
END_TEST

/* Failing the i-th tracked allocation fails cleanly and leaks nothing. */
START_TEST(test_bm25_alloc_faults)
{
	char n[16];
	struct lp_diag d;
	struct lp_bm25 *ix;
	enum lp_status st = LP_OK;

	snprintf(n, sizeof(n), "%d", _i);
	setenv("LPIPE_FAIL_ALLOC", n, 1);
	lp_diag_init(&d);
	ix = lp_bm25_new(NULL, &d);
	if (ix) {
		add_generated(ix, 300, &d, &st);
		if (st == LP_OK)
			st = lp_bm25_finish(ix, &d);
	} else {
		st = d.status;
	}
	ck_assert(st == LP_OK || st == LP_E_NOMEM);
	if (st == LP_E_NOMEM)
		ck_assert_ptr_nonnull(strstr(d.msg, "LPIPE_FAIL_ALLOC"));
	lp_bm25_free(ix);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_INDEX), 0);
}
END_TEST

static void check_topk(const double *s, size_t n, size_t k, const size_t *want, size_t n_want)
{
	size_t out[16];

	ck_assert_uint_eq(lp_topk_select(s, n, k, out), n_want);
	for (size_t i = 0; i < n_want; i++)
		ck_assert_uint_eq(out[i], want[i]);
}

START_TEST(test_topk_order_and_ties)
{
	const double s[] = { 1, 3, 3, 2, NAN, 3 };

	check_topk(s, 6, 3, (const size_t[]){ 1, 2, 5 }, 3);
	check_topk(s, 6, 1, (const size_t[]){ 1 }, 1);
	check_topk(s, 6, 10, (const size_t[]){ 1, 2, 5, 3, 0, 4 }, 6);
	check_topk(s, 0, 3, NULL, 0);
	check_topk(s, 6, 0, NULL, 0);
}
END_TEST

static const double *cmp_scores;

static int cmp_rank(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (cmp_scores[i] != cmp_scores[j])
		return cmp_scores[i] > cmp_scores[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* Against a full sort, on random scores with many ties. */
START_TEST(test_topk_matches_sort)
{
	enum { N = 500 };
	double s[N];
	size_t all[N], out[N];

	srand(12345);
	for (int round = 0; round < 50; round++) {
		size_t k = (size_t)rand() % (N + 5);
		for (size_t i = 0; i < N; i++) {
			s[i] = (double)(rand() % 20) / 4.0;
			all[i] = i;
		}
		cmp_scores = s;
		qsort(all, N, sizeof(all[0]), cmp_rank);
		size_t m = lp_topk_select(s, N, k, out);
		ck_assert_uint_eq(m, k < N ? k : N);
		for (size_t i = 0; i < m; i++)
			ck_assert_uint_eq(out[i], all[i]);
	}
}
END_TEST

/* ---- the retrieve stage ---- */

static struct lp_pipeline *load(const char *yaml)
{
	struct lp_pipeline *p = NULL;
	struct lp_diag d;
	enum lp_status st;

	lp_diag_init(&d);
	st = lp_pipeline_load_text("r.yaml", yaml, strlen(yaml), NULL, NULL, 0, &p, &d);
	ck_assert_msg(st == LP_OK, "%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
	return p;
}

/* Loading fails at line:col with a message containing `frag`. */
static void load_fails(const char *yaml, int line, int col, const char *frag)
{
	struct lp_pipeline *p = NULL;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_pipeline_load_text("r.yaml", yaml, strlen(yaml), NULL, NULL, 0,
					       &p, &d), LP_E_CONFIG);
	ck_assert_ptr_null(p);
	ck_assert_msg(d.line == line && d.col == col && strstr(d.msg, frag),
		      "expected %d:%d '...%s...', got %d:%d '%s'", line, col, frag,
		      d.line, d.col, d.msg);
}

/* describe() gives `want`, and reads back as the same options. */
static void describe_is(const char *yaml, const char *want)
{
	struct lp_pipeline *p = load(yaml), *again;
	struct lp_buf b, y;

	ck_assert_uint_eq(p->n_stages, 1);
	ck_assert_ptr_eq(p->stages[0].kind, &lp_stage_retrieve);
	lp_buf_init(&b);
	p->stages[0].kind->describe(p->stages[0].opts, &b);
	ck_assert_str_eq(b.data, want);
	lp_buf_init(&y);
	lp_buf_addf(&y, "version: 1\nstages:\n  - retrieve: %s\n", b.data);
	again = load(y.data);
	lp_buf_reset(&b);
	again->stages[0].kind->describe(again->stages[0].opts, &b);
	ck_assert_str_eq(b.data, want);
	lp_buf_release(&y);
	lp_buf_release(&b);
	lp_pipeline_free(again);
	lp_pipeline_free(p);
}

START_TEST(test_stage_parse)
{
	describe_is("version: 1\nstages:\n  - retrieve: {query: bash mail}\n",
		    "{query: \"bash mail\", top_k: 8, order: score}");
	describe_is("version: 1\nretrieval: {k1: 2, b: 0.5}\nstages:\n"
		    "  - retrieve: {query: 'say \"hi\"', top_k: 3, order: document}\n",
		    "{query: \"say \\\"hi\\\"\", top_k: 3, order: document}");

	load_fails("version: 1\nstages:\n  - retrieve: {top_k: 3}\n", 3, 15, "missing key 'query'");
	load_fails("version: 1\nstages:\n  - retrieve: {query: ''}\n", 3, 23, "'query' is empty");
	load_fails("version: 1\nstages:\n  - retrieve: {query: q, top_k: 0}\n", 3, 33, "top_k");
	load_fails("version: 1\nstages:\n  - retrieve: {query: q, order: random}\n", 3, 33,
		   "random");
	load_fails("version: 1\nstages:\n  - retrieve: {query: q, topk: 3}\n", 3, 26, "top_k");
}
END_TEST

/* Five one-line chunks. After stop words: 0 prompt printed; 1 bash check
 * mail; 2 history saved exit; 3 mail check mail check interval; 4 check
 * spelling. For "mail check" chunk 3 (both terms twice) beats chunk 1
 * (both once), which beats chunk 4 ("check" only); 0 and 2 score 0. */
static const char stage_text[] =
	"the prompt is printed.\n"
	"bash can check mail.\n"
	"history is saved on exit.\n"
	"mail check mail check interval.\n"
	"check the spelling.\n";

static void stage_doc(struct lp_doc *doc, const struct lp_pipeline *p)
{
	size_t off = 0, i = 0;

	lp_doc_init(doc, p);
	doc->text = stage_text;
	doc->len = strlen(stage_text);
	doc->chunks = lp_arena_alloc(&doc->arena, 5 * sizeof(*doc->chunks));
	for (size_t at = 0; at < doc->len; at++)
		if (stage_text[at] == '\n') {
			doc->chunks[i].off = off;
			doc->chunks[i].len = at + 1 - off;
			off = at + 1;
			i++;
		}
	doc->n_chunks = i;
	doc->trace = lp_arena_alloc(&doc->arena, sizeof(*doc->trace));
	doc->trace[0].kind = "retrieve";
	doc->n_trace = 1;
}

static enum lp_status run_retrieve(const char *opts, struct lp_doc *doc,
				   struct lp_pipeline **p, struct lp_diag *d)
{
	char yaml[256];

	snprintf(yaml, sizeof(yaml), "version: 1\nstages:\n  - retrieve: %s\n", opts);
	*p = load(yaml);
	stage_doc(doc, *p);
	ck_assert_uint_eq(doc->n_chunks, 5);
	lp_diag_init(d);
	return (*p)->stages[0].kind->run(doc, (*p)->stages[0].opts, d);
}

static void kept(const char *opts, const size_t *want, size_t n_want, const char *note)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;

	ck_assert_int_eq(run_retrieve(opts, &doc, &p, &d), LP_OK);
	ck_assert_uint_eq(doc.n_selection, n_want);
	for (size_t i = 0; i < n_want; i++)
		ck_assert_uint_eq(doc.selection[i], want[i]);
	/* Exactly the kept chunks are marked; every chunk has its score. */
	for (size_t c = 0; c < 5; c++) {
		int in = 0;
		for (size_t i = 0; i < n_want; i++)
			in |= want[i] == c;
		ck_assert_int_eq(doc.chunks[c].selected, in);
	}
	ck_assert_str_eq(doc.trace[0].note, note);
	ck_assert(doc.chunks[3].score > doc.chunks[1].score);
	ck_assert(doc.chunks[1].score > doc.chunks[4].score);
	ck_assert(doc.chunks[4].score > 0 && doc.chunks[0].score == 0);
	lp_doc_release(&doc);
	lp_pipeline_free(p);
}

START_TEST(test_stage_run_orders)
{
	kept("{query: 'How often is mail checked? check', top_k: 2}",
	     (const size_t[]){ 3, 1 }, 2, "kept 2 of 5 chunks");
	kept("{query: mail check, top_k: 3, order: document}",
	     (const size_t[]){ 1, 3, 4 }, 3, "kept 3 of 5 chunks");
	/* More than there are: all kept, the zero scores in document order. */
	kept("{query: mail check, top_k: 50}",
	     (const size_t[]){ 3, 1, 4, 0, 2 }, 5, "kept 5 of 5 chunks");
}
END_TEST

/* retrieval.k1 reaches the stage: with k1 = 0 only presence counts, so
 * chunks 1 and 3 (both terms) tie and the lower index comes first. */
START_TEST(test_stage_uses_retrieval_params)
{
	struct lp_pipeline *p = load("version: 1\nretrieval: {scorer: bm25, k1: 0}\n"
				     "stages:\n  - retrieve: {query: mail check, top_k: 2}\n");
	struct lp_doc doc;
	struct lp_diag d;

	stage_doc(&doc, p);
	lp_diag_init(&d);
	ck_assert_int_eq(p->stages[0].kind->run(&doc, p->stages[0].opts, &d), LP_OK);
	ck_assert_uint_eq(doc.n_selection, 2);
	ck_assert_uint_eq(doc.selection[0], 1);
	ck_assert_uint_eq(doc.selection[1], 3);
	ck_assert_double_eq_tol(doc.chunks[1].score, doc.chunks[3].score, 1e-12);
	lp_doc_release(&doc);
	lp_pipeline_free(p);
}
END_TEST

START_TEST(test_stage_run_errors_and_narrowing)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;
	size_t set[] = { 2, 0, 3 };

	ck_assert_int_eq(run_retrieve("{query: 'the? of!'}", &doc, &p, &d), LP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(d.msg, "no words to search for"));
	ck_assert_ptr_null(doc.trace[0].note);
	lp_doc_release(&doc);
	lp_pipeline_free(p);

	/* A second retrieve ranks only what the first one kept. */
	p = load("version: 1\nstages:\n  - retrieve: {query: mail, top_k: 1}\n");
	stage_doc(&doc, p);
	doc.selection = set;
	doc.n_selection = 3;
	ck_assert_int_eq(p->stages[0].kind->run(&doc, p->stages[0].opts, &d), LP_OK);
	ck_assert_uint_eq(doc.n_selection, 1);
	ck_assert_uint_eq(doc.selection[0], 3);
	ck_assert_int_eq(doc.chunks[1].selected, 0); /* has "mail", was not in the set */
	ck_assert(doc.chunks[1].score == 0);
	lp_doc_release(&doc);

	/* No chunks: a split stage is missing. */
	stage_doc(&doc, p);
	doc.n_chunks = 0;
	ck_assert_int_eq(p->stages[0].kind->run(&doc, p->stages[0].opts, &d), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(d.msg, "split"));
	lp_doc_release(&doc);
	lp_pipeline_free(p);
}
END_TEST

/* order: document presents the kept chunks by position; a stage that cuts
 * to a budget takes lp_doc_best_first, which puts them back by score, so
 * the cut drops the lowest-scored one (4), not the last one. */
START_TEST(test_stage_best_first_under_document_order)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;
	size_t n, *best;

	ck_assert_int_eq(run_retrieve("{query: mail check, top_k: 3, order: document}", &doc, &p,
				      &d), LP_OK);
	ck_assert_uint_eq(doc.selection[0], 1);
	ck_assert_uint_eq(doc.selection[2], 4);
	best = lp_doc_best_first(&doc, &n);
	ck_assert_ptr_nonnull(best);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(best[0], 3);
	ck_assert_uint_eq(best[1], 1);
	ck_assert_uint_eq(best[2], 4);
	/* the selection itself keeps its order */
	ck_assert_uint_eq(doc.selection[0], 1);
	lp_doc_release(&doc);
	lp_pipeline_free(p);
}
END_TEST

static const char mail_chunk[] =
	"'MAILCHECK'\n     How often (in seconds) that the shell should check for mail in the\n"
	"     files specified in the 'MAILPATH' or 'MAIL' variables.  The default\n"
	"     is 60 seconds.  When it is time to check for mail, the shell does\n"
	"     so before displaying the primary prompt.";
static const char other_chunk[] =
	"The return status is zero unless a NAME is not a shell builtin. "
	"Mail is a program. Nothing else here.";

/* Sentences are ranked by the idf of the question words they hold: the
 * one naming "often" and "mail" beats those that share only "shell". */
START_TEST(test_evidence_rank)
{
	struct lp_evidence_src src[2] = {
		{ 7, other_chunk, sizeof(other_chunk) - 1, 0 },
		{ 3, mail_chunk, sizeof(mail_chunk) - 1, 0 },
	};
	static const char q[] = "How often does the shell check for mail?";
	struct lp_evidence_sent *s;
	size_t n;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_evidence_rank(src, 2, NULL, 0, q, strlen(q), &s, &n, &d), LP_OK);
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(s[0].src, 1);
	ck_assert_int_eq(strncmp(mail_chunk + s[0].off, "'MAILCHECK'", 11), 0);
	for (size_t i = 1; i < n; i++)
		ck_assert(s[i - 1].score >= s[i].score);
	/* "Nothing else here." holds no question word */
	ck_assert_double_eq(s[n - 1].score, 0);
	ck_assert_double_eq(s[n - 1].cover, 0);
	/* the best holds every word that is no stop word; the others less */
	ck_assert_double_eq_tol(s[0].cover, 1.0, 1e-9);
	for (size_t i = 1; i < n; i++)
		ck_assert(s[i].cover < 1.0 && s[i].cover >= 0);
	lp_mem_free(s);

	/* a prior lifts every sentence of its source: the "other" chunk's
	 * "Mail is a program." now comes before the mail chunk's second */
	src[0].prior = 40;
	ck_assert_int_eq(lp_evidence_rank(src, 2, NULL, 0, q, strlen(q), &s, &n, &d), LP_OK);
	ck_assert_uint_eq(s[0].src, 0);
	lp_mem_free(s);
}
END_TEST

/* Words meet their inflections through their stems; what is not an
 * English word of four letters or more is its own stem. */
START_TEST(test_stem)
{
	struct lp_stemmer *st = lp_stemmer_open();
	const char *a, *b;
	size_t na, nb;

	ck_assert_ptr_nonnull(st);
	na = lp_stem(st, "replacing", 9, &a);
	ck_assert_uint_eq(na, 6);
	ck_assert_int_eq(strncmp(a, "replac", 6), 0);
	nb = lp_stem(st, "replace", 7, &b);
	ck_assert_uint_eq(nb, 6);
	ck_assert_int_eq(strncmp(b, "replac", 6), 0);
	na = lp_stem(st, "keeps", 5, &a);
	ck_assert_int_eq(strncmp(a, "keep", na), 0);
	ck_assert_uint_eq(na, 4);
	/* short words, names with digits and CJK stay as they are */
	ck_assert_uint_eq(lp_stem(st, "uses", 4, &a), 3);
	ck_assert_uint_eq(lp_stem(st, "ls", 2, &a), 2);
	ck_assert_uint_eq(lp_stem(st, "x86s", 4, &a), 4);
	ck_assert_uint_eq(lp_stem(st, "\xe5\x86\x85\xe5\xad\x98", 6, &a), 6);
	/* without a stemmer every term is its own stem */
	ck_assert_uint_eq(lp_stem(NULL, "replacing", 9, &a), 9);
	lp_stemmer_close(st);
}
END_TEST

/* What a sentence tells of the question beyond what its entry's term
 * names: all of "What does the -C option do?" once the term holds "-C"
 * and the kind word "option" is given; none of what "What is the default
 * value of IFS?" asks beyond "IFS" and "value". */
START_TEST(test_evidence_cover_given)
{
	static const char q1[] = "What does the -C option do?", q2[] = "What is the default value of IFS?",
			  s1[] = "Change to DIR before performing any operations.",
			  s2[] = "A list of characters that separate fields.",
			  s3[] = "The default is space, tab and newline.";
	struct lp_evidence_src corpus[2] = { { 0, s1, sizeof(s1) - 1, 0 },
					     { 1, s2, sizeof(s2) - 1, 0 } };
	struct lp_evidence_src given[2] = { { 0, "-C, --directory=DIR", 19, 0 },
					    { 0, "option ", 7, 0 } };
	struct lp_evidence_src ifs[2] = { { 0, "IFS", 3, 0 }, { 0, "value ", 6, 0 } };

	/* alone the sentence holds nothing of either question */
	ck_assert_double_eq(lp_evidence_cover(corpus, 2, q1, strlen(q1), NULL, 0, s1, strlen(s1)), 0);
	/* the term and the kind name all there is: nothing more to hold */
	ck_assert_double_eq(lp_evidence_cover(corpus, 2, q1, strlen(q1), given, 2, s1, strlen(s1)),
			    1.0);
	/* "default" is left, and only a sentence that says it holds it */
	ck_assert_double_eq(lp_evidence_cover(corpus, 2, q2, strlen(q2), ifs, 2, s2, strlen(s2)), 0);
	ck_assert_double_eq(lp_evidence_cover(corpus, 2, q2, strlen(q2), ifs, 2, s3, strlen(s3)),
			    1.0);
	/* the term alone leaves "default" and "value" */
	ck_assert_double_eq_tol(lp_evidence_cover(corpus, 2, q2, strlen(q2), ifs, 1, s3, strlen(s3)),
				0.5, 1e-9);
}
END_TEST

/* The sentences of text, ranked against q as one passage: two of them. */
static struct lp_evidence_sent *rank_two(const char *text, const char *q)
{
	struct lp_evidence_src src = { 0, text, strlen(text), 0 };
	struct lp_evidence_sent *s;
	size_t n;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_evidence_rank(&src, 1, NULL, 0, q, strlen(q), &s, &n, &d), LP_OK);
	ck_assert_uint_eq(n, 2);
	return s;
}

/* The ranking reads the question's words by their stems: "replacing" is
 * the "replace" of the sentence that answers, not a word it lacks. */
START_TEST(test_evidence_rank_stems)
{
	static const char text[] = "Overwrite existing files when extracting.\n\n"
				   "Don't replace existing files when extracting.";
	struct lp_evidence_sent *s =
		rank_two(text, "Which option keeps tar from replacing existing files when extracting?");

	ck_assert_int_eq(strncmp(text + s[0].off, "Don't replace", 13), 0);
	ck_assert(s[0].cover > s[1].cover);
	lp_mem_free(s);
}
END_TEST

/* The question's phrases count: both sentences hold "command", "found",
 * "return" and "status", only one holds "command is not found". */
START_TEST(test_evidence_rank_phrases)
{
	static const char text[] =
		"If a command is found but is not executable, the return status is 126. "
		"If a command is not found, the child process created to execute it "
		"returns a status of 127.";
	struct lp_evidence_sent *s =
		rank_two(text, "What exit status does bash return when a command is not found?");

	ck_assert_ptr_nonnull(strstr(text + s[0].off, "127"));
	ck_assert_uint_gt(s[0].off, s[1].off);
	ck_assert(s[0].score > s[1].score);
	lp_mem_free(s);
}
END_TEST

/* A table is ranked row by row: the row that names the log files comes
 * first, not the whole table the sentence splitter sees as one. */
START_TEST(test_evidence_rank_table_rows)
{
	static const char text[] =
		"    +------------------------------------------+\n"
		"    |directory|content                         |\n"
		"    |---------+--------------------------------|\n"
		"    |/etc/    |system wide configuration files |\n"
		"    |---------+--------------------------------|\n"
		"    |/var/log/|system log files                |\n"
		"    |---------+--------------------------------|\n"
		"    |/home/   |the home directories of users   |\n"
		"    +------------------------------------------+\n";
	static const char q[] = "Which directory holds the system log files?";
	struct lp_evidence_src src = { 0, text, sizeof(text) - 1, 0 };
	struct lp_evidence_sent *s;
	size_t n;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_evidence_rank(&src, 1, NULL, 0, q, strlen(q), &s, &n, &d), LP_OK);
	ck_assert_uint_eq(n, 4); /* the header and three rows; no rule */
	ck_assert_int_eq(strncmp(text + s[0].off, "|/var/log/|system log files", 27), 0);
	ck_assert_ptr_null(memchr(text + s[0].off, '\n', s[0].len));
	for (size_t i = 0; i < n; i++)
		ck_assert_ptr_null(memmem(text + s[i].off, s[i].len, "|--", 3));
	lp_mem_free(s);
}
END_TEST

/* Of two sentences of one passage that match alike, the shorter first. */
START_TEST(test_evidence_rank_shorter_on_tie)
{
	static const char text[] =
		"EPOCHREALTIME expands to the seconds since the Epoch as a floating point "
		"value with micro-second granularity. "
		"EPOCHSECONDS expands to the seconds since the Epoch.";
	struct lp_evidence_sent *s =
		rank_two(text, "Which variable expands to the seconds since the Epoch?");

	ck_assert(s[0].score == s[1].score);
	ck_assert_int_eq(strncmp(text + s[0].off, "EPOCHSECONDS", 12), 0);
	lp_mem_free(s);
}
END_TEST

START_TEST(test_evidence_quote_match)
{
	struct lp_span sp;
	const char *t = mail_chunk;
	size_t len = sizeof(mail_chunk) - 1;
	static const char zh[] = "tmpfs 是一个临时文件系统。它的文件都保存在虚拟内存中。";

	/* verbatim, up to case and line breaks */
	ck_assert_double_eq(lp_evidence_quote_match("the default is 60 seconds", 25, t, len, &sp),
			    1.0);
	ck_assert_int_eq(strncmp(t + sp.off, "The default", 11), 0);
	ck_assert_uint_eq(sp.len, strlen("The default\n     is 60 seconds."));
	/* one word of eight changed: 7/8 */
	ck_assert_double_eq_tol(lp_evidence_quote_match("When it is time to look for mail,", 33,
							 t, len, NULL), 7.0 / 8, 1e-9);
	/* across two sentences */
	ck_assert_double_eq(lp_evidence_quote_match("variables. The default is 60", 28, t, len,
						    NULL), 1.0);
	/* the question echoed back is no quote */
	ck_assert(lp_evidence_quote_match("The shell looks for new mail unless told otherwise",
					  50, t, len, NULL) < 0.75);
	ck_assert_double_eq(lp_evidence_quote_match("", 0, t, len, &sp), 0.0);
	ck_assert_uint_eq(sp.len, 0);
	/* Chinese, by character bigrams */
	ck_assert_double_eq(lp_evidence_quote_match("它的文件都保存在虚拟内存中", 39, zh,
						    strlen(zh), &sp), 1.0);
	ck_assert(lp_evidence_quote_match("文件保存在磁盘上", 24, zh, strlen(zh), NULL) < 0.75);
}
END_TEST

START_TEST(test_evidence_support)
{
	static const char q[] = "How often does the shell check for mail?";
	size_t n;

	/* "60", "seconds": the question's words do not count */
	ck_assert_uint_eq(lp_evidence_support("The shell checks mail every 60 seconds.", 39, q,
					      strlen(q), mail_chunk, strlen(mail_chunk), &n), 2);
	ck_assert_uint_eq(n, 4); /* checks, every, 60, seconds */
	ck_assert_uint_eq(lp_evidence_support("Every 60 seconds", 16, q, strlen(q), other_chunk,
					      strlen(other_chunk), &n), 0);
	ck_assert_uint_eq(n, 3);
	/* only question words: they are what is left to look for */
	ck_assert_uint_eq(lp_evidence_support("The shell does check mail.", 26, q, strlen(q),
					      other_chunk, strlen(other_chunk), &n), 2);
	ck_assert_uint_eq(n, 3);
}
END_TEST

/* An answer that only restates the question, inflected, echoes it; one
 * word the question lacks ("nameserver") and it does not. */
START_TEST(test_evidence_echoes)
{
	static const char q[] = "If the DNS server is at 192.168.11.1, which line does "
				"/etc/resolv.conf contain?";
	static const char echo[] = "The line /etc/resolv.conf contains the DNS server at "
				   "192.168.11.1.";
	static const char says[] = "The line /etc/resolv.conf contains the nameserver "
				   "192.168.11.1.";

	ck_assert(lp_evidence_echoes(echo, strlen(echo), q, strlen(q)));
	ck_assert(!lp_evidence_echoes(says, strlen(says), q, strlen(q)));
	ck_assert(!lp_evidence_echoes("The", 3, q, strlen(q))); /* no content term */
	ck_assert(!lp_evidence_echoes("", 0, q, strlen(q)));
	ck_assert(lp_evidence_echoes("内核维护主机名", 21, "内核维护主机名吗？", 27));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("retrieve");
	TCase *tc = tcase_create("terms");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_terms_ascii);
	tcase_add_test(tc, test_hashembed_folds_width_then_case);
	tcase_add_test(tc, test_terms_unicode_letters);
	tcase_add_test(tc, test_terms_cjk_bigrams);
	tcase_add_test(tc, test_terms_stopwords_and_long_words);
	suite_add_tcase(s, tc);

	tc = tcase_create("bm25");
	tcase_add_loop_test(tc, test_bm25_hand_computed, 0, 2);
	tcase_add_loop_test(tc, test_bm25_k1_b, 0, 2);
	tcase_add_loop_test(tc, test_bm25_empty_and_unknown, 0, 2);
	tcase_add_test(tc, test_bm25_cjk_and_memory);
	tcase_add_test(tc, test_bm25_growth);
	tcase_add_loop_test(tc, test_bm25_alloc_faults, 1, 46);
	suite_add_tcase(s, tc);

	tc = tcase_create("topk");
	tcase_add_test(tc, test_topk_order_and_ties);
	tcase_add_test(tc, test_topk_matches_sort);
	suite_add_tcase(s, tc);

	tc = tcase_create("stage");
	tcase_add_test(tc, test_stage_parse);
	tcase_add_test(tc, test_stage_run_orders);
	tcase_add_test(tc, test_stage_uses_retrieval_params);
	tcase_add_test(tc, test_stage_run_errors_and_narrowing);
	tcase_add_test(tc, test_stage_best_first_under_document_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("evidence");
	tcase_add_test(tc, test_evidence_rank);
	tcase_add_test(tc, test_evidence_rank_phrases);
	tcase_add_test(tc, test_evidence_rank_shorter_on_tie);
	tcase_add_test(tc, test_evidence_rank_table_rows);
	tcase_add_test(tc, test_stem);
	tcase_add_test(tc, test_evidence_rank_stems);
	tcase_add_test(tc, test_evidence_cover_given);
	tcase_add_test(tc, test_evidence_quote_match);
	tcase_add_test(tc, test_evidence_support);
	tcase_add_test(tc, test_evidence_echoes);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
