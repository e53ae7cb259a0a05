/*
 * json.c - the JSON report (see lpipe(1) for the keys).
 *
 * Scripts rely on the exact set of top-level keys, so it is written out
 * in one place (report_object) in the documented order. Every string goes
 * through jansson, which checks it is valid UTF-8 and escapes it.
 */
#include "report/report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "config.h"

/* A JSON string, or null for NULL. Returns NULL when jansson refuses it
 * (out of memory, invalid UTF-8): the caller treats that as a failure. */
static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* JSON has no NaN or infinity: those become null. */
static json_t *real(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *strn(const char *s, size_t n)
{
	return json_stringn(s, n);
}

/* Set obj[key] = v; a NULL v marks the object as broken. */
static int put(json_t *obj, const char *key, json_t *v, int *ok)
{
	if (!v || json_object_set_new(obj, key, v))
		*ok = 0;
	return *ok;
}

static void push(json_t *arr, json_t *v, int *ok)
{
	if (!v || json_array_append_new(arr, v))
		*ok = 0;
}

static json_t *node_json(const struct lp_node *n, int *ok)
{
	json_t *v;

	if (!n)
		return json_null();
	switch (n->kind) {
	case LP_NODE_SCALAR:
		return json_string(n->scalar ? n->scalar : "");
	case LP_NODE_MAP:
		v = json_object();
		for (size_t i = 0; v && i < n->n; i++)
			put(v, n->keys[i]->scalar, node_json(n->values[i], ok), ok);
		return v;
	case LP_NODE_SEQ:
		v = json_array();
		for (size_t i = 0; v && i < n->n; i++)
			push(v, node_json(n->values[i], ok), ok);
		return v;
	}
	return NULL;
}

static json_t *pipeline_json(const struct lp_pipeline *p, int *ok)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	put(o, "path", str_or_null(p ? p->path : NULL), ok);
	put(o, "name", str_or_null(p ? p->name : NULL), ok);
	put(o, "config", node_json(p ? p->root : NULL, ok), ok);
	return o;
}

static json_t *document_json(const struct lp_doc *doc, int *ok)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	put(o, "path", str_or_null(doc->path), ok);
	put(o, "bytes", json_integer((json_int_t)doc->len), ok);
	put(o, "replaced_invalid", json_integer((json_int_t)doc->src.n_replaced), ok);
	put(o, "format", json_string(lp_doc_format_name(doc->src.format)), ok);
	put(o, "blocks", json_integer((json_int_t)doc->src.model.n_blocks), ok);
	return o;
}

static json_t *stages_json(const struct lp_doc *doc, int *ok)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < doc->n_trace; i++) {
		const struct lp_stage_trace *t = &doc->trace[i];
		json_t *o = json_object();

		if (o) {
			put(o, "kind", str_or_null(t->kind), ok);
			put(o, "stage", json_integer((json_int_t)t->stage), ok);
			put(o, "pass", json_integer(t->pass ? t->pass : 1), ok);
			put(o, "seconds", real(t->seconds), ok);
			put(o, "peak_tracked_bytes", json_integer((json_int_t)t->peak_tracked_bytes), ok);
			put(o, "note", str_or_null(t->note), ok);
			if (t->n_events) {
				json_t *ev = json_array();
				for (size_t k = 0; ev && k < t->n_events; k++)
					push(ev, json_string(t->events[k]), ok);
				put(o, "events", ev, ok);
			}
			if (t->n_events_dropped)
				put(o, "events_dropped",
				    json_integer((json_int_t)t->n_events_dropped), ok);
		}
		push(a, o, ok);
	}
	return a;
}

/* Where text[off, off + len) came from (stages/doc.h), into o. */
static void put_where(json_t *o, const struct lp_doc *doc, size_t off, size_t len, int *ok)
{
	struct lp_doc_where w;

	lp_doc_where(doc, off, len, &w);
	put(o, "kind", json_string(lp_block_kind_name(w.kind)), ok);
	put(o, "section", json_string(w.section), ok);
	put(o, "page", w.page ? json_integer((json_int_t)w.page) : json_null(), ok);
	put(o, "source_offset", json_integer((json_int_t)w.src_off), ok);
	put(o, "source_length", json_integer((json_int_t)w.src_len), ok);
}

