/*
 * config.c - typed getters over the node tree, with uniform messages.
 *
 * Getters treat an absent key and a YAML null (`key:` or `key: ~`) alike:
 * the default applies. A value of the wrong shape (a map where a number is
 * expected) is an error at the value, never silently ignored.
 */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/utf8.h"

enum lp_status lp_cfg_error(struct lp_cfg_ctx *c, const struct lp_node *node,
			    const char *fmt, ...)
{
	char msg[sizeof(c->diag->msg)];
	const char *file = node && node->file ? node->file : c->path;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->section && c->section[0])
		return lp_diag_set(c->diag, LP_E_CONFIG, file, node ? node->line : 0,
				   node ? node->col : 0, "%s: %s", c->section, msg);
	return lp_diag_set(c->diag, LP_E_CONFIG, file, node ? node->line : 0,
			   node ? node->col : 0, "%s", msg);
}

enum lp_status lp_cfg_nomem(struct lp_cfg_ctx *c)
{
	return lp_diag_set(c->diag, LP_E_NOMEM, c->path, 0, 0,
			   "out of memory while reading the pipeline");
}

/* ---- suggestions --------------------------------------------------------- */

#define SUGGEST_MAX_LEN 64

/* Optimal-string-alignment distance (a swap of neighbours costs 1),
 * ignoring ASCII case. Both strings are at most SUGGEST_MAX_LEN bytes. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t rows[3][SUGGEST_MAX_LEN + 1];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
			size_t v = prev[j - 1] + !same;
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 &&
			    tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
			    prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *lp_cfg_suggest(const char *word, const char *const *words)
{
	size_t lw = word ? strlen(word) : 0, best_d = (size_t)-1;
	const char *best = NULL;

	if (!lw || lw > SUGGEST_MAX_LEN || !words)
		return NULL;
	for (size_t i = 0; words[i]; i++) {
		size_t l = strlen(words[i]), longer = l > lw ? l : lw, dist;
		if (l > SUGGEST_MAX_LEN)
			continue;
		dist = edit_distance(word, lw, words[i], l);
		/* About one typo per three letters, at least one: "sise" ->
		 * "size", "overlp" -> "overlap", but not "k1" -> "b". */
		if (dist <= (longer + 2) / 3 && dist < longer && dist < best_d) {
			best_d = dist;
			best = words[i];
		}
	}
	return best;
}

/* "a, b, c" into buf. */
static void join_words(const char *const *words, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; words && words[i] && len < cap; i++) {
		int n = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", words[i]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

/* The hint after "unknown X 'w'": a suggestion, or the valid words. */
static void hint(const char *word, const char *const *words, char *buf, size_t cap)
{
	const char *s = lp_cfg_suggest(word, words);
	char list[512];

	if (s) {
		snprintf(buf, cap, " (did you mean '%s'?)", s);
		return;
	}
	join_words(words, list, sizeof(list));
	if (list[0])
		snprintf(buf, cap, " (expected one of: %s)", list);
	else
		buf[0] = '\0';
}

/* The calling thread's: a watcher loads its pipelines on its own thread,
 * and a pipeline loaded on another meanwhile is not watched. */
static _Thread_local lp_cfg_keys_hook_fn keys_hook;
static _Thread_local void *keys_hook_arg;

void lp_cfg_set_keys_hook(lp_cfg_keys_hook_fn fn, void *arg)
{
	keys_hook = fn;
	keys_hook_arg = arg;
}

enum lp_status lp_cfg_check_keys(struct lp_cfg_ctx *c, const struct lp_node *map,
				 const char *const *allowed)
{
	char h[640];

	if (!map || lp_node_is_null(map))
		return LP_OK;
	if (keys_hook)
		keys_hook(map, allowed, keys_hook_arg);
	if (map->kind != LP_NODE_MAP)
		return lp_cfg_error(c, map, "expected a map of options, got %s",
				    lp_node_kind_name(map));
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->scalar;
		size_t j;
		for (j = 0; allowed[j] && strcmp(allowed[j], k); j++)
			;
		if (allowed[j])
			continue;
		hint(k, allowed, h, sizeof(h));
		return lp_cfg_error(c, map->keys[i], "unknown key '%s'%s", k, h);
	}
	return LP_OK;
}

