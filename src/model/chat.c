#include "model/chat.h"

#include <string.h>

#include "core/log.h"
#include "core/mem.h"

static const char *const style_names[] = {
	[LP_CHAT_UNKNOWN] = "unknown", [LP_CHAT_CHATML] = "chatml",
	[LP_CHAT_LLAMA3] = "llama3",   [LP_CHAT_LLAMA2] = "llama2",
	[LP_CHAT_MISTRAL] = "mistral", [LP_CHAT_GEMMA] = "gemma",
	[LP_CHAT_PHI3] = "phi3",
};

#define N_STYLES (sizeof(style_names) / sizeof(style_names[0]))

const char *lp_chat_style_name(enum lp_chat_style s)
{
	return (unsigned)s < N_STYLES ? style_names[s] : "unknown";
}

enum lp_chat_style lp_chat_style_from_name(const char *name)
{
	for (unsigned i = 1; name && i < N_STYLES; i++)
		if (!strcmp(name, style_names[i]))
			return (enum lp_chat_style)i;
	return LP_CHAT_UNKNOWN;
}

enum lp_chat_style lp_chat_detect(const char *t)
{
	if (!t)
		return LP_CHAT_UNKNOWN;
	if (strstr(t, "<|im_start|>"))
		return LP_CHAT_CHATML;
	if (strstr(t, "<|start_header_id|>"))
		return LP_CHAT_LLAMA3;
	if (strstr(t, "<start_of_turn>"))
		return LP_CHAT_GEMMA;
	if (strstr(t, "<|user|>") && strstr(t, "<|end|>"))
		return LP_CHAT_PHI3;
	if (strstr(t, "[INST]"))
		return strstr(t, "<<SYS>>") ? LP_CHAT_LLAMA2 : LP_CHAT_MISTRAL;
	return LP_CHAT_UNKNOWN;
}

const char *lp_chat_end_of_turn(enum lp_chat_style s)
{
	switch (s) {
	case LP_CHAT_LLAMA3: return "<|eot_id|>";
	case LP_CHAT_LLAMA2:
	case LP_CHAT_MISTRAL: return "</s>";
	case LP_CHAT_GEMMA: return "<end_of_turn>";
	case LP_CHAT_PHI3: return "<|end|>";
	default: return "<|im_end|>";
	}
}

static char *strndup_tracked(const char *s, size_t n)
{
	char *p = lp_mem_alloc(LP_MEM_OTHER, n + 1, NULL);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/*
 * A ChatML template with a built-in system prompt writes it as one Jinja
 * string literal: '<|im_start|>system\nTEXT<|im_end|>\n'. The newline is a
 * real one or the two characters "\n". TEXT counts only if it is plain
 * (no quote, brace or backslash), i.e. not built from message fields.
 */
char *lp_chat_template_default_system(const char *tmpl)
{
	static const char head[] = "<|im_start|>system";
	const char *p = tmpl;

	while (p && (p = strstr(p, head))) {
		const char *s = p + sizeof(head) - 1, *e, *bad;

		p = s;
		if (*s == '\n')
			s++;
		else if (s[0] == '\\' && s[1] == 'n')
			s += 2;
		else
			continue;
		e = strstr(s, "<|im_end|>");
		bad = strpbrk(s, "'\"{}\\");
		if (!e || e == s || (bad && bad < e))
			continue;
		return strndup_tracked(s, (size_t)(e - s));
	}
	return NULL;
}

enum lp_status lp_chat_init(struct lp_chat *c, const char *tmpl, const char *override,
			    struct lp_diag *d)
{
	memset(c, 0, sizeof(*c));
	if (override && *override && strcmp(override, "auto")) {
		c->style = lp_chat_style_from_name(override);
		if (c->style == LP_CHAT_UNKNOWN)
			return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
					   "unknown chat template '%s' (auto, chatml, llama3, "
					   "llama2, mistral, gemma, phi3)", override);
	} else {
		c->style = lp_chat_detect(tmpl);
		if (c->style == LP_CHAT_UNKNOWN) {
			lp_warn("%s chat template: using chatml", tmpl ? "unrecognised" : "no");
			c->style = LP_CHAT_CHATML;
		}
	}
	if (c->style == LP_CHAT_CHATML && tmpl)
		c->default_system = lp_chat_template_default_system(tmpl);
	return LP_OK;
}

void lp_chat_release(struct lp_chat *c)
{
	lp_mem_free(c->default_system);
	c->default_system = NULL;
}

/* ---- rendering -------------------------------------------------------------- */

static int is_role(const struct lp_chat_msg *m, const char *role)
{
	return !strcmp(m->role, role);
}

/* Append content without leading and trailing white space. */
static enum lp_status add_trimmed(struct lp_buf *b, const char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return lp_buf_add(b, s, n);
}

