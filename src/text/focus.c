/*
 * focus.c - what a question asks about, and what kind of answer it wants
 * (see focus.h).
 */
#include "text/focus.h"
#include "text/money.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "text/match.h"

/* Longest focus token or quoted phrase looked at, in bytes. */
#define FOCUS_MAX 64

static int is_word(unsigned char c)
{
	return isalnum(c) || c == '_';
}

/* The bytes of a hyphen at text[i]: 1 for '-', 3 for U+2010, U+2011 and
 * U+2212 (what man and PDF text render), 0 for anything else. */
static size_t hyphen_at(const char *text, size_t len, size_t i)
{
	const unsigned char *s = (const unsigned char *)text + i;

	if (text[i] == '-')
		return 1;
	if (i + 3 <= len && s[0] == 0xE2 &&
	    ((s[1] == 0x80 && (s[2] == 0x90 || s[2] == 0x91)) || (s[1] == 0x88 && s[2] == 0x92)))
		return 3;
	return 0;
}

/* A quote mark at s[0..n): its length in bytes, else 0. */
static size_t quote_mark(const char *s, size_t n)
{
	static const char *const marks[] = { "\"", "'", "`", "\xE2\x80\x98", "\xE2\x80\x99",
					     "\xE2\x80\x9C", "\xE2\x80\x9D" };

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		size_t m = strlen(marks[i]);
		if (m <= n && !memcmp(s, marks[i], m))
			return m;
	}
	return 0;
}

/* Whether t[0..n) names something a document spells one way (focus.h). */
static int is_focus(const char *t, size_t n)
{
	size_t upper = 0, lower = 0, digit = 0, alpha_runs = 0;
	int inner_cap = 0, marks = 0, dot_inside = 0;

	if (n < 2)
		return 0;
	if (t[0] == '-')
		return n >= 2 && (isalnum((unsigned char)t[1]) ||
				  (t[1] == '-' && n >= 3 && isalnum((unsigned char)t[2])));
	if (t[0] == '~' || (t[0] == '/' && n > 1 && isalpha((unsigned char)t[1])))
		return 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];

		upper += isupper(c) != 0;
		lower += islower(c) != 0;
		digit += isdigit(c) != 0;
		if (isupper(c) && i && islower((unsigned char)t[i - 1]))
			inner_cap = 1;
		if (c == '_' || c == '$' || c == '<' || c == '#' || c == '/')
			marks = 1;
		if (c == '.' && i && i + 1 < n && isalpha((unsigned char)t[i - 1]) &&
		    isalpha((unsigned char)t[i + 1]))
			dot_inside = 1;
		if (isalpha(c) && (!i || !isalpha((unsigned char)t[i - 1])))
			alpha_runs++;
	}
	if (marks && (upper || lower || digit || t[0] == '$'))
		return 1;
	if (dot_inside) /* a file name, not an abbreviation ("e.g", "i.e") */
		for (size_t i = 0; i + 2 < n; i++)
			if (isalpha((unsigned char)t[i]) && isalpha((unsigned char)t[i + 1]) &&
			    isalpha((unsigned char)t[i + 2]))
				return 1;
	if (upper >= 2 && !lower)
		return 1;
	return inner_cap || ((upper || lower) && digit && alpha_runs);
}

