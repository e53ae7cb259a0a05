/*
 * summarize_run.h - what the files of the summarize stage's model
 * strategies share; private to them (summarize_model.h is the interface).
 *
 *   summarize_model.c    the entry point: sets a run up, runs its strategy
 *   summarize_prompts.c  the request of each kind of step (its words:
 *                        stages/prompts.c)
 *   summarize_step.c     the text budget, one model step (cut to the
 *                        budget, halved on a budget refusal, a fallback
 *                        when the model writes nothing), chunk bookkeeping
 *   summarize_tree.c     tree: the map-reduce levels
 *   summarize_points.c   tree with map: points or compress: points checked
 *                        and selected (the sentences of compress are chosen
 *                        by text/choose.h)
 *   summarize_compress.c compress: a chosen sentence shortened, checked
 *   summarize_abstract.c tree with map: points or compress and abstract:
 *                        the model rewrites the selection, checked
 *   summarize_refine.c   refine: a rolling summary
 *
 * A run holds what every step of it reads (the options, the session, the
 * instruction and the budgets it leaves); what differs between steps -
 * the frame around the text, the tokens it may write, whether its reply is
 * prose or a list - is a struct lp_summarize_step the caller passes.
 */
#ifndef LP_STAGES_SUMMARIZE_RUN_H
#define LP_STAGES_SUMMARIZE_RUN_H

#include <stddef.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/status.h"
#include "stages/doc.h"
#include "stages/prompts.h"
#include "stages/summarize_model.h"

struct lp_session;

#define LP_SUMMARIZE_SEP "\n\n"
#define LP_SUMMARIZE_COMPRESS_WORDS 20 /* compress: words a shortened sentence may keep */

struct lp_summarize_run {
	struct lp_doc *doc;
	const struct lp_summarize_model_opts *o;
	struct lp_session *s;
	const struct lp_summarize_prompts *lang; /* the document's language */
	const char *instruction;  /* system message of a step (arena) */
	size_t budget;            /* B: tokens of text a step may take */
	size_t final_budget;      /* tree: B of the root step (final_tokens) */
	size_t final_tokens;      /* tree: max_tokens of the root step */
	struct lp_summary_level *level; /* being written, for token counts */
	struct lp_arena scratch;  /* one step's prompts and extracts */
	size_t released;          /* the text is released up to here */
};

/* One model step: the system message is the run's instruction (or the
 * step's own), the user message head + text + request. */
struct lp_summarize_step {
	const char *instruction; /* NULL: r->instruction */
	const char *head;     /* before the text */
	const char *request;  /* after the text ("" for none) */
	size_t max_tokens;    /* the reply may take */
	int prose;            /* a reply max_tokens cut keeps its complete
			       * sentences (and loses its meta-talk with
			       * drop_meta); else it is a list and keeps
			       * its complete lines */
	char buf[256];        /* holds the request */
};

/* summarize_prompts.c */

/* The prompts for the document's script (lp_lang_script). */
const struct lp_summarize_prompts *lp_summarize_prompts_of(const struct lp_doc *doc);

/* The system message: o->prompt (expanded) or `base`, plus the first
 * `keep` bytes of the must-keep facts on a retry. NULL when out of memory.
 * A doc arena string. */
const char *lp_summarize_instruction(const struct lp_summarize_run *r, const char *base,
				     size_t keep);

/* The steps: a tree summary at level k (root: the one that writes the
 * result); a list of o->points points; one sentence shortened (compress);
 * a refine step. */
void lp_summarize_step_tree(const struct lp_summarize_run *r, struct lp_summarize_step *s,
			    int root, size_t k);
void lp_summarize_step_points(const struct lp_summarize_run *r, struct lp_summarize_step *s);
void lp_summarize_step_sentence(const struct lp_summarize_run *r,
				struct lp_summarize_step *s);
void lp_summarize_step_refine(const struct lp_summarize_run *r, struct lp_summarize_step *s);

