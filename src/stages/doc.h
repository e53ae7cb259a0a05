/*
 * doc.h - the state one pipeline run shares between its stages.
 *
 * Data flows one way: document -> chunks -> scores -> selection ->
 * summaries -> answer -> verification -> output. Each stage reads what the
 * earlier ones left in struct lp_doc and adds its own part; the report
 * module prints it. Everything a stage adds is allocated in doc->arena (or
 * tracked memory the stage frees in lp_doc_release) and lives until the run
 * ends.
 *
 * Offsets are byte offsets into doc->text, the normalised document (BOM
 * removed, CRLF turned into LF, invalid UTF-8 replaced when asked): it is
 * valid UTF-8, since loading refuses or replaces anything else. Every
 * chunk is the verbatim slice text[off, off + len).
 */
#ifndef LP_STAGES_DOC_H
#define LP_STAGES_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "config/pipeline.h"
#include "core/arena.h"
#include "text/document.h"

struct lp_chunk {
	size_t off, len;  /* bytes into doc->text */
	double score;     /* last scorer's score, 0 before any */
	int selected;     /* chosen by a retrieve stage */
};

/* One level of a summary tree: level 0 summarises chunks, level k > 0
 * summarises groups of level k-1 outputs. */
struct lp_summary_level {
	size_t n;
	const char **texts;      /* [n] summaries */
	size_t *first_input;     /* [n] index of the first input at the level below */
	size_t *n_inputs;        /* [n] how many inputs it covers */
	size_t tokens_in;        /* model strategies: prompt tokens of the level */
	size_t tokens_out;       /* model strategies: tokens generated */
};

/* A keyphrase checked by the verify stage. */
struct lp_keyphrase {
	const char *text;   /* phrase as shown (for regex: the first match in the source, or the pattern) */
	const char *origin; /* "must", "regex" or "auto" */
	int survived;       /* found in the output */
	int lost_level;     /* lowest summary level none of whose texts holds
			     * it (when it is missing), -1: not lost in the tree */
};

/* A sentence of the output holding numbers or identifiers that do not occur
 * in the source (see text/ground.h). */
struct lp_ungrounded {
	const char *sentence;   /* as it was in the output */
	const char **tokens;    /* [n_tokens] the tokens not found */
	const char **kinds;     /* [n_tokens] "number", "option", "path",
				 * "identifier" or "quoted" */
	size_t n_tokens;
	int removed;            /* taken out of the output (on_ungrounded) */
};

/* One level of a summary tree checked against its inputs
 * (stages/verify_levels.h). */
struct lp_verify_level {
	size_t phrases;  /* keyphrases of the level's inputs, over its summaries */
	size_t survived; /* of them, kept by the summary of those inputs */
};

struct lp_verify_result {
	int done;                 /* a verify stage ran */
	struct lp_keyphrase *phrases;
	size_t n_phrases, n_survived;
	double survival_rate;     /* n_survived / n_phrases, 1.0 when none */
	size_t n_auto, n_auto_survived; /* the auto phrases among them */
	double auto_survival_rate; /* n_auto_survived / n_auto, 1.0 when none */
	double min_survival;      /* passed needs auto_survival_rate >= this */
	size_t words;             /* words (or CJK characters) in the output */
	size_t min_words;
	int passed;
	int retries;              /* reruns this stage asked the runner for */
	int grounded;             /* grounded: true (the fields below are set) */
	size_t ground_tokens;     /* distinct checked tokens in the output */
	size_t ground_found;      /* of them, found in the source */
	double grounding_rate;    /* ground_found / ground_tokens, 1.0 when none */
	struct lp_ungrounded *ungrounded; /* [n_ungrounded] in output order */
	size_t n_ungrounded;
	size_t n_removed;         /* of them, removed from the output */
	struct lp_verify_level *levels; /* [n_levels]: keyphrases.levels, per tree
					 * level; NULL when not asked */
	size_t n_levels;
	int level_failed;         /* lowest level under min_survival, -1: none */
};

/*
 * A stage's request to run the pipeline again from an earlier stage (the
 * verify stage's on_fail retry). The stage sets it and returns; the runner
 * then runs stages from..the requesting one again, each as a step of its
 * own (phase, peaks, trace entry with the next pass number), and goes on.
 * Whatever the rerun stages should do differently travels in the doc
 * (doc->must_keep). The runner clears the request when it acts on it, and
 * ignores one that points after the requesting stage or exceeds
 * LP_DOC_MAX_RERUNS reruns per run.
 */
struct lp_rerun {
	int requested;
	size_t from;              /* stage index (0-based) to start again at */
	size_t count;             /* reruns the runner made so far */
};

#define LP_DOC_MAX_RERUNS 10

