/*
 * pipeline.c - a pipeline file from text to validated structs.
 *
 * Order of work: parse (with ${var} substitution), apply --set overrides to
 * the tree, then validate each section with the typed getters and hand each
 * stage's options to its kind's parse. Stages are parsed last so that they
 * can read the model and memory sections already resolved in `p`.
 */
#include "config/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/override.h"
#include "config/stage_kind.h"
#include "core/fileio.h"
#include "core/mem.h"
#include "core/prefix.h"

static const char *const top_keys[] = {
	"version", "name", "model", "memory", "retrieval", "input", "output", "stages", NULL
};
static const char *const device_names[] = { "auto", "cpu", "cuda", NULL };
static const char *const kv_names[] = { "f32", "f16", "q8_0", NULL };
static const char *const on_oom_names[] = { "shrink", "fail", NULL };
static const char *const weights_names[] = { "map", "stream", NULL };
static const char *const lang_names[] = { "en", "zh", "und", NULL };
static const char *const backend_names[] = { "local", "openai", NULL };
static const char *const scorer_names[] = { "bm25", "hash", "dense", "hybrid", NULL };
static const char *const fusion_names[] = { "rrf", "weighted", NULL };
static const char *const utf8_names[] = { "error", "replace", NULL };
/* indexed by enum lp_doc_format */
static const char *const doc_format_names[] = { "auto", "text", "markdown", "html", "pdf",
						 NULL };
static const char *const format_names[] = { "text", "markdown", "json", "html", NULL };

const char *lp_scorer_name(enum lp_scorer s)
{
	return (unsigned)s < 4 ? scorer_names[s] : "?";
}

const char *lp_format_name(enum lp_format f)
{
	return (unsigned)f < 4 ? format_names[f] : "?";
}

const char *lp_device_name(enum lp_device v) { return (unsigned)v < 3 ? device_names[v] : "?"; }
static const char *kv_name(enum lp_kv_type v) { return (unsigned)v < 3 ? kv_names[v] : "?"; }

/* The section map `key` of the root: NULL when absent; a null value reads
 * as absent too. Anything but a map is an error. */
static enum lp_status section(struct lp_cfg_ctx *c, const struct lp_node *root,
			      const char *key, const struct lp_node **out)
{
	const struct lp_node *n = lp_node_get(root, key);

	*out = NULL;
	c->section = key;
	if (!n || lp_node_is_null(n))
		return LP_OK;
	if (n->kind != LP_NODE_MAP)
		return lp_cfg_error(c, n, "expected a map of options, got %s",
				    lp_node_kind_name(n));
	*out = n;
	return LP_OK;
}

static enum lp_status check_version(struct lp_cfg_ctx *c, struct lp_pipeline *p,
				    const struct lp_node *root)
{
	const struct lp_node *v = lp_node_get(root, "version");
	long long x;

	c->section = NULL;
	if (!v) {
		const struct lp_node start = { .line = 1, .col = 1 };
		return lp_cfg_error(c, &start, "missing 'version' (this reader knows version 1)");
	}
	if (v->kind != LP_NODE_SCALAR || lp_node_is_null(v))
		return lp_cfg_error(c, v, "'version' must be 1, got %s",
				    lp_node_is_null(v) ? "nothing" : lp_node_kind_name(v));
	if (lp_cfg_get_int(c, root, "version", 1, 1, 1, &x) != LP_OK)
		return lp_cfg_error(c, v, "unsupported version '%s' (this reader knows version 1)",
				    v->scalar);
	p->version = x;
	return LP_OK;
}

