#include "stages/doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/mem.h"
#include "engine/engine.h"
#include "model/session.h"
#include "text/focus.h"
#include "text/match.h"

void lp_doc_init(struct lp_doc *doc, const struct lp_pipeline *p)
{
	lp_doc_init_engine(doc, p, NULL);
}

void lp_doc_init_engine(struct lp_doc *doc, const struct lp_pipeline *p,
			struct lp_engine *engine)
{
	memset(doc, 0, sizeof(*doc));
	lp_arena_init(&doc->arena);
	doc->pipeline = p;
	doc->engine = engine;
}

void lp_doc_release_model(struct lp_doc *doc)
{
	if (doc->engine)
		lp_engine_session_release(doc->engine, doc->session);
	else
		lp_session_free(doc->session);
	doc->session = NULL;
}

void lp_doc_release(struct lp_doc *doc)
{
	lp_doc_release_model(doc);
	if (doc->shared_src)
		lp_docstore_put(doc->store, doc->shared_src);
	else
		lp_document_release(&doc->src);
	lp_arena_release(&doc->arena);
	memset(doc, 0, sizeof(*doc));
}

const size_t *lp_doc_working_set(struct lp_doc *doc, size_t *n)
{
	if (doc->selection) {
		*n = doc->n_selection;
		return doc->selection;
	}
	/* No retrieve stage: the identity selection over every chunk. */
	doc->selection = lp_arena_alloc(&doc->arena, (doc->n_chunks + 1) * sizeof(size_t));
	if (!doc->selection) {
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < doc->n_chunks; i++)
		doc->selection[i] = i;
	doc->n_selection = doc->n_chunks;
	*n = doc->n_selection;
	return doc->selection;
}

size_t *lp_doc_best_first(struct lp_doc *doc, size_t *n)
{
	const size_t *set = lp_doc_working_set(doc, n);
	size_t *out;

	if (!set)
		return NULL;
	out = lp_arena_alloc(&doc->arena, (*n + 1) * sizeof(*out));
	if (!out)
		return NULL;
	/* insertion sort: stable, and a working set is a few dozen chunks */
	for (size_t i = 0; i < *n; i++) {
		size_t j = i;
		while (j && doc->chunks[out[j - 1]].score < doc->chunks[set[i]].score) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = set[i];
	}
	return out;
}

const char *lp_doc_result(struct lp_doc *doc)
{
	struct lp_buf b;
	const size_t *set;
	size_t n;
	char *out;

	if (doc->answer)
		return doc->answer;
	if (doc->summary)
		return doc->summary;
	set = lp_doc_working_set(doc, &n);
	if (!set && doc->n_chunks)
		return NULL;
	lp_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		const struct lp_chunk *c = &doc->chunks[set[i]];
		if ((i && lp_buf_adds(&b, "\n\n")) || lp_buf_add(&b, doc->text + c->off, c->len)) {
			lp_buf_release(&b);
			return NULL;
		}
	}
	if (!n && !doc->n_chunks && lp_buf_add(&b, doc->text, doc->len)) {
		lp_buf_release(&b);
		return NULL;
	}
	out = lp_arena_strndup(&doc->arena, b.data, b.len);
	lp_buf_release(&b);
	return out;
}

void lp_doc_note(struct lp_doc *doc, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!doc->trace || !doc->n_trace)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	doc->trace[doc->n_trace - 1].note = lp_arena_strdup(&doc->arena, line);
}

/* Length of an event's kind: the text before its first ':'. */
static size_t event_kind_len(const char *s)
{
	const char *c = strchr(s, ':');

	return c ? (size_t)(c - s) : strlen(s);
}

/* Has the trace entry LP_DOC_EVENTS_PER_KIND events of line's kind? */
static int kind_full(const struct lp_stage_trace *t, const char *line)
{
	size_t kl = event_kind_len(line), same = 0;

	for (size_t k = 0; k < t->n_events && same < LP_DOC_EVENTS_PER_KIND; k++)
		same += event_kind_len(t->events[k]) == kl && !strncmp(t->events[k], line, kl);
	return same >= LP_DOC_EVENTS_PER_KIND;
}

