/*
 * extract.c - the extract stage: every number, option, path, identifier,
 * quoted string or price of the working chunks, each with where it first
 * occurs.
 *
 *     - extract: {kinds: [number, option], max_items: 0}
 *
 * A question such as "list every option" or "every price" must not go
 * through a summary, which drops what it cannot fit. This stage is a map
 * and a merge with nothing in between: each chunk is scanned on its own
 * for the tokens text/ground.h checks (the same definitions the grounding
 * check uses, so what is extracted is what a summary would be held to),
 * and the merge keeps every distinct token (its bytes and its kind), with
 * the chunk and offset of its first occurrence and how many times it
 * occurs. Overlapping chunks are read once: a chunk's tokens before the
 * end of the last one kept are skipped, and a token that a chunk's end
 * cuts is read whole from the document. No model runs.
 *
 * The result (doc->answer) is a listing by kind, in order of first
 * occurrence, each item with its count and citation; doc->items holds the
 * same for the JSON report. `max_items` (0: all) caps the items kept; the
 * listing then says how many were left out, and the stage's note too.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/table.h"
#include "stages/doc.h"
#include "stages/plan.h"
#include "stages/stage.h"
#include "text/ground.h"
#include "text/money.h"

/* The ground kinds (text/ground.h), in their order, then a price: a
 * number with its currency (text/money.h). */
#define KIND_PRICE 5
static const char *const kind_names[] = { "number", "option", "path", "identifier", "quoted",
					  "price", NULL };
static const char *const kind_titles[] = { "Numbers", "Options", "Paths", "Identifiers",
					   "Quoted", "Prices" };

const char *lp_doc_item_kind_name(unsigned kind)
{
	return kind <= KIND_PRICE ? kind_names[kind] : "?";
}

struct extract_opts {
	unsigned kinds;         /* bit (1 << k) per kind k of kind_names */
	long long max_items;    /* 0: no cap */
};

static enum lp_status parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
			    const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = { "kinds", "max_items", NULL };
	struct extract_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	const char **names = NULL;
	size_t n = 0;

	(void)p;
	if (!o)
		return lp_cfg_nomem(c);
	if (lp_cfg_check_keys(c, opts, keys) ||
	    lp_cfg_get_string_list(c, opts, "kinds", &names, &n) ||
	    lp_cfg_get_int(c, opts, "max_items", 0, 0, 100000000, &o->max_items))
		return LP_E_CONFIG;
	o->kinds = n ? 0 : (1u << (KIND_PRICE + 1)) - 1;
	for (size_t i = 0; i < n; i++) {
		int k = 0;

		while (kind_names[k] && strcmp(kind_names[k], names[i]))
			k++;
		if (!kind_names[k])
			return lp_cfg_error(c, lp_node_get(opts, "kinds"),
					    "unknown kind '%s' (number, option, path, identifier, "
					    "quoted or price)", names[i]);
		o->kinds |= 1u << k;
	}
	*out = o;
	return LP_OK;
}

static void describe(const void *opts, struct lp_buf *out)
{
	const struct extract_opts *o = opts;
	const char *sep = "";

	lp_buf_adds(out, "{kinds: [");
	for (int k = 0; kind_names[k]; k++)
		if (o->kinds & (1u << k)) {
			lp_buf_addf(out, "%s%s", sep, kind_names[k]);
			sep = ", ";
		}
	lp_buf_addf(out, "], max_items: %lld}", o->max_items);
}

/* The distinct items so far, in order of first occurrence, and a hash
 * table (core/table.h) over them. */
struct merge {
	struct lp_doc *doc;
	struct lp_doc_item *items; /* [cap] in order of first occurrence */
	size_t n, cap;
	struct lp_table index;     /* of struct item_slot */
	size_t occurrences, dropped;
	size_t max_items;          /* 0: no cap */
};

struct item_slot {
	uint64_t h;  /* the item's hash, 0: empty */
	size_t id;   /* index into items */
};

static uint64_t item_hash(const char *s, size_t n, unsigned kind)
{
	uint64_t h = lp_hash_bytes(s, n, kind);

	return h ? h : 1;
}

/* An item being looked up: its kind and bytes. */
struct item_key {
	const struct merge *m;
	unsigned kind;
	const char *s;
	size_t len;
};

static int same_item(const void *slot, void *ctx)
{
	const struct item_key *k = ctx;
	const struct lp_doc_item *it = &k->m->items[((const struct item_slot *)slot)->id];

	return it->kind == k->kind && it->len == k->len &&
	       !memcmp(k->m->doc->text + it->off, k->s, k->len);
}

