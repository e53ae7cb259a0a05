#include "stages/model_stage.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "config/pipeline.h"
#include "core/buf.h"
#include "core/fileio.h"
#include "core/log.h"
#include "core/mem.h"
#include "engine/engine.h"
#include "stages/stage.h"
#include "text/lang.h"

static enum lp_qtype kv_qtype(enum lp_kv_type t)
{
	return t == LP_KV_F32 ? LP_Q_F32 : t == LP_KV_Q8_0 ? LP_Q_Q8_0 : LP_Q_F16;
}

int lp_stage_shrink(const struct lp_doc *doc)
{
	return doc->pipeline && doc->pipeline->memory.on_oom == LP_ON_OOM_SHRINK;
}

static int is_file(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISREG(sb.st_mode);
}

const char *lp_stage_model_file(const char *path, char *buf, size_t cap)
{
	const char *dir = getenv("LPIPE_MODEL_DIR"), *home = getenv("HOME");

	if (!path || !*path)
		snprintf(buf, cap, "%s", lp_session_default_path());
	else if (strchr(path, '/') || is_file(path))
		snprintf(buf, cap, "%s", path);
	else if (dir && *dir)
		snprintf(buf, cap, "%s/%s", dir, path);
	else
		snprintf(buf, cap, "%s/.cache/lpipe/models/%s", home && *home ? home : ".", path);
	return buf;
}

void lp_stage_pick_model(const struct lp_model_cfg *m, const char *lang,
			 struct lp_stage_model *out)
{
	int which;
	const struct lp_model_cfg *e = lp_model_cfg_for_lang(m, lang, &which);

	out->cfg = e;
	out->lang = which >= 0 ? lp_model_lang_name(which) : NULL;
	out->notice[0] = 0;
	lp_stage_model_file(e->path, out->path, sizeof(out->path));
	if (which >= 0 && !is_file(out->path)) {
		char base[4096];
		lp_stage_model_file(m->path, base, sizeof(base));
		snprintf(out->notice, sizeof(out->notice),
			 "model.by_lang.%s: no file '%.200s': %s documents use '%.200s' "
			 "(`make models-large` fetches the larger model)", out->lang, out->path,
			 out->lang, base);
		memcpy(out->path, base, sizeof(base));
		out->cfg = m;
		out->lang = NULL;
	}
}

enum lp_status lp_stage_session(struct lp_doc *doc, struct lp_session **out,
				struct lp_diag *d)
{
	struct lp_session_params sp = lp_session_default_params();
	struct lp_openai_params op = lp_openai_default_params();
	const char *phase = lp_mem_phase();
	enum lp_status st;
	int opened = 1;

	if (doc->session) {
		*out = doc->session;
		return LP_OK;
	}
	if (doc->pipeline) {
		struct lp_stage_model pick;
		const struct lp_model_cfg *m;
		lp_stage_pick_model(&doc->pipeline->model,
				    doc->text ? lp_lang_tag(lp_lang_script(doc->text, doc->len)) : NULL,
				    &pick);
		if (pick.notice[0]) {
			lp_info("%s", pick.notice);
			lp_doc_event(doc, "%s", pick.notice);
		} else if (pick.lang) {
			lp_doc_event(doc, "model for %s documents: %s", pick.lang, pick.path);
		}
		m = pick.cfg;
		if (!(sp.path = lp_arena_strdup(&doc->arena, pick.path)))
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
		sp.chat_template = m->chat_template;
		sp.n_ctx = (uint32_t)m->context;
		sp.kv_type = kv_qtype(m->kv_type);
		sp.stream_weights = m->weights == LP_WEIGHTS_CFG_STREAM;
		sp.device = lp_device_name(m->device);
		sp.gpu_layers = m->gpu_layers;
		sp.gpu_budget = doc->pipeline->memory.gpu_budget;
		if (m->backend == LP_BACKEND_OPENAI) {
			op.url = m->url;
			op.model = m->name;
			op.api_key_env = m->api_key_env;
			op.timeout_ms = (long)m->timeout_ms;
			op.retries = (int)m->retries;
			op.concurrency = (int)m->concurrency;
			sp.openai = &op;
			sp.path = m->tokenizer;
		}
	}
	sp.shrink = lp_stage_shrink(doc);
	lp_mem_set_phase("load");
	if (doc->engine)
		st = lp_engine_session(doc->engine, &sp, &doc->session, &opened, d);
	else
		st = lp_session_open(&sp, &doc->session, d);
	lp_mem_set_phase(phase);
	if (st)
		return st;
	/* what opening did is news only to the document that opened it */
	for (size_t i = 0; opened && lp_session_note_at(doc->session, i); i++)
		lp_doc_event(doc, "%s", lp_session_note_at(doc->session, i));
	if (sp.openai)
		lp_doc_event(doc, "model: '%s' on '%s', tokens %s", op.model, op.url,
			     sp.path ? "counted with the tokenizer" : "estimated");
	*out = doc->session;
	return LP_OK;
}

