/*
 * answer.c - the answer stage: the model answers a question from the best
 * evidence of the working set, and the stage checks what it wrote.
 *
 *     - answer: {question: "${question}", max_tokens: 64, context: chunks,
 *                evidence: sentences, budget: 384, quote: true, retries: 1,
 *                language: auto}
 *
 * A 0.1-0.5B model answers well from a few hundred tokens that hold the
 * answer and badly from a full context that buries it, and it does not
 * quote or cite reliably, so the stage does that part:
 *
 * Evidence. The working set is taken best first (lp_doc_best_first), so a
 * budget cut drops the lowest-scored chunks whatever order retrieve left.
 * `evidence: chunks` gives whole chunks; `evidence: sentences` gives the
 * sentences of those chunks that best match the question (each with the
 * sentence after it), grouped under their chunk id. Either stops at
 * `budget` tokens (0: what the context holds).
 *
 * Quote, then answer (`quote: true`). Step 1 asks the model to copy the
 * sentence that answers the question; the stage looks for it in the chunks
 * given (lp_evidence_quote_match, a share of LP_ANSWER_QUOTE_MATCH of its
 * words in order). Not found: up to `retries` more tries with half the
 * evidence each; still not found: the best-ranked sentence takes its
 * place. Step 2 asks for a short answer from that sentence alone, then,
 * when that answer does not stand on it (most of its content words and
 * every number held, for a question asking a quantity a number of its
 * kind, and for a name of one of the things the sentence sets side by
 * side the side the question asks about, on_asked_side), from the
 * sentence and the one after it. An answer
 * that still does not stand is replaced by the sentences themselves, when
 * they hold LP_ANSWER_WEAK_COVER of the question; holding less, they are
 * too weak a match to pass for the answer, and the stage abstains ("The
 * document does not say.") with them on a "Nearest:" line. The stage also
 * abstains when the document never names the question's focus, the
 * sentence does not, or a quantity asked for has no number near it.
 * doc->answer_check says which of these happened, and the output shows
 * the sentence as it is in the source:
 *
 *     60 seconds
 *
 *     Quote: "The default is 60 seconds."
 *     Sources: [chunk 261]
 *
 * Verbatim (`reply: verbatim`, or `auto` for a request such as "Quote
 * the clause about X", text/request.h). The request's topic is the
 * question; the quote's sentence is taken, or a title that holds the
 * topic, and the reply is its passage as the source has it (the block,
 * an entry with its term, a title with the blocks under it) when that
 * holds LP_ANSWER_PASSAGE_COVER of the topic; else the stage abstains.
 * No model runs for it.
 *
 * Citations. A "[chunk N]" whose N was not given is removed; a cited
 * chunk holding none of the answer's content words (lp_evidence_support)
 * is dropped; when none is left, the chunk of the quote is cited, or
 * without a quote the given chunks that hold the most of those words.
 * doc->cited holds the same ids as the "Sources:" line.
 *
 * Language. Prompts are in the document's language (`language: auto`
 * reads its script, text/lang.h): English, or Chinese for Han text.
 *
 * `context: both|summary` puts the summary of an earlier summarize stage
 * in step 1's prompt; `with_summary: true` prints it after the answer
 * instead, leaving the model to answer from the evidence alone.
 *
 * on_oom shrink: when the budget refuses a step, it is retried with half
 * the chunks (an event says so) until one is left.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/mem.h"
#include "text/evidence.h"
#include "retrieve/embscore.h"
#include "retrieve/fusion.h"
#include "stages/dense.h"
#include "stages/model_stage.h"
#include "stages/prompts.h"
#include "stages/stage.h"
#include "text/focus.h"
#include "text/ground.h"
#include "text/match.h"
#include "text/points.h"
#include "text/request.h"
#include "text/sides.h"
#include "text/terms.h"
#include "text/lang.h"

/* Share of a quote's words that must occur, in order, in a source
 * sentence for the quote to count as found. */
#define LP_ANSWER_QUOTE_MATCH 0.75

/* A sentence's bonus for its chunk's retrieval score, relative to the
 * best chunk's: at 20 (the idf of a question word is a few units) the
 * sentences of the best chunk come first unless they share no word with
 * the question. On 18 questions over three manuals the best-ranked
 * sentence held the answer 10 times at 20, 9 at 0, 2 and 6. */
#define LP_ANSWER_CHUNK_PRIOR 20.0

/* Focus tokens of a question looked at (text/focus.h). */
#define LP_ANSWER_MAX_FOCUS 8

/* Longest entry term given as the answer to "Which variable ...?". */
#define LP_ANSWER_TERM_BYTES 80

/* Passages cited when the stage abstains: the nearest to the question. */
#define LP_ANSWER_NEAREST 3

/* When the model's answer does not stand on the best sentence, that
 * sentence is the answer only if it holds this share of the question
 * (its terms' idf, lp_evidence_sent.cover); below it the stage abstains
 * and shows it as the nearest. On the dev split's 114 questions, of the
 * 36 such sentences the 13 under 0.4 held 2 right answers. */
#define LP_ANSWER_WEAK_COVER 0.4

/* An answer naming a thing of one side of its sentence stands only when
 * no other side that names a thing holds this much more of the question
 * (lp_evidence_cover) than its own: on_asked_side. */
#define LP_ANSWER_SIDE_MARGIN 0.2
#define LP_ANSWER_MAX_SIDES 16

/* Checked tokens of an answer looked up (text/ground.h); more are not. */
#define LP_ANSWER_MAX_TOKENS 16

/* Longest passage a verbatim reply gives whole (`reply: verbatim`): the
 * block that holds the best sentence, about 250 words; a longer block
 * gives that sentence alone. */
#define LP_ANSWER_CLAUSE_BYTES 1600

/* Share of a request for the document's words (lp_evidence_cover) that
 * a title must hold to be the passage asked for, the section under it. */
#define LP_ANSWER_TITLE_COVER 0.75

/* Share of a request for the document's words that the passage given
 * must hold (lp_evidence_cover, its terms weighed by idf). On the dev
 * split's quote requests, the passages asked for held all of theirs, the
 * one for a topic the document lacks 47% ("Haskell" of "the Haskell type
 * classes"). */
#define LP_ANSWER_PASSAGE_COVER 0.6

/* Tokens step 1 may write: one sentence and its id. */
#define QUOTE_TOKENS 96

enum context { CONTEXT_BOTH, CONTEXT_CHUNKS, CONTEXT_SUMMARY };
enum evidence { EVIDENCE_CHUNKS, EVIDENCE_SENTENCES };
enum language { LANG_AUTO, LANG_EN, LANG_ZH };
enum quote { QUOTE_OFF, QUOTE_MODEL, QUOTE_RANKED };
enum reply { REPLY_AUTO, REPLY_MODEL, REPLY_VERBATIM };
enum rerank { RERANK_LEXICAL, RERANK_DENSE, RERANK_MODEL };

static const char *const context_names[] = { "both", "chunks", "summary", NULL };
static const char *const evidence_names[] = { "chunks", "sentences", NULL };
static const char *const language_names[] = { "auto", "en", "zh", NULL };
static const char *const quote_names[] = { "off", "model", "ranked", NULL };
static const char *const reply_names[] = { "auto", "model", "verbatim", NULL };
static const char *const rerank_names[] = { "lexical", "dense", "model", NULL };

struct answer_opts {
	const char *question;  /* NULL: doc->question */
	long long max_tokens;
	enum context context;
	const char *prompt;    /* NULL: the phrasebook's */
	enum evidence evidence;
	long long budget;      /* evidence tokens, 0: what fits */
	enum quote quote;      /* where the quote comes from, or off */
	enum reply reply;      /* model's words, the passage, or by the question */
	long long retries;     /* more quote tries */
	enum language language;
	int with_summary;      /* print the summary after the answer */
	enum rerank rerank;    /* the sentence ranking: by words, or fused
				* with the dense embedder's cosine or the
				* model's likelihood of the question */
	enum lp_device device; /* the pipeline's retrieval.device, for it */
};

static enum lp_status parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
			    const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "question", "max_tokens", "context", "prompt",
					    "prompt_file", "evidence", "budget", "quote",
					    "retries", "language", "with_summary", "reply",
					    "rerank", NULL };
	struct answer_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	int ctx = CONTEXT_BOTH, ev = EVIDENCE_CHUNKS, lang = LANG_AUTO, quote = QUOTE_OFF;
	int rep = REPLY_AUTO, rer = RERANK_LEXICAL;

	if (!o)
		return lp_cfg_nomem(c);
	if (lp_cfg_check_keys(c, opts, keys) ||
	    lp_cfg_get_string(c, opts, "question", NULL, &o->question) ||
	    lp_cfg_get_int(c, opts, "max_tokens", 200, 1, 1000000, &o->max_tokens) ||
	    lp_cfg_get_enum(c, opts, "context", context_names, CONTEXT_BOTH, &ctx) ||
	    lp_cfg_get_enum(c, opts, "evidence", evidence_names, EVIDENCE_CHUNKS, &ev) ||
	    lp_cfg_get_int(c, opts, "budget", 0, 0, 1000000, &o->budget) ||
	    lp_cfg_get_enum(c, opts, "quote", quote_names, QUOTE_OFF, &quote) ||
	    lp_cfg_get_int(c, opts, "retries", 1, 0, 8, &o->retries) ||
	    lp_cfg_get_enum(c, opts, "language", language_names, LANG_AUTO, &lang) ||
	    lp_cfg_get_bool(c, opts, "with_summary", 0, &o->with_summary) ||
	    lp_cfg_get_enum(c, opts, "reply", reply_names, REPLY_AUTO, &rep) ||
	    lp_cfg_get_enum(c, opts, "rerank", rerank_names, RERANK_LEXICAL, &rer) ||
	    lp_stage_parse_prompt(c, opts, p, &o->prompt))
		return LP_E_CONFIG;
	if (rep == REPLY_VERBATIM && quote != QUOTE_RANKED && quote != QUOTE_MODEL)
		return lp_cfg_error(c, lp_node_get(opts, "reply"),
				    "'reply: verbatim' gives the passage of a quote: set "
				    "'quote: ranked' (or model)");
	/* a verbatim reply of the ranked quote asks no model */
	if (!(p && p->model.present) && !(rep == REPLY_VERBATIM && quote == QUOTE_RANKED))
		return lp_cfg_error(c, opts, "answer needs a model: add a model section");
	if (o->question && !*o->question)
		o->question = NULL; /* "${question}" without -q */
	if (o->budget && o->budget < LP_STAGE_MIN_INPUT)
		return lp_cfg_error(c, lp_node_get(opts, "budget"),
				    "'budget' must be 0 (what fits) or at least %d tokens",
				    LP_STAGE_MIN_INPUT);
	o->context = (enum context)ctx;
	o->evidence = (enum evidence)ev;
	o->language = (enum language)lang;
	o->quote = (enum quote)quote;
	o->reply = (enum reply)rep;
	o->rerank = (enum rerank)rer;
	o->device = p ? p->retrieval.device : LP_DEVICE_CPU;
	*out = o;
	return LP_OK;
}