int lp_focus_next(const char *q, size_t len, size_t *pos, struct lp_span *tok)
{
	size_t i = *pos;

	while (i < len) {
		size_t qm = quote_mark(q + i, len - i), s, e;

		if (qm && q[i] != '\'' && q[i] != '`') {
			/* a phrase in double quotes: up to the closing mark */
			size_t k = i + qm;

			while (k < len && !quote_mark(q + k, len - k) && k - i <= FOCUS_MAX)
				k++;
			if (k < len && k > i + qm && k - i <= FOCUS_MAX) {
				*tok = (struct lp_span){ i + qm, k - i - qm };
				*pos = k + quote_mark(q + k, len - k);
				return 1;
			}
			i += qm;
			continue;
		}
		if ((unsigned char)q[i] <= ' ' || (unsigned char)q[i] >= 0x80) {
			i++;
			continue;
		}
		/* a token: printable ASCII up to white space or other text */
		s = i;
		while (i < len && (unsigned char)q[i] > ' ' && (unsigned char)q[i] < 0x80)
			i++;
		e = i;
		while (s < e && (q[s] == '(' || q[s] == '[' || q[s] == '\'' || q[s] == '`'))
			s++;
		while (e > s && strchr("?,.;:!)]'`", q[e - 1]))
			e--;
		if (e - s <= FOCUS_MAX && is_focus(q + s, e - s)) {
			*tok = (struct lp_span){ s, e - s };
			*pos = i;
			return 1;
		}
	}
	*pos = len;
	return 0;
}

/* The length of text[i..) that matches tok[0..n), or 0: a space of tok
 * matches any run of white space, a '-' any hyphen. */
static size_t match_at(const char *text, size_t len, size_t i, const char *tok, size_t n)
{
	size_t k = i;

	for (size_t j = 0; j < n; j++) {
		size_t h;

		if (k >= len)
			return 0;
		if (tok[j] == ' ') {
			if (!isspace((unsigned char)text[k]))
				return 0;
			while (k < len && isspace((unsigned char)text[k]))
				k++;
		} else if (tok[j] == '-' && (h = hyphen_at(text, len, k))) {
			k += h;
		} else if (text[k] == tok[j]) {
			k++;
		} else {
			return 0;
		}
	}
	return k - i;
}

int lp_focus_held(const char *text, size_t len, const char *tok, size_t n)
{
	return lp_focus_count(text, len, tok, n, 1) > 0;
}

size_t lp_focus_count(const char *text, size_t len, const char *tok, size_t n, size_t cap)
{
	size_t found = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < len && found < cap; i++) {
		size_t m, h;

		if (tok[0] != '-') {
			const char *p = memchr(text + i, tok[0], len - i);
			if (!p)
				return 0;
			i = (size_t)(p - text);
		} else if (!hyphen_at(text, len, i)) {
			continue;
		}
		if (!(m = match_at(text, len, i, tok, n)))
			continue;
		/* whole token: no word character (or, before an option, no
		 * hyphen) on either side */
		if (i && (is_word((unsigned char)text[i - 1]) ||
			  (tok[0] == '-' && (text[i - 1] == '-' ||
					     (i >= 3 && hyphen_at(text, len, i - 3) == 3)))))
			continue;
		if (i + m < len && is_word((unsigned char)text[i + m]) &&
		    is_word((unsigned char)tok[n - 1]))
			continue;
		if (tok[0] == '-' && i + m < len && (h = hyphen_at(text, len, i + m)) &&
		    i + m + h < len && is_word((unsigned char)text[i + m + h]))
			continue; /* "--delete" is not the head of "--delete-after" */
		found++;
		i += m - 1;
	}
	return found;
}

int lp_focus_is_name(const char *tok, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strchr("/~#$<", tok[i]))
			return 0;
	return n > 0;
}

/* q in ASCII lower case into low[0..cap), cut to fit, NUL-terminated. */
static void lower_copy(const char *q, char *low, size_t cap)
{
	size_t n = 0;

	for (; q[n] && n + 1 < cap; n++)
		low[n] = (char)tolower((unsigned char)q[n]);
	low[n] = '\0';
}

/* 1 when s holds any of the words (ASCII, lower case, NUL-terminated s). */
static int holds_any(const char *s, const char *const *words)
{
	for (size_t i = 0; words[i]; i++)
		if (strstr(s, words[i]))
			return 1;
	return 0;
}

/* The words that name a kind of thing a manual describes. */
static const char *const entry_kinds[] = { "variable", "option", "builtin", "command", "file",
					   "directory", "parameter", "flag", "function",
					   "keyword", "signal", "setting", "operator",
					   "directive", "field", "program", "utility",
					   "package", "method", "trait", "statement", "macro",
					   "key", "unit", "header", "value", NULL };

