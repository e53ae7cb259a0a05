#include "core/mem.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* Every block starts with this header; 64 bytes keep the payload aligned
 * for AVX-512 loads. */
struct mem_header {
	size_t bytes;
	enum lp_mem_tag tag;
	uint32_t magic;
	uint32_t scope;  /* the scope charged (lp_mem_scope_begin), 0: none */
	uint32_t mapped;       /* 1: from lp_mem_alloc_pages (munmap it) */
	char pad[64 - sizeof(size_t) - sizeof(enum lp_mem_tag) - 3 * sizeof(uint32_t)];
};

#define MEM_MAGIC 0x6c706d65u /* "lpme" */

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t mem_current[LP_MEM_NTAGS];
static size_t mem_peak[LP_MEM_NTAGS];
static size_t mem_total, mem_total_peak;
static size_t mem_budget_bytes;
static size_t mem_gpu, mem_gpu_peak, mem_gpu_budget;
static const char *mem_phase_name = "run";
/* The phase of the calling thread: documents run side by side in a batch,
 * each naming its own phase; a thread that never set one (a pool worker)
 * reads the last one set anywhere, as a single run always did. */
static _Thread_local const char *mem_thread_phase;
static _Thread_local unsigned long mem_thread_fail_in; /* 0: none */
static unsigned long mem_alloc_count;
static unsigned long mem_fail_count;
static long mem_fail_at = -1; /* -2: not read yet */
static int mem_fail_read;

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

static struct mem_scope scopes[SCOPE_SLOTS];
static size_t live_own[LP_MEM_NTAGS]; /* own[] summed over the live scopes */
static size_t live_own_total;
static _Thread_local uint32_t mem_thread_scope; /* handle, 0: none */

/* The live scope of `handle`, or NULL; caller holds the lock. */
static struct mem_scope *scope_of(uint32_t handle)
{
	struct mem_scope *sc;

	if (!handle)
		return NULL;
	sc = &scopes[(handle - 1) & (SCOPE_SLOTS - 1)];
	return sc->live && sc->gen == (handle - 1) >> SCOPE_SLOT_BITS ? sc : NULL;
}

/* A scope's view of a tag and of the host total: its own bytes plus the
 * shared ones (charged under no live scope). Caller holds the lock. */
static size_t view_tag(const struct mem_scope *sc, int t)
{
	/* a reserve released under another scope than it was made in can
	 * leave the sums off by its size: never below the scope's own */
	size_t shared = mem_current[t] > live_own[t] ? mem_current[t] - live_own[t] : 0;

	return sc->own[t] + shared;
}

static size_t view_total(const struct mem_scope *sc)
{
	size_t shared = mem_total > live_own_total ? mem_total - live_own_total : 0;

	return sc->own_total + shared;
}

static void scope_bump_peaks(struct mem_scope *sc, int t)
{
	size_t v = view_tag(sc, t);

	if (v > sc->peak[t])
		sc->peak[t] = v;
	if (!lp_mem_tag_is_gpu(t) && (v = view_total(sc)) > sc->peak_total)
		sc->peak_total = v;
}

/* After mem_current[tag] grew: the charged scope's peaks, or every live
 * scope's when the bytes are shared. Caller holds the lock. */
static void scope_charge(struct mem_scope *sc, enum lp_mem_tag tag, size_t bytes)
{
	if (sc) {
		sc->own[tag] += bytes;
		live_own[tag] += bytes;
		if (!lp_mem_tag_is_gpu(tag)) {
			sc->own_total += bytes;
			live_own_total += bytes;
		}
		scope_bump_peaks(sc, tag);
		return;
	}
	for (unsigned i = 0; i < SCOPE_SLOTS; i++)
		if (scopes[i].live)
			scope_bump_peaks(&scopes[i], tag);
}

/* Before mem_current[tag] shrinks by `bytes`: take them from the scope's
 * own first (the rest was shared). Caller holds the lock. */
static void scope_uncharge(struct mem_scope *sc, enum lp_mem_tag tag, size_t bytes)
{
	size_t n;

	if (!sc)
		return;
	n = bytes < sc->own[tag] ? bytes : sc->own[tag];
	sc->own[tag] -= n;
	live_own[tag] -= n;
	if (!lp_mem_tag_is_gpu(tag)) {
		sc->own_total -= n;
		live_own_total -= n;
	}
}

