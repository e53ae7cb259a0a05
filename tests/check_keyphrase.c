/* check_keyphrase.c - tokens and matching, keyphrase extraction, the
 * verify stage. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/node.h"
#include "core/arena.h"
#include "core/mem.h"
#include "core/status.h"
#include "stages/doc.h"
#include "stages/stage.h"
#include "text/ground.h"
#include "text/keyphrase.h"
#include "text/match.h"
#include "text/scan.h"

extern const struct lp_stage_kind lp_stage_verify;

/* Tokens of text as "KIND:text" joined by spaces (W, C, P). */
static const char *tokens(const char *text)
{
	static char out[1024];
	struct lp_token t;
	size_t pos = 0, n = 0, len = strlen(text);

	out[0] = '\0';
	while (lp_match_token_next(text, len, &pos, &t))
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%c:%.*s", n ? " " : "",
				      "WCP"[t.kind], (int)t.len, text + t.off);
	return out;
}

START_TEST(test_tokens)
{
	ck_assert_str_eq(tokens("snake_case e-mail 3.5 1,024 don't"),
			 "W:snake_case W:e-mail W:3.5 W:1,024 W:don't");
	ck_assert_str_eq(tokens("end. a,b --opt"), "W:end P:. W:a P:, W:b P:- P:- W:opt");
	ck_assert_str_eq(tokens("人工智能。AI"), "C:人 C:工 C:智 C:能 P:。 W:AI");
	/* invalid bytes are one-byte punctuation, never skipped or overrun */
	ck_assert_str_eq(tokens("a\xff" "b"), "W:a P:\xff W:b");
	ck_assert_str_eq(tokens("a \xe4\xba"), "W:a P:\xe4 P:\xba");
}
END_TEST

/* The end of the word at text[0], read with flags (text/scan.h). */
static size_t word_bytes(const char *text, unsigned flags)
{
	return lp_scan_word_end(text, strlen(text), 0, flags);
}

/* One rule for what a word is; joining and width folding are options. */
START_TEST(test_scan_words)
{
	uint32_t cp;
	enum lp_scan_class cls;

	ck_assert_uint_eq(word_bytes("don't go", 0), 3);
	ck_assert_uint_eq(word_bytes("don't go", LP_SCAN_JOIN), 5);
	ck_assert_uint_eq(word_bytes("don\xe2\x80\x99t", LP_SCAN_JOIN), 7); /* don’t */
	ck_assert_uint_eq(word_bytes("1,024 files", LP_SCAN_JOIN), 5);
	ck_assert_uint_eq(word_bytes("a,b", LP_SCAN_JOIN), 1);       /* ',' joins digits only */
	ck_assert_uint_eq(word_bytes("end. Next", LP_SCAN_JOIN), 3); /* no word after '.' */
	ck_assert_uint_eq(word_bytes("_x", LP_SCAN_JOIN), 0);        /* starts no word */
	ck_assert_uint_eq(word_bytes("x_", LP_SCAN_JOIN), 1);
	/* fullwidth ASCII: a word when folded, CJK as it stands */
	ck_assert_uint_eq(word_bytes("\xef\xbc\xb5\xef\xbc\xb3\xef\xbc\xa2", LP_SCAN_FOLD_WIDTH), 9);
	ck_assert_uint_eq(word_bytes("\xef\xbc\xb5\xef\xbc\xb3\xef\xbc\xa2", 0), 0);
	ck_assert_uint_eq(lp_scan_char("\xef\xbc\xb5", 3, 0, LP_SCAN_FOLD_WIDTH, &cp, &cls), 3);
	ck_assert_uint_eq(cp, 'U');
	ck_assert_int_eq(cls, LP_SCAN_WORD);
	lp_scan_char("\xef\xbc\xb5", 3, 0, 0, &cp, &cls);
	ck_assert_int_eq(cls, LP_SCAN_CJK);
	/* an invalid byte is one OTHER byte, read as U+FFFD */
	ck_assert_uint_eq(lp_scan_char("\xff", 1, 0, 0, &cp, &cls), 1);
	ck_assert_uint_eq(cp, 0xFFFD);
	ck_assert_int_eq(cls, LP_SCAN_OTHER);
	lp_scan_char("\xe3\x80\x80", 3, 0, 0, &cp, &cls); /* ideographic space */
	ck_assert_int_eq(cls, LP_SCAN_SPACE);
}
END_TEST

START_TEST(test_word_counts)
{
	ck_assert_uint_eq(lp_match_count_words("", 0), 0);
	ck_assert_uint_eq(lp_match_count_words(" ,.;  ", 6), 0);
	ck_assert_uint_eq(lp_match_count_words("Hello, world!", 13), 2);
	ck_assert_uint_eq(lp_match_count_words("It costs 3.5 GiB.", 17), 4);
	/* every CJK character is a word */
	ck_assert_uint_eq(lp_match_count_words("你好，世界！ ok", strlen("你好，世界！ ok")), 5);
	ck_assert_uint_eq(lp_match_count_words("ひらがなカタカナ", strlen("ひらがなカタカナ")), 8);
}
END_TEST

START_TEST(test_stopwords)
{
	ck_assert(lp_match_is_stopword("the", 3));
	ck_assert(lp_match_is_stopword("yourselves", 10));
	ck_assert(lp_match_is_stopword("a", 1));
	ck_assert(!lp_match_is_stopword("bash", 4));
	ck_assert(!lp_match_is_stopword("th", 2));
	ck_assert(!lp_match_is_stopword("", 0));
}
END_TEST

static int contains(const char *text, const char *phrase)
{
	struct lp_match m;
	struct lp_diag d;
	int found = -1;

	ck_assert_int_eq(lp_match_init(&m, text, strlen(text), &d), LP_OK);
	ck_assert_int_eq(lp_match_contains(&m, phrase, strlen(phrase), &found), LP_OK);
	lp_match_release(&m);
	return found;
}