/* The length of the kind word that lower-case w[0, n) is, or is with one
 * more character (its plural); 0 when it is none. */
static size_t kind_len(const char *w, size_t n)
{
	for (size_t i = 0; entry_kinds[i]; i++) {
		size_t kl = strlen(entry_kinds[i]);
		if (n >= kl && n <= kl + 1 && !strncmp(w, entry_kinds[i], kl))
			return kl;
	}
	return 0;
}

int lp_focus_is_kind(const char *w, size_t n)
{
	return kind_len(w, n) > 0;
}

enum lp_asks lp_focus_asks(const char *q, struct lp_span *kind)
{
	static const char *const how[] = { "how many ", "how much ", "how long ", "how large ",
					   "how big ", "how old ", "how far ", NULL };
	static const char *const amounts[] = { " maximum ", " minimum ", " largest ",
					       " smallest ", " number of ", " size ",
					       " size?", " version ", " year ", " year?",
					       " port ", " limit ", " exit status ",
					       " exit code ", " how many", NULL };
	static const char *const zh_amounts[] = { "多少", "几个", "几种", "几次", "几位", "几天",
						  "几年", "哪一年", "哪年", "版本号", "端口",
						  "哪个版本", NULL };
	static const char *const zh_asks[] = { "哪个", "哪一个", "哪些", "什么" };
	static const char *const zh_kinds[] = { "变量", "选项", "命令", "文件", "参数", "指令",
						"函数", "程序", "工具", "软件包", "字段",
						"关键字", "目录", NULL };
	char low[256];
	struct lp_span none;

	if (!kind)
		kind = &none;
	*kind = (struct lp_span){ 0, 0 };
	lower_copy(q, low, sizeof(low));
	if (holds_any(low, zh_amounts))
		return LP_ASKS_QUANTITY;
	for (size_t i = 0; i < sizeof(zh_asks) / sizeof(zh_asks[0]); i++) {
		const char *p = strstr(low, zh_asks[i]);
		/* the kind right after the question word: 哪个命令, 什么选项 */
		for (size_t k = 0; p && zh_kinds[k]; k++) {
			const char *a = p + strlen(zh_asks[i]);
			if (!strncmp(a, zh_kinds[k], strlen(zh_kinds[k]))) {
				*kind = (struct lp_span){ (size_t)(a - low), strlen(zh_kinds[k]) };
				return LP_ASKS_NAME;
			}
		}
	}
	if (holds_any(low, how))
		return LP_ASKS_QUANTITY;
	if (strncmp(low, "what ", 5) && strncmp(low, "which ", 6))
		return LP_ASKS_OTHER;
	/* "which [adjective] KIND ...", "what KIND ...": the kind within the
	 * question word's next three words; else an amount anywhere */
	{
		const char *w = low + (low[1] == 'h' && low[2] == 'i' ? 6 : 5);

		if (!strncmp(w, "is the name of", 14))
			return LP_ASKS_NAME;
		/* "What does exit code 1 mean?" asks for a meaning, not a number */
		if (strstr(low, " mean") || strstr(low, " stand for"))
			return LP_ASKS_OTHER;
		/* "What is the keyword elif short for?" asks about a name */
		if (!strncmp(w, "is ", 3) || !strncmp(w, "are ", 4) || !strncmp(w, "does ", 5) ||
		    !strncmp(w, "do ", 3))
			return holds_any(low, amounts) ? LP_ASKS_QUANTITY : LP_ASKS_OTHER;
		for (int k = 0; k < 3 && *w; k++) {
			size_t wl = strcspn(w, " ?,");

			size_t kl = kind_len(w, wl);

			if (kl) {
				*kind = (struct lp_span){ (size_t)(w - low), kl };
				return LP_ASKS_NAME;
			}
			w += wl;
			while (*w == ' ')
				w++;
		}
	}
	return holds_any(low, amounts) ? LP_ASKS_QUANTITY : LP_ASKS_OTHER;
}

