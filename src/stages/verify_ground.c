#include "stages/verify_ground.h"

#include <string.h>

#include "core/buf.h"
#include "core/mem.h"
#include "text/document.h"
#include "text/ground.h"
#include "text/sentence.h"

#define PER_SENTENCE 64 /* tokens checked per sentence, at most */

/* One checked token of the output. */
struct occ {
	size_t sentence, id, off, len;
	enum lp_ground_kind kind;
};

void lp_verify_source_done(void *ctx, size_t off, size_t len)
{
	struct lp_verify_source_pass *sp = ctx;

	lp_document_done_upto(&sp->doc->src, &sp->from, off, len);
}

/* The output's sentences and their checked tokens into *occ (tracked). */
static enum lp_status collect(const char *out, size_t len, struct lp_ground *set,
			      struct occ **occ, size_t *n_occ, size_t *n_sent,
			      struct lp_diag *d)
{
	struct lp_ground_token tok[PER_SENTENCE];
	struct lp_span sp;
	size_t pos = 0, cap = 0, n;

	*occ = NULL;
	*n_occ = *n_sent = 0;
	while (lp_sentence_next(out, len, &pos, &sp)) {
		n = lp_ground_tokens(out + sp.off, sp.len, tok, PER_SENTENCE);
		if (n > PER_SENTENCE)
			n = PER_SENTENCE;
		for (size_t i = 0; i < n; i++) {
			struct occ *o;
			if (*n_occ == cap) {
				size_t c = cap ? 2 * cap : 64;
				if (!(o = lp_mem_realloc(LP_MEM_SCRATCH, *occ, c * sizeof(*o), d)))
					return LP_E_NOMEM;
				*occ = o;
				cap = c;
			}
			o = &(*occ)[(*n_occ)++];
			o->sentence = *n_sent;
			o->off = sp.off + tok[i].off;
			o->len = tok[i].len;
			o->kind = tok[i].kind;
			if (lp_ground_add(set, out + o->off, o->len, o->kind, &o->id, d))
				return LP_E_NOMEM;
		}
		(*n_sent)++;
	}
	return LP_OK;
}

/* Look the set up in the source and the question. */
static enum lp_status scan_sources(struct lp_doc *doc, struct lp_ground *set, struct lp_diag *d)
{
	struct lp_verify_source_pass sp = { doc, 0 };
	enum lp_status st;

	if (doc->src.text)
		st = lp_ground_scan(set, doc->src.text, doc->src.len, lp_verify_source_done, &sp, d);
	else
		st = lp_ground_scan(set, doc->text ? doc->text : "", doc->text ? doc->len : 0,
				    NULL, NULL, d);
	if (!st && doc->question)
		st = lp_ground_scan(set, doc->question, strlen(doc->question), NULL, NULL, d);
	return st;
}

/* doc->verify.ungrounded from the sentences with a token not found. */
static enum lp_status report(struct lp_doc *doc, const char *out, const struct lp_ground *set,
			     const struct occ *occ, size_t n_occ, struct lp_verify_ground *g,
			     struct lp_diag *d)
{
	struct lp_verify_result *r = &doc->verify;
	struct lp_arena *a = &doc->arena;
	size_t pos = 0, s = 0, k = 0, n_bad = 0;
	struct lp_span sp;

	for (size_t i = 0; i < n_occ; i++) {
		if (!set->found[occ[i].id] && !g->bad[occ[i].sentence]) {
			g->bad[occ[i].sentence] = 1;
			n_bad++;
		}
	}
	if (!n_bad)
		return LP_OK;
	if (!(r->ungrounded = lp_arena_alloc(a, n_bad * sizeof(*r->ungrounded))))
		goto nomem;
	memset(r->ungrounded, 0, n_bad * sizeof(*r->ungrounded));
	while (lp_sentence_next(out, strlen(out), &pos, &sp)) {
		struct lp_ungrounded *u = &r->ungrounded[r->n_ungrounded];
		size_t first = k, m = 0;
		for (; k < n_occ && occ[k].sentence == s; k++)
			m += !set->found[occ[k].id];
		if (g->bad[s++]) {
			u->sentence = lp_arena_strndup(a, out + sp.off, sp.len);
			u->tokens = lp_arena_alloc(a, m * sizeof(*u->tokens));
			u->kinds = lp_arena_alloc(a, m * sizeof(*u->kinds));
			if (!u->sentence || !u->tokens || !u->kinds)
				goto nomem;
			for (size_t i = first; i < k; i++) {
				size_t j = 0;
				if (set->found[occ[i].id])
					continue;
				while (j < u->n_tokens && !(strlen(u->tokens[j]) == occ[i].len &&
							     !memcmp(u->tokens[j], out + occ[i].off,
								     occ[i].len)))
					j++;
				if (j < u->n_tokens)
					continue; /* the same token twice in one sentence */
				if (!(u->tokens[u->n_tokens] = lp_arena_strndup(a, out + occ[i].off,
										occ[i].len)))
					goto nomem;
				u->kinds[u->n_tokens++] = lp_ground_kind_name(occ[i].kind);
			}
			r->n_ungrounded++;
		}
	}
	return LP_OK;
nomem:
	return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory reporting ungrounded sentences");
}

