/*
 * request.h - what a client may ask of lpipe serve, parsed and checked
 * before anything is looked up.
 *
 * A run request names a pipeline, a document, a question and overrides,
 * as a JSON object or an HTML form (application/x-www-form-urlencoded):
 *
 *     {"pipeline": "qa", "document": "<64 hex>", "question": "...",
 *      "set": {"stages.retrieve.top_k": 3}}
 *     pipeline=qa&document=<64 hex>&question=...&set=stages.retrieve.top_k%3D3
 *
 * The parser is the server's only reader of request bodies and trusts
 * nothing: a pipeline is a bare name ([A-Za-z0-9_-], 1..64, no dot, so no
 * path and no extension), a document an id (64 lowercase hex digits, the
 * SHA-256 of its bytes) or, only when the server has --documents DIR, a
 * relative name inside it (document_path; the server resolves it), an
 * override's key is in the allow-list below and its value a plain word
 * ([A-Za-z0-9._+-], no "$" that would expand a variable, no "[" or "{"
 * that would make a YAML node of more keys). Unknown fields are refused,
 * so a misspelt field is never silently ignored.
 *
 * Allowed override keys: stages.KIND.OPT with KIND one of split, retrieve,
 * answer, summarize, verify, truncate, generate and OPT one of size,
 * overlap, unit, boundary, top_k, order, max_tokens, max_words, fanout,
 * min_words, budget, temperature, seed, quote. Paths (model.path,
 * prompt_file, output files), the model's context and the memory section
 * are not among them: they are the server's to choose, and the last two
 * would change a run's planned memory behind admission's back.
 */
#ifndef LP_SERVE_REQUEST_H
#define LP_SERVE_REQUEST_H

#include <stddef.h>

#include "core/status.h"

#define LP_SERVE_NAME_MAX 64      /* bytes of a pipeline name */
#define LP_SERVE_ID_LEN 64        /* hex digits of a document id */
#define LP_SERVE_QUESTION_MAX 4096 /* bytes of a question */
#define LP_SERVE_SETS_MAX 16      /* overrides in one request */
#define LP_SERVE_VALUE_MAX 64     /* bytes of an override's value */

struct lp_serve_run_req {
	char pipeline[LP_SERVE_NAME_MAX + 1];
	char document[LP_SERVE_ID_LEN + 1];   /* "" when document_path is given */
	char *document_path;                 /* malloc'd, or NULL */
	char *question;                      /* malloc'd, or NULL */
	char *sets[LP_SERVE_SETS_MAX];       /* "KEY=VALUE", malloc'd */
	size_t n_sets;
};

/* 1 when `s` is a pipeline name as above, else 0. */
int lp_serve_name_ok(const char *s);
/* 1 when `s` is a document id (64 lowercase hex digits), else 0. */
int lp_serve_id_ok(const char *s);
/* 1 when `key` may be overridden by a client, else 0. */
int lp_serve_set_key_ok(const char *key);
/* 1 when `value` is a plain word an override may take, else 0. */
int lp_serve_set_value_ok(const char *value);

/*
 * Parse the body[0..len) of POST /v1/runs; `form` 1 for a form body, 0 for
 * JSON. Returns LP_OK with *out filled (release it with
 * lp_serve_run_req_release), or LP_E_USAGE with `d` saying what is wrong
 * (*out then holds nothing). Never reads past len; the body need not be
 * NUL-terminated.
 */
enum lp_status lp_serve_parse_run(const char *body, size_t len, int form,
				  struct lp_serve_run_req *out, struct lp_diag *d);
void lp_serve_run_req_release(struct lp_serve_run_req *r);

#endif
