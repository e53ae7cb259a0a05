#include "stages/doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/mem.h"
#include "engine/engine.h"
#include "model/session.h"

void lp_doc_init(struct lp_doc *doc, const struct lp_pipeline *p)
{
	lp_doc_init_engine(doc, p, NULL);
}

void lp_doc_init_engine(struct lp_doc *doc, const struct lp_pipeline *p,
			struct lp_engine *engine)
{
	memset(doc, 0, sizeof(*doc));
	lp_arena_init(&doc->arena);
	doc->pipeline = p;
	doc->engine = engine;
}

void lp_doc_release_model(struct lp_doc *doc)
{
	if (doc->engine)
		lp_engine_session_release(doc->engine, doc->session);
	else
		lp_session_free(doc->session);
	doc->session = NULL;
}

void lp_doc_release(struct lp_doc *doc)
{
	lp_doc_release_model(doc);
	lp_document_release(&doc->src);
	lp_arena_release(&doc->arena);
	memset(doc, 0, sizeof(*doc));
}

const size_t *lp_doc_working_set(struct lp_doc *doc, size_t *n)
{
	if (doc->selection) {
		*n = doc->n_selection;
		return doc->selection;
	}
	/* No retrieve stage: the identity selection over every chunk. */
	doc->selection = lp_arena_alloc(&doc->arena, (doc->n_chunks + 1) * sizeof(size_t));
	if (!doc->selection) {
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < doc->n_chunks; i++)
		doc->selection[i] = i;
	doc->n_selection = doc->n_chunks;
	*n = doc->n_selection;
	return doc->selection;
}

size_t *lp_doc_best_first(struct lp_doc *doc, size_t *n)
{
	const size_t *set = lp_doc_working_set(doc, n);
	size_t *out;

	if (!set)
		return NULL;
	out = lp_arena_alloc(&doc->arena, (*n + 1) * sizeof(*out));
	if (!out)
		return NULL;
	/* insertion sort: stable, and a working set is a few dozen chunks */
	for (size_t i = 0; i < *n; i++) {
		size_t j = i;
		while (j && doc->chunks[out[j - 1]].score < doc->chunks[set[i]].score) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = set[i];
	}
	return out;
}

const char *lp_doc_result(struct lp_doc *doc)
{
	struct lp_buf b;
	const size_t *set;
	size_t n;
	char *out;

	if (doc->answer)
		return doc->answer;
	if (doc->summary)
		return doc->summary;
	set = lp_doc_working_set(doc, &n);
	if (!set && doc->n_chunks)
		return NULL;
	lp_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		const struct lp_chunk *c = &doc->chunks[set[i]];
		if ((i && lp_buf_adds(&b, "\n\n")) || lp_buf_add(&b, doc->text + c->off, c->len)) {
			lp_buf_release(&b);
			return NULL;
		}
	}
	if (!n && !doc->n_chunks && lp_buf_add(&b, doc->text, doc->len)) {
		lp_buf_release(&b);
		return NULL;
	}
	out = lp_arena_strndup(&doc->arena, b.data, b.len);
	lp_buf_release(&b);
	return out;
}

void lp_doc_note(struct lp_doc *doc, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!doc->trace || !doc->n_trace)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	doc->trace[doc->n_trace - 1].note = lp_arena_strdup(&doc->arena, line);
}

/* Length of an event's kind: the text before its first ':'. */
static size_t event_kind_len(const char *s)
{
	const char *c = strchr(s, ':');

	return c ? (size_t)(c - s) : strlen(s);
}

/* Has the trace entry LP_DOC_EVENTS_PER_KIND events of line's kind? */
static int kind_full(const struct lp_stage_trace *t, const char *line)
{
	size_t kl = event_kind_len(line), same = 0;

	for (size_t k = 0; k < t->n_events && same < LP_DOC_EVENTS_PER_KIND; k++)
		same += event_kind_len(t->events[k]) == kl && !strncmp(t->events[k], line, kl);
	return same >= LP_DOC_EVENTS_PER_KIND;
}

void lp_doc_event(struct lp_doc *doc, const char *fmt, ...)
{
	struct lp_stage_trace *t;
	const char **v;
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!strncmp(line, "shrink", 6))
		lp_info("%s", line); /* the user should know the budget bit */
	else
		lp_debug("%s", line);
	if (!doc->trace || !doc->n_trace)
		return;
	t = &doc->trace[doc->n_trace - 1];
	if (kind_full(t, line)) {
		t->n_events_dropped++;
		return;
	}
	if (t->n_events == t->cap_events) {
		/* doubling: the arrays left behind in the arena sum to less
		 * than the last one */
		size_t cap = t->cap_events ? 2 * t->cap_events : 8;
		v = lp_arena_alloc(&doc->arena, cap * sizeof(*v));
		if (!v)
			return;
		if (t->n_events)
			memcpy(v, t->events, t->n_events * sizeof(*v));
		t->events = v;
		t->cap_events = cap;
	}
	if ((t->events[t->n_events] = lp_arena_strdup(&doc->arena, line)))
		t->n_events++;
}