/* 1 when the digit at text[i] is a manual section after a name
 * ("dircolors(1)", "fsck(8)"), or the tail of one the sentence cut left
 * at its start ("(1). If FORMAT ..."): it counts nothing. */
static int section_ref(const char *text, size_t len, size_t i)
{
	return i >= 1 && text[i - 1] == '(' && (i == 1 || isalnum((unsigned char)text[i - 2])) &&
	       i + 1 < len && (text[i + 1] == ')' || (isalpha((unsigned char)text[i + 1]) &&
						      i + 2 < len && text[i + 2] == ')'));
}

static size_t number_end(const char *text, size_t len, size_t i);

/* Does text[end..) go on as an open count ("zero or more", "2 or
 * greater"), which sets no bound? */
static int open_count(const char *text, size_t len, size_t end)
{
	static const char *const more[] = { " or more", " or greater", " or higher", " or above",
					    NULL };

	for (size_t k = 0; more[k]; k++) {
		size_t n = strlen(more[k]);
		if (end + n <= len && !strncasecmp(text + end, more[k], n) &&
		    (end + n == len || !isalpha((unsigned char)text[end + n])))
			return 1;
	}
	return 0;
}

/* lp_focus_has_number, without the open counts when !open_ok. */
static int has_number(const char *text, size_t len, int open_ok)
{
	static const char *const words[] = { "zero", "one", "two", "three", "four", "five",
					     "six", "seven", "eight", "nine", "ten", "eleven",
					     "twelve", "twenty", "hundred", "thousand",
					     "million", "dozen", "twice", "once", "single",
					     "half", NULL };
	static const char *const han[] = { "一", "二", "两", "三", "四", "五", "六", "七",
					   "八", "九", "十", "百", "千", "万", "零", NULL };

	for (size_t i = 0; i < len; i++) {
		if (isdigit((unsigned char)text[i]) && !section_ref(text, len, i) &&
		    (open_ok || !open_count(text, len, number_end(text, len, i))))
			return 1;
		if (isalpha((unsigned char)text[i]) && (!i || !isalpha((unsigned char)text[i - 1]))) {
			size_t wl = 0;
			while (i + wl < len && isalpha((unsigned char)text[i + wl]))
				wl++;
			for (size_t k = 0; words[k]; k++)
				if (strlen(words[k]) == wl && !strncasecmp(text + i, words[k], wl) &&
				    (open_ok || !open_count(text, len, i + wl)))
					return 1;
			i += wl - 1;
		} else if ((unsigned char)text[i] >= 0xE4) {
			for (size_t k = 0; han[k]; k++)
				if (i + 3 <= len && !memcmp(text + i, han[k], 3))
					return 1;
		}
	}
	return 0;
}

int lp_focus_has_number(const char *text, size_t len)
{
	return has_number(text, len, 1);
}

/* The kinds of quantity lp_focus_quantity_held tells apart. */
enum quantity { Q_ANY, Q_VERSION, Q_YEAR, Q_PRICE, Q_SIZE };

static enum quantity quantity_of(const char *q)
{
	static const char *const version[] = { "version", "\xE7\x89\x88\xE6\x9C\xAC", NULL };
	static const char *const year[] = { " year", "\xE5\x93\xAA\xE4\xB8\x80\xE5\xB9\xB4",
					    "\xE5\x93\xAA\xE5\xB9\xB4", NULL }; /* 哪一年, 哪年 */
	static const char *const price[] = { " cost", " price", "\xE5\x94\xAE\xE4\xBB\xB7",
					     "\xE5\xA4\x9A\xE5\xB0\x91\xE9\x92\xB1",
					     "\xE5\xA4\x9A\xE5\xB0\x91\xE5\x85\x83", NULL };
					     /* 售价, 多少钱, 多少元 */
	static const char *const size[] = { " size", "how large", "how big", NULL };
	char low[256];

