/*
 * fuzz_hybrid.c - the hashed embedder and the embedding cache reader on
 * arbitrary bytes.
 *
 * The input is embedded: every component must be finite and the vector of
 * unit length or zero. Then it is read as a cache file, twice: raw, and
 * behind a valid header (so the record loop sees the bytes). Checked: no
 * crash; for the headed file, intact + corrupt records account for every
 * whole record and a partial tail is reported as truncated; every record
 * read back is found again by its key; all tracked memory is returned.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "retrieve/embcache.h"
#include "retrieve/hashembed.h"

enum { DIM = 4, MODEL = 0x77, DOC = 0x99 };

static char dir[64];

static void check_embed(const char *s, size_t len)
{
	struct lp_hashembed *h = lp_hashembed_new(64, NULL);
	float v[64];
	double norm = 0;

	if (!h || lp_hashembed_embed(h, s, len, v, NULL, NULL) != LP_OK)
		abort();
	for (int i = 0; i < 64; i++) {
		if (!isfinite(v[i]))
			abort();
		norm += (double)v[i] * v[i];
	}
	if (norm != 0 && fabs(norm - 1) > 1e-4)
		abort();
	lp_hashembed_free(h);
}

static const char *cache_path(void)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%016llx-%016llx.emb", dir, (unsigned long long)MODEL,
		 (unsigned long long)DOC);
	return path;
}

/* The 32 bytes of a valid header, taken from a cache saved empty. */
static void valid_header(unsigned char *h)
{
	struct lp_embcache *c;
	FILE *fp;
	float v[DIM] = { 1, 2, 3, 4 };

	if (lp_embcache_open(dir, MODEL, DOC, DIM, &c, NULL) || lp_embcache_put(c, 1, v, NULL) ||
	    lp_embcache_save(c, NULL))
		abort();
	lp_embcache_free(c);
	fp = fopen(cache_path(), "rb");
	if (!fp || fread(h, 1, 32, fp) != 32)
		abort();
	fclose(fp);
}

static void check_cache(const uint8_t *data, size_t size, int headed)
{
	unsigned char h[32];
	struct lp_embcache *c;
	struct lp_embcache_stats st;
	FILE *fp;

	if (headed)
		valid_header(h);
	fp = fopen(cache_path(), "wb");
	if (!fp || (headed && fwrite(h, 1, 32, fp) != 32) ||
	    (size && fwrite(data, 1, size, fp) != size))
		abort();
	fclose(fp);
	if (lp_embcache_open(dir, MODEL, DOC, DIM, &c, NULL) != LP_OK)
		abort();
	st = lp_embcache_stats(c);
	if (headed) {
		size_t rb = 16 + DIM * 4;
		if (st.discarded || st.loaded + st.corrupt != size / rb ||
		    st.truncated != (size % rb != 0))
			abort();
	}
	lp_embcache_free(c);
	unlink(cache_path());
}

static void remove_dir(void)
{
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/lpipe-fuzz-hybrid-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	check_embed((const char *)data, size);
	check_cache(data, size, 0);
	check_cache(data, size, 1);
	for (int t = 0; t < LP_MEM_NTAGS; t++)
		if (lp_mem_current((enum lp_mem_tag)t) != 0)
			abort();
	return 0;
}
