/*
 * log.h - messages on stderr for people, by level.
 *
 * Default level is LP_LOG_INFO; --quiet sets LP_LOG_WARN, -v LP_LOG_DEBUG.
 * Messages are one line each, prefixed "lpipe: " (and "warning: " for
 * warnings); a newline is added. A thread working on one document of many
 * (lpipe batch) names it with lp_log_set_subject: its messages then read
 * "lpipe: SUBJECT: warning: ...". Each line is written in one call, so
 * lines of threads side by side do not mix.
 */
#ifndef LP_LOG_H
#define LP_LOG_H

enum lp_log_level { LP_LOG_ERROR, LP_LOG_WARN, LP_LOG_INFO, LP_LOG_DEBUG };

void lp_log_set_level(enum lp_log_level level);
enum lp_log_level lp_log_level(void);
/* Name the calling thread's messages after `subject` (NULL: none); the
 * string must outlive its use. */
void lp_log_set_subject(const char *subject);
void lp_log(enum lp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define lp_warn(...) lp_log(LP_LOG_WARN, __VA_ARGS__)
#define lp_info(...) lp_log(LP_LOG_INFO, __VA_ARGS__)
#define lp_debug(...) lp_log(LP_LOG_DEBUG, __VA_ARGS__)

#endif