static json_t *chunk_json(const struct lp_doc *doc, const struct lp_chunk *c, size_t id,
			  int *ok)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	put(o, "id", json_integer((json_int_t)id), ok);
	put(o, "offset", json_integer((json_int_t)c->off), ok);
	put(o, "length", json_integer((json_int_t)c->len), ok);
	put(o, "score", real(c->score), ok);
	put_where(o, doc, c->off, c->len, ok);
	return o;
}

/* The answer's quote, mapped back to the original: null without one. */
static json_t *quote_json(const struct lp_doc *doc, int *ok)
{
	json_t *o;

	if (!doc->answer || !doc->quote_len || doc->quote_off + doc->quote_len > doc->len)
		return json_null();
	if (!(o = json_object()))
		return NULL;
	put(o, "text", strn(doc->text + doc->quote_off, doc->quote_len), ok);
	put(o, "offset", json_integer((json_int_t)doc->quote_off), ok);
	put(o, "length", json_integer((json_int_t)doc->quote_len), ok);
	put_where(o, doc, doc->quote_off, doc->quote_len, ok);
	return o;
}

static json_t *chunks_json(const struct lp_doc *doc, int *ok)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < doc->n_chunks; i++) {
		json_t *o = chunk_json(doc, &doc->chunks[i], i, ok);
		if (o)
			put(o, "selected", json_boolean(doc->chunks[i].selected), ok);
		push(a, o, ok);
	}
	return a;
}

/* Only a retrieve stage marks chunks as selected; without one, []. */
static json_t *selected_json(const struct lp_doc *doc, int *ok)
{
	json_t *a = json_array();
	int any = 0;

	for (size_t i = 0; i < doc->n_chunks; i++)
		any |= doc->chunks[i].selected != 0;
	for (size_t i = 0; a && any && doc->selection && i < doc->n_selection; i++) {
		size_t id = doc->selection[i];
		const struct lp_chunk *c;
		json_t *o;

		if (id >= doc->n_chunks) {
			*ok = 0;
			break;
		}
		c = &doc->chunks[id];
		o = chunk_json(doc, c, id, ok);
		if (o)
			put(o, "text", strn(doc->text + c->off, c->len), ok);
		push(a, o, ok);
	}
	return a;
}

static json_t *levels_json(const struct lp_doc *doc, int *ok)
{
	json_t *a = json_array();

	for (size_t l = 0; a && l < doc->n_levels; l++) {
		const struct lp_summary_level *lv = &doc->levels[l];
		json_t *o = json_object(), *sums = json_array();

		for (size_t i = 0; sums && i < lv->n; i++) {
			json_t *s = json_object();
			if (s) {
				put(s, "text", str_or_null(lv->texts[i]), ok);
				put(s, "first_input", json_integer((json_int_t)lv->first_input[i]), ok);
				put(s, "n_inputs", json_integer((json_int_t)lv->n_inputs[i]), ok);
			}
			push(sums, s, ok);
		}
		if (o) {
			put(o, "level", json_integer((json_int_t)l), ok);
			if (lv->tokens_in) {
				put(o, "tokens_in", json_integer((json_int_t)lv->tokens_in), ok);
				put(o, "tokens_out", json_integer((json_int_t)lv->tokens_out), ok);
			}
			put(o, "summaries", sums, ok);
		} else {
			json_decref(sums);
		}
		push(a, o, ok);
	}
	return a;
}

