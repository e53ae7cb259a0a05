#include "core/mem.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/global.h"

/* Every block starts with this header; 64 bytes keep the payload aligned
 * for AVX-512 loads. */
struct mem_header {
	union {
		struct {
			size_t bytes;
			struct lp_mem_account *acct; /* the account charged */
			enum lp_mem_tag tag;
			uint32_t magic;
			uint32_t scope;  /* the scope charged (lp_mem_scope_begin), 0: none */
			uint32_t mapped; /* 1: from lp_mem_alloc_pages (munmap it) */
		};
		char pad[64];
	};
};

#define MEM_MAGIC 0x6c706d65u /* "lpme" */

/* The phase of the calling thread: documents run side by side in a batch,
 * each naming its own phase; a thread that never set one (a pool worker)
 * reads the last one set on its account, as a single run always did. */
static _Thread_local const char *mem_thread_phase;
static _Thread_local unsigned long mem_thread_fail_in; /* 0: none */

static const char *const tag_names[LP_MEM_NTAGS] = {
	"weights", "kv", "scratch", "logits", "index", "doc", "other",
	"gpu-weights", "gpu-kv", "gpu-scratch", "gpu-embed",
};

/*
 * Scopes: slot i of the table is live while a document runs under it. A
 * handle is the slot in its low bits and the slot's generation above, so a
 * block freed after its scope ended (a session a document opened and the
 * engine kept) finds the generation changed and is uncharged from the
 * totals only: from then on it is shared memory.
 */
#define SCOPE_SLOT_BITS 6
#define SCOPE_SLOTS (1u << SCOPE_SLOT_BITS)

struct mem_scope {
	uint32_t gen;               /* bumped by each begin; the handle's high bits */
	int live;
	size_t own[LP_MEM_NTAGS];   /* charged under this scope, now */
	size_t own_total;           /* host tags of own[] */
	size_t peak[LP_MEM_NTAGS];  /* of the view (own + shared) */
	size_t peak_total;
};

/*
 * An account: one budget and what is charged to it. Every field is read
 * and written under `lock`. It lives while its owners hold references
 * (lp_mem_account_new, lp_mem_account_ref) and while blocks charged to it
 * are live, so a block may be freed after its engine went.
 */
struct lp_mem_account {
	pthread_mutex_t lock;
	size_t current[LP_MEM_NTAGS];
	size_t peak[LP_MEM_NTAGS];
	size_t total, total_peak;   /* host tags */
	size_t budget;              /* host; 0: none */
	size_t gpu, gpu_peak, gpu_budget;
	unsigned long failures;     /* refused charges */
	const char *phase;          /* the last one set by a thread on it */
	struct mem_scope scopes[SCOPE_SLOTS];
	size_t live_own[LP_MEM_NTAGS]; /* own[] summed over the live scopes */
	size_t live_own_total;
	unsigned long refs;         /* owners */
	unsigned long blocks;       /* live blocks charged here */
};

/* The process's account (lp_global.mem points at it): what a thread on
 * no other account charges. Never freed. */
struct lp_mem_account lp_mem_process_account = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.phase = "run",
	.refs = 1,
};

/* The calling thread's account (NULL: the process's) and scope; the scope
 * counts only while the thread is on the account it was begun in. */
static _Thread_local struct lp_mem_account *mem_thread_acct;
static _Thread_local uint32_t mem_thread_scope; /* handle, 0: none */
static _Thread_local struct lp_mem_account *mem_thread_scope_acct;

static struct lp_mem_account *acct_here(void)
{
	return mem_thread_acct ? mem_thread_acct : lp_global.mem;
}

/* The calling thread's scope handle on account `a`, 0 when none. */
static uint32_t scope_here(const struct lp_mem_account *a)
{
	return mem_thread_scope_acct == a ? mem_thread_scope : 0;
}

/* The live scope of `handle` on `a`, or NULL; caller holds a's lock. */
static struct mem_scope *scope_of(struct lp_mem_account *a, uint32_t handle)
{
	struct mem_scope *sc;

	if (!handle)
		return NULL;
	sc = &a->scopes[(handle - 1) & (SCOPE_SLOTS - 1)];
	return sc->live && sc->gen == (handle - 1) >> SCOPE_SLOT_BITS ? sc : NULL;
}