uint32_t lp_mem_scope_begin(void)
{
	uint32_t h = 0;

	pthread_mutex_lock(&mem_lock);
	for (unsigned i = 0; i < SCOPE_SLOTS && !h; i++) {
		struct mem_scope *sc = &scopes[i];
		uint32_t gen;
		if (sc->live)
			continue;
		gen = sc->gen + 1;
		memset(sc, 0, sizeof(*sc));
		sc->gen = gen & (UINT32_MAX >> SCOPE_SLOT_BITS);
		sc->live = 1;
		h = ((sc->gen << SCOPE_SLOT_BITS) | i) + 1;
		for (int t = 0; t < LP_MEM_NTAGS; t++)
			sc->peak[t] = view_tag(sc, t);
		sc->peak_total = view_total(sc);
	}
	pthread_mutex_unlock(&mem_lock);
	mem_thread_scope = h;
	return h;
}

void lp_mem_scope_end(uint32_t handle)
{
	struct mem_scope *sc;

	pthread_mutex_lock(&mem_lock);
	if ((sc = scope_of(handle))) {
		/* what it still holds is shared from now on */
		for (int t = 0; t < LP_MEM_NTAGS; t++)
			live_own[t] -= sc->own[t];
		live_own_total -= sc->own_total;
		sc->live = 0;
	}
	pthread_mutex_unlock(&mem_lock);
	if (mem_thread_scope == handle)
		mem_thread_scope = 0;
}

uint32_t lp_mem_scope_current(void)
{
	return mem_thread_scope;
}

uint32_t lp_mem_scope_swap(uint32_t handle)
{
	uint32_t was = mem_thread_scope;

	mem_thread_scope = handle;
	return was;
}

/* The calling thread's scope's `field` (with `tag` for the per-tag
 * ones), else the process's `fallback`; under the lock. */
enum scope_field { SCOPE_PEAK, SCOPE_PEAK_TOTAL, SCOPE_OWN_TOTAL };

static size_t scope_read(enum scope_field f, enum lp_mem_tag tag)
{
	struct mem_scope *sc;
	size_t v;

	pthread_mutex_lock(&mem_lock);
	sc = scope_of(mem_thread_scope);
	switch (f) {
	case SCOPE_PEAK: v = sc ? sc->peak[tag] : mem_peak[tag]; break;
	case SCOPE_PEAK_TOTAL: v = sc ? sc->peak_total : mem_total_peak; break;
	default: v = sc ? sc->own_total : mem_total; break;
	}
	pthread_mutex_unlock(&mem_lock);
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
	struct mem_scope *sc;

	pthread_mutex_lock(&mem_lock);
	sc = scope_of(mem_thread_scope);
	if (sc) {
		for (int t = 0; t < LP_MEM_NTAGS; t++)
			sc->peak[t] = view_tag(sc, t);
		sc->peak_total = view_total(sc);
	}
	pthread_mutex_unlock(&mem_lock);
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

void lp_mem_set_budget(size_t bytes)
{
	pthread_mutex_lock(&mem_lock);
	mem_budget_bytes = bytes;
	pthread_mutex_unlock(&mem_lock);
}

/* A counter read under the lock: documents on other threads change them. */
static size_t read_locked(const size_t *v)
{
	size_t n;

	pthread_mutex_lock(&mem_lock);
	n = *v;
	pthread_mutex_unlock(&mem_lock);
	return n;
}

size_t lp_mem_budget(void)
{
	return read_locked(&mem_budget_bytes);
}

void lp_mem_set_gpu_budget(size_t bytes)
{
	pthread_mutex_lock(&mem_lock);
	mem_gpu_budget = bytes;
	pthread_mutex_unlock(&mem_lock);
}

size_t lp_mem_gpu_budget(void)
{
	return read_locked(&mem_gpu_budget);
}

size_t lp_mem_current_gpu(void)
{
	return read_locked(&mem_gpu);
}

size_t lp_mem_peak_gpu(void)
{
	return read_locked(&mem_gpu_peak);
}

void lp_mem_fail_thread_after(unsigned long n)
{
	mem_thread_fail_in = n;
}

void lp_mem_set_phase(const char *phase)
{
	mem_thread_phase = phase ? phase : "run";
	__atomic_store_n(&mem_phase_name, mem_thread_phase, __ATOMIC_RELAXED);
}

const char *lp_mem_phase(void)
{
	return mem_thread_phase ? mem_thread_phase : __atomic_load_n(&mem_phase_name, __ATOMIC_RELAXED);
}

/* Charge `bytes` to `tag`; caller holds the lock. Returns 0 or -1 (over
 * budget or injected failure), filling `d`. */
static int mem_charge(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	char want[32], left[32], cap[32];
	int gpu = lp_mem_tag_is_gpu(tag), injected;
	size_t budget = gpu ? mem_gpu_budget : mem_budget_bytes;
	size_t *total = gpu ? &mem_gpu : &mem_total;
	size_t *total_peak = gpu ? &mem_gpu_peak : &mem_total_peak;

	if (!mem_fail_read) {
		const char *e = getenv("LPIPE_FAIL_ALLOC");
		mem_fail_at = e && *e ? strtol(e, NULL, 10) : -1;
		mem_fail_read = 1;
	}
	mem_alloc_count++;
	injected = mem_fail_at > 0 && mem_alloc_count == (unsigned long)mem_fail_at;
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
				    lp_mem_phase(), mem_alloc_count, want, lp_mem_tag_name(tag),
				    injected == 2 ? "injected" : "LPIPE_FAIL_ALLOC");
		else
			lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				    "%s: %s budget exceeded: asked %s for %s, %s free of %s",
				    lp_mem_phase(), gpu ? "device memory" : "memory", want,
				    lp_mem_tag_name(tag), left, cap);
		mem_fail_count++;
		return -1;
	}
	mem_current[tag] += bytes;
	if (mem_current[tag] > mem_peak[tag])
		mem_peak[tag] = mem_current[tag];
	*total += bytes;
	if (*total > *total_peak)
		*total_peak = *total;
	scope_charge(scope_of(mem_thread_scope), tag, bytes);
	return 0;
}