/* "dir/summarize.yaml" -> "summarize". */
static const char *default_name(struct lp_arena *a, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t n = strlen(base);

	if (dot && dot != base && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
		n = (size_t)(dot - base);
	return lp_arena_strndup(a, base, n);
}

static enum lp_status parse_gpu_layers(struct lp_cfg_ctx *c, const struct lp_node *m,
				       long long *out)
{
	const struct lp_node *v = lp_node_get(m, "gpu_layers");
	enum lp_status st;

	if (v && v->kind == LP_NODE_SCALAR && !strcmp(v->scalar, "all")) {
		*out = -1;
		return LP_OK;
	}
	st = lp_cfg_get_int(c, m, "gpu_layers", -1, 0, 1000000, out);
	if (st == LP_E_CONFIG && v && v->kind == LP_NODE_SCALAR)
		return lp_cfg_error(c, v, "'gpu_layers' must be 'all' or a number of layers "
				    "(0 or more), got '%s'", v->scalar);
	return st;
}

const char *lp_model_lang_name(int i)
{
	return i >= 0 && i < LP_MODEL_N_LANGS ? lang_names[i] : NULL;
}

const struct lp_model_cfg *lp_model_cfg_for_lang(const struct lp_model_cfg *m,
						 const char *lang, int *which)
{
	*which = -1;
	for (int i = 0; lang && i < LP_MODEL_N_LANGS; i++)
		if (!strcmp(lang, lang_names[i]) && m->by_lang[i]) {
			*which = i;
			return m->by_lang[i];
		}
	return m;
}

/* One entry of model.by_lang: `base` with the keys the entry gives. */
static enum lp_status parse_lang_model(struct lp_cfg_ctx *c, const struct lp_model_cfg *base,
				       const struct lp_node *e, const struct lp_model_cfg **out)
{
	static const char *const keys[] = { "path", "context", "kv_type", "chat_template",
					    "weights", NULL };
	struct lp_model_cfg *m;
	int kv, w;
	enum lp_status st;

	if (e->kind != LP_NODE_MAP)
		return lp_cfg_error(c, e, "expected a map of model options (path, context, "
				    "kv_type, chat_template, weights), got %s",
				    lp_node_kind_name(e));
	if ((st = lp_cfg_check_keys(c, e, keys)) != LP_OK)
		return st;
	if (!(m = lp_arena_alloc(c->arena, sizeof(*m))))
		return lp_cfg_nomem(c);
	*m = *base;
	memset(m->by_lang, 0, sizeof(m->by_lang));
	if ((st = lp_cfg_get_string(c, e, "path", base->path, &m->path)) != LP_OK ||
	    (st = lp_cfg_get_int(c, e, "context", base->context, 16, 1048576,
				 &m->context)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, e, "kv_type", kv_names, (int)base->kv_type, &kv)) != LP_OK ||
	    (st = lp_cfg_get_string(c, e, "chat_template", base->chat_template,
				    &m->chat_template)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, e, "weights", weights_names, (int)base->weights,
				  &w)) != LP_OK)
		return st;
	m->kv_type = (enum lp_kv_type)kv;
	m->weights = (enum lp_weights_cfg)w;
	*out = m;
	return LP_OK;
}

/* model.by_lang: a map from language tag to model options. */
static enum lp_status parse_by_lang(struct lp_cfg_ctx *c, struct lp_model_cfg *m,
				    const struct lp_node *s)
{
	const struct lp_node *n = s ? lp_node_get(s, "by_lang") : NULL;
	const char *outer = c->section;
	char label[64];
	enum lp_status st;

	if (!n || lp_node_is_null(n))
		return LP_OK;
	if (n->kind != LP_NODE_MAP)
		return lp_cfg_error(c, n, "'by_lang' must map document languages (en, zh, und) "
				    "to model options, got %s", lp_node_kind_name(n));
	for (size_t i = 0; i < n->n; i++) {
		const char *tag = n->keys[i]->scalar;
		int k = 0;
		while (lang_names[k] && strcmp(lang_names[k], tag))
			k++;
		if (!lang_names[k]) {
			const char *near = lp_cfg_suggest(tag, lang_names);
			c->section = "model.by_lang";
			st = near ? lp_cfg_error(c, n->keys[i], "unknown language '%s' (did you "
						 "mean '%s'?); the languages are en, zh and und",
						 tag, near)
				  : lp_cfg_error(c, n->keys[i], "unknown language '%s'; the "
						 "languages are en (Latin script), zh (Han) and "
						 "und (another script)", tag);
			c->section = outer;
			return st;
		}
		if (lp_node_is_null(n->values[i]))
			continue;
		snprintf(label, sizeof(label), "model.by_lang.%s", lang_names[k]);
		c->section = label;
		st = parse_lang_model(c, m, n->values[i], &m->by_lang[k]);
		c->section = outer;
		if (st)
			return st;
	}
	return LP_OK;
}

/* A duration: "60s", "500ms", "2m" or a plain number of seconds. */
static enum lp_status get_duration_ms(struct lp_cfg_ctx *c, const struct lp_node *m,
				      const char *key, long long def, long long *out)
{
	const struct lp_node *v = m ? lp_node_get(m, key) : NULL;
	const char *str;
	char *end;
	double x;
	enum lp_status st = lp_cfg_get_string(c, m, key, NULL, &str);

	*out = def;
	if (st || !str)
		return st;
	x = strtod(str, &end);
	if (end != str && x > 0 && x <= 86400 && (!*end || !strcmp(end, "s"))) {
		*out = (long long)(x * 1000 + 0.5);
	} else if (end != str && x > 0 && x <= 86400000 && !strcmp(end, "ms")) {
		*out = (long long)(x + 0.5);
	} else if (end != str && x > 0 && x <= 1440 && !strcmp(end, "m")) {
		*out = (long long)(x * 60000 + 0.5);
	} else {
		return lp_cfg_error(c, v, "'%s' must be a duration such as 60s, 500ms or 2m, "
				    "got '%s'", key, str);
	}
	if (*out < 1)
		*out = 1;
	return LP_OK;
}