/* Double the items (tracked, the document's scope). */
static enum lp_status grow(struct merge *m, struct lp_diag *d)
{
	size_t cap = m->cap ? 2 * m->cap : 256;
	struct lp_doc_item *items = lp_mem_alloc(LP_MEM_DOC, cap * sizeof(*items), d);

	if (!items)
		return LP_E_NOMEM;
	if (m->n)
		memcpy(items, m->items, m->n * sizeof(*items));
	lp_mem_free(m->items);
	m->items = items;
	m->cap = cap;
	return LP_OK;
}

/* Count the token text[off, off + len) of chunk `chunk`; a new one is kept
 * (unless the cap is reached: then it is only counted as dropped). */
static enum lp_status add(struct merge *m, unsigned kind, size_t off, size_t len, size_t chunk,
			  struct lp_diag *d)
{
	struct item_key k = { m, kind, m->doc->text + off, len };
	uint64_t h = item_hash(k.s, len, kind);
	struct item_slot *slot;

	if ((m->n == m->cap && grow(m, d)) ||
	    (lp_table_needs_room(&m->index) && lp_table_grow(&m->index, d)))
		return LP_E_NOMEM;
	m->occurrences++;
	slot = lp_table_find(&m->index, h, same_item, &k);
	if (slot->h) {
		m->items[slot->id].count++;
		return LP_OK;
	}
	if (m->max_items && m->n >= m->max_items) {
		m->dropped++;
		return LP_OK;
	}
	m->items[m->n] = (struct lp_doc_item){ kind, off, len, chunk, 1 };
	slot->id = m->n++;
	lp_table_put(&m->index, slot, h);
	return LP_OK;
}

/* The whole token at text[off] of the kind `kind` when a chunk's end cut
 * it: scanned again from the document, past the chunk. */
static size_t whole_token(const struct lp_doc *doc, size_t off, unsigned kind, size_t len)
{
	struct lp_ground_token t;
	size_t span = doc->len - off < LP_GROUND_MAX_TOKEN ? doc->len - off : LP_GROUND_MAX_TOKEN;

	if (lp_ground_tokens(doc->text + off, span, &t, 1) >= 1 && t.off == 0 && t.kind == kind &&
	    t.len >= len)
		return t.len;
	return len;
}