/* A scope's view of a tag and of the host total: its own bytes plus the
 * shared ones (charged under no live scope). Caller holds the lock. */
static size_t view_tag(const struct lp_mem_account *a, const struct mem_scope *sc, int t)
{
	/* a reserve released under another scope than it was made in can
	 * leave the sums off by its size: never below the scope's own */
	size_t shared = a->current[t] > a->live_own[t] ? a->current[t] - a->live_own[t] : 0;

	return sc->own[t] + shared;
}

static size_t view_total(const struct lp_mem_account *a, const struct mem_scope *sc)
{
	size_t shared = a->total > a->live_own_total ? a->total - a->live_own_total : 0;

	return sc->own_total + shared;
}

static void scope_bump_peaks(struct lp_mem_account *a, struct mem_scope *sc, int t)
{
	size_t v = view_tag(a, sc, t);

	if (v > sc->peak[t])
		sc->peak[t] = v;
	if (!lp_mem_tag_is_gpu(t) && (v = view_total(a, sc)) > sc->peak_total)
		sc->peak_total = v;
}

/* After a->current[tag] grew: the charged scope's peaks, or every live
 * scope's when the bytes are shared. Caller holds the lock. */
static void scope_charge(struct lp_mem_account *a, struct mem_scope *sc, enum lp_mem_tag tag,
			 size_t bytes)
{
	if (sc) {
		sc->own[tag] += bytes;
		a->live_own[tag] += bytes;
		if (!lp_mem_tag_is_gpu(tag)) {
			sc->own_total += bytes;
			a->live_own_total += bytes;
		}
		scope_bump_peaks(a, sc, tag);
		return;
	}
	for (unsigned i = 0; i < SCOPE_SLOTS; i++)
		if (a->scopes[i].live)
			scope_bump_peaks(a, &a->scopes[i], tag);
}

/* Before a->current[tag] shrinks by `bytes`: take them from the scope's
 * own first (the rest was shared). Caller holds the lock. */
static void scope_uncharge(struct lp_mem_account *a, struct mem_scope *sc, enum lp_mem_tag tag,
			   size_t bytes)
{
	size_t n;

	if (!sc)
		return;
	n = bytes < sc->own[tag] ? bytes : sc->own[tag];
	sc->own[tag] -= n;
	a->live_own[tag] -= n;
	if (!lp_mem_tag_is_gpu(tag)) {
		sc->own_total -= n;
		a->live_own_total -= n;
	}
}

/* ---- accounts ----------------------------------------------------------- */

struct lp_mem_account *lp_mem_account_new(void)
{
	struct lp_mem_account *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (pthread_mutex_init(&a->lock, NULL)) {
		free(a);
		return NULL;
	}
	a->phase = "run";
	a->refs = 1;
	return a;
}

void lp_mem_account_ref(struct lp_mem_account *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->refs++;
	pthread_mutex_unlock(&a->lock);
}

/* Free `a` when nothing holds it; takes and releases its lock. */
static void account_put(struct lp_mem_account *a, int drop_ref, int drop_block)
{
	int gone;

	pthread_mutex_lock(&a->lock);
	a->refs -= drop_ref && a->refs;
	a->blocks -= drop_block && a->blocks;
	gone = !a->refs && !a->blocks && a != lp_global.mem;
	pthread_mutex_unlock(&a->lock);
	if (gone) {
		pthread_mutex_destroy(&a->lock);
		free(a);
	}
}

void lp_mem_account_free(struct lp_mem_account *a)
{
	if (a)
		account_put(a, 1, 0);
}

struct lp_mem_account *lp_mem_account_use(struct lp_mem_account *a)
{
	struct lp_mem_account *was = mem_thread_acct;

	mem_thread_acct = a;
	return was;
}

struct lp_mem_account *lp_mem_account_current(void)
{
	return mem_thread_acct;
}

/* ---- scopes ------------------------------------------------------------- */

