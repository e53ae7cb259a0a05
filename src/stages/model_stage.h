/*
 * model_stage.h - what the stages that run a model (summarize tree/refine,
 * answer, generate, truncate, split by model tokens) share: the run's model
 * session, opened on first use from the pipeline's model section and kept
 * in doc->session until the run ends, and the prompt defaults.
 *
 * Every model step sizes its prompt from the session's n_ctx, the template
 * overhead and max_tokens (lp_stage_input_budget), so a step that the
 * engine would refuse for length is a bug, never an input error.
 */
#ifndef LP_STAGES_MODEL_STAGE_H
#define LP_STAGES_MODEL_STAGE_H

#include <stddef.h>

#include "model/chat.h"
#include "model/session.h"
#include "stages/doc.h"

/* The fewest tokens of input a step may be given; a shrink never halves
 * below it and a context that leaves less is a configuration error. */
#define LP_STAGE_MIN_INPUT 32

/*
 * Which model a run opens. The pipeline's model section, or its
 * model.by_lang entry for the document's language (text/lang.h
 * lp_lang_tag) when the file gives one. A path without a '/' that names no
 * file in the current directory is looked up in the model directory
 * (${LPIPE_MODEL_DIR:-$HOME/.cache/lpipe/models}, where scripts/fetch-models
 * puts the models); no path is the default model there. When the file of
 * the language's entry is missing, the section's own model is used and
 * `notice` says so in one line: a model per language improves a run, its
 * absence never stops one.
 */
struct lp_stage_model {
	const struct lp_model_cfg *cfg; /* the settings to open with */
	const char *lang;    /* the by_lang entry used ("zh"), NULL: the section */
	char path[4096];     /* the GGUF file */
	char notice[600];    /* "" or why the language's entry was not used */
};

/* Fill *out for a document in language `lang` (NULL: none known). Never
 * fails; whether out->path exists is for the session to find out. */
void lp_stage_pick_model(const struct lp_model_cfg *m, const char *lang,
			 struct lp_stage_model *out);

/* `path` (NULL or "": the default model) resolved as lp_stage_pick_model
 * does, into buf[0..cap). Returns buf. */
const char *lp_stage_model_file(const char *path, char *buf, size_t cap);

/*
 * doc->session, acquired now when it is not yet: from doc->engine (a
 * loaded session of the same model and settings, else a new one), or
 * opened for the doc alone without an engine (phase "load"; the context
 * halves under the budget when memory.on_oom is shrink, recorded as an
 * event by the document that opened it). Returns LP_OK and *out (held by
 * the doc until lp_doc_release), or what lp_session_open returns.
 */
enum lp_status lp_stage_session(struct lp_doc *doc, struct lp_session **out,
				struct lp_diag *d);

/* 1 when memory.on_oom is shrink. */
int lp_stage_shrink(const struct lp_doc *doc);

/*
 * Tokens of content a prompt made of msgs[0..n) (contents ignored) may
 * carry besides `reserved` tokens already promised (other contents) so that
 * prompt + max_tokens fits the context. Returns LP_OK; LP_E_CONFIG when
 * fewer than LP_STAGE_MIN_INPUT tokens are left ("context 512 too small for
 * max_tokens 480 ..."); LP_E_NOMEM.
 */
enum lp_status lp_stage_input_budget(struct lp_session *s, const struct lp_chat_msg *msgs,
				     size_t n, size_t max_tokens, size_t reserved,
				     size_t *budget, struct lp_diag *d);

/* lp_session_count_tokens as a text/split.h token counter (ctx: session). */
size_t lp_stage_count_tokens(void *session, const char *text, size_t len);

/*
 * A copy of text[0..len) cut to at most max_tokens tokens, in the doc
 * arena; *cut is set to 1 when it had to be cut. Returns NULL when out of
 * memory.
 */
char *lp_stage_head_tokens(struct lp_doc *doc, struct lp_session *s, const char *text,
			   size_t len, size_t max_tokens, int *cut, struct lp_diag *d);
/* Same in `arena` (a step's scratch arena, say). */
char *lp_stage_head_tokens_in(struct lp_arena *arena, struct lp_session *s, const char *text,
			      size_t len, size_t max_tokens, int *cut, struct lp_diag *d);

/* Replace each "${question}" in `tmpl` by doc->question ("" without one);
 * an arena string, NULL when out of memory. */
const char *lp_stage_expand(struct lp_doc *doc, const char *tmpl);

/*
 * Copy the model's answer `gen` to `out` without the citations "[chunk N]"
 * (any case) whose N is not in ids[0..n_ids) (a space before a dropped one
 * goes too), and store the distinct ids it does cite, in order of first
 * citation, in cited[] (room for n_ids) and their count in *n_cited.
 */
struct lp_buf;
void lp_stage_filter_citations(const char *gen, const size_t *ids, size_t n_ids,
			       struct lp_buf *out, size_t *cited, size_t *n_cited);

/*
 * Check an answer's citations: keep the ids of cited[0..n_cited) whose chunk
 * holds at least one of the answer's content words (text/evidence.h
 * lp_evidence_support; `answer` without its "[chunk N]" tags), in order.
 * When none is left, cite instead the chunks of ids[0..n_ids) (those given
 * to the model) that hold the most of those words, none when no chunk
 * holds any. Returns the new count; cited[] needs room for n_ids.
 */
size_t lp_stage_check_citations(const struct lp_doc *doc, const char *answer,
				const char *question, const size_t *ids, size_t n_ids,
				size_t *cited, size_t n_cited);

/*
 * Parse the `prompt` (inline) and `prompt_file` keys of a stage's options
 * (at most one of them): *prompt is the text in c->arena, or NULL when
 * neither is given. A relative prompt_file is read beside the pipeline
 * file, a file of at most LP_FILE_PROMPT_MAX bytes and no NUL. Returns
 * LP_OK or LP_E_CONFIG (both given, unreadable file, too large, binary).
 * Describe the result only with lp_stage_describe_prompt.
 */
struct lp_cfg_ctx;
struct lp_node;
struct lp_pipeline;
enum lp_status lp_stage_parse_prompt(struct lp_cfg_ctx *c, const struct lp_node *opts,
				     const struct lp_pipeline *p, const char **prompt);

/* Append ", prompt: TEXT" for an inline prompt, or ", prompt_file: PATH"
 * and its size as a comment for a file (never its content: a printed plan
 * must not reveal a file it was pointed at). `prompt` must come from
 * lp_stage_parse_prompt. */
void lp_stage_describe_prompt(struct lp_buf *out, const char *prompt);

#endif
