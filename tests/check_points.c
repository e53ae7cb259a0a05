/* check_points.c - a model's points: parsing, meta-talk, grounding,
 * faithfulness and selection (text/points.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "core/status.h"
#include "text/match.h"
#include "text/points.h"
#include "text/words.h"

/* The points of gen, each cleaned, joined by " | ". */
static const char *parsed(const char *gen)
{
	static char out[2048];
	struct lp_span sp[8];
	size_t n = lp_points_parse(gen, strlen(gen), sp, 8), at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%.*s", i ? " | " : "",
				       (int)sp[i].len, gen + sp[i].off);
	return out;
}

START_TEST(test_parse_lists)
{
	ck_assert_str_eq(parsed("Here are 3 facts:\n- Debian uses apt to install packages.\n"
				"- The root account has full power.\n\nI hope this helps."),
			 "Debian uses apt to install packages. | The root account has full power.");
	ck_assert_str_eq(parsed("1. sudo grants limited privileges.\n2) su starts a root shell\n"
				"  * mc is a file manager here"),
			 "sudo grants limited privileges. | su starts a root shell | "
			 "mc is a file manager here");
	ck_assert_str_eq(parsed("1\xe3\x80\x81\xe4\xbd\xbf\xe7\x94\xa8 apt \xe5\xae\x89\xe8\xa3\x85"),
			 "\xe4\xbd\xbf\xe7\x94\xa8 apt \xe5\xae\x89\xe8\xa3\x85");
	/* too short items go; "-x" is no marker */
	ck_assert_str_eq(parsed("- Yes.\n- Use it\n- The shell reads ~/.bashrc at start.\n-x not"),
			 "The shell reads ~/.bashrc at start.");
	/* no list: one point per sentence; "1.5 GiB" is no marker */
	ck_assert_str_eq(parsed("1.5 GiB is the size. The pager is less."),
			 "1.5 GiB is the size. | The pager is less.");
}
END_TEST

START_TEST(test_parse_cap)
{
	struct lp_span sp[2];
	const char *g = "- one two three\n- four five six\n- seven eight nine\n";

	ck_assert_uint_eq(lp_points_parse(g, strlen(g), sp, 2), 2);
	ck_assert_uint_eq(lp_points_parse("", 0, sp, 2), 0);
}
END_TEST

START_TEST(test_meta)
{
	static const char *const meta[] = {
		"The text describes the shell prompt.", "The summary is in 2 sentences.",
		"This document covers apt.", "Here are the key facts:", "In summary, apt works.",
		"  \"The passage explains sudo.", "The text above is about vim.",
		"\xe6\x9c\xac\xe6\x96\x87\xe4\xbb\x8b\xe7\xbb\x8d\xe4\xba\x86 apt", /* 本文介绍了 */
		"According to the text, root is powerful.",
		"This manpage is a short description of GNU tar.",
		"If any discrepancies occur between this manpage and the manual, the manual wins.",
		"This guide covers the installation.", NULL};
	static const char *const not_meta[] = {
		"The text editor vim has modes.", "The document root is /var/www.",
		"Texts are stored in UTF-8.", "The summary line of a commit is short.",
		"\xe6\x96\x87\xe6\x9c\xac\xe7\xbc\x96\xe8\xbe\x91\xe5\x99\xa8 vim", /* 文本编辑器 */
		"Here", "", "The manual pages are in section 1.",
		"This manuals-list is sorted.", NULL};

	for (size_t i = 0; meta[i]; i++)
		ck_assert_msg(lp_points_is_meta(meta[i], strlen(meta[i])), "%s", meta[i]);
	for (size_t i = 0; not_meta[i]; i++)
		ck_assert_msg(!lp_points_is_meta(not_meta[i], strlen(not_meta[i])), "%s",
			      not_meta[i]);
}
END_TEST

