/*
 * summarize_tree.c - the summarize stage's `tree` strategy: a map-reduce
 * of model summaries.
 *
 * Level 0 summarises each chunk of the working set. Level k+1 groups
 * consecutive texts of level k, joined as a list: groups aim at the same
 * size f' <= fanout on every level (level_fanout), are balanced in size,
 * and take fewer texts while their tokens joined (with separators) exceed
 * B, but never fewer than 2; a pair that still does not fit has each text
 * cut to half of B. A last text left alone is carried up unchanged. The
 * root, the step that writes the final summary, is the one group of a level
 * of at most fanout texts that fits its own budget (B with final_tokens
 * instead of max_tokens) or of two texts; it may write final_tokens tokens.
 * A level that is not the root is never made one group.
 *
 * Termination: while a level holds n >= 2 texts, every group but a last one
 * of one text has at least 2 members (f' >= 2, and a group is cut down to 2
 * at most), so the next level holds at most ceil(n / 2) <= n - 1 texts. The
 * count strictly falls until it is 1, so a tree over n0 chunks has at most
 * 1 + ceil(log2 n0) levels whatever the summaries' lengths, and every
 * step's prompt fits because inputs are cut to its budget first. (Tested
 * over many sizes in check_chain.c.)
 *
 * What stays for the whole run is each summary (at most max_tokens tokens)
 * and three words of bookkeeping per summary in doc->levels.
 */
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/progress.h"
#include "model/session.h"
#include "stages/summarize_run.h"

#define SEP_TOKENS 3 /* "\n- " before a list item, at most */

static enum lp_status tree_level0(struct lp_summarize_run *r, const size_t *set, size_t n,
				  struct lp_summary_level *l, struct lp_diag *d)
{
	size_t n0 = n ? n : 1;
	int root = n0 == 1; /* a single chunk's summary is the root */
	struct lp_summarize_step s;
	struct lp_progress pr;
	enum lp_status st = LP_OK;
	char label[48];

	lp_summarize_step_tree(r, &s, root, 0);
	lp_progress_begin(&pr, "level 0", "chunks", n0);
	for (size_t i = 0; i < n0 && !st; i++) {
		size_t len;
		const char *t;
		st = lp_summarize_hold_chunk(r, set, n, i, d);
		t = st ? NULL : lp_summarize_chunk_text(r, set, n, i, 1, &len, d);
		snprintf(label, sizeof(label), "chunk %zu", n ? set[i] : 0);
		l->first_input[i] = i;
		l->n_inputs[i] = 1;
		if (!st)
			st = t ? lp_summarize_text(r, &s, label, t, len,
						   root ? r->final_budget : r->budget,
						   &l->texts[i], d) : d->status;
		l->n = i + 1;
		lp_summarize_release_chunk(r, set, n, i);
		lp_progress_update(&pr, i + 1);
	}
	lp_progress_end(&pr);
	return st;
}

/* Tokens of below->texts[first..first+g) joined as a list (a bullet and
 * its line end take at most SEP_TOKENS). */
static size_t joined_tokens(const size_t *tokens, size_t first, size_t g)
{
	size_t sum = 0;

	for (size_t i = first; i < first + g; i++)
		sum += tokens[i] + SEP_TOKENS;
	return sum;
}

/* Does the whole level go into one last step, the root? Always for a pair
 * (it cannot be split further), else when it fits fanout and the root's
 * budget. */
static int is_root_level(struct lp_summarize_run *r, const struct lp_summary_level *below,
			 const size_t *tokens)
{
	return below->n <= r->o->fanout &&
	       (below->n == 2 || joined_tokens(tokens, 0, below->n) <= r->final_budget);
}

/*
 * The group size a level aims at: the smallest f' whose h-th power reaches
 * n, where h = ceil(log_fanout n) is the number of levels still needed. The
 * levels then share the reduction evenly (72 texts at fanout 8 go
 * 72 -> 15 -> 4 -> 1, not 72 -> 9 -> 2 -> 1): a small model merges four or
 * five texts well, while a merge of eight drops most of them and a last
 * merge of two keeps little of the second. f' <= fanout since n <=
 * fanout^h; f' >= 2.
 */