/* The grounding check, or null when grounded: true was not asked. */
static json_t *grounding_json(const struct lp_verify_result *v, int *ok)
{
	json_t *o, *list;

	if (!v->grounded)
		return json_null();
	o = json_object();
	list = json_array();
	for (size_t i = 0; list && i < v->n_ungrounded; i++) {
		const struct lp_ungrounded *u = &v->ungrounded[i];
		json_t *e = json_object(), *toks = json_array();
		for (size_t k = 0; toks && k < u->n_tokens; k++) {
			json_t *t = json_object();
			if (t) {
				put(t, "text", str_or_null(u->tokens[k]), ok);
				put(t, "kind", str_or_null(u->kinds[k]), ok);
			}
			push(toks, t, ok);
		}
		if (e) {
			put(e, "sentence", str_or_null(u->sentence), ok);
			put(e, "tokens", toks, ok);
			put(e, "removed", json_boolean(u->removed), ok);
		} else {
			json_decref(toks);
		}
		push(list, e, ok);
	}
	if (!o) {
		json_decref(list);
		return NULL;
	}
	put(o, "tokens", json_integer((json_int_t)v->ground_tokens), ok);
	put(o, "found", json_integer((json_int_t)v->ground_found), ok);
	put(o, "rate", real(v->grounding_rate), ok);
	put(o, "removed", json_integer((json_int_t)v->n_removed), ok);
	put(o, "ungrounded", list, ok);
	return o;
}

static json_t *verification_json(const struct lp_verify_result *v, int *ok)
{
	json_t *o, *survived, *missing, *phrases;

	if (!v->done)
		return json_null();
	o = json_object();
	survived = json_array();
	missing = json_array();
	phrases = json_array();
	for (size_t i = 0; survived && missing && phrases && i < v->n_phrases; i++) {
		const struct lp_keyphrase *k = &v->phrases[i];
		json_t *ph = json_object();

		push(k->survived ? survived : missing, str_or_null(k->text), ok);
		if (ph) {
			put(ph, "text", str_or_null(k->text), ok);
			put(ph, "origin", str_or_null(k->origin), ok);
			put(ph, "survived", json_boolean(k->survived), ok);
		}
		push(phrases, ph, ok);
	}
	if (!o) {
		json_decref(survived);
		json_decref(missing);
		json_decref(phrases);
		return NULL;
	}
	put(o, "passed", json_boolean(v->passed), ok);
	put(o, "survival_rate", real(v->survival_rate), ok);
	put(o, "survived", survived, ok);
	put(o, "missing", missing, ok);
	put(o, "phrases", phrases, ok);
	put(o, "words", json_integer((json_int_t)v->words), ok);
	put(o, "min_words", json_integer((json_int_t)v->min_words), ok);
	put(o, "auto_survival_rate", real(v->auto_survival_rate), ok);
	put(o, "min_survival", real(v->min_survival), ok);
	put(o, "retries", json_integer(v->retries), ok);
	if (v->n_levels) {
		json_t *lv = json_array();
		for (size_t l = 0; lv && l < v->n_levels; l++) {
			json_t *e = json_object();
			if (e) {
				put(e, "level", json_integer((json_int_t)l), ok);
				put(e, "phrases", json_integer((json_int_t)v->levels[l].phrases), ok);
				put(e, "survived", json_integer((json_int_t)v->levels[l].survived), ok);
			}
			push(lv, e, ok);
		}
		put(o, "levels", lv, ok);
	}
	put(o, "grounding", grounding_json(v, ok), ok);
	return o;
}

static json_t *memory_json(const struct lp_run_stats *st, int *ok)
{
	json_t *o = json_object(), *tags = json_object();

	for (int t = 0; tags && t < LP_MEM_NTAGS; t++) {
		json_t *e = json_object();
		size_t peak = st ? st->peak_by_tag[t] : lp_mem_peak(t);
		size_t now = st ? st->current_by_tag[t] : lp_mem_current(t);

		/* device tags only on runs that used a device */
		if (lp_mem_tag_is_gpu(t) && !peak && !now) {
			json_decref(e);
			continue;
		}
		if (e) {
			put(e, "current", json_integer((json_int_t)now), ok);
			put(e, "peak", json_integer((json_int_t)peak), ok);
		}
		put(tags, lp_mem_tag_name(t), e, ok);
	}
	if (!o) {
		json_decref(tags);
		return NULL;
	}
	put(o, "peak_tracked_bytes",
	    json_integer((json_int_t)(st ? st->peak_tracked_bytes : lp_mem_peak_total())), ok);
	put(o, "peak_rss_bytes", json_integer((json_int_t)lp_mem_peak_rss()), ok);
	put(o, "budget_bytes", json_integer((json_int_t)(st ? st->budget_bytes : lp_mem_budget())), ok);
	put(o, "by_tag", tags, ok);
	return o;
}

