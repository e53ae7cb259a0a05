/*
 * options.h - the one parser for the numeric options of every command.
 *
 * Each command names its option and the range the value must lie in; a
 * value that is not a number of that kind, not finite, or out of range is
 * a usage error: "lpipe CMD: error: invalid value 'V' for OPT (expected
 * ...)" and the synopsis on stderr, exit status 2. The ranges shared by
 * several commands are defined here, so `generate --ctx` and `model info
 * --context` cannot disagree.
 */
#ifndef LP_CLI_OPTIONS_H
#define LP_CLI_OPTIONS_H

#include <stddef.h>

#define LP_OPT_CTX_MAX 1048576LL   /* tokens: --ctx, --context, probe --max */
#define LP_OPT_THREADS_MAX 1024LL  /* --threads */
#define LP_OPT_TOKENS_MAX 1048576LL /* generate -n */

/*
 * Parse `v` (the value of option `opt` of command `cmd`) as a decimal
 * integer in [lo, hi] into *out. Returns 0, or LP_EXIT_USAGE after
 * printing the error.
 */
int lp_opt_int(const char *cmd, const char *opt, const char *v, long long lo, long long hi,
	       long long *out);

/* Same for an unsigned 64-bit integer in [0, UINT64_MAX] (a seed). */
int lp_opt_u64(const char *cmd, const char *opt, const char *v, unsigned long long *out);

/* Same for a finite real number in [lo, hi]. */
int lp_opt_real(const char *cmd, const char *opt, const char *v, double lo, double hi,
		double *out);

/*
 * Same for a byte size ("512MiB", see lp_mem_parse_size) of at least
 * `min` bytes; 0 is accepted as well when `zero_ok` (it means no cap).
 */
int lp_opt_size(const char *cmd, const char *opt, const char *v, size_t min, int zero_ok,
		size_t *out);

#endif