START_TEST(test_matcher)
{
	const char *t = "The  Bash\n  Shell reads HISTFILE at exit; it keeps e-mail.";
	struct lp_buf b;

	lp_buf_init(&b);
	ck_assert_int_eq(lp_match_normalize(t, strlen(t), &b), LP_OK);
	ck_assert_str_eq(b.data, "the bash shell reads histfile at exit; it keeps e-mail.");
	lp_buf_release(&b);

	ck_assert_int_eq(contains(t, "bash shell"), 1);
	ck_assert_int_eq(contains(t, "BASH \t SHELL"), 1);
	ck_assert_int_eq(contains(t, "histfile"), 1);
	ck_assert_int_eq(contains(t, "e-mail"), 1);
	/* a phrase must not cut a word at either end */
	ck_assert_int_eq(contains(t, "ash shell"), 0);
	ck_assert_int_eq(contains(t, "bash shel"), 0);
	ck_assert_int_eq(contains("an email", "mail"), 0);
	ck_assert_int_eq(contains("call snake_case", "snake"), 0);
	ck_assert_int_eq(contains("a long-context model", "context model"), 1);
	ck_assert_int_eq(contains(t, "zsh"), 0);
	ck_assert_int_eq(contains(t, ""), 0);
	/* Unicode case and CJK: hard-wrapped CJK still matches, and a CJK
	 * phrase may sit inside a longer run */
	ck_assert_int_eq(contains("ÉCOLE Straße", "école straße"), 1);
	ck_assert_int_eq(contains("研究人工\n智能的方法", "人工智能"), 1);
	ck_assert_int_eq(contains("研究人工智能的方法", "智能"), 1);
	ck_assert_int_eq(contains("研究人工智能的方法", "智慧"), 0);
}
END_TEST

START_TEST(test_regex)
{
	char msg[128];
	size_t off = 0;
	struct lp_diag d;
	int found = -1;
	char hostile[64];

	ck_assert(lp_match_regex_valid("[0-9]+ tokens", msg, sizeof(msg), &off));
	ck_assert(!lp_match_regex_valid("ab(c", msg, sizeof(msg), &off));
	ck_assert_uint_eq(off, 4);
	ck_assert(strlen(msg) > 0);

	lp_diag_init(&d);
	ck_assert_int_eq(lp_match_regex_search("[0-9]+ tokens", "read 128 tokens", 15, &found, &d), LP_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(lp_match_regex_search("^tokens", "read 128 tokens", 15, &found, &d), LP_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(lp_match_regex_search("\\p{Han}{2}", "汉字", strlen("汉字"), &found, &d), LP_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(lp_match_regex_search("(x", "x", 1, &found, &d), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(d.msg, "offset 2"));
	/* catastrophic backtracking stops at the match limit */
	memset(hostile, 'a', 40);
	strcpy(hostile + 40, "!");
	ck_assert_int_eq(lp_match_regex_search("^(a|a?)+$", hostile, strlen(hostile), &found, &d),
			 LP_E_INPUT);
	ck_assert_int_eq(found, 0);
}
END_TEST

/* Up to n phrases of text over `parts` parts, joined by '|'. */
static const char *extract_parts(const char *text, size_t parts, size_t n)
{
	static char out[4096];
	struct lp_span whole = { 0, strlen(text) };
	struct lp_arena a;
	struct lp_diag d;
	const char **v;
	size_t k, o = 0;

	lp_arena_init(&a);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_keyphrase_extract_spans(text, &whole, 1, parts, n, &a, &v, &k, NULL,
						    NULL, &d), LP_OK);
	out[0] = '\0';
	for (size_t i = 0; i < k; i++)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", i ? "|" : "", v[i]);
	lp_arena_release(&a);
	return out;
}

/* Extract n phrases; returns them joined by '|'. */
static const char *extract(const char *text, size_t n)
{
	return extract_parts(text, 0, n);
}

/* Where phrase is in the '|' list (-1: not there). */
static int place(const char *list, const char *phrase)
{
	size_t n = strlen(phrase);
	int at = 0;

	for (const char *p = list; *p; at++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, phrase, n))
			return at;
		if (!bar)
			break;
		p = bar + 1;
	}
	return -1;
}

/* A document's topics (parts > 1): a phrase one part repeats loses to one
 * every part holds, and a common lower-case word to a name. */
START_TEST(test_topics_spread)
{
	static char text[40000];
	const char *terms, *topics;
	size_t o = 0;

	for (int i = 0; i < 30; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "Multipurpose Internet Mail Extensions. ");
	for (int part = 0; part < 16; part++) {
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "The package manager is in it. The value is with Debian. ");
		for (int f = 0; f < 70; f++) /* stop words only: no phrase */
			o += (size_t)snprintf(text + o, sizeof(text) - o, "and so it is, ");
		o += (size_t)snprintf(text + o, sizeof(text) - o, "\n\n");
	}
	terms = extract_parts(text, 0, 4);
	ck_assert_int_eq(place(terms, "Multipurpose Internet Mail Extensions"), 0);
	ck_assert_int_lt(place(terms, "value"), place(terms, "Debian"));
	topics = extract_parts(text, 16, 4);
	ck_assert_int_eq(place(topics, "package manager"), 0);
	ck_assert_int_gt(place(topics, "Multipurpose Internet Mail Extensions"), 0);
	ck_assert_int_ge(place(topics, "Debian"), 0);
	ck_assert(place(topics, "value") < 0 ||
		  place(topics, "value") > place(topics, "Debian"));
}
END_TEST

static int has(const char *list, const char *phrase)
{
	size_t n = strlen(phrase);

	for (const char *p = list; (p = strstr(p, phrase)); p++)
		if ((p == list || p[-1] == '|') && (p[n] == '|' || p[n] == '\0'))
			return 1;
	return 0;
}

static const char rake_text[] =
	"Compatibility of systems of linear constraints over the set of natural numbers. "
	"Criteria of compatibility of a system of linear Diophantine equations, strict "
	"inequations, and nonstrict inequations are considered. Upper bounds for components "
	"of a minimal set of solutions and algorithms of construction of minimal generating "
	"sets of solutions for all types of systems are given. These criteria and the "
	"corresponding algorithms for constructing a minimal supporting set of solutions can "
	"be used in solving all the considered types of systems and systems of mixed types.";

START_TEST(test_rake)
{
	const char *top = extract(rake_text, 6);
	const char *all = extract(rake_text, 40);

	/* the multi-word technical terms lead; stop words never start or end
	 * a phrase, so "of", "the", "and" never appear as phrase edges */
	ck_assert_msg(has(top, "linear Diophantine equations"), "%s", top);
	ck_assert_msg(has(top, "minimal generating sets"), "%s", top);
	ck_assert_msg(has(top, "minimal supporting set"), "%s", top);
	ck_assert_msg(!strstr(all, "|of ") && !strstr(all, " of|") && !strstr(all, "|the "), "%s", all);
	/* deduplicated: "minimal set" is inside no chosen phrase's words, but
	 * "linear constraints" and "linear Diophantine equations" both stay */
	ck_assert_msg(has(all, "linear constraints"), "%s", all);
	ck_assert_msg(!has(all, "Diophantine equations"), "%s", all);
	ck_assert_msg(!has(all, "equations"), "%s", all);
	ck_assert_str_eq(extract(rake_text, 0), "");
	ck_assert_str_eq(extract("", 5), "");
	ck_assert_str_eq(extract("the of and, to.", 5), "");
}
END_TEST

