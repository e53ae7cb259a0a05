#include "core/global.h"

/* core/mem.c's process account; named here only, for the initializer. */
extern struct lp_mem_account lp_mem_process_account;

struct lp_global lp_global = {
	.log_level = LP_LOG_INFO,
	.progress_mode = -1,
	.mem = &lp_mem_process_account,
	.fail_alloc_at = LP_GLOBAL_FAIL_ALLOC_UNREAD,
};
