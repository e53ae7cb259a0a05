/* check_outline.c - sections and definition entries of a plain text
 * (text/outline.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/status.h"
#include "text/outline.h"

/* The parts of text as "H|T:term|-" marks and the first word of each,
 * joined by " ". */
static const char *outline(const char *text)
{
	static char out[1024];
	struct lp_outline_part *p;
	struct lp_diag d;
	size_t n, at = 0;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_outline_parts(text, strlen(text), &p, &n, &d), LP_OK);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *s = text + p[i].off;
		size_t k = 0;
		while (s[k] == ' ')
			s++;
		while (k < p[i].len && s[k] && s[k] != ' ' && s[k] != '\n')
			k++;
		if (i)
			ck_assert_uint_eq(p[i].off, p[i - 1].off + p[i - 1].len);
		ck_assert_uint_ge(p[i].body, p[i].off);
		ck_assert_uint_le(p[i].body, p[i].off + p[i].len);
		if (p[i].heading || p[i].term_len) /* the body starts a line */
			ck_assert(p[i].body > p[i].off && text[p[i].body - 1] == '\n');
		else
			ck_assert_uint_eq(p[i].body, p[i].off);
		if (p[i].term_len)
			at += (size_t)snprintf(out + at, sizeof(out) - at, "%sT:%.*s", i ? " " : "",
					       (int)p[i].term_len, text + p[i].term_off);
		else
			at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s%.*s", i ? " " : "",
					       p[i].heading ? "H:" : "-:", (int)k, s);
	}
	ck_assert_uint_eq(p[n - 1].off + p[n - 1].len, strlen(text));
	lp_mem_free(p);
	return out;
}

/* The text of part i of text from its body on. */
static const char *body_of(const char *text, size_t i)
{
	static char out[512];
	struct lp_outline_part *p;
	struct lp_diag d;
	size_t n;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_outline_parts(text, strlen(text), &p, &n, &d), LP_OK);
	ck_assert_uint_lt(i, n);
	snprintf(out, sizeof(out), "%.*s", (int)(p[i].off + p[i].len - p[i].body),
		 text + p[i].body);
	lp_mem_free(p);
	return out;
}

START_TEST(test_info_entries)
{
	/* an Info section: a heading with its underline, a paragraph, a
	 * definition list whose entries hold a synopsis and a nested option
	 * list, and a paragraph after it that is the section's again */
	const char *t = "7.2 Job Control Builtins\n"
			"========================\n"
			"\n"
			"   The builtins are these ones listed here.\n"
			"\n"
			"'bg'\n"
			"          bg [JOBSPEC ...]\n"
			"\n"
			"     Resume each suspended job JOBSPEC in the background.\n"
			"\n"
			"'--init-file FILE'\n"
			"'--rcfile FILE'\n"
			"     Execute commands from FILE in an interactive shell.\n"
			"\n"
			"'jobs'\n"
			"     The first form lists the active jobs.\n"
			"\n"
			"     '-l'\n"
			"          List process IDs in addition to the normal information.\n"
			"\n"
			"   When job control is not active, the builtins do not accept\n"
			"JOBSPEC arguments.\n";

	ck_assert_str_eq(outline(t), "H:7.2 T:bg T:--init-file FILE T:jobs -:When");
	/* the text after the title and its underline, after the term line */
	ck_assert_str_eq(body_of(t, 0), "\n   The builtins are these ones listed here.\n\n");
	ck_assert_str_eq(body_of(t, 1), "          bg [JOBSPEC ...]\n\n     Resume each "
					"suspended job JOBSPEC in the background.\n\n");
}
END_TEST

START_TEST(test_headings)
{
	/* numbered titles (with a no-break space), a title over an underline
	 * of dots, a Chinese chapter; a numbered line inside a paragraph, a
	 * table caption and a sentence are not titles */
	const char *t = "3.2. Systemd init\n"
			"\n"
			"    The systemd init process spawns processes.\n"
			"\n"
			"3.2.1.\xc2\xa0The hostname\n"
			"\n"
			"    The kernel maintains the system hostname and\n"
			"127 of them are kept.\n"
			"\n"
			"Invoked non-interactively\n"
			".........................\n"
			"\n"
			"When Bash is started non-interactively, it looks for BASH_ENV.\n"
			"\n"
			"\xe7\xac\xac 4 \xe7\xab\xa0 \xe8\xae\xa4\xe8\xaf\x81\n"
			"\n"
			"    Table 3.4. List of kernel error levels\n"
			"\n"
			"1.5 GiB is the size of it.\n";

	ck_assert_str_eq(outline(t), "H:3.2. H:3.2.1.\xc2\xa0The H:Invoked H:\xe7\xac\xac");
}
END_TEST

START_TEST(test_not_terms)
{
	/* short lines that are no terms: a warning over text of the same
	 * indent, a list item, a prompt, a line that ends a sentence, the last
	 * line of a paragraph above a code block, and a code line */
	const char *t = "    Caution\n"
			"\n"
			"    Emulated runlevel 2 to 4 are all symlinked.\n"
			"\n"
			"    * an item\n"
			"        goes on here\n"
			"\n"
			"    $ sudo systemctl stop\n"
			"        sshd.service\n"
			"\n"
			"    It is done.\n"
			"        really done\n"
			"\n"
			"as in this line:\n"
			"     if [ -z \"$PS1\" ]; then\n"
			"          echo no\n";

	ck_assert_str_eq(outline(t), "-:Caution");
	/* text wrapped at column 4: a short line at 0 over it is no term, one
	 * over deeper text is */
	ck_assert_str_eq(outline("Copyright 2013 Osamu Aoki\n\n"
				 "    This Debian Reference is intended to provide\n"
				 "    a broad overview of the Debian system.\n\n"
				 "    'apt'\n"
				 "        installs the packages it is given.\n"),
			 "-:Copyright T:apt");
}
END_TEST

START_TEST(test_find)
{
	struct lp_outline_part p[3] = { { .off = 0, .len = 10 }, { .off = 10, .len = 5, .body = 10 },
					{ .off = 15, .len = 5, .body = 15 } };

	ck_assert_uint_eq(lp_outline_find(p, 3, 0), 0);
	ck_assert_uint_eq(lp_outline_find(p, 3, 9), 0);
	ck_assert_uint_eq(lp_outline_find(p, 3, 10), 1);
	ck_assert_uint_eq(lp_outline_find(p, 3, 19), 2);
	ck_assert_uint_eq(lp_outline_find(p, 3, 99), 2);
	ck_assert_uint_eq(lp_outline_find(p, 0, 5), 0);
}
END_TEST

START_TEST(test_empty)
{
	struct lp_outline_part *p = (void *)1;
	struct lp_diag d;
	size_t n = 9;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_outline_parts("", 0, &p, &n, &d), LP_OK);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(n, 0);
	ck_assert_str_eq(outline("plain text\nwithout parts.\n"), "-:plain");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("outline");
	TCase *tc = tcase_create("outline");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_info_entries);
	tcase_add_test(tc, test_headings);
	tcase_add_test(tc, test_not_terms);
	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_empty);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