void lp_doc_event(struct lp_doc *doc, const char *fmt, ...)
{
	struct lp_stage_trace *t;
	const char **v;
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!strncmp(line, "shrink", 6))
		lp_info("%s", line); /* the user should know the budget bit */
	else
		lp_debug("%s", line);
	if (!doc->trace || !doc->n_trace)
		return;
	t = &doc->trace[doc->n_trace - 1];
	if (kind_full(t, line)) {
		t->n_events_dropped++;
		return;
	}
	if (t->n_events == t->cap_events) {
		/* doubling: the arrays left behind in the arena sum to less
		 * than the last one */
		size_t cap = t->cap_events ? 2 * t->cap_events : 8;
		v = lp_arena_alloc(&doc->arena, cap * sizeof(*v));
		if (!v)
			return;
		if (t->n_events)
			memcpy(v, t->events, t->n_events * sizeof(*v));
		t->events = v;
		t->cap_events = cap;
	}
	if ((t->events[t->n_events] = lp_arena_strdup(&doc->arena, line)))
		t->n_events++;
}

void lp_doc_where(const struct lp_doc *doc, size_t off, size_t len, struct lp_doc_where *w)
{
	const struct lp_doc_model *m = &doc->src.model;
	size_t first, n = m->n_blocks ? lp_doc_model_range(m, off, len, &first) : 0;

	memset(w, 0, sizeof(*w));
	w->kind = LP_BLOCK_PARAGRAPH;
	w->src_off = off;
	w->src_len = len;
	if (!n)
		return;
	/* a range that starts in the blank line after a block belongs to the next */
	if (n > 1 && m->blocks[first].off + m->blocks[first].len <= off) {
		first++;
		n--;
	}
	w->kind = m->blocks[first].kind;
	w->page = m->blocks[first].page;
	lp_doc_model_section_path(m, first, w->section, sizeof(w->section));
	w->src_off = (size_t)-1;
	w->src_len = 0;
	{
		const struct lp_doc_block *a = &m->blocks[first], *z = &m->blocks[first + n - 1];
		size_t hi = 0;

		for (size_t i = first; i < first + n; i++) {
			const struct lp_doc_block *b = &m->blocks[i];

			if (b->src_off < w->src_off)
				w->src_off = b->src_off;
			if (b->src_off + b->src_len > hi)
				hi = b->src_off + b->src_len;
		}
		/* a block that is the source's own bytes maps byte for byte: the
		 * range's ends, not its blocks', where they fall in one */
		if (a->verbatim && off > a->off && off < a->off + a->len)
			w->src_off = a->src_off + (off - a->off);
		if (z->verbatim && off + len > z->off && off + len < z->off + z->len)
			hi = z->src_off + (off + len - z->off);
		w->src_len = hi > w->src_off ? hi - w->src_off : 0;
	}
}

void lp_doc_citation(const struct lp_doc *doc, size_t chunk, char *buf, size_t cap)
{
	const struct lp_chunk *c;
	struct lp_doc_where w;
	int n;

	if (chunk >= doc->n_chunks) {
		snprintf(buf, cap, "[chunk %zu]", chunk);
		return;
	}
	c = &doc->chunks[chunk];
	/* the quote's own section when it is in this chunk: a chunk may start
	 * in the entry before the one it answers from */
	if (doc->quote_len && doc->quote_off >= c->off &&
	    doc->quote_off + doc->quote_len <= c->off + c->len)
		lp_doc_where(doc, doc->quote_off, doc->quote_len, &w);
	else
		lp_doc_where(doc, c->off, c->len, &w);
	n = snprintf(buf, cap, "[chunk %zu", chunk);
	if (w.page && n >= 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " \xC2\xB7 p. %u", w.page);
	else if (w.section[0] && n >= 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " \xC2\xB7 %s", w.section);
	if (n >= 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, "]");
}

static int is_term_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_';
}