START_TEST(test_numbers_and_units)
{
	const char *t = "The model reads 128 tokens per step and needs 3.5 GiB of memory; "
			"50% of it is cache. It was released in 2019 and costs 12 dollars.";
	const char *all = extract(t, 20);

	ck_assert_msg(has(all, "128 tokens"), "%s", all);
	ck_assert_msg(has(all, "3.5 GiB"), "%s", all);
	ck_assert_msg(has(all, "50%"), "%s", all);
	ck_assert_msg(has(all, "12 dollars"), "%s", all);
	/* the unit is used up by its number; a bare year is not a quantity */
	ck_assert_msg(!has(all, "GiB") && !has(all, "2019"), "%s", all);
}
END_TEST

START_TEST(test_identifiers)
{
	const char *t = "Set HISTFILE and HISTSIZE before you call snake_case_name or "
			"getValue, then run it with --max-words and an Ordinary Word.";
	const char *all = extract(t, 20);

	ck_assert_msg(has(all, "HISTFILE"), "%s", all);
	ck_assert_msg(has(all, "HISTSIZE"), "%s", all);
	ck_assert_msg(has(all, "snake_case_name"), "%s", all);
	ck_assert_msg(has(all, "getValue"), "%s", all);
	ck_assert_msg(has(all, "--max-words"), "%s", all);
	/* identifiers outrank a plain phrase that occurs as often */
	ck_assert_msg(!strncmp(all, "HISTFILE|", 9) || !strncmp(all, "HISTSIZE|", 9) ||
		      !strncmp(all, "--max-words|", 12) || !strncmp(all, "snake", 5) ||
		      !strncmp(all, "getValue|", 9), "%s", all);
	ck_assert_msg(!has(all, "Ordinary") && !has(all, "max-words"), "%s", all);
}
END_TEST

/* The capitals a usage line writes for what the user types (--file=ARCHIVE,
 * [OPTIONS], -C DIR) are not identifiers; the names it sets are. */
START_TEST(test_placeholders)
{
	const char *t = "Run tar --file=ARCHIVE [OPTIONS] -C DIRECTORY --exclude PATTERN. "
			"Set TAR_BLOCKING and TAPEDRIVE before; TAPEDRIVE names the device.";
	const char *all = extract(t, 20);

	ck_assert_msg(has(all, "TAR_BLOCKING"), "%s", all);
	ck_assert_msg(has(all, "TAPEDRIVE"), "%s", all);
	ck_assert_msg(has(all, "--file") && has(all, "--exclude"), "%s", all);
	ck_assert_msg(!has(all, "ARCHIVE") && !has(all, "OPTIONS") && !has(all, "DIRECTORY") &&
		      !has(all, "PATTERN"), "%s", all);
}
END_TEST

START_TEST(test_quoted_terms)
{
	const char *t = "The manual calls it \"history expansion\" and also \xe2\x80\x98word "
			"splitting\xe2\x80\x99; the 'tilde prefix' matters, but \"this quote runs "
			"far too long to be a term at all\" does not. Don't drop `set -o vi`.";
	const char *all = extract(t, 30);

	ck_assert_msg(has(all, "history expansion"), "%s", all);
	ck_assert_msg(has(all, "word splitting"), "%s", all);
	ck_assert_msg(has(all, "tilde prefix"), "%s", all);
	ck_assert_msg(has(all, "set -o vi"), "%s", all);
	ck_assert_msg(!strstr(all, "this quote runs far"), "%s", all);
}
END_TEST

START_TEST(test_chinese_ngrams)
{
	const char *t = "人工智能是计算机科学的一个分支。人工智能研究如何让计算机模拟人类智能。"
			"机器学习是人工智能的核心技术之一。深度学习推动了机器学习的发展。"
			"今天天气很好，我们去公园散步。";
	const char *all = extract(t, 5);

	ck_assert_msg(!strncmp(all, "人工智能|", strlen("人工智能|")), "%s", all);
	ck_assert_msg(has(all, "机器学习"), "%s", all);
	ck_assert_msg(has(all, "计算机"), "%s", all);
	/* inside a chosen phrase: not repeated; seen once: not a candidate;
	 * never across punctuation */
	ck_assert_msg(!has(all, "人工") && !has(all, "智能") && !has(all, "公园"), "%s", all);
	ck_assert_msg(!strstr(all, "。"), "%s", all);
}
END_TEST

START_TEST(test_dedupe_case_insensitive)
{
	const char *t = "The Bash shell is popular. Many use a bash Shell for work. "
			"Every bash shell differs. The shell prompt waits.";
	const char *all = extract(t, 10);
	int shells = 0;

	for (const char *p = all; (p = strcasestr(p, "shell")); p++)
		shells++;
	/* one spelling of "bash shell" (its first), and no bare "shell" */
	ck_assert_msg(has(all, "Bash shell"), "%s", all);
	ck_assert_msg(!has(all, "bash Shell") && !has(all, "shell"), "%s", all);
	ck_assert_msg(shells == 2, "%s", all); /* Bash shell, shell prompt */
}
END_TEST

START_TEST(test_bounded_table)
{
	size_t n = 150000, len = n * 8;
	char *t = malloc(len + 1);
	struct lp_arena a;
	struct lp_diag d;
	const char **v;
	size_t k;

	for (size_t i = 0; i < n; i++)
		snprintf(t + i * 8, 9, "w%06zx ", i);
	lp_arena_init(&a);
	lp_mem_reset_peaks();
	ck_assert_int_eq(lp_keyphrase_extract(t, len, 5, &a, &v, &k, &d), LP_OK);
	ck_assert_uint_eq(k, 5);
	/* 65536 phrases and as many words at most: tables of 2 x 131072 slots
	 * and their keys, well under 64 MiB whatever the input */
	ck_assert_uint_lt(lp_mem_peak_total(), 64u << 20);
	lp_arena_release(&a);
	free(t);
}
END_TEST

/* Every tracked allocation of an extraction and a match, failed in turn:
 * a clean LP_E_NOMEM and nothing leaked, success past the last one. */