	lower_copy(q, low, sizeof(low));
	if (holds_any(low, version))
		return Q_VERSION;
	if (holds_any(low, year))
		return Q_YEAR;
	if (holds_any(low, price))
		return Q_PRICE;
	if (holds_any(low, size))
		return Q_SIZE;
	return Q_ANY;
}

/* 1 when a unit of size follows the number that ends at text[i]. */
static int size_unit_after(const char *text, size_t len, size_t i)
{
	static const char *const units[] = { "byte", "bit", "kb", "kib", "mb", "mib", "gb", "gib",
					     "tb", "tib", "k", "m", "g", "block", "character",
					     "char", "sector", "page", "kilobyte", "megabyte",
					     "gigabyte", "word", "line", NULL };
	size_t k = i, wl = 0;

	while (k < len && (text[k] == ' ' || text[k] == '-'))
		k++;
	while (k + wl < len && isalpha((unsigned char)text[k + wl]))
		wl++;
	for (size_t u = 0; wl && units[u]; u++) {
		size_t ul = strlen(units[u]);
		/* the unit, or its plural */
		if ((wl == ul || (wl == ul + 1 && text[k + ul] == 's')) &&
		    !strncasecmp(text + k, units[u], ul))
			return 1;
	}
	return k + 3 <= len && !memcmp(text + k, "\xE5\xAD\x97", 3); /* 字(节) */
}

/* Does q hold the number num[0..n) (digits, '.' and ',' inside) as a
 * whole number, not inside a longer one ("2.0" in "version 2.0", not in
 * "12.0" or "2.01")? */
static int number_in(const char *q, const char *num, size_t n)
{
	size_t qlen = strlen(q);

	for (const char *at = q; (at = memmem(at, qlen - (size_t)(at - q), num, n)); at++) {
		size_t e = (size_t)(at - q) + n;
		int before = at > q && (isalnum((unsigned char)at[-1]) ||
					((at[-1] == '.' || at[-1] == ',') && at - 1 > q &&
					 isdigit((unsigned char)at[-2])));
		int after = e < qlen && (isalnum((unsigned char)q[e]) ||
					 ((q[e] == '.' || q[e] == ',') && e + 1 < qlen &&
					  isdigit((unsigned char)q[e + 1])));
		if (!before && !after)
			return 1;
	}
	return 0;
}

/* The end of the number that starts at text[i] (a digit): its digits
 * with '.' or ',' between digits ("2.0", "1,024"). */
static size_t number_end(const char *text, size_t len, size_t i)
{
	while (i < len && (isdigit((unsigned char)text[i]) ||
			   ((text[i] == '.' || text[i] == ',') && i + 1 < len &&
			    isdigit((unsigned char)text[i + 1]))))
		i++;
	return i;
}

/* Does the question ask for a bound ("at most", "the maximum number")? */
static int asks_bound(const char *q)
{
	static const char *const bound[] = { "maximum", "at most", "the most", "upper limit",
					     "largest number", "\xE6\x9C\x80\xE5\xA4\x9A",
					     NULL }; /* 最多 */
	char low[256];

	lower_copy(q, low, sizeof(low));
	return holds_any(low, bound);
}

