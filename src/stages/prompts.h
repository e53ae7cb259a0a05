/*
 * prompts.h - what the model stages say to the model, per language, in
 * one table (prompts.c).
 *
 * A small instruct model answers in the language it is asked in, whatever
 * the language of the text it reads, so a stage asks in the document's
 * language: Chinese for Han text, English for any other (its script,
 * text/lang.h). Each language's entry holds every string the answer and
 * summarize stages send to the model and the lines they print about how
 * they checked it, so a wording is changed in one place and a language
 * is added as one entry.
 */
#ifndef LP_STAGES_PROMPTS_H
#define LP_STAGES_PROMPTS_H

#include <stddef.h>

/* The answer stage (answer.c): its prompts, and the lines it prints about
 * how it checked the model. */
struct lp_answer_prompts {
	const char *direct;      /* system: answer and cite, one step */
	const char *find;        /* system: step 1, copy the answering sentence */
	const char *find_form;   /* user: step 1's closing lines */
	const char *quote_open;  /* the assistant's turn starts with it */
	const char *reply;       /* system: step 2, answer from the sentence */
	const char *passages, *question, *text, *summary;
	/* the Check line: how the quote was found (quote, quote-retry,
	 * extract, ranked), and what is added when it became the answer */
	const char *checks[4], *replaced;
	const char *term;        /* Check: the answer is the entry's name */
	const char *named;       /* Check: the answer is the name the sentence gives */
	const char *abstain;     /* the answer when the document does not say */
	/* Check, when abstaining: the focus the document never names (%.*s),
	 * the focus the nearest sentence does not name, no number, two words
	 * of the question the document never uses (%.*s, %.*s), the nearest
	 * sentence too weak a match to be the answer */
	const char *why_absent, *why_far, *why_number, *why_words, *why_weak;
	/* Check, when abstaining on a request for the document's words: the
	 * nearest sentence holds too little of it */
	const char *why_loose;
	const char *verbatim;    /* Check: the answer is the passage itself */
};

/* The summarize stage's model steps (summarize_prompts.c frames them).
 * `sentences`, `points` and `compress` are formats with one %zu: the number
 * of sentences or points, or the words a shortened sentence may keep. */
struct lp_summarize_prompts {
	const char *system;   /* tree, points and compress instruction */
	const char *refine;   /* refine instruction */
	const char *head;     /* before a text */
	const char *refine_head;
	const char *sentences; /* tree prose: "... in %zu sentences." */
	const char *points;   /* points: "List the %zu ..." */
	const char *sentence_head; /* compress: before the sentence */
	const char *compress; /* compress: "... at most %zu words ..." */
	const char *must_keep; /* before the facts a retry must keep */
};

struct lp_prompts {
	struct lp_answer_prompts answer;
	struct lp_summarize_prompts summarize;
};

/* The Chinese prompts when `han`, else the English ones. */
const struct lp_prompts *lp_prompts_for(int han);

/* The prompts for the script of text[0..len) (NULL: English). */
const struct lp_prompts *lp_prompts_of(const char *text, size_t len);

#endif
