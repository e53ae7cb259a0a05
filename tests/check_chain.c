/* check_chain.c - the model chain on a tiny random model: the session's
 * token accounting, the summary tree's shape and termination over many
 * sizes, refine, answer citations, generate, truncate, verify's retry, and
 * what happens when memory runs short (shrinking, fault injection). The
 * model's text is junk; the structure around it is what is tested. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/runner.h"
#include "config/pipeline.h"
#include "core/buf.h"
#include "core/mem.h"
#include "model/session.h"
#include "stages/doc.h"
#include "stages/model_stage.h"
#include "stages/stage.h"
#include "text/points.h"
#include "tools/chat_model.h"

static char model_path[256];
static char doc_path[256];

static void write_model(void)
{
	snprintf(model_path, sizeof(model_path), "/tmp/lpipe-chain-%ld.gguf", (long)getpid());
	ck_assert_int_eq(chat_model_write(model_path, 7), 0);
}

static void remove_files(void)
{
	unlink(model_path);
	if (doc_path[0])
		unlink(doc_path);
}

static struct lp_session *open_session(uint32_t n_ctx)
{
	struct lp_session_params p = lp_session_default_params();
	struct lp_session *s;
	struct lp_diag d;

	p.path = model_path;
	p.n_ctx = n_ctx;
	p.n_threads = 1;
	lp_diag_init(&d);
	ck_assert_msg(lp_session_open(&p, &s, &d) == LP_OK, "%s", d.msg);
	return s;
}

/* n sentences-ish pieces of about `bytes` bytes each (tokens ~ bytes). */
static char *make_text(size_t n, size_t bytes)
{
	static const char *const words[] = { "river", "boat", "stone", "cat", "mill",
					     "farmer", "rain", "bridge" };
	struct lp_buf b;
	size_t len;

	lp_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		size_t start = b.len;
		lp_buf_addf(&b, "Part %zu.", i);
		while (b.len - start < bytes)
			lp_buf_addf(&b, " The %s%zu %s.", words[(b.len / 7) % 8], i,
				    words[(b.len / 3) % 8]);
		lp_buf_adds(&b, "\n\n");
	}
	return lp_buf_detach(&b, &len);
}

static struct lp_pipeline *load(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct lp_pipeline *load(const char *fmt, ...)
{
	struct lp_pipeline *p;
	struct lp_diag d;
	struct lp_buf b;
	va_list ap;

	lp_buf_init(&b);
	va_start(ap, fmt);
	lp_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	lp_diag_init(&d);
	ck_assert_msg(lp_pipeline_load_text("t.yaml", b.data, b.len, NULL, NULL, 0, &p, &d) == LP_OK,
		      "%d:%d: %s\n%s", d.line, d.col, d.msg, b.data);
	lp_buf_release(&b);
	return p;
}

/* A doc over `text` cut into the given pieces (blank-line separated). */
static void doc_over(struct lp_doc *doc, const struct lp_pipeline *p, const char *text)
{
	const char *s = text, *e;
	size_t n = 0;

	lp_doc_init(doc, p);
	doc->text = text;
	doc->len = strlen(text);
	doc->chunks = lp_arena_alloc(&doc->arena, (doc->len / 2 + 2) * sizeof(*doc->chunks));
	while (*s) {
		e = strstr(s, "\n\n");
		if (!e)
			e = s + strlen(s);
		if (e > s) {
			doc->chunks[n].off = (size_t)(s - text);
			doc->chunks[n].len = (size_t)(e - s);
			doc->chunks[n].score = 0;
			doc->chunks[n].selected = 0;
			n++;
		}
		s = *e ? e + 2 : e;
	}
	doc->n_chunks = n;
	doc->trace = lp_arena_alloc(&doc->arena, 4 * sizeof(*doc->trace));
	memset(doc->trace, 0, 4 * sizeof(*doc->trace));
	doc->trace[0].kind = "summarize";
	doc->n_trace = 1;
}

/* ---- session -------------------------------------------------------- */

START_TEST(test_session_tokens)
{
	struct lp_chat_msg m[2] = { { "system", "Be brief." }, { "user", "<|im_end|> hello" } };
	struct lp_session *s;
	struct lp_diag d;
	size_t over, n_in, n_out;
	char *out;

	write_model();
	s = open_session(512);
	ck_assert_uint_eq(lp_session_n_ctx(s), 512);
	ck_assert_ptr_null(lp_session_note(s));
	/* every byte is a token, except "ab" */
	ck_assert_uint_eq(lp_session_count_tokens(s, "hello", 5), 5);
	ck_assert_uint_eq(lp_session_count_tokens(s, "abc", 3), 2);
	/* special-token text in content stays text */
	ck_assert_uint_eq(lp_session_count_tokens(s, "<|im_end|>", 10), 10);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_session_overhead(s, m, 2, &over, &d), LP_OK);
	ck_assert_uint_gt(over, 6);
	ck_assert_int_eq(lp_session_generate(s, m, 2, NULL, 12, &out, &n_in, &n_out, &d), LP_OK);
	ck_assert_uint_eq(n_in, over + 9 + 16);
	ck_assert_uint_le(n_out, 12);
	ck_assert_uint_le(strlen(out), 12 * 4);
	lp_mem_free(out);
	/* a prompt plus max_tokens over the context is a caller's bug */
	ck_assert_int_eq(lp_session_generate(s, m, 2, NULL, 512 - n_in + 1, &out, NULL, NULL, &d),
			 LP_E_INTERNAL);
	ck_assert_ptr_nonnull(strstr(d.msg, "token budget"));
	ck_assert_ptr_null(out);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_session_generate(s, m, 2, NULL, 512 - n_in, &out, NULL, NULL, &d), LP_OK);
	lp_mem_free(out);
	lp_session_free(s);
	remove_files();
}
END_TEST

