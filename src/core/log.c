#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/progress.h"

static enum lp_log_level log_level = LP_LOG_INFO;

void lp_log_set_level(enum lp_log_level level)
{
	log_level = level;
}

enum lp_log_level lp_log_level(void)
{
	return log_level;
}

void lp_log(enum lp_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	lp_progress_clear(); /* a live progress line would run into it */
	fputs(level == LP_LOG_WARN ? "lpipe: warning: " :
	      level == LP_LOG_ERROR ? "lpipe: error: " : "lpipe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