static void mem_uncharge(enum lp_mem_tag tag, size_t bytes, uint32_t scope)
{
	size_t *total = lp_mem_tag_is_gpu(tag) ? &mem_gpu : &mem_total;

	scope_uncharge(scope_of(scope), tag, bytes);
	mem_current[tag] -= bytes < mem_current[tag] ? bytes : mem_current[tag];
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
	struct mem_header *h;
	int rc;

	if ((unsigned)tag >= LP_MEM_NTAGS)
		tag = LP_MEM_OTHER;
	if (bytes > SIZE_MAX / 2) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: allocation size overflow", lp_mem_phase());
		return NULL;
	}
	pthread_mutex_lock(&mem_lock);
	rc = mem_charge(tag, bytes, d);
	pthread_mutex_unlock(&mem_lock);
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
		pthread_mutex_lock(&mem_lock);
		mem_uncharge(tag, bytes, mem_thread_scope);
		mem_fail_count++;
		pthread_mutex_unlock(&mem_lock);
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: out of memory allocating %zu bytes for %s",
			    lp_mem_phase(), bytes, lp_mem_tag_name(tag));
		return NULL;
	}
	h->bytes = bytes;
	h->tag = tag;
	h->magic = MEM_MAGIC;
	h->scope = mem_thread_scope;
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
	struct mem_header *h;

	if (!p)
		return;
	h = (struct mem_header *)p - 1;
	if (h->magic != MEM_MAGIC)
		abort(); /* not ours, or freed twice: a bug to catch early */
	h->magic = 0;
	pthread_mutex_lock(&mem_lock);
	mem_uncharge(h->tag, h->bytes, h->scope);
	pthread_mutex_unlock(&mem_lock);
	if (h->mapped)
		munmap(h, pages_length(h->bytes));
	else
		free(h);
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
	int rc;

	if ((unsigned)tag >= LP_MEM_NTAGS)
		tag = LP_MEM_OTHER;
	pthread_mutex_lock(&mem_lock);
	rc = mem_charge(tag, bytes, d);
	pthread_mutex_unlock(&mem_lock);
	return rc ? LP_E_NOMEM : LP_OK;
}

void lp_mem_unreserve(enum lp_mem_tag tag, size_t bytes)
{
	if ((unsigned)tag >= LP_MEM_NTAGS)
		tag = LP_MEM_OTHER;
	pthread_mutex_lock(&mem_lock);
	mem_uncharge(tag, bytes, mem_thread_scope);
	pthread_mutex_unlock(&mem_lock);
}

size_t lp_mem_current(enum lp_mem_tag tag)
{
	return (unsigned)tag < LP_MEM_NTAGS ? read_locked(&mem_current[tag]) : 0;
}

size_t lp_mem_peak(enum lp_mem_tag tag)
{
	return (unsigned)tag < LP_MEM_NTAGS ? read_locked(&mem_peak[tag]) : 0;
}

size_t lp_mem_current_total(void)
{
	return read_locked(&mem_total);
}

size_t lp_mem_peak_total(void)
{
	return read_locked(&mem_total_peak);
}

unsigned long lp_mem_failures(void)
{
	unsigned long n;

	pthread_mutex_lock(&mem_lock);
	n = mem_fail_count;
	pthread_mutex_unlock(&mem_lock);
	return n;
}

void lp_mem_reset_peaks(void)
{
	pthread_mutex_lock(&mem_lock);
	for (int i = 0; i < LP_MEM_NTAGS; i++)
		mem_peak[i] = mem_current[i];
	mem_total_peak = mem_total;
	mem_gpu_peak = mem_gpu;
	pthread_mutex_unlock(&mem_lock);
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
