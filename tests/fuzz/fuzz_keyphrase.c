/*
 * fuzz_keyphrase.c - keyphrase extraction, matching and extractive
 * summaries on any bytes.
 *
 * Byte 0 picks how many phrases to ask for and the summary limits; the
 * rest is the text, used raw for the functions that accept any bytes
 * (tokens, word counts, keyphrases, matching) and only when it is valid
 * UTF-8 for the extractive summary (lp_sentence_next requires it).
 * Invariants checked, a violation aborts: tokens are in order, non-empty and
 * inside the text; every keyphrase occurs in the text it came from (under
 * the matcher's normal form); a summary respects max_words; the grounding
 * tokens of the text are in order, inside it, and all found when the text
 * is its own source; no tracked memory is left behind.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/mem.h"
#include "core/utf8.h"
#include "text/extractive.h"
#include "text/ground.h"
#include "text/keyphrase.h"
#include "text/match.h"

static void check_tokens(const char *t, size_t len)
{
	struct lp_token tok;
	size_t pos = 0, end = 0, words = 0;

	while (lp_match_token_next(t, len, &pos, &tok)) {
		if (!tok.len || tok.off < end || tok.off + tok.len > len || pos != tok.off + tok.len)
			abort();
		end = pos;
		words += tok.kind != LP_TOKEN_PUNCT;
	}
	if (words != lp_match_count_words(t, len))
		abort();
}

static void check_keyphrases(const char *t, size_t len, size_t n)
{
	struct lp_arena a;
	struct lp_diag d;
	struct lp_match m;
	const char **v;
	size_t k;
	int found;

	lp_arena_init(&a);
	if (lp_match_init(&m, t, len, &d))
		abort();
	/* terms (no parts), then topics over 16 parts of two pieces */
	for (size_t parts = 0; parts <= 16; parts += 16) {
		size_t h = len / 2;
		while (h && t[h - 1] != ' ' && t[h - 1] != '\n')
			h--; /* cut between words, as chunks are */
		struct lp_span halves[2] = { { 0, h }, { h, len - h } };
		if (parts ? lp_keyphrase_extract_spans(t, halves, 2, parts, n, &a, &v, &k, NULL,
						       NULL, &d) :
			    lp_keyphrase_extract(t, len, n, &a, &v, &k, &d))
			abort();
		if (k > n)
			abort();
		for (size_t i = 0; i < k; i++)
			if (lp_match_contains(&m, v[i], strlen(v[i]), &found) || !found)
				abort();
	}
	lp_match_release(&m);
	lp_arena_release(&a);
}

static void check_summary(const char *t, size_t len, size_t max_words, size_t max_sentences)
{
	struct lp_extractive_opts o = {max_words, max_sentences, NULL};
	struct lp_diag d;
	char *s;
	size_t n;

	if (lp_utf8_find_invalid((const unsigned char *)t, len) != len || memchr(t, 0, len))
		return;
	if (lp_extractive_summarize(t, len, &o, &s, &n, &d) || strlen(s) != n)
		abort();
	if (max_words && lp_match_count_words(s, n) > max_words)
		abort();
	lp_mem_free(s);
}

/* A text grounds itself: every checked token of it occurs in it. */
static void check_ground(const char *t, size_t len)
{
	struct lp_ground_token tok[64];
	struct lp_ground g;
	struct lp_diag d;
	size_t n = lp_ground_tokens(t, len, tok, 64), id, end = 0;

	if (n > 64)
		n = 64;
	lp_ground_init(&g);
	for (size_t i = 0; i < n; i++) {
		if (!tok[i].len || tok[i].off + tok[i].len > len ||
		    tok[i].len > LP_GROUND_MAX_TOKEN)
			abort();
		if (lp_ground_add(&g, t + tok[i].off, tok[i].len, tok[i].kind, &id, &d))
			abort();
		end = tok[i].off + tok[i].len > end ? tok[i].off + tok[i].len : end;
	}
	if (lp_ground_scan(&g, t, len, NULL, NULL, &d))
		abort();
	/* valid UTF-8 only: the normal form of invalid bytes may differ
	 * between a token alone and the token in its text */
	if (lp_utf8_find_invalid((const unsigned char *)t, len) == len && !memchr(t, 0, len))
		for (size_t i = 0; i < g.n; i++)
			if (!g.found[i])
				abort();
	lp_ground_release(&g);
	(void)end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data + 1;
	size_t len, before = lp_mem_current_total();

	if (size < 1)
		return 0;
	len = size - 1;
	check_tokens(t, len);
	check_keyphrases(t, len, 1 + (data[0] & 15));
	check_summary(t, len, data[0] >> 4, data[0] & 3);
	check_ground(t, len);
	if (lp_mem_current_total() != before)
		abort();
	return 0;
}
