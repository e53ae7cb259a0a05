/*
 * alone.c - whether a sentence stands alone (see alone.h).
 */
#include "text/alone.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Where the first of the phrases occurs in s[0..len) as whole words (any
 * case), or NULL. */
static const char *find_phrase(const char *s, size_t len, const char *const *phrases,
			       size_t *plen)
{
	for (size_t i = 0; i < len; i++)
		for (size_t k = 0; phrases[k]; k++) {
			size_t n = strlen(phrases[k]);
			int word = isalpha((unsigned char)phrases[k][0]);

			if (i + n > len || strncasecmp(s + i, phrases[k], n))
				continue;
			if (word && ((i && isalnum((unsigned char)s[i - 1])) ||
				     (i + n < len && isalnum((unsigned char)s[i + n]) &&
				      isalpha((unsigned char)phrases[k][n - 1]))))
				continue;
			*plen = n;
			return s + i;
		}
	return NULL;
}

/* After a colon (ASCII or fullwidth) in s[0..len), at least three words
 * or four Han characters: the list the lead-in announces is there. */
static int list_follows(const char *s, size_t len)
{
	const char *c = memchr(s, ':', len), *w = NULL;
	size_t words = 0, han = 0;

	for (size_t i = 0; !c && i + 3 <= len; i++)
		if (!memcmp(s + i, "\xEF\xBC\x9A", 3)) /* ： */
			w = s + i + 3;
	if (c)
		w = c + 1;
	if (!w)
		return 0;
	for (const char *p = w; p < s + len; p++) {
		if (isalnum((unsigned char)*p) && (p == w || !isalnum((unsigned char)p[-1])))
			words++;
		if ((unsigned char)*p >= 0xE4 && (unsigned char)*p <= 0xE9)
			han++;
	}
	return words >= 3 || han >= 4;
}

/* The word at s[0..len) after the first one and white space: *w, *n. */
static void second_word(const char *s, size_t len, const char **w, size_t *n)
{
	size_t i = 0;

	while (i < len && isalpha((unsigned char)s[i]))
		i++;
	while (i < len && s[i] == ' ')
		i++;
	*w = s + i;
	*n = 0;
	while (i + *n < len && isalpha((unsigned char)s[i + *n]))
		(*n)++;
}

static int one_of(const char *w, size_t n, const char *const *words)
{
	for (size_t k = 0; words[k]; k++)
		if (strlen(words[k]) == n && !strncasecmp(w, words[k], n))
			return 1;
	return 0;
}

enum lp_alone lp_alone_check(const char *s, size_t len)
{
	static const char *const forward[] = { "the following", "followings", "as follows",
					       "listed below", "shown below", "given below",
					       "described below", "see below", "below:",
					       "\xE5\xA6\x82\xE4\xB8\x8B", /* 如下 */
					       "\xE4\xBB\xA5\xE4\xB8\x8B", /* 以下 */
					       "\xE4\xB8\x8B\xE5\x88\x97", /* 下列 */
					       "\xE4\xB8\x8B\xE9\x9D\xA2\xE7\x9A\x84", /* 下面的 */
					       NULL };
	static const char *const always[] = { "It", "They", "He", "She", "Its", "Their", NULL };
	static const char *const demo[] = { "This", "These", "Those", "That", NULL };
	/* the verb-like words of the evaluation's stand-alone check
	 * (scripts/quality_metrics.py, VERBS) */
	static const char *const verbs[] = { "is", "are", "was", "were", "be", "been", "being",
					     "am", "has", "have", "had", "having", "do", "does",
					     "did", "can", "could", "will", "would", "shall",
					     "should", "may", "might", "must", "need", "needs",
					     "let", "lets", "allow", "allows", "allowed",
					     "make", "makes", "made", "mean", "means", "meant",
					     "provide", "provides", "provided", "give", "gives",
					     "gave", "show", "shows", "shown", "use", "uses",
					     "used", "run", "runs", "ran", "set", "sets", "get",
					     "gets", "got", "keep", "keeps", "kept", "take",
					     "takes", "took", "say", "says", "said", "describe",
					     "describes", "work", "works", "apply", "applies",
					     "include", "includes", "contain", "contains",
					     "require", "requires", "return", "returns", "read",
					     "reads", "write", "writes", "start", "starts",
					     "stop", "stops", "create", "creates", "change",
					     "changes", "call", "calls", "tell", "tells",
					     "cause", "causes", "become", "becomes", "happen",
					     "happens", "also", "then", NULL };
	static const char *const zh[] = { "\xE5\xAE\x83", /* 它 */ "\xE4\xBB\x96\xE4\xBB\xAC",
					  /* 他们 */ "\xE8\xBF\x99\xE4\xBA\x9B", /* 这些 */
					  "\xE6\xAD\xA4\xE5\xA4\x96", /* 此外 */
					  "\xE8\xBF\x99", /* 这 */ "\xE6\xAD\xA4", /* 此 */
					  "\xE5\x85\xB6", /* 其 */ NULL };
	size_t plen, first = 0, n;
	const char *p, *w;

	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (!len)
		return LP_ALONE_OK;
	if (s[len - 1] == ':' || (len >= 3 && !memcmp(s + len - 3, "\xEF\xBC\x9A", 3)))
		return LP_ALONE_LEAD_IN;
	if ((p = find_phrase(s, len, forward, &plen)) &&
	    !list_follows(p + plen, len - (size_t)(p + plen - s)))
		return LP_ALONE_LEAD_IN;
	while (first < len && isalpha((unsigned char)s[first]))
		first++;
	if (first && one_of(s, first, always) &&
	    !(first < len && (s[first] == '\'' || !memcmp(s + first, "\xE2\x80\x99", 3))))
		return LP_ALONE_PRONOUN;
	if (first && one_of(s, first, demo)) {
		second_word(s, len, &w, &n);
		if (n && one_of(w, n, verbs))
			return LP_ALONE_PRONOUN;
	}
	for (size_t k = 0; zh[k]; k++)
		if (len >= strlen(zh[k]) && !memcmp(s, zh[k], strlen(zh[k])))
			return LP_ALONE_PRONOUN;
	return LP_ALONE_OK;
}