enum lp_status lp_stage_input_budget(struct lp_session *s, const struct lp_chat_msg *msgs,
				     size_t n, size_t max_tokens, size_t reserved,
				     size_t *budget, struct lp_diag *d)
{
	size_t over, n_ctx = lp_session_n_ctx(s);
	enum lp_status st = lp_session_overhead(s, msgs, n, &over, d);

	if (st)
		return st;
	/* the budget may have cut the context below what this step needs:
	 * streaming the weights (a slower step) beats an impossible one */
	if (over + max_tokens + reserved + LP_STAGE_MIN_INPUT > n_ctx) {
		size_t need = over + max_tokens + reserved + LP_STAGE_MIN_INPUT;
		st = need <= UINT32_MAX ? lp_session_regrow(s, (uint32_t)need, d) : LP_E_CONFIG;
		if (st && st != LP_E_CONFIG)
			return st;
		n_ctx = lp_session_n_ctx(s);
	}
	if (over + max_tokens + reserved + LP_STAGE_MIN_INPUT > n_ctx)
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
				   "context of %zu tokens too small: the prompt takes %zu, "
				   "max_tokens %zu and other inputs %zu, leaving fewer than %d "
				   "for the text",
				   n_ctx, over, max_tokens, reserved, LP_STAGE_MIN_INPUT);
	*budget = n_ctx - over - max_tokens - reserved;
	return LP_OK;
}

size_t lp_stage_count_tokens(void *session, const char *text, size_t len)
{
	return lp_session_count_tokens(session, text, len);
}

char *lp_stage_head_tokens(struct lp_doc *doc, struct lp_session *s, const char *text,
			   size_t len, size_t max_tokens, int *cut, struct lp_diag *d)
{
	return lp_stage_head_tokens_in(&doc->arena, s, text, len, max_tokens, cut, d);
}

char *lp_stage_head_tokens_in(struct lp_arena *arena, struct lp_session *s, const char *text,
			      size_t len, size_t max_tokens, int *cut, struct lp_diag *d)
{
	size_t keep = len;
	char *out;

	*cut = 0;
	if (lp_session_count_tokens(s, text, len) > max_tokens) {
		if (lp_session_prefix_bytes(s, text, len, max_tokens, &keep, d))
			return NULL;
		*cut = 1;
	}
	out = lp_arena_strndup(arena, text, keep);
	if (!out)
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a prompt input");
	return out;
}

const char *lp_stage_expand(struct lp_doc *doc, const char *tmpl)
{
	static const char var[] = "${question}";
	const char *q = doc->question ? doc->question : "", *p, *hit;
	struct lp_buf b;
	char *out;

	lp_buf_init(&b);
	for (p = tmpl; (hit = strstr(p, var)); p = hit + sizeof(var) - 1) {
		lp_buf_add(&b, p, (size_t)(hit - p));
		lp_buf_adds(&b, q);
	}
	lp_buf_adds(&b, p);
	out = lp_arena_strndup(&doc->arena, b.data, b.len);
	lp_buf_release(&b);
	return out;
}

/*
 * Every prompt lp_stage_parse_prompt returns is preceded, in the arena, by
 * this header, so describe() can tell a prompt_file from an inline prompt
 * and print the file's path and size instead of its content (which may be
 * anything the user can read, and is no business of a printed plan).
 */
struct prompt_hdr {
	const char *file; /* prompt_file as resolved, or NULL for inline text */
	size_t bytes;
};

/* The text (NUL-terminated) behind a new header in the arena, or NULL. */
static const char *prompt_new(struct lp_arena *a, const char *file, const char *text,
			      size_t len)
{
	struct prompt_hdr *h = lp_arena_alloc(a, sizeof(*h) + len + 1);
	char *t;

	if (!h)
		return NULL;
	h->file = file;
	h->bytes = len;
	t = (char *)(h + 1);
	memcpy(t, text, len);
	t[len] = '\0';
	return t;
}

void lp_stage_describe_prompt(struct lp_buf *out, const char *prompt)
{
	const struct prompt_hdr *h = (const struct prompt_hdr *)prompt - 1;

	if (!h->file) {
		lp_buf_adds(out, ", prompt: ");
		lp_cfg_quote(out, prompt);
		return;
	}
	lp_buf_adds(out, ", prompt_file: ");
	lp_cfg_quote(out, h->file);
	lp_buf_addf(out, LP_STAGE_COMMENT_START "prompt_file: %zu bytes" LP_STAGE_COMMENT_END,
		    h->bytes);
}

enum lp_status lp_stage_parse_prompt(struct lp_cfg_ctx *c, const struct lp_node *opts,
				     const struct lp_pipeline *p, const char **prompt)
{
	const char *file = NULL, *inline_text = NULL, *slash;
	struct lp_mapped m;
	struct lp_diag d;
	char *path;
	enum lp_status st;

	*prompt = NULL;
	if (lp_cfg_get_string(c, opts, "prompt", NULL, &inline_text) ||
	    lp_cfg_get_string(c, opts, "prompt_file", NULL, &file))
		return LP_E_CONFIG;
	if (!file) {
		if (inline_text &&
		    !(*prompt = prompt_new(c->arena, NULL, inline_text, strlen(inline_text))))
			return lp_cfg_nomem(c);
		return LP_OK;
	}
	if (inline_text)
		return lp_cfg_error(c, lp_node_get(opts, "prompt_file"),
				    "give prompt or prompt_file, not both");
	slash = p && p->path ? strrchr(p->path, '/') : NULL;
	if (file[0] != '/' && slash)
		path = lp_arena_printf(c->arena, "%.*s/%s", (int)(slash - p->path), p->path, file);
	else
		path = lp_arena_strdup(c->arena, file);
	if (!path)
		return lp_cfg_nomem(c);
	lp_diag_init(&d);
	st = lp_file_map(path, LP_FILE_PROMPT, LP_MEM_OTHER, &m, &d);
	if (st == LP_E_NOMEM)
		return lp_cfg_nomem(c);
	if (st)
		return lp_cfg_error(c, lp_node_get(opts, "prompt_file"),
				    "cannot read prompt_file '%s': %s", path, d.msg);
	*prompt = prompt_new(c->arena, path, (const char *)m.data, m.len);
	lp_file_unmap(&m);
	return *prompt ? LP_OK : lp_cfg_nomem(c);
}
