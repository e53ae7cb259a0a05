#include "cli/options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "core/mem.h"
#include "core/status.h"

static int bad(const char *cmd, const char *opt, const char *v, const char *expected)
{
	return lp_cli_usage_error(cmd, "invalid value '%s' for %s (expected %s)", v ? v : "",
				  opt, expected);
}

int lp_opt_int(const char *cmd, const char *opt, const char *v, long long lo, long long hi,
	       long long *out)
{
	char want[96], *end;
	long long n;

	snprintf(want, sizeof(want), "an integer from %lld to %lld", lo, hi);
	if (!v || !*v || isspace((unsigned char)*v))
		return bad(cmd, opt, v, want);
	errno = 0;
	n = strtoll(v, &end, 10);
	if (*end || errno || n < lo || n > hi)
		return bad(cmd, opt, v, want);
	*out = n;
	return 0;
}

int lp_opt_u64(const char *cmd, const char *opt, const char *v, unsigned long long *out)
{
	const char *want = "an integer from 0 to 18446744073709551615";
	char *end;
	unsigned long long n;

	if (!v || !isdigit((unsigned char)*v))
		return bad(cmd, opt, v, want);
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end || errno)
		return bad(cmd, opt, v, want);
	*out = n;
	return 0;
}

int lp_opt_real(const char *cmd, const char *opt, const char *v, double lo, double hi,
		double *out)
{
	char want[96], *end;
	double x;

	snprintf(want, sizeof(want), "a number from %g to %g", lo, hi);
	if (!v || !*v || isspace((unsigned char)*v))
		return bad(cmd, opt, v, want);
	errno = 0;
	x = strtod(v, &end);
	if (*end || errno || !isfinite(x) || x < lo || x > hi)
		return bad(cmd, opt, v, want);
	*out = x;
	return 0;
}

int lp_opt_size(const char *cmd, const char *opt, const char *v, size_t min, int zero_ok,
		size_t *out)
{
	char want[96], lim[32];
	size_t n;

	if (min > 1)
		snprintf(want, sizeof(want), "a whole number of bytes such as 512MiB, at least %s%s",
			 lp_mem_format_size(min, lim, sizeof(lim)), zero_ok ? ", or 0 for no cap" : "");
	else
		snprintf(want, sizeof(want), "a whole number of bytes such as 512MiB%s",
			 zero_ok ? ", or 0 for no cap" : "");
	if (!v || lp_mem_parse_size(v, &n) || (n < min && !(zero_ok && n == 0)))
		return bad(cmd, opt, v, want);
	*out = n;
	return 0;
}