static void describe(const void *opts, struct lp_buf *out)
{
	const struct answer_opts *o = opts;

	lp_buf_adds(out, "{");
	if (o->question) {
		lp_buf_adds(out, "question: ");
		lp_cfg_quote(out, o->question);
		lp_buf_adds(out, ", ");
	}
	lp_buf_addf(out, "max_tokens: %lld, context: %s, evidence: %s, budget: %lld, "
		    "quote: %s, retries: %lld, language: %s, with_summary: %s, reply: %s, "
		    "rerank: %s",
		    o->max_tokens, context_names[o->context], evidence_names[o->evidence],
		    o->budget, quote_names[o->quote], o->retries,
		    language_names[o->language], o->with_summary ? "true" : "false",
		    reply_names[o->reply], rerank_names[o->rerank]);
	if (o->prompt)
		lp_stage_describe_prompt(out, o->prompt);
	lp_buf_adds(out, "}");
}

/* One run of the stage: what every step shares. */
struct job {
	struct lp_doc *doc;
	struct lp_session *s;
	const struct answer_opts *o;
	const struct lp_answer_prompts *pb;
	const char *question;
	struct lp_evidence_src *corpus; /* [doc->n_chunks] every chunk, for idf */
	size_t *ids;      /* [n_ids] chunk ids given in the prompt, best first */
	size_t n_ids;
	struct lp_span focus[LP_ANSWER_MAX_FOCUS]; /* bytes of question (text/focus.h) */
	size_t n_focus;
	char doc_names[64]; /* the question's tokens that name the document
			     * (lp_doc_names_itself), space-separated */
	size_t n_doc_names; /* bytes */
	enum lp_asks asks;
	struct lp_span kind; /* bytes of question: the kind of name asked for */
	struct lp_buf user;
	size_t n_in, n_out; /* tokens, all steps */
};

/* Add the evidence of `best[0..n)` (chunk ids, best first) as whole chunks
 * to j->user within `budget` tokens, `used` spent already. */
static enum lp_status add_chunks(struct job *j, const size_t *best, size_t n, size_t budget,
				 size_t used, struct lp_diag *d)
{
	for (size_t i = 0; i < n; i++) {
		const struct lp_chunk *c = &j->doc->chunks[best[i]];
		char head[40];
		size_t keep = c->len, t, th;
		snprintf(head, sizeof(head), "[chunk %zu] ", best[i]);
		th = lp_session_count_tokens(j->s, head, strlen(head)) + 2;
		if (used + th + LP_STAGE_MIN_INPUT > budget)
			break;
		t = lp_session_count_tokens(j->s, j->doc->text + c->off, c->len);
		if (used + th + t > budget &&
		    lp_session_prefix_bytes(j->s, j->doc->text + c->off, c->len,
					    budget - used - th, &keep, d))
			return LP_E_NOMEM;
		lp_buf_addf(&j->user, "%s%.*s\n\n", head, (int)keep, j->doc->text + c->off);
		used += th + (keep < c->len ? budget - used - th : t);
		j->ids[j->n_ids++] = best[i];
	}
	return LP_OK;
}

/* A sentence picked for the prompt: bytes of doc->text. */
struct pick {
	size_t chunk, off, len;
};

static int cmp_pick(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;
	return (x->off > y->off) - (x->off < y->off);
}

static int picked(const struct pick *p, size_t n, size_t off)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].off == off)
			return 1;
	return 0;
}

/* ---- definitions: the entry of the term a question names ---- */

/*
 * The document model knows a definition's term from its body: when the
 * question names the term of an entry ("What does --delete do?"), the
 * sentences of that entry's body rank above every other sentence (by the
 * best score, so their own order stands), and when the question asks no
 * more than what the term is, the entry's first sentence (its
 * definition) comes first. Sentences that only mention the term elsewhere
 * ("--delete may be combined with --delete-WHEN") keep their score.
 */
static void prefer_entries(const struct job *j, const struct lp_evidence_src *src,
			   struct lp_evidence_sent *sent, size_t n)
{
	const struct lp_doc *doc = j->doc;
	const struct lp_doc_model *m = &doc->src.model;
	double top = 0;
	size_t last_t = LP_DOC_NONE;
	int named = 0, only = 0, changed = 0;

	/* "Which builtin is a synonym for mapfile?" asks for another entry
	 * than the one it names */
	if (!n || !m->n_kind[LP_BLOCK_DEF_BODY] || !j->question || j->asks == LP_ASKS_NAME)
		return;
	top = sent[0].score > 0 ? sent[0].score : 1;
	for (size_t i = 0; i < n; i++) {
		size_t off = (size_t)(src[sent[i].src].text - doc->text) + sent[i].off;
		size_t b = lp_doc_model_find(m, off), t;

		if (b == LP_DOC_NONE || m->blocks[b].kind != LP_BLOCK_DEF_BODY ||
		    (t = m->blocks[b].term) == LP_DOC_NONE)
			continue;
		if (t != last_t) {
			named = lp_doc_names_term(doc, t, j->question, &only);
			last_t = t;
		}
		if (!named)
			continue;
		sent[i].score += top;
		if (only && b == t + 1 && off <= m->blocks[b].off + 1)
			sent[i].score += top;
		changed = 1;
	}
	if (changed)
		lp_evidence_sort(sent, n);
}

/* ---- focus: what the question names and asks for ---- */

/* The text around a sentence that may name what a question asks about:
 * the sentence, its block, its entry's term and its section path
 * ("'BASHPID'" names the entry whose body says "$$"). */
struct near {
	const char *sent, *block, *term;
	size_t sent_len, block_len, term_len;
	char path[512];
};

/* The surroundings of the sentence doc->text[off, off + len), read once
 * for every token looked for in them. */
static void near_of(const struct lp_doc *doc, size_t off, size_t len, struct near *nr)
{
	const struct lp_doc_model *m = &doc->src.model;
	size_t b = m->n_blocks ? lp_doc_model_find(m, off) : LP_DOC_NONE;

	memset(nr, 0, sizeof(*nr));
	nr->sent = doc->text + off;
	nr->sent_len = len;
	if (b == LP_DOC_NONE)
		return;
	nr->block = doc->text + m->blocks[b].off;
	nr->block_len = m->blocks[b].len;
	if (m->blocks[b].term != LP_DOC_NONE) {
		nr->term = doc->text + m->blocks[m->blocks[b].term].off;
		nr->term_len = m->blocks[m->blocks[b].term].len;
	}
	lp_doc_model_section_path(m, b, nr->path, sizeof(nr->path));
}

/* Whether the surroundings name t[0, n). */
static int named_near(const struct near *nr, const char *t, size_t n)
{
	return lp_focus_held(nr->sent, nr->sent_len, t, n) ||
	       (nr->block && lp_focus_held(nr->block, nr->block_len, t, n)) ||
	       (nr->term && lp_focus_held(nr->term, nr->term_len, t, n)) ||
	       lp_focus_held(nr->path, strlen(nr->path), t, n);
}

/* How many of the question's focus tokens are named around the sentence
 * doc->text[off, off + len). */
static size_t focus_near(const struct job *j, size_t off, size_t len)
{
	struct near nr;
	size_t held = 0;

	near_of(j->doc, off, len, &nr);
	for (size_t i = 0; i < j->n_focus; i++)
		held += named_near(&nr, j->question + j->focus[i].off, j->focus[i].len);
	return held;
}

/* 1 when every name the answer a[0, n) gives (its focus tokens: an option,
 * a name in capitals, ...) is named around the sentence f: "The builtin
 * -S sets the mask" does not stand on a sentence about -n. */
static int names_stand(const struct job *j, const char *a, size_t n, size_t off, size_t len)
{
	struct near nr;
	struct lp_span t;

	near_of(j->doc, off, len, &nr);
	for (size_t pos = 0; lp_focus_next(a, n, &pos, &t);)
		if (!named_near(&nr, a + t.off, t.len))
			return 0;
	return 1;
}

/* 1 when the sentence sp of source c, or the one after it, holds the
 * kind of number a question asking for a quantity needs (a version, a
 * year, a price, a size, or any). */
static int number_near(const struct job *j, const struct lp_evidence_src *c, struct lp_span sp)
{
	size_t pos = sp.off + sp.len;
	struct lp_span next;

	return lp_focus_quantity_held(j->question, c->text + sp.off, sp.len) ||
	       (lp_sentence_next(c->text, c->len, &pos, &next) &&
		lp_focus_quantity_held(j->question, c->text + next.off, next.len));
}

/*
 * What the question names and asks for, in the ranking: a sentence gains
 * the best score times the share of the question's focus tokens named
 * around it (focus_near), and when the question asks for a quantity, a
 * sentence with no number near it falls below every one that has one.
 */
static void prefer_answer_type(const struct job *j, const struct lp_evidence_src *src,
			       struct lp_evidence_sent *sent, size_t n)
{
	double top;

	if (!n || (!j->n_focus && j->asks != LP_ASKS_QUANTITY))
		return;
	top = sent[0].score > 0 ? sent[0].score : 1;
	for (size_t i = 0; i < n; i++) {
		const struct lp_evidence_src *c = &src[sent[i].src];
		size_t off = (size_t)(c->text - j->doc->text) + sent[i].off;

		if (sent[i].score <= 0)
			continue;
		if (j->n_focus)
			sent[i].score += top * (double)focus_near(j, off, sent[i].len) /
					 (double)j->n_focus;
		if (j->asks == LP_ASKS_QUANTITY &&
		    !number_near(j, c, (struct lp_span){ sent[i].off, sent[i].len }))
			sent[i].score *= 1e-3;
	}
	lp_evidence_sort(sent, n);
}

/*
 * A heading names what its section is about, so it shares the question's
 * words more densely than any sentence below it, yet it states nothing
 * ("Enforcing Borrowing Rules at Runtime with RefCell<T>" does not say
 * what RefCell enforces). Headings rank below every other sentence; the
 * citation still names them, as the chunk's section path.
 */
static void demote_headings(const struct lp_doc *doc, const struct lp_evidence_src *src,
			    struct lp_evidence_sent *sent, size_t n)
{
	const struct lp_doc_model *m = &doc->src.model;
	int changed = 0;

	if (!m->n_kind[LP_BLOCK_HEADING])
		return;
	for (size_t i = 0; i < n; i++) {
		size_t off = (size_t)(src[sent[i].src].text - doc->text) + sent[i].off;
		size_t b = lp_doc_model_find(m, off);

		if (b != LP_DOC_NONE && m->blocks[b].kind == LP_BLOCK_HEADING && sent[i].score > 0) {
			sent[i].score = 0;
			changed = 1;
		}
	}
	if (changed)
		lp_evidence_sort(sent, n);
}

/* ---- dense rerank: what the sentence means, beside its words ---- */

/*
 * `rerank: dense`. Shared words pick the passage well but the sentence
 * less well: "Who is the license steward of the MPL?" shares more words
 * with the sentence that tells how to rename a modified licence "(remove
 * any references to the name of the license steward)" than with "Mozilla
 * Foundation is the license steward." The LP_ANSWER_DENSE_TOP best
 * sentences are embedded with the question (the dense embedder, dense.h)
 * and each score, as a share of the best, gains LP_ANSWER_DENSE_WEIGHT
 * times its cosine with the question, scaled down as the embedder's
 * vocabulary covers less of the text (retrieve/fusion.h: nothing for
 * Chinese under MiniLM). Without the model the ranking stays by words,
 * and an event says so.
 */
/* Both reranks: each of the n scores becomes its share of the best, plus
 * bonus[i] for the first m (the rerank's own measure), and the sentences
 * are sorted again. */
static void add_rerank_bonus(struct lp_evidence_sent *sent, size_t n, const double *bonus,
			     size_t m)
{
	double top = sent[0].score;

	for (size_t i = 0; i < n; i++)
		sent[i].score = sent[i].score / top + (i < m ? bonus[i] : 0);
	lp_evidence_sort(sent, n);
}