START_TEST(test_fault_sweep)
{
	static const char text[] =
		"Set HISTFILE before the \"history list\" grows to 500 lines. The history "
		"list keeps 3.5 GiB. 人工智能研究人工智能。";
	struct lp_arena a;
	struct lp_diag d;
	struct lp_match m;
	const char **v;
	char n[16];
	size_t k;
	int found = 0;
	enum lp_status st;

	/* set before the first allocation: the allocator reads it once */
	snprintf(n, sizeof(n), "%d", _i);
	setenv("LPIPE_FAIL_ALLOC", n, 1); /* forked test: stays in this child */
	lp_arena_init(&a);
	lp_diag_init(&d);
	st = lp_keyphrase_extract(text, strlen(text), 4, &a, &v, &k, &d);
	if (!st && !(st = lp_match_init(&m, text, strlen(text), &d))) {
		st = lp_match_contains(&m, "History  LIST", 13, &found);
		lp_match_release(&m);
	}
	if (st) {
		ck_assert_int_eq(st, LP_E_NOMEM);
	} else {
		ck_assert_uint_eq(k, 4);
		ck_assert_int_eq(found, 1);
	}
	if (_i == 1)
		ck_assert_int_eq(st, LP_E_NOMEM);
	if (_i == 60)
		ck_assert_int_eq(st, LP_OK);
	lp_arena_release(&a);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

/* A manual with a table of contents, numbered headings and
 * cross-references: the headings are repeated four times each, the
 * content terms twice; damping list-like lines leaves the content. */
static const char toc_text[] =
	"Table of Contents\n"
	"\n"
	"    2.2. Basic package management operations\n"
	"    2.3. Advanced archive mirror tricks\n"
	"    2.4. Network interface naming rules ........ 12\n"
	"\n"
	"2.2. Basic package management operations\n"
	"\n"
	"The resolver computes dependency closures before any download starts. A held\n"
	"package keeps its version while the resolver computes dependency closures for\n"
	"everything else (see Section 2.3, \"Advanced archive mirror tricks\").\n"
	"\n"
	"2.3. Advanced archive mirror tricks\n"
	"\n"
	"A local proxy caches downloaded archives for every machine on the network, so\n"
	"a local proxy saves bandwidth (see Section 2.2, \"Basic package management\n"
	"operations\", and see Section 2.4, \"Network interface naming rules\").\n"
	"\n"
	"Bash Features\n"
	"*************\n"
	"\n"
	"* Network interface naming rules:: how names are chosen.\n"
	"* Basic package management operations:: the first steps.\n";

START_TEST(test_toc_damping)
{
	const char *top = extract(toc_text, 4);

	ck_assert_msg(has(top, "resolver computes dependency closures"), "%s", top);
	ck_assert_msg(strstr(top, "local proxy"), "%s", top);
	ck_assert_msg(!strstr(top, "Basic package management"), "%s", top);
	ck_assert_msg(!strstr(top, "Advanced archive mirror"), "%s", top);
	ck_assert_msg(!strstr(top, "Network interface naming"), "%s", top);
	ck_assert_msg(!strstr(top, "Bash Features"), "%s", top);
	ck_assert_msg(!strstr(top, "see Section") && !strstr(top, "Section"), "%s", top);
	/* the same heading phrase in running text is a content term again */
	top = extract("Basic package management operations are easy. Basic package "
		      "management operations need root. Basic package management "
		      "operations are logged.", 1);
	ck_assert_str_eq(top, "Basic package management operations");
}
END_TEST

/* ---- grounding ------------------------------------------------------- */

/* The checked tokens of text as "kind:text" joined by spaces. */
static const char *ground_tokens(const char *text)
{
	static char out[1024];
	struct lp_ground_token t[32];
	size_t n = lp_ground_tokens(text, strlen(text), t, 32), o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && i < 32; i++)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s:%.*s", i ? " " : "",
				      lp_ground_kind_name(t[i].kind), (int)t[i].len, text + t[i].off);
	return out;
}

START_TEST(test_ground_tokens)
{
	ck_assert_str_eq(ground_tokens("Debian 3.2 keeps 1,024 files in /etc/apt/sources.list."),
			 "path:/etc/apt/sources.list number:3.2 number:1,024");
	ck_assert_str_eq(ground_tokens("Use --max-words=40 or -x, not - or -1."),
			 "option:--max-words option:-x number:40 number:1");
	/* numbers inside words are part of the word; ordinals and list markers
	 * are not claims; units glued to a number leave the number */
	ck_assert_str_eq(ground_tokens("ext4 on x86_64 runs SmolLM2, the 2nd time 3.5GB."),
			 "identifier:ext4 identifier:x86_64 identifier:SmolLM2 number:3.5");
	ck_assert_str_eq(ground_tokens("1. Install it.\n2) Run it 3 times."), "number:3");
	/* a section's number is a number; a range is two */
	ck_assert_str_eq(ground_tokens("3.2.1. The hostname\nSince 1975-2010, IEEE 1003.1-2001."),
			 "number:3.2.1 number:1975 number:2010 identifier:IEEE number:1003.1 "
			 "number:2001");
	ck_assert_str_eq(ground_tokens("On 2009-01-19 with 5.10.0-6-amd64."),
			 "number:2009 number:01 number:19 identifier:5.10.0-6-amd64");
	/* a count before its unit, a version after its name or with open
	 * parts is a number; a name's number is part of the name */
	ck_assert_str_eq(ground_tokens("In 1024-byte blocks, 7-bit, bash-4.0, tar 1.13.x, "
				       "192.168.0.x; UTF-8, x86-64, pre-step-6."),
			 "number:1024 number:7 number:4.0 number:1.13 number:192.168.0 "
			 "identifier:UTF-8 identifier:x86-64 identifier:pre-step-6");
	ck_assert_str_eq(ground_tokens("JavaScript, getValue, snake_case, os.path, GUI, e.g. I."),
			 "identifier:JavaScript identifier:getValue identifier:snake_case "
			 "identifier:os.path identifier:GUI");
	ck_assert_str_eq(ground_tokens("It says \"keep it short\" and 'don't' [chunk 3]."),
			 "quoted:keep it short quoted:don't");
	ck_assert_str_eq(ground_tokens("and/or input/output plain words"), "");
	/* Chinese: no spaces, the number and the Latin word are tokens of
	 * their own, the quoted term too */
	ck_assert_str_eq(ground_tokens("系统共有12个软件包，使用APT和「文件系统」。"),
			 "number:12 identifier:APT quoted:文件系统");
	ck_assert_str_eq(ground_tokens("配置在/etc/apt目录中。"), "path:/etc/apt");
}
END_TEST

