/*
 * summarize_abstract.c - extract, then abstract: with `abstract: true` (a
 * tree with map: compress or points) the model rewrites the selected
 * sentences into a summary, and only what the selection backs is kept.
 *
 * The selection (summarize_points.c, one level below) is the text of one
 * root step ("Write a summary of the text above in N sentences."). Each
 * sentence of the reply is kept when it
 *  - reads as prose (lp_points_is_prose) and is no meta-talk
 *    (lp_points_is_meta),
 *  - names only facts the selection holds (numbers, options, paths,
 *    identifiers, quoted strings: lp_summarize_grounded_in),
 *  - is backed by one selected sentence, alone or with the next, with its
 *    negations (lp_points_backed),
 *  - and says something new (lp_points_similar to no sentence kept).
 * Every sentence removed gets an event that names it and why. When none
 * is kept, or what is kept has under half the selection's words, the
 * selection itself is the summary, and an event says so: a reader gets
 * the document's own sentences rather than a rewrite that lost most of
 * them.
 */
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/utf8.h"
#include "stages/model_stage.h"
#include "stages/summarize_run.h"
#include "text/match.h"
#include "text/points.h"
#include "text/sentence.h"

/* The rewrite is the summary only when what is kept of it has at least
 * 1/ABSTRACT_MIN_SHARE of the selection's words: one that lost more than
 * that says less than the sentences it was made from. */
#define ABSTRACT_MIN_SHARE 2

/* Bytes of a removed sentence s[0..len) an event shows: its valid UTF-8
 * prefix, at most SHOWN_BYTES, cut between characters. */
#define SHOWN_BYTES 160
static size_t shown(const char *s, size_t len)
{
	size_t n = lp_utf8_find_invalid((const unsigned char *)s, len);

	if (n > SHOWN_BYTES) {
		n = SHOWN_BYTES;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	return n;
}

/* Why the sentence s[0..len) of the reply is removed, or NULL to keep it
 * (kept[0..klen) holds the sentences kept so far). */
static const char *removal(const char *s, size_t len, const char *sel, size_t sel_len,
			   const char *kept, size_t klen)
{
	size_t pos = 0;
	struct lp_span k;

	if (lp_utf8_find_invalid((const unsigned char *)s, len) < len)
		return "not valid UTF-8";
	if (lp_points_is_meta(s, len))
		return "meta-talk";
	if (!lp_points_is_prose(s, len))
		return "not a sentence of prose";
	if (!lp_summarize_grounded_in(s, len, sel, sel_len))
		return "names a fact the selection does not hold";
	if (!lp_points_backed(s, len, sel, sel_len))
		return "not backed by a selected sentence";
	while (lp_sentence_next(kept, klen, &pos, &k))
		if (lp_points_similar(s, len, kept + k.off, k.len))
			return "repeats a sentence kept";
	return NULL;
}

enum lp_status lp_summarize_abstract(struct lp_summarize_run *r, const char *sel,
				     size_t sel_len, const char **out, struct lp_diag *d)
{
	struct lp_summarize_step s;
	struct lp_buf kept;
	const char *gen;
	struct lp_span sp;
	size_t pos = 0, n = 0, removed = 0;
	enum lp_status st;

	*out = NULL;
	lp_summarize_step_tree(r, &s, 1, 1);
	if ((st = lp_summarize_text(r, &s, "abstract", sel, sel_len, r->final_budget, &gen, d)))
		return st;
	lp_buf_init(&kept);
	while (lp_sentence_next(gen, strlen(gen), &pos, &sp)) {
		const char *why = removal(gen + sp.off, sp.len, sel, sel_len,
					  kept.data ? kept.data : "", kept.len);
		n++;
		if (why) {
			removed++;
			lp_doc_event(r->doc, "abstract: removed \"%.*s%s\": %s",
				     (int)shown(gen + sp.off, sp.len), gen + sp.off,
				     shown(gen + sp.off, sp.len) < sp.len ? "..." : "", why);
			continue;
		}
		if ((kept.len && lp_buf_addc(&kept, ' ')) ||
		    lp_buf_add(&kept, gen + sp.off, sp.len)) {
			lp_buf_release(&kept);
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
					   "out of memory for the summary");
		}
	}
	if (!kept.len) {
		lp_doc_event(r->doc, "abstract: none of the model's %zu sentences is backed by "
				     "the selection; the selected sentences are the summary", n);
		lp_buf_release(&kept);
		*out = sel;
		return LP_OK;
	}
	if (lp_match_count_words(kept.data, kept.len) * ABSTRACT_MIN_SHARE <
	    lp_match_count_words(sel, sel_len)) {
		lp_doc_event(r->doc, "abstract: the %zu of the model's %zu sentences backed by the "
				     "selection keep under 1/%d of its words; the selected "
				     "sentences are the summary", n - removed, n, ABSTRACT_MIN_SHARE);
		lp_buf_release(&kept);
		*out = sel;
		return LP_OK;
	}
	lp_doc_event(r->doc, "abstract: %zu of the model's %zu sentences kept, %zu removed",
		     n - removed, n, removed);
	*out = lp_arena_strndup(&r->doc->arena, kept.data, kept.len);
	lp_buf_release(&kept);
	if (!*out)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the summary");
	return LP_OK;
}
