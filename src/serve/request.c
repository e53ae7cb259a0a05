/* request.c - parsing and checking run requests (request.h). */
#include "serve/request.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const set_kinds[] = { "split", "retrieve", "answer", "summarize", "verify",
					 "truncate", "generate", NULL };
static const char *const set_opts[] = { "size", "overlap", "unit", "boundary", "top_k",
					"order", "max_tokens", "max_words", "fanout",
					"min_words", "budget", "temperature", "seed", "quote",
					NULL };

static const char *const fields[] = { "pipeline", "document", "document_path", "question",
				      NULL };

static int in_list(const char *s, size_t n, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == n && !memcmp(list[i], s, n))
			return 1;
	return 0;
}

int lp_serve_name_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char c = s[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return 0;
	}
	return n >= 1 && n <= LP_SERVE_NAME_MAX;
}

int lp_serve_id_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return 0;
	return n == LP_SERVE_ID_LEN;
}

int lp_serve_set_key_ok(const char *key)
{
	const char *a, *b;

	if (strncmp(key, "stages.", 7))
		return 0;
	a = key + 7;
	b = strchr(a, '.');
	if (!b || !in_list(a, (size_t)(b - a), set_kinds))
		return 0;
	b++;
	return !strchr(b, '.') && in_list(b, strlen(b), set_opts);
}

int lp_serve_set_value_ok(const char *v)
{
	size_t n = 0;

	for (; v[n]; n++) {
		char c = v[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '+' || c == '-'))
			return 0;
	}
	return n >= 1 && n <= LP_SERVE_VALUE_MAX;
}

void lp_serve_run_req_release(struct lp_serve_run_req *r)
{
	free(r->question);
	free(r->document_path);
	for (size_t i = 0; i < r->n_sets; i++)
		free(r->sets[i]);
	memset(r, 0, sizeof(*r));
}

static enum lp_status bad(struct lp_serve_run_req *r, struct lp_diag *d, const char *fmt,
			  const char *arg)
{
	lp_serve_run_req_release(r);
	return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0, fmt, arg);
}

/* One field of either form, `value` NUL-terminated (it may hold a NUL
 * before its end: `n` is its real length). */
static enum lp_status take_field(struct lp_serve_run_req *r, const char *key, const char *value,
				 size_t n, struct lp_diag *d)
{
	if (strlen(value) != n)
		return bad(r, d, "field '%s' holds a NUL byte", key);
	if (!strcmp(key, "pipeline")) {
		if (!lp_serve_name_ok(value))
			return bad(r, d, "pipeline must be a bare name ([A-Za-z0-9_-], at most 64): "
				   "'%.80s'", value);
		strcpy(r->pipeline, value);
	} else if (!strcmp(key, "document")) {
		if (!lp_serve_id_ok(value))
			return bad(r, d, "document must be an id from POST /v1/documents "
				   "(64 hex digits): '%.80s'", value);
		strcpy(r->document, value);
	} else if (!strcmp(key, "document_path")) {
		if (!n || n > 1024 || r->document_path)
			return bad(r, d, "%s: empty, too long or given twice", key);
		if (!(r->document_path = strdup(value)))
			return bad(r, d, "%s: out of memory", key);
	} else if (!strcmp(key, "question")) {
		if (n > LP_SERVE_QUESTION_MAX || r->question)
			return bad(r, d, "%s: longer than 4096 bytes or given twice", key);
		if (!(r->question = strdup(value)))
			return bad(r, d, "%s: out of memory", key);
	} else {
		return bad(r, d, "unknown field '%.64s'", key);
	}
	return LP_OK;
}

static enum lp_status take_set(struct lp_serve_run_req *r, const char *key, const char *value,
			       struct lp_diag *d)
{
	size_t n;

	if (r->n_sets >= LP_SERVE_SETS_MAX)
		return bad(r, d, "more than 16 overrides%s", "");
	if (!lp_serve_set_key_ok(key))
		return bad(r, d, "override '%.80s' is not one a client may set", key);
	if (!lp_serve_set_value_ok(value))
		return bad(r, d, "override value '%.80s' is not a plain word ([A-Za-z0-9._+-])",
			   value);
	n = strlen(key) + strlen(value) + 2;
	if (!(r->sets[r->n_sets] = malloc(n)))
		return bad(r, d, "out of memory%s", "");
	snprintf(r->sets[r->n_sets++], n, "%s=%s", key, value);
	return LP_OK;
}

/* The text of a scalar override value: strings as they are, integers and
 * reals as JSON writes them, booleans as words. */