/* A rerank that cannot run leaves the words' ranking and says why. */
static void words_alone(const struct job *j, const char *why)
{
	lp_doc_event(j->doc, "rerank: %s; sentences ranked by their words alone", why);
}

#define LP_ANSWER_DENSE_TOP 16
#define LP_ANSWER_DENSE_WEIGHT 2.0

static enum lp_status rerank_dense(const struct job *j, const struct lp_evidence_src *src,
				   struct lp_evidence_sent *sent, size_t n, struct lp_diag *d)
{
	struct lp_embedder *e = NULL;
	const char **texts = NULL;
	size_t *lens = NULL, m = 0;
	double *cos = NULL, cov = 0, w = LP_ANSWER_DENSE_WEIGHT;
	enum lp_status st;

	while (m < n && m < LP_ANSWER_DENSE_TOP && sent[m].score > 0)
		m++;
	if (m < 2 || !j->question)
		return LP_OK;
	texts = lp_mem_alloc(LP_MEM_SCRATCH, m * sizeof(*texts), d);
	lens = lp_mem_alloc(LP_MEM_SCRATCH, m * sizeof(*lens), d);
	cos = lp_mem_alloc(LP_MEM_SCRATCH, m * sizeof(*cos), d);
	st = texts && lens && cos ? LP_OK : LP_E_NOMEM;
	for (size_t i = 0; st == LP_OK && i < m; i++) {
		texts[i] = src[sent[i].src].text + sent[i].off;
		lens[i] = sent[i].len;
	}
	if (st == LP_OK) {
		st = lp_stage_dense_borrow(j->doc, j->o->device, &e, d);
		if (st == LP_E_MODEL || st == LP_E_NOMEM) {
			/* the rerank is a refinement: without the model, or
			 * without the memory for it, the words still rank */
			words_alone(j, d->msg[0] ? d->msg : "out of memory for the dense embedder");
			lp_diag_init(d);
			st = LP_OK;
			goto out;
		}
	}
	if (st == LP_OK)
		st = lp_stage_vocab_coverage(e, "answer", j->question, strlen(j->question), texts,
					     lens, m, &cov, d);
	w *= lp_fusion_coverage_scale(cov);
	if (st == LP_OK && w > 0)
		st = lp_embscore(e, NULL, texts, lens, m, j->question, strlen(j->question), cos,
				 NULL, d);
	if (st == LP_OK && w > 0) {
		for (size_t i = 0; i < m; i++)
			cos[i] *= w;
		add_rerank_bonus(sent, n, cos, m);
	}
out:
	lp_stage_dense_return(j->doc, e);
	lp_mem_free(texts);
	lp_mem_free(lens);
	lp_mem_free(cos);
	return st;
}

/* ---- model rerank: which sentence the question is asked of ---- */

/*
 * `rerank: model`. The answer's model reads each of the LP_ANSWER_MODEL_TOP
 * best sentences and is asked how likely the question is as a question
 * about it (the mean log-probability of the question's tokens after a
 * prompt that gives the sentence, lp_session_score): the sentence a
 * question was written from makes it likely, one that only shares its
 * words less so. Each score, as a share of the best, gains
 * LP_ANSWER_MODEL_WEIGHT times its log-probability's lead over the least
 * of them. A served model gives no probabilities, and a budget may not
 * hold their logits (LP_SESSION_SCORE_MAX rows of the vocabulary): the
 * ranking then stays by words, and an event says so.
 */
#define LP_ANSWER_MODEL_TOP 4
#define LP_ANSWER_MODEL_WEIGHT 1.0
#define LP_ANSWER_MODEL_SENTENCE 600  /* bytes of a sentence it reads */

/* Whether msg and q_tokens of the question (what lp_session_score reads
 * of it) fit the session's context. */
static int fits_context(const struct job *j, const struct lp_chat_msg *msg, size_t q_tokens,
			struct lp_diag *d)
{
	size_t over = 0;

	if (lp_session_overhead(j->s, msg, 1, &over, d)) {
		lp_diag_init(d);
		return 0;
	}
	return over + lp_session_count_tokens(j->s, msg->content, strlen(msg->content)) +
		       q_tokens <= lp_session_n_ctx(j->s);
}

static enum lp_status rerank_model(const struct job *j, const struct lp_evidence_src *src,
				   struct lp_evidence_sent *sent, size_t n, struct lp_diag *d)
{
	double lp[LP_ANSWER_MODEL_TOP], least = 0;
	size_t m = 0, q_tokens;
	const char *alone = NULL;  /* why the words rank alone */
	struct lp_buf u;
	enum lp_status st = LP_OK;

	while (m < n && m < LP_ANSWER_MODEL_TOP && sent[m].score > 0)
		m++;
	if (m < 2 || !j->question || !j->s)
		return LP_OK;
	q_tokens = lp_session_count_tokens(j->s, j->question, strlen(j->question));
	if (q_tokens > LP_SESSION_SCORE_MAX)
		q_tokens = LP_SESSION_SCORE_MAX;
	lp_buf_init(&u);
	for (size_t i = 0; st == LP_OK && !alone && i < m; i++) {
		struct lp_chat_msg msg[1];
		const char *text = src[sent[i].src].text + sent[i].off;
		size_t len = sent[i].len < LP_ANSWER_MODEL_SENTENCE ? sent[i].len
								    : LP_ANSWER_MODEL_SENTENCE;
		while (len > 0 && len < sent[i].len && ((unsigned char)text[len] & 0xC0) == 0x80)
			len--;  /* a whole character last */
		lp_buf_reset(&u);
		if (lp_buf_adds(&u, "Passage: ") || lp_buf_add(&u, text, len) ||
		    lp_buf_adds(&u, "\nWrite a question that this passage answers.")) {
			alone = "out of memory for a rerank prompt";
			break;
		}
		msg[0].role = "user";
		msg[0].content = u.data;
		if (!fits_context(j, msg, q_tokens, d)) {
			alone = "a sentence and the question do not fit the model's context";
			break;
		}
		st = lp_session_score(j->s, msg, 1, j->question, &lp[i], d);
		if (st == LP_E_USAGE || st == LP_E_NOMEM) {
			/* a refinement, as the dense rerank: without the
			 * probabilities or the memory for them, words rank */
			alone = d->msg[0] ? d->msg : "out of memory for the model's scores";
			st = LP_OK;
		} else if (st == LP_OK && (i == 0 || lp[i] < least)) {
			least = lp[i];
		}
	}
	lp_buf_release(&u);
	if (alone) {
		words_alone(j, alone);
		lp_diag_init(d);
		return LP_OK;
	}
	if (st != LP_OK)
		return st;
	for (size_t i = 0; i < m; i++)
		lp[i] = LP_ANSWER_MODEL_WEIGHT * (lp[i] - least);
	add_rerank_bonus(sent, n, lp, m);
	return LP_OK;
}

/* The order the document's structure (and, with `rerank: dense`, the
 * sentences' meaning) gives the ranked sentences. */
static enum lp_status rank_by_structure(const struct job *j, const struct lp_evidence_src *src,
					struct lp_evidence_sent *sent, size_t n,
					struct lp_diag *d)
{
	enum lp_status st = LP_OK;

	demote_headings(j->doc, src, sent, n);
	if (j->o->rerank == RERANK_DENSE)
		st = rerank_dense(j, src, sent, n, d);
	else if (j->o->rerank == RERANK_MODEL)
		st = rerank_model(j, src, sent, n, d);
	prefer_answer_type(j, src, sent, n);
	prefer_entries(j, src, sent, n);
	return st;
}

/* Where chunk c's first whole sentence starts: a chunk that overlaps the
 * one before it may start inside a sentence ("can be used to search
 * package names ..." of 'The "dpkg -S file_name_pattern" can be used
 * ...'), and that piece, shorter than the sentence, would outrank it. */
static size_t whole_sentence_start(const struct lp_doc *doc, size_t c)
{
	const struct lp_chunk *k = &doc->chunks[c], *before = c ? &doc->chunks[c - 1] : NULL;
	size_t pos, end = k->off + k->len;
	struct lp_span sp;

	if (!before || before->off + before->len <= k->off || before->off >= k->off)
		return k->off;
	pos = before->off;
	while (lp_sentence_next(doc->text, end, &pos, &sp) && sp.off + sp.len <= k->off)
		;
	if (pos > k->off && sp.off < k->off) /* k starts inside sp */
		return sp.off + sp.len < end ? sp.off + sp.len : k->off;
	return k->off;
}

/* The sources lp_evidence_rank reads: chunks best[0..n), each from its
 * first whole sentence. Scratch memory. */
static struct lp_evidence_src *sources(const struct lp_doc *doc, const size_t *best, size_t n,
				       struct lp_diag *d)
{
	struct lp_evidence_src *src = lp_mem_alloc(LP_MEM_SCRATCH, (n + 1) * sizeof(*src), d);
	double top = n ? doc->chunks[best[0]].score : 0;

	for (size_t i = 0; src && i < n; i++) {
		size_t from = whole_sentence_start(doc, best[i]);

		/* a chunk's score over its whole text is a surer sign than a
		 * sentence's few words: rank by chunk first (see the macro) */
		src[i].prior = top > 0 ? LP_ANSWER_CHUNK_PRIOR * doc->chunks[best[i]].score / top : 0;
		src[i].id = best[i];
		src[i].text = doc->text + from;
		src[i].len = doc->chunks[best[i]].off + doc->chunks[best[i]].len - from;
	}
	return src;
}

/* Choose sentences (best first, each with the one after it) until the
 * budget is spent; picks[] has room for every sentence twice over. */
static size_t choose(struct job *j, const struct lp_evidence_src *src,
		     const struct lp_evidence_sent *sent, size_t n_sent, size_t budget,
		     size_t used, struct pick *picks)
{
	size_t n = 0;

	for (size_t i = 0; i < n_sent; i++) {
		const struct lp_evidence_src *c = &src[sent[i].src];
		struct lp_span two[2] = { { sent[i].off, sent[i].len }, { 0, 0 } };
		size_t pos = sent[i].off + sent[i].len;
		int n_two = 1 + lp_sentence_next(c->text, c->len, &pos, &two[1]);

		if (sent[i].score <= 0 && n)
			break; /* the rest share no word with the question */
		for (int k = 0; k < n_two; k++) {
			size_t off = (size_t)(c->text - j->doc->text) + two[k].off, t;
			int first = 1;
			if (picked(picks, n, off))
				continue;
			for (size_t q = 0; q < n; q++)
				first &= picks[q].chunk != c->id;
			t = lp_session_count_tokens(j->s, c->text + two[k].off, two[k].len) + 1 +
			    (first ? 8 : 0); /* "[chunk N] " and the blank line */
			if (used + t > budget)
				return n;
			used += t;
			picks[n++] = (struct pick){ c->id, off, two[k].len };
		}
	}
	return n;
}

/* Add the best sentences of `best[0..n)` to j->user, grouped under their
 * chunk id, chunks in the order of their best sentence. */