/* Tokens of the user message besides the text: the longest head and
 * request a step of this run may use, with slack for the seams. */
size_t lp_summarize_frame_tokens(const struct lp_summarize_run *r);

/* summarize_step.c */

/* Set r->instruction and the budgets for `base` (the strategy's default
 * instruction) with `reserved` tokens of the context kept for other uses;
 * must-keep facts that leave too little room are cut. LP_OK; LP_E_CONFIG
 * (context too small), LP_E_NOMEM. */
enum lp_status lp_summarize_fit(struct lp_summarize_run *r, const char *base, size_t reserved,
				struct lp_diag *d);

/* The root step's max_tokens as configured, before any cut. */
size_t lp_summarize_configured_final(const struct lp_summarize_run *r);

/* Cut text[0..len) to `budget` tokens (an event says so) and append the
 * model's reply to `out`, as step `s` (shrinking on a budget refusal,
 * the text's central sentences when the model writes nothing). */
enum lp_status lp_summarize_generate(struct lp_summarize_run *r,
				     const struct lp_summarize_step *s, const char *label,
				     const char *text, size_t len, size_t budget,
				     struct lp_buf *out, struct lp_diag *d);

/* lp_summarize_generate into *res, a doc arena string. */
enum lp_status lp_summarize_text(struct lp_summarize_run *r, const struct lp_summarize_step *s,
				 const char *label, const char *text, size_t len, size_t budget,
				 const char **res, struct lp_diag *d);


/* Chunk i of the working set set[0..n) (n 0: the whole text), as it is
 * and as the model reads it (extract_words: its central sentences; with
 * `prose` 0 only prose sentences; NULL when out of memory); hold it
 * before reading it, release it once summarised (the scratch goes too). */
const char *lp_summarize_raw_chunk(struct lp_doc *doc, const size_t *set, size_t n, size_t i,
				   size_t *len);
const char *lp_summarize_chunk_text(struct lp_summarize_run *r, const size_t *set, size_t n,
				    size_t i, int prose, size_t *len, struct lp_diag *d);
enum lp_status lp_summarize_hold_chunk(struct lp_summarize_run *r, const size_t *set, size_t n,
				       size_t i, struct lp_diag *d);
void lp_summarize_release_chunk(struct lp_summarize_run *r, const size_t *set, size_t n,
				size_t i);

/* The strategies: summarize_tree.c, summarize_points.c, summarize_refine.c.
 * Each fills doc->levels and doc->n_levels. */
enum lp_status lp_summarize_tree(struct lp_summarize_run *r, const size_t *set, size_t n,
				 struct lp_diag *d);
enum lp_status lp_summarize_points(struct lp_summarize_run *r, const size_t *set, size_t n,
				   struct lp_diag *d);
enum lp_status lp_summarize_refine(struct lp_summarize_run *r, const size_t *set, size_t n,
				   struct lp_diag *d);

/* summarize_compress.c: do the facts of s[0..len) (lp_points_check) all
 * occur in src[0..src_len)? 0 also when out of memory. */
int lp_summarize_grounded_in(const char *s, size_t len, const char *src, size_t src_len);

/* summarize_compress.c: the chosen sentence pt, shortened by the model
 * when it is long and the short form passes (see the file); pt itself
 * otherwise. Its first `head` bytes (a term, "bg: ") are kept as they are
 * and not shown to the model. Counts the sentences read and shortened.
 * An arena string (doc), NULL when out of memory (`d` filled). */
const char *lp_summarize_shorten(struct lp_summarize_run *r, const char *pt, size_t head,
				 size_t *sentences, size_t *shortened, struct lp_diag *d);

/* summarize_abstract.c: the selection sel[0..sel_len) rewritten by the
 * model into *out (a doc arena string), only its sentences the selection
 * backs kept; sel itself when none is. */
enum lp_status lp_summarize_abstract(struct lp_summarize_run *r, const char *sel,
				     size_t sel_len, const char **out, struct lp_diag *d);

#endif