uint32_t lp_mem_scope_begin(void)
{
	struct lp_mem_account *a = acct_here();
	uint32_t h = 0;

	pthread_mutex_lock(&a->lock);
	for (unsigned i = 0; i < SCOPE_SLOTS && !h; i++) {
		struct mem_scope *sc = &a->scopes[i];
		uint32_t gen;
		if (sc->live)
			continue;
		gen = sc->gen + 1;
		memset(sc, 0, sizeof(*sc));
		sc->gen = gen & (UINT32_MAX >> SCOPE_SLOT_BITS);
		sc->live = 1;
		h = ((sc->gen << SCOPE_SLOT_BITS) | i) + 1;
		for (int t = 0; t < LP_MEM_NTAGS; t++)
			sc->peak[t] = view_tag(a, sc, t);
		sc->peak_total = view_total(a, sc);
	}
	pthread_mutex_unlock(&a->lock);
	mem_thread_scope = h;
	mem_thread_scope_acct = a;
	return h;
}

void lp_mem_scope_end(uint32_t handle)
{
	struct lp_mem_account *a = acct_here();
	struct mem_scope *sc;

	pthread_mutex_lock(&a->lock);
	if ((sc = scope_of(a, handle))) {
		/* what it still holds is shared from now on */
		for (int t = 0; t < LP_MEM_NTAGS; t++)
			a->live_own[t] -= sc->own[t];
		a->live_own_total -= sc->own_total;
		sc->live = 0;
	}
	pthread_mutex_unlock(&a->lock);
	if (scope_here(a) == handle)
		mem_thread_scope = 0;
}

uint32_t lp_mem_scope_current(void)
{
	return scope_here(acct_here());
}

uint32_t lp_mem_scope_swap(uint32_t handle)
{
	struct lp_mem_account *a = acct_here();
	uint32_t was = scope_here(a);

	mem_thread_scope = handle;
	mem_thread_scope_acct = a;
	return was;
}

/* The calling thread's scope's `field` (with `tag` for the per-tag
 * ones), else its account's `fallback`; under the lock. */
enum scope_field { SCOPE_PEAK, SCOPE_PEAK_TOTAL, SCOPE_OWN_TOTAL };

static size_t scope_read(enum scope_field f, enum lp_mem_tag tag)
{
	struct lp_mem_account *a = acct_here();
	struct mem_scope *sc;
	size_t v;

	pthread_mutex_lock(&a->lock);
	sc = scope_of(a, scope_here(a));
	switch (f) {
	case SCOPE_PEAK: v = sc ? sc->peak[tag] : a->peak[tag]; break;
	case SCOPE_PEAK_TOTAL: v = sc ? sc->peak_total : a->total_peak; break;
	default: v = sc ? sc->own_total : a->total; break;
	}
	pthread_mutex_unlock(&a->lock);
	return v;
}

size_t lp_mem_scope_peak(enum lp_mem_tag tag)
{
	return (unsigned)tag < LP_MEM_NTAGS ? scope_read(SCOPE_PEAK, tag) : 0;
}

size_t lp_mem_scope_peak_total(void)
{
	return scope_read(SCOPE_PEAK_TOTAL, 0);
}

size_t lp_mem_scope_own_total(void)
{
	return scope_read(SCOPE_OWN_TOTAL, 0);
}

void lp_mem_scope_reset_peaks(void)
{
	struct lp_mem_account *a = acct_here();
	struct mem_scope *sc;

	pthread_mutex_lock(&a->lock);
	sc = scope_of(a, scope_here(a));
	if (sc) {
		for (int t = 0; t < LP_MEM_NTAGS; t++)
			sc->peak[t] = view_tag(a, sc, t);
		sc->peak_total = view_total(a, sc);
	}
	pthread_mutex_unlock(&a->lock);
	if (!sc)
		lp_mem_reset_peaks();
}

int lp_mem_tag_is_gpu(enum lp_mem_tag tag)
{
	return tag == LP_MEM_GPU_WEIGHTS || tag == LP_MEM_GPU_KV || tag == LP_MEM_GPU_SCRATCH ||
	       tag == LP_MEM_GPU_EMBED;
}

const char *lp_mem_tag_name(enum lp_mem_tag tag)
{
	return (unsigned)tag < LP_MEM_NTAGS ? tag_names[tag] : "?";
}

/* ---- the calling thread's account ---------------------------------------- */

void lp_mem_set_budget(size_t bytes)
{
	struct lp_mem_account *a = acct_here();

	pthread_mutex_lock(&a->lock);
	a->budget = bytes;
	pthread_mutex_unlock(&a->lock);
}