static enum lp_status add_sentences(struct job *j, const size_t *best, size_t n,
				    size_t budget, size_t used, struct lp_diag *d)
{
	struct lp_evidence_src *src = sources(j->doc, best, n, d);
	struct lp_evidence_sent *sent = NULL;
	struct pick *picks = NULL;
	size_t n_sent = 0, n_picks;
	enum lp_status st = src ? LP_OK : LP_E_NOMEM;

	if (!st)
		st = lp_evidence_rank(src, n, j->corpus, j->doc->n_chunks, j->question,
				      strlen(j->question), &sent, &n_sent, d);
	if (!st)
		st = rank_by_structure(j, src, sent, n_sent, d);
	if (!st && !(picks = lp_mem_alloc(LP_MEM_SCRATCH, (2 * n_sent + 1) * sizeof(*picks), d)))
		st = LP_E_NOMEM;
	n_picks = st ? 0 : choose(j, src, sent, n_sent, budget, used, picks);
	for (size_t i = 0; i < n_picks; i++) {
		size_t id = picks[i].chunk, m = 0;
		int seen = 0;
		for (size_t k = 0; k < j->n_ids; k++)
			seen |= j->ids[k] == id;
		if (seen)
			continue;
		j->ids[j->n_ids++] = id;
		/* this chunk's picks, in document order */
		for (size_t k = i; k < n_picks; k++)
			if (picks[k].chunk == id) {
				struct pick t = picks[m + i];
				picks[m + i] = picks[k];
				picks[k] = t;
				m++;
			}
		qsort(picks + i, m, sizeof(*picks), cmp_pick);
		lp_buf_addf(&j->user, "[chunk %zu]", id);
		for (size_t k = i; k < i + m; k++)
			lp_buf_addf(&j->user, " %.*s", (int)picks[k].len, j->doc->text + picks[k].off);
		lp_buf_adds(&j->user, "\n\n");
		i += m - 1;
	}
	lp_mem_free(src);
	lp_mem_free(sent);
	lp_mem_free(picks);
	return st;
}

/* Build step 1's user message from at most max_chunks chunks within `budget`
 * tokens (and o->budget for the evidence). */
static enum lp_status build_user(struct job *j, const char *closing, size_t budget,
				 size_t max_chunks, struct lp_diag *d)
{
	const struct answer_opts *o = j->o;
	struct lp_buf *u = &j->user;
	size_t n = 0, used, *best;
	enum lp_status st = LP_OK;

	lp_buf_reset(u);
	j->n_ids = 0;
	if (o->context != CONTEXT_CHUNKS && j->doc->summary) {
		int cut;
		const char *sum = lp_stage_head_tokens(j->doc, j->s, j->doc->summary,
						       strlen(j->doc->summary), budget / 2, &cut, d);
		if (!sum)
			return LP_E_NOMEM;
		lp_buf_addf(u, "%s%s\n\n", j->pb->summary, sum);
	}
	lp_buf_addf(u, "%s%s\n\n%s", j->pb->question, j->question, j->pb->passages);
	used = lp_session_count_tokens(j->s, u->data, u->len) + 8 +
	       lp_session_count_tokens(j->s, j->question, strlen(j->question)) +
	       lp_session_count_tokens(j->s, closing, strlen(closing));
	if (o->budget && used + (size_t)o->budget < budget)
		budget = used + (size_t)o->budget;
	best = o->context == CONTEXT_SUMMARY && j->doc->summary ? NULL
							      : lp_doc_best_first(j->doc, &n);
	if (n > max_chunks)
		n = max_chunks;
	if (best && n)
		st = o->evidence == EVIDENCE_SENTENCES ? add_sentences(j, best, n, budget, used, d)
						       : add_chunks(j, best, n, budget, used, d);
	lp_buf_adds(u, closing);
	if (!st && (u->len == 0 || lp_buf_adds(u, "")))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the prompt");
	return st;
}

/*
 * Step 1, or the only step: the prompt from at most max_chunks chunks,
 * generated with `prefix` opening the reply. Shrinks on a refused budget
 * as the header says. *gen is the model's text (lp_mem_free).
 */
static enum lp_status ask(struct job *j, const char *system, const char *closing,
			  const char *prefix, size_t max_tokens, size_t max_chunks, char **gen,
			  struct lp_diag *d)
{
	struct lp_chat_msg m[2] = { { "system", system }, { "user", "" } };
	size_t budget, n_in = 0, n_out = 0;
	enum lp_status st;

	*gen = NULL;
	if ((st = lp_stage_input_budget(j->s, m, 2, max_tokens,
					lp_session_count_tokens(j->s, system, strlen(system)) +
					lp_session_count_tokens(j->s, prefix, strlen(prefix)),
					&budget, d)))
		return st;
	for (;;) {
		st = build_user(j, closing, budget, max_chunks, d);
		m[1].content = j->user.data;
		/* pieces were counted apart: check the whole, drop a chunk if over */
		if (!st && j->n_ids &&
		    lp_session_count_tokens(j->s, j->user.data, j->user.len) > budget) {
			max_chunks = j->n_ids - 1;
			continue;
		}
		if (!st)
			st = lp_session_generate(j->s, m, 2, prefix, max_tokens, gen, &n_in, &n_out, d);
		if (st != LP_E_NOMEM || !lp_stage_shrink(j->doc) || j->n_ids <= 1)
			break;
		lp_doc_event(j->doc, "shrink: answer context %zu -> %zu chunks (budget)", j->n_ids,
			     j->n_ids / 2);
		max_chunks = j->n_ids / 2;
		lp_diag_init(d);
	}
	j->n_in += n_in;
	j->n_out += n_out;
	return st;
}

static int given(const size_t *ids, size_t n_ids, size_t id)
{
	for (size_t i = 0; i < n_ids; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

void lp_stage_filter_citations(const char *gen, const size_t *ids, size_t n_ids,
			       struct lp_buf *out, size_t *cited, size_t *n_cited)
{
	const char *p = gen;

	*n_cited = 0;
	while (*p) {
		char *end;
		unsigned long long id;
		size_t k;
		if (*p != '[' || strncasecmp(p + 1, "chunk ", 6) || !isdigit((unsigned char)p[7])) {
			lp_buf_addc(out, *p++);
			continue;
		}
		id = strtoull(p + 7, &end, 10);
		if (*end != ']') {
			lp_buf_addc(out, *p++);
			continue;
		}
		if (given(ids, n_ids, (size_t)id)) {
			lp_buf_add(out, p, (size_t)(end + 1 - p));
			for (k = 0; k < *n_cited && cited[k] != id; k++)
				;
			if (k == *n_cited)
				cited[(*n_cited)++] = (size_t)id;
		} else if (out->len && out->data[out->len - 1] == ' ') {
			/* "and [chunk 99] or" -> "and or", "at [chunk 99]." -> "at." */
			out->data[--out->len] = '\0';
			if (end[1] != ' ' && end[1] != '\0' && !ispunct((unsigned char)end[1]))
				lp_buf_addc(out, ' ');
		}
		p = end + 1;
	}
}

size_t lp_stage_check_citations(const struct lp_doc *doc, const char *answer,
				const char *question, const size_t *ids, size_t n_ids,
				size_t *cited, size_t n_cited)
{
	size_t n = 0, most = 0;
	size_t alen = strlen(answer), qlen = strlen(question);

	for (size_t i = 0; i < n_cited; i++) {
		const struct lp_chunk *c = &doc->chunks[cited[i]];
		if (lp_evidence_support(answer, alen, question, qlen, doc->text + c->off, c->len,
					NULL))
			cited[n++] = cited[i];
	}
	if (n)
		return n;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n_ids; i++) {
			const struct lp_chunk *c = &doc->chunks[ids[i]];
			size_t k = lp_evidence_support(answer, alen, question, qlen,
						       doc->text + c->off, c->len, NULL);
			if (!pass && k > most)
				most = k;
			else if (pass && most && k == most)
				cited[n++] = ids[i];
		}
	return n;
}

/* Trim white space at both ends of s[0..*len): returns the new start. */
static const char *trim(const char *s, size_t *len)
{
	while (*len && isspace((unsigned char)*s)) {
		s++;
		(*len)--;
	}
	while (*len && isspace((unsigned char)s[*len - 1]))
		(*len)--;
	return s;
}

/* The quote step 1 wrote: up to a closing quote mark or the line's end. */
static size_t quote_len(const char *gen)
{
	size_t n = 0;

	while (gen[n] && gen[n] != '"' && gen[n] != '\n' && strncmp(gen + n, "”", 3) &&
	       strncmp(gen + n, "[chunk", 6))
		n++;
	return n;
}

/* Where a quote was found: chunk id and bytes of doc->text; for the
 * best-ranked sentence, how much of the question it covers. */
struct found {
	size_t chunk, off, len;
	double share;
	double cover; /* struct lp_evidence_sent's; 1 when not ranked */
};

/* Look for the quote in every chunk given; the best match. */
static struct found find_quote(const struct job *j, const char *q, size_t qlen)
{
	struct found f = { 0, 0, 0, 0.0, 1.0 };

	for (size_t i = 0; i < j->n_ids; i++) {
		const struct lp_chunk *c = &j->doc->chunks[j->ids[i]];
		struct lp_span sp;
		double share = lp_evidence_quote_match(q, qlen, j->doc->text + c->off, c->len, &sp);
		if (share > f.share) {
			f = (struct found){ j->ids[i], c->off + sp.off, sp.len, share, 1.0 };
		}
	}
	return f;
}

/* The best-ranked sentence of the chunks given: where no quote was found. */
static enum lp_status best_sentence(const struct job *j, struct found *f, struct lp_diag *d)
{
	struct lp_evidence_src *src = sources(j->doc, j->ids, j->n_ids, d);
	struct lp_evidence_sent *sent = NULL;
	size_t n = 0;
	enum lp_status st = src ? LP_OK : LP_E_NOMEM;

	if (!st)
		st = lp_evidence_rank(src, j->n_ids, j->corpus, j->doc->n_chunks, j->question,
				      strlen(j->question), &sent, &n, d);
	if (!st)
		st = rank_by_structure(j, src, sent, n, d);
	for (size_t i = 0; !st && i < n && i < 4; i++)
		lp_debug("answer: sentence %zu: chunk %zu score %.2f: %.60s", i,
			 src[sent[i].src].id, sent[i].score, src[sent[i].src].text + sent[i].off);
	if (!st && n)
		*f = (struct found){ src[sent[0].src].id,
				     (size_t)(src[sent[0].src].text - j->doc->text) + sent[0].off,
				     sent[0].len, 0.0, sent[0].cover };
	lp_mem_free(src);
	lp_mem_free(sent);
	return st;
}

/* 1 when the sentence s[0..len) announces what comes after it: it ends
 * with a colon, or with "following." or "follows." ("如下。"). */
static int introduces(const char *s, size_t len)
{
	static const char *const ends[] = { ":", "\xef\xbc\x9a" /* ： */, "following.",
					    "follows.", "\xe5\xa6\x82\xe4\xb8\x8b\xe3\x80\x82" /* 如下。 */ };

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t n = strlen(ends[i]);
		if (len >= n && !memcmp(s + len - n, ends[i], n))
			return 1;
	}
	return 0;
}

/* 1 when the text at s (after a blank line) goes on with what came
 * before: a command after a prompt ("$ ", "# ") or an item nested under
 * the one before ("+ If not, enable it by ..."). */
static int continues(const char *s, size_t len)
{
	return len >= 2 && (s[0] == '$' || s[0] == '#' || s[0] == '+') && s[1] == ' ';
}

/* Grow f to take in the sentence after it in its chunk (the answer to
 * "how often" is often the sentence after the one that names the thing),
 * not past a blank line unless f introduces what follows or it goes on. */
