/*
 * internal.h - what the library's own clients in this tree (lpipe serve)
 * see of it beside lpipe.h. Nothing here is exported from liblpipe.
 */
#ifndef LP_API_INTERNAL_H
#define LP_API_INTERNAL_H

#include "api/lpipe.h"
#include "core/mem.h"

/*
 * The memory account of `e` (core/mem.h): its budget and what its runs
 * and its kept models and documents are charged to. A client that keeps
 * memory beside the engine's runs under the same budget (lpipe serve's
 * uploads and results) puts its threads on it with lp_mem_account_use,
 * and reads the engine's figures there. Owned by the engine; NULL for
 * NULL.
 */
struct lp_mem_account *lp_api_engine_account(lpipe_engine *e);

#endif
