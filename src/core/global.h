/*
 * global.h - the library's process-wide state, all of it in one place.
 *
 * Everything else the library keeps belongs to an object the caller holds
 * (an engine and its memory account, a document, a pipeline) or to the
 * calling thread (its phase, memory scope, log subject, progress line,
 * the keys a config parser is watched for). What is here is here because
 * the process has one of it: one standard error, one environment, one
 * terminal, and a default for code that runs on no engine.
 *
 * Invariants: the settings (log_level, progress_mode, mem_budget) are set
 * before runs start, by the command line or the caller of lpipe.h, and
 * only read afterwards; the counters are atomic; `mem` is never freed.
 * Only the file named beside a field writes it.
 */
#ifndef LP_CORE_GLOBAL_H
#define LP_CORE_GLOBAL_H

#include <stdatomic.h>

#include "core/log.h"

struct lp_mem_account;

/* fail_alloc_at before LPIPE_FAIL_ALLOC was read. */
#define LP_GLOBAL_FAIL_ALLOC_UNREAD (-2L)

struct lp_global {
	/* core/log.c: what lp_log prints (lp_log_set_level) */
	enum lp_log_level log_level;
	/* core/progress.c: lp_progress_enable's mode (-1: on a terminal
	 * only, 0 never, 1 always), and whether a live line is drawn on
	 * standard error now and not erased */
	int progress_mode;
	atomic_int progress_on_screen;
	/* core/mem.c: the account of every thread that is on no other
	 * (lp_mem_account_use): tools, tests, runs without an engine */
	struct lp_mem_account *mem;
	/* core/mem.c: LPIPE_FAIL_ALLOC (-1: none), read on the first
	 * charge, and the charges counted against it, every account's */
	long fail_alloc_at;
	unsigned long alloc_count;
	/* api/lpipe.c: lpipe_set_mem_budget's size, or NULL: the budget of
	 * a run on an engine without one of its own */
	char *mem_budget;
};

extern struct lp_global lp_global;

#endif