/* The field at `offset` of the thread's account, read under its lock:
 * documents on other threads change them. */
static size_t read_locked(size_t offset)
{
	struct lp_mem_account *a = acct_here();
	size_t n;

	pthread_mutex_lock(&a->lock);
	n = *(const size_t *)((const char *)a + offset);
	pthread_mutex_unlock(&a->lock);
	return n;
}

#define READ(field) read_locked(offsetof(struct lp_mem_account, field))

size_t lp_mem_budget(void)
{
	return READ(budget);
}

void lp_mem_set_gpu_budget(size_t bytes)
{
	struct lp_mem_account *a = acct_here();

	pthread_mutex_lock(&a->lock);
	a->gpu_budget = bytes;
	pthread_mutex_unlock(&a->lock);
}

size_t lp_mem_gpu_budget(void)
{
	return READ(gpu_budget);
}

size_t lp_mem_current_gpu(void)
{
	return READ(gpu);
}

size_t lp_mem_peak_gpu(void)
{
	return READ(gpu_peak);
}

void lp_mem_fail_thread_after(unsigned long n)
{
	mem_thread_fail_in = n;
}

void lp_mem_set_phase(const char *phase)
{
	struct lp_mem_account *a = acct_here();

	mem_thread_phase = phase ? phase : "run";
	pthread_mutex_lock(&a->lock);
	a->phase = mem_thread_phase;
	pthread_mutex_unlock(&a->lock);
}

const char *lp_mem_phase(void)
{
	struct lp_mem_account *a;
	const char *p;

	if (mem_thread_phase)
		return mem_thread_phase;
	a = acct_here();
	pthread_mutex_lock(&a->lock);
	p = a->phase;
	pthread_mutex_unlock(&a->lock);
	return p;
}

/* The thread's phase for a message; a's lock is held (lp_mem_phase
 * would take it again). */
static const char *phase_locked(const struct lp_mem_account *a)
{
	return mem_thread_phase ? mem_thread_phase : a->phase;
}

/* LPIPE_FAIL_ALLOC: 1 when this charge, the process's n-th, is the one to
 * fail; the count is the process's so that a sweep reaches every site
 * whichever account it charges. */
static int fail_injected(unsigned long *count)
{
	long at = __atomic_load_n(&lp_global.fail_alloc_at, __ATOMIC_RELAXED);

	if (at == LP_GLOBAL_FAIL_ALLOC_UNREAD) {
		const char *e = getenv("LPIPE_FAIL_ALLOC");
		at = e && *e ? strtol(e, NULL, 10) : -1;
		__atomic_store_n(&lp_global.fail_alloc_at, at, __ATOMIC_RELAXED);
	}
	*count = __atomic_add_fetch(&lp_global.alloc_count, 1, __ATOMIC_RELAXED);
	return at > 0 && *count == (unsigned long)at;
}

/* Charge `bytes` to `tag` of `a`; caller holds a's lock. Returns 0 or -1
 * (over budget or injected failure), filling `d`. */
static int mem_charge(struct lp_mem_account *a, enum lp_mem_tag tag, size_t bytes,
		      struct lp_diag *d)
{
	char want[32], left[32], cap[32];
	int gpu = lp_mem_tag_is_gpu(tag), injected;
	size_t budget = gpu ? a->gpu_budget : a->budget;
	size_t *total = gpu ? &a->gpu : &a->total;
	size_t *total_peak = gpu ? &a->gpu_peak : &a->total_peak;
	unsigned long count;

	injected = fail_injected(&count);
	if (mem_thread_fail_in && !--mem_thread_fail_in)
		injected = 2;
	if (injected || (budget && (bytes > budget || *total > budget - bytes))) {
		size_t free_bytes = budget > *total ? budget - *total : 0;
		lp_mem_format_size(bytes, want, sizeof(want));
		lp_mem_format_size(free_bytes, left, sizeof(left));
		lp_mem_format_size(budget, cap, sizeof(cap));
		if (injected)
			lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				    "%s: allocation #%lu of %s (%s) failed (%s)",
				    phase_locked(a), count, want, lp_mem_tag_name(tag),
				    injected == 2 ? "injected" : "LPIPE_FAIL_ALLOC");
		else
			lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				    "%s: %s budget exceeded: asked %s for %s, %s free of %s",
				    phase_locked(a), gpu ? "device memory" : "memory", want,
				    lp_mem_tag_name(tag), left, cap);
		a->failures++;
		return -1;
	}
	a->current[tag] += bytes;
	if (a->current[tag] > a->peak[tag])
		a->peak[tag] = a->current[tag];
	*total += bytes;
	if (*total > *total_peak)
		*total_peak = *total;
	scope_charge(a, scope_of(a, scope_here(a)), tag, bytes);
	return 0;
}