static void add_next_sentence(const struct lp_doc *doc, struct found *f)
{
	const struct lp_chunk *c = &doc->chunks[f->chunk];
	size_t pos = f->off + f->len - c->off, gap_end;
	struct lp_span sp;
	int lines = 0, more;

	if (!f->len)
		return;
	more = lp_sentence_next(doc->text + c->off, c->len, &pos, &sp);
	/* a sentence at its chunk's end goes on in the next chunk, which
	 * holds it too where chunks overlap ("... by the following." and
	 * the commands after it): read on, and cite, there */
	if ((!more || sp.off + sp.len >= c->len) && f->chunk + 1 < doc->n_chunks &&
	    doc->chunks[f->chunk + 1].off <= f->off &&
	    doc->chunks[f->chunk + 1].off + doc->chunks[f->chunk + 1].len > c->off + c->len) {
		c = &doc->chunks[++f->chunk];
		pos = f->off + f->len - c->off;
		more = lp_sentence_next(doc->text + c->off, c->len, &pos, &sp);
	}
	if (!more)
		return;
	/* after a blank line comes another entry or list item ('HOME' after
	 * 'CDPATH'), which answers another question, unless the sentence
	 * introduces what follows ("... by the following:", a command) */
	gap_end = c->off + sp.off;
	for (size_t i = f->off + f->len; i < gap_end; i++)
		lines += doc->text[i] == '\n';
	if (lines >= 2 && !introduces(doc->text + f->off, f->len) &&
	    !continues(doc->text + gap_end, doc->len - gap_end))
		return;
	f->len = gap_end + sp.len - f->off;
}

/* Add the first LP_ANSWER_MAX_TOKENS checked tokens of a[0, n)
 * (text/ground.h) to g. Returns 0 out of memory. */
static int add_tokens(struct lp_ground *g, const char *a, size_t n)
{
	struct lp_ground_token tok[LP_ANSWER_MAX_TOKENS];
	size_t nt = lp_ground_tokens(a, n, tok, LP_ANSWER_MAX_TOKENS), id;
	struct lp_diag d;

	lp_diag_init(&d);
	for (size_t i = 0; i < nt && i < LP_ANSWER_MAX_TOKENS; i++)
		if (lp_ground_add(g, a + tok[i].off, tok[i].len, tok[i].kind, &id, &d))
			return 0;
	return 1;
}

/* Whether the sentence after `alone` (f holds the two) belongs in an
 * answer that quotes them: the question asks for a name or a quantity,
 * which the sentence after the one naming the thing often gives
 * ("Supported files are: .cvsignore, ..."); alone introduces it or it
 * goes on from alone (a command after "by the following."); it names a
 * question term alone lacks ("The default value is ..." after "The
 * primary prompt string."); or it gives a value, a name or a path where
 * alone gives none. Else it only lengthens the answer ("(More about
 * docstrings can be found in ...)"). */
static int next_belongs(const struct job *j, const struct found *alone, const struct found *f)
{
	const char *t = j->doc->text;
	size_t at = alone->off + alone->len, end = f->off + f->len;
	struct lp_evidence_src first = { 0, t + alone->off, alone->len, 0 };
	struct lp_ground_token tok[1];

	while (at < end && isspace((unsigned char)t[at]))
		at++;
	if (at >= end)
		return 0;
	if (j->asks != LP_ASKS_OTHER || introduces(t + alone->off, alone->len) ||
	    continues(t + at, end - at))
		return 1;
	if (alone->cover < 1.0 &&
	    lp_evidence_cover(j->corpus, j->doc->n_chunks, j->question, strlen(j->question),
			      &first, 1, t + at, end - at) > 0)
		return 1;
	return lp_ground_tokens(t + at, end - at, tok, 1) &&
	       !lp_ground_tokens(t + alone->off, alone->len, tok, 1);
}

/* Step 2: a short answer from the evidence sentence alone. */
static enum lp_status reply(struct job *j, const struct found *f, char **gen,
			    struct lp_diag *d)
{
	const char *system = j->o->prompt ? lp_stage_expand(j->doc, j->o->prompt) : j->pb->reply;
	struct lp_chat_msg m[2] = { { "system", system }, { "user", "" } };
	size_t budget, n_in = 0, n_out = 0;
	const char *text;
	int cut;
	enum lp_status st;

	if (!system)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the prompt");
	/* the labels counted as they are, not as a few tokens: a byte-level
	 * vocabulary spends one a byte on them; 6 for the blank line and the
	 * joins of the pieces counted apart */
	st = lp_stage_input_budget(j->s, m, 2, (size_t)j->o->max_tokens,
				   lp_session_count_tokens(j->s, system, strlen(system)) +
				   lp_session_count_tokens(j->s, j->pb->text, strlen(j->pb->text)) +
				   lp_session_count_tokens(j->s, j->pb->question,
							   strlen(j->pb->question)) + 6 +
				   lp_session_count_tokens(j->s, j->question, strlen(j->question)),
				   &budget, d);
	if (st)
		return st;
	if (!(text = lp_stage_head_tokens(j->doc, j->s, j->doc->text + f->off, f->len, budget,
					  &cut, d)))
		return LP_E_NOMEM;
	lp_buf_reset(&j->user);
	lp_buf_addf(&j->user, "%s%s\n\n%s%s", j->pb->text, text, j->pb->question, j->question);
	m[1].content = j->user.data;
	st = lp_session_generate(j->s, m, 2, NULL, (size_t)j->o->max_tokens, gen, &n_in, &n_out,
				 d);
	j->n_in += n_in;
	j->n_out += n_out;
	return st;
}

/* Append s[0..len) with each run of spaces and tabs, and each line break
 * inside a paragraph, as one space: a manual's indented, hard-wrapped
 * lines read as one sentence. */
static void add_flat(struct lp_buf *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t k = i, nl = 0;
		while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n'))
			nl += s[k++] == '\n';
		if (k == i) {
			lp_buf_addc(out, s[i++]);
			continue;
		}
		lp_buf_adds(out, nl >= 2 ? "\n\n" : " ");
		i = k;
	}
}

/* Print the answer, then the summary when asked, then one block of
 * lines: the quote, the check, the Sources, into doc->answer. */
static enum lp_status finish(struct job *j, const char *ans, size_t alen, const struct found *f,
			     size_t *cited, size_t n, const char *check, struct lp_diag *d)
{
	struct lp_doc *doc = j->doc;
	struct lp_buf out;
	const char *sep = "\n\n";

	lp_buf_init(&out);
	ans = trim(ans, &alen);
	if (alen)
		add_flat(&out, ans, alen);
	else
		lp_buf_adds(&out, "(no answer)");
	if (j->o->with_summary && doc->summary)
		lp_buf_addf(&out, "\n\nSummary: %s", doc->summary);
	doc->quote_len = 0;
	if (f && f->len) {
		/* an abstention shows the nearest sentence, not a quote; the
		 * chunk is on the Sources line: an id here would pass for a
		 * citation the model wrote */
		int near = doc->answer_check && !strcmp(doc->answer_check, "abstain");

		lp_buf_addf(&out, "%s%s: \"", sep, near ? "Nearest" : "Quote");
		add_flat(&out, doc->text + f->off, f->len);
		if (!near) {
			doc->quote_off = f->off;
			doc->quote_len = f->len;
		}
		lp_buf_adds(&out, "\"");
		sep = "\n";
	}
	if (check) {
		lp_buf_addf(&out, "%sCheck: %s", sep, check);
		sep = "\n";
	}
	for (size_t i = 0; i < n; i++)
		lp_buf_addf(&out, "%s%s[chunk %zu]", i ? "" : sep, i ? ", " : "Sources: ",
			    cited[i]);
	doc->answer = lp_arena_strndup(&doc->arena, out.data, out.len);
	lp_buf_release(&out);
	if (!doc->answer)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the answer");
	doc->cited = cited;
	doc->n_cited = n;
	return LP_OK;
}

/* gen without the citations not in ids[0..n_ids) (all of them when
 * n_ids is 0), in the doc arena; the ids it cites go to cited[], *n. */
static const char *strip_citations(struct job *j, const char *gen, const size_t *ids,
				   size_t n_ids, size_t *cited, size_t *n)
{
	struct lp_buf out;
	const char *r;

	lp_buf_init(&out);
	lp_stage_filter_citations(gen, ids, n_ids, &out, cited, n);
	r = lp_arena_strndup(&j->doc->arena, out.data ? out.data : "", out.len);
	lp_buf_release(&out);
	return r;
}

/* One step: answer and cite, citations checked. */
static enum lp_status run_direct(struct job *j, size_t *cited, struct lp_diag *d)
{
	const char *system = j->o->prompt ? lp_stage_expand(j->doc, j->o->prompt) : j->pb->direct;
	char *gen = NULL;
	const char *ans = NULL, *plain = NULL;
	size_t n = 0, none;
	enum lp_status st;

	if (!system)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the prompt");
	st = ask(j, system, "", "", (size_t)j->o->max_tokens, (size_t)-1, &gen, d);
	if (!st) {
		ans = strip_citations(j, gen, j->ids, j->n_ids, cited, &n);
		/* the checks read the answer without its "[chunk N]" tags */
		plain = ans ? strip_citations(j, ans, NULL, 0, NULL, &none) : NULL;
	}
	lp_mem_free(gen);
	if (st)
		return st;
	if (!ans || !plain)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the answer");
	n = lp_stage_check_citations(j->doc, plain, j->question, j->ids, j->n_ids, cited, n);
	j->doc->answer_check = "none";
	return finish(j, ans, strlen(ans), NULL, cited, n, NULL, d);
}

/* 1 when the answer's content words are mostly in the sentence f, and
 * every number and every name of it is. */
/*
 * 1 when every checked token of the answer a[0, n) (text/ground.h: a
 * number, an option, a path, an identifier, a quoted or `code` span) is in
 * the sentence f or the question. The verify stage removes a sentence with
 * a token the source lacks ("`sudo dpkg-reconfigure tzdata`" of a source
 * that writes "# dpkg-reconfigure tzdata"), which would leave no answer.
 * Out of memory it says 0, and the sentence is given instead.
 */
static int tokens_stand(const struct job *j, const char *a, size_t n, const struct found *f)
{
	struct lp_ground g;
	struct lp_diag d;
	int ok;

	lp_diag_init(&d);
	lp_ground_init(&g);
	ok = add_tokens(&g, a, n);
	ok = ok && (!g.n || (!lp_ground_scan(&g, j->doc->text + f->off, f->len, NULL, NULL, &d) &&
			     !lp_ground_scan(&g, j->question, strlen(j->question), NULL, NULL, &d)));
	for (size_t i = 0; i < g.n && ok; i++)
		ok = g.found[i];
	lp_ground_release(&g);
	return ok;
}

static int unquote(const char **t, size_t *n);
static int in_question(const struct job *j, const char *s, size_t n);

/* Where in s[0..n) t[0..tn) first occurs, case aside, and with `whole`
 * not inside a longer word (a letter or digit on an edge of t may not
 * touch one of s); n if it does not. */
static size_t find_ci(const char *s, size_t n, const char *t, size_t tn, int whole)
{
	for (size_t i = 0; tn && i + tn <= n; i++)
		if (!strncasecmp(s + i, t, tn) &&
		    !(whole && i && isalnum((unsigned char)s[i - 1]) && isalnum((unsigned char)t[0])) &&
		    !(whole && i + tn < n && isalnum((unsigned char)s[i + tn]) &&
		      isalnum((unsigned char)t[tn - 1])))
			return i;
	return n;
}

