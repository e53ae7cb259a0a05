/*
 * focus.h - what a question asks about, and what kind of answer it wants.
 *
 * The answer stage must know when the document does not answer. Two
 * signs are read from the question alone, without a model:
 *
 *  - its focus: the names it asks about that a document spells one way
 *    only. An option ("--delete", "-v"), a name in capitals or with an
 *    identifier's marks ("SHLVL", "PROMPT_COMMAND", "PS1", "$!", "x86"),
 *    an inner capital ("RefCell<T>", "LoadCredential"), a path
 *    ("~/.bashrc", "/etc/profile"), a file name ("sshd_config",
 *    "foo.conf"), or a phrase in quotes ("Nebula"). Ordinary words are not
 *    a focus: a document may say "connection" where the question says
 *    "link". A question whose focus the document never holds is not
 *    answered by it.
 *  - what it asks for: a quantity ("How many ...", "What is the largest
 *    size ...", "Which version ...", "多少", "几个") wants a number; a name
 *    ("Which variable ...", "Which option ...", "哪个命令") wants the name
 *    of an entry. An answer sentence without a number cannot answer the
 *    first.
 *
 * Matching is on whole tokens, case kept ("IFS" is not "ifs"), with
 * quote marks around a token ignored ("'SHLVL'") and the hyphens that
 * rendered text uses (U+2010, U+2011, U+2212) taken for '-'. Nothing
 * here allocates.
 */
#ifndef LP_TEXT_FOCUS_H
#define LP_TEXT_FOCUS_H

#include <stddef.h>

#include "text/sentence.h"

/* What a question asks for. */
enum lp_asks {
	LP_ASKS_OTHER,    /* a description, a reason, a yes or no */
	LP_ASKS_QUANTITY, /* a number, a size, a version, a year */
	LP_ASKS_NAME      /* the name of a variable, option, command, file, ... */
};

/*
 * The next focus token of q[0..len) at or after *pos: 1 and its bytes in
 * *tok (quote marks and closing punctuation left out), *pos moved past
 * it; 0 when there is none. Start with *pos = 0.
 */
int lp_focus_next(const char *q, size_t len, size_t *pos, struct lp_span *tok);

/* 1 when text[0..len) holds tok[0..n) as a whole token (see above). */
int lp_focus_held(const char *text, size_t len, const char *tok, size_t n);

/* How many times text[0..len) holds tok[0..n) (as lp_focus_held), counting
 * no further than cap. */
size_t lp_focus_count(const char *text, size_t len, const char *tok, size_t n, size_t cap);

/*
 * 1 when the focus token tok[0..n) is a name a document writes as the
 * question does (an option, a name in capitals, a quoted phrase), so that
 * a document without it does not answer; 0 for a path, a notation or a
 * type ("/etc/default/x", "BASE#N", "$!", "RefCell<T>"), which a document
 * may break across a line or write another way ("[BASE#]N").
 */
int lp_focus_is_name(const char *tok, size_t n);

/* What the question q (NUL-terminated, English or Chinese) asks for.
 * For LP_ASKS_NAME, *kind (when not NULL) gets the bytes of q that say
 * what kind of name ("option" of "Which shell option ...", "命令");
 * otherwise {0, 0}. */
enum lp_asks lp_focus_asks(const char *q, struct lp_span *kind);

/* 1 when the lower-case word w[0, n) names a kind of thing a manual
 * describes, or is its plural: "option", "variables", "builtin", ...
 * (the kinds lp_focus_asks reads after "which"). */
int lp_focus_is_kind(const char *w, size_t n);

/* 1 when text[0..len) holds a number: a digit (not a manual section,
 * "dircolors(1)"), an English number word ("two", "twice", "dozen") or a
 * Chinese numeral (一 .. 十, 百, 千, 万). */
int lp_focus_has_number(const char *text, size_t len);

/*
 * 1 when text[0..len) holds the kind of quantity the question q asks for:
 * a version number ("5.2") for "Which version ...", a year ("1993") for
 * "Which year ...", a price (a currency sign or word) for "How much does
 * ... cost", a number with a unit of size ("512 bytes", "4 KiB") for "What
 * size ...", else any number. A number q states itself ("On what date was
 * version 2.0 published?" and "... v. 2.0.") is none: it is what the
 * question asks about, not its answer. Nor, for a question that asks for
 * a bound ("at most", "the maximum number", "最多"), is an open count
 * ("zero or more", "2 or greater"): it sets none.
 */
int lp_focus_quantity_held(const char *q, const char *text, size_t len);

/*
 * A question about what the document never talks of: the content words of
 * the English question q (letters, 4 or more, not stop words nor the
 * words every question uses: "option", "command", "value", "default",
 * "version", "document", ...) that text[0..len) never uses, case aside,
 * counting a word as used when a word of the text starts with its stem
 * (its first 5 letters when it has 6 or more: "encrypts" is used by
 * "encryption"). Writes up to `cap` of them to out[] (bytes of q) and
 * returns how many there are. One such word is often a paraphrase ("count"
 * for "incremented"); two are a question the text does not answer
 * ("Which option encrypts the archive with a password?" of a manual that
 * names neither).
 */
#define LP_FOCUS_ABSENT_WORDS 2 /* words absent before the answer stage abstains */
size_t lp_focus_absent_words(const char *q, const char *text, size_t len, struct lp_span *out,
			     size_t cap);

#endif
