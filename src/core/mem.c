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
	uint32_t mapped;       /* 1: from lp_mem_alloc_pages (munmap it) */
	char pad[64 - sizeof(size_t) - sizeof(enum lp_mem_tag) - 2 * sizeof(uint32_t)];
};

#define MEM_MAGIC 0x6c706d65u /* "lpme" */

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t mem_current[LP_MEM_NTAGS];
static size_t mem_peak[LP_MEM_NTAGS];
static size_t mem_total, mem_total_peak;
static size_t mem_budget_bytes;
static size_t mem_gpu, mem_gpu_peak, mem_gpu_budget;
static const char *mem_phase_name = "run";
static unsigned long mem_alloc_count;
static unsigned long mem_fail_count;
static long mem_fail_at = -1; /* -2: not read yet */
static int mem_fail_read;

static const char *const tag_names[LP_MEM_NTAGS] = {
	"weights", "kv", "scratch", "logits", "index", "doc", "other",
	"gpu-weights", "gpu-kv", "gpu-scratch",
};

int lp_mem_tag_is_gpu(enum lp_mem_tag tag)
{
	return tag == LP_MEM_GPU_WEIGHTS || tag == LP_MEM_GPU_KV || tag == LP_MEM_GPU_SCRATCH;
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

size_t lp_mem_budget(void)
{
	return mem_budget_bytes;
}

void lp_mem_set_gpu_budget(size_t bytes)
{
	pthread_mutex_lock(&mem_lock);
	mem_gpu_budget = bytes;
	pthread_mutex_unlock(&mem_lock);
}

size_t lp_mem_gpu_budget(void)
{
	return mem_gpu_budget;
}

size_t lp_mem_current_gpu(void)
{
	return mem_gpu;
}

size_t lp_mem_peak_gpu(void)
{
	return mem_gpu_peak;
}

void lp_mem_set_phase(const char *phase)
{
	mem_phase_name = phase ? phase : "run";
}

const char *lp_mem_phase(void)
{
	return mem_phase_name;
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
	if (injected || (budget && (bytes > budget || *total > budget - bytes))) {
		size_t free_bytes = budget > *total ? budget - *total : 0;
		lp_mem_format_size(bytes, want, sizeof(want));
		lp_mem_format_size(free_bytes, left, sizeof(left));
		lp_mem_format_size(budget, cap, sizeof(cap));
		if (injected)
			lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				    "%s: allocation #%lu of %s (%s) failed (LPIPE_FAIL_ALLOC)",
				    mem_phase_name, mem_alloc_count, want, lp_mem_tag_name(tag));
		else
			lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0,
				    "%s: %s budget exceeded: asked %s for %s, %s free of %s",
				    mem_phase_name, gpu ? "device memory" : "memory", want,
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
	return 0;
}

static void mem_uncharge(enum lp_mem_tag tag, size_t bytes)
{
	size_t *total = lp_mem_tag_is_gpu(tag) ? &mem_gpu : &mem_total;

	mem_current[tag] -= bytes < mem_current[tag] ? bytes : mem_current[tag];
	*total -= bytes < *total ? bytes : *total;
}

void *lp_mem_alloc(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	struct mem_header *h;
	int rc;

	if ((unsigned)tag >= LP_MEM_NTAGS)
		tag = LP_MEM_OTHER;
	if (bytes > SIZE_MAX - sizeof(*h) - 64) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: allocation size overflow", mem_phase_name);
		return NULL;
	}
	pthread_mutex_lock(&mem_lock);
	rc = mem_charge(tag, bytes, d);
	pthread_mutex_unlock(&mem_lock);
	if (rc)
		return NULL;
	h = aligned_alloc(64, (sizeof(*h) + bytes + 63) & ~(size_t)63);
	if (!h) {
		pthread_mutex_lock(&mem_lock);
		mem_uncharge(tag, bytes);
		mem_fail_count++;
		pthread_mutex_unlock(&mem_lock);
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: out of memory allocating %zu bytes for %s",
			    mem_phase_name, bytes, lp_mem_tag_name(tag));
		return NULL;
	}
	h->bytes = bytes;
	h->tag = tag;
	h->magic = MEM_MAGIC;
	h->mapped = 0;
	return h + 1;
}