/*
 * An answer that names one of the things its sentence sets side by side
 * ("... use the default type of application/octet-stream for binary data,
 * or text/plain for textual data."; "A value of 'ignoreboth' is shorthand
 * for ... A value of 'erasedups' causes ...") stands only on the side the
 * question asks about: no other side that names a thing of the same
 * shape (text/sides.h) may hold LP_ANSWER_SIDE_MARGIN more of the question
 * than the side of the answer's first name (not one the question names).
 * 1 when it stands, or when the answer names nothing the sentence holds.
 */
static int on_asked_side(const struct job *j, const char *a, size_t n, const struct found *f)
{
	const char *s = j->doc->text + f->off, *t;
	struct lp_ground_token tok[LP_ANSWER_MAX_TOKENS];
	struct lp_span side[LP_ANSWER_MAX_SIDES];
	size_t m = lp_ground_tokens(a, n, tok, LP_ANSWER_MAX_TOKENS), tn = 0, at = f->len, k, own;
	size_t qlen = strlen(j->question);
	unsigned shape;
	double own_cover;

	for (size_t i = 0; i < m && i < LP_ANSWER_MAX_TOKENS && !tn; i++)
		if (tok[i].kind != LP_GROUND_NUMBER) {
			t = a + tok[i].off;
			tn = tok[i].len;
			unquote(&t, &tn);
			if (in_question(j, t, tn))
				tn = 0; /* the question's own name ("HISTCONTROL") */
		}
	if (!tn && n && !memchr(a, ' ', n)) { /* an answer of one word: "text/plain" */
		t = a;
		tn = n - (a[n - 1] == '.');
		unquote(&t, &tn);
	}
	if (tn)
		at = find_ci(s, f->len, t, tn, 0);
	if (at == f->len || !(shape = lp_name_shape(s, at, tn)) ||
	    (k = lp_sides_of(s, f->len, side, LP_ANSWER_MAX_SIDES)) < 2)
		return 1;
	for (own = 0; own + 1 < k && side[own].off + side[own].len <= at; own++)
		;
	own_cover = lp_evidence_cover(j->corpus, j->doc->n_chunks, j->question, qlen, NULL, 0,
				      s + side[own].off, side[own].len);
	for (size_t i = 0; i < k; i++)
		if (i != own && lp_sides_holds_like(s + side[i].off, side[i].len, shape) &&
		    lp_evidence_cover(j->corpus, j->doc->n_chunks, j->question, qlen, NULL, 0,
				      s + side[i].off, side[i].len) >=
			    own_cover + LP_ANSWER_SIDE_MARGIN)
			return 0;
	return 1;
}

static int stands_on(const struct job *j, const char *ans, const struct found *f)
{
	size_t len = strlen(ans), n_terms;
	const char *a = trim(ans, &len);
	const char *text = j->doc->text + f->off;
	size_t held = lp_evidence_support(a, len, j->question, strlen(j->question), text,
					  f->len, &n_terms);

	/* an answer made of the question's own words says nothing, and talk
	 * about the text ("The text mentions that ...") is not the text,
	 * unless the question asks about the document ("本文的最新版 ...");
	 * nor is a block of code the model made up around it ("```"): the
	 * sentence it came from says it better, and the verify stage would
	 * take the answer out whole for the fence's tokens */
	if (lp_evidence_echoes(a, len, j->question, strlen(j->question)) ||
	    (lp_points_is_meta(a, len) && !lp_points_is_meta(j->question, strlen(j->question))))
		return 0;
	if (memmem(a, len, "```", 3))
		return 0;
	/* "What is the largest number of iterations ...?" is not answered
	 * by "... is governed by the amount of time it takes." */
	if (j->asks == LP_ASKS_QUANTITY && !lp_focus_quantity_held(j->question, a, len))
		return 0;
	return len && held && held * 2 >= n_terms &&
	       tokens_stand(j, a, len, f) && names_stand(j, a, len, f->off, f->len) &&
	       on_asked_side(j, a, len, f);
}

/* Step 1 by the model: ask for the quote, look for it, retry with half
 * the evidence, fall back to the best-ranked sentence. */
static enum lp_status model_quote(struct job *j, struct found *f, const char **check,
				  struct lp_diag *d)
{
	size_t max_chunks = (size_t)-1;
	char *gen = NULL;
	enum lp_status st = LP_OK;

	*check = "quote";
	for (long long try = 0; try <= j->o->retries && !st; try++) {
		size_t ql;
		const char *q;
		lp_mem_free(gen);
		gen = NULL;
		st = ask(j, j->pb->find, j->pb->find_form, j->pb->quote_open, QUOTE_TOKENS,
			 max_chunks, &gen, d);
		if (st)
			break;
		lp_debug("answer: quote step: %s", gen);
		ql = quote_len(gen);
		q = trim(gen, &ql);
		*f = find_quote(j, q, ql);
		lp_doc_event(j->doc, "quote: try %lld found %.0f%% of its words in chunk %zu",
			     try + 1, 100.0 * f->share, f->chunk);
		if (f->share >= LP_ANSWER_QUOTE_MATCH)
			break;
		*check = "quote-retry";
		if (j->n_ids <= 1)
			break; /* nothing left to narrow: greedy decoding would repeat itself */
		max_chunks = j->n_ids > 1 ? j->n_ids / 2 : 1;
	}
	lp_mem_free(gen);
	if (st || f->share >= LP_ANSWER_QUOTE_MATCH)
		return st;
	*check = "extract";
	return best_sentence(j, f, d);
}

/* Step 1 without the model: the best-ranked sentence of the working set. */
static enum lp_status ranked_quote(struct job *j, struct found *f, struct lp_diag *d)
{
	size_t n;
	const size_t *best = lp_doc_best_first(j->doc, &n);

	if (!best)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the evidence");
	memcpy(j->ids, best, n * sizeof(*best));
	j->n_ids = n;
	return best_sentence(j, f, d);
}

/* The Check line for `check` (see struct lp_answer_prompts), in the doc arena. */
static const char *check_line(const struct job *j, const char *check, int replaced)
{
	static const char *const names[] = { "quote", "quote-retry", "extract", "ranked" };

	for (size_t i = 0; i < 4; i++)
		if (!strcmp(check, names[i]))
			return lp_arena_printf(&j->doc->arena, "%s%s", j->pb->checks[i],
					       replaced ? j->pb->replaced : "");
	return check;
}

/*
 * Abstain: "The document does not say." with the passages nearest to the
 * question cited (the best of the working set), and `why` as the Check
 * line. With `near`, its sentence is shown on a "Nearest:" line and its
 * chunk cited first. answer_check is "abstain".
 */
static enum lp_status abstain(struct job *j, const char *why, const struct found *near,
			      size_t *cited, struct lp_diag *d)
{
	size_t n = 0, k = 0;
	const size_t *best = lp_doc_best_first(j->doc, &n);

	if (!best || !why)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the answer");
	if (near)
		cited[k++] = near->chunk;
	for (size_t i = 0; i < n && k < LP_ANSWER_NEAREST; i++)
		if (!near || best[i] != near->chunk)
			cited[k++] = best[i];
	j->doc->answer_check = "abstain";
	lp_doc_event(j->doc, "abstain: %s", why);
	return finish(j, j->pb->abstain, strlen(j->pb->abstain), near, cited, k, why, d);
}

/* The Check line of an abstention for focus token i. */
static const char *why_focus(const struct job *j, const char *fmt, size_t i)
{
	return lp_arena_printf(&j->doc->arena, fmt, (int)j->focus[i].len,
			       j->question + j->focus[i].off);
}

/* The first focus token of the question that the document never names,
 * or n_focus when it names them all. */
static size_t focus_absent(const struct job *j)
{
	for (size_t i = 0; i < j->n_focus; i++) {
		const char *t = j->question + j->focus[i].off;

		if (lp_focus_is_name(t, j->focus[i].len) &&
		    !lp_focus_held(j->doc->text, j->doc->len, t, j->focus[i].len))
			return i;
	}
	return j->n_focus;
}

/* Quote marks around t[0, *n) ('x', "x", `x`, ‘x’, “x”) taken off: 1 when
 * there were some. */
static int unquote(const char **t, size_t *n)
{
	static const char *const open[] = { "'", "\"", "`", "\xE2\x80\x98", "\xE2\x80\x9C" };
	static const char *const close[] = { "'", "\"", "`", "\xE2\x80\x99", "\xE2\x80\x9D" };

	for (size_t q = 0; q < sizeof(open) / sizeof(open[0]); q++) {
		size_t a = strlen(open[q]), b = strlen(close[q]);

		if (*n > a + b && !memcmp(*t, open[q], a) && !memcmp(*t + *n - b, close[q], b)) {
			*t += a;
			*n -= a + b;
			return 1;
		}
	}
	return 0;
}

/* The first focus token that is a name (lp_focus_is_name) and is not
 * named around the quote f, or n_focus. */
static size_t focus_far(const struct job *j, const struct found *f)
{
	struct near nr;

	near_of(j->doc, f->off, f->len, &nr);
	for (size_t i = 0; i < j->n_focus; i++) {
		const char *t = j->question + j->focus[i].off;

		if (lp_focus_is_name(t, j->focus[i].len) && !named_near(&nr, t, j->focus[i].len))
			return i;
	}
	return j->n_focus;
}

/*
 * When the question asks for a name ("Which variable counts ...?") and
 * the sentence is the body of an entry that the question does not name,
 * the entry's term is the answer: 1 and its text in *t, *n, without the
 * quote marks a manual puts around it ("'SHLVL'").
 */
static int entry_answer(const struct job *j, const struct found *f, const char **t, size_t *n)
{
	const struct lp_doc *doc = j->doc;
	const struct lp_doc_model *m = &doc->src.model;
	size_t b, term;
	int only;

	if (j->asks != LP_ASKS_NAME || !m->n_kind[LP_BLOCK_DEF_BODY] ||
	    (b = lp_doc_model_find(m, f->off)) == LP_DOC_NONE ||
	    m->blocks[b].kind != LP_BLOCK_DEF_BODY || (term = m->blocks[b].term) == LP_DOC_NONE ||
	    lp_doc_names_term(doc, term, j->question, &only))
		return 0;
	*t = doc->text + m->blocks[term].off;
	*n = m->blocks[term].len;
	*t = trim(*t, n);
	unquote(t, n);
	/* a name, not a table's cells or a sentence */
	return *n > 0 && *n <= LP_ANSWER_TERM_BYTES && !memchr(*t, '|', *n) && !memchr(*t, '\n', *n);
}

/* 1 when the question holds s[0, n), any case, not inside a longer word
 * ("def" is not in "definition"). */
static int in_question(const struct job *j, const char *s, size_t n)
{
	size_t ql = strlen(j->question);

	return n && find_ci(j->question, ql, s, n, 1) < ql;
}

/* The token of s[lo, hi) that ends at `end` (before = 1) or starts at
 * `start`, without quote marks and closing punctuation: *t, *n; returns
 * 1 when it was in quote marks. */
static int token_at(const char *s, size_t lo, size_t hi, size_t at, int before, const char **t,
		    size_t *n)
{
	size_t a = at, b = at;

	if (before) {
		while (a > lo && !isspace((unsigned char)s[a - 1]))
			a--;
	} else {
		while (b < hi && !isspace((unsigned char)s[b]))
			b++;
	}
	/* closing punctuation, but not the ")" of "fsck(8)" */
	while (b > a && strchr(".,;:)?!", s[b - 1]) &&
	       !(s[b - 1] == ')' && memchr(s + a, '(', b - a)))
		b--;
	*t = s + a;
	*n = b - a;
	return unquote(t, n);
}