static int cmp_token(const void *a, const void *b)
{
	const struct lp_ground_token *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

/*
 * Map: the tokens of chunk `chunk` that start at or after *taken (the end
 * of the last token kept: chunks overlap), in the order of the text,
 * moving *taken. A token that starts where the chunk starts inside a word
 * is the tail of one before it; one that the chunk's end cuts is taken
 * whole from the document.
 */
static enum lp_status scan_chunk(struct merge *m, size_t chunk, size_t *taken, unsigned kinds,
				 struct lp_diag *d)
{
	const struct lp_doc *doc = m->doc;
	const struct lp_chunk *c = &doc->chunks[chunk];
	size_t n = lp_ground_tokens(doc->text + c->off, c->len, NULL, 0);
	struct lp_ground_token *tok;
	enum lp_status st = LP_OK;

	if (!n)
		return LP_OK;
	if (!(tok = lp_mem_alloc(LP_MEM_SCRATCH, n * sizeof(*tok), d)))
		return LP_E_NOMEM;
	lp_ground_tokens(doc->text + c->off, c->len, tok, n);
	/* the scanner finds kinds in turn: put them back in the text's order */
	qsort(tok, n, sizeof(*tok), cmp_token);
	for (size_t i = 0; !st && i < n; i++) {
		size_t at = c->off + tok[i].off, len = tok[i].len;
		struct lp_span price;
		int priced;

		if (at < *taken)
			continue;
		if (at == c->off && at && !isspace((unsigned char)doc->text[at - 1]))
			continue;
		if (at + len == c->off + c->len && at + len < doc->len &&
		    !isspace((unsigned char)doc->text[at + len]))
			len = whole_token(doc, at, tok[i].kind, len);
		/* a price is read from the document, its currency may lie
		 * past the chunk's end */
		priced = tok[i].kind == LP_GROUND_NUMBER && (kinds & (1u << KIND_PRICE)) &&
			 lp_money_price(doc->text, doc->len, at, len, &price) &&
			 price.off >= *taken;
		if (priced && !(st = add(m, KIND_PRICE, price.off, price.len, chunk, d)))
			*taken = at + len;
		if (!st && (kinds & (1u << tok[i].kind)) &&
		    !(st = add(m, tok[i].kind, at, len, chunk, d)))
			*taken = at + len;
	}
	lp_mem_free(tok);
	return st;
}

/* "[chunk N · its section]" or "[chunk N · p. P]": where the item's
 * first occurrence is, not where its chunk starts. */
static void item_citation(const struct lp_doc *doc, const struct lp_doc_item *it, char *buf,
			  size_t cap)
{
	struct lp_doc_where w;

	lp_doc_where(doc, it->off, it->len, &w);
	if (w.page)
		snprintf(buf, cap, "[chunk %zu \xC2\xB7 p. %u]", it->chunk, w.page);
	else if (w.section[0])
		snprintf(buf, cap, "[chunk %zu \xC2\xB7 %s]", it->chunk, w.section);
	else
		snprintf(buf, cap, "[chunk %zu]", it->chunk);
}

/* The listing: a block per kind, items in order of first occurrence. */
static enum lp_status listing(struct merge *m, unsigned kinds, struct lp_diag *d)
{
	struct lp_doc *doc = m->doc;
	struct lp_buf out;
	char cite[320];
	int first = 1;

	lp_buf_init(&out);
	for (unsigned k = 0; kind_names[k]; k++) {
		size_t n = 0, occ = 0;

		if (!(kinds & (1u << k)))
			continue;
		for (size_t i = 0; i < m->n; i++)
			if (m->items[i].kind == k) {
				n++;
				occ += m->items[i].count;
			}
		lp_buf_addf(&out, "%s%s: %zu (%zu occurrence%s)\n", first ? "" : "\n",
			    kind_titles[k], n, occ, occ == 1 ? "" : "s");
		first = 0;
		for (size_t i = 0; i < m->n; i++) {
			const struct lp_doc_item *it = &m->items[i];

			if (it->kind != k)
				continue;
			item_citation(doc, it, cite, sizeof(cite));
			lp_buf_addf(&out, "  %.*s  x%zu  %s\n", (int)it->len, doc->text + it->off,
				    it->count, cite);
		}
	}
	if (m->dropped)
		lp_buf_addf(&out, "\n%zu more distinct item%s not listed (max_items %zu)\n",
			    m->dropped, m->dropped == 1 ? "" : "s", m->max_items);
	if (lp_buf_adds(&out, "") ||
	    !(doc->answer = lp_arena_strndup(&doc->arena, out.data, out.len))) {
		lp_buf_release(&out);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the listing");
	}
	lp_buf_release(&out);
	return LP_OK;
}

static int cmp_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

static enum lp_status run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct extract_opts *o = opts;
	struct merge m = { .doc = doc, .max_items = (size_t)o->max_items };
	size_t n, taken = 0, *order;
	const size_t *set = lp_doc_working_set(doc, &n);
	enum lp_status st = LP_OK;

	lp_table_init(&m.index, sizeof(struct item_slot), 512, LP_MEM_DOC);
	if (!set && doc->n_chunks)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the working set");
	if (!n)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "extract needs chunks: put a split stage before it");
	/* document order, so that overlaps are read once and "first" is first */
	if (!(order = lp_arena_alloc(&doc->arena, n * sizeof(*order))))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the working set");
	memcpy(order, set, n * sizeof(*order));
	qsort(order, n, sizeof(*order), cmp_index); /* chunk ids are in document order */
	for (size_t i = 0; !st && i < n; i++)
		st = scan_chunk(&m, order[i], &taken, o->kinds, d);
	if (st == LP_E_NOMEM && d->status == LP_OK)
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "over the memory budget for the items");
	if (!st)
		st = listing(&m, o->kinds, d);
	if (!st && m.n &&
	    !(doc->items = lp_arena_alloc(&doc->arena, m.n * sizeof(*doc->items))))
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the items");
	if (!st) {
		if (m.n)
			memcpy(doc->items, m.items, m.n * sizeof(*doc->items));
		doc->n_items = m.n;
		doc->n_items_dropped = m.dropped;
		lp_doc_note(doc, "%zu distinct items from %zu chunks (%zu occurrences)%s", m.n, n,
			    m.occurrences, m.dropped ? ", some not listed (max_items)" : "");
	}
	lp_mem_free(m.items);
	lp_table_release(&m.index);
	return st;
}

/* The tokens found and their table: 64 KiB and 0.75 bytes per byte
 * (489 KB on 878 KB); the report's list of them comes after. */
static size_t plan(const void *opts, const struct lp_pipeline *p, size_t doc_len)
{
	(void)opts, (void)p;
	return lp_stage_plan_line((size_t)64 << 10, 3, 4, doc_len);
}

const struct lp_stage_kind lp_stage_extract = {
	.name = "extract",
	.parse = parse,
	.run = run,
	.describe = describe,
	.plan = plan,
};