enum lp_status lp_cfg_check_key_use(struct lp_cfg_ctx *c, const struct lp_node *map,
				    const struct lp_cfg_key_use *uses, const char *option,
				    const char *const *names, int chosen)
{
	for (; uses->key; uses++) {
		const struct lp_node *k = lp_node_key(map, uses->key);
		struct lp_buf who;
		enum lp_status st = LP_OK;

		if (!k || uses->variants & (1u << chosen))
			continue;
		lp_buf_init(&who);
		for (int i = 0; names[i] && !st; i++) /* "a", "a or b", "a, b or c" */
			if (uses->variants & (1u << i))
				st = lp_buf_addf(&who, "%s%s", !who.len ? ""
							       : uses->variants >> (i + 1) ? ", "
							       : " or ", names[i]);
		st = st ? lp_cfg_nomem(c)
			: lp_cfg_error(c, k, "key '%s' is not used by %s '%s' (only by %s %s)",
				       uses->key, option, names[chosen], option, who.data);
		lp_buf_release(&who);
		return st;
	}
	return LP_OK;
}

int lp_cfg_key_used(const struct lp_cfg_key_use *uses, const char *key, int chosen)
{
	for (; uses->key; uses++)
		if (!strcmp(uses->key, key))
			return !!(uses->variants & (1u << chosen));
	return 1;
}

/* ---- getters ---------------------------------------------------------------- */

/*
 * The scalar value of `key`: LP_OK with *v NULL when absent or null, LP_OK
 * with *v the node, or a type error when the value is a map or sequence.
 */
static enum lp_status scalar_of(struct lp_cfg_ctx *c, const struct lp_node *map,
				const char *key, const char *what,
				const struct lp_node **v)
{
	const struct lp_node *n = lp_node_get(map, key);

	*v = NULL;
	if (!n || lp_node_is_null(n))
		return LP_OK;
	if (n->kind != LP_NODE_SCALAR)
		return lp_cfg_error(c, n, "'%s' must be %s, got %s", key, what,
				    lp_node_kind_name(n));
	*v = n;
	return LP_OK;
}

/* Parse a whole string as a decimal integer; 0 on success, -1 if it is not
 * one, 1 on overflow. */
static int parse_ll(const char *s, long long *out)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	for (const char *p = (*s == '+' || *s == '-') ? s + 1 : s; ; p++) {
		if (!*p)
			break;
		if (!isdigit((unsigned char)*p))
			return -1;
	}
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (end == s || *end)
		return -1;
	return errno == ERANGE ? 1 : 0;
}

static enum lp_status int_range_error(struct lp_cfg_ctx *c, const struct lp_node *v,
				      const char *key, long long min, long long max)
{
	if (max == LLONG_MAX)
		return lp_cfg_error(c, v, "'%s' must be at least %lld, got %s", key, min,
				    v->scalar);
	if (min == LLONG_MIN)
		return lp_cfg_error(c, v, "'%s' must be at most %lld, got %s", key, max,
				    v->scalar);
	return lp_cfg_error(c, v, "'%s' must be between %lld and %lld, got %s", key, min,
			    max, v->scalar);
}

enum lp_status lp_cfg_get_int(struct lp_cfg_ctx *c, const struct lp_node *map,
			      const char *key, long long def, long long min,
			      long long max, long long *out)
{
	const struct lp_node *v;
	enum lp_status st = scalar_of(c, map, key, "an integer", &v);
	long long x;
	int r;

	if (st != LP_OK)
		return st;
	if (!v) {
		*out = def;
		return LP_OK;
	}
	r = parse_ll(v->scalar, &x);
	if (r < 0)
		return lp_cfg_error(c, v, "'%s' must be an integer, got '%s'", key, v->scalar);
	if (r > 0 || x < min || x > max)
		return int_range_error(c, v, key, min, max);
	*out = x;
	return LP_OK;
}