/* The question holds t[0, n) as a whole token ("--delete", not the
 * "--delete" of "--delete-after"); case counts ("NAME" is not "name").
 * Not lp_focus_held (text/focus.h), on purpose: here a hyphen continues
 * every key on both sides ("interactive" is not named by
 * "non-interactive") and the key's bytes must stand as they are, where a
 * focus token may end at a hyphen unless it is an option and matches any
 * rendered hyphen and any run of white space. */
static int names_key(const char *q, const char *t, size_t n)
{
	if (n < 2)
		return 0;
	for (const char *p = q; *p; p++) {
		if (strncmp(p, t, n))
			continue;
		if ((p == q || !is_term_char(p[-1])) && !is_term_char(p[n]))
			return 1;
	}
	return 0;
}

/* Times a one-word term may occur in the document and still name its
 * entry by itself: "umask" does, "return" and "history" (hundreds of
 * times, as ordinary words) do not. */
#define LP_DOC_NAME_USES 20

/* The words that say what kind of entry the next or previous word names:
 * "the read builtin", "option nullglob". */
static const char *const entry_kinds[] = { "builtin", "command", "option", "variable",
					   "keyword", "function", "utility", "program",
					   "flag", "directive", "parameter", NULL };

/* 1 when w[0, n) is one of the words (any case). */
static int one_of(const char *const *words, const char *w, size_t n)
{
	for (size_t a = 0; words[a]; a++)
		if (strlen(words[a]) == n && !strncasecmp(w, words[a], n))
			return 1;
	return 0;
}

/* 1 when the question q holds t[0, n) in quotes or beside a kind word. */
static int named_as_entry(const char *q, const char *t, size_t n)
{
	for (const char *p = strstr(q, t); p; p = strstr(p + 1, t)) {
		const char *a = p + n, *b = p;
		size_t al = 0, bl = 0;

		if ((p > q && strchr("'`\"", p[-1])) || (*a && strchr("'`\"", *a)))
			return 1;
		while (*a == ' ')
			a++;
		while (isalpha((unsigned char)a[al]))
			al++;
		while (b > q && b[-1] == ' ')
			b--;
		while (b - bl > q && isalpha((unsigned char)b[-1 - (long)bl]))
			bl++;
		if ((al && one_of(entry_kinds, a, al)) || (bl && one_of(entry_kinds, b - bl, bl)))
			return 1;
	}
	return 0;
}

/*
 * Whether the token t[0, n) of a term can name its entry in question q:
 * an option ("--delete", "-v"), a name in capitals or with digits or
 * underscores ("SHLVL", "PROMPT_COMMAND", "x86"), or the term's only word
 * ("umask") when it is no stop word and rare in the document, or the
 * question quotes it or says its kind ("the history builtin"). An
 * ordinary word of a longer term ("the" of "Controlling the Prompt", a
 * menu line) is not: a question holding it does not name the entry.
 */
static int key_like(const struct lp_doc *doc, const char *q, const char *t, size_t n,
		    int only_word)
{
	int upper = 0, lower = 0, other = 0;

	if (t[0] == '-')
		return 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];
		upper += isupper(c) != 0;
		lower += islower(c) != 0;
		other += isdigit(c) || c == '_';
	}
	if (other || (upper && !lower))
		return 1;
	if (!only_word || lp_match_is_stopword(t, n))
		return 0;
	return named_as_entry(q, t, n) ||
	       lp_focus_count(doc->text, doc->len, t, n, LP_DOC_NAME_USES + 1) <= LP_DOC_NAME_USES;
}

/* Bytes of a document's opening read for its name. */
#define LP_DOC_TITLE_BYTES 200