/*
 * lp_session_score is the model's own log-probability: over every one-byte
 * reply (one token each) the probabilities sum to at most 1 and the
 * greedy first token scores highest; after a first byte c, the greedy
 * next token (generated with c as the assistant's prefix) makes the best
 * two-token reply c x, which checks the reply's batch of logits as well
 * as the prompt's. An empty reply and one past the context are refused.
 */
START_TEST(test_session_score)
{
	struct lp_chat_msg m[1] = { { "user", "river boat stone" } };
	struct lp_session *s;
	struct lp_diag d;
	char one[2] = { 0 }, two[3] = { 'c', 0, 0 }, *g1, *g2;
	double lp, best1 = 0, best2 = 0, mass = 0, lc;
	size_t over;

	write_model();
	s = open_session(512);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_session_generate(s, m, 1, NULL, 1, &g1, NULL, NULL, &d), LP_OK);
	ck_assert_int_eq(lp_session_generate(s, m, 1, "c", 1, &g2, NULL, NULL, &d), LP_OK);
	ck_assert_int_eq(lp_session_score(s, m, 1, "c", &lc, &d), LP_OK);
	for (int c = 33; c < 127; c++) {
		one[0] = (char)c;
		two[1] = (char)c;
		ck_assert_int_eq(lp_session_score(s, m, 1, one, &lp, &d), LP_OK);
		ck_assert(lp <= 0);
		mass += exp(lp);
		if (strlen(g1) == 1 && c == (unsigned char)g1[0])
			best1 = lp;
		ck_assert_int_eq(lp_session_score(s, m, 1, two, &lp, &d), LP_OK);
		/* the mean of log p(c) and log p(x | c) */
		ck_assert(2 * lp - lc <= 1e-6);
		if (strlen(g2) == 1 && c == (unsigned char)g2[0])
			best2 = lp;
	}
	ck_assert(mass <= 1.0 + 1e-6);
	for (int c = 33; c < 127; c++) {
		one[0] = (char)c;
		two[1] = (char)c;
		if (strlen(g1) == 1 && best1 != 0) {
			ck_assert_int_eq(lp_session_score(s, m, 1, one, &lp, &d), LP_OK);
			ck_assert(lp <= best1 + 1e-9);
		}
		if (strlen(g2) == 1 && best2 != 0) {
			ck_assert_int_eq(lp_session_score(s, m, 1, two, &lp, &d), LP_OK);
			ck_assert(lp <= best2 + 1e-9);
		}
	}
	ck_assert_msg(best1 != 0 || best2 != 0, "greedy wrote no printable byte: '%s' '%s'", g1,
		      g2);
	lp_mem_free(g1);
	lp_mem_free(g2);
	ck_assert_int_eq(lp_session_score(s, m, 1, "", &lp, &d), LP_E_USAGE);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_session_overhead(s, m, 1, &over, &d), LP_OK);
	{
		/* a prompt that leaves 9 tokens, and a reply of 10 */
		size_t n = 512 - over - 9;
		char *longer = malloc(n + 1);
		struct lp_chat_msg big[1] = { { "user", longer } };
		memset(longer, 'x', n);
		longer[n] = 0;
		ck_assert_int_eq(lp_session_score(s, big, 1, "0123456789", &lp, &d), LP_E_INTERNAL);
		ck_assert_ptr_nonnull(strstr(d.msg, "token budget"));
		lp_diag_init(&d);
		ck_assert_int_eq(lp_session_score(s, big, 1, "012345678", &lp, &d), LP_OK);
		free(longer);
	}
	lp_session_free(s);
	remove_files();
}
END_TEST

START_TEST(test_session_missing_model)
{
	struct lp_session_params p = lp_session_default_params();
	struct lp_session *s;
	struct lp_diag d;

	p.path = "/nonexistent/model.gguf";
	lp_diag_init(&d);
	ck_assert_int_eq(lp_session_open(&p, &s, &d), LP_E_MODEL);
	ck_assert_ptr_nonnull(strstr(d.msg, "no model: run `make models` or set model.path"));
	ck_assert_ptr_null(s);
}
END_TEST

/* With shrinking, a context refused by the budget halves until it fits;
 * without, the budget error stands. */
START_TEST(test_session_context_shrinks)
{
	struct lp_session_params p = lp_session_default_params();
	struct lp_session *s;
	struct lp_diag d;
	size_t at_512;

	write_model();
	s = open_session(512);
	at_512 = lp_mem_current_total();
	lp_session_free(s);
	lp_mem_set_budget(at_512 + 4096);
	p.path = model_path;
	p.n_ctx = 4096;
	p.n_threads = 1;
	lp_diag_init(&d);
	ck_assert_int_eq(lp_session_open(&p, &s, &d), LP_E_NOMEM);
	p.shrink = 1;
	lp_diag_init(&d);
	ck_assert_msg(lp_session_open(&p, &s, &d) == LP_OK, "%s", d.msg);
	ck_assert_uint_eq(lp_session_n_ctx(s), 512);
	ck_assert_str_eq(lp_session_note(s), "shrink: context 4096 -> 512 tokens (budget)");
	lp_session_free(s);
	lp_mem_set_budget(0);
	remove_files();
}
END_TEST

/* ---- the summary tree ---------------------------------------------- */

static size_t ceil_log2(size_t n)
{
	size_t k = 0;

	while (((size_t)1 << k) < n)
		k++;
	return k;
}

static void check_tree(const struct lp_doc *doc, size_t n0, size_t fanout)
{
	ck_assert_uint_ge(doc->n_levels, 1);
	ck_assert_uint_le(doc->n_levels, 1 + ceil_log2(n0));
	ck_assert_uint_eq(doc->levels[0].n, n0);
	for (size_t k = 0; k < doc->n_levels; k++) {
		const struct lp_summary_level *l = &doc->levels[k];
		size_t below = k ? doc->levels[k - 1].n : n0, next = 0;
		if (k)
			ck_assert_uint_lt(l->n, below); /* strictly fewer: termination */
		for (size_t j = 0; j < l->n; j++) {
			ck_assert_ptr_nonnull(l->texts[j]);
			ck_assert_uint_eq(l->first_input[j], next); /* contiguous cover */
			ck_assert_uint_ge(l->n_inputs[j], 1);
			ck_assert_uint_le(l->n_inputs[j], k ? fanout : 1);
			/* only a last input may go up alone */
			if (k && l->n_inputs[j] == 1)
				ck_assert_uint_eq(j, l->n - 1);
			next += l->n_inputs[j];
		}
		ck_assert_uint_eq(next, below);
		if (k)
			ck_assert_uint_gt(l->tokens_in, 0);
	}
	ck_assert_uint_eq(doc->levels[doc->n_levels - 1].n, 1);
	ck_assert_ptr_eq(doc->summary, doc->levels[doc->n_levels - 1].texts[0]);
}