/* Decimal notation only: strtod would also take "inf", "nan" and hex. */
static int parse_double(const char *s, double *out)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
			return -1;
	errno = 0;
	*out = strtod(s, &end);
	if (end == s || *end)
		return -1;
	return errno == ERANGE || !isfinite(*out) ? 1 : 0;
}

enum lp_status lp_cfg_get_double(struct lp_cfg_ctx *c, const struct lp_node *map,
				 const char *key, double def, double min, double max,
				 double *out)
{
	const struct lp_node *v;
	enum lp_status st = scalar_of(c, map, key, "a number", &v);
	double x;
	int r;

	if (st != LP_OK)
		return st;
	if (!v) {
		*out = def;
		return LP_OK;
	}
	r = parse_double(v->scalar, &x);
	if (r < 0)
		return lp_cfg_error(c, v, "'%s' must be a number, got '%s'", key, v->scalar);
	if (r > 0 || x < min || x > max)
		return lp_cfg_error(c, v, "'%s' must be between %g and %g, got %s", key, min,
				    max, v->scalar);
	*out = x;
	return LP_OK;
}

enum lp_status lp_cfg_get_bool(struct lp_cfg_ctx *c, const struct lp_node *map,
			       const char *key, int def, int *out)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	const struct lp_node *v;
	enum lp_status st = scalar_of(c, map, key, "true or false", &v);

	if (st != LP_OK)
		return st;
	if (!v) {
		*out = def;
		return LP_OK;
	}
	for (int i = 0; i < 3; i++) {
		if (!strcasecmp(v->scalar, yes[i])) {
			*out = 1;
			return LP_OK;
		}
		if (!strcasecmp(v->scalar, no[i])) {
			*out = 0;
			return LP_OK;
		}
	}
	return lp_cfg_error(c, v, "'%s' must be true or false (or yes/no, on/off), got '%s'",
			    key, v->scalar);
}

enum lp_status lp_cfg_get_string(struct lp_cfg_ctx *c, const struct lp_node *map,
				 const char *key, const char *def, const char **out)
{
	const struct lp_node *v;
	enum lp_status st = scalar_of(c, map, key, "a string", &v);

	if (st != LP_OK)
		return st;
	if (!v) {
		*out = def;
		return LP_OK;
	}
	*out = lp_arena_strdup(c->arena, v->scalar);
	return *out ? LP_OK : lp_cfg_nomem(c);
}

enum lp_status lp_cfg_get_enum(struct lp_cfg_ctx *c, const struct lp_node *map,
			       const char *key, const char *const *names, int def,
			       int *out)
{
	const struct lp_node *v;
	enum lp_status st = scalar_of(c, map, key, "a name", &v);
	const char *s;
	char list[512];

	if (st != LP_OK)
		return st;
	if (!v) {
		*out = def;
		return LP_OK;
	}
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], v->scalar)) {
			*out = i;
			return LP_OK;
		}
	join_words(names, list, sizeof(list));
	s = lp_cfg_suggest(v->scalar, names);
	if (s)
		return lp_cfg_error(c, v, "'%s' must be one of %s, got '%s' (did you mean '%s'?)",
				    key, list, v->scalar, s);
	return lp_cfg_error(c, v, "'%s' must be one of %s, got '%s'", key, list, v->scalar);
}

enum lp_status lp_cfg_get_size(struct lp_cfg_ctx *c, const struct lp_node *map,
			       const char *key, size_t def, size_t *out)
{
	const struct lp_node *v;
	enum lp_status st = scalar_of(c, map, key, "a size", &v);

	if (st != LP_OK)
		return st;
	if (!v) {
		*out = def;
		return LP_OK;
	}
	if (lp_mem_parse_size(v->scalar, out) != LP_OK)
		return lp_cfg_error(c, v, "'%s' must be a size such as 4096, 512MiB or 2GiB, "
				    "got '%s'", key, v->scalar);
	return LP_OK;
}