int lp_focus_quantity_held(const char *q, const char *text, size_t len)
{
	enum quantity kind = quantity_of(q);
	int open_ok = !asks_bound(q); /* "zero or more" sets no maximum */

	if (kind == Q_ANY) { /* a number the question does not state itself */
		int digits = 0;
		for (size_t i = 0; i < len; i++) {
			size_t e;
			if (!isdigit((unsigned char)text[i]) || (i && isalnum((unsigned char)text[i - 1])) ||
			    section_ref(text, len, i))
				continue;
			e = number_end(text, len, i);
			if (!number_in(q, text + i, e - i) && (open_ok || !open_count(text, len, e)))
				return 1;
			digits = 1;
			i = e;
		}
		return !digits && has_number(text, len, open_ok);
	}
	if (kind == Q_PRICE)
		return lp_money_named(text, len);
	for (size_t i = 0; i < len; i++) {
		size_t d = i;

		/* a number, not the digits of a name ("x86"); "BLOCKSx512" is
		 * a product */
		if (!isdigit((unsigned char)text[i]) || section_ref(text, len, i) ||
		    (i && isalnum((unsigned char)text[i - 1]) &&
		     !(text[i - 1] == 'x' && i >= 2 && isupper((unsigned char)text[i - 2]))))
			continue;
		while (d < len && isdigit((unsigned char)text[d]))
			d++;
		if (number_in(q, text + i, number_end(text, len, i) - i)) {
			i = number_end(text, len, i);
			continue; /* the question's own number is not its answer */
		}
		if (kind == Q_VERSION && d + 1 < len && text[d] == '.' &&
		    isdigit((unsigned char)text[d + 1]))
			return 1;
		if (kind == Q_YEAR && d - i == 4 && (text[i] == '1' || text[i] == '2') &&
		    (d == len || !isalnum((unsigned char)text[d])))
			return 1;
		if (kind == Q_SIZE && size_unit_after(text, len, d))
			return 1;
		i = d;
	}
	return 0;
}

/* Words every question uses, or that name what a manual is made of: their
 * absence says nothing of the question's subject. */
static const char *const asking_words[] = {
	"what", "which", "when", "where", "does", "doing", "done", "used", "uses", "using",
	"option", "options", "command", "commands", "value", "values", "default", "defaults",
	"version", "versions", "document", "documents", "text", "file", "files", "name",
	"names", "named", "called", "mean", "means", "number", "many", "much", "kind", "type",
	"types", "given", "give", "gives", "tell", "tells", "show", "shows", "make", "makes",
	"work", "works", "happen", "happens", "said", "says", "following", NULL
};

static int is_ascii_letter(unsigned char c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

/* Does a word of text[0..len) start with w[0..n) (case aside)? */
static int some_word_starts(const char *text, size_t len, const char *w, size_t n)
{
	for (size_t i = 0; i + n <= len; i++) {
		if ((text[i] | 0x20) != (w[0] | 0x20) ||
		    (i && is_ascii_letter((unsigned char)text[i - 1])))
			continue;
		if (!strncasecmp(text + i, w, n))
			return 1;
	}
	return 0;
}

size_t lp_focus_absent_words(const char *q, const char *text, size_t len, struct lp_span *out,
			     size_t cap)
{
	size_t n_out = 0, i = 0, qlen = strlen(q);

	while (i < qlen) {
		size_t a = i, n;
		char low[32];
		int asking = 0;
		if (!is_ascii_letter((unsigned char)q[i])) {
			i++;
			continue;
		}
		while (i < qlen && is_ascii_letter((unsigned char)q[i]))
			i++;
		n = i - a;
		/* a word glued to a mark or a digit is a name, the focus's */
		if (n < 4 || n >= sizeof(low) || (i < qlen && (q[i] == '_' || q[i] == '-' ||
							     isdigit((unsigned char)q[i]))) ||
		    (a && (q[a - 1] == '-' || q[a - 1] == '_' || q[a - 1] == '$')))
			continue;
		for (size_t k = 0; k < n; k++)
			low[k] = (char)((unsigned char)q[a + k] | 0x20);
		low[n] = '\0';
		for (size_t k = 0; asking_words[k] && !asking; k++)
			asking = !strcmp(low, asking_words[k]);
		if (asking || lp_match_is_stopword(low, n))
			continue;
		if (!some_word_starts(text, len, q + a, n >= 6 ? 5 : n)) {
			if (n_out < cap)
				out[n_out] = (struct lp_span){ a, n };
			n_out++;
		}
	}
	return n_out;
}