int lp_doc_names_itself(const struct lp_doc *doc, const char *t, size_t n)
{
	const struct lp_doc_model *m = &doc->src.model;
	const char *title = doc->text;
	size_t len = doc->len, k = 0;
	char initials[LP_DOC_TITLE_BYTES];
	int run = 0;

	if (m->n_blocks) {
		title = doc->text + m->blocks[0].off;
		len = m->blocks[0].len;
	}
	if (len > LP_DOC_TITLE_BYTES)
		len = LP_DOC_TITLE_BYTES;
	if (lp_focus_held(title, len, t, n))
		return 1;
	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (t[i] < 'A' || t[i] > 'Z')
			return 0;
	/* the initials of each run of capitalised words, runs apart by a space */
	for (size_t i = 0; i < len && k + 2 < sizeof(initials); i++) {
		int starts = isalnum((unsigned char)title[i]) &&
			     (i == 0 || !isalnum((unsigned char)title[i - 1]));

		if (!starts)
			continue;
		if (isupper((unsigned char)title[i])) {
			initials[k++] = title[i];
			run = 1;
		} else if (run) {
			initials[k++] = ' ';
			run = 0;
		}
	}
	return memmem(initials, k, t, n) != NULL;
}

/* A term of several words in quote marks, after its clause number
 * ('1.6. "Executable Form"', a licence's or a specification's
 * definitions): 1 and the words inside the marks in *p, *n. */
static int quoted_phrase(const char *s, size_t len, const char **p, size_t *n)
{
	static const char *const marks[][2] = { { "\"", "\"" }, { "'", "'" },
						 { "\xE2\x80\x9C", "\xE2\x80\x9D" } };
	size_t i = 0;

	while (i < len && (isdigit((unsigned char)s[i]) || s[i] == '.' || s[i] == ' '))
		i++;
	for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
		size_t a = strlen(marks[m][0]), z = strlen(marks[m][1]);

		if (len - i > a + z && !memcmp(s + i, marks[m][0], a) &&
		    !memcmp(s + len - z, marks[m][1], z)) {
			*p = s + i + a;
			*n = len - i - a - z;
			return memchr(*p, ' ', *n) != NULL;
		}
	}
	return 0;
}

/* Where q holds the phrase p[0, n) as whole words, any case, or NULL. */
static const char *phrase_in(const char *q, const char *p, size_t n)
{
	for (const char *w = q; *w; w++)
		if (!strncasecmp(w, p, n) && (w == q || !is_term_char(w[-1])) &&
		    !is_term_char(w[n]))
			return w;
	return NULL;
}

/* The words a question about a term uses besides the term itself. */
static const char *const asking[] = { "what", "does", "do", "is", "the", "option", "options",
				      "mean", "means", "a", "an", "of", "for", "flag",
				      "variable", "command", "builtin", "describe", "explain",
				      "meaning", "use", NULL };

/* 1 when w[0, wl) is one of the words of k[0, n), any case. */
static int word_of(const char *k, size_t n, const char *w, size_t wl)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && is_term_char(k[j]))
			j++;
		if (j - i == wl && !strncasecmp(k + i, w, wl))
			return 1;
		i = j > i ? j : i + 1;
	}
	return 0;
}

/* 1 when q asks no more than what the term k[0, n) is: every other word
 * of it is an asking word; with `phrase` (k a defined phrase of several
 * words), a word of the phrase (any case), a function word or a name of
 * the document ("in the MPL") too. */
static int asks_only(const struct lp_doc *doc, const char *q, const char *k, size_t n, int phrase)
{
	for (const char *w = q; *w;) {
		size_t wl = 0;
		int known;

		while (*w && !is_term_char(*w))
			w++;
		while (is_term_char(w[wl]))
			wl++;
		if (!wl)
			break;
		if (phrase)
			known = word_of(k, n, w, wl) || lp_match_is_function_word(w, wl) ||
				lp_doc_names_itself(doc, w, wl);
		else
			known = wl == n && !strncmp(w, k, n);
		if (!known && !one_of(asking, w, wl))
			return 0;
		w += wl;
	}
	return 1;
}