void *lp_mem_calloc(enum lp_mem_tag tag, size_t n, size_t size, struct lp_diag *d)
{
	void *p;

	if (size && n > SIZE_MAX / size) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: allocation size overflow", mem_phase_name);
		return NULL;
	}
	p = lp_mem_alloc(tag, n * size, d);
	if (p)
		memset(p, 0, n * size);
	return p;
}

/* Bytes of the mapping behind a block of `bytes` from lp_mem_alloc_pages. */
static size_t pages_length(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pg = page > 0 ? (size_t)page : 4096;

	return (sizeof(struct mem_header) + bytes + pg - 1) / pg * pg;
}

void *lp_mem_alloc_pages(enum lp_mem_tag tag, size_t bytes, struct lp_diag *d)
{
	struct mem_header *h;
	int rc;

	if ((unsigned)tag >= LP_MEM_NTAGS)
		tag = LP_MEM_OTHER;
	if (bytes > SIZE_MAX / 2) {
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: allocation size overflow", mem_phase_name);
		return NULL;
	}
	pthread_mutex_lock(&mem_lock);
	rc = mem_charge(tag, bytes, d);
	pthread_mutex_unlock(&mem_lock);
	if (rc)
		return NULL;
	h = mmap(NULL, pages_length(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (h == MAP_FAILED) {
		pthread_mutex_lock(&mem_lock);
		mem_uncharge(tag, bytes);
		mem_fail_count++;
		pthread_mutex_unlock(&mem_lock);
		lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "%s: out of memory allocating %zu bytes for %s",
			    mem_phase_name, bytes, lp_mem_tag_name(tag));
		return NULL;
	}
	h->bytes = bytes;
	h->tag = tag;
	h->magic = MEM_MAGIC;
	h->mapped = 1;
	return h + 1;
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
	mem_uncharge(h->tag, h->bytes);
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
	mem_uncharge(tag, bytes);
	pthread_mutex_unlock(&mem_lock);
}

size_t lp_mem_current(enum lp_mem_tag tag)
{
	return (unsigned)tag < LP_MEM_NTAGS ? mem_current[tag] : 0;
}

size_t lp_mem_peak(enum lp_mem_tag tag)
{
	return (unsigned)tag < LP_MEM_NTAGS ? mem_peak[tag] : 0;
}

size_t lp_mem_current_total(void)
{
	return mem_total;
}

size_t lp_mem_peak_total(void)
{
	return mem_total_peak;
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

void lp_mem_summary(FILE *out)
{
	char cur[32], peak[32];

	fprintf(out, "%-10s %12s %12s\n", "tag", "current", "peak");
	for (int i = 0; i < LP_MEM_NTAGS; i++)
		if (!lp_mem_tag_is_gpu(i) || mem_gpu_peak)
			fprintf(out, "%-10s %12s %12s\n", tag_names[i],
			lp_mem_format_size(mem_current[i], cur, sizeof(cur)),
			lp_mem_format_size(mem_peak[i], peak, sizeof(peak)));
	fprintf(out, "%-10s %12s %12s\n", "total",
		lp_mem_format_size(mem_total, cur, sizeof(cur)),
		lp_mem_format_size(mem_total_peak, peak, sizeof(peak)));
	if (mem_budget_bytes)
		fprintf(out, "%-10s %12s\n", "budget",
			lp_mem_format_size(mem_budget_bytes, cur, sizeof(cur)));
	else
		fprintf(out, "%-10s %12s\n", "budget", "none");
	if (mem_gpu_budget)
		fprintf(out, "%-10s %12s\n", "gpu-budget",
			lp_mem_format_size(mem_gpu_budget, cur, sizeof(cur)));
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
