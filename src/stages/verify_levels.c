#include "stages/verify_levels.h"

#include <string.h>

#include "core/buf.h"
#include "core/mem.h"
#include "stages/topics.h"
#include "text/keyphrase.h"
#include "text/match.h"

static size_t bytes(const struct lp_span *spans, size_t n)
{
	size_t b = 0;

	for (size_t i = 0; i < n; i++)
		b += spans[i].len;
	return b;
}

/* The topics of summary j of level l's inputs, into *out (arena). */
static enum lp_status inputs_phrases(struct lp_doc *doc, size_t l, size_t j, size_t n,
				     struct lp_arena *a, const char ***out, size_t *n_out,
				     struct lp_diag *d)
{
	const struct lp_summary_level *lv = &doc->levels[l];
	size_t first = lv->first_input[j], count = lv->n_inputs[j];
	enum lp_status st;

	if (l == 0) { /* chunks of the working set, in place */
		size_t n_set;
		const size_t *set = lp_doc_working_set(doc, &n_set);
		struct lp_span *spans;
		size_t m = 0;
		if (!set)
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the working set");
		if (!(spans = lp_mem_alloc(LP_MEM_SCRATCH, (count + 1) * sizeof(*spans), d)))
			return LP_E_NOMEM;
		for (size_t i = first; i < first + count && i < n_set; i++)
			spans[m++] = (struct lp_span){ doc->chunks[set[i]].off, doc->chunks[set[i]].len };
		if (!n_set) /* no chunks: the tree summarised the whole text */
			spans[m++] = (struct lp_span){ 0, doc->len };
		st = lp_keyphrase_extract_spans(doc->text ? doc->text : "", spans, m,
						lp_topic_parts(bytes(spans, m)), n, a, out, n_out,
						NULL, NULL, d);
		lp_mem_free(spans);
		lp_document_done(&doc->src, 0, doc->len);
	} else { /* the level below's summaries, one piece each */
		const struct lp_summary_level *below = &doc->levels[l - 1];
		struct lp_span *spans = lp_mem_alloc(LP_MEM_SCRATCH, (count + 1) * sizeof(*spans), d);
		struct lp_buf b;
		size_t m = 0;
		if (!spans)
			return LP_E_NOMEM;
		lp_buf_init(&b);
		st = LP_OK;
		for (size_t i = first; i < first + count && i < below->n && !st; i++) {
			const char *t = below->texts[i] ? below->texts[i] : "";
			spans[m] = (struct lp_span){ b.len, strlen(t) };
			if (lp_buf_add(&b, t, spans[m].len))
				st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory checking levels");
			m++;
		}
		if (!st)
			st = lp_keyphrase_extract_spans(b.data ? b.data : "", spans, m,
							lp_topic_parts(b.len), n, a, out, n_out,
							NULL, NULL, d);
		lp_buf_release(&b);
		lp_mem_free(spans);
	}
	return st;
}

enum lp_status lp_verify_levels(struct lp_doc *doc, size_t n, struct lp_diag *d)
{
	struct lp_verify_result *r = &doc->verify;
	enum lp_status st = LP_OK;

	r->levels = NULL;
	r->n_levels = 0;
	if (!n || !doc->n_levels)
		return LP_OK;
	r->levels = lp_arena_alloc(&doc->arena, doc->n_levels * sizeof(*r->levels));
	if (!r->levels)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory checking levels");
	for (size_t l = 0; l < doc->n_levels && !st; l++) {
		struct lp_verify_level *v = &r->levels[l];
		v->phrases = v->survived = 0;
		for (size_t j = 0; j < doc->levels[l].n && !st; j++) {
			struct lp_arena a;
			const char **kp;
			size_t n_kp, kept;
			if (!doc->levels[l].texts[j])
				continue;
			lp_arena_init(&a);
			st = inputs_phrases(doc, l, j, n, &a, &kp, &n_kp, d);
			if (!st && (st = lp_match_held(doc->levels[l].texts[j],
						      strlen(doc->levels[l].texts[j]), kp, n_kp,
						      NULL, &kept, d)))
				st = lp_diag_set(d, st, NULL, 0, 0, "out of memory checking levels");
			if (!st) {
				v->phrases += n_kp;
				v->survived += kept;
			}
			lp_arena_release(&a);
		}
		r->n_levels = l + 1;
	}
	return st;
}