START_TEST(test_clean)
{
	char out[256];
	const char *s = "The text describes apt. Apt  installs\n   **packages** from\xc2\xa0" "mirrors. "
			"The summary is in 2 sentences.";

	ck_assert_uint_eq(lp_points_clean(s, strlen(s), out), strlen(out));
	ck_assert_str_eq(out, "Apt installs packages from mirrors.");
	ck_assert_uint_eq(lp_points_clean("The text describes it.", 22, out), 0);
	ck_assert_str_eq(out, "");
	/* in place */
	char buf[] = "Vim   has\n  modes.  The text is short.";
	size_t n = lp_points_clean(buf, strlen(buf), buf);
	ck_assert_str_eq(buf, "Vim has modes.");
	ck_assert_uint_eq(n, 14);
}
END_TEST

/* Facts of point p and how many of them are not in src. */
static void check(const char *src, const char *p, size_t facts, size_t missing)
{
	struct lp_match m;
	struct lp_diag d;
	size_t f = 99, mi = 99;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_match_init(&m, src, strlen(src), &d), LP_OK);
	ck_assert_int_eq(lp_points_check(&m, p, strlen(p), &f, &mi), LP_OK);
	ck_assert_msg(f == facts && mi == missing, "'%s': %zu facts (want %zu), %zu missing "
		      "(want %zu)", p, f, facts, mi, missing);
	lp_match_release(&m);
}

START_TEST(test_grounding)
{
	const char *src = "Edit /etc/apt/sources.list and run apt-get(8) with --no-install-recommends. "
			  "Debian 11 uses the HISTFILE of \"bash\" and snake_case names. "
			  "\xe4\xbd\xbf\xe7\x94\xa8 apt-get \xe5\xae\x89\xe8\xa3\x85";

	check(src, "Edit /etc/apt/sources.list first.", 1, 0);
	check(src, "Edit /etc/apt/preferences first.", 1, 1);
	check(src, "Debian 11 runs apt-get(8).", 2, 0);
	check(src, "The Debian 3.2 shell prompt is used for GUI 1.16.", 3, 3);
	check(src, "Use --no-install-recommends and --yes.", 2, 1);
	check(src, "HISTFILE and HISTSIZE, snake_case too.", 3, 1);
	check(src, "It reads \"bash\" and \"zsh\".", 2, 1);
	check(src, "The shell prompt is simple.", 0, 0);
	/* facts inside CJK text: the run of ASCII between the letters */
	check(src, "\xe7\x94\xa8 apt-get(8)\xe5\xae\x89\xe8\xa3\x85 3 \xe4\xb8\xaa", 2, 1);
}
END_TEST

