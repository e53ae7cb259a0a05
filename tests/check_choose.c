/* check_choose.c - a chunk's sentences chosen without a model
 * (text/choose.h): leads of sections and entries, their terms, the order
 * chosen, eligibility, repeats and labels. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/mem.h"
#include "core/status.h"
#include "text/choose.h"

/* The choices of text as "rank[term]sentence" lines, chosen by keys[0..n_keys)
 * (names from first_name on). */
static const char *choose_must(const char *text, size_t want, int lead, int drop_meta,
			       const char *const *keys, size_t n_keys, size_t first_name,
			       const char *const *must, size_t n_must)
{
	static char out[4096];
	struct lp_choose_opts o = { want, lead, drop_meta, keys, n_keys, first_name, must, n_must };
	struct lp_choice *c;
	struct lp_diag d;
	size_t n, at = 0;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_choose_sentences(text, strlen(text), &o, &c, &n, &d), LP_OK);
	ck_assert_uint_le(n, want + n_must);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_le(c[i].off + c[i].len, strlen(text));
		if (i) /* in document order */
			ck_assert_uint_gt(c[i].off, c[i - 1].off);
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%zu[%.*s]%.*s\n", c[i].rank,
				       (int)c[i].term_len, text + c[i].term_off, (int)c[i].len,
				       text + c[i].off);
	}
	lp_mem_free(c);
	if (getenv("CHECK_CHOOSE_SHOW"))
		fprintf(stderr, "---\n%s", out);
	return out;
}

static const char *choose_by(const char *text, size_t want, int lead, int drop_meta,
			     const char *const *keys, size_t n_keys, size_t first_name)
{
	return choose_must(text, want, lead, drop_meta, keys, n_keys, first_name, NULL, 0);
}

static const char *choose(const char *text, size_t want, int lead, int drop_meta)
{
	return choose_by(text, want, lead, drop_meta, NULL, 0, 0);
}

static const char entries[] =
	"Job Control Builtins\n"
	"====================\n\n"
	"These builtins control the jobs that the shell started.\n\n"
	"'bg'\n"
	"          bg [JOBSPEC ...]\n\n"
	"     Resume each suspended job JOBSPEC in the background, as if it had been "
	"started with '&'. The return status is zero unless an error occurs.\n\n"
	"'fg'\n"
	"          fg [JOBSPEC]\n\n"
	"     Resume the job JOBSPEC in the foreground and make it the current job. The "
	"return status is zero unless an error occurs.\n\n"
	"'jobs'\n"
	"          jobs [-lnprs] [JOBSPEC]\n\n"
	"     List the active jobs of the shell with their numbers and states. The return "
	"status is zero unless an error occurs.\n";

/* The lead of each part, an entry's with its term, not the boilerplate
 * every entry repeats; the order chosen is the rank. */
START_TEST(test_leads)
{
	static const char *const lead_keys[] = { "foreground" };

	ck_assert_str_eq(choose(entries, 4, 1, 1),
			 "0[]These builtins control the jobs that the shell started.\n"
			 "1[bg]Resume each suspended job JOBSPEC in the background, as if it had "
			 "been started with '&'.\n"
			 "2[fg]Resume the job JOBSPEC in the foreground and make it the current "
			 "job.\n"
			 "3[jobs]List the active jobs of the shell with their numbers and states.\n");
	/* more parts than wanted: one lead per run of parts */
	ck_assert_str_eq(choose(entries, 2, 1, 1),
			 "0[]These builtins control the jobs that the shell started.\n"
			 "1[bg]Resume each suspended job JOBSPEC in the background, as if it had "
			 "been started with '&'.\n");
	/* ... the one that holds a key */
	ck_assert_str_eq(choose_by(entries, 2, 0, 1, lead_keys, 1, 1),
			 "0[]These builtins control the jobs that the shell started.\n"
			 "1[fg]Resume the job JOBSPEC in the foreground and make it the current "
			 "job.\n");
	/* the rest by prose per sentence taken; the repeated boilerplate once */
	ck_assert_str_eq(choose(entries, 8, 0, 1),
			 "0[]These builtins control the jobs that the shell started.\n"
			 "1[bg]Resume each suspended job JOBSPEC in the background, as if it had "
			 "been started with '&'.\n"
			 "4[bg]The return status is zero unless an error occurs.\n"
			 "2[fg]Resume the job JOBSPEC in the foreground and make it the current "
			 "job.\n"
			 "3[jobs]List the active jobs of the shell with their numbers and states.\n");
}
END_TEST

