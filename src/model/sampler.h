/*
 * sampler.h - choosing the next token from logits, and knowing when to stop.
 *
 * Sampling order, each step optional:
 *   repetition penalty over the last repeat_last_n accepted tokens (a
 *   positive logit is divided by the penalty, a negative one multiplied,
 *   once per distinct token) -> greedy when temperature <= 0 (argmax, lowest
 *   id on ties) -> top-k -> softmax at the temperature -> top-p (smallest
 *   prefix of the sorted candidates whose mass reaches top_p) -> min-p (drop
 *   candidates below min_p x the best probability) -> draw.
 *
 * Reproducible: the random stream is a 64-bit xorshift* seeded with
 * splitmix64(seed); the same seed, logits and history give the same ids on
 * every platform that has IEEE floats and the same libm expf.
 *
 * No allocation per token: the scratch (a logits copy under LP_MEM_LOGITS,
 * candidate and probability arrays under LP_MEM_SCRATCH, sized by n_vocab)
 * and the history ring are allocated by lp_sampler_new.
 *
 * A sampler is used by one thread at a time.
 */
#ifndef LP_MODEL_SAMPLER_H
#define LP_MODEL_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/status.h"

struct lp_vocab;

struct lp_sampler_params {
	float temperature;     /* <= 0: greedy */
	int32_t top_k;         /* <= 0: off */
	float top_p;           /* >= 1: off */
	float min_p;           /* <= 0: off */
	float repeat_penalty;  /* 1: off */
	int32_t repeat_last_n; /* tokens of history the penalty sees */
	uint64_t seed;
};

/* temperature 0.8, top_k 40, top_p 0.95, min_p 0.05, repeat_penalty 1.1
 * over the last 64 tokens, seed 42. */
struct lp_sampler_params lp_sampler_default_params(void);

struct lp_sampler;

/* Returns LP_OK and a sampler owned by the caller (lp_sampler_free), or
 * LP_E_CONFIG for n_vocab < 1 or a negative repeat_last_n, LP_E_NOMEM. */
enum lp_status lp_sampler_new(const struct lp_sampler_params *p, int32_t n_vocab,
			      struct lp_sampler **out, struct lp_diag *d);
void lp_sampler_free(struct lp_sampler *s);

/* Pick a token from logits[0..n_vocab) (not modified). Does not record it:
 * call lp_sampler_accept with the token actually used. */
int32_t lp_sampler_sample(struct lp_sampler *s, const float *logits);
/* Add a token to the penalty history (prompt tokens too, if wanted). */
void lp_sampler_accept(struct lp_sampler *s, int32_t id);
/* Forget the history and restart the random stream from the seed. */
void lp_sampler_reset(struct lp_sampler *s);

/* ---- stopping ------------------------------------------------------------ */

/*
 * End-of-generation ids and stop strings. Stop strings are matched over the
 * decoded text, across token boundaries: lp_stop_feed releases only the text
 * that can no longer be the start of a stop string and holds the rest back.
 */
struct lp_stop {
	int32_t ids[16];
	size_t n_ids;
	char *strs[8];       /* owned copies */
	size_t n_strs;
	size_t max_len;      /* longest stop string */
	struct lp_buf held;  /* decoded text not released yet */
};

void lp_stop_init(struct lp_stop *s);
void lp_stop_release(struct lp_stop *s);
/* Add eos, eot and the ids of the end-of-turn tokens the vocabulary has
 * ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>"). */
void lp_stop_add_vocab(struct lp_stop *s, const struct lp_vocab *v);
/* Returns LP_OK, or LP_E_CONFIG when the table is full (16 ids, 8 strings)
 * or the string is empty, LP_E_NOMEM. */
enum lp_status lp_stop_add_id(struct lp_stop *s, int32_t id, struct lp_diag *d);
enum lp_status lp_stop_add_string(struct lp_stop *s, const char *str, struct lp_diag *d);
/* 1 when `id` ends generation. */
int lp_stop_is_eog(const struct lp_stop *s, int32_t id);
/*
 * Take newly decoded text; append to `out` what is safe to show. *stopped
 * becomes 1 when a stop string completed: the text before it is appended,
 * the stop string and anything after it are dropped. LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_stop_feed(struct lp_stop *s, const char *text, size_t len,
			    struct lp_buf *out, int *stopped);
/* End of generation: append whatever is held back. */
enum lp_status lp_stop_finish(struct lp_stop *s, struct lp_buf *out);

#endif