/* Many (chunks, chunk tokens, fanout, n_ctx, max_tokens): every tree ends
 * in one summary within the level bound, and no step ever breaks the
 * engine's token check (which would be LP_E_INTERNAL). */
START_TEST(test_tree_shapes)
{
	static const size_t n_chunks[] = { 1, 2, 5, 9 };
	static const size_t chunk_bytes[] = { 20, 400, 3000 };
	static const size_t fanouts[] = { 2, 3, 8 };
	static const struct { size_t n_ctx, max_tokens; } ctxs[] = { { 512, 16 }, { 512, 128 },
								    { 1024, 300 } };
	size_t runs = 0, truncated = 0;

	write_model();
	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 3; b++)
			for (size_t c = 0; c < 3; c++)
				for (size_t e = 0; e < 3; e++) {
					struct lp_pipeline *p = load(
						"version: 1\nmodel: {path: '%s', context: %zu}\n"
						"stages:\n  - summarize: {strategy: tree, fanout: %zu, "
						"max_tokens: %zu}\n", model_path, ctxs[e].n_ctx,
						fanouts[c], ctxs[e].max_tokens);
					char *text = make_text(n_chunks[a], chunk_bytes[b]);
					struct lp_doc doc;
					struct lp_diag d;
					enum lp_status st;

					doc_over(&doc, p, text);
					ck_assert_uint_eq(doc.n_chunks, n_chunks[a]);
					lp_diag_init(&d);
					st = p->stages[0].kind->run(&doc, p->stages[0].opts, &d);
					ck_assert_msg(st == LP_OK, "chunks %zu x %zu, fanout %zu, ctx %zu, "
						      "max %zu: %s", n_chunks[a], chunk_bytes[b],
						      fanouts[c], ctxs[e].n_ctx, ctxs[e].max_tokens, d.msg);
					check_tree(&doc, n_chunks[a], fanouts[c]);
					truncated += doc.trace[0].n_events > 0;
					runs++;
					lp_doc_release(&doc);
					lp_mem_free(text);
					lp_pipeline_free(p);
				}
	ck_assert_uint_eq(runs, 108);
	ck_assert_uint_gt(truncated, 0); /* 3000-byte chunks were cut, with events */
	remove_files();
}
END_TEST

START_TEST(test_tree_context_too_small)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;
	char *text;

	write_model();
	p = load("version: 1\nmodel: {path: '%s', context: 256}\nstages:\n"
		 "  - summarize: {strategy: tree, max_tokens: 200}\n", model_path);
	text = make_text(3, 50);
	doc_over(&doc, p, text);
	lp_diag_init(&d);
	ck_assert_int_eq(p->stages[0].kind->run(&doc, p->stages[0].opts, &d), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(d.msg, "too small"));
	ck_assert_ptr_null(doc.summary);
	lp_doc_release(&doc);
	lp_mem_free(text);
	lp_pipeline_free(p);
	remove_files();
}
END_TEST

/* Run a one-stage tree pipeline over n chunks of `bytes` bytes. */
static void run_tree_over(struct lp_doc *doc, struct lp_pipeline **p, char **text, size_t n,
			  size_t bytes, const char *opts)
{
	struct lp_diag d;

	*p = load("version: 1\nmodel: {path: '%s', context: 1024}\n"
		  "stages:\n  - summarize: {strategy: tree, %s}\n", model_path, opts);
	*text = make_text(n, bytes);
	doc_over(doc, *p, *text);
	lp_diag_init(&d);
	ck_assert_msg((*p)->stages[0].kind->run(doc, (*p)->stages[0].opts, &d) == LP_OK, "%s",
		      d.msg);
}

/* Groups are even within a level and across levels: 9 chunks at fanout 8
 * go 9 -> 3 -> 1 in groups of 3 (not 8 + 1, then a pair), 20 go
 * 20 -> 4 -> 1 in groups of 5. */
START_TEST(test_tree_even_groups)
{
	static const struct { size_t n0, mid, size; } cases[] = { { 9, 3, 3 }, { 20, 4, 5 } };

	write_model();
	for (size_t c = 0; c < 2; c++) {
		struct lp_pipeline *p;
		struct lp_doc doc;
		char *text;

		run_tree_over(&doc, &p, &text, cases[c].n0, 20, "fanout: 8, max_tokens: 8");
		check_tree(&doc, cases[c].n0, 8);
		ck_assert_uint_eq(doc.n_levels, 3);
		ck_assert_uint_eq(doc.levels[1].n, cases[c].mid);
		for (size_t j = 0; j < cases[c].mid; j++)
			ck_assert_uint_eq(doc.levels[1].n_inputs[j], cases[c].size);
		ck_assert_uint_eq(doc.levels[2].n_inputs[0], cases[c].mid);
		lp_doc_release(&doc);
		lp_mem_free(text);
		lp_pipeline_free(p);
	}
	remove_files();
}
END_TEST

/* final_tokens: the root (and only the root) may write more than
 * max_tokens; a level that could fit one group at max_tokens is still cut
 * in two so that the root writes the summary. */