/* The keys of backend openai (after the common ones). */
static enum lp_status parse_model_remote(struct lp_cfg_ctx *c, struct lp_model_cfg *m,
					 const struct lp_node *s)
{
	enum lp_status st;
	int be;

	if ((st = lp_cfg_get_enum(c, s, "backend", backend_names, LP_BACKEND_LOCAL, &be)) ||
	    (st = lp_cfg_get_string(c, s, "url", NULL, &m->url)) ||
	    (st = lp_cfg_get_string(c, s, "name", NULL, &m->name)) ||
	    (st = lp_cfg_get_string(c, s, "api_key_env", NULL, &m->api_key_env)) ||
	    (st = lp_cfg_get_string(c, s, "tokenizer", NULL, &m->tokenizer)) ||
	    (st = get_duration_ms(c, s, "timeout", 60000, &m->timeout_ms)) ||
	    (st = lp_cfg_get_int(c, s, "retries", 4, 0, 100, &m->retries)) ||
	    (st = lp_cfg_get_int(c, s, "concurrency", 4, 1, 1024, &m->concurrency)))
		return st;
	m->backend = (enum lp_model_backend)be;
	if (m->backend == LP_BACKEND_LOCAL) {
		static const char *const only[] = { "url", "name", "api_key_env", "tokenizer",
						    "timeout", "retries", "concurrency", NULL };
		for (size_t i = 0; only[i]; i++)
			if (s && lp_node_get(s, only[i]))
				return lp_cfg_error(c, lp_node_get(s, only[i]),
						    "'%s' needs 'backend: openai'", only[i]);
		return LP_OK;
	}
	if (!m->url || !*m->url || !m->name || !*m->name)
		return lp_cfg_error(c, lp_node_get(s, "backend"),
				    "'backend: openai' needs 'url' and 'name'");
	if (strncmp(m->url, "http://", 7) && strncmp(m->url, "https://", 8))
		return lp_cfg_error(c, lp_node_get(s, "url"),
				    "'url' must start with http:// or https://, got '%s'", m->url);
	if (m->path && *m->path)
		return lp_cfg_error(c, lp_node_get(s, "path"),
				    "'path' loads a local model: with 'backend: openai' use "
				    "'tokenizer' to count tokens with a GGUF's vocabulary");
	if (m->tokenizer && !*m->tokenizer)
		m->tokenizer = NULL;
	return LP_OK;
}

static enum lp_status parse_model(struct lp_cfg_ctx *c, struct lp_pipeline *p,
				  const struct lp_node *root)
{
	static const char *const keys[] = { "path", "device", "context", "kv_type",
					    "gpu_layers", "chat_template", "weights", "by_lang",
					    "backend", "url", "name", "api_key_env",
					    "tokenizer", "timeout", "retries", "concurrency",
					    NULL };
	struct lp_model_cfg *m = &p->model;
	const struct lp_node *s;
	int dev, kv, w;
	enum lp_status st;

	if ((st = section(c, root, "model", &s)) != LP_OK ||
	    (st = lp_cfg_check_keys(c, s, keys)) != LP_OK)
		return st;
	m->present = lp_node_get(root, "model") != NULL;
	if ((st = lp_cfg_get_string(c, s, "path", NULL, &m->path)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "device", device_names, LP_DEVICE_AUTO, &dev)) != LP_OK ||
	    (st = lp_cfg_get_int(c, s, "context", 2048, 16, 1048576, &m->context)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "kv_type", kv_names, LP_KV_F16, &kv)) != LP_OK ||
	    (st = parse_gpu_layers(c, s, &m->gpu_layers)) != LP_OK ||
	    (st = lp_cfg_get_string(c, s, "chat_template", NULL, &m->chat_template)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "weights", weights_names, LP_WEIGHTS_CFG_MAP, &w)) != LP_OK)
		return st;
	m->device = (enum lp_device)dev;
	m->gpu_layers_set = s && lp_node_get(s, "gpu_layers") != NULL;
	if (m->gpu_layers_set && m->device == LP_DEVICE_CPU)
		return lp_cfg_error(c, lp_node_get(s, "gpu_layers"),
				    "'gpu_layers' needs a GPU, but 'device' is cpu "
				    "(use device: cuda or auto, or drop gpu_layers)");
	m->kv_type = (enum lp_kv_type)kv;
	m->weights = (enum lp_weights_cfg)w;
	if ((st = parse_model_remote(c, m, s)) != LP_OK)
		return st;
	return parse_by_lang(c, m, s);
}