/* found[] after scanning `source` for each of the tokens of `out`. */
static const char *grounded_in(const char *out, const char *source)
{
	static char res[64];
	struct lp_ground_token t[16];
	struct lp_ground g;
	struct lp_diag d;
	size_t n = lp_ground_tokens(out, strlen(out), t, 16), id;

	lp_diag_init(&d);
	lp_ground_init(&g);
	for (size_t i = 0; i < n && i < 16; i++) {
		ck_assert_int_eq(lp_ground_add(&g, out + t[i].off, t[i].len, t[i].kind, &id, &d), LP_OK);
		ck_assert_uint_eq(id, i); /* distinct tokens in these tests */
	}
	ck_assert_int_eq(lp_ground_scan(&g, source, strlen(source), NULL, NULL, &d), LP_OK);
	for (size_t i = 0; i < g.n; i++)
		res[i] = g.found[i] ? '1' : '0';
	res[g.n] = '\0';
	lp_ground_release(&g);
	return res;
}

START_TEST(test_ground_match)
{
	/* whole tokens: not inside a longer number or word */
	ck_assert_str_eq(grounded_in("12 and 3.2", "page 112, version 3.2.1"), "00");
	ck_assert_str_eq(grounded_in("12 and 3.2", "12 pages, version 3.2."), "11");
	/* a part of a date or a range stands as a number of its own */
	ck_assert_str_eq(grounded_in("Since 2023 and 1975", "on 2023-02-04, as 1975-2010 did"),
			 "11");
	ck_assert_str_eq(grounded_in("Since 2023", "in 12023-02-04"), "0");
	/* a unit may follow a number, a digit may not */
	ck_assert_str_eq(grounded_in("3.5 GB and 12 MB", "takes 3.5GB and 12.5 MB"), "10");
	ck_assert_str_eq(grounded_in("ext4 then x86_64", "EXT45 and x86_64_v2"), "00");
	ck_assert_str_eq(grounded_in("ext4 then x86_64", "ext4; x86_64."), "11");
	/* a number hyphened to its unit or its name is found in that word,
	 * and stands alone too */
	ck_assert_str_eq(grounded_in("in 1024-byte blocks since bash-4.0, tar 1.13.x",
				     "Values are in 1024-byte units; Bash-4.0 did; GNU tar 1.13.x"),
			 "111");
	ck_assert_str_eq(grounded_in("1024 bytes in bash 4.0", "1024-byte, bash-4.0"), "11");
	/* case and spacing folded; a quoted phrase may wrap in the source */
	ck_assert_str_eq(grounded_in("the \"Basic package management\" part, HISTFILE",
				     "see Basic package\n    management; histfile"), "11");
	ck_assert_str_eq(grounded_in("--max-words and /etc/apt", "the --max-words-x option"), "00");
	ck_assert_str_eq(grounded_in("--max-words and /etc/apt",
				     "the --max-words option in /etc/apt/sources.list"), "11");
	/* Chinese: the number stands alone between CJK letters */
	ck_assert_str_eq(grounded_in("共有12个", "系统共有12个软件包"), "1");
	ck_assert_str_eq(grounded_in("共有12个", "系统共有112个软件包"), "0");
	ck_assert_str_eq(grounded_in("「文件 系统」", "使用文件系统"), "1");
}
END_TEST

static size_t ground_done_bytes;

static void count_done(void *ctx, size_t off, size_t len)
{
	size_t *next = ctx;

	ck_assert_uint_eq(off, *next); /* in order, no gap, no overlap */
	*next = off + len;
	ground_done_bytes += len;
}

/* A source of several windows: a token cut by a window boundary is found
 * in the overlap, and every byte is reported done once, in order. */
START_TEST(test_ground_windows)
{
	size_t len = 3 * LP_GROUND_WINDOW + 1000, next = 0, id[3];
	char *src = malloc(len + 1);
	struct lp_ground g;
	struct lp_diag d;
	const char *tokens[] = { "HEAD_TOKEN", "CROSS_TOKEN", "LAST_TOKEN" };

	memset(src, 'x', len);
	for (size_t i = 50; i < len; i += 60)
		src[i] = ' ';
	src[len] = '\0';
	memcpy(src + 100, " HEAD_TOKEN ", 12);
	/* across the first window's end, where the cut would fall */
	memcpy(src + LP_GROUND_WINDOW - 6, " CROSS_TOKEN ", 13);
	memcpy(src + len - 20, " LAST_TOKEN ", 12);
	lp_diag_init(&d);
	lp_ground_init(&g);
	for (size_t i = 0; i < 3; i++)
		ck_assert_int_eq(lp_ground_add(&g, tokens[i], strlen(tokens[i]), LP_GROUND_IDENT,
					       &id[i], &d), LP_OK);
	ck_assert_int_eq(lp_ground_add(&g, "NOWHERE_TOKEN", 13, LP_GROUND_IDENT, &id[2], &d), LP_OK);
	ground_done_bytes = 0;
	ck_assert_int_eq(lp_ground_scan(&g, src, len, count_done, &next, &d), LP_OK);
	ck_assert_uint_eq(ground_done_bytes, len);
	ck_assert_uint_eq(g.n, 4);
	ck_assert(g.found[0] && g.found[1] && g.found[2]);
	ck_assert(!g.found[3]);
	/* the window buffer is one window, not the source */
	ck_assert_uint_lt(g.win.cap, LP_GROUND_WINDOW + LP_GROUND_WINDOW / 2);
	lp_ground_release(&g);
	free(src);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
}
END_TEST

/* ---- the verify stage ---------------------------------------------- */

struct fixture {
	struct lp_arena cfg;
	struct lp_diag d;
	struct lp_doc doc;
	void *opts;
};

static enum lp_status parse_opts(struct fixture *f, const char *yaml)
{
	struct lp_node *root;
	struct lp_cfg_ctx c = {"t.yaml", "stages[0].verify", &f->cfg, &f->d};

	lp_arena_init(&f->cfg);
	lp_diag_init(&f->d);
	ck_assert_int_eq(lp_yaml_parse("t.yaml", yaml, strlen(yaml), NULL, &f->cfg, &root, &f->d),
			 LP_OK);
	return lp_stage_verify.parse(&c, root, NULL, &f->opts);
}

/* A doc whose text is `src` cut in two chunks, and `summary` as result. */
static void make_doc(struct fixture *f, const char *src, const char *summary)
{
	lp_doc_init(&f->doc, NULL);
	f->doc.text = src;
	f->doc.len = strlen(src);
	f->doc.chunks = lp_arena_alloc(&f->doc.arena, 2 * sizeof(struct lp_chunk));
	f->doc.chunks[0].off = 0;
	f->doc.chunks[0].len = f->doc.len / 2;
	f->doc.chunks[1].off = f->doc.len / 2;
	f->doc.chunks[1].len = f->doc.len - f->doc.len / 2;
	f->doc.n_chunks = 2;
	f->doc.summary = summary;
}

static void fixture_release(struct fixture *f)
{
	lp_doc_release(&f->doc);
	lp_arena_release(&f->cfg);
}