START_TEST(test_prose)
{
	static const char *const prose[] = {
		"The root account has full power over the system.",
		"You can shutdown the system from the commandline (as root).",
		"Does apt-get install the recommended packages too?",
		"\xe5\x9c\xa8 Debian \xe7\xb3\xbb\xe7\xbb\x9f\xe4\xb8\xad\xef\xbc\x8c\xe4\xbd\xa0\xe5\x8f\xaf"
		"\xe4\xbb\xa5\xe7\x94\xa8 apt \xe5\xae\x89\xe8\xa3\x85\xe8\xbd\xaf\xe4\xbb\xb6\xe5\x8c\x85"
		"\xe5\x92\x8c\xe5\xba\x93\xe3\x80\x82", /* 在 Debian 系统中，你可以用 apt 安装软件包和库。 */
		"The following packages are installed by the tasks at install time.",
		"The shell prints a line that tells what follows below the prompt.",
		"For example, the shell reads the file before it prints a prompt.",
		"rsync is a fast and extraordinarily versatile file copying tool.",
		"For details of the format the shell writes the line in the log file.", NULL};
	static const char *const not_prose[] = {
		"1.2.3. The shell prompt under the GUI system",
		"List of informative documentation packages",
		"| mc | V:11 | 1542 | file manager for the console |",
		"# adduser fish creates the account fish for training.",
		"* apt-get(8) for calling Debian package management.",
		"Use it now.", "---- ==== ---- ==== ---- ==== ---- ==== ----.",
		"bash [long-opt] [-ir] [-abefhkmnptuvxdBCDHP] [-o OPTION] [ARGUMENT ...] When "
		"the shell is not interactive, the files are read.",
		"See Section 3.5, \xe2\x80\x9cSystem management\xe2\x80\x9d, and Section 5.6, "
		"\xe2\x80\x9cNetfilter infrastructure\xe2\x80\x9d.",
		"Read \"The shell prompt under GUI\" and \"The root shell prompt\" first.",
		"For ext4 filesystem, the e2fsprogs package provides the following.",
		"For a detailed discussion, including examples, refer to the GNU Tar Manual.",
		"See the FAQ for the answers to the questions most often asked.",
		"should give you access to the complete manual in the info reader.",
		"The options of the command are explained below.",
		"bg [JOBSPEC or PID ...]  wait for the jobs of the shell [FILE ...]", NULL};

	for (size_t i = 0; prose[i]; i++)
		ck_assert_msg(lp_points_is_prose(prose[i], strlen(prose[i])), "%s", prose[i]);
	for (size_t i = 0; not_prose[i]; i++)
		ck_assert_msg(!lp_points_is_prose(not_prose[i], strlen(not_prose[i])), "%s",
			      not_prose[i]);
}
END_TEST

START_TEST(test_faithful)
{
	const char *o = "For a single user workstation it is common to configure sudo(8) so "
			"that the user gains administrative privilege without the root password.";
	const char *c = "If the file exists, Bash reads it.";
	static const char *const yes[] = {
		"It is common to configure sudo(8) so the user gains administrative privilege "
		"without the root password.",
		"For a single user workstation, configure sudo(8) without the root password.",
		NULL};
	static const char *const no[] = {
		/* words out of order or new */
		"The root password gives the user administrative privilege with sudo(8).",
		"It is common to configure sudo(8) so the user gains privilege with the default "
		"root password.",
		/* one word changed */
		"It is common to configure sudo(8) so the user gets administrative privilege "
		"without the root password.",
		/* "without" dropped with the rest */
		"It is common to configure sudo(8).",
		/* the negation dropped */
		"It is common to configure sudo(8) so that the user gains administrative "
		"privilege the root password.",
		"", NULL};

	for (size_t i = 0; yes[i]; i++)
		ck_assert_msg(lp_points_faithful(yes[i], strlen(yes[i]), o, strlen(o)), "%s", yes[i]);
	for (size_t i = 0; no[i]; i++)
		ck_assert_msg(!lp_points_faithful(no[i], strlen(no[i]), o, strlen(o)), "%s", no[i]);
	ck_assert(lp_points_faithful("It isn't here.", 14, "It isn't here, is it?", 21));
	ck_assert(!lp_points_faithful("Bash reads it.", 14, c, strlen(c)));
	ck_assert(lp_points_faithful("If the file exists, Bash reads it.", 34, c, strlen(c)));
	ck_assert(!lp_points_faithful("It is here.", 11, "It isn't here.", 14));
}
END_TEST

/* A sentence a model wrote from selected sentences: backed when one of
 * them (alone or with the next) holds its words and negations. */