START_TEST(test_tree_final_tokens)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	char *text;
	size_t n;

	write_model();
	run_tree_over(&doc, &p, &text, 4, 30, "fanout: 4, max_tokens: 8, final_tokens: 48");
	check_tree(&doc, 4, 4);
	n = doc.n_levels;
	ck_assert_uint_le(doc.levels[0].tokens_out, 4 * 8);
	ck_assert_uint_le(doc.levels[n - 1].tokens_out, 48);
	ck_assert_uint_gt(doc.levels[n - 1].tokens_out, 8);
	lp_doc_release(&doc);
	lp_mem_free(text);
	lp_pipeline_free(p);

	/* final_tokens is a ceiling: more than the context holds is cut */
	run_tree_over(&doc, &p, &text, 4, 30, "fanout: 4, max_tokens: 8, final_tokens: 5000");
	check_tree(&doc, 4, 4);
	ck_assert_uint_ge(doc.trace[0].n_events, 1);
	ck_assert_ptr_nonnull(strstr(doc.trace[0].events[0], "final_tokens cut to"));
	lp_doc_release(&doc);
	lp_mem_free(text);
	lp_pipeline_free(p);

	/* a single chunk is the root itself */
	run_tree_over(&doc, &p, &text, 1, 30, "max_tokens: 8, final_tokens: 48");
	ck_assert_uint_eq(doc.n_levels, 1);
	ck_assert_uint_gt(doc.levels[0].tokens_out, 8);
	lp_doc_release(&doc);
	lp_mem_free(text);
	lp_pipeline_free(p);
	remove_files();
}
END_TEST

/* final: join - once a level's summaries fit final_tokens they are the
 * result, joined as paragraphs without a model step; without room the
 * tree merges as before. */
START_TEST(test_tree_final_join)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	char *text;
	size_t n;

	write_model();
	run_tree_over(&doc, &p, &text, 9, 30,
		      "fanout: 8, max_tokens: 8, final_tokens: 200, final: join");
	ck_assert_uint_eq(doc.n_levels, 2);
	ck_assert_uint_eq(doc.levels[0].n, 9);
	ck_assert_uint_eq(doc.levels[1].n, 1);
	ck_assert_ptr_eq(doc.summary, doc.levels[1].texts[0]);
	ck_assert_uint_eq(doc.levels[1].n_inputs[0], 9);
	ck_assert_uint_eq(doc.levels[1].tokens_in, 0);
	ck_assert_ptr_nonnull(strstr(doc.summary, doc.levels[0].texts[0]));
	ck_assert_ptr_nonnull(strstr(doc.summary, doc.levels[0].texts[8]));
	ck_assert_uint_eq(doc.trace[0].n_events, 1);
	ck_assert_ptr_nonnull(strstr(doc.trace[0].events[0], "join: 9 summaries"));
	lp_doc_release(&doc);
	lp_mem_free(text);
	lp_pipeline_free(p);

	/* 9 summaries of up to 8 tokens do not fit 20: merged, then joined
	 * or merged at the top */
	run_tree_over(&doc, &p, &text, 9, 30,
		      "fanout: 8, max_tokens: 8, final_tokens: 20, final: join");
	n = doc.n_levels;
	ck_assert_uint_ge(n, 3);
	ck_assert_uint_gt(doc.levels[1].tokens_in, 0);
	ck_assert_uint_eq(doc.levels[n - 1].n, 1);
	lp_doc_release(&doc);
	lp_mem_free(text);
	lp_pipeline_free(p);
	remove_files();
}
END_TEST

/* extract_words: the model reads each chunk's central sentences only. */
START_TEST(test_tree_extract)
{
	size_t in[2];
	char *text;

	write_model();
	text = make_text(4, 600);
	for (int e = 0; e < 2; e++) {
		struct lp_pipeline *p = load("version: 1\nmodel: {path: '%s', context: 1024}\n"
					     "stages:\n  - summarize: {strategy: tree, fanout: 4, "
					     "max_tokens: 16, extract_words: %d}\n", model_path,
					     e ? 12 : 0);
		struct lp_doc doc;
		struct lp_diag d;

		doc_over(&doc, p, text);
		lp_diag_init(&d);
		ck_assert_msg(p->stages[0].kind->run(&doc, p->stages[0].opts, &d) == LP_OK, "%s",
			      d.msg);
		check_tree(&doc, 4, 4);
		in[e] = doc.levels[0].tokens_in;
		lp_doc_release(&doc);
		lp_pipeline_free(p);
	}
	/* 4 prompts of ~600 text tokens against 4 of at most ~12 words */
	ck_assert_uint_lt(in[1] + 4 * 400, in[0]);
	lp_mem_free(text);
	remove_files();
}
END_TEST

/* n chunks of prose: sentences of 9+ words ending with a full stop, and
 * a table row that must never be taken. */
static char *make_prose(size_t n)
{
	static const char *const things[] = { "river", "boat", "stone", "mill", "bridge" };
	struct lp_buf b;
	size_t len;

	lp_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < 5; k++)
			lp_buf_addf(&b, "The farmer of part %zu keeps the old %s near the %s "
				    "every year. ", i, things[k], things[(k + i) % 5]);
		lp_buf_addf(&b, "\n| %s | %zu | table row of part %zu |\n\n", things[i % 5], i, i);
	}
	return lp_buf_detach(&b, &len);
}

/* map: compress and points - every sentence of the result is one of the
 * text (the tiny model's junk is never faithful), every chunk keeps a
 * point while the budget allows, and a small budget keeps one per run of
 * chunks. */