static enum lp_status parse_memory(struct lp_cfg_ctx *c, struct lp_pipeline *p,
				   const struct lp_node *root)
{
	static const char *const keys[] = { "budget", "gpu_budget", "on_oom", NULL };
	const struct lp_node *s;
	int oom;
	enum lp_status st;

	if ((st = section(c, root, "memory", &s)) != LP_OK ||
	    (st = lp_cfg_check_keys(c, s, keys)) != LP_OK ||
	    (st = lp_cfg_get_size(c, s, "budget", 0, &p->memory.budget)) != LP_OK ||
	    (st = lp_cfg_get_size(c, s, "gpu_budget", 0, &p->memory.gpu_budget)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "on_oom", on_oom_names, LP_ON_OOM_SHRINK, &oom)) != LP_OK)
		return st;
	p->memory.on_oom = (enum lp_on_oom)oom;
	return LP_OK;
}

#define BM25 (1u << LP_SCORER_BM25)
#define HASH (1u << LP_SCORER_HASH)
#define DENSE (1u << LP_SCORER_DENSE)
#define HYBRID (1u << LP_SCORER_HYBRID)

/* The scorers that read each retrieval key, and the fusions of hybrid. */
static const struct lp_cfg_key_use key_scorers[] = {
	{ "k1", BM25 | HYBRID },
	{ "b", BM25 | HYBRID },
	{ "rrf_k", HYBRID },
	{ "fusion", HYBRID },
	{ "weight", HYBRID },
	{ "hash_dim", HASH },
	{ "device", HASH | DENSE | HYBRID },
	{ NULL, 0 },
};
static const struct lp_cfg_key_use key_fusions[] = {
	{ "rrf_k", 1u << LP_FUSION_RRF },
	{ "weight", 1u << LP_FUSION_WEIGHTED },
	{ NULL, 0 },
};

static enum lp_status parse_retrieval(struct lp_cfg_ctx *c, struct lp_pipeline *p,
				      const struct lp_node *root)
{
	static const char *const keys[] = { "scorer", "k1", "b", "rrf_k", "fusion", "weight",
					    "hash_dim", "device", NULL };
	struct lp_retrieval_cfg *r = &p->retrieval;
	const struct lp_node *s;
	int scorer, fusion, dev;
	enum lp_status st;

	if ((st = section(c, root, "retrieval", &s)) != LP_OK ||
	    (st = lp_cfg_check_keys(c, s, keys)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "scorer", scorer_names, LP_SCORER_BM25, &scorer)) != LP_OK ||
	    (st = lp_cfg_get_double(c, s, "k1", 1.2, 0, 10, &r->bm25_k1)) != LP_OK ||
	    (st = lp_cfg_get_double(c, s, "b", 0.75, 0, 1, &r->bm25_b)) != LP_OK ||
	    (st = lp_cfg_get_int(c, s, "rrf_k", 60, 1, 100000, &r->rrf_k)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "fusion", fusion_names, LP_FUSION_RRF, &fusion)) != LP_OK ||
	    (st = lp_cfg_get_double(c, s, "weight", 0.5, 0, 1, &r->weight)) != LP_OK ||
	    (st = lp_cfg_get_int(c, s, "hash_dim", 1024, 16, 65536, &r->hash_dim)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "device", device_names, (int)p->model.device, &dev)) != LP_OK ||
	    (st = lp_cfg_check_key_use(c, s, key_scorers, "scorer", scorer_names, scorer)) != LP_OK ||
	    (scorer == LP_SCORER_HYBRID &&
	     (st = lp_cfg_check_key_use(c, s, key_fusions, "fusion", fusion_names, fusion)) != LP_OK))
		return st;
	r->device = (enum lp_device)dev;
	r->device_set = s && lp_node_get(s, "device") != NULL;
	r->scorer = (enum lp_scorer)scorer;
	r->fusion = (enum lp_fusion)fusion;
	return LP_OK;
}

