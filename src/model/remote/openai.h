/*
 * openai.h - a client for an OpenAI-compatible chat completions server
 * (vLLM, llama.cpp's server, llama-cpp-python, a hosted service): the
 * generation half of a model session whose backend is `openai`
 * (model/session.h). Sizing prompts stays local: a session counts tokens
 * with a GGUF tokenizer (model.tokenizer) or with lp_openai_estimate_tokens.
 *
 * Requests
 *   POST {url}/chat/completions with {"model", "messages", "max_tokens",
 *   "temperature"} (plus "top_p" and "seed" when sampling), JSON through
 *   jansson. Temperature 0 asks for greedy decoding; other penalties are
 *   the server's own defaults. A `prefix` (text the assistant's turn already
 *   holds) is sent as a final assistant message, which llama.cpp's server
 *   and vLLM continue; the prefix is not repeated in the result.
 *
 * Failures and retries
 *   A request that fails in transport (connection refused or reset, no
 *   reply, timeout), or gets 429 or a 5xx status, is tried again after
 *   retry_delay_ms, doubling each time up to LP_OPENAI_MAX_DELAY_MS (a
 *   Retry-After header of a few seconds is honoured up to that bound), at
 *   most `retries` times. Then it fails with LP_E_IO and a message naming
 *   the URL, the last error and the number of attempts. Any other 4xx
 *   (a wrong model name, a refused key) fails at once with LP_E_CONFIG.
 *
 * Secrets
 *   The API key is read from the environment variable the configuration
 *   names, once, at lp_openai_new; it is sent only in the Authorization
 *   header, never logged, never put in a message (a server reply quoted in
 *   an error has any copy of it masked), and wiped at lp_openai_free.
 *
 * Threads: lp_openai_chat may run concurrently on one client. Each request
 * has its own curl handle; curl_global_init runs once per process.
 *
 * Concurrency
 *   A client keeps at most `concurrency` attempts in flight at once, over
 *   every thread that shares it (the documents of `lpipe batch -j N` share
 *   one session, so one client). A caller past the cap waits on a
 *   condition variable, holding no lock, until an attempt ends; the wait
 *   is not part of the attempt's timeout. The slot is held only while an
 *   attempt is on the wire: a request sleeping out its back-off gives it
 *   up and queues for one again, so a busy server's 429s do not idle the
 *   other callers' slots.
 */
#ifndef LP_MODEL_REMOTE_OPENAI_H
#define LP_MODEL_REMOTE_OPENAI_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "model/chat.h"
#include "model/sampler.h"

/* Back-off never waits longer than this between two attempts. */
#define LP_OPENAI_MAX_DELAY_MS 8000

struct lp_openai_params {
	const char *url;         /* base, e.g. "http://127.0.0.1:8080/v1" */
	const char *model;       /* the "model" field of each request */
	const char *api_key_env; /* variable holding the key; NULL: no key */
	long timeout_ms;         /* per attempt, whole request; <= 0: 60 s */
	int retries;             /* further attempts after a retryable failure */
	long retry_delay_ms;     /* the first back-off; <= 0: 500 ms */
	int concurrency;         /* attempts in flight at once; <= 0: no cap */
	struct lp_sampler_params sampler; /* temperature <= 0: greedy */
};

struct lp_openai;

/* url NULL, model NULL, no key, 60 s, 4 retries from 500 ms, 4 in flight,
 * greedy. */
struct lp_openai_params lp_openai_default_params(void);

/*
 * A client for p (strings copied). Returns LP_OK and *out (lp_openai_free);
 * LP_E_CONFIG when url or model is missing, the url is not http(s), or
 * api_key_env names a variable that is unset or empty (the message names
 * the variable, never a value); LP_E_IO when libcurl cannot start;
 * LP_E_NOMEM.
 */
enum lp_status lp_openai_new(const struct lp_openai_params *p, struct lp_openai **out,
			     struct lp_diag *d);
/* Wipes the key. NULL is a no-op. */
void lp_openai_free(struct lp_openai *c);

/* The chat completions endpoint, for messages ("{url}/chat/completions"). */
const char *lp_openai_endpoint(const struct lp_openai *c);

/*
 * Send msgs[0..n) (and `prefix`, may be NULL) and wait for the reply of at
 * most max_tokens tokens. On success *out_text is a new string (lp_mem_free)
 * holding the generated text as the server sent it (valid UTF-8: jansson
 * checks it; the session drops control characters), and *n_prompt / *n_out
 * (either may be NULL) the
 * server's usage counts (0 when it sends none). Returns LP_OK, LP_E_IO
 * (unreachable, timed out, 429/5xx after the retries, a reply that is not
 * a chat completion), LP_E_CONFIG (another 4xx), LP_E_NOMEM.
 */
enum lp_status lp_openai_chat(struct lp_openai *c, const struct lp_chat_msg *msgs, size_t n,
			      const char *prefix, size_t max_tokens, char **out_text,
			      size_t *n_prompt, size_t *n_out, struct lp_diag *d);

/*
 * The documented, conservative token estimate used without a tokenizer:
 * each non-ASCII character counts one token (CJK text takes about one per
 * character), and each run of ASCII one token per 3 bytes, rounded up
 * (English takes about one per 4). Overestimating only makes chunks and
 * prompts smaller than they could be.
 */
size_t lp_openai_estimate_tokens(const char *text, size_t len);
/* The longest prefix of text[0..len), in bytes and at a character
 * boundary, that the estimate puts at max_tokens or fewer. */
size_t lp_openai_estimate_prefix(const char *text, size_t len, size_t max_tokens);
/* Template tokens the estimate adds per message, and for the reply. */
#define LP_OPENAI_EST_PER_MSG 8

#endif
