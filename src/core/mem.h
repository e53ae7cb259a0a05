/*
 * mem.h - the tracked allocator: every large buffer is tagged, counted and
 * held under one budget.
 *
 * Each allocation carries a tag saying what it is for. The allocator keeps,
 * per tag, the bytes in use now and the peak, plus the peak of the total.
 * When a budget is set (lp_mem_set_budget, memory.budget, --mem-budget,
 * LPIPE_MEM_BUDGET), an allocation that would take the total over it fails:
 * NULL is returned, nothing is allocated, and the diagnostic (if given) names
 * the current phase (lp_mem_set_phase), what was asked and what was free.
 *
 * Memory that is not allocated here but still occupies the process (mapped
 * model weights, a mapped document) is entered with lp_mem_reserve so that
 * the budget stays honest.
 *
 * Fault injection: when the environment variable LPIPE_FAIL_ALLOC=N is set,
 * the N-th tracked allocation of the process (1-based, counting reserves,
 * every account's) fails as if over budget. Tests use it to sweep every
 * allocation site. A process that runs several documents at once can aim
 * at one of them instead: lp_mem_fail_thread_after(N) makes the N-th
 * tracked allocation of the calling thread from then on fail the same way
 * (lpipe serve's LPIPE_FAIL_ALLOC_RUN, serve/runs.h).
 *
 * Accounts: the counters and the budget belong to an account. Each engine
 * has its own (engine/engine.h), so two engines in one process have two
 * budgets; a thread charges the account it is on (lp_mem_account_use),
 * else the process's (core/global.h), which tools and tests use. Every
 * function below that names no account works on the calling thread's. A
 * block is given back to the account it was charged to, whichever thread
 * frees it; a reserve is given back to the thread's account, so it is
 * released on the account it was made on. A thread pool's workers take
 * the account of the thread that starts a loop (core/threadpool.h).
 *
 * Documents side by side: an account that runs several documents at once
 * (lpipe batch -j N) has one budget for all of them, and each document's
 * peaks are kept in a scope (lp_mem_scope_begin): what its thread charges
 * while the scope is on the thread counts as the document's own, what is
 * charged under no scope (the model an engine keeps for every document, a
 * block whose scope ended) is shared. A scope's view of a tag is its own
 * bytes plus the shared ones, so with a single document the view equals
 * the account's totals, and two documents never see each other's scratch.
 * The phase (lp_mem_set_phase) is per thread too.
 *
 * All functions are thread-safe.
 */
#ifndef LP_MEM_H
#define LP_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

enum lp_mem_tag {
	LP_MEM_WEIGHTS, /* model weights (copied or reserved for a mapping) */
	LP_MEM_KV,      /* KV cache */
	LP_MEM_SCRATCH, /* activations and other per-step buffers */
	LP_MEM_LOGITS,  /* output logits */
	LP_MEM_INDEX,   /* retrieval indexes (BM25 postings, embeddings) */
	LP_MEM_DOC,     /* document text and chunk tables */
	LP_MEM_OTHER,   /* config, strings, small tables */
	/* device memory (backend/backend.h): counted against the device
	 * budget (lp_mem_set_gpu_budget), not the host one, and not part of
	 * the host totals */
	LP_MEM_GPU_WEIGHTS, /* "gpu-weights" */
	LP_MEM_GPU_KV,      /* "gpu-kv" */
	LP_MEM_GPU_SCRATCH, /* "gpu-scratch" */
	LP_MEM_GPU_EMBED,   /* "gpu-embed": encoders' embeddings on the device */
	LP_MEM_NTAGS
};

struct lp_mem_account;

/* A new account with no budget, its owner holding the one reference;
 * NULL when out of memory. It is not tracked itself. */
struct lp_mem_account *lp_mem_account_new(void);
/* Take one more reference to `a` (NULL: no-op). */
void lp_mem_account_ref(struct lp_mem_account *a);
/* Drop a reference (NULL: no-op); the account goes when the last one has
 * gone and no block charged to it is live. */
void lp_mem_account_free(struct lp_mem_account *a);
/* Put `a` on the calling thread (NULL: the process's account); returns
 * the one it was on (NULL: the process's). The thread's scope counts only
 * while it is on the account the scope was begun in. The caller keeps a
 * reference for as long as the thread is on it. */
struct lp_mem_account *lp_mem_account_use(struct lp_mem_account *a);
/* The calling thread's account; NULL: the process's. */
struct lp_mem_account *lp_mem_account_current(void);

/* 1 for the device tags above. */
int lp_mem_tag_is_gpu(enum lp_mem_tag tag);

/* Tag name as printed in reports ("weights", "kv", ...). */
const char *lp_mem_tag_name(enum lp_mem_tag tag);

/* Budget in bytes for the tracked total of the calling thread's account;
 * 0 means unlimited. */
void lp_mem_set_budget(size_t bytes);
size_t lp_mem_budget(void);

/* Budget in bytes for the device tags together (memory.gpu_budget);
 * 0 means unlimited. A refusal names the phase and the device memory. */
void lp_mem_set_gpu_budget(size_t bytes);
size_t lp_mem_gpu_budget(void);
/* Device bytes tracked now and at their peak (the GPU tags together). */
size_t lp_mem_current_gpu(void);
size_t lp_mem_peak_gpu(void);

