/* check_config.c - YAML tree, typed getters, --set overrides, pipeline validation.
 *
 * The stage table is replaced by three test kinds defined here (split,
 * answer, verify), whose parse functions use the getters the way real
 * stages do, so errors inside stage options are checked end to end.
 */
#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"
#include "config/node.h"
#include "config/pipeline.h"
#include "config/schema.h"
#include "core/buf.h"
#include "core/mem.h"
#include "stages/stage.h"

/* ---- test stage kinds ------------------------------------------------------ */

struct split_opts {
	int unit;
	long long size, overlap;
	int boundary;
};

static const char *const unit_names[] = { "tokens", "chars", NULL };
static const char *const boundary_names[] = { "none", "sentence", "paragraph", NULL };

static enum lp_status split_parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
				  const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "unit", "size", "overlap", "boundary", NULL };
	struct split_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	enum lp_status st;

	if (!o)
		return LP_E_NOMEM;
	if ((st = lp_cfg_check_keys(c, opts, keys)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, opts, "unit", unit_names, 0, &o->unit)) != LP_OK ||
	    (st = lp_cfg_get_int(c, opts, "size", 384, 1, 100000, &o->size)) != LP_OK ||
	    (st = lp_cfg_get_int(c, opts, "overlap", 0, 0, 10000, &o->overlap)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, opts, "boundary", boundary_names, 1, &o->boundary)) != LP_OK)
		return st;
	if (o->overlap >= o->size)
		return lp_cfg_error(c, lp_node_get(opts, "overlap"),
				    "'overlap' (%lld) must be smaller than 'size' (%lld)",
				    o->overlap, o->size);
	*out = o;
	return LP_OK;
}

static void split_describe(const void *opts, struct lp_buf *out)
{
	const struct split_opts *o = opts;

	lp_buf_addf(out, "{unit: %s, size: %lld, overlap: %lld, boundary: %s}",
		    unit_names[o->unit], o->size, o->overlap, boundary_names[o->boundary]);
}

struct answer_opts {
	const char *question;
	long long max_tokens;
	double temperature;
};

static enum lp_status answer_parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
				   const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "question", "max_tokens", "temperature", NULL };
	struct answer_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	enum lp_status st;

	if (!o)
		return LP_E_NOMEM;
	if ((st = lp_cfg_check_keys(c, opts, keys)) != LP_OK ||
	    (st = lp_cfg_get_string(c, opts, "question", "What is it about?", &o->question)) != LP_OK ||
	    (st = lp_cfg_get_int(c, opts, "max_tokens", 200, 1, p->model.context,
				 &o->max_tokens)) != LP_OK ||
	    (st = lp_cfg_get_double(c, opts, "temperature", 0, 0, 2, &o->temperature)) != LP_OK)
		return st;
	*out = o;
	return LP_OK;
}

static void answer_describe(const void *opts, struct lp_buf *out)
{
	const struct answer_opts *o = opts;

	lp_buf_adds(out, "{question: ");
	lp_cfg_quote(out, o->question);
	lp_buf_addf(out, ", max_tokens: %lld, temperature: %g}", o->max_tokens, o->temperature);
}

struct verify_opts {
	long long auto_n, min_words;
	const char **must, **regex;
	size_t n_must, n_regex;
	int strict;
	size_t budget;
};

static enum lp_status verify_parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
				   const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "keyphrases", "min_words", "strict", "budget", NULL };
	static const char *const kp_keys[] = { "auto", "must", "regex", NULL };
	struct verify_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	const struct lp_node *kp = lp_node_get(opts, "keyphrases");
	enum lp_status st;

	if (!o)
		return LP_E_NOMEM;
	if ((st = lp_cfg_check_keys(c, opts, keys)) != LP_OK ||
	    (st = lp_cfg_check_keys(c, kp, kp_keys)) != LP_OK ||
	    (st = lp_cfg_get_int(c, kp, "auto", 0, 0, 100, &o->auto_n)) != LP_OK ||
	    (st = lp_cfg_get_string_list(c, kp, "must", &o->must, &o->n_must)) != LP_OK ||
	    (st = lp_cfg_get_string_list(c, kp, "regex", &o->regex, &o->n_regex)) != LP_OK ||
	    (st = lp_cfg_get_int(c, opts, "min_words", 0, 0, LLONG_MAX, &o->min_words)) != LP_OK ||
	    (st = lp_cfg_get_bool(c, opts, "strict", 0, &o->strict)) != LP_OK ||
	    (st = lp_cfg_get_size(c, opts, "budget", 0, &o->budget)) != LP_OK)
		return st;
	*out = o;
	return LP_OK;
}

static void add_list(struct lp_buf *out, const char **items, size_t n)
{
	lp_buf_addc(out, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			lp_buf_adds(out, ", ");
		lp_cfg_quote(out, items[i]);
	}
	lp_buf_addc(out, ']');
}

static void verify_describe(const void *opts, struct lp_buf *out)
{
	const struct verify_opts *o = opts;

	lp_buf_addf(out, "{keyphrases: {auto: %lld, must: ", o->auto_n);
	add_list(out, o->must, o->n_must);
	lp_buf_adds(out, ", regex: ");
	add_list(out, o->regex, o->n_regex);
	lp_buf_addf(out, "}, min_words: %lld, strict: %s, budget: %zu}", o->min_words,
		    o->strict ? "true" : "false", o->budget);
}

static const struct lp_stage_kind split_kind = { "split", split_parse, NULL, split_describe };
static const struct lp_stage_kind answer_kind = { "answer", answer_parse, NULL, answer_describe };
static const struct lp_stage_kind verify_kind = { "verify", verify_parse, NULL, verify_describe };
static const struct lp_stage_kind *const test_kinds[] = {
	&split_kind, &answer_kind, &verify_kind, NULL
};

/* ---- helpers ------------------------------------------------------------------ */

static void setup(void)
{
	lp_stage_registry_override(test_kinds);
	unsetenv("LPIPE_TEST_UNSET");
}

static void teardown(void)
{
	lp_stage_registry_override(NULL);
}

static const char *const q_names[] = { "question" };
static const char *const q_values[] = { "How often is mail checked?" };
static const struct lp_vars q_vars = { q_names, q_values, 1 };

static struct lp_pipeline *load_sets(const char *text, const char *const *sets, size_t n)
{
	struct lp_pipeline *p = NULL;
	struct lp_diag d;
	enum lp_status st;

	lp_diag_init(&d);
	st = lp_pipeline_load_text("p.yaml", text, strlen(text), &q_vars, sets, n, &p, &d);
	ck_assert_msg(st == LP_OK, "expected success, got %d: %s:%d:%d: %s", st, d.file,
		      d.line, d.col, d.msg);
	ck_assert_ptr_nonnull(p);
	return p;
}

static struct lp_pipeline *load(const char *text)
{
	return load_sets(text, NULL, 0);
}

/* Load must fail with `file:line:col` and a message containing `frag`. */
static void expect_error_sets(const char *text, const char *const *sets, size_t n,
			      const char *file, int line, int col, const char *frag)
{
	struct lp_pipeline *p = (void *)1;
	struct lp_diag d;
	enum lp_status st;

	lp_diag_init(&d);
	st = lp_pipeline_load_text("p.yaml", text, strlen(text), &q_vars, sets, n, &p, &d);
	ck_assert_msg(st == LP_E_CONFIG, "expected a config error, got %d (%s)", st, d.msg);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(d.status, LP_E_CONFIG);
	ck_assert_msg(!strcmp(d.file, file) && d.line == line && d.col == col &&
		      strstr(d.msg, frag),
		      "expected %s:%d:%d '...%s...', got %s:%d:%d '%s'", file, line, col, frag,
		      d.file, d.line, d.col, d.msg);
}

static void expect_error(const char *text, int line, int col, const char *frag)
{
	expect_error_sets(text, NULL, 0, "p.yaml", line, col, frag);
}

#define HEAD "version: 1\n"
#define STAGES "stages:\n  - split: {size: 100}\n"

/* ---- model.by_lang ------------------------------------------------------------- */

