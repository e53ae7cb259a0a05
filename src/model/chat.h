/*
 * chat.h - chat prompt formats, recognised without a Jinja interpreter.
 *
 * A GGUF file carries its chat template as Jinja text
 * (tokenizer.chat_template). lpipe does not run it: lp_chat_detect picks one
 * of a few known formats by distinctive substrings, and lp_chat_render
 * writes the prompt for that format itself. A pipeline may name the format
 * instead (model.chat_template: chatml | llama3 | llama2 | mistral | gemma |
 * phi3), which always wins over detection.
 *
 * Formats (what render writes; S = system, U = user, A = assistant):
 *   chatml   <|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n
 *            generation prompt: <|im_start|>assistant\n
 *            When the template carries a default system prompt written as a
 *            literal (SmolLM2: "You are a helpful AI assistant named SmolLM,
 *            trained by Hugging Face"), it is used when the messages start
 *            without a system message, exactly as the template does.
 *   llama3   <|start_header_id|>R<|end_header_id|>\n\nC<|eot_id|> per message
 *            (content trimmed); no <|begin_of_text|>: the tokenizer adds BOS.
 *   llama2   [INST] <<SYS>>\nS\n<</SYS>>\n\nU [/INST] A</s><s>[INST] ...
 *   mistral  [INST] S\n\nU [/INST] A</s>[INST] ... (no <<SYS>> block)
 *   gemma    <start_of_turn>user\nU<end_of_turn>\n, the assistant role is
 *            "model", a system message is put in front of the first user
 *            message; generation prompt <start_of_turn>model\n
 *   phi3     <|system|>\nS<|end|>\n<|user|>\nU<|end|>\n<|assistant|>\n
 *
 * The rendered text contains special-token strings. lp_chat_encode turns
 * messages into ids safely: the template's markers become special tokens,
 * while a marker string inside a message (a document that quotes
 * "<|im_end|>") stays plain text, so a document cannot end its own turn.
 * lp_chat_render gives the text alone (for display, or for callers that
 * trust every message).
 */
#ifndef LP_MODEL_CHAT_H
#define LP_MODEL_CHAT_H

#include <stddef.h>

#include "core/buf.h"
#include "core/status.h"
#include "model/tokenizer.h"

enum lp_chat_style {
	LP_CHAT_UNKNOWN = 0,
	LP_CHAT_CHATML,
	LP_CHAT_LLAMA3,
	LP_CHAT_LLAMA2,
	LP_CHAT_MISTRAL,
	LP_CHAT_GEMMA,
	LP_CHAT_PHI3,
};

struct lp_chat_msg {
	const char *role;    /* "system", "user" or "assistant" */
	const char *content;
};

/* A chat format and its default system prompt (owned, may be NULL). */
struct lp_chat {
	enum lp_chat_style style;
	char *default_system;
};

/* Format of a Jinja template by its substrings; LP_CHAT_UNKNOWN when none
 * matches or `tmpl` is NULL. */
enum lp_chat_style lp_chat_detect(const char *tmpl);
/* Style by name ("chatml", ...); LP_CHAT_UNKNOWN for an unknown name. */
enum lp_chat_style lp_chat_style_from_name(const char *name);
/* Name of a style ("unknown" for LP_CHAT_UNKNOWN); never NULL. */
const char *lp_chat_style_name(enum lp_chat_style s);

/*
 * Set up `c` from a model's template and an optional override name
 * (NULL or "" or "auto": detect). An unknown or missing template falls back
 * to ChatML with a warning. Returns LP_E_CONFIG for an unknown override
 * name (the message lists the valid ones), LP_E_NOMEM. Release with
 * lp_chat_release.
 */
enum lp_status lp_chat_init(struct lp_chat *c, const char *tmpl, const char *override,
			    struct lp_diag *d);
void lp_chat_release(struct lp_chat *c);

/* The literal default system prompt of a ChatML template, as a new string
 * the caller frees with lp_mem_free; NULL when there is none. */
char *lp_chat_template_default_system(const char *tmpl);

/*
 * Append the prompt for msgs[0..n) to `out`; with add_generation_prompt the
 * opening of the assistant's turn follows. Returns LP_OK, LP_E_INPUT for a
 * message without role or content, LP_E_NOMEM.
 */
enum lp_status lp_chat_render(const struct lp_chat *c, const struct lp_chat_msg *msgs,
			      size_t n, int add_generation_prompt, struct lp_buf *out,
			      struct lp_diag *d);

/*
 * Append the ids of the prompt for msgs[0..n) to `out`: the prompt of
 * lp_chat_render, encoded with special tokens matched in the template's
 * text only, and BOS/EOS as the vocabulary asks. Returns LP_OK, LP_E_INPUT,
 * LP_E_NOMEM.
 */
enum lp_status lp_chat_encode(const struct lp_chat *c, const struct lp_tok *tok,
			      const struct lp_chat_msg *msgs, size_t n, int add_generation_prompt,
			      struct lp_tokens *out, struct lp_diag *d);

/* Text of the special token that ends a turn in this format ("<|im_end|>",
 * "<|eot_id|>", "</s>", "<end_of_turn>", "<|end|>"); never NULL. */
const char *lp_chat_end_of_turn(enum lp_chat_style s);

#endif