static enum lp_status parse_io(struct lp_cfg_ctx *c, struct lp_pipeline *p,
			       const struct lp_node *root)
{
	static const char *const in_keys[] = { "invalid_utf8", "format", NULL };
	static const char *const out_keys[] = { "format", NULL };
	const struct lp_node *s;
	int v;
	enum lp_status st;

	if ((st = section(c, root, "input", &s)) != LP_OK ||
	    (st = lp_cfg_check_keys(c, s, in_keys)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "invalid_utf8", utf8_names, LP_UTF8_ERROR, &v)) != LP_OK)
		return st;
	p->input.invalid_utf8 = (enum lp_invalid_utf8)v;
	if ((st = lp_cfg_get_enum(c, s, "format", doc_format_names, LP_DOC_FORMAT_AUTO, &v)) !=
	    LP_OK)
		return st;
	p->input.format = (enum lp_doc_format)v;
	if ((st = section(c, root, "output", &s)) != LP_OK ||
	    (st = lp_cfg_check_keys(c, s, out_keys)) != LP_OK ||
	    (st = lp_cfg_get_enum(c, s, "format", format_names, LP_FORMAT_TEXT, &v)) != LP_OK)
		return st;
	p->output.format = (enum lp_format)v;
	return LP_OK;
}

/* An empty options map standing where `- split:` had nothing. */
static struct lp_node *empty_map_at(struct lp_arena *a, const struct lp_node *at)
{
	struct lp_node *n = lp_arena_alloc(a, sizeof(*n));

	if (n) {
		n->kind = LP_NODE_MAP;
		n->line = at->line;
		n->col = at->col;
		n->file = at->file;
		n->scalar = "";
	}
	return n;
}

static enum lp_status unknown_kind(struct lp_cfg_ctx *c, const struct lp_node *key)
{
	const char *const *names = lp_stage_names();
	const char *s = lp_cfg_suggest(key->scalar, names);
	char list[512] = "";
	size_t len = 0;

	if (s)
		return lp_cfg_error(c, key, "unknown stage kind '%s' (did you mean '%s'?)",
				    key->scalar, s);
	for (size_t i = 0; names[i] && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					names[i]);
	if (!names[0])
		return lp_cfg_error(c, key, "unknown stage kind '%s' (no stage kinds are built in)",
				    key->scalar);
	return lp_cfg_error(c, key, "unknown stage kind '%s' (expected one of: %s)",
			    key->scalar, list);
}

static enum lp_status parse_stage(struct lp_cfg_ctx *c, struct lp_pipeline *p,
				  size_t i, struct lp_node *item)
{
	struct lp_stage *s = &p->stages[i];
	const struct lp_stage_kind *kind;
	struct lp_node *opts;
	char label[128];
	enum lp_status st;

	snprintf(label, sizeof(label), "stages[%zu]", i);
	c->section = label;
	if (item->kind != LP_NODE_MAP || item->n == 0)
		return lp_cfg_error(c, item, "a stage is a map with one key, its kind "
				    "(as in '- split: {size: 384}'), got %s",
				    item->kind == LP_NODE_MAP ? "an empty map" : lp_node_kind_name(item));
	if (item->n > 1)
		return lp_cfg_error(c, item->keys[1], "a stage has one key, its kind; found '%s' "
				    "and '%s' (indent the options under '%s:')",
				    item->keys[0]->scalar, item->keys[1]->scalar,
				    item->keys[0]->scalar);
	kind = lp_stage_find(item->keys[0]->scalar);
	if (!kind)
		return unknown_kind(c, item->keys[0]);
	snprintf(label, sizeof(label), "stages[%zu].%s", i, kind->name);
	opts = item->values[0];
	if (lp_node_is_null(opts)) {
		if (!(opts = empty_map_at(&p->arena, opts)))
			return lp_diag_set(c->diag, LP_E_NOMEM, p->path, 0, 0, "out of memory");
		item->values[0] = opts;
	}
	if (opts->kind != LP_NODE_MAP)
		return lp_cfg_error(c, opts, "the options of a stage must be a map, got %s",
				    lp_node_kind_name(opts));
	s->kind = kind;
	s->node = opts;
	s->line = item->line;
	s->col = item->col;
	st = kind->parse ? kind->parse(c, opts, p, &s->opts) : LP_OK;
	if (st != LP_OK && c->diag && c->diag->status == LP_OK)
		lp_cfg_error(c, opts, "invalid options");
	/* Parse functions chain getters with || and return LP_E_CONFIG for
	 * any failure; a getter that ran out of memory said so in the
	 * diagnostic, and that must decide the exit status (4, not 2). */
	if (st != LP_OK && c->diag && c->diag->status == LP_E_NOMEM)
		st = LP_E_NOMEM;
	return st;
}

