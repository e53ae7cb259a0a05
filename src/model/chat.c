#include "model/chat.h"

#include <string.h>

#include "core/log.h"
#include "core/mem.h"
#include "model/tokenizer.h"

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

/* The prompt being written, and where message contents landed in it. */
struct render {
	struct lp_buf *b;
	struct lp_tok_span *spans; /* NULL: not recorded */
	size_t n_spans;
	enum lp_status st;         /* first failure; later writes are skipped */
};

static int is_role(const struct lp_chat_msg *m, const char *role)
{
	return !strcmp(m->role, role);
}

static int is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* Template text (may hold special-token strings). */
static void put(struct render *r, const char *s)
{
	if (!r->st)
		r->st = lp_buf_adds(r->b, s);
}

/* Message text, optionally without surrounding white space; its range is
 * recorded so that special strings in it can be kept plain. */
static void put_content(struct render *r, const char *s, int trim)
{
	size_t n, at = r->b->len;

	if (trim)
		while (is_ws(*s))
			s++;
	n = strlen(s);
	if (trim)
		while (n && is_ws(s[n - 1]))
			n--;
	if (r->st || (r->st = lp_buf_add(r->b, s, n)))
		return;
	if (r->spans && n) {
		r->spans[r->n_spans].start = at;
		r->spans[r->n_spans++].len = n;
	}
}

/*
 * Formats where every turn is the same: open, role, close, content, end;
 * and the generation prompt is the assistant turn's opening.
 */
struct turn_format {
	const char *open, *close, *end, *gen;
	int trim; /* content without surrounding white space */
};

static const struct turn_format chatml_format = {
	"<|im_start|>", "\n", "<|im_end|>\n", "<|im_start|>assistant\n", 0
};
static const struct turn_format llama3_format = {
	"<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>",
	"<|start_header_id|>assistant<|end_header_id|>\n\n", 1
};
static const struct turn_format phi3_format = {
	"<|", "|>\n", "<|end|>\n", "<|assistant|>\n", 0
};

static void put_turn(const struct turn_format *f, const char *role, const char *content,
		     int from_model, struct render *r)
{
	put(r, f->open);
	put(r, role);
	put(r, f->close);
	if (from_model)
		put(r, content); /* the model's own template text */
	else
		put_content(r, content, f->trim);
	put(r, f->end);
}

static void render_turns(const struct turn_format *f, const struct lp_chat_msg *m, size_t n,
			 int gen, struct render *r)
{
	for (size_t i = 0; i < n; i++)
		put_turn(f, m[i].role, m[i].content, 0, r);
	if (gen)
		put(r, f->gen);
}

/* ChatML, with the model's default system prompt when none is given. */
static void render_chatml(const struct lp_chat *c, const struct lp_chat_msg *m, size_t n,
			  int gen, struct render *r)
{
	if (c->default_system && (!n || !is_role(&m[0], "system")))
		put_turn(&chatml_format, "system", c->default_system, 1, r);
	render_turns(&chatml_format, m, n, gen, r);
}

/* [INST] formats: the first user turn carries the system prompt, in a
 * <<SYS>> block (llama2) or in front of the text (mistral). */
static void render_inst(enum lp_chat_style style, const struct lp_chat_msg *m, size_t n,
			struct render *r)
{
	const char *sys = NULL;
	int first_user = 1, llama2 = style == LP_CHAT_LLAMA2;

	for (size_t i = 0; i < n; i++) {
		if (is_role(&m[i], "system")) {
			sys = m[i].content;
		} else if (is_role(&m[i], "user")) {
			put(r, !first_user && llama2 ? "<s>[INST] " : "[INST] ");
			if (sys && first_user) {
				put(r, llama2 ? "<<SYS>>\n" : "");
				put_content(r, sys, 0);
				put(r, llama2 ? "\n<</SYS>>\n\n" : "\n\n");
			}
			put_content(r, m[i].content, 0);
			put(r, " [/INST]");
			first_user = 0;
		} else {
			put(r, llama2 ? " " : "");
			put_content(r, m[i].content, 0);
			put(r, llama2 ? " </s>" : "</s>");
		}
	}
}

static void render_gemma(const struct lp_chat_msg *m, size_t n, int gen, struct render *r)
{
	const char *sys = NULL;

	for (size_t i = 0; i < n; i++) {
		if (is_role(&m[i], "system")) {
			sys = m[i].content;
			continue;
		}
		put(r, "<start_of_turn>");
		put(r, is_role(&m[i], "assistant") ? "model" : m[i].role);
		put(r, "\n");
		if (sys && is_role(&m[i], "user")) {
			put_content(r, sys, 0);
			put(r, "\n\n");
			sys = NULL;
		}
		put_content(r, m[i].content, 1);
		put(r, "<end_of_turn>\n");
	}
	if (gen)
		put(r, "<start_of_turn>model\n");
}

static enum lp_status render(const struct lp_chat *c, const struct lp_chat_msg *msgs, size_t n,
			     int gen, struct render *r, struct lp_diag *d)
{
	for (size_t i = 0; i < n; i++)
		if (!msgs[i].role || !msgs[i].content)
			return lp_diag_set(d, LP_E_INPUT, NULL, 0, 0,
					   "chat message %zu has no %s", i,
					   msgs[i].role ? "content" : "role");
	switch (c->style) {
	case LP_CHAT_LLAMA3:
		render_turns(&llama3_format, msgs, n, gen, r);
		break;
	case LP_CHAT_LLAMA2:
	case LP_CHAT_MISTRAL:
		render_inst(c->style, msgs, n, r);
		break;
	case LP_CHAT_GEMMA:
		render_gemma(msgs, n, gen, r);
		break;
	case LP_CHAT_PHI3:
		render_turns(&phi3_format, msgs, n, gen, r);
		break;
	default:
		render_chatml(c, msgs, n, gen, r);
		break;
	}
	if (r->st)
		return lp_diag_set(d, r->st, NULL, 0, 0, "out of memory rendering the chat prompt");
	return LP_OK;
}

enum lp_status lp_chat_render(const struct lp_chat *c, const struct lp_chat_msg *msgs,
			      size_t n, int add_generation_prompt, struct lp_buf *out,
			      struct lp_diag *d)
{
	struct render r = { out, NULL, 0, LP_OK };

	return render(c, msgs, n, add_generation_prompt, &r, d);
}

enum lp_status lp_chat_encode(const struct lp_chat *c, const struct lp_tok *tok,
			      const struct lp_chat_msg *msgs, size_t n, int add_generation_prompt,
			      struct lp_tokens *out, struct lp_diag *d)
{
	struct lp_buf b;
	struct render r = { &b, NULL, 0, LP_OK };
	enum lp_status st;

	lp_buf_init(&b);
	/* At most one span per message (Gemma moves the system text, once). */
	r.spans = lp_mem_alloc(LP_MEM_OTHER, (n + 1) * sizeof(*r.spans), d);
	if (!r.spans)
		return LP_E_NOMEM;
	st = render(c, msgs, n, add_generation_prompt, &r, d);
	if (!st)
		st = lp_tok_encode_guarded(tok, b.data, b.len, LP_TOK_ADD_SPECIAL, r.spans,
					   r.n_spans, out, d);
	lp_mem_free(r.spans);
	lp_buf_release(&b);
	return st;
}
