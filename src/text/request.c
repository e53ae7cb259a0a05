#include "text/request.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Past the white space at q[*i]. */
static void skip_space(const char *q, size_t *i)
{
	while (q[*i] == ' ' || q[*i] == '\t' || q[*i] == '\n' || q[*i] == ',')
		(*i)++;
}

/* When q[*i] starts with one of words[] (any case) as a whole word, move
 * *i past it and the space after: 1; else 0. Words may hold spaces. */
static int take_word(const char *q, size_t *i, const char *const *words)
{
	for (size_t k = 0; words[k]; k++) {
		size_t n = strlen(words[k]);

		if (!strncasecmp(q + *i, words[k], n) && !isalnum((unsigned char)q[*i + n])) {
			*i += n;
			skip_space(q, i);
			return 1;
		}
	}
	return 0;
}

/* The same for bytes (Chinese: no word boundary). */
static int take_bytes(const char *q, size_t *i, const char *const *words)
{
	for (size_t k = 0; words[k]; k++) {
		size_t n = strlen(words[k]);

		if (!strncmp(q + *i, words[k], n)) {
			*i += n;
			return 1;
		}
	}
	return 0;
}

/* When q[lo, *hi) ends with one of words[] (a word boundary before it for
 * English words), move *hi before it: 1; else 0. */
static int drop_tail(const char *q, size_t lo, size_t *hi, const char *const *words, int latin)
{
	for (size_t k = 0; words[k]; k++) {
		size_t n = strlen(words[k]);

		if (*hi >= lo + n && !strncasecmp(q + *hi - n, words[k], n) &&
		    (!latin || *hi == lo + n || !isalnum((unsigned char)q[*hi - n - 1]))) {
			*hi -= n;
			return 1;
		}
	}
	return 0;
}

/* The end of q without closing punctuation and white space. */
static size_t trimmed_end(const char *q, size_t lo, size_t hi)
{
	static const char *const stops[] = { "\xE3\x80\x82", "\xEF\xBC\x9F", "\xEF\xBC\x81",
					     "\xEF\xBC\x9A", "\xEF\xBC\x8C", NULL }; /* 。？！：， */

	for (int changed = 1; changed && hi > lo;) {
		changed = 0;
		while (hi > lo && strchr(" \t\n.?!:;,", q[hi - 1])) {
			hi--;
			changed = 1;
		}
		changed |= drop_tail(q, lo, &hi, stops, 0);
	}
	return hi;
}

static int english(const char *q, struct lp_span *topic)
{
	static const char *const please[] = { "please", NULL };
	static const char *const verbs[] = { "quote", "cite", "show", "give", "print", "copy",
					     "reproduce", "find", NULL };
	static const char *const me[] = { "me", "us", NULL };
	static const char *const articles[] = { "the", "a", "an", NULL };
	static const char *const exact[] = { "exact", "verbatim", "full", "whole", "precise",
					     "actual", "original", NULL };
	static const char *const nouns[] = { "clause", "sentence", "passage", "paragraph",
					     "section", "text", "part", "wording", "words",
					     "lines", "line", "statement", "provision",
					     "definition", "rule", "conditions", "condition",
					     "terms", "term", NULL };
	static const char *const links[] = { "dealing with", "about", "on", "regarding",
					     "concerning", "covering", "for", "of", "that",
					     "which", "where", "saying", "describing",
					     "defining", NULL };
	static const char *const says[] = { "says", "say", "describes", "explains", "tells",
					    "defines", "covers", "mentions", "states", "lists",
					    "gives", NULL };
	static const char *const wh[] = { "what", "how", "when", "why", "who", NULL };
	static const char *const tails[] = { "verbatim", "word for word", "exactly",
					     "in full", NULL };
	size_t i = 0, hi;

	skip_space(q, &i);
	take_word(q, &i, please);
	if (!take_word(q, &i, verbs))
		return 0;
	take_word(q, &i, me);
	take_word(q, &i, articles);
	take_word(q, &i, exact);
	if (!take_word(q, &i, nouns))
		return 0;
	/* after "that", "which" or "where" a verb of saying and a question
	 * word are no topic ("that says what --delete does": "--delete
	 * does"); another verb is ("that limits the size") */
	{
		size_t at = i;

		if (!take_word(q, &i, links))
			return 0;
		if (!strncasecmp(q + at, "that", 4) || !strncasecmp(q + at, "which", 5) ||
		    !strncasecmp(q + at, "where", 5)) {
			if (take_word(q, &i, says))
				take_word(q, &i, wh);
			else
				i = at;
		}
	}
	hi = trimmed_end(q, i, strlen(q));
	while (drop_tail(q, i, &hi, tails, 1))
		hi = trimmed_end(q, i, hi);
	if (hi <= i)
		return 0;
	*topic = (struct lp_span){ i, hi - i };
	return 1;
}

