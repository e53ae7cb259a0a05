/*
 * points.h - short points a model wrote about a text: parsed from its
 * reply, checked against the text, and chosen to fit a summary.
 *
 * A small model asked for "3 facts as bullet points" answers with a list,
 * often framed by a line of talk about the text ("Here are 3 facts:") and
 * sometimes with a claim the text does not make. The summarize stage keeps
 * what it can trust:
 *
 *  - parsing (lp_points_parse): one point per list item ("- ", "* ", "• ",
 *    "1. ", "1) ", "1、"); when the reply has list items, lines outside them
 *    (intros, outros) are dropped; without any, each sentence is a point;
 *  - meta-talk (lp_points_is_meta): a sentence that talks about the text or
 *    the summary instead of the subject ("The text describes ...", "The
 *    summary is ...", "本文介绍 ...") is dropped, not rewritten;
 *  - grounding (lp_points_check): the facts of a point, as text/ground.h
 *    finds them for verify (numbers, paths,
 *    options, identifiers (CAPS, snake_case, camelCase, dotted names) and
 *    quoted strings - must occur in the source (case and spacing aside);
 *  - selection (lp_points_select): under a token budget, one point per
 *    input first, then a second per input, and so on; when even one per
 *    input does not fit, consecutive inputs form groups and each group keeps
 *    its best point, so no part of the document is left out.
 *
 * Nothing here allocates except lp_points_check's matcher scratch.
 */
#ifndef LP_TEXT_POINTS_H
#define LP_TEXT_POINTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "text/match.h"
#include "text/sentence.h"

/*
 * Split a model's reply gen[0..len) into points: spans of gen without their
 * list marker and surrounding white space; a point of fewer than 3 words
 * (CJK: characters) is skipped. At most `cap` spans are written to out[];
 * returns how many were.
 */
size_t lp_points_parse(const char *gen, size_t len, struct lp_span *out, size_t cap);

/* 1 when the sentence s[0..len) opens with talk about the text, the
 * document or the summary (English or Chinese openers), or names the
 * document itself anywhere ("this manpage", "this manual", "this
 * document"), else 0. */
int lp_points_is_meta(const char *s, size_t len);

/*
 * Copy the point s[0..len) to out without its meta-talk sentences
 * (lp_points_is_meta) and without markdown emphasis ("**"); runs of
 * white space become one space (none between two non-ASCII characters:
 * hard-wrapped CJK), and sentences are joined by one space (none after a
 * CJK terminator).
 * Returns the bytes written (0: nothing left); out must hold len + 1 bytes
 * and is NUL-terminated. out may be s (the copy never runs ahead).
 */
size_t lp_points_clean(const char *s, size_t len, char *out);

/*
 * Count the facts of s[0..len) (see the file comment) into *n_facts and
 * those that do not occur in `src` (a matcher over the source text) into
 * *n_missing. Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_points_check(struct lp_match *src, const char *s, size_t len,
			       size_t *n_facts, size_t *n_missing);

/*
 * 1 when s[0..len) reads as a sentence of prose: at least 6 words (12 CJK
 * characters), ends with . ! ? or a CJK terminator (closing quotes and
 * brackets aside; not an ellipsis, "[FILE ...]"), does not open with a section number ("1.2.3. "), a
 * shell prompt or a list or table mark (# $ % > | * +), holds at most one
 * '|' and three of [ { < (a synopsis), is mostly letters and at most a third quoted ("..." or “...”).
 * It must not end by pointing at what follows ("... provides the
 * following.", "... below.", "...如下。"), nor send the reader elsewhere
 * ("For details, see ...", "Refer to the manual ..."), nor open with a
 * lower-case function word (the rest of a sentence cut in two: "should
 * give you access to ...").
 * Headings, table rows, command lines and cross-references ('See Section
 * 3.5, “System management”') are not: a model reading them invents what
 * they stand for, and a reader learns nothing from them.
 */
int lp_points_is_prose(const char *s, size_t len);