enum lp_status lp_verify_ground_check(struct lp_doc *doc, struct lp_verify_ground *g,
				      struct lp_diag *d)
{
	struct lp_verify_result *r = &doc->verify;
	const char *out = lp_doc_result(doc);
	struct lp_ground set;
	struct occ *occ = NULL;
	size_t n_occ = 0;
	enum lp_status st;

	memset(g, 0, sizeof(*g));
	r->grounded = 1;
	r->ground_tokens = r->ground_found = 0;
	r->grounding_rate = 1.0;
	r->ungrounded = NULL;
	r->n_ungrounded = r->n_removed = 0;
	if (!out)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for verification");
	lp_ground_init(&set);
	st = collect(out, strlen(out), &set, &occ, &n_occ, &g->n_sentences, d);
	if (!st && g->n_sentences && !(g->bad = lp_mem_calloc(LP_MEM_SCRATCH, g->n_sentences, 1, d)))
		st = LP_E_NOMEM;
	if (!st)
		st = scan_sources(doc, &set, d);
	if (!st) {
		r->ground_tokens = set.n;
		for (size_t i = 0; i < set.n; i++)
			r->ground_found += set.found[i];
		if (set.n)
			r->grounding_rate = (double)r->ground_found / (double)set.n;
		st = report(doc, out, &set, occ, n_occ, g, d);
	}
	lp_mem_free(occ);
	lp_ground_release(&set);
	return st;
}

/* The strongest separator in text[0..n): 2 a paragraph break, 1 a line
 * break, 0 a space. */
static int separator(const char *text, size_t n)
{
	size_t nl = 0;

	for (size_t i = 0; i < n; i++)
		nl += text[i] == '\n';
	return nl >= 2 ? 2 : (int)nl;
}

enum lp_status lp_verify_ground_remove(struct lp_doc *doc, const struct lp_verify_ground *g,
				       struct lp_diag *d)
{
	static const char *const seps[] = { " ", "\n", "\n\n" };
	struct lp_verify_result *r = &doc->verify;
	const char *out = doc->answer ? doc->answer : doc->summary, *res;
	size_t pos = 0, s = 0, end = 0, kept = 0, len, n_bad = 0;
	struct lp_span sp;
	struct lp_buf b;
	int sep = 0;

	for (size_t i = 0; i < g->n_sentences; i++)
		n_bad += g->bad[i];
	if (!out || !n_bad || n_bad == g->n_sentences)
		return LP_OK;
	len = strlen(out);
	lp_buf_init(&b);
	while (lp_sentence_next(out, len, &pos, &sp)) {
		int here = separator(out + end, sp.off - end);
		if (here > sep)
			sep = here;
		if (s < g->n_sentences && !g->bad[s]) {
			if ((kept && lp_buf_adds(&b, seps[sep])) || lp_buf_add(&b, out + sp.off, sp.len))
				goto nomem;
			kept++;
			sep = 0;
		}
		end = sp.off + sp.len;
		s++;
	}
	if (!(res = lp_arena_strndup(&doc->arena, b.data, b.len)))
		goto nomem;
	lp_buf_release(&b);
	if (doc->answer)
		doc->answer = res;
	else
		doc->summary = res;
	for (size_t i = 0; i < r->n_ungrounded; i++)
		r->ungrounded[i].removed = 1;
	r->n_removed = r->n_ungrounded;
	return LP_OK;
nomem:
	lp_buf_release(&b);
	return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory removing ungrounded sentences");
}

void lp_verify_ground_release(struct lp_verify_ground *g)
{
	lp_mem_free(g->bad);
	memset(g, 0, sizeof(*g));
}