START_TEST(test_tree_points)
{
	static const char *const maps[] = { "compress", "points" };
	char *text;

	const char *one = "The farmer of part 0 keeps the old river near the river every year.";
	size_t cost;

	write_model();
	cost = lp_points_cost(one, strlen(one)) + 2;
	text = make_prose(6);
	for (int m = 0; m < 2; m++)
		for (int small = 0; small < 2; small++) {
			struct lp_pipeline *p = load(
				"version: 1\nmodel: {path: '%s', context: 1024}\n"
				"stages:\n  - summarize: {strategy: tree, map: %s, points: 2, "
				"max_tokens: 32, final_tokens: %zu}\n", model_path, maps[m],
				small ? 3 * cost + cost / 2 : 20 * cost);
			struct lp_doc doc;
			struct lp_diag d;
			size_t lines = 0, seen[6] = {0};
			const char *line;

			doc_over(&doc, p, text);
			lp_diag_init(&d);
			ck_assert_msg(p->stages[0].kind->run(&doc, p->stages[0].opts, &d) == LP_OK,
				      "%s", d.msg);
			ck_assert_uint_eq(doc.n_levels, 2);
			ck_assert_uint_eq(doc.levels[0].n, 6);
			ck_assert_uint_eq(doc.levels[1].n, 1);
			ck_assert_uint_eq(doc.levels[1].n_inputs[0], 6);
			ck_assert_ptr_eq(doc.summary, doc.levels[1].texts[0]);
			/* sentences joined by a space (same chunk) or a blank line */
			for (line = doc.summary; *line; lines++) {
				const char *end = strstr(line, "year.");
				size_t len, part;
				char sentence[256];
				ck_assert_msg(end != NULL, "%s: '%s'", maps[m], doc.summary);
				len = (size_t)(end + 5 - line);
				ck_assert_uint_lt(len, sizeof(sentence));
				memcpy(sentence, line, len);
				sentence[len] = '\0';
				/* a sentence of the text, never its table */
				ck_assert_msg(strstr(text, sentence) && !strchr(sentence, '|') &&
					      sscanf(sentence, "The farmer of part %zu", &part) == 1 &&
					      part < 6, "%s: '%s'", maps[m], sentence);
				seen[part]++;
				line += len;
				ck_assert_msg(!*line || !strncmp(line, " The", 4) ||
					      !strncmp(line, "\n\nThe", 5), "%s", doc.summary);
				line += *line == ' ' ? 1 : *line ? 2 : 0;
			}
			if (!small) { /* room for all: each chunk keeps 2 */
				ck_assert_uint_ge(lines, 6);
				for (size_t i = 0; i < 6; i++)
					ck_assert_uint_ge(seen[i], 1);
			} else { /* room for 3 points: from runs of 2 chunks */
				ck_assert_uint_ge(lines, 1);
				ck_assert_uint_le(lines, 3);
				ck_assert_uint_le(seen[0] + seen[1], 1);
				ck_assert_uint_le(seen[4] + seen[5], 1);
			}
			lp_doc_release(&doc);
			lp_pipeline_free(p);
		}
	lp_mem_free(text);
	remove_files();
}
END_TEST

/* map: compress - a lead is taken with its next sentence when that one
 * names what the lead does not (a path the chunk repeats), else alone;
 * final_tokens leaves room for 2 sentences a chunk (more than points: 1),
 * and for one point of the lengths below. */
START_TEST(test_compress_lead_next)
{
	static const char *const next[] = {
		"He keeps the grain in /var/farm/grain.db for the winter. ",
		"He keeps the grain in the barn for the cold winter, and in the spring he sells "
		"what is left of it to the baker who lives at the far end of the long road. ",
	};
	const char *lead = "The farmer of the valley keeps the old mill near the river.";

	write_model();
	for (int k = 0; k < 2; k++) {
		struct lp_pipeline *p = load(
			"version: 1\nmodel: {path: '%s', context: 1024}\n"
			"stages:\n  - summarize: {strategy: tree, map: compress, points: 1, "
			"max_tokens: 32, final_tokens: 56}\n", model_path);
		struct lp_doc doc;
		struct lp_diag d;
		struct lp_buf text, want;

		lp_buf_init(&text);
		lp_buf_init(&want);
		lp_buf_addf(&text, "%s %sNobody else in the whole valley opens /var/farm/grain.db "
			    "in the spring season at all, not even the miller who keeps the keys "
			    "of every other door.", lead, next[k]);
		lp_buf_addf(&want, "%s %.*s", lead, (int)strlen(next[k]) - 1, next[k]);
		doc_over(&doc, p, text.data);
		lp_diag_init(&d);
		ck_assert_msg(p->stages[0].kind->run(&doc, p->stages[0].opts, &d) == LP_OK, "%s",
			      d.msg);
		ck_assert_str_eq(doc.summary, k ? lead : want.data);
		lp_doc_release(&doc);
		lp_pipeline_free(p);
		lp_buf_release(&text);
		lp_buf_release(&want);
	}
	remove_files();
}
END_TEST

/* map: compress - a label on a line of its own ("Tip") is no part of the
 * sentence it stands over; a word that ends a line inside a paragraph
 * is. */
START_TEST(test_compress_label)
{
	static const char *const texts[] = {
		"    Tip\n\xc2\xa0 \xc2\xa0\n    The farmer of the valley keeps the old mill near the river.",
		"Some words of the valley come first here. The\nfarmer of the valley keeps the "
		"old mill near it.",
	};
	static const char *const want[] = {
		"The farmer of the valley keeps the old mill near the river.",
		"Some words of the valley come first here. The farmer of the valley keeps the old "
		"mill near it.",
	};

	write_model();
	for (int k = 0; k < 2; k++) {
		struct lp_pipeline *p = load(
			"version: 1\nmodel: {path: '%s', context: 1024}\n"
			"stages:\n  - summarize: {strategy: tree, map: compress, points: 2, "
			"max_tokens: 32, final_tokens: 60}\n", model_path);
		struct lp_doc doc;
		struct lp_diag d;

		doc_over(&doc, p, texts[k]);
		lp_diag_init(&d);
		ck_assert_msg(p->stages[0].kind->run(&doc, p->stages[0].opts, &d) == LP_OK, "%s",
			      d.msg);
		ck_assert_str_eq(doc.summary, want[k]);
		lp_doc_release(&doc);
		lp_pipeline_free(p);
	}
	remove_files();
}
END_TEST