static enum lp_status parse_stages(struct lp_cfg_ctx *c, struct lp_pipeline *p,
				   const struct lp_node *root)
{
	struct lp_node *list = lp_node_get(root, "stages");
	enum lp_status st;

	c->section = NULL;
	if (!list) {
		const struct lp_node start = { .line = 1, .col = 1 };
		return lp_cfg_error(c, &start, "missing 'stages' (a pipeline needs at least one "
				    "stage)");
	}
	if (lp_node_is_null(list) || (list->kind == LP_NODE_SEQ && list->n == 0))
		return lp_cfg_error(c, list, "'stages' is empty (a pipeline needs at least one "
				    "stage)");
	if (list->kind != LP_NODE_SEQ)
		return lp_cfg_error(c, list, "'stages' must be a sequence ('- split: ...'), got %s",
				    lp_node_kind_name(list));
	if (list->n > LP_PIPELINE_MAX_STAGES)
		return lp_cfg_error(c, list->values[LP_PIPELINE_MAX_STAGES],
				    "too many stages: %zu (at most %d)", list->n,
				    LP_PIPELINE_MAX_STAGES);
	p->stages = lp_arena_alloc(&p->arena, list->n * sizeof(*p->stages));
	if (!p->stages)
		return lp_diag_set(c->diag, LP_E_NOMEM, p->path, 0, 0, "out of memory");
	for (size_t i = 0; i < list->n; i++) {
		if ((st = parse_stage(c, p, i, list->values[i])) != LP_OK)
			return st;
		p->n_stages = i + 1;
	}
	return LP_OK;
}

static enum lp_status validate(struct lp_pipeline *p, struct lp_diag *d)
{
	struct lp_cfg_ctx c = { .path = p->path, .arena = &p->arena, .diag = d };
	const struct lp_node *root = p->root;
	enum lp_status st;

	if (root->kind != LP_NODE_MAP)
		return lp_cfg_error(&c, root, "a pipeline file is a map of sections "
				    "(version, model, stages, ...), got %s", lp_node_kind_name(root));
	if ((st = lp_cfg_check_keys(&c, root, top_keys)) != LP_OK ||
	    (st = check_version(&c, p, root)) != LP_OK ||
	    (st = lp_cfg_get_string(&c, root, "name", NULL, &p->name)) != LP_OK)
		return st;
	if (!p->name && !(p->name = default_name(&p->arena, p->path)))
		return lp_diag_set(d, LP_E_NOMEM, p->path, 0, 0, "out of memory");
	if ((st = parse_model(&c, p, root)) != LP_OK ||
	    (st = parse_memory(&c, p, root)) != LP_OK ||
	    (st = parse_retrieval(&c, p, root)) != LP_OK ||
	    (st = parse_io(&c, p, root)) != LP_OK)
		return st;
	return parse_stages(&c, p, root);
}

enum lp_status lp_pipeline_load_text(const char *path, const char *text, size_t len,
				     const struct lp_vars *vars,
				     const char *const *sets, size_t n_sets,
				     struct lp_pipeline **out, struct lp_diag *d)
{
	struct lp_pipeline *p = lp_mem_calloc(LP_MEM_OTHER, 1, sizeof(*p), d);
	enum lp_status st;

	*out = NULL;
	if (!p)
		return LP_E_NOMEM;
	lp_arena_init(&p->arena);
	p->path = lp_arena_strdup(&p->arena, path ? path : "");
	if (!p->path)
		st = lp_diag_set(d, LP_E_NOMEM, path, 0, 0, "out of memory");
	else
		st = lp_yaml_parse(p->path, text, len, vars, &p->arena, &p->root, d);
	for (size_t i = 0; st == LP_OK && i < n_sets; i++)
		st = lp_override_apply(p->root, sets[i], i + 1, vars, &p->arena, d);
	if (st == LP_OK)
		st = validate(p, d);
	if (st != LP_OK) {
		lp_pipeline_free(p);
		return st;
	}
	*out = p;
	return LP_OK;
}

/* Out of memory while the pipeline is read: say so in the words a budget
 * error uses, naming the phase (the command line's budget covers it). */
static enum lp_status nomem_reading(const char *path, struct lp_diag *d)
{
	char cap[32];

	if (!lp_mem_budget())
		return lp_diag_set(d, LP_E_NOMEM, path, 0, 0,
				   "out of memory while reading the pipeline");
	return lp_diag_set(d, LP_E_NOMEM, path, 0, 0,
			   "%s: memory budget of %s exceeded while reading the pipeline",
			   lp_mem_phase(), lp_mem_format_size(lp_mem_budget(), cap, sizeof(cap)));
}

#ifndef LP_PIPELINES_DIR
#define LP_PIPELINES_DIR ""
#endif

const char *lp_pipeline_dir(char *out, size_t cap)
{
	const char *env = getenv("LPIPE_PIPELINES_DIR");

	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return out;
	}
	return lp_prefix_dir(LP_PIPELINES_DIR, out, cap);
}

