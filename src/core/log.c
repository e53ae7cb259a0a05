#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/global.h"
#include "core/progress.h"

static _Thread_local const char *log_subject;

void lp_log_set_subject(const char *subject)
{
	log_subject = subject;
}

void lp_log_set_level(enum lp_log_level level)
{
	lp_global.log_level = level;
}

enum lp_log_level lp_log_level(void)
{
	return lp_global.log_level;
}

void lp_log(enum lp_log_level level, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	if (level > lp_global.log_level)
		return;
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	/* one write per line: threads of a batch log side by side */
	flockfile(stderr);
	lp_progress_clear(); /* a live progress line would run into it */
	fprintf(stderr, "lpipe: %s%s%s%s\n", log_subject ? log_subject : "",
		log_subject ? ": " : "",
		level == LP_LOG_WARN ? "warning: " : level == LP_LOG_ERROR ? "error: " : "",
		n >= 0 ? msg : fmt);
	funlockfile(stderr);
	if (n >= 0)
		free(msg);
}