/*
 * 1 when short_[0..slen) says no more than orig[0..olen): at least
 * LP_POINTS_IN_ORDER of its words (CJK: characters) occur in orig in the
 * same order (case aside), and every negation or condition of orig
 * ("not", "no", "never", "without", "cannot", "none", "nor", words in
 * "n't", "if", "unless", "only", "except", 不 没 无 非 未 别) is kept. A
 * shortened sentence that passes was made by deleting words, not by
 * writing new ones, and did not turn a conditional or negated statement
 * into a plain one.
 */
#define LP_POINTS_IN_ORDER 1.0
int lp_points_faithful(const char *short_, size_t slen, const char *orig, size_t olen);

/*
 * 1 when the sentence s[0..len), which a model wrote from the sentences
 * of src[0..srclen), is backed by them: one sentence of src, alone or
 * with the next, holds at least LP_POINTS_BACKED of its words as words
 * (text/words.h; CJK: characters; case and punctuation aside), every
 * negation or condition s states (see lp_points_faithful) is in that
 * passage, and that passage's own negations are kept by s. A sentence
 * made of one passage's words is what the passage says, reworded or
 * merged; one whose words come from all over src, or that drops or adds a
 * "not", is not.
 */
#define LP_POINTS_BACKED 80
int lp_points_backed(const char *s, size_t len, const char *src, size_t srclen);

/* 1 when a[0..alen) and b[0..blen) say nearly the same: at least 80% of
 * the words (CJK: characters) of each the other holds as words
 * (text/words.h), case aside. */
int lp_points_similar(const char *a, size_t alen, const char *b, size_t blen);

/*
 * The length of s[0..len) in a summary's budget (final_tokens), the same
 * for every script: LP_POINTS_TOKENS_PER_WORD per word, where a word is a
 * Latin word or LP_POINTS_HAN_PER_WORD CJK characters (about what an
 * English word says). A summary made of points is never given to the
 * model, and the model's own tokens would make one of Chinese text, which
 * SmolLM2's tokenizer cuts into one or two tokens a character, half as
 * long as one of English.
 */
#define LP_POINTS_TOKENS_PER_WORD 1.4
#define LP_POINTS_HAN_PER_WORD 1.7
size_t lp_points_cost(const char *s, size_t len);

/* A candidate point for lp_points_select. */
struct lp_point {
	size_t input;  /* the input (chunk) it came from; non-decreasing in an array */
	size_t rank;   /* 0: the best point of its input, 1: the next, ... */
	double score;  /* higher is better, compared across inputs */
	size_t cost;   /* tokens it takes in the summary */
};

/* The topics the points hold, for lp_points_select: bit k of holds[i]
 * is set when point i holds topic k, whose weight is w[k] (k < n <= 64). */
struct lp_points_cover {
	const uint64_t *holds;
	const double *w;
	size_t n;
};

/*
 * Choose points of pts[0..n) (grouped by input, inputs in order; within
 * an input in any order, its ranks 0, 1, ... without gaps) whose costs sum
 * to at most `budget`: round r keeps the rank-r point of every input while
 * it fits, as long as a round keeps all it meets. When the rank-0 points of
 * all inputs do not fit, inputs are grouped into runs of consecutive
 * inputs, as many runs as the budget holds points of average cost, and
 * each run keeps its best point (one that fits). Sets keep[i] to 1 or 0
 * and returns the number kept; at least one when any point fits.
 *
 * With `cover` (may be NULL) the choice is a greedy cover of the topics:
 * a run's best point is the one whose score plus the weight of the
 * topics it adds (not held by a point kept before) is highest, and the
 * run whose best adds the most goes first; in the round that does not fit
 * whole, the points that add the most go first. Without it, runs go in
 * order and the round's points in order.
 */
size_t lp_points_select(const struct lp_point *pts, size_t n, size_t budget,
			const struct lp_points_cover *cover, unsigned char *keep);

#endif