/* What a stage did, for the JSON trace and progress reports. */
struct lp_stage_trace {
	const char *kind;
	double seconds;
	size_t peak_tracked_bytes; /* tracked peak while the stage ran */
	const char *note;          /* one line: "42 chunks", "kept 8 of 42", ... */
	const char **events;       /* [n_events] what the stage had to adapt:
				    * "shrink: chunk 4 split in 2 (budget)" */
	size_t n_events;
	size_t cap_events;         /* room in events */
	size_t n_events_dropped;   /* events not kept (LP_DOC_EVENTS_PER_KIND) */
	size_t stage;              /* index in the pipeline, 0-based */
	int pass;                  /* 1; 2 and up when a rerun ran it again */
};

/* Events of one kind (the text before the first ':', "truncate", "shrink")
 * kept per stage; later ones are only counted, so that a run over
 * thousands of chunks that each need cutting keeps a trace of fixed size. */
#define LP_DOC_EVENTS_PER_KIND 16

/* A distinct token the extract stage found (its kind named by
 * lp_doc_item_kind_name below): its first occurrence in text, the chunk
 * that holds it, and how many times it occurs. */
struct lp_doc_item {
	unsigned kind;   /* lp_doc_item_kind_name */
	size_t off, len;
	size_t chunk;
	size_t count;
};

/* "number", "option", "path", "identifier", "quoted" (the ground kinds,
 * text/ground.h, by their value) or "price" (stages/extract.c). */
const char *lp_doc_item_kind_name(unsigned kind);

struct lp_session;
struct lp_engine;
struct lp_docstore;

struct lp_doc {
	struct lp_arena arena;
	const struct lp_pipeline *pipeline;
	const char *path;          /* document path as given ("-" for stdin) */
	struct lp_document src;    /* the loaded document; owns the text */
	const char *text;          /* == src.text */
	size_t len;                /* == src.len, bytes */
	const char *question;      /* -q, or NULL */

	struct lp_chunk *chunks;   /* [n_chunks], in document order */
	size_t n_chunks;
	struct lp_chunk *split_table; /* [split_cap]: the split stage's table,
				    * reused by the next split (the arena frees
				    * nothing, so a new table per split would
				    * keep every earlier one: an arena block,
				    * 64 KiB, per split stage) */
	size_t split_cap;
	size_t *selection;         /* [n_selection] chunk indices, in output order;
				    * NULL until a stage narrows or asks for the
				    * working set (see lp_doc_working_set) */
	size_t n_selection;

	struct lp_summary_level *levels; /* [n_levels], bottom-up */
	size_t n_levels;
	const char *summary;       /* the top of the tree, or NULL */
	const char *answer;        /* from an answer or generate stage, or NULL */
	const size_t *cited;       /* [n_cited] chunk ids the answer cites */
	size_t n_cited;
	size_t quote_off, quote_len; /* the answer's quote in text (quote_len 0:
				      * none), for the reports to map back */
	const char *answer_check; /* how the answer stage checked the answer:
				   * "quote", "quote-retry", "extract" or
				   * "ranked", with "+sentence" when the quoted
				   * sentence became the answer; "none" without
				   * a quote step (answer.c); or NULL */
	struct lp_doc_item *items; /* [n_items] from an extract stage, in order of
				    * first occurrence, or NULL */
	size_t n_items;
	size_t n_items_dropped;    /* distinct items over its max_items */
	const char *must_keep;     /* set by verify with a rerun request: facts a
				    * model summary must keep, or NULL */
	struct lp_rerun rerun;     /* set by a stage, acted on by the runner */
	const char **topics;       /* stages/topics.h, kept for the next stage */
	size_t n_topics, topics_asked;
	uint64_t topics_key;       /* of the text they were drawn from */

	struct lp_verify_result verify;

	struct lp_stage_trace *trace; /* [n_trace], one per stage run (a rerun
				       * adds entries) */
	size_t n_trace, cap_trace;

	struct lp_docstore *store;  /* where the parsed form came from and
				     * indexes are kept (engine/docstore.h),
				     * or NULL: the doc makes its own */
	const struct lp_document *shared_src; /* held from the store; src is a
				     * copy of it, released by putting it back */
	char store_key[96];         /* the document's key in the store */
	struct lp_engine *engine;   /* what outlives the document (engine/
				     * engine.h), or NULL: the doc then opens
				     * and frees its own session and embedder */
	struct lp_session *session; /* the model, acquired by the first model
				     * stage (stages/model_stage.h) from the
				     * engine, released (or, without an
				     * engine, freed) at the end of the run
				     * (lp_doc_release_model) */
};

/*
 * The chunks the next stage should work on, in order: the selection when a
 * retrieve stage made one, else every chunk (the identity selection is then
 * stored, so later stages see the same set). Writes the count to *n and returns
 * an array of chunk indices owned by the doc (valid until the next stage
 * changes the selection).
 */
const size_t *lp_doc_working_set(struct lp_doc *doc, size_t *n);

