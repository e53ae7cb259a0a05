/*
 * summarize_points.c - the summarize stage's tree with map: points or
 * compress: points checked and selected (rewritten by the model only with
 * abstract: summarize_abstract.c).
 *
 * Each chunk yields a few candidate points: the items of the model's
 * list (points), or the chunk's lead sentences (text/choose.h), each
 * shortened by the model when it is long (compress, summarize_compress.c). A candidate loses
 * its meta-talk sentences and, with grounded, is dropped when one of its
 * facts does not occur in the chunk, or when it is not made of the
 * chunk's words (points: fewer than POINT_MIN_SUPPORT of its content
 * words occur in the chunk, or it is no shortened form of one of the
 * sentences the model read, lp_points_faithful); a chunk left with none
 * keeps its most central prose sentence, when it has one. The level above
 * is no model step: lp_points_select keeps, under final_tokens, one point
 * per chunk (or per run of chunks) before a second, and the result lists
 * them in document order. A small model merging its own summaries keeps
 * the first inputs and drops the rest; selection drops nothing it has
 * room for and writes nothing new.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "stages/summarize_run.h"
#include "stages/topics.h"
#include "text/choose.h"
#include "text/extractive.h"
#include "text/keyphrase.h"
#include "text/match.h"
#include "text/points.h"
#include "text/words.h"

#define POINTS_MAX 16      /* list items read from one reply */
#define CHUNK_KEYPHRASES LP_CHOOSE_KEYPHRASES /* a chunk's keyphrases, for choosing and scoring */
#define POINT_COST_SLACK 2 /* tokens of the space or paragraph break */
#define POINT_MIN_SUPPORT 0.75 /* grounded: share of a point's content
				* words that must occur in its chunk */

struct points {
	struct lp_buf pts;   /* struct lp_point[], by input then rank */
	struct lp_buf texts; /* const char *[] (doc arena), parallel to pts */
	struct lp_buf heads; /* size_t[]: bytes of a text's "term: ", parallel */
	size_t n;
	size_t dropped_meta, dropped_ungrounded, dropped_unsupported;
	size_t sentences, shortened; /* compress: sentences read, shortened */
	const char **topics;  /* what the summary covers, in doc->arena: the
			       * phrases a verify rerun misses, then the
			       * document's topics (stages/topics.h) */
	size_t n_topics, n_missing;
};

/* *support: the share of the content words of p[0..len) that the chunk
 * holds as phrases (text/words.h); *score: that plus half a point per keyphrase of the chunk
 * that p holds (at most two). */
static enum lp_status point_score(struct lp_match *chunk, const char *p, size_t len,
				  const char *const *kp, size_t n_kp, double *support,
				  double *score, struct lp_diag *d)
{
	struct lp_match pm;
	size_t words = 0, found_words = 0, hits = 0;
	enum lp_status st = lp_words_held_in(p, len, LP_WORDS_CONTENT, chunk, &found_words, &words);

	if (!st)
		st = lp_match_init(&pm, p, len, d);
	for (size_t k = 0; k < n_kp && !st && hits < 2; k++) {
		int found = 0;
		st = lp_match_contains(&pm, kp[k], strlen(kp[k]), &found);
		hits += found;
	}
	lp_match_release(&pm);
	*support = words ? (double)found_words / (double)words : 0;
	*score = *support + 0.5 * (double)hits;
	return st ? lp_diag_set(d, st, NULL, 0, 0, "out of memory scoring a point") : LP_OK;
}

/* Is p[0..len) faithful (lp_points_faithful) to a sentence of text? */
static int faithful_to_some(const char *p, size_t len, const char *text, size_t text_len)
{
	struct lp_span sp;
	size_t pos = 0;

	while (lp_sentence_next(text, text_len, &pos, &sp))
		if (lp_points_faithful(p, len, text + sp.off, sp.len))
			return 1;
	return 0;
}

/* Add candidate c[0..len) of chunk `input` to ps, cleaned and checked
 * against the chunk and, when `read` is not NULL, against the sentences
 * of read[0..read_len) (what the model read); *added tells whether it was
 * kept. */
static enum lp_status add_candidate(struct lp_summarize_run *r, struct points *ps, struct lp_match *chunk,
				    const char *const *kp, size_t n_kp, size_t input,
				    size_t rank, size_t head, const char *c, size_t len,
				    const char *read, size_t read_len, int *added,
				    struct lp_diag *d)
{
	char *p = lp_arena_alloc(&r->scratch, len + 1);
	struct lp_point pt = { input, rank, 0, 0 };
	size_t n = 0, facts = 0, missing = 0;
	double support;
	enum lp_status st;
	const char *kept;

