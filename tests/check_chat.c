/* check_chat.c - chat format detection and rendering. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "model/chat.h"

/* The template SmolLM2-135M-Instruct carries (tokenizer.chat_template). */
static const char smollm2_tmpl[] =
	"{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
	"{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
	"Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
	"message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
	"{{ '<|im_start|>assistant\n' }}{% endif %}";

static const struct lp_chat_msg conv[] = {
	{ "system", "Be brief." },
	{ "user", "Hi" },
	{ "assistant", "Hello." },
	{ "user", "Sum 2+2" },
};

static const char *render(enum lp_chat_style style, const char *sys,
			  const struct lp_chat_msg *m, size_t n, int gen)
{
	static char out[2048];
	struct lp_chat c = { style, NULL };
	struct lp_buf b;
	struct lp_diag d;

	if (sys)
		c.default_system = lp_mem_strdup(sys);
	lp_buf_init(&b);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_chat_render(&c, m, n, gen, &b, &d), LP_OK);
	snprintf(out, sizeof(out), "%s", b.data);
	lp_buf_release(&b);
	lp_chat_release(&c);
	return out;
}

START_TEST(test_detect)
{
	ck_assert_int_eq(lp_chat_detect(smollm2_tmpl), LP_CHAT_CHATML);
	ck_assert_int_eq(lp_chat_detect("{{'<|start_header_id|>' + role}}"), LP_CHAT_LLAMA3);
	ck_assert_int_eq(lp_chat_detect("{{ '[INST] <<SYS>>\\n' }}"), LP_CHAT_LLAMA2);
	ck_assert_int_eq(lp_chat_detect("{{ '[INST] ' + m + ' [/INST]' }}"), LP_CHAT_MISTRAL);
	ck_assert_int_eq(lp_chat_detect("<start_of_turn>{{ role }}"), LP_CHAT_GEMMA);
	ck_assert_int_eq(lp_chat_detect("{{'<|user|>\n' + c + '<|end|>'}}"), LP_CHAT_PHI3);
	ck_assert_int_eq(lp_chat_detect("{{ messages }}"), LP_CHAT_UNKNOWN);
	ck_assert_int_eq(lp_chat_detect(NULL), LP_CHAT_UNKNOWN);
}
END_TEST

START_TEST(test_names)
{
	for (int s = LP_CHAT_CHATML; s <= LP_CHAT_PHI3; s++)
		ck_assert_int_eq(lp_chat_style_from_name(lp_chat_style_name(s)), s);
	ck_assert_int_eq(lp_chat_style_from_name("jinja"), LP_CHAT_UNKNOWN);
	ck_assert_str_eq(lp_chat_style_name(LP_CHAT_UNKNOWN), "unknown");
	ck_assert_str_eq(lp_chat_end_of_turn(LP_CHAT_CHATML), "<|im_end|>");
	ck_assert_str_eq(lp_chat_end_of_turn(LP_CHAT_LLAMA3), "<|eot_id|>");
}
END_TEST

START_TEST(test_smollm2_default_system)
{
	struct lp_chat c;
	struct lp_diag d;
	char *sys;

	sys = lp_chat_template_default_system(smollm2_tmpl);
	ck_assert_str_eq(sys, "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
	lp_mem_free(sys);
	/* Built from message fields: not a default prompt. */
	ck_assert_ptr_null(lp_chat_template_default_system(
		"{{'<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>'}}"));
	/* The escaped form "\\n" counts too. */
	sys = lp_chat_template_default_system("{{ '<|im_start|>system\\nBe nice<|im_end|>' }}");
	ck_assert_str_eq(sys, "Be nice");
	lp_mem_free(sys);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_chat_init(&c, smollm2_tmpl, NULL, &d), LP_OK);
	ck_assert_int_eq(c.style, LP_CHAT_CHATML);
	ck_assert_ptr_nonnull(c.default_system);
	lp_chat_release(&c);
}
END_TEST

START_TEST(test_chatml)
{
	static const struct lp_chat_msg user = { "user", "Hi" };

	ck_assert_str_eq(render(LP_CHAT_CHATML, "Dflt", &user, 1, 1),
			 "<|im_start|>system\nDflt<|im_end|>\n"
			 "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
	/* An explicit system message replaces the default one. */
	ck_assert_str_eq(render(LP_CHAT_CHATML, "Dflt", conv, 2, 0),
			 "<|im_start|>system\nBe brief.<|im_end|>\n"
			 "<|im_start|>user\nHi<|im_end|>\n");
}
END_TEST

START_TEST(test_llama3)
{
	static const struct lp_chat_msg m[] = { { "user", "  Hi \n" } };

	ck_assert_str_eq(render(LP_CHAT_LLAMA3, NULL, m, 1, 1),
			 "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
			 "<|start_header_id|>assistant<|end_header_id|>\n\n");
}
END_TEST

START_TEST(test_inst_formats)
{
	ck_assert_str_eq(render(LP_CHAT_LLAMA2, NULL, conv, 4, 1),
			 "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello. </s>"
			 "<s>[INST] Sum 2+2 [/INST]");
	ck_assert_str_eq(render(LP_CHAT_MISTRAL, NULL, conv, 4, 1),
			 "[INST] Be brief.\n\nHi [/INST]Hello.</s>[INST] Sum 2+2 [/INST]");
}
END_TEST

START_TEST(test_gemma_and_phi3)
{
	ck_assert_str_eq(render(LP_CHAT_GEMMA, NULL, conv, 3, 1),
			 "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"
			 "<start_of_turn>model\nHello.<end_of_turn>\n<start_of_turn>model\n");
	ck_assert_str_eq(render(LP_CHAT_PHI3, NULL, conv, 2, 1),
			 "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n");
}
END_TEST

START_TEST(test_override_and_errors)
{
	struct lp_chat c;
	struct lp_diag d;
	struct lp_buf b;
	struct lp_chat_msg bad = { "user", NULL };

	lp_diag_init(&d);
	ck_assert_int_eq(lp_chat_init(&c, smollm2_tmpl, "gemma", &d), LP_OK);
	ck_assert_int_eq(c.style, LP_CHAT_GEMMA);
	ck_assert_ptr_null(c.default_system);
	lp_chat_release(&c);
	ck_assert_int_eq(lp_chat_init(&c, smollm2_tmpl, "jinja2", &d), LP_E_CONFIG);
	ck_assert_ptr_nonnull(strstr(d.msg, "'jinja2'"));
	ck_assert_int_eq(lp_chat_init(&c, "{{ x }}", "auto", &d), LP_OK);
	ck_assert_int_eq(c.style, LP_CHAT_CHATML); /* fallback */
	lp_buf_init(&b);
	ck_assert_int_eq(lp_chat_render(&c, &bad, 1, 1, &b, &d), LP_E_INPUT);
	lp_buf_release(&b);
	lp_chat_release(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("chat");
	TCase *tc = tcase_create("chat");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_detect);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_smollm2_default_system);
	tcase_add_test(tc, test_chatml);
	tcase_add_test(tc, test_llama3);
	tcase_add_test(tc, test_inst_formats);
	tcase_add_test(tc, test_gemma_and_phi3);
	tcase_add_test(tc, test_override_and_errors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