static const char verify_src[] =
	"Bash stores the command history in HISTFILE. The history list has 500 lines. "
	"On exit the shell writes the history list to the history file.";

START_TEST(test_verify_pass_and_fail)
{
	struct fixture f;
	const char *summary = "The   shell writes the HISTORY list to HISTFILE on exit.";

	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {must: [history list, histfile], "
				    "regex: ['[0-9]+ lines']}, min_words: 5, on_fail: fail}"), LP_OK);
	make_doc(&f, verify_src, summary);
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_E_VERIFY);
	ck_assert(f.doc.verify.done);
	ck_assert_uint_eq(f.doc.verify.n_phrases, 3);
	ck_assert_uint_eq(f.doc.verify.n_survived, 2);
	ck_assert_str_eq(f.doc.verify.phrases[2].text, "[0-9]+ lines");
	ck_assert_str_eq(f.doc.verify.phrases[2].origin, "regex");
	ck_assert_int_eq(f.doc.verify.phrases[2].survived, 0);
	ck_assert_str_eq(f.doc.verify.phrases[0].origin, "must");
	ck_assert_int_eq(f.doc.verify.phrases[0].survived, 1);
	ck_assert_uint_eq(f.doc.verify.words, 10);
	ck_assert(!f.doc.verify.passed);
	ck_assert_double_eq_tol(f.doc.verify.survival_rate, 2.0 / 3.0, 1e-9);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "'[0-9]+ lines'"));
	fixture_release(&f);

	/* the same output passes once the pattern is satisfiable */
	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {must: [history list], regex: ['exit\\.$']},"
				    " min_words: 10, on_fail: fail}"), LP_OK);
	make_doc(&f, verify_src, summary);
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert(f.doc.verify.passed);
	fixture_release(&f);
}
END_TEST

START_TEST(test_verify_min_words_and_warn)
{
	struct fixture f;

	/* warn: the failure is reported in doc->verify, the run goes on */
	ck_assert_int_eq(parse_opts(&f, "{min_words: 11}"), LP_OK);
	make_doc(&f, verify_src, "One two three four five six seven eight nine ten.");
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert(!f.doc.verify.passed);
	ck_assert_uint_eq(f.doc.verify.words, 10);
	ck_assert_uint_eq(f.doc.verify.min_words, 11);
	ck_assert_double_eq(f.doc.verify.survival_rate, 1.0);
	fixture_release(&f);
}
END_TEST

START_TEST(test_verify_auto)
{
	struct fixture f;

	/* auto phrases come from the source and skip the must ones; with
	 * min_survival 0 they only move the survival rate: the run passes */
	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {auto: 3, must: [HISTFILE]}, min_survival: 0,"
				    " on_fail: fail}"), LP_OK);
	make_doc(&f, verify_src, "The history list goes to HISTFILE.");
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert(f.doc.verify.passed);
	ck_assert_uint_eq(f.doc.verify.n_phrases, 4);
	for (size_t i = 1; i < 4; i++) {
		ck_assert_str_eq(f.doc.verify.phrases[i].origin, "auto");
		ck_assert_str_ne(f.doc.verify.phrases[i].text, "HISTFILE");
	}
	ck_assert_str_eq(f.doc.verify.phrases[1].text, "history list");
	ck_assert_int_eq(f.doc.verify.phrases[1].survived, 1);
	ck_assert_uint_lt(f.doc.verify.n_survived, 4);
	fixture_release(&f);
}
END_TEST

/* levels: N checks each level of the tree against its own inputs: level 0
 * against the chunks, level 1 against level 0's texts; the lowest level
 * under min_survival fails the run, naming the level. */
static void two_levels(struct fixture *f, const char *chunk0, const char *chunk1)
{
	struct lp_summary_level *l = lp_arena_alloc(&f->doc.arena, 2 * sizeof(*l));
	const char **t0 = lp_arena_alloc(&f->doc.arena, 2 * sizeof(*t0));
	const char **t1 = lp_arena_alloc(&f->doc.arena, sizeof(*t1));
	size_t *in = lp_arena_alloc(&f->doc.arena, 6 * sizeof(*in));

	t0[0] = chunk0;
	t0[1] = chunk1;
	t1[0] = f->doc.summary;
	in[0] = 0, in[1] = 1, in[2] = 1, in[3] = 1; /* level 0: chunk i alone */
	in[4] = 0, in[5] = 2;                       /* level 1: both below */
	l[0] = (struct lp_summary_level){ 2, t0, in, in + 2, 0, 0 };
	l[1] = (struct lp_summary_level){ 1, t1, in + 4, in + 5, 0, 0 };
	f->doc.levels = l;
	f->doc.n_levels = 2;
}

START_TEST(test_verify_levels)
{
	struct fixture f;
	const char *summary = "Bash writes the history list to the history file in HISTFILE.";

	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {levels: 2}, min_survival: 0.5, "
				    "on_fail: fail}"), LP_OK);
	make_doc(&f, verify_src, summary);
	two_levels(&f, verify_src, verify_src + f.doc.len / 2); /* each keeps its chunk */
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert_uint_eq(f.doc.verify.n_levels, 2);
	ck_assert_uint_gt(f.doc.verify.levels[0].phrases, 0);
	ck_assert_uint_ge(f.doc.verify.levels[0].survived, f.doc.verify.levels[0].phrases - 1);
	ck_assert_uint_gt(f.doc.verify.levels[1].phrases, 0);
	ck_assert(f.doc.verify.passed);
	fixture_release(&f);

	/* level 0 loses its chunks' phrases: the run fails there */
	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {levels: 2}, min_survival: 0.5, "
				    "on_fail: fail}"), LP_OK);
	make_doc(&f, verify_src, summary);
	two_levels(&f, "Nothing of it is here.", "Nor here.");
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_E_VERIFY);
	ck_assert_int_eq(f.doc.verify.level_failed, 0);
	ck_assert_uint_eq(f.doc.verify.levels[0].survived, 0);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "summary level 0 kept 0/"));
	fixture_release(&f);
}
END_TEST

/* Run verify with `yaml` over verify_src and `summary`; returns the status. */
static enum lp_status verify_with(struct fixture *f, const char *yaml, const char *summary)
{
	ck_assert_int_eq(parse_opts(f, yaml), LP_OK);
	make_doc(f, verify_src, summary);
	return lp_stage_verify.run(&f->doc, f->opts, &f->d);
}

/* passed needs at least min_survival of the auto phrases (the default
 * 0.6), inclusive; must phrases still have to survive on their own. */