	*added = 0;
	if (!p)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	n = r->o->drop_meta ? lp_points_clean(c, len, p) : (memcpy(p, c, len), p[len] = 0, len);
	if (lp_match_count_words(p, n) < 3) {
		ps->dropped_meta++;
		return LP_OK;
	}
	if (r->o->grounded &&
	    lp_points_check(chunk, p, n, &facts, &missing))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory checking a point");
	if (missing) {
		ps->dropped_ungrounded++;
		return LP_OK;
	}
	for (size_t i = ps->n; i-- > 0;)
		if (!strcmp(((const char **)ps->texts.data)[i], p))
			return LP_OK; /* the same point twice (a repeated sentence) */
	if ((st = point_score(chunk, p, n, kp, n_kp, &support, &pt.score, d)))
		return st;
	if (r->o->grounded && (support < POINT_MIN_SUPPORT ||
			       (read && !faithful_to_some(p, n, read, read_len)))) {
		ps->dropped_unsupported++;
		return LP_OK;
	}
	pt.score -= 0.1 * (double)rank; /* the model's first, the most central */
	pt.cost = lp_points_cost(p, n) + POINT_COST_SLACK;
	kept = lp_arena_strndup(&r->doc->arena, p, n);
	head = head < n && !memcmp(p, c, head) ? head : 0; /* cleaning kept the term */
	if (!kept || lp_buf_add(&ps->pts, &pt, sizeof(pt)) ||
	    lp_buf_add(&ps->texts, &kept, sizeof(kept)) ||
	    lp_buf_add(&ps->heads, &head, sizeof(head)))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	ps->n++;
	*added = 1;
	return LP_OK;
}


/* map: points - the items of the model's list about text[0..len). */
static enum lp_status map_points(struct lp_summarize_run *r, const char *label, const char *text,
				 size_t len, struct lp_buf *cands, struct lp_diag *d)
{
	struct lp_summarize_step s;

	lp_summarize_step_points(r, &s);
	return lp_summarize_generate(r, &s, label, text, len, r->budget, cands, d);
}

/* Does the document model read the text at p (inside doc->text) as a
 * heading? The chunk's outline (text/outline.h) sees only its text: a
 * centred title over a deeper line looks like an entry's term there. */
static int heading_at(const struct lp_doc *doc, const char *p)
{
	const struct lp_doc_model *m = &doc->src.model;
	size_t b;

	if (!doc->text || p < doc->text || p >= doc->text + doc->len)
		return 0;
	b = lp_doc_model_find(m, (size_t)(p - doc->text));
	return b != LP_DOC_NONE && b < m->n_blocks && m->blocks[b].kind == LP_BLOCK_HEADING;
}

/* map: compress, first half - the chunk's chosen sentences (text/choose.h),
 * one per line in cands in document order, each after its term ("term: ")
 * when it has one; ranks[j] is line j's place in the order chosen (0:
 * first) and heads[j] the bytes of its "term: " (0: none). With the
 * `points` a chunk takes by default, its leads go alone (no names): a long
 * document's runs of chunks keep one point each, and a longer point leaves
 * fewer runs a point. The points are shortened once selected
 * (lp_summarize_shorten). */
static enum lp_status map_central(struct lp_summarize_run *r, const char *text, size_t len,
				  int lead, size_t want, const char *const *keys, size_t n_keys,
				  size_t first_name, const char *const *must, size_t n_must,
				  struct lp_buf *cands, size_t *ranks, size_t *heads,
				  struct lp_diag *d)
{
	struct lp_choose_opts co = { want, lead, r->o->drop_meta, keys, n_keys,
				     want > r->o->points ? first_name : n_keys, must, n_must };
	struct lp_choice *ch;
	size_t n;
	enum lp_status st = lp_choose_sentences(text, len, &co, &ch, &n, d);

