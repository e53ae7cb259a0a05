#include "text/match.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/utf8.h"
#include "text/scan.h"

/* Decode at text[i]; an invalid byte reads as U+FFFD, one byte long, so
 * scanning never stalls and never reads past len. */
static size_t decode_at(const char *text, size_t len, size_t i, uint32_t *cp)
{
	int n = lp_utf8_decode((const unsigned char *)text + i, len - i, cp);

	if (n <= 0) {
		*cp = 0xFFFD;
		return 1;
	}
	return (size_t)n;
}

static int is_word_cp(uint32_t cp)
{
	return lp_scan_class_of(cp) == LP_SCAN_WORD;
}

int lp_match_token_next(const char *text, size_t len, size_t *pos, struct lp_token *t)
{
	size_t i = *pos, n = 0;
	unsigned space = 0, nl = 0;
	enum lp_scan_class cls = LP_SCAN_SPACE;
	uint32_t cp;

	while (i < len) {
		n = lp_scan_char(text, len, i, LP_SCAN_JOIN, &cp, &cls);
		if (cls != LP_SCAN_SPACE)
			break;
		space = 1;
		nl += cp == '\n';
		i += n;
	}
	if (i >= len) {
		*pos = len;
		return 0;
	}
	t->off = i;
	t->space_before = space;
	t->newlines_before = nl;
	if (cls == LP_SCAN_WORD) {
		t->kind = LP_TOKEN_WORD;
		i = lp_scan_word_end(text, len, i, LP_SCAN_JOIN);
	} else {
		t->kind = cls == LP_SCAN_CJK ? LP_TOKEN_CJK : LP_TOKEN_PUNCT;
		i += n;
	}
	t->len = i - t->off;
	*pos = i;
	return 1;
}

size_t lp_match_count_words(const char *text, size_t len)
{
	struct lp_token t;
	size_t pos = 0, n = 0;

	while (lp_match_token_next(text, len, &pos, &t))
		n += t.kind != LP_TOKEN_PUNCT;
	return n;
}

size_t lp_match_lower(const char *s, size_t len, char *out, size_t cap)
{
	size_t i = 0, o = 0, n;
	unsigned char enc[4];
	uint32_t cp;
	int m;

	while (i < len) {
		int k = lp_utf8_decode((const unsigned char *)s + i, len - i, &cp);
		if (k <= 0) {
			/* keep an invalid byte as it is */
			enc[0] = (unsigned char)s[i];
			n = 1;
			m = 1;
		} else {
			n = (size_t)k;
			m = lp_utf8_encode(lp_utf8_tolower(cp), enc);
			if (m <= 0) {
				memcpy(enc, s + i, n);
				m = (int)n;
			}
		}
		if (o + (size_t)m <= cap)
			memcpy(out + o, enc, (size_t)m);
		o += (size_t)m;
		i += n;
	}
	return o;
}

/*
 * English stop words, in two lists, each sorted for bsearch, lower-case
 * ASCII. Function words carry no topic: retrieval skips them in documents
 * and questions alike (text/terms.h; "s" and "t" are what "it's" and
 * "don't" leave). Weak words ("often", "use", "many", "however") carry
 * little: keyphrases, focus words and the summary's key words skip them
 * too, but a question keeps them as clues ("How often does the shell
 * check for mail?" finds MAILCHECK by "often").
 */
static const char *const function_words[] = {
	"a", "about", "after", "all", "also", "am", "an", "and", "any", "are",
	"as", "at", "be", "been", "before", "being", "between", "both", "but",
	"by", "can", "could", "did", "do", "does", "doing", "each", "else",
	"for", "from", "had", "has", "have", "having", "he", "her", "here",
	"him", "his", "how", "i", "if", "in", "into", "is", "it", "its",
	"just", "may", "me", "might", "more", "most", "must", "my", "no",
	"nor", "not", "of", "on", "only", "or", "other", "our", "out", "over",
	"own", "s", "same", "she", "should", "so", "some", "such", "t", "than",
	"that", "the", "their", "them", "then", "there", "these", "they",
	"this", "those", "through", "to", "too", "under", "up", "very", "was",
	"we", "were", "what", "when", "where", "which", "while", "who", "whom",
	"why", "will", "with", "would", "you", "your",
};