START_TEST(test_verify_min_survival)
{
	struct fixture f;
	const char *summary = "The history list is kept.";
	double rate;
	char yaml[128];

	ck_assert_int_eq(verify_with(&f, "{keyphrases: {auto: 3}, min_survival: 0, on_fail: fail}",
				     summary), LP_OK);
	ck_assert_uint_eq(f.doc.verify.n_auto, 3);
	rate = f.doc.verify.auto_survival_rate;
	ck_assert_double_eq_tol(rate, (double)f.doc.verify.n_auto_survived / 3.0, 1e-9);
	ck_assert(rate > 0 && rate < 0.6); /* some, not most, survived */
	fixture_release(&f);

	snprintf(yaml, sizeof(yaml), "{keyphrases: {auto: 3}, min_survival: %.17g, on_fail: fail}",
		 rate);
	ck_assert_int_eq(verify_with(&f, yaml, summary), LP_OK);
	ck_assert(f.doc.verify.passed);
	fixture_release(&f);

	/* the default threshold fails it, and says why */
	ck_assert_int_eq(verify_with(&f, "{keyphrases: {auto: 3}, on_fail: fail}", summary),
			 LP_E_VERIFY);
	ck_assert(!f.doc.verify.passed);
	ck_assert_double_eq(f.doc.verify.min_survival, 0.6);
	ck_assert_msg(strstr(f.d.msg, "automatic keyphrases survived, fewer than min_survival 0.6"),
		      "%s", f.d.msg);
	fixture_release(&f);

	/* every auto phrase kept: passes at 1.0 */
	ck_assert_int_eq(verify_with(&f, "{keyphrases: {auto: 3}, min_survival: 1, on_fail: fail}",
				     verify_src), LP_OK);
	ck_assert_double_eq(f.doc.verify.auto_survival_rate, 1.0);
	fixture_release(&f);

	/* no auto phrases: the share is 1.0, the threshold cannot fail */
	ck_assert_int_eq(verify_with(&f, "{keyphrases: {must: [history list]}, min_survival: 1, "
				     "on_fail: fail}", summary), LP_OK);
	ck_assert_double_eq(f.doc.verify.auto_survival_rate, 1.0);
	fixture_release(&f);
}
END_TEST

static const char ground_src[] =
	"Bash stores the command history in HISTFILE. The history list has 500 lines. "
	"Start it with --login to read /etc/profile first.";

/* grounded: true finds the sentences whose numbers and identifiers the
 * source lacks, reports them, and removes them (remove) or keeps them
 * and fails (warn). */
START_TEST(test_verify_grounded)
{
	const char *summary = "The history list has 500 lines in HISTFILE.\n\n"
			      "Debian 3.2 adds JavaScript support. Use --login to read /etc/profile.";
	struct fixture f;

	ck_assert_int_eq(parse_opts(&f, "{grounded: true, min_survival: 0, on_fail: fail}"), LP_OK);
	make_doc(&f, ground_src, summary);
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert(f.doc.verify.grounded);
	ck_assert_uint_eq(f.doc.verify.ground_tokens, 6);
	ck_assert_uint_eq(f.doc.verify.ground_found, 4);
	ck_assert_uint_eq(f.doc.verify.n_ungrounded, 1);
	ck_assert_str_eq(f.doc.verify.ungrounded[0].sentence, "Debian 3.2 adds JavaScript support.");
	ck_assert_uint_eq(f.doc.verify.ungrounded[0].n_tokens, 2);
	ck_assert_str_eq(f.doc.verify.ungrounded[0].tokens[0], "3.2");
	ck_assert_str_eq(f.doc.verify.ungrounded[0].kinds[0], "number");
	ck_assert_str_eq(f.doc.verify.ungrounded[0].tokens[1], "JavaScript");
	ck_assert(f.doc.verify.ungrounded[0].removed);
	ck_assert_uint_eq(f.doc.verify.n_removed, 1);
	ck_assert(f.doc.verify.passed);
	/* the paragraph break before the removed sentence is kept */
	ck_assert_str_eq(f.doc.summary, "The history list has 500 lines in HISTFILE.\n\n"
			 "Use --login to read /etc/profile.");
	ck_assert_uint_eq(f.doc.verify.words, 14); /* counted after the removal */
	fixture_release(&f);

	ck_assert_int_eq(parse_opts(&f, "{grounded: true, on_ungrounded: warn, min_survival: 0, "
				    "on_fail: fail}"), LP_OK);
	make_doc(&f, ground_src, summary);
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_E_VERIFY);
	ck_assert(!f.doc.verify.passed);
	ck_assert_uint_eq(f.doc.verify.n_removed, 0);
	ck_assert_ptr_eq(f.doc.summary, summary);
	ck_assert_msg(strstr(f.d.msg, "1 ungrounded sentence kept"), "%s", f.d.msg);
	fixture_release(&f);

	/* every sentence ungrounded: nothing removed, the run fails */
	ck_assert_int_eq(parse_opts(&f, "{grounded: true, on_fail: fail}"), LP_OK);
	make_doc(&f, ground_src, "Version 9.9 only.");
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_E_VERIFY);
	ck_assert_str_eq(f.doc.summary, "Version 9.9 only.");
	ck_assert_uint_eq(f.doc.verify.n_ungrounded, 1);
	ck_assert_uint_eq(f.doc.verify.n_removed, 0);
	fixture_release(&f);

	/* an answer may repeat the question's words */
	ck_assert_int_eq(parse_opts(&f, "{grounded: true, on_fail: fail}"), LP_OK);
	make_doc(&f, ground_src, NULL);
	f.doc.answer = "Yes, FOO_BAR is HISTFILE.";
	f.doc.question = "Is FOO_BAR the history file?";
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert_uint_eq(f.doc.verify.n_ungrounded, 0);
	ck_assert_uint_eq(f.doc.verify.ground_found, 2);
	fixture_release(&f);
}
END_TEST

START_TEST(test_verify_result_without_summary)
{
	struct fixture f;

	/* no summary: the chunks are the output */
	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {must: ['command history', 'history file']},"
				    " on_fail: fail}"), LP_OK);
	make_doc(&f, verify_src, NULL);
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_OK);
	ck_assert(f.doc.verify.phrases[0].survived);
	ck_assert(f.doc.verify.phrases[1].survived);
	fixture_release(&f);
}
END_TEST