START_TEST(test_refine)
{
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;
	char *text;

	write_model();
	p = load("version: 1\nmodel: {path: '%s', context: 1024}\nstages:\n"
		 "  - summarize: {strategy: refine, max_tokens: 40, prompt: 'Sum up.'}\n",
		 model_path);
	text = make_text(5, 300);
	doc_over(&doc, p, text);
	lp_diag_init(&d);
	ck_assert_msg(p->stages[0].kind->run(&doc, p->stages[0].opts, &d) == LP_OK, "%s", d.msg);
	ck_assert_uint_eq(doc.n_levels, 1);
	ck_assert_uint_eq(doc.levels[0].n, 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(doc.levels[0].first_input[i], 0);
		ck_assert_uint_eq(doc.levels[0].n_inputs[i], i + 1);
	}
	ck_assert_ptr_eq(doc.summary, doc.levels[0].texts[4]);
	ck_assert_ptr_nonnull(strstr(doc.trace[0].note, "refine levels: 5"));
	lp_doc_release(&doc);
	lp_mem_free(text);
	lp_pipeline_free(p);
	remove_files();
}
END_TEST

/* ---- whole runs ----------------------------------------------------- */

static void write_doc(const char *text)
{
	FILE *f;

	snprintf(doc_path, sizeof(doc_path), "/tmp/lpipe-chain-%ld.txt", (long)getpid());
	f = fopen(doc_path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static const char chain_yaml[] =
	"version: 1\n"
	"model: {path: '%s', context: %d}\n"
	"memory: {on_oom: %s}\n"
	"retrieval: {scorer: bm25}\n"
	"stages:\n"
	"  - split: {unit: tokens, size: 120, overlap: 0, boundary: sentence}\n"
	"  - retrieve: {query: '${question}', top_k: 3, order: document}\n"
	"  - summarize: {strategy: tree, fanout: 2, max_tokens: 24}\n"
	"  - answer: {max_tokens: 24}\n";

static enum lp_status run_chain(const char *on_oom, int n_ctx, struct lp_doc *doc,
				struct lp_diag *d)
{
	static const char *const names[] = { "question" };
	static const char *const values[] = { "Where is the stone bridge?" };
	struct lp_vars vars = { names, values, 1 };
	struct lp_pipeline *p;
	struct lp_buf b;
	enum lp_status st;

	lp_buf_init(&b);
	lp_buf_addf(&b, chain_yaml, model_path, n_ctx, on_oom);
	st = lp_pipeline_load_text("t.yaml", b.data, b.len, &vars, NULL, 0, &p, d);
	lp_buf_release(&b);
	if (st)
		return LP_E_IO; /* not this suite's concern: the config loader's */
	st = lp_runner_run(p, doc_path, values[0], NULL, doc, NULL, d);
	/* the doc keeps pointers into the pipeline's options: free it after */
	if (st) {
		lp_doc_release(doc);
		lp_pipeline_free(p);
		return st;
	}
	doc->pipeline = p; /* freed by the caller through free_chain */
	return st;
}

static void free_chain(struct lp_doc *doc)
{
	struct lp_pipeline *p = (struct lp_pipeline *)doc->pipeline;

	lp_doc_release(doc);
	lp_pipeline_free(p);
}

static int has_event(const struct lp_doc *doc, const char *prefix)
{
	for (size_t i = 0; i < doc->n_trace; i++)
		for (size_t k = 0; k < doc->trace[i].n_events; k++)
			if (!strncmp(doc->trace[i].events[k], prefix, strlen(prefix)))
				return 1;
	return 0;
}

/* Only ids that were in the prompt survive; the Sources line names them. */
START_TEST(test_answer_cites_existing_chunks)
{
	struct lp_doc doc;
	struct lp_diag d;
	char *text = make_text(8, 200);

	write_model();
	write_doc(text);
	lp_diag_init(&d);
	ck_assert_msg(run_chain("fail", 1024, &doc, &d) == LP_OK, "%s", d.msg);
	ck_assert_ptr_nonnull(doc.answer);
	ck_assert_ptr_nonnull(doc.summary);
	/* The random tiny model may write no word any chunk holds: then
	 * nothing is cited, and no chunk may be named in the answer. */
	if (doc.n_cited == 0)
		ck_assert_ptr_null(strstr(doc.answer, "[chunk "));
	for (size_t i = 0; i < doc.n_cited; i++) {
		char tag[40];
		int found = 0;
		for (size_t j = 0; j < doc.n_selection; j++)
			found |= doc.selection[j] == doc.cited[i];
		ck_assert_msg(found, "cited chunk %zu was not given", doc.cited[i]);
		snprintf(tag, sizeof(tag), "[chunk %zu]", doc.cited[i]);
		ck_assert_ptr_nonnull(strstr(strstr(doc.answer, "Sources: "), tag));
	}
	free_chain(&doc);
	lp_mem_free(text);
	remove_files();
}
END_TEST

START_TEST(test_citation_filter)
{
	static const size_t ids[] = { 3, 7 };
	size_t cited[4], n;
	struct lp_buf out;

	lp_buf_init(&out);
	lp_stage_filter_citations("It is [chunk 7] and [chunk 99] or [Chunk 3], [chunk 7].", ids, 2,
				  &out, cited, &n);
	ck_assert_str_eq(out.data, "It is [chunk 7] and or [Chunk 3], [chunk 7].");
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(cited[0], 7);
	ck_assert_uint_eq(cited[1], 3);
	lp_buf_release(&out);
}
END_TEST

/* A cited chunk must hold a word of the answer beyond the question's; when
 * none is left the chunks holding the most of them are cited instead. */
START_TEST(test_citation_check)
{
	static const char text[] =
		"The default is 60 seconds for mail.|Mail is checked by the shell.|"
		"Every 60 seconds the shell wakes.";
	struct lp_chunk chunks[3] = { { 0, 35, 0, 0 }, { 36, 29, 0, 0 }, { 66, 33, 0, 0 } };
	struct lp_doc doc;
	static const size_t ids[] = { 0, 1, 2 };
	static const char q[] = "How often is mail checked?";
	size_t cited[4];

	memset(&doc, 0, sizeof(doc));
	doc.text = text;
	doc.len = strlen(text);
	doc.chunks = chunks;
	doc.n_chunks = 3;
	ck_assert_int_eq(strncmp(text + chunks[2].off, "Every", 5), 0);
	/* 1 holds only question words: dropped; 0 kept */
	cited[0] = 1;
	cited[1] = 0;
	ck_assert_uint_eq(lp_stage_check_citations(&doc, "every 60 seconds", q, ids, 3, cited, 2), 1);
	ck_assert_uint_eq(cited[0], 0);
	/* nothing cited: 2 holds all three words, 0 only two */
	ck_assert_uint_eq(lp_stage_check_citations(&doc, "every 60 seconds", q, ids, 3, cited, 0), 1);
	ck_assert_uint_eq(cited[0], 2);
	/* a tie cites both */
	ck_assert_uint_eq(lp_stage_check_citations(&doc, "60 seconds", q, ids, 3, cited, 0), 2);
	ck_assert_uint_eq(cited[0], 0);
	ck_assert_uint_eq(cited[1], 2);
	/* no chunk holds the answer: nothing is cited */
	ck_assert_uint_eq(lp_stage_check_citations(&doc, "ninety minutes", q, ids, 3, cited, 0), 0);
}
END_TEST

/*
 * Fail each tracked allocation of a short chain run in turn, each in its
 * own process (the allocator reads LPIPE_FAIL_ALLOC once): with on_oom
 * shrink every run ends in a complete result (some of them shrunk, with the
 * shrink in the trace) or in LP_E_NOMEM, never in a crash or an incomplete
 * success; with on_oom fail a failure is LP_E_NOMEM.
 */
static int child_run(long n, const char *on_oom)
{
	struct lp_doc doc;
	struct lp_diag d;
	char v[24];
	enum lp_status st;
	int shrunk;

	snprintf(v, sizeof(v), "%ld", n);
	setenv("LPIPE_FAIL_ALLOC", v, 1);
	lp_diag_init(&d);
	st = run_chain(on_oom, 1024, &doc, &d);
	if (st == LP_E_NOMEM)
		return d.msg[0] ? 4 : 6;
	if (st == LP_E_IO)
		return 3; /* the pipeline did not load */
	if (st) {
		fprintf(stderr, "allocation %ld: status %d: %s\n", n, st, d.msg);
		return 5;
	}
	if (!doc.summary || !doc.answer || !doc.n_levels ||
	    doc.levels[doc.n_levels - 1].n != 1)
		return 7;
	shrunk = has_event(&doc, "shrink");
	free_chain(&doc);
	return shrunk ? 1 : 0;
}

static void sweep(const char *on_oom, long last, int *counts)
{
	for (long n = 1; n <= last; n++) {
		pid_t pid = fork();
		int status;
		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			_exit(child_run(n, on_oom));
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status), "allocation %ld: killed by signal %d", n,
			      WTERMSIG(status));
		ck_assert_msg(WEXITSTATUS(status) <= 1 || WEXITSTATUS(status) == 3 ||
			      WEXITSTATUS(status) == 4,
			      "allocation %ld (%s): exit %d", n, on_oom, WEXITSTATUS(status));
		counts[WEXITSTATUS(status)]++;
	}
}