static void mem_uncharge(struct lp_mem_account *a, enum lp_mem_tag tag, size_t bytes,
			 uint32_t scope)
{
	size_t *total = lp_mem_tag_is_gpu(tag) ? &a->gpu : &a->total;

	scope_uncharge(a, scope_of(a, scope), tag, bytes);
	a->current[tag] -= bytes < a->current[tag] ? bytes : a->current[tag];
	*total -= bytes < *total ? bytes : *total;
}

static size_t pages_length(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pg = page > 0 ? (size_t)page : 4096;

	return (sizeof(struct mem_header) + bytes + pg - 1) / pg * pg;
}


/* Charge `bytes` of `tag` to the budget and the thread's scope, then take
 * the block: from the heap, or (mapped) as fresh anonymous pages. */
static void *mem_take(enum lp_mem_tag tag, size_t bytes, int mapped, struct lp_diag *d)
{
	struct lp_mem_account *a = acct_here();
	struct mem_header *h;
	int rc;

	if ((unsigned)tag >= LP_MEM_NTAGS)
		tag = LP_MEM_OTHER;
	if (bytes > SIZE_MAX / 2) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: allocation size overflow", lp_mem_phase());
		return NULL;
	}
	pthread_mutex_lock(&a->lock);
	rc = mem_charge(a, tag, bytes, d);
	if (!rc)
		a->blocks++;
	pthread_mutex_unlock(&a->lock);
	if (rc)
		return NULL;
	if (mapped) {
		h = mmap(NULL, pages_length(bytes), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (h == MAP_FAILED)
			h = NULL;
	} else {
		h = aligned_alloc(64, (sizeof(*h) + bytes + 63) & ~(size_t)63);
	}
	if (!h) {
		pthread_mutex_lock(&a->lock);
		mem_uncharge(a, tag, bytes, scope_here(a));
		a->blocks--;
		a->failures++;
		pthread_mutex_unlock(&a->lock);
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: out of memory allocating %zu bytes for %s",
			    lp_mem_phase(), bytes, lp_mem_tag_name(tag));
		return NULL;
	}
	h->bytes = bytes;
	h->acct = a;
	h->tag = tag;
	h->magic = MEM_MAGIC;
	h->scope = scope_here(a);
	h->mapped = (uint32_t)mapped;
	return h + 1;
}

void *lp_mem_alloc(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	return mem_take(tag, bytes, 0, d);
}

void *lp_mem_calloc(enum lp_mem_tag tag, size_t n, size_t size, struct lp_diag *d)
{
	void *p;

	if (size && n > SIZE_MAX / size) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: allocation size overflow", lp_mem_phase());
		return NULL;
	}
	p = lp_mem_alloc(tag, n * size, d);
	if (p)
		memset(p, 0, n * size);
	return p;
}

/* Bytes of the mapping behind a block of `bytes` from lp_mem_alloc_pages. */
void *lp_mem_alloc_pages(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	return mem_take(tag, bytes, 1, d);
}

void *lp_mem_realloc(enum lp_mem_tag tag, void *p, size_t bytes, struct lp_diag *d)
{
	struct mem_header *h;
	void *q;

	if (!p)
		return lp_mem_alloc(tag, bytes, d);
	h = (struct mem_header *)p - 1;
	q = lp_mem_alloc(h->tag, bytes, d);
	if (!q)
		return NULL;
	memcpy(q, p, h->bytes < bytes ? h->bytes : bytes);
	lp_mem_free(p);
	return q;
}