START_TEST(test_model_by_lang)
{
	struct lp_pipeline *p = load(HEAD "model:\n  path: a.gguf\n  context: 1024\n"
				     "  kv_type: q8_0\n  by_lang:\n"
				     "    zh: {path: b.gguf, context: 512}\n    und: ~\n" STAGES);
	const struct lp_model_cfg *m = &p->model, *e;
	int which;

	ck_assert_ptr_null(m->by_lang[0]);
	ck_assert_ptr_nonnull(m->by_lang[1]);
	ck_assert_ptr_null(m->by_lang[2]); /* null: no entry */
	e = lp_model_cfg_for_lang(m, "zh", &which);
	ck_assert_int_eq(which, 1);
	ck_assert_str_eq(lp_model_lang_name(which), "zh");
	ck_assert_str_eq(e->path, "b.gguf");
	ck_assert_int_eq(e->context, 512);
	ck_assert_int_eq(e->kv_type, LP_KV_Q8_0); /* left out: the section's */
	ck_assert_ptr_eq(lp_model_cfg_for_lang(m, "en", &which), m);
	ck_assert_int_eq(which, -1);
	ck_assert_ptr_eq(lp_model_cfg_for_lang(m, NULL, &which), m);
	ck_assert_ptr_eq(lp_model_cfg_for_lang(m, "fr", &which), m);
	ck_assert_ptr_null(lp_model_lang_name(LP_MODEL_N_LANGS));
	lp_pipeline_free(p);
	expect_error(HEAD "model:\n  by_lang:\n    en: {path: x, weights: strem}\n" STAGES,
		     4, 28, "model.by_lang.en: 'weights' must be one of map, stream");
	expect_error(HEAD "model:\n  by_lang:\n    ZH: {path: x}\n" STAGES, 4, 5,
		     "unknown language 'ZH' (did you mean 'zh'?)");
	expect_error(HEAD "model:\n  by_lang:\n    zh: {path: x, gpu_layers: 2}\n" STAGES, 4, 19,
		     "unknown key 'gpu_layers'");
}
END_TEST

/* ---- the YAML tree ------------------------------------------------------------- */

START_TEST(test_tree_positions_and_kinds)
{
	static const char text[] =
		"a: 1\n"
		"b:\n"
		"  - x\n"
		"  - 'y z'\n"
		"c: {d: \"q\", e: }\n";
	struct lp_arena a;
	struct lp_node *root, *b, *c;
	struct lp_diag d;

	lp_arena_init(&a);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_yaml_parse("t.yaml", text, strlen(text), NULL, &a, &root, &d), LP_OK);
	ck_assert_int_eq(root->kind, LP_NODE_MAP);
	ck_assert_uint_eq(root->n, 3);
	ck_assert_str_eq(lp_node_get(root, "a")->scalar, "1");
	ck_assert_int_eq(lp_node_get(root, "a")->line, 1);
	ck_assert_int_eq(lp_node_get(root, "a")->col, 4);
	ck_assert_int_eq(lp_node_key(root, "c")->line, 5);
	ck_assert_int_eq(lp_node_key(root, "c")->col, 1);
	ck_assert_str_eq(lp_node_get(root, "a")->file, "t.yaml");
	b = lp_node_get(root, "b");
	ck_assert_int_eq(b->kind, LP_NODE_SEQ);
	ck_assert_uint_eq(b->n, 2);
	ck_assert_int_eq(b->values[1]->line, 4);
	ck_assert_int_eq(b->values[1]->col, 5);
	ck_assert_int_eq(b->values[0]->quoted, 0);
	ck_assert_int_eq(b->values[1]->quoted, 1);
	ck_assert_str_eq(b->values[1]->scalar, "y z");
	c = lp_node_get(root, "c");
	ck_assert_int_eq(c->kind, LP_NODE_MAP);
	ck_assert_int_eq(lp_node_get(c, "d")->quoted, 1);
	ck_assert(lp_node_is_null(lp_node_get(c, "e")));
	ck_assert(!lp_node_is_null(lp_node_get(c, "d")));
	ck_assert_ptr_null(lp_node_get(c, "zz"));
	ck_assert_ptr_null(lp_node_get(b, "x"));
	ck_assert_ptr_null(lp_node_get(NULL, "x"));
	lp_arena_release(&a);
}
END_TEST

START_TEST(test_tree_empty_file_is_empty_map)
{
	static const char *const texts[] = { "", "# only a comment\n", "---\n", "~\n" };
	struct lp_arena a;
	struct lp_node *root;
	struct lp_diag d;

	lp_arena_init(&a);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		root = NULL;
		ck_assert_int_eq(lp_yaml_parse("t", texts[i], strlen(texts[i]), NULL, &a, &root,
					       &d), LP_OK);
		ck_assert_int_eq(root->kind, LP_NODE_MAP);
		ck_assert_uint_eq(root->n, 0);
	}
	/* A --set value, on the other hand, may be null. */
	ck_assert_int_eq(lp_yaml_parse_value("--set", "", 0, 1, 1, NULL, &a, &root, &d), LP_OK);
	ck_assert(lp_node_is_null(root));
	lp_arena_release(&a);
}
END_TEST

static void tree_error(const char *text, const struct lp_vars *vars, int line, int col,
		       const char *frag)
{
	struct lp_arena a;
	struct lp_node *root = NULL;
	struct lp_diag d;

	lp_arena_init(&a);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_yaml_parse("t.yaml", text, strlen(text), vars, &a, &root, &d),
			 LP_E_CONFIG);
	ck_assert_msg(d.line == line && d.col == col && strstr(d.msg, frag) &&
		      !strcmp(d.file, "t.yaml"),
		      "expected %d:%d '...%s...', got %s:%d:%d '%s'", line, col, frag, d.file,
		      d.line, d.col, d.msg);
	lp_arena_release(&a);
}

START_TEST(test_tree_rejects)
{
	tree_error("a: 1\nb: 2\na: 3\n", NULL, 3, 1, "duplicate key 'a' (first given on line 1)");
	tree_error("x: {k: 1, k: 2}\n", NULL, 1, 11, "duplicate key 'k'");
	tree_error("a: &x 1\nb: 2\n", NULL, 1, 4, "anchors are not supported ('&x')");
	tree_error("a: 1\nb: *x\n", NULL, 2, 4, "aliases are not supported ('*x')");
	tree_error("? [a, b]\n: 1\n", NULL, 1, 3, "a map key must be a scalar");
	tree_error("? {a: 1}\n: 1\n", NULL, 1, 3, "a map key must be a scalar");
	tree_error("a: 1\n---\nb: 2\n", NULL, 2, 1, "more than one YAML document");
	tree_error("a: !!int 1\n", NULL, 1, 4, "tags are not supported");
	tree_error("a:\n\t- b\n", NULL, 2, 1, "tabs are not allowed in indentation");
	tree_error("a: [1, 2\n", NULL, 2, 1, "invalid YAML: did not find expected ',' or ']'");
	tree_error("a: 1\n  b: 2\n", NULL, 2, 4, "invalid YAML: mapping values are not allowed");
	tree_error("a: \"x\n", NULL, 2, 1, "invalid YAML: found unexpected end of stream");
	tree_error("a: 1\nb: \x01\n", NULL, 2, 4, "invalid YAML: control characters");
	tree_error("a: 1\nb: \xff\xfe\n", NULL, 2, 4, "invalid YAML: invalid leading UTF-8");
	/* Old Mac and Windows line ends count as libyaml counts them. */
	tree_error("a: 1\rb: 2\rc: *x\r", NULL, 3, 4, "aliases are not supported");
	tree_error("a: 1\r\nb: 2\r\nc: [1\r\n", NULL, 4, 1, "invalid YAML");
	tree_error("a: 1\rb: [1", NULL, 2, 6, "invalid YAML");
	tree_error("a: 1\rb: 2\r\x01", NULL, 3, 1, "control characters");
}
END_TEST

START_TEST(test_tree_str_tag_is_quoted)
{
	struct lp_arena a;
	struct lp_node *root;
	struct lp_diag d;

	lp_arena_init(&a);
	ck_assert_int_eq(lp_yaml_parse("t", "a: !!str\n", 9, NULL, &a, &root, &d), LP_OK);
	ck_assert_int_eq(lp_node_get(root, "a")->quoted, 1);
	ck_assert(!lp_node_is_null(lp_node_get(root, "a")));
	lp_arena_release(&a);
}
END_TEST

START_TEST(test_tree_depth_limit)
{
	struct lp_buf b;
	int i;

	lp_buf_init(&b);
	for (i = 0; i < LP_YAML_MAX_DEPTH; i++)
		lp_buf_addc(&b, '[');
	for (i = 0; i < LP_YAML_MAX_DEPTH; i++)
		lp_buf_addc(&b, ']');
	{
		struct lp_arena a;
		struct lp_node *root;
		struct lp_diag d;
		lp_arena_init(&a);
		ck_assert_int_eq(lp_yaml_parse("t", b.data, b.len, NULL, &a, &root, &d), LP_OK);
		lp_arena_release(&a);
	}
	lp_buf_reset(&b);
	for (i = 0; i < 100000; i++)
		lp_buf_addc(&b, '[');
	tree_error(b.data, NULL, 1, LP_YAML_MAX_DEPTH + 1, "nesting deeper than 64 levels");
	lp_buf_release(&b);
}
END_TEST

/* Anchors are refused at the first one, so the exponential document costs
 * nothing: this would be 10^9 nodes if expanded. */