/* Whether t[0, n) can be the name the question asks for: a short word
 * that is no stop word, holds no space and is not in the question. */
static int can_be_name(const struct job *j, const char *t, size_t n)
{
	char low[32];

	if (n < 2 || n > LP_ANSWER_TERM_BYTES || in_question(j, t, n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (isspace((unsigned char)t[i]) || t[i] == '|')
			return 0;
		if (i < sizeof(low))
			low[i] = (char)tolower((unsigned char)t[i]);
	}
	return n > sizeof(low) || !lp_match_is_stopword(low, n);
}

/* How well a quoted span fits the kind of name asked for: a command line
 * holds an option ("tune2fs -c0 /dev/sda"), a file or directory is a
 * path; 1 for anything else, 0 when the question holds it. */
static int span_fit(const struct job *j, const char *a, size_t n)
{
	const char *k = j->question + j->kind.off;
	size_t kl = j->kind.len;
	int command = (kl == 7 && !strncasecmp(k, "command", 7)) ||
		      (kl == 6 && !memcmp(k, "\xE5\x91\xBD\xE4\xBB\xA4", 6)); /* 命令 */
	int path = (kl >= 4 && (!strncasecmp(k, "file", 4) || !strncasecmp(k, "dire", 4))) ||
		   (kl == 6 && (!memcmp(k, "\xE6\x96\x87\xE4\xBB\xB6", 6) || /* 文件 */
				!memcmp(k, "\xE7\x9B\xAE\xE5\xBD\x95", 6)));  /* 目录 */

	if (!n || n > LP_ANSWER_TERM_BYTES || in_question(j, a, n))
		return 0;
	if (command)
		return 1 + (memmem(a, n, " -", 2) != NULL);
	if (path)
		return 1 + (a[0] == '/' || a[0] == '~');
	return 1;
}

/* 1 when t[0, n) is a name a reader types: an option
 * ("--benchmark_out=<filename>", "-v"), a path, a command cited with its manual
 * section ("reportbug(1)"), or a word the document writes in a code block
 * ("def"); not a word of the prose around the kind word ("the c option
 * requires ..."). */
static int in_code(const struct lp_doc *doc, const char *t, size_t n)
{
	const struct lp_doc_model *m = &doc->src.model;
	size_t dash = n >= 2 && t[0] == '-' ? 1 + (t[1] == '-') : 0;

	if (dash && dash < n && isalnum((unsigned char)t[dash]))
		return 1;
	if (n >= 3 && (t[0] == '/' || (t[0] == '~' && t[1] == '/')) && memchr(t + 2, '/', n - 2))
		return 1; /* a path: "/var/lib/dpkg/triggers/File" */
	if (n >= 4 && t[n - 1] == ')' && isdigit((unsigned char)t[n - 2]) && t[n - 3] == '(')
		return 1;

	for (size_t i = 0; m->n_kind[LP_BLOCK_CODE] && i < m->n_blocks; i++)
		if (m->blocks[i].kind == LP_BLOCK_CODE &&
		    lp_focus_held(doc->text + m->blocks[i].off, m->blocks[i].len, t, n))
			return 1;
	return 0;
}

/*
 * The name the quote gives for the kind the question asks about. In
 * order: the first cell of a table row ("lsof -p pid | lists the files
 * a process opened"); a quoted word beside the kind word ("the
 * 'noclobber' option"); the span in quote marks that best fits the kind
 * ("... using \"tune2fs -c0 /dev/sda\""); a bare word beside the kind word
 * that the document writes in its code ("the keyword def introduces").
 * Nothing the question holds. 1 and its bytes in *t, *n.
 */
static int name_in_quote(const struct job *j, const struct found *f, const char **t, size_t *n)
{
	static const char *const opens[] = { "\xE2\x80\x9C", "\xE2\x80\x98", "\"", "`" };
	static const char *const closes[] = { "\xE2\x80\x9D", "\xE2\x80\x99", "\"", "`" };
	const struct lp_doc_model *m = &j->doc->src.model;
	const char *s = j->doc->text, *k = j->question + j->kind.off;
	size_t lo = f->off, hi = f->off + f->len, kl = j->kind.len, b;
	const char *bare = NULL;
	size_t bare_len = 0;
	int best = 0;

	if (j->asks != LP_ASKS_NAME || !kl)
		return 0;
	b = m->n_blocks ? lp_doc_model_find(m, f->off) : LP_DOC_NONE;
	if (b != LP_DOC_NONE && m->blocks[b].kind == LP_BLOCK_TABLE_ROW &&
	    m->blocks[b].n_cells >= 2) {
		const struct lp_doc_cell *c = &m->cells[m->blocks[b].first_cell];

		*t = s + c->off;
		*n = c->len;
		*t = trim(*t, n);
		if (*n && *n <= LP_ANSWER_TERM_BYTES && !in_question(j, *t, *n))
			return 1;
	}
	for (size_t i = lo; isalpha((unsigned char)*k) && i + kl <= hi; i++) {
		size_t e = i + kl;

		if (strncasecmp(s + i, k, kl) || (i > lo && isalnum((unsigned char)s[i - 1])))
			continue;
		if (e < hi && s[e] == 's')
			e++;
		if (e < hi && isalnum((unsigned char)s[e]))
			continue;
		for (int before = 1; before >= 0; before--) {
			size_t at = before ? i : e;
			const char *w;
			size_t wl;
			int quoted;

			while (before ? at > lo && s[at - 1] == ' ' : at < hi && s[at] == ' ')
				at += before ? (size_t)-1 : 1;
			quoted = token_at(s, lo, hi, at, before, &w, &wl);
			if (!can_be_name(j, w, wl))
				continue;
			if (quoted) {
				*t = w;
				*n = wl;
				return 1;
			}
			if (!bare && in_code(j->doc, w, wl)) {
				bare = w;
				bare_len = wl;
			}
		}
	}
	for (size_t q = 0; q < sizeof(opens) / sizeof(opens[0]); q++) {
		size_t ol = strlen(opens[q]), cl = strlen(closes[q]);
		const char *a = memmem(s + lo, hi - lo, opens[q], ol), *z;

		while (a) {
			int fit;

			a += ol;
			if (!(z = memmem(a, (size_t)(s + hi - a), closes[q], cl)))
				break;
			if ((fit = span_fit(j, a, (size_t)(z - a))) > best) {
				best = fit;
				*t = a;
				*n = (size_t)(z - a);
			}
			a = memmem(z + cl, (size_t)(s + hi - z - cl), opens[q], ol);
		}
	}
	if (best)
		return 1;
	*t = bare;
	*n = bare_len;
	return bare != NULL;
}

/* How much of the question the sentence f answers: its cover, or, when
 * that is more, its cover of what the question asks beyond the names of
 * the document (lp_doc_names_itself) and, in an entry, beyond the entry's term
 * and the words that say what kind of entry it is. "Change to DIR before
 * performing any operations." answers all "What does the -C option do?"
 * asks of the entry "-C, --directory=DIR"; "A list of characters that
 * separate fields" does not say what "What is the default value of IFS?"
 * asks of "IFS". */
static double cover_beyond_names(const struct job *j, const struct found *f)
{
	struct lp_evidence_src given[3];
	char kinds[128];
	size_t n_kinds = 0, n_given = 0, qlen = strlen(j->question);
	double rest;
	struct near nr;
	struct lp_terms it;
	const char *t;
	size_t tl;

	near_of(j->doc, f->off, f->len, &nr);
	if ((!nr.term && !j->n_doc_names) || f->cover >= 1.0)
		return f->cover;
	if (j->n_doc_names)
		given[n_given++] = (struct lp_evidence_src){ 0, j->doc_names, j->n_doc_names, 0 };
	if (nr.term) {
		lp_terms_init(&it, j->question, qlen, LP_TERMS_STOPWORDS);
		while (lp_terms_next(&it, &t, &tl))
			if (lp_focus_is_kind(t, tl) && n_kinds + tl + 1 < sizeof(kinds)) {
				memcpy(kinds + n_kinds, t, tl);
				n_kinds += tl;
				kinds[n_kinds++] = ' ';
			}
		given[n_given++] = (struct lp_evidence_src){ 0, nr.term, nr.term_len, 0 };
		given[n_given++] = (struct lp_evidence_src){ 0, kinds, n_kinds, 0 };
	}
	rest = lp_evidence_cover(j->corpus, j->doc->n_chunks, j->question, qlen, given, n_given,
				 nr.sent, nr.sent_len);
	return rest > f->cover ? rest : f->cover;
}

/* Quote, then answer. */
static enum lp_status run_quote(struct job *j, size_t *cited, struct lp_diag *d)
{
	struct lp_doc *doc = j->doc;
	const char *check = "ranked";
	struct found f = { 0, 0, 0, 0.0, 1.0 }, alone;
	char *ans = NULL;
	int replaced = 0;
	enum lp_status st;

	st = j->o->quote == QUOTE_MODEL ? model_quote(j, &f, &check, d) : ranked_quote(j, &f, d);
	if (st)
		return st;
	if (!f.len) /* no sentence at all: nothing to answer from */
		return finish(j, "", 0, NULL, cited, 0, NULL, d);
	{
		const struct lp_chunk *c = &doc->chunks[f.chunk];
		struct lp_evidence_src in = { f.chunk, doc->text + c->off, c->len, 0 };
		const char *name;
		size_t name_len;

		lp_doc_event(doc, "evidence: the sentence covers %.0f%% of the question",
			     100.0 * f.cover);
		if (j->asks == LP_ASKS_QUANTITY &&
		    !number_near(j, &in, (struct lp_span){ f.off - c->off, f.len }))
			return abstain(j, j->pb->why_number, NULL, cited, d);
		size_t far = focus_far(j, &f);

		if (far < j->n_focus)
			return abstain(j, why_focus(j, j->pb->why_far, far), NULL, cited, d);
		if (entry_answer(j, &f, &name, &name_len)) {
			cited[0] = f.chunk;
			doc->answer_check = lp_arena_printf(&doc->arena, "%s+term", check);
			return finish(j, name, name_len, &f, cited, 1, j->pb->term, d);
		}
		if (name_in_quote(j, &f, &name, &name_len)) {
			cited[0] = f.chunk;
			doc->answer_check = lp_arena_printf(&doc->arena, "%s+name", check);
			return finish(j, name, name_len, &f, cited, 1, j->pb->named, d);
		}
	}
	/* the sentence alone first: given the next one as well, a small model
	 * often answers with what that one says ("126" for "not found");
	 * but a sentence that introduces what follows ("... by the
	 * following.") holds no answer alone, so it comes with that */
	if (introduces(doc->text + f.off, f.len)) {
		size_t was = f.len;
		add_next_sentence(doc, &f);
		if (f.len > was)
			lp_doc_event(doc, "evidence: the sentence introduces what follows, "
					  "read with it");
	}
	if ((st = reply(j, &f, &ans, d))) {
		lp_mem_free(ans);
		return st;
	}
	lp_debug("answer: reply step: %s", ans);
	alone = f;
	if (!stands_on(j, ans, &f)) {
		add_next_sentence(doc, &f);
		if (f.len > alone.len) {
			lp_mem_free(ans);
			ans = NULL;
			if ((st = reply(j, &f, &ans, d))) {
				lp_mem_free(ans);
				return st;
			}
			lp_debug("answer: reply step with the next sentence: %s", ans);
		}
	}
	if (!stands_on(j, ans, &f)) {
		/* the answer does not stand on the sentence: give the sentence,
		 * unless it is too weak a match to pass for the answer */
		if (cover_beyond_names(j, &alone) < LP_ANSWER_WEAK_COVER) {
			lp_mem_free(ans);
			lp_doc_event(doc, "evidence: under %.0f%%, too weak to be the answer",
				     100.0 * LP_ANSWER_WEAK_COVER);
			return abstain(j, j->pb->why_weak, &f, cited, d);
		}
		if (!next_belongs(j, &alone, &f))
			f = alone;
		replaced = 1;
		ans[0] = '\0';
	}
	cited[0] = f.chunk;
	doc->answer_check = lp_arena_printf(&doc->arena, "%s%s", check,
					    replaced ? "+sentence" : "");
	st = finish(j, replaced ? doc->text + f.off : ans, replaced ? f.len : strlen(ans),
		    replaced ? NULL : &f, cited, 1, check_line(j, check, replaced), d);
	if (replaced) { /* the answer is the quote: the reports map it back */
		doc->quote_off = f.off;
		doc->quote_len = f.len;
	}
	lp_mem_free(ans);
	return st;
}

/* 1 when block k reads as a title: a heading or an entry's term, a
 * paragraph of at most four words ("Preamble"), or one of at most twelve
 * that opens with a clause's number ("9. Acceptance Not Required for
 * Having Copies."). */
static int is_title(const struct lp_doc *doc, const struct lp_doc_block *k)
{
	const char *t = doc->text + k->off;
	size_t words = 1, i = 0;

	if (k->kind == LP_BLOCK_HEADING || k->kind == LP_BLOCK_DEF_TERM)
		return 1;
	if (k->kind != LP_BLOCK_PARAGRAPH)
		return 0;
	for (size_t c = 0; c < k->len && words <= 12; c++)
		words += t[c] == ' ';
	if (words <= 4)
		return 1;
	while (i < k->len && (isdigit((unsigned char)t[i]) || t[i] == '.'))
		i++;
	return words <= 12 && i && t[i - 1] == '.' && i + 1 < k->len && t[i] == ' ' &&
	       isupper((unsigned char)t[i + 1]);
}

/*
 * The passage the sentence f belongs to, when the document model has it
 * and it is at most LP_ANSWER_CLAUSE_BYTES: the paragraph, list item or
 * table row; an entry's body with its term ("--delete" and what it
 * does); a title with the blocks under it up to the next title (a
 * licence's "8. Termination." and its paragraphs, as many as fit, one at
 * least). Else f as it is.
 */
static void whole_passage(const struct lp_doc *doc, struct found *f)
{
	const struct lp_doc_model *m = &doc->src.model;
	size_t b = m->n_blocks ? lp_doc_model_find(m, f->off) : LP_DOC_NONE, lo, hi;
	const struct lp_doc_block *k;

	if (b == LP_DOC_NONE)
		return;
	k = &m->blocks[b];
	lo = k->off;
	hi = k->off + k->len;
	if (k->kind == LP_BLOCK_DEF_BODY && k->term != LP_DOC_NONE && m->blocks[k->term].off < lo)
		lo = m->blocks[k->term].off;
	else if (is_title(doc, k))
		for (size_t i = b + 1; i < m->n_blocks && !is_title(doc, &m->blocks[i]); i++) {
			size_t end = m->blocks[i].off + m->blocks[i].len;

			if (i > b + 1 && end - lo > LP_ANSWER_CLAUSE_BYTES)
				break;
			hi = end;
		}
	if (lo <= f->off && f->off + f->len <= hi && hi - lo <= LP_ANSWER_CLAUSE_BYTES) {
		f->off = lo;
		f->len = hi - lo;
	}
}

/* The title among the chunks given that holds the most of the request
 * (lp_evidence_cover), when it holds LP_ANSWER_TITLE_COVER of it and no
 * less than the best sentence f does: "5. Termination" is the clause
 * about termination, more than a sentence that says the word three
 * times. 1 and f set to it; 0 when there is none. */
static int best_title(const struct job *j, struct found *f)
{
	const struct lp_doc *doc = j->doc;
	const struct lp_doc_model *m = &doc->src.model;
	size_t qlen = strlen(j->question);
	double best = f->cover > LP_ANSWER_TITLE_COVER ? f->cover : LP_ANSWER_TITLE_COVER;
	int found = 0;

	for (size_t i = 0; m->n_blocks && i < j->n_ids; i++) {
		const struct lp_chunk *c = &doc->chunks[j->ids[i]];
		size_t b = lp_doc_model_find(m, c->off);

		for (; b != LP_DOC_NONE && b < m->n_blocks && m->blocks[b].off < c->off + c->len;
		     b++) {
			const struct lp_doc_block *k = &m->blocks[b];
			double cover;

			if (!is_title(doc, k) || k->off < c->off)
				continue;
			cover = lp_evidence_cover(j->corpus, doc->n_chunks, j->question, qlen, NULL,
						  0, doc->text + k->off, k->len);
			if (cover >= best && !(found && cover == best)) {
				best = cover;
				*f = (struct found){ j->ids[i], k->off, k->len, 1.0, cover };
				found = 1;
			}
		}
	}
	return found;
}

/* Reply with the document's own words: the passage of the best sentence
 * (whole_passage), unless that sentence holds too little of the request
 * or misses a name it asks about, when the stage abstains. */
static enum lp_status run_verbatim(struct job *j, size_t *cited, struct lp_diag *d)
{
	struct lp_doc *doc = j->doc;
	const char *check = "ranked";
	struct found f = { 0, 0, 0, 0.0, 1.0 };
	size_t far;
	double held;
	enum lp_status st;

	st = j->o->quote == QUOTE_MODEL ? model_quote(j, &f, &check, d) : ranked_quote(j, &f, d);
	if (st)
		return st;
	if (!f.len)
		return abstain(j, j->pb->why_loose, NULL, cited, d);
	if ((far = focus_far(j, &f)) < j->n_focus)
		return abstain(j, why_focus(j, j->pb->why_far, far), NULL, cited, d);
	if (cover_beyond_names(j, &f) < LP_ANSWER_WEAK_COVER)
		return abstain(j, j->pb->why_loose, &f, cited, d);
	if (best_title(j, &f))
		lp_doc_event(doc, "verbatim: the title in chunk %zu holds %.0f%% of the request",
			     f.chunk, 100.0 * f.cover);
	whole_passage(doc, &f);
	/* the passage must hold what the request names: one that shares a
	 * rare word with it is not the passage about it */
	held = lp_evidence_cover(j->corpus, doc->n_chunks, j->question, strlen(j->question),
				 NULL, 0, doc->text + f.off, f.len);
	lp_doc_event(doc, "verbatim: the passage holds %.0f%% of the request", 100.0 * held);
	if (held < LP_ANSWER_PASSAGE_COVER)
		return abstain(j, j->pb->why_loose, &f, cited, d);
	cited[0] = f.chunk;
	doc->answer_check = lp_arena_printf(&doc->arena, "%s+verbatim", check);
	st = finish(j, doc->text + f.off, f.len, NULL, cited, 1, j->pb->verbatim, d);
	doc->quote_off = f.off; /* the answer is the quote: the reports map it back */
	doc->quote_len = f.len;
	return st;
}

static enum lp_status run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct answer_opts *o = opts;
	struct job j = { .doc = doc, .o = o };
	size_t *cited, i_absent;
	struct lp_span absent[LP_FOCUS_ABSENT_WORDS], topic;
	enum lp_status st;
	int han, verbatim, request;

	j.question = o->question ? lp_stage_expand(doc, o->question) : doc->question;
	if (!j.question || !*j.question)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "answer needs a question: pass -q or set question");
	han = o->language == LANG_ZH ||
	      (o->language == LANG_AUTO && lp_lang_script(doc->text, doc->len) == LP_SCRIPT_HAN);
	j.pb = &lp_prompts_for(han)->answer;
	/* a request for the document's words searches for its topic only */
	request = lp_request_quote(j.question, &topic);
	verbatim = o->reply == REPLY_VERBATIM ||
		   (o->reply == REPLY_AUTO && o->quote != QUOTE_OFF && request);
	if (verbatim && request &&
	    !(j.question = lp_arena_strndup(&doc->arena, j.question + topic.off, topic.len)))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the question");
	if ((!verbatim || o->quote == QUOTE_MODEL) && (st = lp_stage_session(doc, &j.s, d)))
		return st;
	j.ids = lp_arena_alloc(&doc->arena, (doc->n_chunks + 1) * sizeof(size_t));
	cited = lp_arena_alloc(&doc->arena, (2 * doc->n_chunks + 2) * sizeof(size_t));
	if (!j.ids || !cited)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the prompt");
	j.corpus = lp_arena_alloc(&doc->arena, (doc->n_chunks + 1) * sizeof(*j.corpus));
	if (!j.corpus)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the evidence");
	for (size_t i = 0; i < doc->n_chunks; i++)
		j.corpus[i] = (struct lp_evidence_src){ i, doc->text + doc->chunks[i].off,
							doc->chunks[i].len, 0 };
	for (size_t pos = 0; j.n_focus < LP_ANSWER_MAX_FOCUS &&
			     lp_focus_next(j.question, strlen(j.question), &pos, &j.focus[j.n_focus]);) {
		const char *t = j.question + j.focus[j.n_focus].off;
		size_t tl = j.focus[j.n_focus].len;

		if (!lp_doc_names_itself(doc, t, tl))
			j.n_focus++;
		else if (j.n_doc_names + tl + 1 < sizeof(j.doc_names)) {
			memcpy(j.doc_names + j.n_doc_names, t, tl);
			j.n_doc_names += tl;
			j.doc_names[j.n_doc_names++] = ' ';
		}
	}
	j.asks = lp_focus_asks(j.question, &j.kind);
	lp_buf_init(&j.user);
	if ((i_absent = focus_absent(&j)) < j.n_focus)
		st = abstain(&j, why_focus(&j, j.pb->why_absent, i_absent), NULL, cited, d);
	else if (!han && lp_focus_absent_words(j.question, doc->text, doc->len, absent,
					       LP_FOCUS_ABSENT_WORDS) >= LP_FOCUS_ABSENT_WORDS)
		st = abstain(&j, lp_arena_printf(&doc->arena, j.pb->why_words, (int)absent[0].len,
						 j.question + absent[0].off, (int)absent[1].len,
						 j.question + absent[1].off), NULL, cited, d);
	else if (verbatim)
		st = run_verbatim(&j, cited, d);
	else
		st = o->quote != QUOTE_OFF ? run_quote(&j, cited, d) : run_direct(&j, cited, d);
	lp_buf_release(&j.user);
	if (!st)
		lp_doc_note(doc, "answer from %zu chunk%s (%s), %zu/%zu tokens in/out, cites %zu, "
			    "check: %s", j.n_ids, j.n_ids == 1 ? "" : "s", han ? "zh" : "en",
			    j.n_in, j.n_out, doc->n_cited, doc->answer_check);
	return st;
}

const struct lp_stage_kind lp_stage_answer = {
	.name = "answer",
	.parse = parse,
	.run = run,
	.describe = describe,
};