static const char meta[] =
	"This text describes the job control of the shell in some detail.\n\n"
	"The shell keeps a table of the jobs it started, each with a number.\n\n"
	"A job stopped with Control-Z can be resumed later in the background.\n";

/* Talk about the text is no lead with drop_meta. */
START_TEST(test_meta)
{
	ck_assert_str_eq(choose(meta, 1, 1, 1),
			 "0[]The shell keeps a table of the jobs it started, each with a number.\n");
	ck_assert_str_eq(choose(meta, 1, 1, 0),
			 "0[]This text describes the job control of the shell in some detail.\n");
}
END_TEST

/* A label alone on its line is cut off; a near repeat is skipped. */
START_TEST(test_label_repeat)
{
	ck_assert_str_eq(choose("Tip\nThe top level of the tree holds the configuration files of the whole "
	       "system.\n\nEach package keeps its own files below it in a folder of its own "
	       "name.\n", 1, 1, 1),
			 "0[]The top level of the tree holds the configuration files of the whole "
			 "system.\n");
	ck_assert_str_eq(choose("The shell reads the startup files when it starts as a login shell.\n\n"
	       "The shell reads the startup files when it starts as a login shell!\n\n"
	       "An interactive shell that is not a login shell reads only one file instead.\n",
	       2, 1, 1),
			 "0[]The shell reads the startup files when it starts as a login shell.\n"
			 "1[]An interactive shell that is not a login shell reads only one file "
			 "instead.\n");
	ck_assert_str_eq(choose("", 3, 1, 1), "");
}
END_TEST

/* A lead takes its next sentence when that one names a name it does not. */
START_TEST(test_with_next)
{
	static const char text[] =
		"When the shell starts as a login shell, it first reads the system profile "
		"file. After reading that file, it looks for '~/.bash_profile' in the home "
		"directory.\n\nThe shell can also be started as an interactive shell that is "
		"not a login shell.\n";
	static const char *const keys[] = { "~/.bash_profile" };

	ck_assert_str_eq(choose_by(text, 1, 1, 1, keys, 1, 0),
			 "0[]When the shell starts as a login shell, it first reads the system "
			 "profile file. After reading that file, it looks for '~/.bash_profile' "
			 "in the home directory.\n");
	ck_assert_str_eq(choose_by(text, 1, 1, 1, keys, 1, 1), /* no names */
			 "0[]When the shell starts as a login shell, it first reads the system "
			 "profile file.\n");
}
END_TEST

/* A pronoun opener is taken only after its lead, never for itself. */
START_TEST(test_pronoun)
{
	static const char alone[] =
		"It keeps a table of the jobs it started, each with a number.\n\n"
		"The shell can stop a job and start it again later in the background.\n";
	static const char after[] =
		"The shell reads the system profile file when it starts as a login shell. "
		"It then looks for '~/.bash_profile' in the home directory.\n";
	static const char *const keys[] = { "~/.bash_profile" };

	ck_assert_str_eq(choose(alone, 1, 1, 1),
			 "0[]The shell can stop a job and start it again later in the "
			 "background.\n");
	ck_assert_str_eq(choose("It keeps a table of the jobs it started, each with a number.\n",
				1, 1, 1), "");
	ck_assert_str_eq(choose_by(after, 1, 1, 1, keys, 1, 0),
			 "0[]The shell reads the system profile file when it starts as a login "
			 "shell. It then looks for '~/.bash_profile' in the home directory.\n");
}
END_TEST

/* A sentence that runs from a centred title's part into the text below
 * is the text's: no term glued on. */
START_TEST(test_title_run_on)
{
	static const char text[] =
		"                    THE SAMPLE PUBLIC NOTICE\n"
		"                       Version 2, 1 May 2000\n\n"
		" Everyone may copy and hand on this notice, but changing it is not allowed.\n\n"
		" The notice says what a reader may do with the text that carries it.\n";

	ck_assert_str_eq(choose(text, 1, 1, 1),
			 "0[]Everyone may copy and hand on this notice, but changing it is not "
			 "allowed.\n");
}
END_TEST