START_TEST(test_tree_billion_laughs_rejected_quickly)
{
	struct lp_buf b;
	clock_t t0 = clock();

	lp_buf_init(&b);
	lp_buf_adds(&b, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
	for (int i = 1; i < 10; i++) {
		lp_buf_addf(&b, "a%d: &a%d [", i, i);
		for (int j = 0; j < 10; j++)
			lp_buf_addf(&b, "%s*a%d", j ? ", " : "", i - 1);
		lp_buf_adds(&b, "]\n");
	}
	tree_error(b.data, NULL, 1, 5, "anchors are not supported ('&a0')");
	expect_error(b.data, 1, 5, "anchors are not supported");
	ck_assert_msg((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0, "took too long");
	lp_buf_release(&b);
}
END_TEST

START_TEST(test_tree_too_many_keys)
{
	struct lp_buf b;

	lp_buf_init(&b);
	for (int i = 0; i <= LP_YAML_MAX_KEYS; i++)
		lp_buf_addf(&b, "k%d: 1\n", i);
	tree_error(b.data, NULL, LP_YAML_MAX_KEYS + 1, 1, "more than 4096 keys in one map");
	lp_buf_release(&b);
}
END_TEST

/* ---- ${var} substitution -------------------------------------------------------- */

static const char *subst(const char *value_yaml, const struct lp_vars *vars,
			 struct lp_arena *a)
{
	struct lp_node *root;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_msg(lp_yaml_parse("t", value_yaml, strlen(value_yaml), vars, a, &root, &d) ==
		      LP_OK, "%s", d.msg);
	return lp_node_get(root, "v")->scalar;
}

START_TEST(test_vars_substitution)
{
	static const char *const names[] = { "question", "empty" };
	static const char *const values[] = { "why?", "" };
	const struct lp_vars vars = { names, values, 2 };
	struct lp_arena a;
	struct lp_node *root;
	struct lp_diag d;

	lp_arena_init(&a);
	setenv("LPIPE_TEST_VAR", "from-env", 1);
	setenv("question", "env-loses", 1);
	ck_assert_str_eq(subst("v: ${question}\n", &vars, &a), "why?");
	ck_assert_str_eq(subst("v: \"Q: ${question}!\"\n", &vars, &a), "Q: why?!");
	ck_assert_str_eq(subst("v: ${LPIPE_TEST_VAR}\n", &vars, &a), "from-env");
	ck_assert_str_eq(subst("v: ${LPIPE_TEST_UNSET:-fallback value}\n", &vars, &a),
			 "fallback value");
	ck_assert_str_eq(subst("v: ${empty:-was empty}\n", &vars, &a), "was empty");
	ck_assert_str_eq(subst("v: ${LPIPE_TEST_UNSET:-}\n", &vars, &a), "");
	ck_assert_str_eq(subst("v: ${question:-unused}\n", &vars, &a), "why?");
	ck_assert_str_eq(subst("v: cost $$5 and $$${question}\n", &vars, &a),
			 "cost $5 and $why?");
	ck_assert_str_eq(subst("v: a $ b $x\n", &vars, &a), "a $ b $x");
	/* Keys are never substituted. */
	ck_assert_int_eq(lp_yaml_parse("t", "${question}: 1\n", 15, &vars, &a, &root, &d), LP_OK);
	ck_assert_ptr_nonnull(lp_node_get(root, "${question}"));
	unsetenv("question");
	unsetenv("LPIPE_TEST_VAR");
	lp_arena_release(&a);
}
END_TEST

START_TEST(test_vars_errors)
{
	tree_error("a: 1\nq: ${LPIPE_TEST_UNSET}\n", NULL, 2, 4,
		   "undefined variable 'LPIPE_TEST_UNSET'");
	tree_error("q: \"see ${LPIPE_TEST_UNSET}\"\n", NULL, 1, 9, "undefined variable");
	tree_error("q:\n  - x\n  - ab ${LPIPE_TEST_UNSET}\n", NULL, 3, 8, "undefined variable");
	/* In a flow collection a plain ${var} is cut at its brace: say to quote it. */
	tree_error("q: {size: ${N}}\n", NULL, 1, 12, "write a variable in quotes");
	tree_error("q: ${oops\n", NULL, 1, 4, "unterminated '${'");
	tree_error("q: ${a b}\n", NULL, 1, 4, "bad variable reference");
	tree_error("q: ${}\n", NULL, 1, 4, "empty variable name");
	/* A folded scalar: the position is the scalar's own. */
	tree_error("q: >\n  text\n  ${LPIPE_TEST_UNSET}\n", NULL, 1, 4, "undefined variable");
}
END_TEST

/* ---- getters ---------------------------------------------------------------------- */

struct getter_env {
	struct lp_arena a;
	struct lp_diag d;
	struct lp_cfg_ctx c;
	struct lp_node *root;
};

static void genv_init(struct getter_env *g, const char *text)
{
	lp_arena_init(&g->a);
	lp_diag_init(&g->d);
	g->c.path = "g.yaml";
	g->c.section = "sec";
	g->c.arena = &g->a;
	g->c.diag = &g->d;
	ck_assert_int_eq(lp_yaml_parse("g.yaml", text, strlen(text), NULL, &g->a, &g->root,
				       &g->d), LP_OK);
}

static void genv_expect(struct getter_env *g, enum lp_status st, int line, int col,
			const char *msg)
{
	ck_assert_int_eq(st, LP_E_CONFIG);
	ck_assert_msg(g->d.line == line && g->d.col == col && strstr(g->d.msg, msg),
		      "expected %d:%d '%s', got %d:%d '%s'", line, col, msg, g->d.line, g->d.col,
		      g->d.msg);
	ck_assert_str_eq(g->d.file, "g.yaml");
}

START_TEST(test_get_int)
{
	struct getter_env g;
	long long v = 0;

	genv_init(&g, "a: 12\nb: 12abc\nc: 1.5\nd: 99999999999999999999\ne: -5\n"
		  "f: {x: 1}\ng: [1]\nh:\ni: \"42\"\nj: ' 7'\nk: +3\n");
	ck_assert_int_eq(lp_cfg_get_int(&g.c, g.root, "a", 0, 0, 100, &v), LP_OK);
	ck_assert_int_eq(v, 12);
	ck_assert_int_eq(lp_cfg_get_int(&g.c, g.root, "zz", 77, 0, 100, &v), LP_OK);
	ck_assert_int_eq(v, 77);
	ck_assert_int_eq(lp_cfg_get_int(&g.c, g.root, "h", 78, 0, 100, &v), LP_OK);
	ck_assert_int_eq(v, 78);
	ck_assert_int_eq(lp_cfg_get_int(&g.c, g.root, "i", 0, 0, 100, &v), LP_OK);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(lp_cfg_get_int(&g.c, g.root, "k", 0, 0, 100, &v), LP_OK);
	ck_assert_int_eq(v, 3);
	genv_expect(&g, lp_cfg_get_int(&g.c, g.root, "b", 0, 0, 100, &v), 2, 4,
		    "sec: 'b' must be an integer, got '12abc'");
	genv_expect(&g, lp_cfg_get_int(&g.c, g.root, "c", 0, 0, 100, &v), 3, 4,
		    "'c' must be an integer, got '1.5'");
	genv_expect(&g, lp_cfg_get_int(&g.c, g.root, "d", 0, 0, LLONG_MAX, &v), 4, 4,
		    "'d' must be at least 0, got 99999999999999999999");
	genv_expect(&g, lp_cfg_get_int(&g.c, g.root, "e", 0, 0, 10000, &v), 5, 4,
		    "'e' must be between 0 and 10000, got -5");
	genv_expect(&g, lp_cfg_get_int(&g.c, g.root, "a", 0, LLONG_MIN, 10, &v), 1, 4,
		    "'a' must be at most 10, got 12");
	genv_expect(&g, lp_cfg_get_int(&g.c, g.root, "f", 0, 0, 10, &v), 6, 4,
		    "'f' must be an integer, got a map");
	genv_expect(&g, lp_cfg_get_int(&g.c, g.root, "g", 0, 0, 10, &v), 7, 4,
		    "'g' must be an integer, got a sequence");
	genv_expect(&g, lp_cfg_get_int(&g.c, g.root, "j", 0, 0, 10, &v), 10, 4,
		    "must be an integer");
	lp_arena_release(&g.a);
}
END_TEST

START_TEST(test_get_double_bool_string)
{
	struct getter_env g;
	double x = 0;
	int b = -1;
	const char *s = NULL;

	genv_init(&g, "a: 0.5\nb: 1e-3\nc: inf\nd: 0x10\ne: 3\nf: nan\n"
		  "t1: yes\nt2: On\nt3: TRUE\nf1: off\nf2: no\nbad: maybe\n"
		  "s: hello\nsm: {a: 1}\n");
	ck_assert_int_eq(lp_cfg_get_double(&g.c, g.root, "a", 0, 0, 1, &x), LP_OK);
	ck_assert(x == 0.5);
	ck_assert_int_eq(lp_cfg_get_double(&g.c, g.root, "b", 0, 0, 1, &x), LP_OK);
	ck_assert(x == 1e-3);
	ck_assert_int_eq(lp_cfg_get_double(&g.c, g.root, "none", 0.25, 0, 1, &x), LP_OK);
	ck_assert(x == 0.25);
	genv_expect(&g, lp_cfg_get_double(&g.c, g.root, "c", 0, 0, 1, &x), 3, 4,
		    "'c' must be a number, got 'inf'");
	genv_expect(&g, lp_cfg_get_double(&g.c, g.root, "d", 0, 0, 100, &x), 4, 4,
		    "'d' must be a number, got '0x10'");
	genv_expect(&g, lp_cfg_get_double(&g.c, g.root, "e", 0, 0, 1, &x), 5, 4,
		    "'e' must be between 0 and 1, got 3");
	genv_expect(&g, lp_cfg_get_double(&g.c, g.root, "f", 0, 0, 1, &x), 6, 4,
		    "must be a number");
	ck_assert_int_eq(lp_cfg_get_bool(&g.c, g.root, "t1", 0, &b), LP_OK);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(lp_cfg_get_bool(&g.c, g.root, "t2", 0, &b), LP_OK);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(lp_cfg_get_bool(&g.c, g.root, "t3", 0, &b), LP_OK);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(lp_cfg_get_bool(&g.c, g.root, "f1", 1, &b), LP_OK);
	ck_assert_int_eq(b, 0);
	ck_assert_int_eq(lp_cfg_get_bool(&g.c, g.root, "f2", 1, &b), LP_OK);
	ck_assert_int_eq(b, 0);
	ck_assert_int_eq(lp_cfg_get_bool(&g.c, g.root, "none", 1, &b), LP_OK);
	ck_assert_int_eq(b, 1);
	genv_expect(&g, lp_cfg_get_bool(&g.c, g.root, "bad", 0, &b), 12, 6,
		    "'bad' must be true or false");
	ck_assert_int_eq(lp_cfg_get_string(&g.c, g.root, "s", NULL, &s), LP_OK);
	ck_assert_str_eq(s, "hello");
	ck_assert_int_eq(lp_cfg_get_string(&g.c, g.root, "none", "dflt", &s), LP_OK);
	ck_assert_str_eq(s, "dflt");
	genv_expect(&g, lp_cfg_get_string(&g.c, g.root, "sm", NULL, &s), 14, 5,
		    "'sm' must be a string, got a map");
	lp_arena_release(&g.a);
}
END_TEST

START_TEST(test_get_enum_size_list)
{
	static const char *const names[] = { "auto", "cpu", "cuda", NULL };
	struct getter_env g;
	int e = -1;
	size_t sz = 0, n = 9;
	const char **list = NULL;

	genv_init(&g, "d: cpu\nd2: cdua\nd3: gpu\nm1: 1GiB\nm2: 4096\nm3: lots\nm4: -1M\n"
		  "l1: [a, 'b c']\nl2: one\nl3: [a, [b]]\nl4: {a: 1}\nl5: []\n");
	ck_assert_int_eq(lp_cfg_get_enum(&g.c, g.root, "d", names, 0, &e), LP_OK);
	ck_assert_int_eq(e, 1);
	ck_assert_int_eq(lp_cfg_get_enum(&g.c, g.root, "none", names, 2, &e), LP_OK);
	ck_assert_int_eq(e, 2);
	genv_expect(&g, lp_cfg_get_enum(&g.c, g.root, "d2", names, 0, &e), 2, 5,
		    "'d2' must be one of auto, cpu, cuda, got 'cdua' (did you mean 'cuda'?)");
	genv_expect(&g, lp_cfg_get_enum(&g.c, g.root, "d3", names, 0, &e), 3, 5,
		    "'d3' must be one of auto, cpu, cuda, got 'gpu'");
	ck_assert_int_eq(lp_cfg_get_size(&g.c, g.root, "m1", 0, &sz), LP_OK);
	ck_assert_uint_eq(sz, 1ull << 30);
	ck_assert_int_eq(lp_cfg_get_size(&g.c, g.root, "m2", 0, &sz), LP_OK);
	ck_assert_uint_eq(sz, 4096);
	genv_expect(&g, lp_cfg_get_size(&g.c, g.root, "m3", 0, &sz), 6, 5,
		    "'m3' must be a size such as");
	genv_expect(&g, lp_cfg_get_size(&g.c, g.root, "m4", 0, &sz), 7, 5, "got '-1M'");
	ck_assert_int_eq(lp_cfg_get_string_list(&g.c, g.root, "l1", &list, &n), LP_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(list[0], "a");
	ck_assert_str_eq(list[1], "b c");
	ck_assert_int_eq(lp_cfg_get_string_list(&g.c, g.root, "l2", &list, &n), LP_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(list[0], "one");
	ck_assert_int_eq(lp_cfg_get_string_list(&g.c, g.root, "none", &list, &n), LP_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(lp_cfg_get_string_list(&g.c, g.root, "l5", &list, &n), LP_OK);
	ck_assert_uint_eq(n, 0);
	genv_expect(&g, lp_cfg_get_string_list(&g.c, g.root, "l3", &list, &n), 10, 9,
		    "but item 1 is a sequence");
	genv_expect(&g, lp_cfg_get_string_list(&g.c, g.root, "l4", &list, &n), 11, 5,
		    "'l4' must be a list of strings, got a map");
	lp_arena_release(&g.a);
}
END_TEST

START_TEST(test_check_keys_and_suggest)
{
	static const char *const keys[] = { "unit", "size", "overlap", "boundary", NULL };
	static const char *const few[] = { "alpha", "beta", NULL };
	struct getter_env g;

	ck_assert_str_eq(lp_cfg_suggest("overlp", keys), "overlap");
	ck_assert_str_eq(lp_cfg_suggest("sise", keys), "size");
	ck_assert_str_eq(lp_cfg_suggest("Size", keys), "size");
	ck_assert_str_eq(lp_cfg_suggest("boundray", keys), "boundary");
	ck_assert_str_eq(lp_cfg_suggest("unti", keys), "unit");
	ck_assert_ptr_null(lp_cfg_suggest("question", keys));
	ck_assert_ptr_null(lp_cfg_suggest("x", keys));
	ck_assert_ptr_null(lp_cfg_suggest("", keys));
	ck_assert_ptr_null(lp_cfg_suggest("zzzz", keys));
	genv_init(&g, "ok: {unit: 1, size: 2}\nbad: {size: 1, overlp: 2}\n"
		  "far: {qqq: 1}\nnotmap: [1]\n");
	ck_assert_int_eq(lp_cfg_check_keys(&g.c, lp_node_get(g.root, "ok"), keys), LP_OK);
	ck_assert_int_eq(lp_cfg_check_keys(&g.c, NULL, keys), LP_OK);
	genv_expect(&g, lp_cfg_check_keys(&g.c, lp_node_get(g.root, "bad"), keys), 2, 16,
		    "sec: unknown key 'overlp' (did you mean 'overlap'?)");
	genv_expect(&g, lp_cfg_check_keys(&g.c, lp_node_get(g.root, "far"), few), 3, 7,
		    "unknown key 'qqq' (expected one of: alpha, beta)");
	genv_expect(&g, lp_cfg_check_keys(&g.c, lp_node_get(g.root, "notmap"), few), 4, 9,
		    "expected a map of options, got a sequence");
	lp_arena_release(&g.a);
}
END_TEST

START_TEST(test_quote_round_trips)
{
	static const char *const samples[] = {
		"plain", "two words", "", "yes", "null", "~", "12", "1.5", "- dash",
		"a: b", "x #y", "[x]", "{x}", "it's", "say \"hi\"", "back\\slash",
		"cost $5 ${HOME}", "line\nbreak\ttab", " lead", "trail ", "a,b", "ünï",
		"*star", "&amp", "!bang", "%pct", "@at", "`tick", "|bar", ">gt", "?q",
		"http://x.y/z", "x:", "nel\xc2\x85" "ls\xe2\x80\xa8" "bom\xef\xbb\xbf", "\xc2\x80" "c1",
		"tab\tin", "\x7f", "\xe6\x97\xa5\xe6\x9c\xac", NULL
	};
	struct lp_arena a;
	struct lp_diag d;

	lp_arena_init(&a);
	for (size_t i = 0; samples[i]; i++) {
		struct lp_buf b;
		struct lp_node *root;
		lp_buf_init(&b);
		lp_buf_adds(&b, "v: ");
		ck_assert_int_eq(lp_cfg_quote(&b, samples[i]), LP_OK);
		lp_buf_addc(&b, '\n');
		ck_assert_msg(lp_yaml_parse("q", b.data, b.len, NULL, &a, &root, &d) == LP_OK,
			      "'%s' -> %s: %s", samples[i], b.data, d.msg);
		ck_assert_msg(!strcmp(lp_node_get(root, "v")->scalar, samples[i]) &&
			      !lp_node_is_null(lp_node_get(root, "v")),
			      "'%s' came back as '%s' via %s", samples[i],
			      lp_node_get(root, "v")->scalar, b.data);
		lp_buf_release(&b);
	}
	lp_arena_release(&a);
}
END_TEST

/* ---- pipelines --------------------------------------------------------------------- */

START_TEST(test_pipeline_valid_and_defaults)
{
	struct lp_pipeline *p = load(
		"version: 1\n"
		"stages:\n"
		"  - split: {unit: chars, size: 500, overlap: 50}\n"
		"  - answer:\n"
		"      question: \"${question}\"\n"
		"  - verify:\n");
	const struct split_opts *so;
	const struct answer_opts *ao;
	const struct verify_opts *vo;

	ck_assert_int_eq(p->version, 1);
	ck_assert_str_eq(p->name, "p");
	ck_assert_str_eq(p->path, "p.yaml");
	ck_assert_int_eq(p->model.present, 0);
	ck_assert_ptr_null(p->model.path);
	ck_assert_int_eq(p->model.device, LP_DEVICE_AUTO);
	ck_assert_int_eq(p->model.context, 2048);
	ck_assert_int_eq(p->model.kv_type, LP_KV_F16);
	ck_assert_int_eq(p->model.gpu_layers, -1);
	ck_assert_ptr_null(p->model.chat_template);
	ck_assert_int_eq(p->model.weights, LP_WEIGHTS_CFG_MAP);
	ck_assert_uint_eq(p->memory.budget, 0);
	ck_assert_int_eq(p->memory.on_oom, LP_ON_OOM_SHRINK);
	ck_assert_int_eq(p->retrieval.scorer, LP_SCORER_BM25);
	ck_assert(p->retrieval.bm25_k1 == 1.2);
	ck_assert(p->retrieval.bm25_b == 0.75);
	ck_assert_int_eq(p->retrieval.rrf_k, 60);
	ck_assert_int_eq(p->input.invalid_utf8, LP_UTF8_ERROR);
	ck_assert_int_eq(p->output.format, LP_FORMAT_TEXT);
	ck_assert_uint_eq(p->n_stages, 3);
	ck_assert_ptr_eq(p->stages[0].kind, &split_kind);
	ck_assert_int_eq(p->stages[0].line, 3);
	ck_assert_int_eq(p->stages[0].col, 5);
	so = p->stages[0].opts;
	ck_assert_int_eq(so->unit, 1);
	ck_assert_int_eq(so->size, 500);
	ck_assert_int_eq(so->overlap, 50);
	ck_assert_int_eq(so->boundary, 1);
	ao = p->stages[1].opts;
	ck_assert_str_eq(ao->question, "How often is mail checked?");
	ck_assert_int_eq(ao->max_tokens, 200);
	ck_assert_int_eq(p->stages[1].line, 4);
	vo = p->stages[2].opts;
	ck_assert_ptr_nonnull(vo);
	ck_assert_int_eq(p->stages[2].node->kind, LP_NODE_MAP);
	ck_assert_uint_eq(vo->n_must, 0);
	ck_assert_ptr_nonnull(p->root);
	lp_pipeline_free(p);
	lp_pipeline_free(NULL);
}
END_TEST

static const char full_pipeline[] =
	"version: 1\n"
	"name: full\n"
	"model:\n"
	"  path: models/x.gguf\n"
	"  device: cuda\n"
	"  context: 4096\n"
	"  kv_type: q8_0\n"
	"  gpu_layers: 12\n"
	"  chat_template: \"<|user|>{{q}}\"\n"
	"  weights: stream\n"
	"memory: {budget: 1.5GiB, on_oom: fail}\n"
	"retrieval: {scorer: hybrid, k1: 0.9, b: 0.4, rrf_k: 10}\n"
	"input: {invalid_utf8: replace}\n"
	"output: {format: json}\n"
	"stages:\n"
	"  - split: {size: 384, overlap: 48, boundary: paragraph}\n"
	"  - verify: {keyphrases: {auto: 8, must: [mail, \"$$HOME\"], regex: '\\d+'}, "
	"min_words: 40, strict: on, budget: 2MiB}\n"
	"  - answer: {question: \"${question}\", max_tokens: 4000}\n";

START_TEST(test_pipeline_every_section)
{
	struct lp_pipeline *p = load(full_pipeline);
	const struct verify_opts *vo;

	ck_assert_str_eq(p->name, "full");
	ck_assert_int_eq(p->model.present, 1);
	ck_assert_str_eq(p->model.path, "models/x.gguf");
	ck_assert_int_eq(p->model.device, LP_DEVICE_CUDA);
	ck_assert_int_eq(p->model.context, 4096);
	ck_assert_int_eq(p->model.kv_type, LP_KV_Q8_0);
	ck_assert_int_eq(p->model.gpu_layers, 12);
	ck_assert_str_eq(p->model.chat_template, "<|user|>{{q}}");
	ck_assert_int_eq(p->model.weights, LP_WEIGHTS_CFG_STREAM);
	ck_assert_uint_eq(p->memory.budget, 3ull << 29);
	ck_assert_int_eq(p->memory.on_oom, LP_ON_OOM_FAIL);
	ck_assert_int_eq(p->retrieval.scorer, LP_SCORER_HYBRID);
	ck_assert(p->retrieval.bm25_k1 == 0.9);
	ck_assert(p->retrieval.bm25_b == 0.4);
	ck_assert_int_eq(p->retrieval.rrf_k, 10);
	ck_assert_int_eq(p->input.invalid_utf8, LP_UTF8_REPLACE);
	ck_assert_int_eq(p->output.format, LP_FORMAT_JSON);
	ck_assert_str_eq(lp_scorer_name(p->retrieval.scorer), "hybrid");
	ck_assert_str_eq(lp_format_name(p->output.format), "json");
	ck_assert_str_eq(lp_scorer_name(LP_SCORER_DENSE), "dense");
	ck_assert_str_eq(lp_format_name(LP_FORMAT_MARKDOWN), "markdown");
	ck_assert_str_eq(lp_format_name(LP_FORMAT_HTML), "html");
	vo = p->stages[1].opts;
	ck_assert_int_eq(vo->auto_n, 8);
	ck_assert_uint_eq(vo->n_must, 2);
	ck_assert_str_eq(vo->must[1], "$HOME");
	ck_assert_uint_eq(vo->n_regex, 1);
	ck_assert_str_eq(vo->regex[0], "\\d+");
	ck_assert_int_eq(vo->strict, 1);
	ck_assert_uint_eq(vo->budget, 2u << 20);
	/* A stage may read the resolved model section (max_tokens <= context). */
	ck_assert_int_eq(((const struct answer_opts *)p->stages[2].opts)->max_tokens, 4000);
	lp_pipeline_free(p);
	expect_error(HEAD "model: {context: 1024}\nstages:\n  - answer: {max_tokens: 4000}\n",
		     4, 26, "stages[0].answer: 'max_tokens' must be between 1 and 1024, got 4000");
}
END_TEST

static char *print_to_string(const struct lp_pipeline *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	lp_pipeline_print(p, f);
	fclose(f);
	return buf;
}

START_TEST(test_pipeline_print_round_trips)
{
	struct lp_pipeline *p = load(full_pipeline), *q;
	char *once, *twice;

	once = print_to_string(p);
	ck_assert_ptr_nonnull(strstr(once, "version: 1\nname: full\nmodel:\n"
				     "  path: models/x.gguf\n  device: cuda\n"));
	ck_assert_ptr_nonnull(strstr(once, "  budget: 1536MiB\n  on_oom: fail\n"));
	ck_assert_ptr_nonnull(strstr(once, "  k1: 0.9\n  b: 0.4\n  rrf_k: 10\n"));
	ck_assert_ptr_nonnull(strstr(once, "  - split: {unit: tokens, size: 384, overlap: 48, "
				     "boundary: paragraph}\n"));
	ck_assert_ptr_nonnull(strstr(once, "must: [mail, \"$$HOME\"]"));
	q = load(once);
	twice = print_to_string(q);
	ck_assert_str_eq(once, twice);
	free(once);
	free(twice);
	lp_pipeline_free(p);
	lp_pipeline_free(q);

	p = load(HEAD STAGES);
	once = print_to_string(p);
	ck_assert_str_eq(once,
			 "version: 1\nname: p\nmodel:\n  path: ~\n  device: auto\n"
			 "  context: 2048\n  kv_type: f16\n  gpu_layers: all\n"
			 "  chat_template: ~\n  weights: map\nmemory:\n  budget: 0\n"
			 "  on_oom: shrink\n"
			 "retrieval:\n  scorer: bm25\n  k1: 1.2\n  b: 0.75\n"
			 "input:\n  invalid_utf8: error\noutput:\n  format: text\n"
			 "stages:\n  - split: {unit: tokens, size: 100, overlap: 0, "
			 "boundary: sentence}\n");
	free(once);
	lp_pipeline_free(p);
}
END_TEST

START_TEST(test_pipeline_top_level_errors)
{
	expect_error("name: x\n" STAGES, 1, 1,
		     "missing 'version' (this reader knows version 1)");
	expect_error("", 1, 1, "missing 'version'");
	expect_error("version: 2\n" STAGES, 1, 10,
		     "unsupported version '2' (this reader knows version 1)");
	expect_error("version: one\n" STAGES, 1, 10, "unsupported version 'one'");
	expect_error("version: [1]\n" STAGES, 1, 10, "'version' must be 1, got a sequence");
	expect_error("vesion: 1\n" STAGES, 1, 1, "unknown key 'vesion' (did you mean 'version'?)");
	expect_error(HEAD "modle: {}\n" STAGES, 2, 1, "unknown key 'modle' (did you mean 'model'?)");
	expect_error(HEAD "colour: red\n" STAGES, 2, 1,
		     "unknown key 'colour' (expected one of: version, name, model");
	expect_error("- a\n- b\n", 1, 1, "a pipeline file is a map of sections");
	expect_error(HEAD "name: [a]\n" STAGES, 2, 7, "'name' must be a string, got a sequence");
	expect_error(HEAD "model: fast\n" STAGES, 2, 8,
		     "model: expected a map of options, got a scalar");
}
END_TEST

START_TEST(test_pipeline_section_errors)
{
	expect_error(HEAD "model:\n  contxt: 10\n" STAGES, 3, 3,
		     "model: unknown key 'contxt' (did you mean 'context'?)");
	expect_error(HEAD "model:\n  context: 8\n" STAGES, 3, 12,
		     "model: 'context' must be between 16 and 1048576, got 8");
	expect_error(HEAD "model:\n  context: 2k\n" STAGES, 3, 12,
		     "model: 'context' must be an integer, got '2k'");
	expect_error(HEAD "model:\n  device: gpu\n" STAGES, 3, 11,
		     "model: 'device' must be one of auto, cpu, cuda, got 'gpu'");
	expect_error(HEAD "model:\n  kv_type: q4_0\n" STAGES, 3, 12,
		     "'kv_type' must be one of f32, f16, q8_0, got 'q4_0'");
	expect_error(HEAD "model:\n  weights: copy\n" STAGES, 3, 12,
		     "model: 'weights' must be one of map, stream, got 'copy'");
	expect_error(HEAD "model:\n  gpu_layers: some\n" STAGES, 3, 15,
		     "'gpu_layers' must be 'all' or a number of layers");
	expect_error(HEAD "model:\n  gpu_layers: -2\n" STAGES, 3, 15,
		     "'gpu_layers' must be 'all' or a number of layers");
	expect_error(HEAD "model:\n  path: {a: 1}\n" STAGES, 3, 9,
		     "model: 'path' must be a string, got a map");
	expect_error(HEAD "memory: {budget: 1 GB please}\n" STAGES, 2, 18,
		     "memory: 'budget' must be a size");
	expect_error(HEAD "memory: {on_oom: retry}\n" STAGES, 2, 18,
		     "'on_oom' must be one of shrink, fail, got 'retry'");
	expect_error(HEAD "retrieval: {scorer: bm52}\n" STAGES, 2, 21,
		     "retrieval: 'scorer' must be one of bm25, hash, dense, hybrid, got 'bm52' "
		     "(did you mean 'bm25'?)");
	expect_error(HEAD "retrieval: {b: 1.5}\n" STAGES, 2, 16,
		     "retrieval: 'b' must be between 0 and 1, got 1.5");
	expect_error(HEAD "retrieval: {k1: -1}\n" STAGES, 2, 17,
		     "'k1' must be between 0 and 10, got -1");
	expect_error(HEAD "retrieval: {rrf_k: 0}\n" STAGES, 2, 20,
		     "'rrf_k' must be between 1 and 100000, got 0");
	/* a key the scorer does not read names the scorers that would */
	expect_error(HEAD "retrieval: {scorer: bm25, rrf_k: 10}\n" STAGES, 2, 27,
		     "retrieval: key 'rrf_k' is not used by scorer 'bm25' (only by scorer hybrid)");
	expect_error(HEAD "retrieval: {scorer: dense, k1: 1}\n" STAGES, 2, 28,
		     "key 'k1' is not used by scorer 'dense' (only by scorer bm25 or hybrid)");
	expect_error(HEAD "retrieval: {hash_dim: 64}\n" STAGES, 2, 13,
		     "key 'hash_dim' is not used by scorer 'bm25' (only by scorer hash)");
	expect_error(HEAD "retrieval: {scorer: bm25, device: cpu}\n" STAGES, 2, 27,
		     "key 'device' is not used by scorer 'bm25' (only by scorer hash, dense or "
		     "hybrid)");
	expect_error(HEAD "retrieval: {scorer: hybrid, weight: 0.3}\n" STAGES, 2, 29,
		     "key 'weight' is not used by fusion 'rrf' (only by fusion weighted)");
	expect_error(HEAD "retrieval: {scorer: hybrid, fusion: weighted, rrf_k: 5}\n" STAGES,
		     2, 47, "key 'rrf_k' is not used by fusion 'weighted' (only by fusion rrf)");
	expect_error(HEAD "input: {invalid_utf8: ignore}\n" STAGES, 2, 23,
		     "input: 'invalid_utf8' must be one of error, replace");
	expect_error(HEAD "output: {format: pdf}\n" STAGES, 2, 18,
		     "output: 'format' must be one of text, markdown, json, html, got 'pdf'");
	expect_error(HEAD "output: {fromat: json}\n" STAGES, 2, 10,
		     "output: unknown key 'fromat' (did you mean 'format'?)");
}
END_TEST

START_TEST(test_pipeline_null_sections_take_defaults)
{
	struct lp_pipeline *p = load(HEAD "model:\nmemory: ~\n" STAGES);

	ck_assert_int_eq(p->model.present, 1);
	ck_assert_int_eq(p->model.context, 2048);
	ck_assert_uint_eq(p->memory.budget, 0);
	lp_pipeline_free(p);
	p = load(HEAD "model: {gpu_layers: 0, path: }\n" STAGES);
	ck_assert_int_eq(p->model.gpu_layers, 0);
	ck_assert_ptr_null(p->model.path);
	lp_pipeline_free(p);
}
END_TEST

START_TEST(test_pipeline_stage_errors)
{
	expect_error(HEAD, 1, 1, "missing 'stages' (a pipeline needs at least one stage)");
	expect_error(HEAD "stages: []\n", 2, 9, "'stages' is empty");
	expect_error(HEAD "stages:\n", 2, 8, "'stages' is empty");
	expect_error(HEAD "stages: {split: {}}\n", 2, 9, "'stages' must be a sequence");
	expect_error(HEAD "stages:\n  - split\n", 3, 5,
		     "stages[0]: a stage is a map with one key, its kind");
	expect_error(HEAD "stages:\n  - {}\n", 3, 5, "got an empty map");
	expect_error(HEAD "stages:\n  - split:\n    size: 10\n", 4, 5,
		     "stages[0]: a stage has one key, its kind; found 'split' and 'size' "
		     "(indent the options under 'split:')");
	expect_error(HEAD "stages:\n  - split: {}\n  - spilt: {}\n", 4, 5,
		     "stages[1]: unknown stage kind 'spilt' (did you mean 'split'?)");
	expect_error(HEAD "stages:\n  - summarize: {}\n", 3, 5,
		     "unknown stage kind 'summarize' (expected one of: split, answer, verify)");
	expect_error(HEAD "stages:\n  - split: 384\n", 3, 12,
		     "stages[0].split: the options of a stage must be a map, got a scalar");
	expect_error(HEAD "stages:\n  - split: {size: 100, overlp: 5}\n", 3, 24,
		     "stages[0].split: unknown key 'overlp' (did you mean 'overlap'?)");
	expect_error(HEAD "stages:\n  - split: {overlap: -5}\n", 3, 22,
		     "stages[0].split: 'overlap' must be between 0 and 10000, got -5");
	expect_error(HEAD "stages:\n  - split: {size: {a: 1}}\n", 3, 19,
		     "stages[0].split: 'size' must be an integer, got a map");
	expect_error(HEAD "stages:\n  - split:\n      size: 10\n      overlap: 10\n", 5, 16,
		     "'overlap' (10) must be smaller than 'size' (10)");
	expect_error(HEAD "stages:\n  - split: {}\n  - verify:\n      keyphrases: {must: [a, {b: 1}]}\n",
		     5, 30, "stages[1].verify: 'must' must be a list of strings, but item 1 is a map");
	expect_error(HEAD "stages:\n  - verify: {strict: maybe}\n", 3, 22,
		     "stages[0].verify: 'strict' must be true or false");
	expect_error(HEAD "stages:\n  - verify: {keyphrases: {atuo: 3}}\n", 3, 27,
		     "stages[0].verify: unknown key 'atuo' (did you mean 'auto'?)");
}
END_TEST

START_TEST(test_pipeline_no_stage_kinds)
{
	static const struct lp_stage_kind *const none[] = { NULL };

	lp_stage_registry_override(none);
	expect_error(HEAD STAGES, 3, 5, "unknown stage kind 'split' (no stage kinds are built in)");
}
END_TEST

START_TEST(test_pipeline_yaml_errors_carry_position)
{
	expect_error(HEAD "stages:\n\t- split: {}\n", 3, 1, "tabs are not allowed");
	expect_error(HEAD "model: {context: 10\n" STAGES, 3, 7, "invalid YAML");
	expect_error(HEAD "model: {}\nmodel: {}\n" STAGES, 3, 1,
		     "duplicate key 'model' (first given on line 2)");
	expect_error(HEAD "base: &b {size: 1}\n" STAGES, 2, 7, "anchors are not supported");
	expect_error(HEAD "stages:\n  - split: *b\n", 3, 12, "aliases are not supported ('*b')");
	expect_error(HEAD "stages:\n  - answer: {question: \"${LPIPE_TEST_UNSET}\"}\n", 3, 25,
		     "undefined variable 'LPIPE_TEST_UNSET'");
}
END_TEST

START_TEST(test_pipeline_variables)
{
	struct lp_pipeline *p;

	setenv("LPIPE_TEST_SIZE", "250", 1);
	p = load(HEAD "name: ${LPIPE_TEST_UNSET:-dflt-name}\n"
		 "stages:\n  - split:\n      size: ${LPIPE_TEST_SIZE}\n"
		 "      overlap: \"${LPIPE_TEST_UNSET:-7}\"\n"
		 "  - answer: {question: \"Q: ${question} $$1\"}\n");
	ck_assert_str_eq(p->name, "dflt-name");
	ck_assert_int_eq(((const struct split_opts *)p->stages[0].opts)->size, 250);
	ck_assert_int_eq(((const struct split_opts *)p->stages[0].opts)->overlap, 7);
	ck_assert_str_eq(((const struct answer_opts *)p->stages[1].opts)->question,
			 "Q: How often is mail checked? $1");
	lp_pipeline_free(p);
	/* A substituted value is validated like a written one, at its place. */
	setenv("LPIPE_TEST_SIZE", "big", 1);
	expect_error(HEAD "stages:\n  - split: {size: \"${LPIPE_TEST_SIZE}\"}\n", 3, 19,
		     "'size' must be an integer, got 'big'");
	unsetenv("LPIPE_TEST_SIZE");
}
END_TEST

/* ---- --set overrides -------------------------------------------------------------- */

static const char set_base[] =
	HEAD
	"model: {context: 1024}\n"
	"stages:\n"
	"  - split: {size: 100}\n"
	"  - answer:\n"
	"  - split: {size: 200}\n"
	"  - verify: {keyphrases: {must: [x]}}\n";

START_TEST(test_set_scalars_and_new_keys)
{
	const char *const sets[] = {
		"model.context=4096", "memory.budget=1GiB", "model.device=cpu",
		"name=over", "retrieval.scorer=dense", "output={format: markdown}",
	};
	struct lp_pipeline *p = load_sets(set_base, sets, 6);

	ck_assert_int_eq(p->model.context, 4096);
	ck_assert_int_eq(p->model.device, LP_DEVICE_CPU);
	ck_assert_uint_eq(p->memory.budget, 1ull << 30);
	ck_assert_str_eq(p->name, "over");
	ck_assert_int_eq(p->retrieval.scorer, LP_SCORER_DENSE);
	ck_assert_int_eq(p->output.format, LP_FORMAT_MARKDOWN);
	lp_pipeline_free(p);
}
END_TEST

START_TEST(test_set_stages)
{
	const char *const sets[] = {
		"stages.split.overlap=10",      /* first split, new key */
		"stages.2.size=300",            /* by index */
		"stages.answer.question=${question}",
		"stages.answer.max_tokens=50",  /* into a stage written with no options */
		"stages.verify.keyphrases.must=[a, 'b c']",
		"stages.verify.keyphrases.regex=x+",
	};
	struct lp_pipeline *p = load_sets(set_base, sets, 6);
	const struct split_opts *s0 = p->stages[0].opts, *s2 = p->stages[2].opts;
	const struct answer_opts *a = p->stages[1].opts;
	const struct verify_opts *v = p->stages[3].opts;

	ck_assert_int_eq(s0->size, 100);
	ck_assert_int_eq(s0->overlap, 10);
	ck_assert_int_eq(s2->size, 300);
	ck_assert_int_eq(s2->overlap, 0);
	ck_assert_str_eq(a->question, "How often is mail checked?");
	ck_assert_int_eq(a->max_tokens, 50);
	ck_assert_uint_eq(v->n_must, 2);
	ck_assert_str_eq(v->must[1], "b c");
	ck_assert_uint_eq(v->n_regex, 1);
	ck_assert_str_eq(v->regex[0], "x+");
	lp_pipeline_free(p);
	/* A whole stage's options, and a new section with its intermediate map. */
	{
		const char *const more[] = { "stages.0={size: 42}", "input.invalid_utf8=replace" };
		p = load_sets(set_base, more, 2);
		ck_assert_int_eq(((const struct split_opts *)p->stages[0].opts)->size, 42);
		ck_assert_int_eq(p->input.invalid_utf8, LP_UTF8_REPLACE);
		lp_pipeline_free(p);
	}
}
END_TEST

static void set_error(const char *set, int col, const char *frag)
{
	const char *sets[] = { "name=ok", set };

	expect_error_sets(set_base, sets, 2, "--set", 2, col, frag);
}

START_TEST(test_set_errors)
{
	set_error("model.context", 1, "expected KEY=VALUE, got 'model.context'");
	set_error("=5", 1, "empty key");
	set_error("model..context=5", 7, "empty key");
	set_error("stages.splt.size=5", 8, "no stage 'splt' in this pipeline (did you mean 'split'?)");
	set_error("stages.summarize.size=5", 8,
		  "no stage 'summarize' in this pipeline: give a stage kind or an index from 0 to 3");
	set_error("stages.7.size=5", 8, "index 7 is out of range ('stages' has 4 items)");
	set_error("stages.verify.keyphrases.must.x=5", 31,
		  "'stages.verify.keyphrases.must' is a sequence: select an item by its index");
	set_error("model.context.x=5", 15, "cannot set 'x' inside 'model.context', which is a scalar");
	/* Values are validated where they were given. */
	set_error("model.context=4k", 15, "model: 'context' must be an integer, got '4k'");
	set_error("model.contxt=4096", 7, "model: unknown key 'contxt' (did you mean 'context'?)");
	set_error("stages.split.size=[1, 2]", 19, "'size' must be an integer, got a sequence");
	set_error("stages.verify.keyphrases.must=[a, {b: 1}]", 35, "but item 1 is a map");
	set_error("stages.0.size=${LPIPE_TEST_UNSET}", 15, "undefined variable 'LPIPE_TEST_UNSET'");
	set_error("model.context=[1, 2", 20, "invalid YAML");
	set_error("model.context=&a 5", 15, "anchors are not supported");
	set_error("version=2", 9, "unsupported version '2'");
}
END_TEST

START_TEST(test_set_item_of_plain_list)
{
	const char *const sets[] = { "stages.verify.keyphrases.must.0=replaced" };
	struct lp_pipeline *p = load_sets(set_base, sets, 1);
	const struct verify_opts *v = p->stages[3].opts;

	ck_assert_uint_eq(v->n_must, 1);
	ck_assert_str_eq(v->must[0], "replaced");
	lp_pipeline_free(p);
}
END_TEST

/* ---- files ------------------------------------------------------------------------ */

START_TEST(test_pipeline_load_file)
{
	char path[] = "/tmp/lpipe-config-XXXXXX.yaml";
	int fd = mkstemps(path, 5);
	struct lp_pipeline *p = NULL;
	struct lp_diag d;
	const char *text = HEAD STAGES;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_pipeline_load(path, NULL, NULL, 0, &p, &d), LP_OK);
	ck_assert_str_eq(p->path, path);
	ck_assert(!strncmp(p->name, "lpipe-config-", 13));
	ck_assert_ptr_null(strchr(p->name, '.'));
	lp_pipeline_free(p);
	unlink(path);
	p = (void *)1;
	ck_assert_int_eq(lp_pipeline_load("/nonexistent/p.yaml", NULL, NULL, 0, &p, &d), LP_E_IO);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(d.file, "/nonexistent/p.yaml");
}
END_TEST

/* Every tracked allocation of a load may fail; each failure must come back
 * as a clean LP_E_NOMEM (no crash; no leak under ASan). The allocator reads
 * LPIPE_FAIL_ALLOC once per process, so each attempt runs in a child. */
static int load_with_fault(int n)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct lp_pipeline *p = NULL;
		struct lp_diag d;
		char num[16];
		enum lp_status st;

		snprintf(num, sizeof(num), "%d", n);
		setenv("LPIPE_FAIL_ALLOC", num, 1);
		lp_diag_init(&d);
		st = lp_pipeline_load_text("p.yaml", full_pipeline, strlen(full_pipeline),
					   &q_vars, NULL, 0, &p, &d);
		lp_pipeline_free(p);
		_exit(st == LP_OK ? 0 : st == LP_E_NOMEM && !p ? 1 : 2);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "fault %d: the load crashed", n);
	return WEXITSTATUS(status);
}

START_TEST(test_pipeline_alloc_faults)
{
	int n, r = 1;

	for (n = 1; n < 200 && r == 1; n++) {
		r = load_with_fault(n);
		ck_assert_msg(r != 2, "fault %d gave a status other than LP_E_NOMEM", n);
	}
	ck_assert_msg(r == 0, "never loaded with the fault past the last allocation");
	ck_assert_int_gt(n, 2);
}
END_TEST

/* ---- schema keys ---------------------------------------------------------- */

static void collect_key(const char *path, void *arg)
{
	struct lp_buf *b = arg;

	ck_assert_int_eq(lp_buf_addf(b, "%s\n", path), LP_OK);
}

static int hook_calls;
static void count_hook(const struct lp_node *map, const char *const *allowed, void *arg)
{
	hook_calls++;
}

START_TEST(test_schema_keys)
{
	struct lp_pipeline *p = NULL;
	struct lp_diag d;
	struct lp_buf b;
	const char *text = "version: 1\nstages:\n  - split: {size: 64}\n";

	lp_buf_init(&b);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_schema_keys(collect_key, &b, &d), LP_OK);
	ck_assert_int_eq(lp_buf_addc(&b, '\0'), LP_OK);
	/* top-level, section, stage and nested keys, each as --set writes it */
	ck_assert_ptr_nonnull(strstr(b.data, "\nmodel.context\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "\nmemory.budget\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "\nstages.split.size\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "\nstages.verify.keyphrases.auto\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "\nstages.verify.min_words\n"));
	ck_assert(!strncmp(b.data, "name\n", 5));
	/* a map is not a key of its own, nor are version and stages */
	ck_assert_ptr_null(strstr(b.data, "\nstages.verify.keyphrases\n"));
	ck_assert_ptr_null(strstr(b.data, "\nmodel\n"));
	ck_assert_ptr_null(strstr(b.data, "version"));
	ck_assert_ptr_null(strstr(b.data, "\nstages\n"));
	/* every stage kind has its keys listed */
	for (const char *const *k = lp_stage_names(); *k; k++) {
		char want[64];
		snprintf(want, sizeof(want), "\nstages.%s.", *k);
		ck_assert_msg(strstr(b.data, want), "no keys for stage kind %s", *k);
	}
	lp_buf_release(&b);

	/* the hook is left unset: loading a pipeline afterwards reports nothing */
	lp_cfg_set_keys_hook(count_hook, NULL);
	ck_assert_int_eq(lp_pipeline_load_text("t.yaml", text, strlen(text), NULL, NULL, 0, &p,
					       &d), LP_OK);
	ck_assert_int_gt(hook_calls, 0);
	lp_pipeline_free(p);
	lp_cfg_set_keys_hook(NULL, NULL);
	hook_calls = 0;
	lp_buf_init(&b);
	ck_assert_int_eq(lp_schema_keys(collect_key, &b, &d), LP_OK);
	lp_buf_release(&b);
	ck_assert_int_eq(lp_pipeline_load_text("t.yaml", text, strlen(text), NULL, NULL, 0, &p,
					       &d), LP_OK);
	ck_assert_int_eq(hook_calls, 0);
	lp_pipeline_free(p);
}
END_TEST

/* A pipeline loaded on a thread of its own, counting the hook's calls
 * there (the hook of the thread that started it is not its own). */
struct hooked_load {
	const char *text;
	int calls;
	enum lp_status st;
};

static void *load_elsewhere(void *arg)
{
	struct hooked_load *h = arg;
	struct lp_pipeline *p = NULL;
	struct lp_diag d;

	lp_diag_init(&d);
	h->st = lp_pipeline_load_text("t.yaml", h->text, strlen(h->text), NULL, NULL, 0, &p, &d);
	lp_pipeline_free(p);
	h->calls = hook_calls;
	return NULL;
}

/* The keys hook is the thread's: a schema watcher on one thread neither
 * sees nor disturbs a pipeline loaded on another meanwhile. */
START_TEST(test_keys_hook_is_the_threads)
{
	static const char text[] = "version: 1\nstages:\n  - split: {size: 64}\n";
	struct hooked_load h = { text, -1, LP_E_INTERNAL };
	pthread_t t;

	hook_calls = 0;
	lp_cfg_set_keys_hook(count_hook, NULL);
	ck_assert_int_eq(pthread_create(&t, NULL, load_elsewhere, &h), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	lp_cfg_set_keys_hook(NULL, NULL);
	ck_assert_int_eq(h.st, LP_OK);
	ck_assert_int_eq(h.calls, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tree = tcase_create("tree");
	TCase *get = tcase_create("getters");
	TCase *pipe = tcase_create("pipeline");
	TCase *set = tcase_create("set");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tree, setup, teardown);
	tcase_add_test(tree, test_tree_positions_and_kinds);
	tcase_add_test(tree, test_tree_empty_file_is_empty_map);
	tcase_add_test(tree, test_tree_rejects);
	tcase_add_test(tree, test_tree_str_tag_is_quoted);
	tcase_add_test(tree, test_tree_depth_limit);
	tcase_add_test(tree, test_tree_billion_laughs_rejected_quickly);
	tcase_add_test(tree, test_tree_too_many_keys);
	tcase_add_test(tree, test_vars_substitution);
	tcase_add_test(tree, test_vars_errors);
	tcase_add_test(get, test_get_int);
	tcase_add_test(get, test_get_double_bool_string);
	tcase_add_test(get, test_get_enum_size_list);
	tcase_add_test(get, test_check_keys_and_suggest);
	tcase_add_test(get, test_quote_round_trips);
	tcase_add_checked_fixture(pipe, setup, teardown);
	tcase_add_test(pipe, test_pipeline_valid_and_defaults);
	tcase_add_test(pipe, test_pipeline_every_section);
	tcase_add_test(pipe, test_pipeline_print_round_trips);
	tcase_add_test(pipe, test_pipeline_top_level_errors);
	tcase_add_test(pipe, test_pipeline_section_errors);
	tcase_add_test(pipe, test_pipeline_null_sections_take_defaults);
	tcase_add_test(pipe, test_pipeline_stage_errors);
	tcase_add_test(pipe, test_pipeline_no_stage_kinds);
	tcase_add_test(pipe, test_pipeline_yaml_errors_carry_position);
	tcase_add_test(pipe, test_pipeline_variables);
	tcase_add_test(pipe, test_pipeline_load_file);
	/* Fault injection needs a process that has not allocated yet. */
	if (!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no"))
		tcase_add_test(pipe, test_pipeline_alloc_faults);
	tcase_add_checked_fixture(set, setup, teardown);
	tcase_add_test(set, test_set_scalars_and_new_keys);
	tcase_add_test(pipe, test_model_by_lang);
	tcase_add_test(set, test_set_stages);
	tcase_add_test(set, test_set_errors);
	tcase_add_test(set, test_set_item_of_plain_list);
	tcase_add_test(set, test_schema_keys);
	tcase_add_test(set, test_keys_hook_is_the_threads);
	suite_add_tcase(s, tree);
	suite_add_tcase(s, get);
	suite_add_tcase(s, pipe);
	suite_add_tcase(s, set);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