	if (st)
		return st;
	for (size_t j = 0; !st && j < n; j++) {
		size_t start;
		if (ch[j].term_len && heading_at(r->doc, text + ch[j].term_off))
			ch[j].term_len = 0; /* a title, not a term: nothing to glue on */
		ranks[j] = ch[j].rank;
		heads[j] = ch[j].term_len ? ch[j].term_len + 2 : 0;
		if (lp_buf_adds(cands, "- ") ||
		    (ch[j].term_len && (lp_buf_add(cands, text + ch[j].term_off, ch[j].term_len) ||
					lp_buf_adds(cands, ": "))))
			st = LP_E_NOMEM;
		start = cands->len;
		if (!st && (lp_buf_add(cands, text + ch[j].off, ch[j].len) || lp_buf_addc(cands, '\n')))
			st = LP_E_NOMEM;
		for (size_t k = start; !st && k < cands->len - 1; k++)
			if (cands->data[k] == '\n')
				cands->data[k] = ' '; /* one line per sentence */
	}
	lp_mem_free(ch);
	return st ? lp_diag_set(d, st, NULL, 0, 0, "out of memory choosing sentences") : LP_OK;
}

/* Make the ranks of ps's points from `first` on 0, 1, ... in their order
 * (candidates that were dropped leave gaps). */
static void renumber_ranks(struct points *ps, size_t first)
{
	struct lp_point *p = (struct lp_point *)ps->pts.data;
	size_t rank[POINTS_MAX + 1], n = ps->n - first;

	for (size_t i = 0; i < n && n <= POINTS_MAX + 1; i++) {
		rank[i] = 0;
		for (size_t j = 0; j < n; j++)
			rank[i] += p[first + j].rank < p[first + i].rank ||
				   (p[first + j].rank == p[first + i].rank && j < i);
	}
	for (size_t i = 0; i < n && n <= POINTS_MAX + 1; i++)
		p[first + i].rank = rank[i];
}

/* Append point t to b: after a space when it follows a point of the same
 * chunk (`same`; nothing after a non-ASCII character, as CJK text is
 * joined without spaces), else as a new paragraph. Returns lp_buf's status (nonzero: out of memory). */
static int append_point(struct lp_buf *b, const char *t, int same)
{
	int cjk_end = b->len >= 3 && (unsigned char)b->data[b->len - 1] >= 0x80;

	if (b->len && ((same && !cjk_end && lp_buf_addc(b, ' ')) ||
		       (!same && lp_buf_adds(b, "\n\n"))))
		return 1;
	return lp_buf_adds(b, t);
}

/* The points of chunk `input`: raw[0..raw_len) is the chunk, text[0..len)
 * what the model reads of it. Sets *level_text to its points as a list. */
static enum lp_status chunk_points(struct lp_summarize_run *r, struct points *ps, size_t input,
				   size_t want, const char *label, const char *raw, size_t raw_len,
				   const char *text, size_t len, const char **level_text,
				   struct lp_diag *d)
{
	struct lp_match chunk;
	struct lp_span spans[POINTS_MAX];
	size_t ranks[POINTS_MAX], heads[POINTS_MAX] = { 0 };
	struct lp_buf cands, list;
	const char **kp = NULL, **keys = NULL;
	size_t n_kp = 0, n_keys = 0, first_name = 0, n_spans, first = ps->n, rank = 0;
	/* the phrases a verify rerun misses are taken beyond want, in room
	 * made for them */
	size_t n_must = ps->n_missing < POINTS_MAX / 2 ? ps->n_missing : POINTS_MAX / 2;
	enum lp_status st = lp_match_init(&chunk, raw, raw_len, d);