/* The chunk ids the answer cites: [] without an answer. */
/* The extract stage's items, or null without one. */
static json_t *items_json(const struct lp_doc *doc, int *ok)
{
	json_t *a;

	if (!doc->items)
		return json_null();
	if (!(a = json_array()))
		return NULL;
	for (size_t i = 0; i < doc->n_items; i++) {
		const struct lp_doc_item *it = &doc->items[i];
		json_t *o = json_object();

		if (o) {
			put(o, "text", strn(doc->text + it->off, it->len), ok);
			put(o, "count", json_integer((json_int_t)it->count), ok);
			put(o, "chunk", json_integer((json_int_t)it->chunk), ok);
			put(o, "offset", json_integer((json_int_t)it->off), ok);
			put(o, "length", json_integer((json_int_t)it->len), ok);
			put_where(o, doc, it->off, it->len, ok);
			/* where's "kind" is the block's: under "block", the item's kept */
			put(o, "block", json_incref(json_object_get(o, "kind")), ok);
			put(o, "kind", json_string(lp_doc_item_kind_name(it->kind)),
			    ok);
		}
		push(a, o, ok);
	}
	return a;
}

static json_t *cited_json(const struct lp_doc *doc, int *ok)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < doc->n_cited; i++)
		push(a, json_integer((json_int_t)doc->cited[i]), ok);
	return a;
}

/* The whole report, keys in the documented order. */
static json_t *report_object(struct lp_doc *doc, const struct lp_run_stats *st,
			     const char *result, int *ok)
{
	enum lp_status status = st ? st->status : LP_OK;
	json_t *o = json_object();

	if (!o)
		return NULL;
	put(o, "lpipe_version", json_string(PACKAGE_VERSION), ok);
	put(o, "pipeline", pipeline_json(doc->pipeline, ok), ok);
	put(o, "document", document_json(doc, ok), ok);
	put(o, "stages", stages_json(doc, ok), ok);
	put(o, "chunks", chunks_json(doc, ok), ok);
	put(o, "selected", selected_json(doc, ok), ok);
	put(o, "summary_levels", levels_json(doc, ok), ok);
	put(o, "summary", str_or_null(doc->summary), ok);
	put(o, "answer", str_or_null(doc->answer), ok);
	put(o, "cited", cited_json(doc, ok), ok);
	put(o, "quote", quote_json(doc, ok), ok);
	put(o, "answer_check", str_or_null(doc->answer_check), ok);
	put(o, "abstained", doc->answer_check ? json_boolean(!strcmp(doc->answer_check, "abstain"))
					      : json_null(), ok);
	put(o, "items", items_json(doc, ok), ok);
	put(o, "result", json_string(result), ok);
	put(o, "verification", verification_json(&doc->verify, ok), ok);
	put(o, "memory", memory_json(st, ok), ok);
	put(o, "status", json_string(lp_status_str(status)), ok);
	put(o, "exit_code", json_integer(lp_status_exit_code(status)), ok);
	return o;
}

enum lp_status lp_report_json(struct lp_doc *doc, const struct lp_run_stats *stats,
			      FILE *out, struct lp_diag *d)
{
	const char *result = lp_doc_result(doc);
	json_t *root;
	int ok = 1, rc;

	if (!result)
		return lp_report_result_nomem(d);
	root = report_object(doc, stats, result, &ok);
	if (!root || !ok) {
		json_decref(root);
		return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0,
				   "unable to build the JSON report (out of memory or invalid UTF-8)");
	}
	rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (rc || fputc('\n', out) == EOF)
		return lp_diag_set(d, LP_E_IO, NULL, 0, 0, "unable to write the JSON report: %s",
				   strerror(errno ? errno : EIO));
	return LP_OK;
}
