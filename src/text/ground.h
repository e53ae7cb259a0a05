/*
 * ground.h - is what a model wrote about a source backed by the source?
 *
 * A fluent sentence can be checked only loosely, but the tokens a reader
 * acts on can be checked exactly: numbers, option names, paths, code
 * identifiers and quoted strings. A small model invents them ("Debian 3.2",
 * "--force-all", "JavaScript"); if one does not occur in the source, the
 * sentence that holds it is not grounded. This module finds those tokens in
 * an output and looks them up in the source.
 *
 * Checked tokens (found by lp_ground_tokens), each a whole token of the
 * output:
 *  - NUMBER: a word of digits with '.' or ',' inside ("3.2", "1,024",
 *    "500"), each part of a range or a date ("1975-2010", "2009-01-19"), a
 *    count hyphened to its unit ("1024" of "1024-byte"), a version hyphened
 *    to its name ("4.0" of "bash-4.0"; not "8" of "UTF-8") or with open
 *    parts ("1.13" of "1.13.x", "192.168.0" of "192.168.0.x"); a list
 *    marker at the start of a line ("1." "2)") is not one, a section's
 *    number there ("3.2.1.") is;
 *  - OPTION: one or two dashes glued to a word after a space or at the
 *    start: "--max-words", "-x" (up to '=' or the end of the word);
 *  - PATH: a run without white space that starts with '/', "~/", "./" or
 *    "../", or holds "://" or two '/' ("/etc/apt/sources.list",
 *    "src/cli/main.c"), trailing punctuation trimmed;
 *  - IDENT: a word with a digit and a letter ("ext4", "x86_64", "SmolLM2";
 *    not an ordinal such as "2nd"), with '_' ("snake_case"), with a
 *    lower-case letter followed by an upper-case one ("JavaScript",
 *    "getValue"), all capitals of two letters or more ("HISTFILE", "GUI";
 *    not a unit after a number: "3.5 GB"),
 *    or dotted ("os.path", "sources.list"; not "e.g", "i.e");
 *  - QUOTED: 1 to 8 words between quotes on one line ("...", '...', `...`,
 *    “...”, ‘...’, «...», 「...」, 『...』).
 * A number is part of the word around it: "ext4" is checked as "ext4",
 * never as "4". CJK text has no spaces, but its letters are never checked
 * and a number or Latin word inside it is a token of its own ("共有12个" holds
 * the NUMBER "12"). Citation markers "[chunk N]" are not checked.
 *
 * Occurs: the token's normal form (text/match.h: case and white space
 * folded) is found in the source's normal form as whole tokens: "12" does
 * not occur in "112" nor in "1.12", "ext4" not in "ext45", "os.path" not
 * in "os.pathsep"; letters may follow a NUMBER (a unit: "3.5" occurs in
 * "3.5GB"). A QUOTED token only needs its words in order, as a
 * keyphrase does.
 *
 * Memory stays flat whatever the source's length: the source is read in
 * windows of LP_GROUND_WINDOW bytes (overlapping by LP_GROUND_OVERLAP, cut
 * at white space), each normalised into one reused buffer, and the caller
 * is told after each window so it can release the pages read. Time is the
 * source's length times the distinct tokens not yet found (each a memmem).
 */
#ifndef LP_TEXT_GROUND_H
#define LP_TEXT_GROUND_H

#include <stddef.h>

#include "core/buf.h"
#include "core/status.h"

#define LP_GROUND_WINDOW ((size_t)1 << 20)
#define LP_GROUND_OVERLAP ((size_t)4 << 10)
/* Longest token checked, bytes; longer runs are not checked. */
#define LP_GROUND_MAX_TOKEN 200

enum lp_ground_kind {
	LP_GROUND_NUMBER,
	LP_GROUND_OPTION,
	LP_GROUND_PATH,
	LP_GROUND_IDENT,
	LP_GROUND_QUOTED,
};

/* "number", "option", "path", "identifier", "quoted". */
const char *lp_ground_kind_name(enum lp_ground_kind k);

struct lp_ground_token {
	size_t off, len; /* bytes into the text scanned */
	enum lp_ground_kind kind;
};

/*
 * The checked tokens of text[0..len), in order, into out[0..cap). Returns
 * how many there are (which may exceed cap: only the first cap are
 * written). Reads nothing outside text[0..len); tolerates invalid UTF-8.
 */
size_t lp_ground_tokens(const char *text, size_t len, struct lp_ground_token *out,
			size_t cap);

/* A set of distinct tokens (by normal form) looked up in a source. */
struct lp_ground {
	struct lp_buf keys;  /* normal forms, NUL-separated */
	size_t *key_off;     /* [n] into keys */
	size_t *key_len;     /* [n] */
	unsigned char *strict; /* [n] how it must occur: 0 words in order
				* (QUOTED), 1 whole tokens, 2 a whole number
				* that a unit may follow ("3.5" in "3.5GB") */
	unsigned char *found;  /* [n] 1: occurs in what was scanned */
	size_t n, cap;
	struct lp_buf win;   /* a window's normal form */
};

void lp_ground_init(struct lp_ground *g);
void lp_ground_release(struct lp_ground *g);

/*
 * Add the token text[0..len) of kind k (if its normal form is not in the
 * set yet) and set *id to its index. Returns LP_OK or LP_E_NOMEM (`d`
 * filled).
 */
enum lp_status lp_ground_add(struct lp_ground *g, const char *text, size_t len,
			     enum lp_ground_kind k, size_t *id, struct lp_diag *d);

/* Told that the scan is done with text[off, off + len). */
typedef void (*lp_ground_done_fn)(void *ctx, size_t off, size_t len);

/*
 * Mark the tokens that occur in text[0..len) (found stays set across
 * calls, so a source and a question may be scanned in turn). `done` (may
 * be NULL) is called after each window with the range behind it. Returns
 * LP_OK or LP_E_NOMEM (`d` filled).
 */
enum lp_status lp_ground_scan(struct lp_ground *g, const char *text, size_t len,
			      lp_ground_done_fn done, void *ctx, struct lp_diag *d);

#endif