static int scalar_text(json_t *v, char *buf, size_t cap)
{
	if (json_is_string(v))
		return snprintf(buf, cap, "%s", json_string_value(v)) < (int)cap &&
		       strlen(json_string_value(v)) == json_string_length(v);
	if (json_is_integer(v))
		return snprintf(buf, cap, "%lld", (long long)json_integer_value(v)) < (int)cap;
	if (json_is_real(v))
		return snprintf(buf, cap, "%.17g", json_real_value(v)) < (int)cap;
	if (json_is_boolean(v))
		return snprintf(buf, cap, "%s", json_is_true(v) ? "true" : "false") < (int)cap;
	return 0;
}

static enum lp_status parse_json(const char *body, size_t len, struct lp_serve_run_req *r,
				 struct lp_diag *d)
{
	json_error_t err;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err), *v;
	const char *key;
	enum lp_status s = LP_OK;
	char val[LP_SERVE_VALUE_MAX + 2];

	if (!root)
		return lp_diag_set(d, LP_E_USAGE, NULL, err.line, err.column, "malformed JSON: %s",
				   err.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0, "the body must be a JSON object");
	}
	json_object_foreach(root, key, v) {
		if (!strcmp(key, "set")) {
			const char *k;
			json_t *x;
			if (!json_is_object(v)) {
				s = bad(r, d, "%s must be an object of KEY: VALUE", key);
				break;
			}
			json_object_foreach(v, k, x) {
				if (!scalar_text(x, val, sizeof(val))) {
					s = bad(r, d, "override '%.80s' needs a short scalar value", k);
					break;
				}
				if ((s = take_set(r, k, val, d)))
					break;
			}
			if (s)
				break;
			continue;
		}
		if (!in_list(key, strlen(key), fields)) {
			s = bad(r, d, "unknown field '%.64s'", key);
			break;
		}
		if (!json_is_string(v)) {
			s = bad(r, d, "field '%.64s' must be a string", key);
			break;
		}
		if ((s = take_field(r, key, json_string_value(v), json_string_length(v), d)))
			break;
	}
	json_decref(root);
	return s;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode s[0..n) into a new NUL-terminated string; *out_n its
 * length. NULL for a bad escape or no memory. */
static char *form_decode(const char *s, size_t n, size_t *out_n)
{
	char *o = malloc(n + 1);
	size_t j = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '+') {
			o[j++] = ' ';
		} else if (s[i] == '%') {
			int hi, lo;
			if (i + 2 >= n) {
				free(o);
				return NULL;
			}
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0) {
				free(o);
				return NULL;
			}
			o[j++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			o[j++] = s[i];
		}
	}
	o[j] = 0;
	*out_n = j;
	return o;
}

static enum lp_status parse_form(const char *body, size_t len, struct lp_serve_run_req *r,
				 struct lp_diag *d)
{
	size_t i = 0;

	while (i < len) {
		size_t end = i, eq;
		char *k, *v, *sep;
		size_t kn, vn;
		enum lp_status s;

		while (end < len && body[end] != '&')
			end++;
		for (eq = i; eq < end && body[eq] != '='; eq++)
			;
		if (eq == i || eq == end) {
			lp_serve_run_req_release(r);
			return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
					   "malformed form body at byte %zu", i);
		}
		k = form_decode(body + i, eq - i, &kn);
		v = form_decode(body + eq + 1, end - eq - 1, &vn);
		if (!k || !v || strlen(k) != kn) {
			free(k);
			free(v);
			lp_serve_run_req_release(r);
			return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
					   "malformed escape in the form body near byte %zu", i);
		}
		if (!strcmp(k, "set")) {
			sep = strchr(v, '=');
			if (!sep || strlen(v) != vn) {
				s = bad(r, d, "set must be KEY=VALUE: '%.80s'", v);
			} else {
				*sep = 0;
				s = take_set(r, v, sep + 1, d);
			}
		} else {
			s = take_field(r, k, v, vn, d);
		}
		free(k);
		free(v);
		if (s)
			return s;
		i = end + 1;
	}
	return LP_OK;
}

enum lp_status lp_serve_parse_run(const char *body, size_t len, int form,
				  struct lp_serve_run_req *out, struct lp_diag *d)
{
	enum lp_status s;

	memset(out, 0, sizeof(*out));
	s = form ? parse_form(body, len, out, d) : parse_json(body, len, out, d);
	if (s)
		return s;
	if (!out->pipeline[0])
		return bad(out, d, "the request names no pipeline%s", "");
	if (!out->document[0] == !out->document_path)
		return bad(out, d, "give exactly one of document (an id) and document_path%s", "");
	return LP_OK;
}