static int chinese(const char *q, struct lp_span *topic)
{
	static const char *const please[] = { "\xE8\xAF\xB7", NULL }; /* 请 */
	static const char *const verbs[] = {
		"\xE5\xBC\x95\xE7\x94\xA8", "\xE6\x91\x98\xE5\xBD\x95", /* 引用 摘录 */
		"\xE6\x91\x98\xE6\x8A\x84", "\xE6\x8A\x84\xE5\xBD\x95", /* 摘抄 抄录 */
		"\xE5\xBC\x95\xE8\xBF\xB0", "\xE7\xBB\x99\xE5\x87\xBA", /* 引述 给出 */
		"\xE6\x89\xBE\xE5\x87\xBA", "\xE5\x88\x97\xE5\x87\xBA", /* 找出 列出 */
		NULL
	};
	static const char *const where[] = {
		"\xE6\x96\x87\xE6\xA1\xA3\xE4\xB8\xAD",	/* 文档中 */
		"\xE5\x8E\x9F\xE6\x96\x87\xE4\xB8\xAD",	/* 原文中 */
		"\xE6\x96\x87\xE4\xB8\xAD", NULL	/* 文中 */
	};
	static const char *const about[] = { "\xE5\x85\xB3\xE4\xBA\x8E",	 /* 关于 */
					     "\xE6\x9C\x89\xE5\x85\xB3", NULL }; /* 有关 */
	static const char *const nouns[] = {
		"\xE6\x9D\xA1\xE6\xAC\xBE", "\xE5\x8F\xA5\xE5\xAD\x90",	     /* 条款 句子 */
		"\xE9\x82\xA3\xE5\x8F\xA5\xE8\xAF\x9D",			     /* 那句话 */
		"\xE9\x82\xA3\xE6\xAE\xB5\xE8\xAF\x9D",			     /* 那段话 */
		"\xE6\xAE\xB5\xE8\x90\xBD", "\xE5\x8E\x9F\xE6\x96\x87",	     /* 段落 原文 */
		"\xE8\xA7\x84\xE5\xAE\x9A", "\xE5\x86\x85\xE5\xAE\xB9",	     /* 规定 内容 */
		"\xE9\x83\xA8\xE5\x88\x86", "\xE6\x96\x87\xE5\xAD\x97",	     /* 部分 文字 */
		"\xE8\xAF\xB4\xE6\x98\x8E", NULL			     /* 说明 */
	};
	static const char *const of[] = { "\xE7\x9A\x84", NULL }; /* 的 */
	static const char *const original[] = { "\xE5\x8E\x9F\xE6\x96\x87", NULL };
	size_t i = 0, hi;
	int whole;

	skip_space(q, &i);
	take_bytes(q, &i, please);
	if (!take_bytes(q, &i, verbs))
		return 0;
	take_bytes(q, &i, where);
	take_bytes(q, &i, about);
	skip_space(q, &i);
	hi = trimmed_end(q, i, strlen(q));
	whole = drop_tail(q, i, &hi, original, 0);
	if (!drop_tail(q, i, &hi, nouns, 0) && !whole)
		return 0;
	drop_tail(q, i, &hi, of, 0);
	if (hi <= i)
		return 0;
	*topic = (struct lp_span){ i, hi - i };
	return 1;
}

int lp_request_quote(const char *q, struct lp_span *topic)
{
	return q && (english(q, topic) || chinese(q, topic));
}