/* Name of the phase now running ("load", "prefill", "decode", "embed",
 * "index", ...), used in budget errors. `phase` must outlive its use. Set
 * for the calling thread; a thread that set none (a pool worker) sees the
 * last phase set by a thread on its account. */
void lp_mem_set_phase(const char *phase);
const char *lp_mem_phase(void);

/*
 * Allocate `bytes` (64-byte aligned, not zeroed) under `tag`.
 * Returns NULL when the system is out of memory, the budget would be
 * exceeded, or fault injection fires; then `d` (may be NULL) gets LP_E_NOMEM
 * and a message naming phase, request and free bytes. The caller owns the
 * block and frees it with lp_mem_free.
 */
void *lp_mem_alloc(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d);
/* Same, zero-filled; n * size is checked for overflow. */
void *lp_mem_calloc(enum lp_mem_tag tag, size_t n, size_t size, struct lp_diag *d);
/*
 * Same as lp_mem_calloc for one block, but its pages become resident only
 * when first written (an anonymous mapping): the budget is charged for all
 * `bytes` now, the process holds what the run really writes. For buffers
 * sized for the longest input a run may give yet filled only as far as its
 * inputs reach (KV cache positions, activation rows): a 2048-token context
 * whose prompts use 140 positions holds 140 positions of KV cache. The
 * budget still bounds the worst case, so the resident size never exceeds
 * what it counts. Free with lp_mem_free.
 */
void *lp_mem_alloc_pages(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d);
/* Resize a block from lp_mem_alloc (or NULL). On failure the old block is
 * untouched and NULL is returned. The tag of an existing block is kept. */
void *lp_mem_realloc(enum lp_mem_tag tag, void *p, size_t bytes, struct lp_diag *d);
/* Free a block from lp_mem_alloc or lp_mem_alloc_pages; NULL is a no-op. */
void lp_mem_free(void *p);
/* Copy a string into tracked memory (tag LP_MEM_OTHER); NULL on failure. */
char *lp_mem_strdup(const char *s);

/* Account `bytes` of memory held elsewhere (e.g. an mmap) under `tag`.
 * Same failure rules as lp_mem_alloc; returns LP_OK or LP_E_NOMEM. */
enum lp_status lp_mem_reserve(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d);
void lp_mem_unreserve(enum lp_mem_tag tag, size_t bytes);

/* Current and peak bytes of one tag, and of the host total (every tag
 * but the GPU ones). */
size_t lp_mem_current(enum lp_mem_tag tag);
size_t lp_mem_peak(enum lp_mem_tag tag);
size_t lp_mem_current_total(void);
size_t lp_mem_peak_total(void);
/* Tracked allocations and reserves refused so far (budget, fault injection
 * or the system). Code that formats through helpers which cannot report a
 * failure (describe() into a struct lp_buf) compares it before and after
 * to tell a complete result from a silently shortened one. */
unsigned long lp_mem_failures(void);
/* Fail the n-th tracked allocation or reserve of the calling thread from
 * now on (1-based; 0: none), its message naming the phase and ending
 * "(injected)". Only a test sets it; nothing else reads it. */
void lp_mem_fail_thread_after(unsigned long n);

/* Start new peaks from the current values (for per-phase measurements). */
void lp_mem_reset_peaks(void);

/*
 * Begin a scope on the calling thread: from now on its tracked
 * allocations and reserves count as the scope's own (see above). Returns
 * the scope's handle, or 0 when SCOPE_SLOTS (64) scopes are live already
 * on the thread's account (the thread then charges shared memory and the scope functions below
 * give the account's values).
 */
uint32_t lp_mem_scope_begin(void);
/* End the scope `handle` (0: no-op); what it still holds becomes shared.
 * Takes it off the calling thread when it is the thread's. */
void lp_mem_scope_end(uint32_t handle);
/* Put scope `handle` (0: none) on the calling thread; returns the one it
 * had. An engine opens what it keeps for every document under none. */
uint32_t lp_mem_scope_swap(uint32_t handle);
/* The calling thread's scope (0: none). */
uint32_t lp_mem_scope_current(void);
/* The calling thread's scope: the peak of its view of a tag and of the
 * host total since it began or since lp_mem_scope_reset_peaks; its own
 * host bytes now. Without a scope: lp_mem_peak, lp_mem_peak_total,
 * lp_mem_current_total, and lp_mem_reset_peaks. */
size_t lp_mem_scope_peak(enum lp_mem_tag tag);
size_t lp_mem_scope_peak_total(void);
size_t lp_mem_scope_own_total(void);
void lp_mem_scope_reset_peaks(void);


/* Process peak resident set size in bytes (from getrusage), 0 if unknown. */
size_t lp_mem_peak_rss(void);
/* Current resident set size in bytes (from /proc/self/statm), 0 if unknown. */
size_t lp_mem_current_rss(void);

/*
 * Parse a byte size: "512", "64KiB", "1.5GiB", "2GB", "100M" (K/M/G/T with
 * or without "iB"/"B" are all powers of 1024). Returns LP_OK, or
 * LP_E_CONFIG for a malformed or negative value, or one that is not a whole
 * number of bytes ("0.5B", "0.9", "1.3KiB"): a fraction would round to a
 * different cap, or to 0, which means none.
 */
enum lp_status lp_mem_parse_size(const char *s, size_t *bytes);
/* Format bytes as "1.50 GiB" into buf (at least 32 bytes); returns buf. */
char *lp_mem_format_size(size_t bytes, char *buf, size_t cap);

#endif