/*
 * The working set best first: by the last scorer's score, ties in
 * working-set order. A stage that must cut its input to a budget takes
 * from the front of this list, so the cut drops the lowest-scored chunks
 * whatever order the selection is presented in (retrieve `order:
 * document`). Returns an array of *n chunk indices in doc->arena, or NULL
 * when out of memory.
 */
size_t *lp_doc_best_first(struct lp_doc *doc, size_t *n);

/*
 * Where text[off, off + len) came from, by the document model
 * (doc/model.h): the kind of its first block, its section path ("OPTIONS ›
 * --delete", "" under no heading), its first page (0: unpaged) and its
 * original bytes: exact where the range starts or ends inside a block
 * that is the source's own bytes (verbatim), else the bytes of the blocks
 * it overlaps (a repaired or converted block maps only as a whole). A
 * document without blocks reports a paragraph at the same offsets.
 */
struct lp_doc_where {
	enum lp_block_kind kind;
	char section[256];
	unsigned page;
	size_t src_off, src_len;
};
void lp_doc_where(const struct lp_doc *doc, size_t off, size_t len, struct lp_doc_where *w);

/* A chunk's citation as text output shows it: "[chunk 127 · OPTIONS ›
 * --delete]", "[chunk 3 · p. 14]", or "[chunk 5]" with neither; into buf
 * (cap bytes). The place is the answer's quote's when the quote is in the
 * chunk, else the chunk's start. */
void lp_doc_citation(const struct lp_doc *doc, size_t chunk, char *buf, size_t cap);

/*
 * 1 when t[0, n) names the document itself: it is in its first block (a
 * document opens with its name), or it is the initials of a run of its
 * capitalised words ("MPL" of "Mozilla Public License Version 2.0",
 * "GPL" of "GNU GENERAL PUBLIC LICENSE"). Every sentence is about the
 * document, so a question naming it ("What does \"Executable Form\" mean
 * in the MPL?") asks about what else it names.
 */
int lp_doc_names_itself(const struct lp_doc *doc, const char *t, size_t n);

/* Whether `question` names the term of DEF_TERM block t (one of its
 * alternatives, "--verbose, -v", each up to its first space, '=' or '[',
 * as a whole token, case kept); *only: the question's other words only
 * ask what the term is ("what does ... do"). */
int lp_doc_names_term(const struct lp_doc *doc, size_t t, const char *question, int *only);

/* For a retrieve stage: chunks set[0..n) that hold the term of an entry
 * the question names, or the start of its body, get the best score added
 * to theirs in scores[], so that the entry's own definition is among the
 * passages. */
void lp_doc_prefer_entries(const struct lp_doc *doc, const char *question, const size_t *set,
			   size_t n, double *scores);

/* Room in the doc arena for a summary level of up to n texts (and one
 * more, so a level still empty can be indexed); l->n is 0. LP_OK, or
 * LP_E_NOMEM with `d` filled. */
enum lp_status lp_doc_level_alloc(struct lp_doc *doc, struct lp_summary_level *l, size_t n,
				  struct lp_diag *d);

/* "LABEL levels: 12 -> 3 -> 1" of doc->levels (without LABEL when NULL),
 * with "; tokens in/out: IN/OUT ..." per level when `tokens`: a stage's
 * note, in the doc arena (NULL when out of memory). */
const char *lp_doc_levels_note(struct lp_doc *doc, const char *label, int tokens);

/* The final product: answer, else summary, else the selected (or all)
 * chunks joined by blank lines. Owned by the doc; NULL when out of memory. */
const char *lp_doc_result(struct lp_doc *doc);

/*
 * Set the note of the stage now running, printf style:
 *     lp_doc_note(doc, "kept %zu of %zu chunks", k, n);
 * The runner appends the stage's trace entry before it calls run(), so the
 * entry being written is always doc->trace[doc->n_trace - 1]. A stage that
 * sets no note gets one the runner derives from what changed in the doc.
 * Does nothing when no stage is running; the note is dropped when out of
 * memory (it is informative only).
 */
void lp_doc_note(struct lp_doc *doc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Append an event to the running stage's trace entry (and log it at debug
 * level), printf style. Dropped, like a note, when no stage runs or memory
 * is short; counted in n_events_dropped instead of kept once the stage
 * holds LP_DOC_EVENTS_PER_KIND events of its kind.
 */
void lp_doc_event(struct lp_doc *doc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* `engine` may be NULL (see struct lp_doc). */
void lp_doc_init(struct lp_doc *doc, const struct lp_pipeline *p);
void lp_doc_init_engine(struct lp_doc *doc, const struct lp_pipeline *p,
			struct lp_engine *engine);
void lp_doc_release(struct lp_doc *doc);
/* Give back the model (to the engine, or free it) once no stage needs it:
 * the runner does so at the end of a run, so a result kept for its report
 * does not keep a model loaded. lp_doc_release does it too. */
void lp_doc_release_model(struct lp_doc *doc);

#endif