	if (want + n_must > POINTS_MAX)
		want = POINTS_MAX - n_must;
	lp_buf_init(&cands);
	lp_buf_init(&list);
	/* the document's topics stand for the chunk's keyphrases: a summary
	 * keeps what the document is about, not what one section repeats */
	kp = ps->topics;
	n_kp = ps->n_topics < CHUNK_KEYPHRASES ? ps->n_topics : CHUNK_KEYPHRASES;
	if (!st && !n_kp)
		st = lp_keyphrase_extract(raw, raw_len, CHUNK_KEYPHRASES, &r->scratch, &kp, &n_kp, d);
	if (!st && r->o->map == LP_SUMMARIZE_MAP_COMPRESS)
		st = lp_choose_keys(raw, raw_len, kp, n_kp, &r->scratch, &keys, &n_keys,
				    &first_name, d);
	for (size_t k = 0; !st && k < n_keys; k++)
		lp_debug("chunk %zu key: %s", input, keys[k]);
	if (!st)
		st = r->o->map == LP_SUMMARIZE_MAP_POINTS ?
		     map_points(r, label, text, len, &cands, d) :
		     map_central(r, raw, raw_len, input == 0, want, keys, n_keys,
				 first_name, ps->topics, n_must, &cands, ranks, heads, d);
	n_spans = st ? 0 : lp_points_parse(cands.data ? cands.data : "", cands.len, spans, POINTS_MAX);
	for (size_t i = 0; i < n_spans && !st && rank < want + n_must; i++) {
		int added;
		int model = r->o->map == LP_SUMMARIZE_MAP_POINTS;
		st = add_candidate(r, ps, &chunk, kp, n_kp, input, model ? rank : ranks[i],
				   model ? 0 : heads[i], cands.data + spans[i].off, spans[i].len,
				   model ? text : NULL, len, &added, d);
		rank += (size_t)added;
	}
	if (!st)
		renumber_ranks(ps, first);
	if (!st && !rank) { /* nothing trusted: the chunk's most central sentence */
		struct lp_extractive_opts eo = { LP_SUMMARIZE_COMPRESS_WORDS + 10, 1, lp_points_is_prose,
						  NULL };
		char *best;
		size_t best_len;
		int added = 0;
		if (!(st = lp_extractive_summarize(text, len, &eo, &best, &best_len, d))) {
			if (lp_points_is_prose(best, best_len))
				st = add_candidate(r, ps, &chunk, kp, n_kp, input, 0, 0, best,
						   best_len, NULL, 0, &added, d);
			lp_mem_free(best);
		}
	}
	for (size_t i = first; i < ps->n && !st; i++)
		if (append_point(&list, ((const char **)ps->texts.data)[i], 1))
			st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	if (!st && !(*level_text = lp_arena_strndup(&r->doc->arena, list.data ? list.data : "",
						    list.len)))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a point");
	lp_buf_release(&list);
	lp_buf_release(&cands);
	lp_match_release(&chunk);
	return st;
}

/*
 * Score every point by its centrality among all the points of the
 * document (lp_extractive_rank, scaled so that the mean is 1), keeping
 * the in-chunk part of the score (keyphrases, rank) as a tie-breaker: the
 * point a run of chunks keeps is the one most like the rest of the
 * document, so the summary speaks of what the document keeps coming back
 * to rather than of one table.
 */
static enum lp_status rescore_points(struct points *ps, int lead, struct lp_diag *d)
{
	struct lp_point *pts = (struct lp_point *)ps->pts.data;
	const char **texts = (const char **)ps->texts.data;
	struct lp_span *spans = lp_mem_alloc(LP_MEM_SCRATCH, (ps->n + 1) * sizeof(*spans), d);
	double *c = lp_mem_alloc(LP_MEM_SCRATCH, (ps->n + 1) * sizeof(*c), d);
	struct lp_buf b;
	enum lp_status st = spans && c ? LP_OK : LP_E_NOMEM;

	lp_buf_init(&b);
	for (size_t i = 0; i < ps->n && !st; i++) {
		spans[i].off = b.len;
		spans[i].len = strlen(texts[i]);
		if (lp_buf_adds(&b, texts[i]) || lp_buf_adds(&b, "\n\n"))
			st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory ranking points");
	}
	if (!st && ps->n)
		st = lp_extractive_rank(b.data, spans, ps->n, c, d);
	for (size_t i = 0; i < ps->n && !st; i++)
		pts[i].score = (double)ps->n * c[i] + 0.5 * (pts[i].score - 1);
	if (!st && lead && ps->n && !pts[0].input && !pts[0].rank) /* the lead is kept */
		pts[0].score += (double)ps->n;
	lp_buf_release(&b);
	lp_mem_free(spans);
	lp_mem_free(c);
	return st;
}

/*
 * The document's topics (stages/topics.h) and which points hold them, for
 * lp_points_select to cover: topic k weighs 1 - k / TOPICS_COVERED, about
 * a point's mean score for the first, so that a point that adds a topic
 * beats one slightly more central that adds none. c->n is 0 when the
 * document has none.
 */
#define TOPICS_COVERED 20
#define COVER_MAX 64         /* bits of lp_points_cover's holds */
#define MISSING_WEIGHT 3.0   /* a phrase a verify rerun asks for */

/* ps->topics: on a rerun that on_fail: retry asked for, the phrases the
 * last verification found missing (doc->verify; not regex patterns),
 * first and weighing MISSING_WEIGHT, so that the chunks offer them and
 * the selection takes them before any topic; then the document's
 * topics not among them. */
static enum lp_status cover_list(struct lp_doc *doc, struct points *ps, struct lp_diag *d)
{
	const struct lp_verify_result *v = &doc->verify;
	const char **topics, **list;
	size_t n, m = 0;
	enum lp_status st = lp_doc_topics(doc, TOPICS_COVERED, &topics, &n, d);