START_TEST(test_fault_sweep)
{
	int counts[8] = { 0 }, fail_counts[8] = { 0 };
	static char text[4096];
	size_t len = 0;

	/* no tracked allocation in this process before the children run: the
	 * count they fail at starts from here */
	for (int i = 0; i < 6; i++) {
		len += (size_t)snprintf(text + len, sizeof(text) - len, "Part %d.", i);
		for (int k = 0; k < 8; k++)
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						" The stone bridge%d crosses river %d.", i, k);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "\n\n");
	}
	write_model();
	write_doc(text);
	sweep("shrink", 300, counts);
	ck_assert_int_gt(counts[4], 0);   /* some allocations cannot be worked around */
	ck_assert_int_gt(counts[1], 0);   /* some are, by shrinking */
	sweep("fail", 120, fail_counts);
	ck_assert_int_eq(fail_counts[1], 0);
	ck_assert_int_gt(fail_counts[4], 0);
	remove_files();
}
END_TEST

/* A budget that refuses long prompts but not short ones: the run shrinks
 * and still completes. */
START_TEST(test_shrink_on_budget)
{
	struct lp_doc doc;
	struct lp_diag d;
	char *text = make_text(6, 150);
	size_t base;
	struct lp_session *s;

	write_model();
	write_doc(text);
	s = open_session(1024);
	base = lp_mem_current_total();
	lp_session_free(s);
	/* the model and context plus a little: the doc and its tables fit, the
	 * token lists of the longest prompts do not */
	lp_mem_set_budget(base + 64 * 1024);
	lp_diag_init(&d);
	if (run_chain("shrink", 1024, &doc, &d) == LP_OK) {
		ck_assert_ptr_nonnull(doc.summary);
		ck_assert_ptr_nonnull(doc.answer);
		free_chain(&doc);
	} else {
		ck_assert_int_eq(d.status, LP_E_NOMEM);
	}
	lp_mem_set_budget(0);
	lp_mem_free(text);
	remove_files();
}
END_TEST