static size_t level_fanout(size_t n, size_t fanout)
{
	size_t h = 0, f = 2;

	for (size_t p = 1; p < n; p = p > n / fanout ? n : p * fanout)
		h++;
	for (;; f++) {
		size_t p = 1;
		for (size_t i = 0; i < h && p < n; i++)
			p *= f;
		if (p >= n || f >= fanout)
			return f;
	}
}

/* How many texts from `first` go in one group (see the file comment):
 * groups are balanced in size at about `f` (level_fanout), then made
 * smaller while over the budget. A level that is not the root never
 * becomes one group, so that the root is always written with
 * final_tokens. */
static size_t group_size(struct lp_summarize_run *r, const struct lp_summary_level *below,
			 const size_t *tokens, size_t first, size_t f)
{
	size_t left = below->n - first, groups = (left + f - 1) / f;
	size_t g = (left + groups - 1) / groups;

	if (!first && g == below->n && g > 2)
		g--;
	while (g > 2 && joined_tokens(tokens, first, g) > r->budget)
		g--;
	return g;
}

/*
 * Join below->texts[first..first+g), each cut to `each` tokens (0: whole),
 * as a list: one "- " item per text, its line ends made spaces. A small
 * model reading a list summarises every item; reading paragraphs it tends
 * to keep the first one and drop the rest.
 */
static enum lp_status join_group(struct lp_summarize_run *r, const struct lp_summary_level *below,
				 size_t first, size_t g, size_t each, struct lp_buf *b,
				 struct lp_diag *d)
{
	for (size_t i = first; i < first + g; i++) {
		const char *t = below->texts[i];
		size_t keep = strlen(t), at = b->len;
		if (each && lp_session_prefix_bytes(r->s, t, keep, each, &keep, d))
			return LP_E_NOMEM;
		if ((i > first && lp_buf_addc(b, '\n')) || lp_buf_adds(b, "- ") ||
		    lp_buf_add(b, t, keep))
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory joining summaries");
		for (size_t k = at; k < b->len; k++)
			if (b->data[k] == '\n' && k > at)
				b->data[k] = ' ';
	}
	return LP_OK;
}

static enum lp_status tree_level(struct lp_summarize_run *r, size_t k, const struct lp_summary_level *below,
				 struct lp_summary_level *l, struct lp_diag *d)
{
	size_t *tokens = lp_mem_alloc(LP_MEM_SCRATCH, (below->n + 1) * sizeof(size_t), d);
	struct lp_summarize_step s;
	struct lp_buf b;
	enum lp_status st = LP_OK;
	struct lp_progress pr;
	size_t budget, f;
	int root;
	char label[64], what[32];

	if (!tokens)
		return LP_E_NOMEM;
	for (size_t i = 0; i < below->n; i++)
		tokens[i] = lp_session_count_tokens(r->s, below->texts[i], strlen(below->texts[i]));
	root = is_root_level(r, below, tokens);
	budget = root ? r->final_budget : r->budget;
	lp_summarize_step_tree(r, &s, root, k);
	f = level_fanout(below->n, r->o->fanout);
	lp_buf_init(&b);
	snprintf(what, sizeof(what), "level %zu", k);
	lp_progress_begin(&pr, what, "inputs", below->n);
	for (size_t first = 0; first < below->n && !st; first += l->n_inputs[l->n - 1]) {
		size_t g = root ? below->n : group_size(r, below, tokens, first, f), j = l->n;
		size_t sum = joined_tokens(tokens, first, g), each = 1;
		if (budget > (SEP_TOKENS + 1) * g) /* always, but never 0 (0: uncut) */
			each = (budget - SEP_TOKENS * g) / g;
		l->first_input[j] = first;
		l->n_inputs[j] = g;
		l->n = j + 1;
		if (g == 1) { /* the last text alone: carried up */
			l->texts[j] = below->texts[first];
			continue;
		}
		lp_buf_reset(&b);
		st = join_group(r, below, first, g, sum > budget ? each : 0, &b, d);
		if (sum > budget)
			lp_doc_event(r->doc, "truncate: level %zu group %zu inputs cut to %zu tokens "
				     "each (context)", k, j, each);
		snprintf(label, sizeof(label), "level %zu group %zu", k, j);
		if (!st)
			st = lp_summarize_text(r, &s, label, b.data, b.len, budget, &l->texts[j], d);
		lp_arena_release(&r->scratch);
		lp_progress_update(&pr, first + g);
	}
	lp_progress_end(&pr);
	lp_buf_release(&b);
	lp_mem_free(tokens);
	return st;
}