int lp_doc_names_term(const struct lp_doc *doc, size_t t, const char *q, int *only)
{
	const struct lp_doc_block *b = &doc->src.model.blocks[t];
	const char *s = doc->text + b->off, *e = s + b->len, *p;
	int one_word = !memchr(s, ' ', b->len);
	size_t pn;

	/* a defined phrase, when the question asks no more than what it is
	 * ("What does \"Executable Form\" mean?"): a question uses such
	 * words in passing too ("What exit status does bash return ...?" is
	 * no question about the definition of 'exit status') */
	if (quoted_phrase(s, b->len, &p, &pn) && phrase_in(q, p, pn))
		return *only = asks_only(doc, q, p, pn, 1);

	while (s < e) {
		const char *k = s;
		size_t n = 0;

		const char *next;

		while (k + n < e && k[n] != ' ' && k[n] != ',' && k[n] != '=' && k[n] != '[' &&
		       k[n] != '\n')
			n++;
		next = k + n;
		/* the quote marks a manual puts around a name ("'SHLVL'") */
		while (n >= 2 && strchr("'`\"", k[0]) && k[n - 1] == k[0]) {
			k++;
			n -= 2;
		}
		if (n && !one_of(asking, k, n) && names_key(q, k, n) &&
		    key_like(doc, q, k, n, one_word)) {
			/* the rest of the question, word by word */
			*only = asks_only(doc, q, k, n, 0);
			return 1;
		}
		s = next;
		while (s < e && (*s == ' ' || *s == ',' || *s == '\n'))
			s++;
		if (s < e && (*s == '=' || *s == '['))
			break;
	}
	return 0;
}


void lp_doc_prefer_entries(const struct lp_doc *doc, const char *question, const size_t *set,
			   size_t n, double *scores)
{
	const struct lp_doc_model *m = &doc->src.model;
	double top = 0;
	int only;

	if (!question || !m->n_kind[LP_BLOCK_DEF_TERM])
		return;
	for (size_t i = 0; i < n; i++)
		top = scores[i] > top ? scores[i] : top;
	if (top <= 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct lp_chunk *c = &doc->chunks[set[i]];
		size_t first, k = lp_doc_model_range(m, c->off, c->len, &first);

		for (size_t b = first; b < first + k; b++) {
			const struct lp_doc_block *blk = &m->blocks[b];
			/* the term, or the start of its body: the entry's definition */
			size_t t = blk->kind == LP_BLOCK_DEF_TERM ? b
				 : blk->kind == LP_BLOCK_DEF_BODY && blk->term == b - 1 ? blk->term
				 : LP_DOC_NONE;

			if (t != LP_DOC_NONE && blk->off >= c->off &&
			    lp_doc_names_term(doc, t, question, &only)) {
				scores[i] += top;
				break;
			}
		}
	}
}

enum lp_status lp_doc_level_alloc(struct lp_doc *doc, struct lp_summary_level *l, size_t n,
				  struct lp_diag *d)
{
	memset(l, 0, sizeof(*l));
	l->texts = lp_arena_alloc(&doc->arena, (n + 1) * sizeof(*l->texts));
	l->first_input = lp_arena_alloc(&doc->arena, (n + 1) * sizeof(size_t));
	l->n_inputs = lp_arena_alloc(&doc->arena, (n + 1) * sizeof(size_t));
	if (!l->texts || !l->first_input || !l->n_inputs)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for a summary level");
	return LP_OK;
}

const char *lp_doc_levels_note(struct lp_doc *doc, const char *label, int tokens)
{
	struct lp_buf b;
	const char *s;

	lp_buf_init(&b);
	lp_buf_addf(&b, "%s%slevels: ", label ? label : "", label ? " " : "");
	for (size_t k = 0; k < doc->n_levels; k++)
		lp_buf_addf(&b, "%s%zu", k ? " -> " : "", doc->levels[k].n);
	if (tokens) {
		lp_buf_adds(&b, "; tokens in/out:");
		for (size_t k = 0; k < doc->n_levels; k++)
			lp_buf_addf(&b, " %zu/%zu", doc->levels[k].tokens_in,
				    doc->levels[k].tokens_out);
	}
	s = lp_arena_strndup(&doc->arena, b.data ? b.data : "", b.len);
	lp_buf_release(&b);
	return s;
}