	if (st || !doc->must_keep) {
		ps->topics = topics;
		ps->n_topics = n;
		return st;
	}
	if (!(list = lp_arena_alloc(&doc->arena, (v->n_phrases + n + 1) * sizeof(*list))))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the summary's topics");
	for (size_t i = 0; i < v->n_phrases && m < COVER_MAX; i++)
		if (!v->phrases[i].survived && strcmp(v->phrases[i].origin, "regex"))
			list[m++] = v->phrases[i].text;
	ps->n_missing = m;
	for (size_t k = 0; k < n; k++) {
		size_t j = 0;
		while (j < ps->n_missing && strcasecmp(list[j], topics[k]))
			j++;
		if (j == ps->n_missing)
			list[m++] = topics[k];
	}
	ps->topics = list;
	ps->n_topics = m;
	return LP_OK;
}
static enum lp_status cover_topics(const struct points *ps, struct lp_points_cover *c,
				   struct lp_diag *d)
{
	const char **topics = ps->topics, **texts = (const char **)ps->texts.data;
	uint64_t *holds;
	double *w;
	size_t n = ps->n_topics < COVER_MAX ? ps->n_topics : COVER_MAX;
	enum lp_status st = LP_OK;

	if (!n)
		return LP_OK;
	holds = lp_mem_alloc(LP_MEM_SCRATCH, (ps->n + 1) * sizeof(*holds), d);
	w = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*w), d);
	c->holds = holds;
	c->w = w;
	if (!holds || !w)
		return LP_E_NOMEM;
	for (size_t k = 0; k < n; k++)
		w[k] = k < ps->n_missing ? MISSING_WEIGHT
					 : 1.0 - (double)(k - ps->n_missing) / TOPICS_COVERED;
	for (size_t i = 0; i < ps->n && !st; i++)
		st = lp_match_held(texts[i], strlen(texts[i]), topics, n, &holds[i], NULL, d);
	c->n = st ? 0 : n;
	return st ? lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory covering topics") : LP_OK;
}

/* The last level: the points lp_points_select keeps within final_tokens,
 * in document order: one paragraph per chunk. */
static enum lp_status select_points(struct lp_summarize_run *r, struct points *ps,
				    struct lp_summary_level *below, struct lp_summary_level *l,
				    struct lp_diag *d)
{
	unsigned char *keep = lp_mem_alloc(LP_MEM_SCRATCH, ps->n + 1, d);
	const char **texts = (const char **)ps->texts.data;
	const size_t *heads = (const size_t *)ps->heads.data;
	const struct lp_point *pts = (const struct lp_point *)ps->pts.data;
	struct lp_points_cover cover = { NULL, NULL, 0 };
	struct lp_progress pr;
	struct lp_buf b;
	size_t kept = 0, last = ps->n;
	enum lp_status st = LP_OK;

	if (!keep)
		return LP_E_NOMEM;
	if ((st = rescore_points(ps, r->o->map == LP_SUMMARIZE_MAP_COMPRESS, d))) {
		lp_mem_free(keep);
		return st;
	}
	if (!(st = cover_topics(ps, &cover, d)))
		kept = lp_points_select((const struct lp_point *)ps->pts.data, ps->n, r->final_tokens,
					cover.n ? &cover : NULL, keep);
	lp_mem_free((void *)cover.holds);
	lp_mem_free((void *)cover.w);
	if (st) {
		lp_mem_free(keep);
		return st;
	}
	r->level = l;
	lp_buf_init(&b);
	lp_progress_begin(&pr, "shorten", "sentences", kept);
	for (size_t i = 0, k = 0; i < ps->n && !st; i++) {
		const char *t = texts[i];
		if (!keep[i])
			continue;
		/* a term's entry is a paragraph of its own ("bg: Resume ...") */
		int same = last < ps->n && pts[last].input == pts[i].input && !heads[i] &&
			   !heads[last];
		if (r->o->map == LP_SUMMARIZE_MAP_COMPRESS && !(t = lp_summarize_shorten(r, t, heads[i], &ps->sentences,
							     &ps->shortened, d)))
			st = d->status ? d->status : LP_E_NOMEM;
		else if (append_point(&b, t, same))
			st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the summary");
		last = i;
		lp_progress_update(&pr, ++k);
	}
	lp_progress_end(&pr);
	l->texts[0] = st ? NULL : lp_arena_strndup(&r->doc->arena, b.data ? b.data : "", b.len);
	if (!st && !l->texts[0])
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the summary");
	l->first_input[0] = 0;
	l->n_inputs[0] = below->n;
	l->n = 1;
	if (r->o->map == LP_SUMMARIZE_MAP_COMPRESS)
		lp_doc_event(r->doc, "compress: %zu of %zu sentences shortened", ps->shortened,
			     ps->sentences);
	lp_doc_event(r->doc, "select: %zu of %zu points kept (final_tokens %zu); dropped: %zu "
		     "meta-talk, %zu ungrounded, %zu unsupported", kept, ps->n, r->final_tokens,
		     ps->dropped_meta, ps->dropped_ungrounded, ps->dropped_unsupported);
	lp_buf_release(&b);
	lp_mem_free(keep);
	return st;
}