/* Content words, and the two ways a text holds a word (text/words.h). */
START_TEST(test_words_held)
{
	static const char p[] = "The long context is kept, 人工";
	static const char src[] = "Long-context models keep 人工智能";
	struct lp_match in;
	size_t held, total;

	/* content: "long", "context", "kept", 人, 工; not "The", "is" */
	ck_assert_uint_eq(lp_words_held(p, strlen(p), LP_WORDS_CONTENT, "", 0, &total), 0);
	ck_assert_uint_eq(total, 5);
	lp_words_held(p, strlen(p), 0, "", 0, &total);
	ck_assert_uint_eq(total, 7);
	/* as words: "Long-context" is one word, so only 人 and 工 */
	ck_assert_uint_eq(lp_words_held(p, strlen(p), LP_WORDS_CONTENT, src, strlen(src), NULL), 2);
	/* as phrases: "long" and "context" are parts of it */
	ck_assert_int_eq(lp_match_init(&in, src, strlen(src), NULL), LP_OK);
	ck_assert_int_eq(lp_words_held_in(p, strlen(p), LP_WORDS_CONTENT, &in, &held, &total), LP_OK);
	ck_assert_uint_eq(held, 4);
	ck_assert_uint_eq(total, 5);
	lp_match_release(&in);
}
END_TEST

START_TEST(test_backed)
{
	static const char sel[] =
		"The bg builtin resumes each suspended job in the background. "
		"The fg builtin resumes the job in the foreground. "
		"A login shell cannot be suspended. "
		"The wait builtin waits until each child exits.";
	static const char *const yes[] = {
		/* reworded from one sentence */
		"The bg builtin resumes suspended jobs in the background.",
		/* merged from a sentence and the next */
		"The bg builtin resumes a suspended job in the background, the fg builtin in the "
		"foreground.",
		"A login shell cannot be suspended.", NULL};
	static const char *const no[] = {
		/* words from all over the selection */
		"The wait builtin resumes each login shell in the background.",
		/* a negation added, and one dropped */
		"The fg builtin does not resume the job in the foreground.",
		"A login shell can be suspended.",
		/* new words */
		"Job control lets a user stop processes and continue them later.", "", NULL};

	for (size_t i = 0; yes[i]; i++)
		ck_assert_msg(lp_points_backed(yes[i], strlen(yes[i]), sel, strlen(sel)), "%s",
			      yes[i]);
	for (size_t i = 0; no[i]; i++)
		ck_assert_msg(!lp_points_backed(no[i], strlen(no[i]), sel, strlen(sel)), "%s",
			      no[i]);
	ck_assert(!lp_points_backed("The bg builtin resumes jobs.", 28, "", 0));
}
END_TEST

/* n inputs with k points each, cost c, score 1 - rank/10 (input `star`
 * gets a better rank-1 point). */
static size_t make(struct lp_point *p, size_t n, size_t k, size_t c, size_t star)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t r = 0; r < k; r++)
			p[m++] = (struct lp_point){ i, r, 1.0 - (double)r / 10 +
						    (i == star && r == 1 ? 1.0 : 0), c };
	return m;
}

START_TEST(test_select_rounds)
{
	struct lp_point p[64];
	unsigned char keep[64];
	size_t m = make(p, 5, 3, 10, 99), per_input[5] = {0};

	/* a reduce seeing 5 inputs keeps each before a second from any */
	ck_assert_uint_eq(lp_points_select(p, m, 65, NULL, keep), 6);
	for (size_t i = 0; i < m; i++)
		per_input[p[i].input] += keep[i];
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_ge(per_input[i], 1);
	ck_assert_uint_eq(per_input[0], 2); /* the round that did not fit: the first */
	/* room for all */
	ck_assert_uint_eq(lp_points_select(p, m, 150, NULL, keep), 15);
	ck_assert_uint_eq(lp_points_select(p, 0, 150, NULL, keep), 0);
}
END_TEST

START_TEST(test_select_groups)
{
	struct lp_point p[64];
	unsigned char keep[64];
	size_t m = make(p, 10, 2, 10, 3), used = 0;
	int group[5] = {0};

	/* room for 5 of 10 inputs: pairs of inputs, the best point of each */
	ck_assert_uint_eq(lp_points_select(p, m, 50, NULL, keep), 5);
	for (size_t i = 0; i < m; i++)
		if (keep[i]) {
			group[p[i].input / 2]++;
			used += p[i].cost;
		}
	for (size_t g = 0; g < 5; g++)
		ck_assert_int_eq(group[g], 1);
	ck_assert_uint_le(used, 50);
	/* input 3's rank-1 point scores best in its pair */
	ck_assert(keep[3 * 2 + 1]);
	/* a budget below one point keeps none; one point's worth keeps one */
	ck_assert_uint_eq(lp_points_select(p, m, 5, NULL, keep), 0);
	ck_assert_uint_eq(lp_points_select(p, m, 10, NULL, keep), 1);
}
END_TEST