START_TEST(test_generate_and_truncate)
{
	static const char *const names[] = { "question" };
	static const char *const values[] = { "rivers" };
	struct lp_vars vars = { names, values, 1 };
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;
	struct lp_buf b;
	char *text = make_text(20, 200);

	write_model();
	write_doc(text);
	lp_buf_init(&b);
	lp_buf_addf(&b, "version: 1\nmodel: {path: '%s', context: 512}\nstages:\n"
		    "  - truncate: {head: 100, tail: 50, middle: summary, middle_words: 10}\n"
		    "  - generate: {prompt: 'Write about ${question}.', max_total: 90, chunk: 30, "
		    "overlap: 10}\n", model_path);
	lp_diag_init(&d);
	ck_assert_msg(lp_pipeline_load_text("t.yaml", b.data, b.len, &vars, NULL, 0, &p, &d) == LP_OK,
		      "%s", d.msg);
	ck_assert_msg(lp_runner_run(p, doc_path, "rivers", NULL, &doc, NULL, &d) == LP_OK, "%s", d.msg);
	/* truncate: head and tail of the source, the middle marked */
	ck_assert_int_eq(memcmp(doc.text, doc.src.text, 60), 0);
	ck_assert_uint_lt(doc.len, doc.src.len);
	ck_assert_ptr_nonnull(strstr(doc.text, "[...]"));
	ck_assert_int_eq(memcmp(doc.text + doc.len - 20, doc.src.text + doc.src.len - 20, 20), 0);
	ck_assert_ptr_nonnull(strstr(doc.trace[0].note, "kept 100 + 50"));
	ck_assert_ptr_nonnull(doc.answer);
	ck_assert_ptr_nonnull(strstr(doc.trace[1].note, "generated"));
	lp_doc_release(&doc);
	lp_pipeline_free(p);
	lp_buf_release(&b);
	lp_mem_free(text);
	remove_files();
}
END_TEST

/* verify on_fail retry: a must phrase the junk model never writes (and a
 * length it never reaches) fails every pass; the runner reruns summarize
 * and verify `max_retries` times, each a step with its own trace entry and
 * pass number, then the failure is reported with the level that lost the
 * phrase. The must-keep facts reach the rerun summary's prompt (its input
 * grows) and are cleared once verify has judged. */
START_TEST(test_verify_retry)
{
	static const char *const kinds[] = { "split", "summarize", "verify", "summarize", "verify",
					     "summarize", "verify" };
	static const int passes[] = { 1, 1, 1, 2, 2, 3, 3 };
	struct lp_pipeline *p;
	struct lp_doc doc;
	struct lp_diag d;
	struct lp_buf b;
	char *text = make_text(4, 120);

	write_model();
	write_doc(text);
	lp_buf_init(&b);
	lp_buf_addf(&b, "version: 1\nmodel: {path: '%s', context: 512}\nstages:\n"
		    "  - split: {unit: tokens, size: 100, boundary: sentence}\n"
		    "  - summarize: {strategy: tree, fanout: 2, max_tokens: 16}\n"
		    "  - verify: {keyphrases: {must: ['Part 1']}, min_words: 100000, "
		    "on_fail: retry, max_retries: 2}\n", model_path);
	lp_diag_init(&d);
	ck_assert_msg(lp_pipeline_load_text("t.yaml", b.data, b.len, NULL, NULL, 0, &p, &d) == LP_OK,
		      "%s", d.msg);
	ck_assert_msg(lp_runner_run(p, doc_path, NULL, NULL, &doc, NULL, &d) == LP_OK, "%s", d.msg);
	ck_assert(doc.verify.done);
	ck_assert(!doc.verify.passed);
	ck_assert_int_eq(doc.verify.retries, 2);
	ck_assert_uint_eq(doc.rerun.count, 2);
	ck_assert_uint_eq(doc.n_trace, 7);
	for (size_t i = 0; i < 7; i++) {
		ck_assert_str_eq(doc.trace[i].kind, kinds[i]);
		ck_assert_int_eq(doc.trace[i].pass, passes[i]);
		ck_assert_uint_gt(doc.trace[i].peak_tracked_bytes, 0);
	}
	ck_assert_uint_eq(doc.trace[3].stage, 1);
	{
		size_t in1 = 0, in2 = 0, out;
		const char *a = strstr(doc.trace[1].note, "tokens in/out: ");
		const char *c = strstr(doc.trace[3].note, "tokens in/out: ");
		ck_assert(a && c);
		ck_assert_int_eq(sscanf(a, "tokens in/out: %zu/%zu", &in1, &out), 2);
		ck_assert_int_eq(sscanf(c, "tokens in/out: %zu/%zu", &in2, &out), 2);
		ck_assert_msg(in2 > in1, "%s | %s", doc.trace[1].note, doc.trace[3].note);
	}
	ck_assert_ptr_nonnull(strstr(doc.trace[2].note, "rerun 1 asked"));
	ck_assert_ptr_nonnull(strstr(doc.trace[6].note, "after retries"));
	ck_assert_int_ge(doc.verify.phrases[0].lost_level, 0);
	ck_assert(has_event(&doc, "retry 1: rerun from stage 2 (summarize)"));
	ck_assert(has_event(&doc, "retry 2"));
	ck_assert(has_event(&doc, "lost: 'Part 1'"));
	ck_assert_ptr_null(doc.must_keep);
	ck_assert_ptr_nonnull(doc.summary);
	lp_doc_release(&doc);
	lp_pipeline_free(p);
	lp_buf_release(&b);
	lp_mem_free(text);
	remove_files();
}
END_TEST

static Suite *chain_suite(void)
{
	Suite *s = suite_create("chain");
	TCase *t = tcase_create("chain");

	tcase_set_timeout(t, 300);
	tcase_add_test(t, test_session_tokens);
	tcase_add_test(t, test_session_score);
	tcase_add_test(t, test_session_missing_model);
	tcase_add_test(t, test_session_context_shrinks);
	tcase_add_test(t, test_tree_shapes);
	tcase_add_test(t, test_tree_context_too_small);
	tcase_add_test(t, test_tree_extract);
	tcase_add_test(t, test_tree_even_groups);
	tcase_add_test(t, test_tree_final_tokens);
	tcase_add_test(t, test_tree_final_join);
	tcase_add_test(t, test_tree_points);
	tcase_add_test(t, test_compress_lead_next);
	tcase_add_test(t, test_compress_label);
	tcase_add_test(t, test_refine);
	tcase_add_test(t, test_answer_cites_existing_chunks);
	tcase_add_test(t, test_citation_check);
	tcase_add_test(t, test_citation_filter);
	tcase_add_test(t, test_fault_sweep);
	tcase_add_test(t, test_shrink_on_budget);
	tcase_add_test(t, test_generate_and_truncate);
	tcase_add_test(t, test_verify_retry);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(chain_suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
