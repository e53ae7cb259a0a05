/*
 * status.h - status codes and diagnostics shared by every module.
 *
 * Library functions return an enum lp_status and, on failure, fill a
 * caller-owned struct lp_diag with where it happened (file, line, column or
 * byte offset) and a one-line message. Only the cmd_* functions of the tool
 * turn a status into an exit code (lp_status_exit_code); library code never
 * calls exit().
 *
 * The numeric values are frozen: they appear in JSON traces and tests.
 */
#ifndef LP_STATUS_H
#define LP_STATUS_H

#include <stdarg.h>
#include <stdio.h>

enum lp_status {
	LP_OK = 0,
	LP_E_VERIFY = 1,   /* verification failed (keyphrases, min_words) */
	LP_E_USAGE = 2,    /* bad command line */
	LP_E_CONFIG = 3,   /* bad pipeline file or --set value */
	LP_E_INPUT = 4,    /* bad document: not UTF-8, binary, empty, unreadable */
	LP_E_NOMEM = 5,    /* allocation failed or memory budget exceeded */
	LP_E_IO = 6,       /* read/write/rename failed */
	LP_E_MODEL = 7,    /* bad or unsupported model file */
	LP_E_INTERNAL = 8, /* a bug: an invariant did not hold */
	LP_E_DEVICE = 9,   /* the device asked for is unusable: no module, driver or GPU */
};

/* Process exit codes, documented in lpipe(1). */
enum lp_exit {
	LP_EXIT_OK = 0,
	LP_EXIT_VERIFY = 1,
	LP_EXIT_USAGE = 2, /* usage or configuration error */
	LP_EXIT_INPUT = 3, /* input (document, model or device) error */
	LP_EXIT_NOMEM = 4, /* out of memory or over budget */
	LP_EXIT_INTERNAL = 5,
};

/*
 * Where and why something failed. `file` is the path of the input at fault
 * (pipeline, document, model), or empty. `line`/`col` are 1-based, 0 when not
 * known; `offset` is a byte offset into the file, -1 when not known.
 */
struct lp_diag {
	enum lp_status status;
	char file[512];
	int line;
	int col;
	long long offset;
	char msg[1024];
};

/* Clear a diagnostic (status LP_OK, no location, empty message). */
void lp_diag_init(struct lp_diag *d);

/*
 * Record a failure and return `status`, so callers can write
 *     return lp_diag_set(d, LP_E_CONFIG, path, line, col, "unknown key '%s'", k);
 * `d` may be NULL (the message is dropped). `file` may be NULL.
 */
enum lp_status lp_diag_set(struct lp_diag *d, enum lp_status status,
			   const char *file, int line, int col,
			   const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Same, with a byte offset instead of line:column. */
enum lp_status lp_diag_set_offset(struct lp_diag *d, enum lp_status status,
				  const char *file, long long offset,
				  const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Print "file:line:col: error: msg" (or "file: byte N: error: msg",
 * or "lpipe: error: msg" when no file is known) and a newline. */
void lp_diag_print(const struct lp_diag *d, FILE *out);

/* Name of a status ("config error", ...); never NULL. */
const char *lp_status_str(enum lp_status s);

/* Exit code for a status, per the table in lpipe(1). */
int lp_status_exit_code(enum lp_status s);

#endif