START_TEST(test_verify_huge_source_uses_working_set)
{
	struct fixture f;
	size_t pad = (4u << 20) + 100;
	const char *head = "The history list keeps HISTFILE lines. ";
	const char *tail = " ZEBRAFISH ZEBRAFISH ZEBRAFISH ZEBRAFISH.";
	char *src = malloc(strlen(head) + pad + strlen(tail) + 1);
	static size_t sel[] = {0};

	strcpy(src, head);
	memset(src + strlen(head), ' ', pad);
	strcpy(src + strlen(head) + pad, tail);
	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {auto: 5}}"), LP_OK);
	make_doc(&f, src, "HISTFILE");
	f.doc.chunks[0].len = strlen(head);
	f.doc.chunks[1].off = strlen(head);
	f.doc.chunks[1].len = f.doc.len - strlen(head);
	f.doc.selection = sel;
	f.doc.n_selection = 1;
	ck_assert_int_eq(lp_stage_verify.run(&f.doc, f.opts, &f.d), LP_OK);
	/* over 4 MiB: phrases come from the working set (chunk 0) only */
	ck_assert_uint_ge(f.doc.verify.n_phrases, 2);
	for (size_t i = 0; i < f.doc.verify.n_phrases; i++)
		ck_assert_str_ne(f.doc.verify.phrases[i].text, "ZEBRAFISH");
	fixture_release(&f);
	free(src);
}
END_TEST

START_TEST(test_verify_parse_errors)
{
	struct fixture f;

	ck_assert_int_eq(parse_opts(&f, "{on_fail: retry}"), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "on_fail 'retry' needs a model"));
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {regex: [ok, 'bad(x']}}"), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "regex 'bad(x'"));
	ck_assert_msg(strstr(f.d.msg, "at offset 5"), "%s", f.d.msg);
	ck_assert_int_eq(f.d.line, 1);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {atuo: 3}}"), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "atuo"));
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {must: ['  ,, ']}}"), LP_E_CONFIG);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{min_words: -1}"), LP_E_CONFIG);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{min_survival: 1.5}"), LP_E_CONFIG);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{grounded: true, on_ungrounded: retry}"), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "on_ungrounded 'retry' needs a model"));
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{on_ungrounded: drop}"), LP_E_CONFIG);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{retries: 1, max_retries: 2}"), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(f.d.msg, "not both"));
	lp_arena_release(&f.cfg);
}
END_TEST

START_TEST(test_verify_describe)
{
	struct fixture f;
	struct lp_buf b;

	ck_assert_int_eq(parse_opts(&f, "{keyphrases: {auto: 2, must: [a \"b\"]}}"), LP_OK);
	lp_buf_init(&b);
	lp_stage_verify.describe(f.opts, &b);
	ck_assert_str_eq(b.data, "{keyphrases: {auto: 2, must: [\"a \\\"b\\\"\"], regex: []}, "
			 "min_words: 0, min_survival: 0.6, on_fail: warn}");
	lp_buf_release(&b);
	lp_arena_release(&f.cfg);

	ck_assert_int_eq(parse_opts(&f, "{grounded: yes, on_ungrounded: warn, min_survival: 0.25}"),
			 LP_OK);
	lp_buf_init(&b);
	lp_stage_verify.describe(f.opts, &b);
	ck_assert_str_eq(b.data, "{keyphrases: {auto: 0, must: [], regex: []}, min_words: 0, "
			 "min_survival: 0.25, on_fail: warn, grounded: true, on_ungrounded: warn}");
	lp_buf_release(&b);
	lp_arena_release(&f.cfg);
}
END_TEST


/* The names a text repeats: counted wherever their word occurs, most
 * frequent first; a name seen once, a short option and a quoted phrase
 * of several words are not names. */
START_TEST(test_terms)
{
	const char *t = "These logs are read by the journalctl(1) command.\n"
			"    $ journalctl -b\n    $ journalctl -b -u unit\n"
			"Bash reads '~/.bashrc'; the --norc option skips ~/.bashrc.\n"
			"Set BASH_ENV once. Use 'wait' or \"wait\", not 'a few words', with -b.\n"
			"Only --norc again.";
	struct lp_arena a;
	struct lp_diag d;
	const char **v = NULL;
	size_t k = 0;

	lp_diag_init(&d);
	lp_arena_init(&a);
	ck_assert_int_eq(lp_keyphrase_terms(t, strlen(t), 8, &a, &v, &k, &d), LP_OK);
	ck_assert_msg(k == 4, "%zu: %s %s %s %s %s", k, v[0], v[1], v[2], v[3], k > 4 ? v[4] : "");
	ck_assert_str_eq(v[0], "journalctl"); /* 3 times */
	ck_assert_str_eq(v[1], "~/.bashrc");
	ck_assert_str_eq(v[2], "--norc");
	ck_assert_str_eq(v[3], "wait");
	/* at most n */
	ck_assert_int_eq(lp_keyphrase_terms(t, strlen(t), 1, &a, &v, &k, &d), LP_OK);
	ck_assert_uint_eq(k, 1);
	ck_assert_int_eq(lp_keyphrase_terms("no names here.", 14, 4, &a, &v, &k, &d), LP_OK);
	ck_assert_uint_eq(k, 0);
	ck_assert_ptr_null(v);
	lp_arena_release(&a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("keyphrase");
	TCase *tc = tcase_create("keyphrase");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_tokens);
	tcase_add_test(tc, test_scan_words);
	tcase_add_test(tc, test_word_counts);
	tcase_add_test(tc, test_stopwords);
	tcase_add_test(tc, test_matcher);
	tcase_add_test(tc, test_regex);
	tcase_add_test(tc, test_rake);
	tcase_add_test(tc, test_numbers_and_units);
	tcase_add_test(tc, test_identifiers);
	tcase_add_test(tc, test_placeholders);
	tcase_add_test(tc, test_quoted_terms);
	tcase_add_test(tc, test_chinese_ngrams);
	tcase_add_test(tc, test_dedupe_case_insensitive);
	tcase_add_test(tc, test_toc_damping);
	tcase_add_test(tc, test_ground_tokens);
	tcase_add_test(tc, test_ground_match);
	tcase_add_test(tc, test_ground_windows);
	tcase_add_test(tc, test_verify_min_survival);
	tcase_add_test(tc, test_verify_grounded);
	tcase_add_test(tc, test_bounded_table);
	tcase_add_loop_test(tc, test_fault_sweep, 1, 61);
	tcase_add_test(tc, test_verify_pass_and_fail);
	tcase_add_test(tc, test_verify_min_words_and_warn);
	tcase_add_test(tc, test_verify_auto);
	tcase_add_test(tc, test_verify_levels);
	tcase_add_test(tc, test_verify_result_without_summary);
	tcase_add_test(tc, test_verify_huge_source_uses_working_set);
	tcase_add_test(tc, test_verify_parse_errors);
	tcase_add_test(tc, test_verify_describe);
	tcase_add_test(tc, test_terms);
	tcase_add_test(tc, test_topics_spread);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