/* final: join - do the summaries of `below`, joined as paragraphs, fit
 * final_tokens? */
static int fits_final(struct lp_summarize_run *r, const struct lp_summary_level *below)
{
	size_t sum = 0;

	for (size_t i = 0; i < below->n && sum <= r->final_tokens; i++)
		sum += lp_session_count_tokens(r->s, below->texts[i], strlen(below->texts[i])) + 2;
	return sum <= r->final_tokens;
}

/*
 * The last level of final: join: one text, the summaries of `below` as
 * paragraphs in document order, with no model step. A small model merging
 * a few summaries keeps the first and drops much of the rest; once they
 * are short enough to read, joining them loses nothing.
 */
static enum lp_status join_level(struct lp_summarize_run *r, const struct lp_summary_level *below,
				 struct lp_summary_level *l, struct lp_diag *d)
{
	struct lp_buf b;

	lp_buf_init(&b);
	for (size_t i = 0; i < below->n; i++)
		if ((i && lp_buf_adds(&b, LP_SUMMARIZE_SEP)) || lp_buf_adds(&b, below->texts[i])) {
			lp_buf_release(&b);
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory joining summaries");
		}
	l->texts[0] = lp_arena_strndup(&r->doc->arena, b.data, b.len);
	lp_buf_release(&b);
	if (!l->texts[0])
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory joining summaries");
	l->first_input[0] = 0;
	l->n_inputs[0] = below->n;
	l->n = 1;
	lp_doc_event(r->doc, "join: %zu summaries fit final_tokens, joined as the result",
		     below->n);
	return LP_OK;
}

enum lp_status lp_summarize_tree(struct lp_summarize_run *r, const size_t *set, size_t n,
				 struct lp_diag *d)
{
	struct lp_doc *doc = r->doc;
	size_t n0 = n ? n : 1, cap = 2;
	enum lp_status st;

	for (size_t m = n0; m > 1; m = (m + 1) / 2)
		cap++;
	doc->levels = lp_arena_alloc(&doc->arena, cap * sizeof(*doc->levels));
	if (!doc->levels)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for summary levels");
	r->level = &doc->levels[0];
	st = lp_doc_level_alloc(doc, r->level, n0, d);
	if (!st)
		st = tree_level0(r, set, n, r->level, d);
	doc->n_levels = 1;
	while (!st && doc->levels[doc->n_levels - 1].n > 1) {
		const struct lp_summary_level *below = &doc->levels[doc->n_levels - 1];
		if (doc->n_levels >= cap)
			return lp_diag_set(d, LP_E_INTERNAL, NULL, 0, 0,
					   "summary tree did not shrink (%zu levels)", cap);
		r->level = &doc->levels[doc->n_levels];
		st = lp_doc_level_alloc(doc, r->level, below->n, d);
		if (!st && r->o->final_join && fits_final(r, below))
			st = join_level(r, below, r->level, d);
		else if (!st)
			st = tree_level(r, doc->n_levels, below, r->level, d);
		doc->n_levels++;
	}
	return st;
}