void lp_mem_free(void *p)
{
	struct lp_mem_account *a;
	struct mem_header *h;

	if (!p)
		return;
	h = (struct mem_header *)p - 1;
	if (h->magic != MEM_MAGIC)
		abort(); /* not ours, or freed twice: a bug to catch early */
	h->magic = 0;
	a = h->acct;
	pthread_mutex_lock(&a->lock);
	mem_uncharge(a, h->tag, h->bytes, h->scope);
	pthread_mutex_unlock(&a->lock);
	if (h->mapped)
		munmap(h, pages_length(h->bytes));
	else
		free(h);
	account_put(a, 0, 1);
}

char *lp_mem_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = lp_mem_alloc(LP_MEM_OTHER, n, NULL);

	if (p)
		memcpy(p, s, n);
	return p;
}

enum lp_status lp_mem_reserve(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	struct lp_mem_account *a = acct_here();
	int rc;

	if ((unsigned)tag >= LP_MEM_NTAGS)
		tag = LP_MEM_OTHER;
	pthread_mutex_lock(&a->lock);
	rc = mem_charge(a, tag, bytes, d);
	pthread_mutex_unlock(&a->lock);
	return rc ? LP_E_NOMEM : LP_OK;
}

void lp_mem_unreserve(enum lp_mem_tag tag, size_t bytes)
{
	struct lp_mem_account *a = acct_here();

	if ((unsigned)tag >= LP_MEM_NTAGS)
		tag = LP_MEM_OTHER;
	pthread_mutex_lock(&a->lock);
	mem_uncharge(a, tag, bytes, scope_here(a));
	pthread_mutex_unlock(&a->lock);
}

size_t lp_mem_current(enum lp_mem_tag tag)
{
	return (unsigned)tag < LP_MEM_NTAGS
		       ? read_locked(offsetof(struct lp_mem_account, current) + tag * sizeof(size_t))
		       : 0;
}

size_t lp_mem_peak(enum lp_mem_tag tag)
{
	return (unsigned)tag < LP_MEM_NTAGS
		       ? read_locked(offsetof(struct lp_mem_account, peak) + tag * sizeof(size_t))
		       : 0;
}

size_t lp_mem_current_total(void)
{
	return READ(total);
}

size_t lp_mem_peak_total(void)
{
	return READ(total_peak);
}

unsigned long lp_mem_failures(void)
{
	struct lp_mem_account *a = acct_here();
	unsigned long n;

	pthread_mutex_lock(&a->lock);
	n = a->failures;
	pthread_mutex_unlock(&a->lock);
	return n;
}

void lp_mem_reset_peaks(void)
{
	struct lp_mem_account *a = acct_here();

	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < LP_MEM_NTAGS; i++)
		a->peak[i] = a->current[i];
	a->total_peak = a->total;
	a->gpu_peak = a->gpu;
	pthread_mutex_unlock(&a->lock);
}

size_t lp_mem_peak_rss(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (size_t)ru.ru_maxrss * 1024; /* Linux reports KiB */
}

size_t lp_mem_current_rss(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages_total, pages_rss;
	size_t rss = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &pages_total, &pages_rss) == 2)
		rss = (size_t)pages_rss * (size_t)sysconf(_SC_PAGESIZE);
	fclose(f);
	return rss;
}

enum lp_status lp_mem_parse_size(const char *s, size_t *bytes)
{
	char *end;
	double v, mult = 1;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '-' || !*s)
		return LP_E_CONFIG;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return LP_E_CONFIG;
	while (*end == ' ')
		end++;
	switch (toupper((unsigned char)*end)) {
	case 'K': mult = 1024.0; end++; break;
	case 'M': mult = 1024.0 * 1024; end++; break;
	case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
	case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
	}
	if (mult > 1 && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return LP_E_CONFIG;
	v *= mult;
	/* 0.5B or 0.9 is no byte count: truncating it to 0 would turn the
	 * cap off, so a fraction of a byte is refused, not rounded */
	if (v >= 18446744073709551615.0 || v != floor(v))
		return LP_E_CONFIG;
	*bytes = (size_t)v;
	return LP_OK;
}

char *lp_mem_format_size(size_t bytes, char *buf, size_t cap)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%zu B", bytes);
	else
		snprintf(buf, cap, "%.2f %s", v, units[u]);
	return buf;
}