/* A bare name: no folder, not standard input, no such file here. */
static int is_bare_name(const char *path)
{
	return *path && strcmp(path, "-") && !strchr(path, '/') && access(path, F_OK);
}

/* "summarize" (or "summarize.yaml") -> "summarize.yaml" */
static void ready_file_name(const char *name, char *out, size_t cap)
{
	const char *dot = strrchr(name, '.');
	int has_ext = dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"));

	snprintf(out, cap, "%s%s", name, has_ext ? "" : ".yaml");
}

int lp_pipeline_find(const char *name, char *out, size_t cap)
{
	char dir[2048], file[512];
	int n;

	if (!cap || !is_bare_name(name))
		return 0;
	ready_file_name(name, file, sizeof(file));
	lp_pipeline_dir(dir, sizeof(dir));
	if (!*dir)
		return 0;
	n = snprintf(out, cap, "%s/%s", dir, file);
	if (n < 0 || (size_t)n >= cap || access(out, F_OK)) {
		out[0] = 0;
		return 0;
	}
	return 1;
}

/* The error for a bare name found neither here nor among the ready ones. */
static enum lp_status no_such_pipeline(const char *name, struct lp_diag *d)
{
	char dir[2048], file[512];

	ready_file_name(name, file, sizeof(file));
	lp_pipeline_dir(dir, sizeof(dir));
	return lp_diag_set(d, LP_E_IO, name, 0, 0,
			   "unable to open: no such file, nor a ready pipeline '%s' in '%s'", file,
			   dir);
}

enum lp_status lp_pipeline_load(const char *path, const struct lp_vars *vars,
				const char *const *sets, size_t n_sets,
				struct lp_pipeline **out, struct lp_diag *d)
{
	struct lp_mapped m;
	enum lp_status st;
	char found[4096];

	*out = NULL;
	if (lp_pipeline_find(path, found, sizeof(found)))
		path = found;
	else if (is_bare_name(path))
		return no_such_pipeline(path, d);
	st = lp_file_map(path, LP_FILE_PIPELINE, LP_MEM_OTHER, &m, d);
	if (st != LP_OK)
		return st;
	st = lp_pipeline_load_text(path, (const char *)m.data, m.len, vars, sets, n_sets,
				   out, d);
	lp_file_unmap(&m);
	return st == LP_E_NOMEM ? nomem_reading(path, d) : st;
}

void lp_pipeline_free(struct lp_pipeline *p)
{
	if (!p)
		return;
	lp_arena_release(&p->arena);
	lp_mem_free(p);
}

/* ---- printing -------------------------------------------------------------- */

/* A byte count in the largest unit that divides it ("1GiB"), for YAML. */
static void print_size(size_t bytes, FILE *out)
{
	static const char *const units[] = { "TiB", "GiB", "MiB", "KiB" };
	static const int shifts[] = { 40, 30, 20, 10 };

	for (int i = 0; i < 4 && bytes; i++)
		if (bytes % ((size_t)1 << shifts[i]) == 0) {
			fprintf(out, "%zu%s", bytes >> shifts[i], units[i]);
			return;
		}
	fprintf(out, "%zu", bytes);
}

/* The shortest decimal that reads back as `v`. */
static void print_double(double v, FILE *out)
{
	char buf[64];

	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, out);
}

/* The retrieval section as parsed: the keys its scorer reads. */
static void print_retrieval(const struct lp_retrieval_cfg *r, FILE *out)
{
	int sc = (int)r->scorer, rrf = sc == LP_SCORER_HYBRID && r->fusion == LP_FUSION_RRF;

	fprintf(out, "retrieval:\n  scorer: %s\n", lp_scorer_name(r->scorer));
	if (lp_cfg_key_used(key_scorers, "k1", sc)) {
		fputs("  k1: ", out);
		print_double(r->bm25_k1, out);
		fputs("\n  b: ", out);
		print_double(r->bm25_b, out);
		fputc('\n', out);
	}
	if (rrf)
		fprintf(out, "  rrf_k: %lld\n", r->rrf_k);
	if (lp_cfg_key_used(key_scorers, "fusion", sc))
		fprintf(out, "  fusion: %s\n", fusion_names[r->fusion]);
	if (sc == LP_SCORER_HYBRID && !rrf) {
		fputs("  weight: ", out);
		print_double(r->weight, out);
		fputc('\n', out);
	}
	if (lp_cfg_key_used(key_scorers, "hash_dim", sc))
		fprintf(out, "  hash_dim: %lld\n", r->hash_dim);
	if (r->device_set && lp_cfg_key_used(key_scorers, "device", sc))
		fprintf(out, "  device: %s\n", lp_device_name(r->device));
}