static const char *const weak_words[] = {
	"above", "again", "against", "because", "below", "cannot", "done",
	"down", "during", "either", "etc", "even", "ever", "every", "few",
	"further", "hers", "herself", "himself", "however", "itself", "least",
	"less", "let", "like", "many", "much", "myself", "neither", "now",
	"off", "often", "once", "one", "otherwise", "ours", "ourselves", "per",
	"rather", "shall", "since", "theirs", "themselves", "therefore",
	"though", "thus", "until", "upon", "us", "use", "used", "uses",
	"using", "via", "whenever", "whether", "whose", "within", "without",
	"yet", "yours", "yourself", "yourselves",
};

struct word_key {
	const char *w;
	size_t len;
};

static int cmp_stop(const void *k, const void *e)
{
	const struct word_key *key = k;
	const char *s = *(const char *const *)e;
	size_t sl = strlen(s);
	int c = strncmp(key->w, s, key->len < sl ? key->len : sl);

	if (c)
		return c;
	return key->len < sl ? -1 : key->len > sl;
}

static int in_list(const char *const *list, size_t n, const char *w, size_t len)
{
	struct word_key key = {w, len};

	return len && len <= 12 && bsearch(&key, list, n, sizeof(*list), cmp_stop) != NULL;
}

int lp_match_is_function_word(const char *w, size_t len)
{
	return in_list(function_words, sizeof(function_words) / sizeof(*function_words), w, len);
}

int lp_match_is_stopword(const char *w, size_t len)
{
	/* "s" and "t" are no words of their own to the matcher's tokens */
	if (len == 1 && (*w == 's' || *w == 't'))
		return 0;
	return lp_match_is_function_word(w, len) ||
	       in_list(weak_words, sizeof(weak_words) / sizeof(*weak_words), w, len);
}

static enum lp_status add_lower(struct lp_buf *out, const char *s, size_t len)
{
	size_t need = lp_match_lower(s, len, NULL, 0);

	if (lp_buf_grow(out, need))
		return LP_E_NOMEM;
	lp_match_lower(s, len, out->data + out->len, need);
	out->len += need;
	out->data[out->len] = '\0';
	return LP_OK;
}

enum lp_status lp_match_normalize(const char *text, size_t len, struct lp_buf *out)
{
	struct lp_token t;
	size_t pos = 0;
	int have_prev = 0, prev_cjk = 0;

	while (lp_match_token_next(text, len, &pos, &t)) {
		int cjk = t.kind == LP_TOKEN_CJK;
		if (have_prev && t.space_before && !(prev_cjk && cjk) && lp_buf_addc(out, ' '))
			return LP_E_NOMEM;
		if (add_lower(out, text + t.off, t.len))
			return LP_E_NOMEM;
		have_prev = 1;
		prev_cjk = cjk;
	}
	return LP_OK;
}

/* The code point that ends just before s[i] (i > 0). */
static uint32_t cp_before(const char *s, size_t i)
{
	size_t j = i - 1;
	uint32_t cp;

	while (j > 0 && i - j < 4 && ((unsigned char)s[j] & 0xC0) == 0x80)
		j--;
	if (decode_at(s, i, j, &cp) != i - j)
		return 0xFFFD;
	return cp;
}

static uint32_t cp_at(const char *s, size_t len, size_t i)
{
	uint32_t cp;

	decode_at(s, len, i, &cp);
	return cp;
}

/* Is there a word character right before hay[at]? '_' counts when a word
 * character precedes it (snake_case is one name), as in tokenisation; a
 * hyphen does not (the parts of "long-context" are words). */
static int word_before(const char *hay, size_t at)
{
	uint32_t cp;

	if (!at)
		return 0;
	cp = cp_before(hay, at);
	if (is_word_cp(cp))
		return 1;
	return cp == '_' && at > 1 && is_word_cp(cp_before(hay, at - 1));
}

/* Same after hay[0..at): a word character, or '_' and then one. */
static int word_after(const char *hay, size_t hlen, size_t at)
{
	uint32_t cp;

	if (at >= hlen)
		return 0;
	cp = cp_at(hay, hlen, at);
	if (is_word_cp(cp))
		return 1;
	return cp == '_' && at + 1 < hlen && is_word_cp(cp_at(hay, hlen, at + 1));
}

int lp_match_find_normal(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	int word_start, word_end;
	const char *p = hay, *end = hay + hlen;

	if (!nlen || nlen > hlen)
		return 0;
	word_start = is_word_cp(cp_at(needle, nlen, 0));
	word_end = is_word_cp(cp_before(needle, nlen));
	while ((p = memmem(p, (size_t)(end - p), needle, nlen))) {
		size_t at = (size_t)(p - hay);
		if (!(word_start && word_before(hay, at)) &&
		    !(word_end && word_after(hay, hlen, at + nlen)))
			return 1;
		if (++p >= end)
			break;
	}
	return 0;
}

