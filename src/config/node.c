/*
 * node.c - libyaml events to a tree of positioned nodes.
 *
 * The tree is built from the event stream (not from libyaml's document API)
 * so that an anchor or alias is refused the moment it is seen: nothing is
 * ever expanded, and a "billion laughs" file costs one event. Open maps and
 * sequences sit on an explicit stack whose depth is capped; their children
 * are collected in arena lists and turned into arrays when they close.
 */
#include "config/node.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <yaml.h>

#include "core/buf.h"

/* A child collected while its map or sequence is still open. */
struct cell {
	struct lp_node *node;
	struct cell *next;
};

struct frame {
	struct lp_node *node;        /* the open MAP or SEQ */
	struct cell *head, *tail;
	size_t count;                /* cells; a map alternates key, value */
};

struct builder {
	const char *path;            /* arena copy, shared by every node */
	const char *text;
	size_t len;
	size_t last_line;            /* 0-based index of the text's last line */
	int base_line, base_col;     /* where the text begins in its source */
	const struct lp_vars *vars;
	struct lp_arena *arena;
	struct lp_diag *d;
	struct frame stack[LP_YAML_MAX_DEPTH];
	int depth;
	int documents;
	struct lp_node *root;
};

int lp_node_is_null(const struct lp_node *n)
{
	if (!n || n->kind != LP_NODE_SCALAR || n->quoted)
		return 0;
	return !n->scalar[0] || !strcmp(n->scalar, "~") || !strcmp(n->scalar, "null") ||
	       !strcmp(n->scalar, "Null") || !strcmp(n->scalar, "NULL");
}

const char *lp_node_kind_name(const struct lp_node *n)
{
	if (!n)
		return "nothing";
	switch (n->kind) {
	case LP_NODE_MAP: return "a map";
	case LP_NODE_SEQ: return "a sequence";
	case LP_NODE_SCALAR: break;
	}
	return "a scalar";
}

static ssize_t key_index(const struct lp_node *map, const char *key)
{
	if (!map || map->kind != LP_NODE_MAP || !key)
		return -1;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->scalar, key))
			return (ssize_t)i;
	return -1;
}

struct lp_node *lp_node_get(const struct lp_node *map, const char *key)
{
	ssize_t i = key_index(map, key);

	return i < 0 ? NULL : map->values[i];
}

struct lp_node *lp_node_key(const struct lp_node *map, const char *key)
{
	ssize_t i = key_index(map, key);

	return i < 0 ? NULL : map->keys[i];
}

