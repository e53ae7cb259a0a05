/*
 * split.h - cutting a text into chunks by offset, for the split stage and
 * for model code that needs pieces of a given token count.
 *
 * The text is read as a sequence of units; white space between units is
 * kept inside a chunk but never counted, so no chunk starts or ends with
 * white space. The units:
 *
 *   chars       code points other than white space
 *   words       runs of non-space characters, except that each CJK character
 *               (lp_utf8_is_cjk, CJK punctuation included) is a word alone
 *   sentences   as lp_sentence_next finds them
 *   paragraphs  as lp_paragraph_next finds them (blank-line separated)
 *   tokens      word pieces. By default an approximation: a run of letters
 *               or digits (not CJK) is ceil(len/4) pieces of 4 code points,
 *               each CJK character is one piece, and each other non-space
 *               character (punctuation, symbols) is one piece. A struct
 *               lp_token_counter replaces it: then the pieces are runs of
 *               letters/digits of at most 32 code points and single other
 *               characters, each weighing what the counter says (at least 1,
 *               at most `size`)
 *   regex       the pieces between matches of a PCRE2 separator pattern; the
 *               separator begins the next piece, so with `(?m)^#+ ` every
 *               markdown heading stays with its section (and any text before
 *               the first heading is a piece of its own)
 *
 * A chunk is a run of whole units weighing at most `size`. The next chunk
 * starts `overlap` units before the end of the previous one (overlap <
 * size). With boundary sentence or paragraph, a chunk is cut after the
 * latest unit that closes a sentence (paragraph) and leaves more than
 * `overlap` units in the chunk; without such a unit it is cut at `size`.
 *
 * Invariants (tested on random texts and fuzzed):
 *  - every chunk is the verbatim slice text[off, off + len), begins and ends
 *    on a code-point boundary and with a non-space character;
 *  - chunks are in order and together cover every non-space character;
 *  - no chunk weighs more than `size` units (lp_split_count of its slice);
 *  - consecutive chunks share exactly `overlap` units (with a custom token
 *    counter: the largest run of whole pieces weighing at most `overlap`),
 *    or, with overlap 0, touch or are separated by white space only;
 *  - memory is O(number of chunks): the text is scanned, never copied, and
 *    the work is O(len * size / (size - overlap)).
 *
 * Texts must be valid UTF-8 (lp_document guarantees it). Other units
 * tolerate invalid bytes as one unit each; unit regex refuses such a text
 * (LP_E_INPUT). Nothing is read past `len`.
 */
#ifndef LP_TEXT_SPLIT_H
#define LP_TEXT_SPLIT_H

#include <stddef.h>

#include "core/status.h"
#include "text/sentence.h"

enum lp_split_unit {
	LP_SPLIT_CHARS,
	LP_SPLIT_WORDS,
	LP_SPLIT_SENTENCES,
	LP_SPLIT_PARAGRAPHS,
	LP_SPLIT_TOKENS,
	LP_SPLIT_REGEX,
};

enum lp_split_boundary {
	LP_BOUNDARY_NONE,
	LP_BOUNDARY_SENTENCE,
	LP_BOUNDARY_PARAGRAPH,
};

/* NULL-terminated names, indexed by the enums ("chars", "words", ...;
 * "none", "sentence", "paragraph"), for config parsing and printing. */
extern const char *const lp_split_unit_names[];
extern const char *const lp_split_boundary_names[];

/* Counts the tokens of text[0..len) (a model's tokenizer, say). Must be
 * deterministic and safe to call on any slice of valid UTF-8. */
struct lp_token_counter {
	size_t (*count)(void *ctx, const char *text, size_t len);
	void *ctx;
};

/* Spans a chunk must not be cut inside (a table row, a code block, a
 * table's header with its first row). `next` writes the first such span
 * ending after byte `from` to [*start, *end) and returns 1, or returns 0
 * when none is left. Spans are in order and do not overlap. */
struct lp_split_keep {
	int (*next)(void *ctx, size_t from, size_t *start, size_t *end);
	void *ctx;
};

struct lp_split_params {
	enum lp_split_unit unit;
	size_t size;                     /* units per chunk, > 0 */
	size_t overlap;                  /* units shared by neighbours, < size */
	enum lp_split_boundary boundary;
	const char *pattern;             /* LP_SPLIT_REGEX: the separator */
	struct lp_token_counter counter; /* LP_SPLIT_TOKENS: count NULL = approximation */
	struct lp_split_keep keep;       /* next NULL: no spans to keep whole. A
					  * chunk that would end inside a span
					  * ends before it instead, unless the
					  * span starts the chunk (a span over
					  * `size` is cut as before) */
	int text_is_utf8;                /* the caller has checked that the text is
					  * valid UTF-8: a pattern then skips its
					  * own pass over the whole text */
};

/* unit tokens, size 384, overlap 0, boundary sentence, no pattern, no counter. */
struct lp_split_params lp_split_default_params(void);

struct lp_splitter;

/*
 * Validate `p` and compile its pattern. Returns LP_OK and a splitter the
 * caller frees with lp_split_free; LP_E_CONFIG for size 0, overlap >= size,
 * a missing pattern, or a pattern PCRE2 rejects ("invalid pattern '(x':
 * missing closing parenthesis at offset 2"; d->offset is the offset in the
 * pattern); LP_E_NOMEM. `p->pattern` is copied; the counter's ctx must
 * outlive the splitter. A splitter is not safe to use from two threads at
 * once (it holds PCRE2 match data).
 */
enum lp_status lp_split_new(const struct lp_split_params *p, struct lp_splitter **out,
			    struct lp_diag *d);
/* NULL is a no-op. */
void lp_split_free(struct lp_splitter *s);
const struct lp_split_params *lp_split_params_of(const struct lp_splitter *s);

/* Called once per chunk, in order; a nonzero return stops the split. */
typedef int (*lp_split_fn)(void *ctx, size_t off, size_t len);

/* Cut text[0..len) and hand each chunk to `fn`. Returns LP_OK (also when fn
 * stopped early), or LP_E_INPUT when a regex match fails (match limit) or
 * the text is not valid UTF-8 (unit regex only; d->offset is the byte). */
enum lp_status lp_split_each(struct lp_splitter *s, const char *text, size_t len,
			     lp_split_fn fn, void *ctx, struct lp_diag *d);

/* A growing list of spans in tracked memory (tag LP_MEM_DOC); zero it to
 * start, lp_mem_free(v) when done. */
struct lp_span_list {
	struct lp_span *v; /* [n], room for cap */
	size_t n, cap;
};

/* Append [off, off + len). Returns LP_OK, or LP_E_NOMEM (the list is
 * unchanged). */
enum lp_status lp_span_list_push(struct lp_span_list *l, size_t off, size_t len,
				 struct lp_diag *d);

/* Same, collecting the chunks into *out (tracked memory, tag LP_MEM_DOC,
 * the caller frees it with lp_mem_free; NULL when there are none) and their
 * count into *n. Returns LP_OK, LP_E_NOMEM or LP_E_INPUT. */
enum lp_status lp_split_run(struct lp_splitter *s, const char *text, size_t len,
			    struct lp_span **out, size_t *n, struct lp_diag *d);

/* Weight of text[0..len) in the splitter's unit: how many units a chunk
 * made of exactly this slice would count. For unit regex the slice is
 * matched alone, so a pattern that looks behind its start or ahead past its
 * end may count differently than inside the whole text. */
size_t lp_split_count(struct lp_splitter *s, const char *text, size_t len);

#endif