enum lp_status lp_match_init(struct lp_match *m, const char *text, size_t len,
			     struct lp_diag *d)
{
	lp_buf_init(&m->norm);
	lp_buf_init(&m->tmp);
	if (lp_match_normalize(text, len, &m->norm)) {
		lp_buf_release(&m->norm);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				   "out of memory normalising %zu bytes for matching", len);
	}
	return LP_OK;
}

enum lp_status lp_match_contains(struct lp_match *m, const char *phrase, size_t len,
				 int *found)
{
	*found = 0;
	lp_buf_reset(&m->tmp);
	if (lp_match_normalize(phrase, len, &m->tmp))
		return LP_E_NOMEM;
	*found = lp_match_find_normal(m->norm.data, m->norm.len, m->tmp.data, m->tmp.len);
	return LP_OK;
}

void lp_match_release(struct lp_match *m)
{
	lp_buf_release(&m->norm);
	lp_buf_release(&m->tmp);
}

static pcre2_code *regex_compile(const char *pattern, int *err, PCRE2_SIZE *off)
{
	return pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
			     PCRE2_UTF | PCRE2_UCP, err, off, NULL);
}

int lp_match_regex_valid(const char *pattern, char *msg, size_t cap, size_t *offset)
{
	int err = 0;
	PCRE2_SIZE off = 0;
	pcre2_code *re = regex_compile(pattern, &err, &off);

	if (re) {
		pcre2_code_free(re);
		return 1;
	}
	if (msg && cap) {
		msg[0] = '\0';
		pcre2_get_error_message(err, (PCRE2_UCHAR *)msg, cap);
	}
	if (offset)
		*offset = off;
	return 0;
}

/* Bounds on backtracking: generous for keyphrase patterns, small enough
 * that a catastrophic pattern fails in well under a second. */
#define REGEX_MATCH_LIMIT 10000000u
#define REGEX_DEPTH_LIMIT 100000u

enum lp_status lp_match_regex_search(const char *pattern, const char *text, size_t len,
				     int *found, struct lp_diag *d)
{
	char msg[256];
	int err = 0, rc;
	PCRE2_SIZE off = 0;
	pcre2_code *re;
	pcre2_match_context *mc;
	pcre2_match_data *md;
	enum lp_status st = LP_OK;

	*found = 0;
	re = regex_compile(pattern, &err, &off);
	if (!re) {
		pcre2_get_error_message(err, (PCRE2_UCHAR *)msg, sizeof(msg));
		return lp_diag_set(d, LP_E_CONFIG, NULL, 0, 0,
				   "regex '%s': %s at offset %zu", pattern, msg, (size_t)off);
	}
	mc = pcre2_match_context_create(NULL);
	md = pcre2_match_data_create_from_pattern(re, NULL);
	if (!mc || !md) {
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory matching regex '%s'",
				 pattern);
		goto out;
	}
	pcre2_set_match_limit(mc, REGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(mc, REGEX_DEPTH_LIMIT);
	rc = pcre2_match(re, (PCRE2_SPTR)text, len, 0, 0, md, mc);
	if (rc >= 0) {
		*found = 1;
	} else if (rc != PCRE2_ERROR_NOMATCH) {
		pcre2_get_error_message(rc, (PCRE2_UCHAR *)msg, sizeof(msg));
		st = lp_diag_set(d, LP_E_INPUT, NULL, 0, 0, "regex '%s': %s", pattern, msg);
	}
out:
	pcre2_match_data_free(md);
	pcre2_match_context_free(mc);
	pcre2_code_free(re);
	return st;
}

enum lp_status lp_match_held(const char *text, size_t len, const char *const *phrases,
			     size_t n, uint64_t *mask, size_t *held, struct lp_diag *d)
{
	struct lp_match m;
	enum lp_status st = lp_match_init(&m, text, len, d);

	if (mask)
		*mask = 0;
	if (held)
		*held = 0;
	for (size_t k = 0; k < n && !st; k++) {
		int found = 0;
		st = lp_match_contains(&m, phrases[k], strlen(phrases[k]), &found);
		if (found && mask && k < 64)
			*mask |= (uint64_t)1 << k;
		if (found && held)
			(*held)++;
	}
	lp_match_release(&m);
	return st;
}