static void print_string(const char *key, const char *s, FILE *out)
{
	struct lp_buf b;

	lp_buf_init(&b);
	lp_cfg_quote(&b, s);
	fprintf(out, "%s: %s\n", key, b.data);
	lp_buf_release(&b);
}

static void print_model(const struct lp_model_cfg *m, FILE *out)
{
	fputs("model:\n", out);
	print_string("  path", m->path, out);
	fprintf(out, "  device: %s\n  context: %lld\n  kv_type: %s\n", lp_device_name(m->device),
		m->context, kv_name(m->kv_type));
	if (m->gpu_layers < 0)
		fputs("  gpu_layers: all\n", out);
	else
		fprintf(out, "  gpu_layers: %lld\n", m->gpu_layers);
	print_string("  chat_template", m->chat_template, out);
	fprintf(out, "  weights: %s\n", weights_names[m->weights]);
	for (int i = 0, opened = 0; i < LP_MODEL_N_LANGS; i++) {
		const struct lp_model_cfg *e = m->by_lang[i];
		struct lp_buf b;
		if (!e)
			continue;
		if (!opened++)
			fputs("  by_lang:\n", out);
		lp_buf_init(&b);
		lp_cfg_quote(&b, e->path);
		fprintf(out, "    %s: {path: %s, context: %lld, kv_type: %s, ", lang_names[i],
			b.data, e->context, kv_name(e->kv_type));
		lp_buf_reset(&b);
		lp_cfg_quote(&b, e->chat_template);
		fprintf(out, "chat_template: %s, weights: %s}\n", b.data, weights_names[e->weights]);
		lp_buf_release(&b);
	}
	if (m->backend != LP_BACKEND_OPENAI)
		return;
	/* the variable's name only: its value is a secret */
	fputs("  backend: openai\n", out);
	print_string("  url", m->url, out);
	print_string("  name", m->name, out);
	print_string("  api_key_env", m->api_key_env, out);
	print_string("  tokenizer", m->tokenizer, out);
	fprintf(out, "  timeout: %lldms\n  retries: %lld\n  concurrency: %lld\n", m->timeout_ms,
		m->retries, m->concurrency);
}

/* A stage's description: the map, then its remarks as a YAML comment. */
static void print_described(const char *text, FILE *out)
{
	const char *p, *c, *e;
	int comment = 0;

	for (p = text; (c = strstr(p, LP_STAGE_COMMENT_START)); p = e ? e + 1 : c + strlen(c)) {
		fwrite(p, 1, (size_t)(c - p), out);
		e = strstr(c, LP_STAGE_COMMENT_END);
	}
	fputs(p, out);
	for (p = text; (c = strstr(p, LP_STAGE_COMMENT_START)); p = e ? e + 1 : c + strlen(c)) {
		e = strstr(c + 1, LP_STAGE_COMMENT_END);
		fprintf(out, "%s%.*s", comment++ ? "; " : "  # ",
			(int)(e ? (size_t)(e - c - 1) : strlen(c + 1)), c + 1);
	}
	fputc('\n', out);
}

enum lp_status lp_pipeline_print(const struct lp_pipeline *p, FILE *out)
{
	unsigned long failures = lp_mem_failures();
	struct lp_buf b;

	fprintf(out, "version: %lld\n", p->version);
	print_string("name", p->name, out);
	print_model(&p->model, out);
	fputs("memory:\n  budget: ", out);
	print_size(p->memory.budget, out);
	if (p->memory.gpu_budget) {
		fputs("\n  gpu_budget: ", out);
		print_size(p->memory.gpu_budget, out);
	}
	fprintf(out, "\n  on_oom: %s\n", on_oom_names[p->memory.on_oom]);
	print_retrieval(&p->retrieval, out);
	fprintf(out, "input:\n  invalid_utf8: %s\n", utf8_names[p->input.invalid_utf8]);
	if (p->input.format != LP_DOC_FORMAT_AUTO)
		fprintf(out, "  format: %s\n", doc_format_names[p->input.format]);
	fprintf(out, "output:\n  format: %s\n", lp_format_name(p->output.format));
	fputs("stages:\n", out);
	lp_buf_init(&b);
	for (size_t i = 0; i < p->n_stages; i++) {
		const struct lp_stage *s = &p->stages[i];
		lp_buf_reset(&b);
		if (s->kind->describe)
			s->kind->describe(s->opts, &b);
		fprintf(out, "  - %s: ", s->kind->name);
		print_described(b.len ? b.data : "{}", out);
	}
	lp_buf_release(&b);
	/* describe() and lp_cfg_quote cannot report a failed append */
	return lp_mem_failures() == failures ? LP_OK : LP_E_NOMEM;
}
