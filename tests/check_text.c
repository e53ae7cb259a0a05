/* check_text.c - document loading, sentence segmentation and chunking. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/status.h"
#include "text/sentence.h"

/* All sentences of `text`, each verbatim, joined by '|'. */
static char *sentences(const char *text)
{
	static char out[4096];
	size_t pos = 0, n = 0, len = strlen(text);
	struct lp_span s;

	out[0] = '\0';
	while (lp_sentence_next(text, len, &pos, &s)) {
		ck_assert_uint_le(s.off + s.len, len);
		ck_assert_uint_gt(s.len, 0);
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%.*s", n ? "|" : "",
				      (int)s.len, text + s.off);
	}
	ck_assert_uint_eq(pos, len);
	return out;
}

START_TEST(test_sentence_english)
{
	ck_assert_str_eq(sentences("Hello world. How are you? Fine!"),
			 "Hello world.|How are you?|Fine!");
	ck_assert_str_eq(sentences("  Leading space.   Trailing space.  \n"),
			 "Leading space.|Trailing space.");
	ck_assert_str_eq(sentences("No terminator at all"), "No terminator at all");
	ck_assert_str_eq(sentences(""), "");
	ck_assert_str_eq(sentences(" \n\t "), "");
}
END_TEST

START_TEST(test_sentence_abbreviations)
{
	ck_assert_str_eq(sentences("Dr. Smith arrived. He sat down."),
			 "Dr. Smith arrived.|He sat down.");
	ck_assert_str_eq(sentences("Use a fruit, e.g. this apple. Then eat it."),
			 "Use a fruit, e.g. this apple.|Then eat it.");
	ck_assert_str_eq(sentences("Some fruit, i.e. Apples, are red. Yes."),
			 "Some fruit, i.e. Apples, are red.|Yes.");
	ck_assert_str_eq(sentences("Pi is 3.14 roughly. Right."),
			 "Pi is 3.14 roughly.|Right.");
	ck_assert_str_eq(sentences("He moved to the U.S.A. in 1990. Then he left."),
			 "He moved to the U.S.A. in 1990.|Then he left.");
	ck_assert_str_eq(sentences("J. R. R. Tolkien wrote it. See Fig. 3 and Mr. Brown."),
			 "J. R. R. Tolkien wrote it.|See Fig. 3 and Mr. Brown.");
	ck_assert_str_eq(sentences("Bring pens, paper etc. The rest is here."),
			 "Bring pens, paper etc.|The rest is here.");
	ck_assert_str_eq(sentences("It was in 1999. The end."), "It was in 1999.|The end.");
}
END_TEST

START_TEST(test_sentence_quotes_and_ellipsis)
{
	ck_assert_str_eq(sentences("He said \"Stop.\" Then he left."),
			 "He said \"Stop.\"|Then he left.");
	ck_assert_str_eq(sentences("\"Really?\" she asked. (Yes.) Fine."),
			 "\"Really?\" she asked.|(Yes.)|Fine.");
	ck_assert_str_eq(sentences("Wait... what happened... Nothing."),
			 "Wait... what happened...|Nothing.");
	ck_assert_str_eq(sentences("Really?! Yes."), "Really?!|Yes.");
	ck_assert_str_eq(sentences("She wrote \xe2\x80\x9cgo.\xe2\x80\x9d Then stopped."),
			 "She wrote \xe2\x80\x9cgo.\xe2\x80\x9d|Then stopped.");
}
END_TEST

START_TEST(test_sentence_paragraphs)
{
	ck_assert_str_eq(sentences("A heading\n\nFirst line of text\nwraps here. Next.\n \nLast"),
			 "A heading|First line of text\nwraps here.|Next.|Last");
}
END_TEST

START_TEST(test_sentence_cjk)
{
	ck_assert_str_eq(sentences("你好。我很好！你呢？"), "你好。|我很好！|你呢？");
	ck_assert_str_eq(sentences("他说：“走吧。”然后走了；就这样"),
			 "他说：“走吧。”|然后走了；|就这样");
	ck_assert_str_eq(sentences("全角问号？Yes. 中文句子。"), "全角问号？|Yes.|中文句子。");
	ck_assert_str_eq(sentences("English first.中文在后。"), "English first.|中文在后。");
	ck_assert_str_eq(sentences("東京は大きい。 Tokyo is big. 本当？"),
			 "東京は大きい。|Tokyo is big.|本当？");
}
END_TEST

START_TEST(test_sentence_invalid_bytes_terminate)
{
	const char text[] = "ab\xff\xfe. Cd\xe4. \xe4\xb8";
	size_t pos = 0, n = 0;
	struct lp_span s;

	while (lp_sentence_next(text, sizeof(text) - 1, &pos, &s)) {
		ck_assert_uint_le(s.off + s.len, sizeof(text) - 1);
		n++;
	}
	ck_assert_uint_eq(n, 3);
}
END_TEST

/* A long line without punctuation, and one made only of full stops, must
 * each be one linear pass (a quadratic scan would time out here). */
START_TEST(test_sentence_linear_on_long_line)
{
	size_t len = 20u << 20, pos = 0, n = 0;
	char *t = malloc(len);
	struct lp_span s;

	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < len; i++)
		t[i] = (i % 7 == 6) ? ' ' : 'a';
	while (lp_sentence_next(t, len, &pos, &s))
		n++;
	ck_assert_uint_eq(n, 1);
	memset(t, '.', len);
	pos = 0;
	n = 0;
	while (lp_sentence_next(t, len, &pos, &s))
		n++;
	ck_assert_uint_eq(n, 1);
	for (size_t i = 0; i < len; i++)
		t[i] = (i % 2) ? ' ' : '\n';
	t[len / 2] = 'x';
	pos = 0;
	n = 0;
	while (lp_sentence_next(t, len, &pos, &s))
		n++;
	ck_assert_uint_eq(n, 1);
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("sentence");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sentence_english);
	tcase_add_test(tc, test_sentence_abbreviations);
	tcase_add_test(tc, test_sentence_quotes_and_ellipsis);
	tcase_add_test(tc, test_sentence_paragraphs);
	tcase_add_test(tc, test_sentence_cjk);
	tcase_add_test(tc, test_sentence_invalid_bytes_terminate);
	tcase_add_test(tc, test_sentence_linear_on_long_line);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
