/* check_openai.c - the OpenAI-compatible client without a server: the
 * token estimate, its prefix, and the errors that need no reply. The
 * exchanges themselves are tested in tests/cli/openai.sh. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "model/remote/openai.h"

START_TEST(test_estimate)
{
	/* ASCII: one token per 3 bytes, rounded up */
	ck_assert_uint_eq(lp_openai_estimate_tokens("", 0), 0);
	ck_assert_uint_eq(lp_openai_estimate_tokens("a", 1), 1);
	ck_assert_uint_eq(lp_openai_estimate_tokens("abc", 3), 1);
	ck_assert_uint_eq(lp_openai_estimate_tokens("abcd", 4), 2);
	/* one per non-ASCII character: 3 CJK characters, 9 bytes */
	ck_assert_uint_eq(lp_openai_estimate_tokens("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 9),
			  3);
	/* runs: "ab" (1) + "é" (1) + "cd" (1) */
	ck_assert_uint_eq(lp_openai_estimate_tokens("ab\xc3\xa9" "cd", 6), 3);
}
END_TEST

START_TEST(test_estimate_prefix)
{
	const char *t = "abcdefghi";       /* 3 tokens */
	const char *u = "ab\xc3\xa9" "cd"; /* 3 tokens, "é" at bytes 2..3 */

	ck_assert_uint_eq(lp_openai_estimate_prefix(t, 9, 3), 9);
	ck_assert_uint_eq(lp_openai_estimate_prefix(t, 9, 2), 6);
	ck_assert_uint_eq(lp_openai_estimate_prefix(t, 9, 0), 0);
	ck_assert_uint_eq(lp_openai_estimate_prefix(u, 6, 1), 2);
	/* never inside the character */
	ck_assert_uint_eq(lp_openai_estimate_prefix(u, 6, 2), 4);
	for (size_t k = 0; k < 4; k++) {
		size_t cut = lp_openai_estimate_prefix(u, 6, k);
		ck_assert_uint_le(lp_openai_estimate_tokens(u, cut), k);
		ck_assert(cut == 6 || ((unsigned char)u[cut] & 0xC0) != 0x80);
	}
}
END_TEST

START_TEST(test_config_errors)
{
	struct lp_openai_params p = lp_openai_default_params();
	struct lp_openai *c = NULL;
	struct lp_diag d;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_openai_new(&p, &c, &d), LP_E_CONFIG);
	p.url = "ftp://127.0.0.1/v1";
	p.model = "m";
	ck_assert_int_eq(lp_openai_new(&p, &c, &d), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(d.msg, "ftp://"));
	p.url = "http://127.0.0.1:9/v1/";
	p.api_key_env = "LP_TEST_OPENAI_UNSET_KEY";
	unsetenv(p.api_key_env);
	ck_assert_int_eq(lp_openai_new(&p, &c, &d), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(d.msg, "'LP_TEST_OPENAI_UNSET_KEY'"));
	setenv(p.api_key_env, "sk-check-secret", 1);
	ck_assert_int_eq(lp_openai_new(&p, &c, &d), LP_OK);
	/* the trailing slash does not double */
	ck_assert_str_eq(lp_openai_endpoint(c), "http://127.0.0.1:9/v1/chat/completions");
	lp_openai_free(c);
	lp_openai_free(NULL);
}
END_TEST

/* Nothing listens on the discard port of loopback here: the transport
 * error, without retries, names the endpoint and never the key. */
START_TEST(test_unreachable)
{
	struct lp_openai_params p = lp_openai_default_params();
	struct lp_chat_msg m = { "user", "Hi" };
	struct lp_openai *c;
	struct lp_diag d;
	char *text = (char *)"unset";

	p.url = "http://127.0.0.1:9/v1";
	p.model = "m";
	p.api_key_env = "LP_TEST_OPENAI_KEY";
	p.retries = 0;
	setenv(p.api_key_env, "sk-check-secret", 1);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_openai_new(&p, &c, &d), LP_OK);
	ck_assert_int_eq(lp_openai_chat(c, &m, 1, NULL, 8, &text, NULL, NULL, &d), LP_E_IO);
	ck_assert_ptr_null(text);
	ck_assert_ptr_nonnull(strstr(d.msg, "unable to reach "
					    "'http://127.0.0.1:9/v1/chat/completions'"));
	ck_assert_ptr_nonnull(strstr(d.msg, "(1 attempt)"));
	ck_assert_ptr_null(strstr(d.msg, "sk-check-secret"));
	lp_openai_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("openai");
	TCase *tc = tcase_create("openai");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_estimate);
	tcase_add_test(tc, test_estimate_prefix);
	tcase_add_test(tc, test_config_errors);
	tcase_add_test(tc, test_unreachable);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