/* A must phrase no sentence taken holds brings its first sentence, beyond
 * want and first in the order chosen; one already held brings none. */
START_TEST(test_opening)
{
	/* the document opens with what its subject is, not with the first
	 * sentence of its synopsis */
	static const char page[] =
		"SYNOPSIS\n"
		"=======\n\n"
		"Usages with just one SRC argument will list the source files.\n\n"
		"DESCRIPTION\n"
		"===========\n\n"
		"Rsync is a fast and extraordinarily versatile file copying tool. "
		"It can copy locally or to and from another host.\n";
	/* a subject with a comma, or a pronoun, does not say what the thing is */
	/* up to three more of its sentences, and none past a blank line */
	static const char para[] =
		"Tar is an archiving program for many files. It stores files in one archive. "
		"It lists the files of an archive. It extracts the files of an archive. "
		"It compares an archive with the disk.\n\n"
		"It is also the name of a file format.\n";
	static const char none[] =
		"Usages with just one SRC argument will list the source files.\n\n"
		"In short, rsync is a tool that copies files between hosts.\n\n"
		"It is a program that many people use every day.\n";

	/* with the rest of its paragraph, a pronoun opener too */
	ck_assert_str_eq(choose(page, 1, 1, 1),
			 "0[]Rsync is a fast and extraordinarily versatile file copying tool. "
			 "It can copy locally or to and from another host.\n");
	ck_assert_str_eq(choose(none, 1, 1, 1),
			 "0[]Usages with just one SRC argument will list the source files.\n");
	ck_assert_str_eq(choose(para, 1, 1, 1),
			 "0[]Tar is an archiving program for many files. It stores files in one "
			 "archive. It lists the files of an archive. It extracts the files of an "
			 "archive.\n");
	/* without `lead` (not the document's first chunk) nothing changes */
	ck_assert_str_eq(choose(page, 1, 0, 1),
			 "0[]Usages with just one SRC argument will list the source files.\n");
}
END_TEST

START_TEST(test_must)
{
	static const char text[] =
		"The keeper trims the lamp wick before the night comes.\n\n"
		"The keeper winds the clock of the lens at every change of the watch.\n\n"
		"The keeper oils the frobnicator of the lamp before the night comes.\n";
	static const char *const must[] = { "frobnicator", "lamp wick" };

	ck_assert_str_eq(choose_must(text, 1, 1, 1, NULL, 0, 0, must, 2),
			 "1[]The keeper trims the lamp wick before the night comes.\n"
			 "0[]The keeper oils the frobnicator of the lamp before the night "
			 "comes.\n");
	ck_assert_str_eq(choose_must(text, 1, 1, 1, NULL, 0, 0, must + 1, 1),
			 "0[]The keeper trims the lamp wick before the night comes.\n");
}
END_TEST

/* Keyphrases first, then the names the text repeats that no keyphrase is. */
START_TEST(test_keys)
{
	static const char text[] =
		"Run 'tar -x' to extract, and 'tar -c' to create. The file /etc/tarrc holds "
		"defaults; /etc/tarrc is read first. Use --gzip for compression; --gzip is "
		"the usual choice.";
	static const char *const kp[] = { "compression", "/etc/tarrc" };
	struct lp_arena a;
	const char **keys;
	size_t n, first;
	struct lp_diag d;

	lp_arena_init(&a);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_choose_keys(text, strlen(text), kp, 2, &a, &keys, &n, &first, &d),
			 LP_OK);
	ck_assert_uint_eq(first, 2);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(keys[0], "compression");
	ck_assert_str_eq(keys[1], "/etc/tarrc");
	ck_assert_str_eq(keys[2], "--gzip");
	lp_arena_release(&a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("choose");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_leads);
	tcase_add_test(tc, test_meta);
	tcase_add_test(tc, test_label_repeat);
	tcase_add_test(tc, test_with_next);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_pronoun);
	tcase_add_test(tc, test_title_run_on);
	tcase_add_test(tc, test_must);
	tcase_add_test(tc, test_opening);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