static enum lp_status render_chatml(const struct lp_chat *c, const struct lp_chat_msg *m,
				    size_t n, int gen, struct lp_buf *b)
{
	enum lp_status st = LP_OK;

	if (c->default_system && (!n || !is_role(&m[0], "system")))
		st = lp_buf_addf(b, "<|im_start|>system\n%s<|im_end|>\n", c->default_system);
	for (size_t i = 0; i < n && !st; i++)
		st = lp_buf_addf(b, "<|im_start|>%s\n%s<|im_end|>\n", m[i].role, m[i].content);
	if (!st && gen)
		st = lp_buf_adds(b, "<|im_start|>assistant\n");
	return st;
}

static enum lp_status render_llama3(const struct lp_chat_msg *m, size_t n, int gen,
				    struct lp_buf *b)
{
	enum lp_status st = LP_OK;

	for (size_t i = 0; i < n && !st; i++) {
		st = lp_buf_addf(b, "<|start_header_id|>%s<|end_header_id|>\n\n", m[i].role);
		if (!st)
			st = add_trimmed(b, m[i].content);
		if (!st)
			st = lp_buf_adds(b, "<|eot_id|>");
	}
	if (!st && gen)
		st = lp_buf_adds(b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
	return st;
}

/* [INST] formats: the first user turn carries the system prompt, in a
 * <<SYS>> block (llama2) or in front of the text (mistral). */
static enum lp_status render_inst(enum lp_chat_style style, const struct lp_chat_msg *m,
				  size_t n, struct lp_buf *b)
{
	const char *sys = NULL;
	int first_user = 1, llama2 = style == LP_CHAT_LLAMA2;
	enum lp_status st = LP_OK;

	for (size_t i = 0; i < n && !st; i++) {
		if (is_role(&m[i], "system")) {
			sys = m[i].content;
		} else if (is_role(&m[i], "user")) {
			st = lp_buf_adds(b, !first_user && llama2 ? "<s>[INST] " : "[INST] ");
			if (!st && sys && first_user)
				st = llama2 ? lp_buf_addf(b, "<<SYS>>\n%s\n<</SYS>>\n\n", sys)
					    : lp_buf_addf(b, "%s\n\n", sys);
			if (!st)
				st = lp_buf_addf(b, "%s [/INST]", m[i].content);
			first_user = 0;
		} else {
			st = lp_buf_addf(b, llama2 ? " %s </s>" : "%s</s>", m[i].content);
		}
	}
	return st;
}

static enum lp_status render_gemma(const struct lp_chat_msg *m, size_t n, int gen,
				   struct lp_buf *b)
{
	const char *sys = NULL;
	enum lp_status st = LP_OK;

	for (size_t i = 0; i < n && !st; i++) {
		if (is_role(&m[i], "system")) {
			sys = m[i].content;
			continue;
		}
		st = lp_buf_addf(b, "<start_of_turn>%s\n",
				 is_role(&m[i], "assistant") ? "model" : m[i].role);
		if (!st && sys && is_role(&m[i], "user")) {
			st = lp_buf_addf(b, "%s\n\n", sys);
			sys = NULL;
		}
		if (!st)
			st = add_trimmed(b, m[i].content);
		if (!st)
			st = lp_buf_adds(b, "<end_of_turn>\n");
	}
	if (!st && gen)
		st = lp_buf_adds(b, "<start_of_turn>model\n");
	return st;
}

static enum lp_status render_phi3(const struct lp_chat_msg *m, size_t n, int gen,
				  struct lp_buf *b)
{
	enum lp_status st = LP_OK;

	for (size_t i = 0; i < n && !st; i++)
		st = lp_buf_addf(b, "<|%s|>\n%s<|end|>\n", m[i].role, m[i].content);
	if (!st && gen)
		st = lp_buf_adds(b, "<|assistant|>\n");
	return st;
}

enum lp_status lp_chat_render(const struct lp_chat *c, const struct lp_chat_msg *msgs,
			      size_t n, int add_generation_prompt, struct lp_buf *out,
			      struct lp_diag *d)
{
	enum lp_status st;

	for (size_t i = 0; i < n; i++)
		if (!msgs[i].role || !msgs[i].content)
			return lp_diag_set(d, LP_E_INPUT, NULL, 0, 0,
					   "chat message %zu has no %s", i,
					   msgs[i].role ? "content" : "role");
	switch (c->style) {
	case LP_CHAT_LLAMA3:
		st = render_llama3(msgs, n, add_generation_prompt, out);
		break;
	case LP_CHAT_LLAMA2:
	case LP_CHAT_MISTRAL:
		st = render_inst(c->style, msgs, n, out);
		break;
	case LP_CHAT_GEMMA:
		st = render_gemma(msgs, n, add_generation_prompt, out);
		break;
	case LP_CHAT_PHI3:
		st = render_phi3(msgs, n, add_generation_prompt, out);
		break;
	default:
		st = render_chatml(c, msgs, n, add_generation_prompt, out);
		break;
	}
	if (st)
		return lp_diag_set(d, st, NULL, 0, 0, "out of memory rendering the chat prompt");
	return LP_OK;
}