/* Points to take from a chunk of `bytes` of the `total` of all chunks:
 * `points`, or more when a few chunks would leave final_tokens mostly
 * empty (a point takes about POINT_TOKENS), shared by the chunks' sizes
 * (a short last chunk does not get as many as a long one), at most
 * POINTS_MAX. */
#define POINT_TOKENS 28
static size_t points_per_chunk(const struct lp_summarize_run *r, size_t bytes, size_t total)
{
	size_t fill = (size_t)((double)(r->final_tokens / POINT_TOKENS) * (double)bytes /
			       (double)(total ? total : 1) + 0.5);

	fill = fill > r->o->points ? fill : r->o->points;
	return fill < POINTS_MAX ? fill : POINTS_MAX;
}

enum lp_status lp_summarize_points(struct lp_summarize_run *r, const size_t *set, size_t n,
				   struct lp_diag *d)
{
	struct lp_doc *doc = r->doc;
	size_t n0 = n ? n : 1;
	struct points ps = { .n = 0 };
	struct lp_progress pr;
	enum lp_status st;
	char label[48];
	size_t total = 0;

	for (size_t i = 0; i < n0; i++) {
		size_t len;
		lp_summarize_raw_chunk(doc, set, n, i, &len);
		total += len;
	}

	doc->levels = lp_arena_alloc(&doc->arena, 3 * sizeof(*doc->levels));
	if (!doc->levels)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for summary levels");
	r->level = &doc->levels[0];
	if ((st = lp_doc_level_alloc(doc, &doc->levels[0], n0, d)) ||
	    (st = lp_doc_level_alloc(doc, &doc->levels[1], 1, d)) ||
	    (r->o->abstract && (st = lp_doc_level_alloc(doc, &doc->levels[2], 1, d))))
		return st;
	lp_buf_init(&ps.pts);
	lp_buf_init(&ps.texts);
	lp_buf_init(&ps.heads);
	if ((st = cover_list(doc, &ps, d)))
		return st;
	lp_progress_begin(&pr, "map", "chunks", n0);
	for (size_t i = 0; i < n0 && !st; i++) {
		size_t len, raw_len;
		const char *raw = lp_summarize_raw_chunk(doc, set, n, i, &raw_len), *t;
		st = lp_summarize_hold_chunk(r, set, n, i, d);
		t = st ? NULL : lp_summarize_chunk_text(r, set, n, i, 0, &len, d);
		snprintf(label, sizeof(label), "chunk %zu", n ? set[i] : 0);
		r->level->first_input[i] = i;
		r->level->n_inputs[i] = 1;
		if (!st)
			st = t ? chunk_points(r, &ps, i, points_per_chunk(r, raw_len, total), label,
					      raw, raw_len, t, len,
					      &r->level->texts[i], d) : d->status;
		r->level->n = i + 1;
		lp_summarize_release_chunk(r, set, n, i);
		lp_progress_update(&pr, i + 1);
	}
	lp_progress_end(&pr);
	doc->n_levels = 1;
	if (!st) {
		st = select_points(r, &ps, &doc->levels[0], &doc->levels[1], d);
		doc->n_levels = 2;
	}
	if (!st && r->o->abstract) {
		struct lp_summary_level *sel = &doc->levels[1], *l = &doc->levels[2];

		r->level = l;
		st = lp_summarize_abstract(r, sel->texts[0], strlen(sel->texts[0]), &l->texts[0], d);
		l->first_input[0] = 0;
		l->n_inputs[0] = 1;
		l->n = 1;
		doc->n_levels = 3;
	}
	lp_buf_release(&ps.pts);
	lp_buf_release(&ps.texts);
	lp_buf_release(&ps.heads);
	return st;
}