enum lp_status lp_cfg_get_string_list(struct lp_cfg_ctx *c, const struct lp_node *map,
				      const char *key, const char ***out, size_t *n)
{
	const struct lp_node *v = lp_node_get(map, key);
	const char **list;
	size_t count;

	*out = NULL;
	*n = 0;
	if (!v || lp_node_is_null(v))
		return LP_OK;
	if (v->kind == LP_NODE_MAP)
		return lp_cfg_error(c, v, "'%s' must be a list of strings, got a map", key);
	count = v->kind == LP_NODE_SEQ ? v->n : 1;
	list = lp_arena_alloc(c->arena, (count ? count : 1) * sizeof(*list));
	if (!list)
		return lp_cfg_nomem(c);
	for (size_t i = 0; i < count; i++) {
		const struct lp_node *item = v->kind == LP_NODE_SEQ ? v->values[i] : v;
		if (item->kind != LP_NODE_SCALAR)
			return lp_cfg_error(c, item, "'%s' must be a list of strings, "
					    "but item %zu is %s", key, i, lp_node_kind_name(item));
		list[i] = lp_arena_strdup(c->arena, item->scalar);
		if (!list[i])
			return lp_cfg_nomem(c);
	}
	*out = list;
	*n = count;
	return LP_OK;
}

/* ---- writing values back ---------------------------------------------------- */

/* Words YAML 1.1 would read as something other than a string. */
static int looks_special(const char *s)
{
	static const char *const words[] = { "~", "null", "true", "false", "yes", "no",
					     "on", "off", "y", "n", NULL };
	long long ll;
	double dd;

	for (int i = 0; words[i]; i++)
		if (!strcasecmp(s, words[i]))
			return 1;
	return parse_ll(s, &ll) >= 0 || parse_double(s, &dd) >= 0;
}

static int plain_safe(const char *s)
{
	if (!*s || looks_special(s) || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]))
		return 0;
	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch < 0x20 || ch >= 0x7f || ch == '$' || ch == '#' || ch == ',' ||
		    strchr("[]{}\"'", ch))
			return 0;
		if (ch == ':' && (p[1] == ' ' || !p[1]))
			return 0;
	}
	return s[strlen(s) - 1] != ' ';
}

/* Code points a YAML reader takes as line breaks or a BOM, or refuses
 * raw; inside double quotes they must be escaped. */
static int needs_escape(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff;
}

static enum lp_status quote_char(struct lp_buf *out, const unsigned char *p, size_t left,
				 size_t *used)
{
	uint32_t cp;
	int n = *p < 0x80 ? 1 : lp_utf8_decode(p, left, &cp);

	*used = n ? (size_t)n : 1;
	if (*p < 0x80)
		cp = *p;
	if (!n) /* not UTF-8: keep the byte's value as a code point */
		return lp_buf_addf(out, "\\x%02x", *p);
	if (cp == '"' || cp == '\\')
		return lp_buf_addf(out, "\\%c", (char)cp);
	if (cp == '$')
		return lp_buf_adds(out, "$$");
	if (cp == '\n')
		return lp_buf_adds(out, "\\n");
	if (cp == '\t')
		return lp_buf_adds(out, "\\t");
	if (needs_escape(cp))
		return lp_buf_addf(out, "\\u%04x", (unsigned)cp);
	return lp_buf_add(out, p, *used);
}

enum lp_status lp_cfg_quote(struct lp_buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left, used;
	enum lp_status st;

	if (!s)
		return lp_buf_adds(out, "~");
	if (plain_safe(s))
		return lp_buf_adds(out, s);
	st = lp_buf_addc(out, '"');
	for (left = strlen(s); left && st == LP_OK; p += used, left -= used)
		st = quote_char(out, p, left, &used);
	return st == LP_OK ? lp_buf_addc(out, '"') : st;
}