static enum lp_status fail(struct builder *b, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum lp_status fail(struct builder *b, int line, int col, const char *fmt, ...)
{
	char msg[sizeof(b->d->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return lp_diag_set(b->d, LP_E_CONFIG, b->path, line, col, "%s", msg);
}

static enum lp_status nomem(struct builder *b)
{
	return lp_diag_set(b->d, LP_E_NOMEM, b->path, 0, 0,
			   "out of memory while reading the pipeline");
}

/* Characters (not bytes) in s[0..n), for columns. */
static int utf8_chars(const char *s, size_t n)
{
	int k = 0;

	for (size_t i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xC0) != 0x80;
	return k;
}

/* Bytes of the line break at text[i], 0 if none. Counted as libyaml
 * counts lines: CR LF, CR, LF, NEL, LS and PS each end one. */
static size_t break_len(const char *text, size_t len, size_t i)
{
	const unsigned char *t = (const unsigned char *)text + i;
	size_t left = len - i;

	if (t[0] == '\r')
		return left > 1 && t[1] == '\n' ? 2 : 1;
	if (t[0] == '\n')
		return 1;
	if (left > 1 && t[0] == 0xC2 && t[1] == 0x85)
		return 2;
	if (left > 2 && t[0] == 0xE2 && t[1] == 0x80 && (t[2] == 0xA8 || t[2] == 0xA9))
		return 3;
	return 0;
}

/* Walk to byte `stop` or to the start of 0-based line `line`, whichever
 * comes first; returns the offset reached, with *lines the breaks passed
 * and *ls where the line there starts. */
static size_t walk_lines(const char *text, size_t len, size_t stop, size_t line,
			 size_t *lines, size_t *ls)
{
	size_t i = 0, n = 0, start = 0;

	while (i < stop && i < len && n < line) {
		size_t k = break_len(text, len, i);
		if (k) {
			i += k;
			n++;
			start = i;
		} else {
			i++;
		}
	}
	if (lines)
		*lines = n;
	if (ls)
		*ls = start;
	return i;
}

/* The byte offset where 0-based `line` starts, or len when past the end. */
static size_t line_start(const char *text, size_t len, size_t line)
{
	return walk_lines(text, len, len, line, NULL, NULL);
}

/* 1-based source position of a 0-based libyaml line and column. */
static void mark_pos(const struct builder *b, size_t mline, size_t mcol, int *line, int *col)
{
	/* libyaml places the end of a text without a final newline on the
	 * line after it; point at the end of the last line instead. */
	if (mline > b->last_line) {
		size_t ls = line_start(b->text, b->len, b->last_line);
		mline = b->last_line;
		mcol = (size_t)utf8_chars(b->text + ls, b->len - ls);
	}
	*line = b->base_line + (int)mline;
	*col = (mline == 0 ? b->base_col : 1) + (int)mcol;
}

static enum lp_status fail_at(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum lp_status fail_at(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
	char msg[sizeof(b->d->msg)];
	int line, col;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mark_pos(b, m->line, m->column, &line, &col);
	return lp_diag_set(b->d, LP_E_CONFIG, b->path, line, col, "%s", msg);
}

/* ---- ${var} substitution ---------------------------------------------- */

static const char *var_lookup(const struct lp_vars *vars, const char *name)
{
	if (vars)
		for (size_t i = 0; i < vars->n; i++)
			if (vars->names[i] && !strcmp(vars->names[i], name))
				return vars->values[i] ? vars->values[i] : "";
	return getenv(name);
}

static int is_name_char(char c, int first)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (!first && c >= '0' && c <= '9');
}

/* Where, inside a scalar, a substitution error points. Exact when the
 * scalar sits on one line and its text is written verbatim (no escapes or
 * folding); otherwise the start of the scalar. */
struct scalar_pos {
	int line, col;
	int exact;
};

static void sub_error_pos(const struct scalar_pos *sp, const char *s, size_t at,
			  int *line, int *col)
{
	*line = sp->line;
	*col = sp->col + (sp->exact ? utf8_chars(s, at) : 0);
}

/* Expand one ${...} starting at s[i] == '$', s[i+1] == '{'. Appends to out. */
static enum lp_status expand_var(struct builder *b, const struct scalar_pos *sp,
				 const char *s, size_t *i, struct lp_buf *out)
{
	size_t start = *i, j = *i + 2, name_end, close;
	const char *def = NULL, *val;
	size_t def_len = 0;
	char name[128];
	int line, col;

	while (s[j] && is_name_char(s[j], j == start + 2))
		j++;
	name_end = j;
	sub_error_pos(sp, s, start, &line, &col);
	if (s[j] == ':' && s[j + 1] == '-') {
		def = s + j + 2;
		for (j += 2; s[j] && s[j] != '}'; j++)
			;
		def_len = (size_t)(s + j - def);
	}
	if (s[j] != '}')
		return fail(b, line, col, s[j] ? "bad variable reference: a name is letters, digits and '_' "
				 "(write '$$' for a literal '$')"
				 : "unterminated '${' (write '$$' for a literal '$')");
	close = j;
	if (name_end == start + 2)
		return fail(b, line, col, "empty variable name in '${}'");
	if (name_end - start - 2 >= sizeof(name))
		return fail(b, line, col, "variable name too long");
	memcpy(name, s + start + 2, name_end - start - 2);
	name[name_end - start - 2] = '\0';
	val = var_lookup(b->vars, name);
	if (def && (!val || !val[0])) {
		if (lp_buf_add(out, def, def_len) != LP_OK)
			return nomem(b);
	} else if (val) {
		if (lp_buf_adds(out, val) != LP_OK)
			return nomem(b);
	} else {
		return fail(b, line, col, "undefined variable '%s' (set it in the environment, "
			    "or give a default: ${%s:-...})", name, name);
	}
	*i = close + 1;
	return LP_OK;
}

/* Substitute ${name}, ${name:-default} and $$ in `s`; the result is an
 * arena string in *out (s itself when there is no '$'). */
static enum lp_status substitute(struct builder *b, const struct scalar_pos *sp,
				 const char *s, const char **out)
{
	struct lp_buf buf;
	enum lp_status st = LP_OK;
	size_t i = 0;

	if (!strchr(s, '$')) {
		*out = s;
		return LP_OK;
	}
	lp_buf_init(&buf);
	while (s[i] && st == LP_OK) {
		if (s[i] == '$' && s[i + 1] == '$') {
			st = lp_buf_addc(&buf, '$') == LP_OK ? LP_OK : nomem(b);
			i += 2;
		} else if (s[i] == '$' && s[i + 1] == '{') {
			st = expand_var(b, sp, s, &i, &buf);
		} else {
			st = lp_buf_addc(&buf, s[i]) == LP_OK ? LP_OK : nomem(b);
			i++;
		}
	}
	if (st == LP_OK) {
		*out = lp_arena_strndup(b->arena, buf.data, buf.len);
		if (!*out)
			st = nomem(b);
	}
	lp_buf_release(&buf);
	return st;
}

/* ---- tree building ----------------------------------------------------- */

static struct lp_node *new_node(struct builder *b, enum lp_node_kind kind,
				const yaml_mark_t *m)
{
	struct lp_node *n = lp_arena_alloc(b->arena, sizeof(*n));

	if (!n)
		return NULL;
	n->kind = kind;
	mark_pos(b, m->line, m->column, &n->line, &n->col);
	n->file = b->path;
	n->scalar = "";
	return n;
}

static struct frame *top(struct builder *b)
{
	return b->depth ? &b->stack[b->depth - 1] : NULL;
}

static int expecting_key(const struct builder *b)
{
	const struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;

	return f && f->node->kind == LP_NODE_MAP && f->count % 2 == 0;
}

/* A key that repeats one already in the open map. */
static enum lp_status check_duplicate(struct builder *b, struct frame *f,
				      const struct lp_node *key)
{
	size_t k = 0;

	if (f->count / 2 >= LP_YAML_MAX_KEYS)
		return fail(b, key->line, key->col, "more than %d keys in one map",
			    LP_YAML_MAX_KEYS);
	for (struct cell *c = f->head; c; c = c->next, k++)
		if (k % 2 == 0 && !strcmp(c->node->scalar, key->scalar))
			return fail(b, key->line, key->col,
				    "duplicate key '%s' (first given on line %d)",
				    key->scalar, c->node->line);
	return LP_OK;
}

/* Attach a finished node to the open collection, or make it the root. */
static enum lp_status attach(struct builder *b, struct lp_node *n)
{
	struct frame *f = top(b);
	struct cell *c;

	if (!f) {
		b->root = n;
		return LP_OK;
	}
	if (expecting_key(b)) {
		enum lp_status st = check_duplicate(b, f, n);
		if (st != LP_OK)
			return st;
	}
	c = lp_arena_alloc(b->arena, sizeof(*c));
	if (!c)
		return nomem(b);
	c->node = n;
	if (f->tail)
		f->tail->next = c;
	else
		f->head = c;
	f->tail = c;
	f->count++;
	return LP_OK;
}

static enum lp_status reject_anchor(struct builder *b, const yaml_char_t *anchor,
				    const yaml_mark_t *m)
{
	if (!anchor)
		return LP_OK;
	return fail_at(b, m, "anchors are not supported ('&%s'): write the value out", anchor);
}

static enum lp_status reject_tag(struct builder *b, const yaml_char_t *tag, int implicit,
				 const yaml_mark_t *m)
{
	if (!tag || implicit)
		return LP_OK;
	return fail_at(b, m, "tags are not supported ('%s')", tag);
}

static enum lp_status on_scalar(struct builder *b, const yaml_event_t *e)
{
	const yaml_mark_t *m = &e->start_mark;
	const char *tag = (const char *)e->data.scalar.tag;
	int as_key = expecting_key(b);
	struct scalar_pos sp;
	struct lp_node *n;
	enum lp_status st;
	char *raw;
	int quoted = e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;

	if ((st = reject_anchor(b, e->data.scalar.anchor, m)) != LP_OK)
		return st;
	/* "!!str" only says "a string", which quoting already says. */
	if (tag && !strcmp(tag, YAML_STR_TAG))
		quoted = 1;
	else if ((st = reject_tag(b, e->data.scalar.tag, 0, m)) != LP_OK)
		return st;
	n = new_node(b, LP_NODE_SCALAR, m);
	raw = n ? lp_arena_strndup(b->arena, (const char *)e->data.scalar.value,
				  e->data.scalar.length) : NULL;
	if (!raw)
		return nomem(b);
	n->quoted = quoted;
	n->scalar = raw;
	if (!as_key) {
		yaml_scalar_style_t style = e->data.scalar.style;
		int in_quotes = style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
				style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		int width = (int)(e->end_mark.column - m->column);
		sp.line = n->line;
		sp.exact = e->end_mark.line == m->line && (in_quotes || style == YAML_PLAIN_SCALAR_STYLE) &&
			   width == utf8_chars(raw, e->data.scalar.length) + (in_quotes ? 2 : 0);
		sp.col = n->col + (sp.exact && in_quotes ? 1 : 0);
		if ((st = substitute(b, &sp, raw, &n->scalar)) != LP_OK)
			return st;
	}
	return attach(b, n);
}

static enum lp_status on_start(struct builder *b, const yaml_event_t *e,
			       enum lp_node_kind kind)
{
	const yaml_mark_t *m = &e->start_mark;
	const yaml_char_t *anchor = kind == LP_NODE_MAP ? e->data.mapping_start.anchor
							: e->data.sequence_start.anchor;
	const yaml_char_t *tag = kind == LP_NODE_MAP ? e->data.mapping_start.tag
						     : e->data.sequence_start.tag;
	int implicit = kind == LP_NODE_MAP ? e->data.mapping_start.implicit
					   : e->data.sequence_start.implicit;
	struct lp_node *n;
	enum lp_status st;

	if ((st = reject_anchor(b, anchor, m)) != LP_OK ||
	    (st = reject_tag(b, tag, implicit, m)) != LP_OK)
		return st;
	if (expecting_key(b))
		return fail_at(b, m, "a map key must be a scalar, not %s",
			    kind == LP_NODE_MAP ? "a map" : "a sequence");
	if (b->depth >= LP_YAML_MAX_DEPTH)
		return fail_at(b, m, "nesting deeper than %d levels", LP_YAML_MAX_DEPTH);
	n = new_node(b, kind, m);
	if (!n)
		return nomem(b);
	b->stack[b->depth].node = n;
	b->stack[b->depth].head = b->stack[b->depth].tail = NULL;
	b->stack[b->depth].count = 0;
	b->depth++;
	return LP_OK;
}

static enum lp_status on_end(struct builder *b)
{
	struct frame *f = top(b);
	struct lp_node *n = f->node;
	int is_map = n->kind == LP_NODE_MAP;
	struct cell *c = f->head;

	n->n = is_map ? f->count / 2 : f->count;
	if (n->n) {
		n->values = lp_arena_alloc(b->arena, n->n * sizeof(*n->values));
		n->keys = is_map ? lp_arena_alloc(b->arena, n->n * sizeof(*n->keys)) : NULL;
		if (!n->values || (is_map && !n->keys))
			return nomem(b);
	}
	for (size_t i = 0; i < n->n; i++) {
		if (is_map) {
			n->keys[i] = c->node;
			c = c->next;
		}
		n->values[i] = c->node;
		c = c->next;
	}
	b->depth--;
	return attach(b, n);
}

/* libyaml's complaint about a tab is cryptic; say what is wrong. */
static int tab_in_indent(const struct builder *b, size_t line)
{
	size_t i = line_start(b->text, b->len, line);

	for (; i < b->len && (b->text[i] == ' ' || b->text[i] == '\t'); i++)
		if (b->text[i] == '\t')
			return 1;
	return 0;
}

static void offset_to_pos(const struct builder *b, size_t off, int *line, int *col)
{
	size_t ls, nl;

	if (off > b->len)
		off = b->len;
	walk_lines(b->text, b->len, off, (size_t)-1, &nl, &ls);
	mark_pos(b, nl, (size_t)utf8_chars(b->text + ls, off - ls), line, col);
}

/* A ${var} in a flow collection ("{size: ${N}}") must be quoted, since
 * braces end a plain scalar there; libyaml's message does not say so. */
static const char *flow_hint(const struct builder *b, const yaml_parser_t *p)
{
	size_t ls = line_start(b->text, b->len, p->problem_mark.line);
	size_t le = ls;

	while (le < b->len && !break_len(b->text, b->len, le))
		le++;
	if (p->context && strstr(p->context, "flow") &&
	    memmem(b->text + ls, le - ls, "${", 2))
		return "; inside [...] or {...} write a variable in quotes: \"${name}\"";
	return "";
}

static enum lp_status syntax_error(struct builder *b, const yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "unknown error";
	int line, col, cline, ccol;

	if (p->error == YAML_MEMORY_ERROR)
		return nomem(b);
	if (p->error == YAML_READER_ERROR) {
		offset_to_pos(b, p->problem_offset, &line, &col);
		return fail(b, line, col, "invalid YAML: %s", problem);
	}
	if (tab_in_indent(b, p->problem_mark.line))
		return fail_at(b, &p->problem_mark, "invalid YAML: tabs are not allowed in "
			       "indentation (use spaces)");
	if (!p->context)
		return fail_at(b, &p->problem_mark, "invalid YAML: %s", problem);
	mark_pos(b, p->context_mark.line, p->context_mark.column, &cline, &ccol);
	return fail_at(b, &p->problem_mark, "invalid YAML: %s (%s at line %d, column %d%s)",
		       problem, p->context, cline, ccol, flow_hint(b, p));
}

static enum lp_status on_event(struct builder *b, const yaml_event_t *e, int *done)
{
	const yaml_mark_t *m = &e->start_mark;

	switch (e->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->documents > 1)
			return fail_at(b, m, "more than one YAML document ('---'): a file holds one pipeline");
		return LP_OK;
	case YAML_ALIAS_EVENT:
		return fail_at(b, m, "aliases are not supported ('*%s'): write the value out",
			    e->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		return on_scalar(b, e);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, e, LP_NODE_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, e, LP_NODE_MAP);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(b);
	case YAML_STREAM_END_EVENT:
		*done = 1;
		return LP_OK;
	default:
		return LP_OK;
	}
}

static enum lp_status run_parser(struct builder *b)
{
	yaml_parser_t parser;
	yaml_event_t e;
	enum lp_status st = LP_OK;
	int done = 0;

	if (!yaml_parser_initialize(&parser))
		return nomem(b);
	yaml_parser_set_input_string(&parser, (const unsigned char *)b->text, b->len);
	while (!done && st == LP_OK) {
		if (!yaml_parser_parse(&parser, &e)) {
			st = syntax_error(b, &parser);
			break;
		}
		st = on_event(b, &e, &done);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&parser);
	return st;
}

static enum lp_status parse(const char *path, const char *text, size_t len,
			    int line, int col, int empty_is_map, const struct lp_vars *vars,
			    struct lp_arena *arena, struct lp_node **root, struct lp_diag *d)
{
	struct builder b;
	static const yaml_mark_t start = { 0, 0, 0 };
	enum lp_status st;

	memset(&b, 0, sizeof(b));
	b.path = lp_arena_strdup(arena, path ? path : "");
	b.text = text ? text : "";
	b.len = text ? len : 0;
	walk_lines(b.text, b.len, b.len, (size_t)-1, &b.last_line, NULL);
	b.base_line = line;
	b.base_col = col;
	b.vars = vars;
	b.arena = arena;
	b.d = d;
	if (!b.path)
		return lp_diag_set(d, LP_E_NOMEM, path, 0, 0, "out of memory");
	st = run_parser(&b);
	if (st != LP_OK)
		return st;
	/* An empty file, or one holding only comments or "---", is an empty map. */
	if (!b.root || (empty_is_map && lp_node_is_null(b.root))) {
		b.root = new_node(&b, empty_is_map ? LP_NODE_MAP : LP_NODE_SCALAR, &start);
		if (!b.root)
			return nomem(&b);
	}
	*root = b.root;
	return LP_OK;
}

enum lp_status lp_yaml_parse(const char *path, const char *text, size_t len,
			     const struct lp_vars *vars, struct lp_arena *arena,
			     struct lp_node **root, struct lp_diag *d)
{
	return parse(path, text, len, 1, 1, 1, vars, arena, root, d);
}

enum lp_status lp_yaml_parse_value(const char *path, const char *text, size_t len,
				   int line, int col, const struct lp_vars *vars,
				   struct lp_arena *arena, struct lp_node **root,
				   struct lp_diag *d)
{
	return parse(path, text, len, line, col, 0, vars, arena, root, d);
}
