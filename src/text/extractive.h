/*
 * extractive.h - extractive summaries: keep the most central sentences.
 *
 * Sentences (lp_sentence_next) are ranked by centrality, LexRank style:
 * each sentence is a vector of term weights (tf * idf over the sentences
 * of its group), terms being lower-case words without stop words (see
 * text/match.h) and, for CJK, character bigrams; edges are cosine
 * similarities; the score is the stationary vector of a random walk on that
 * graph with damping 0.85 (power iteration, at most 100 steps, stopped when
 * the L1 change falls below 1e-6). A sentence similar to many others is
 * central; one that stands alone is not.
 *
 * Cost is bounded per call: sentences are ranked in groups of at most
 * LP_EXTRACTIVE_GROUP consecutive sentences (the graph is quadratic in its
 * size), and scores are rescaled by group size so that groups compare. Time
 * is linear in the text beyond that, memory is O(sentences + group^2).
 *
 * Selection walks sentences from the best score down (ties: earlier first),
 * keeping each one that still fits max_words and max_sentences and is not
 * a near repeat of one already kept (cosine of the two term sets >= 0.7;
 * the same bytes for a sentence without terms), and prints the kept ones
 * in document order. The summary's bytes are bounded too (see max_words), so
 * a text of punctuation, which holds no words, cannot pass through whole. Words are counted by lp_match_count_words,
 * so every CJK character counts as a word. If not even one sentence fits, the
 * best one is cut after max_words words so that a summary is never empty
 * when the text is not. White space inside sentences is collapsed to one
 * space (dropped between CJK characters); sentences are joined by a space,
 * or directly after a CJK sentence.
 */
#ifndef LP_TEXT_EXTRACTIVE_H
#define LP_TEXT_EXTRACTIVE_H

#include <stddef.h>

#include "core/status.h"
#include "doc/model.h"
#include "text/sentence.h"

#define LP_EXTRACTIVE_GROUP 400

/* Bytes a summary may hold per word of max_words: words alone do not
 * bound a text of punctuation (it has none). */
#define LP_EXTRACTIVE_BYTES_PER_WORD 24

struct lp_extractive_opts {
	size_t max_words;     /* 0: no limit; else also at most
			       * max_words * LP_EXTRACTIVE_BYTES_PER_WORD bytes */
	size_t max_sentences; /* 0: no limit */
	/* NULL: any sentence may be chosen; else only those it returns 1 for
	 * (the best sentence is still cut to fit when none is accepted) */
	int (*accept)(const char *s, size_t len);
	/* NULL, or the document model (doc/model.h) whose clean text `text`
	 * lies in: a sentence that starts in a code block or a table row is
	 * data, not something the document says, and is never chosen */
	const struct lp_doc_model *model;
};

/*
 * Centrality scores of the n sentences `spans` of `text` into scores[n]
 * (they sum to 1 when n > 0). Returns LP_OK or LP_E_NOMEM (tracked scratch,
 * tag LP_MEM_SCRATCH).
 */
enum lp_status lp_extractive_rank(const char *text, const struct lp_span *spans, size_t n,
				  double *scores, struct lp_diag *d);

/*
 * Summarise text[0..len) (valid UTF-8). On LP_OK, *out is a new
 * NUL-terminated string of *out_len bytes in tracked memory that the caller
 * frees with lp_mem_free (empty when the text holds no sentence). Returns
 * LP_E_NOMEM with `d` filled when memory or the budget runs out; *out is then
 * NULL.
 */
enum lp_status lp_extractive_summarize(const char *text, size_t len,
				       const struct lp_extractive_opts *o,
				       char **out, size_t *out_len, struct lp_diag *d);

#endif