/* With topics to cover, a point that adds one beats a slightly better
 * scored one that adds none, and a topic already held adds nothing. */
START_TEST(test_select_cover)
{
	struct lp_point p[64];
	unsigned char keep[64];
	uint64_t holds[64] = {0};
	const double w[2] = { 1.0, 0.9 };
	const struct lp_points_cover c = { holds, w, 2 };
	size_t m = make(p, 3, 2, 10, 99);

	/* rounds: the rank-1 round does not fit whole; input 2's point holds
	 * topic 1, so it goes before input 0's */
	holds[2 * 2 + 1] = 2;
	ck_assert_uint_eq(lp_points_select(p, m, 40, NULL, keep), 4);
	ck_assert(keep[0 * 2 + 1] && !keep[2 * 2 + 1]);
	ck_assert_uint_eq(lp_points_select(p, m, 40, &c, keep), 4);
	ck_assert(!keep[0 * 2 + 1] && keep[2 * 2 + 1]);
	/* runs: 10 inputs in 5 pairs; input 4's rank-1 point (score 0.9)
	 * holds topic 1, its rank-0 point (1.0) none */
	memset(holds, 0, sizeof(holds));
	m = make(p, 10, 2, 10, 99);
	holds[4 * 2 + 1] = 2;
	holds[0] = holds[1 * 2] = 1; /* both of the first pair hold topic 0 */
	holds[7 * 2 + 1] = 1;        /* held already when its pair's turn comes */
	ck_assert_uint_eq(lp_points_select(p, m, 50, NULL, keep), 5);
	ck_assert(keep[4 * 2] && !keep[4 * 2 + 1]);
	ck_assert_uint_eq(lp_points_select(p, m, 50, &c, keep), 5);
	ck_assert(!keep[4 * 2] && keep[4 * 2 + 1]);
	ck_assert(keep[0] && keep[6 * 2] && !keep[7 * 2 + 1]);
}
END_TEST

START_TEST(test_cost)
{
	/* 1.4 tokens a word, 1.7 Han characters a word */
	ck_assert_uint_eq(lp_points_cost("", 0), 0);
	ck_assert_uint_eq(lp_points_cost("The pager is less.", 18), 6);
	/* 认证和访问控制 (7 characters) = 4.1 words */
	ck_assert_uint_eq(lp_points_cost("\xe8\xae\xa4\xe8\xaf\x81\xe5\x92\x8c\xe8\xae\xbf"
					 "\xe9\x97\xae\xe6\x8e\xa7\xe5\x88\xb6", 21), 6);
	/* mixed: one word and two Han characters */
	ck_assert_uint_eq(lp_points_cost("PAM \xe6\xa8\xa1\xe5\x9d\x97", 10), 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("points");
	TCase *tc = tcase_create("points");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse_lists);
	tcase_add_test(tc, test_parse_cap);
	tcase_add_test(tc, test_meta);
	tcase_add_test(tc, test_words_held);
	tcase_add_test(tc, test_backed);
	tcase_add_test(tc, test_clean);
	tcase_add_test(tc, test_grounding);
	tcase_add_test(tc, test_prose);
	tcase_add_test(tc, test_faithful);
	tcase_add_test(tc, test_select_rounds);
	tcase_add_test(tc, test_select_groups);
	tcase_add_test(tc, test_select_cover);
	tcase_add_test(tc, test_cost);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
