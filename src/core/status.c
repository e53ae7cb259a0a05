#include "core/status.h"

#include <string.h>

void lp_diag_init(struct lp_diag *d)
{
	memset(d, 0, sizeof(*d));
	d->offset = -1;
}

static void diag_fill(struct lp_diag *d, enum lp_status status, const char *file,
		      const char *fmt, va_list ap)
{
	d->status = status;
	snprintf(d->file, sizeof(d->file), "%s", file ? file : "");
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
}

enum lp_status lp_diag_set(struct lp_diag *d, enum lp_status status,
			   const char *file, int line, int col,
			   const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return status;
	va_start(ap, fmt);
	diag_fill(d, status, file, fmt, ap);
	va_end(ap);
	d->line = line;
	d->col = col;
	d->offset = -1;
	return status;
}

enum lp_status lp_diag_set_offset(struct lp_diag *d, enum lp_status status,
				  const char *file, long long offset,
				  const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return status;
	va_start(ap, fmt);
	diag_fill(d, status, file, fmt, ap);
	va_end(ap);
	d->line = 0;
	d->col = 0;
	d->offset = offset;
	return status;
}

void lp_diag_print(const struct lp_diag *d, FILE *out)
{
	if (!d->file[0])
		fprintf(out, "lpipe: error: %s\n", d->msg);
	else if (d->line > 0)
		fprintf(out, "%s:%d:%d: error: %s\n", d->file, d->line,
			d->col > 0 ? d->col : 1, d->msg);
	else if (d->offset >= 0)
		fprintf(out, "%s: byte %lld: error: %s\n", d->file, d->offset, d->msg);
	else
		fprintf(out, "%s: error: %s\n", d->file, d->msg);
}

const char *lp_status_str(enum lp_status s)
{
	switch (s) {
	case LP_OK: return "ok";
	case LP_E_VERIFY: return "verification failed";
	case LP_E_USAGE: return "usage error";
	case LP_E_CONFIG: return "config error";
	case LP_E_INPUT: return "input error";
	case LP_E_NOMEM: return "out of memory";
	case LP_E_IO: return "i/o error";
	case LP_E_MODEL: return "model error";
	case LP_E_INTERNAL: return "internal error";
	case LP_E_DEVICE: return "device error";
	}
	return "unknown status";
}

int lp_status_exit_code(enum lp_status s)
{
	switch (s) {
	case LP_OK: return LP_EXIT_OK;
	case LP_E_VERIFY: return LP_EXIT_VERIFY;
	case LP_E_USAGE:
	case LP_E_CONFIG: return LP_EXIT_USAGE;
	case LP_E_INPUT:
	case LP_E_IO:
	case LP_E_MODEL:
	case LP_E_DEVICE: return LP_EXIT_INPUT;
	case LP_E_NOMEM: return LP_EXIT_NOMEM;
	case LP_E_INTERNAL: break;
	}
	return LP_EXIT_INTERNAL;
}
