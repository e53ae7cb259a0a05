/* check_core.c - tracked memory, arena, buffers, UTF-8, atomic files. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/fileio.h"
#include "core/hash.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/threadpool.h"
#include "core/status.h"
#include "core/table.h"
#include "core/utf8.h"

START_TEST(test_mem_budget_and_peaks)
{
	struct lp_diag d;
	void *a, *b;

	lp_diag_init(&d);
	lp_mem_set_budget(1000);
	lp_mem_set_phase("prefill");
	a = lp_mem_alloc(LP_MEM_KV, 600, &d);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_KV), 600);
	b = lp_mem_alloc(LP_MEM_SCRATCH, 600, &d);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(d.status, LP_E_NOMEM);
	ck_assert_ptr_nonnull(strstr(d.msg, "prefill"));
	ck_assert_ptr_nonnull(strstr(d.msg, "scratch"));
	lp_mem_free(a);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_KV), 0);
	ck_assert_uint_eq(lp_mem_peak(LP_MEM_KV), 600);
	b = lp_mem_alloc(LP_MEM_SCRATCH, 900, &d);
	ck_assert_ptr_nonnull(b);
	lp_mem_free(b);
	ck_assert_uint_ge(lp_mem_peak_total(), 900);
	lp_mem_reset_peaks();
	ck_assert_uint_eq(lp_mem_peak(LP_MEM_SCRATCH), lp_mem_current(LP_MEM_SCRATCH));
	lp_mem_set_budget(0);
}
END_TEST

START_TEST(test_mem_reserve_counts_against_budget)
{
	struct lp_diag d;

	lp_diag_init(&d);
	lp_mem_set_budget(100);
	ck_assert_int_eq(lp_mem_reserve(LP_MEM_WEIGHTS, 80, &d), LP_OK);
	ck_assert_ptr_null(lp_mem_alloc(LP_MEM_OTHER, 30, &d));
	lp_mem_unreserve(LP_MEM_WEIGHTS, 80);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_WEIGHTS), 0);
	lp_mem_set_budget(0);
}
END_TEST

START_TEST(test_mem_fault_injection)
{
	struct lp_diag d;
	void *p[3];

	/* Forked test: the environment change stays in this child. */
	setenv("LPIPE_FAIL_ALLOC", "2", 1);
	lp_diag_init(&d);
	p[0] = lp_mem_alloc(LP_MEM_OTHER, 8, &d);
	p[1] = lp_mem_alloc(LP_MEM_OTHER, 8, &d);
	ck_assert_str_eq(lp_status_str(d.status), "out of memory");
	ck_assert_ptr_nonnull(strstr(d.msg, "LPIPE_FAIL_ALLOC"));
	p[2] = lp_mem_alloc(LP_MEM_OTHER, 8, &d);
	ck_assert_ptr_nonnull(p[0]);
	ck_assert_ptr_null(p[1]);
	ck_assert_ptr_nonnull(p[2]);
	lp_mem_free(p[0]);
	lp_mem_free(p[2]);
}
END_TEST

/* Resident pages of [p, p + bytes) (mincore). */
static size_t resident_pages(void *p, size_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 0;
	uintptr_t lo = (uintptr_t)p / pg * pg, hi = ((uintptr_t)p + bytes + pg - 1) / pg * pg;
	unsigned char *v = malloc((hi - lo) / pg);

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(mincore((void *)lo, hi - lo, v), 0);
	for (size_t i = 0; i < (hi - lo) / pg; i++)
		n += v[i] & 1;
	free(v);
	return n;
}

/* A pages block is charged whole, reads as zeros, and holds only what is
 * written: 64 MiB with two bytes written is far from resident (a huge
 * page may back a write: 2 MiB of it at most). */
START_TEST(test_mem_alloc_pages_resident_as_written)
{
	size_t bytes = (size_t)64 << 20, pg = (size_t)sysconf(_SC_PAGESIZE);
	struct lp_diag d;
	unsigned char *p;

	lp_diag_init(&d);
	lp_mem_set_budget((size_t)100 << 20);
	p = lp_mem_alloc_pages(LP_MEM_KV, bytes, &d);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)p % 64, 0);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_KV), bytes);
	ck_assert_ptr_null(lp_mem_alloc_pages(LP_MEM_SCRATCH, (size_t)40 << 20, &d));
	ck_assert_int_eq(d.status, LP_E_NOMEM);
	p[0] = 1;
	p[bytes - 1] = 2;
	ck_assert_uint_eq(p[bytes / 2], 0);
	ck_assert_uint_le(resident_pages(p, bytes) * pg, (size_t)5 << 20);
	memset(p, 3, bytes / 2);
	ck_assert_uint_ge(resident_pages(p, bytes) * pg, bytes / 2);
	lp_mem_free(p);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_KV), 0);
	lp_mem_set_budget(0);
}
END_TEST

/* A pool loop's body: allocate on each worker and keep the block. */
static void alloc_each(void *arg, size_t begin, size_t end, int tid)
{
	void **blocks = arg;

	(void)tid;
	for (size_t i = begin; i < end; i++)
		blocks[i] = lp_mem_alloc(LP_MEM_SCRATCH, 100, NULL);
}

/* Two accounts: each its own budget, counters and scopes; a block goes
 * back to its account from whichever account frees it, and keeps the
 * account alive past its owner; pool workers charge the caller's. */
START_TEST(test_mem_accounts_apart)
{
	struct lp_mem_account *a = lp_mem_account_new(), *b = lp_mem_account_new();
	void *pa, *pb, *blocks[64];
	struct lp_pool *pool;
	struct lp_diag d;
	uint32_t h;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	lp_diag_init(&d);
	ck_assert_ptr_null(lp_mem_account_use(a));
	lp_mem_set_budget(1000);
	h = lp_mem_scope_begin();
	ck_assert_uint_ne(h, 0);
	pa = lp_mem_alloc(LP_MEM_KV, 900, &d);
	ck_assert_ptr_nonnull(pa);
	ck_assert_ptr_null(lp_mem_alloc(LP_MEM_KV, 200, &d)); /* a's budget */
	ck_assert_ptr_eq(lp_mem_account_use(b), a);
	/* b: no budget, nothing of a's, and a's scope is not on */
	ck_assert_uint_eq(lp_mem_budget(), 0);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	ck_assert_uint_eq(lp_mem_scope_current(), 0);
	pb = lp_mem_alloc(LP_MEM_KV, 5000, &d);
	ck_assert_ptr_nonnull(pb);
	ck_assert_uint_eq(lp_mem_failures(), 0);
	/* a's block freed while on b goes back to a */
	lp_mem_free(pa);
	ck_assert_uint_eq(lp_mem_current_total(), 5000);
	lp_mem_account_use(a);
	ck_assert_uint_eq(lp_mem_scope_current(), h);
	ck_assert_uint_eq(lp_mem_current_total(), 0);
	ck_assert_uint_eq(lp_mem_scope_peak_total(), 900);
	ck_assert_uint_eq(lp_mem_failures(), 1);
	lp_mem_scope_end(h);
	/* pool workers charge the account of the thread that runs the loop */
	ck_assert_int_eq(lp_pool_new(4, &pool, &d), LP_OK);
	lp_mem_set_budget(0);
	lp_pool_for(pool, 64, 1, alloc_each, blocks);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_SCRATCH), 64 * 100);
	for (int i = 0; i < 64; i++)
		lp_mem_free(blocks[i]);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_SCRATCH), 0);
	lp_pool_free(pool);
	/* b's owner goes first; its block still frees into it */
	lp_mem_account_use(NULL);
	lp_mem_account_free(b);
	lp_mem_free(pb);
	lp_mem_account_free(a);
	ck_assert_ptr_null(lp_mem_account_current());
}
END_TEST

START_TEST(test_mem_parse_size)
{
	size_t v;

	ck_assert_int_eq(lp_mem_parse_size("512", &v), LP_OK);
	ck_assert_uint_eq(v, 512);
	ck_assert_int_eq(lp_mem_parse_size("1GiB", &v), LP_OK);
	ck_assert_uint_eq(v, 1024ull * 1024 * 1024);
	ck_assert_int_eq(lp_mem_parse_size("1.5 MiB", &v), LP_OK);
	ck_assert_uint_eq(v, 1536 * 1024);
	ck_assert_int_eq(lp_mem_parse_size("64k", &v), LP_OK);
	ck_assert_uint_eq(v, 65536);
	ck_assert_int_eq(lp_mem_parse_size("-1G", &v), LP_E_CONFIG);
	ck_assert_int_eq(lp_mem_parse_size("1 GX", &v), LP_E_CONFIG);
	ck_assert_int_eq(lp_mem_parse_size("", &v), LP_E_CONFIG);
}
END_TEST

START_TEST(test_arena_and_buf)
{
	struct lp_arena a;
	struct lp_buf b;
	char *big, *s;
	size_t n;

	lp_arena_init(&a);
	s = lp_arena_printf(&a, "%s-%d", "x", 42);
	ck_assert_str_eq(s, "x-42");
	big = lp_arena_alloc(&a, 200000); /* larger than a block */
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(big[199999], 0);
	ck_assert_str_eq(lp_arena_strndup(&a, "abcdef", 3), "abc");
	lp_arena_release(&a);

	lp_buf_init(&b);
	ck_assert_str_eq(b.data, "");
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(lp_buf_addf(&b, "%d,", i % 10), LP_OK);
	ck_assert_uint_eq(b.len, 2000);
	ck_assert_int_eq(b.data[b.len], '\0');
	s = lp_buf_detach(&b, &n);
	ck_assert_uint_eq(n, 2000);
	ck_assert_int_eq(memcmp(s, "0,1,2,", 6), 0);
	lp_mem_free(s);
	ck_assert_uint_eq(b.len, 0);
	lp_buf_release(&b);
}
END_TEST

START_TEST(test_utf8_decode)
{
	const unsigned char ok[] = "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80";
	const unsigned char overlong[] = "\xc0\xaf";
	const unsigned char surrogate[] = "\xed\xa0\x80";
	const unsigned char truncated[] = "ab\xe4\xb8";
	uint32_t cp;
	unsigned char enc[4];

	ck_assert_int_eq(lp_utf8_decode(ok + 1, 2, &cp), 2);
	ck_assert_uint_eq(cp, 0xE9);
	ck_assert_int_eq(lp_utf8_decode(ok + 3, 3, &cp), 3);
	ck_assert_uint_eq(cp, 0x4E2D);
	ck_assert(lp_utf8_is_cjk(cp));
	ck_assert_int_eq(lp_utf8_decode(ok + 6, 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x1F600);
	ck_assert_uint_eq(lp_utf8_find_invalid(ok, sizeof(ok) - 1), sizeof(ok) - 1);
	ck_assert_uint_eq(lp_utf8_count(ok, sizeof(ok) - 1), 4);
	ck_assert_int_eq(lp_utf8_decode(overlong, 2, &cp), 0);
	ck_assert_int_eq(lp_utf8_decode(surrogate, 3, &cp), 0);
	ck_assert_uint_eq(lp_utf8_find_invalid(truncated, 4), 2);
	ck_assert_int_eq(lp_utf8_encode(0x4E2D, enc), 3);
	ck_assert_int_eq(memcmp(enc, ok + 3, 3), 0);
	ck_assert_int_eq(lp_utf8_encode(0xD800, enc), 0);
	ck_assert_uint_eq(lp_utf8_tolower('A'), 'a');
	ck_assert_uint_eq(lp_utf8_tolower(0xC9), 0xE9);
	ck_assert(lp_utf8_is_alnum(0x4E2D));
	ck_assert(!lp_utf8_is_alnum(','));
	ck_assert(lp_utf8_is_space(0x3000));
}
END_TEST

START_TEST(test_atomic_write_keeps_old_on_abort)
{
	char dir[] = "/tmp/lpcoreXXXXXX";
	char path[256];
	struct lp_afile af;
	struct lp_diag d;
	struct lp_mapped m;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_file_write_atomic(path, "first", 5, &d), LP_OK);
	ck_assert_int_eq(lp_afile_open(&af, path, &d), LP_OK);
	fputs("second, half written", af.fp);
	lp_afile_abort(&af);
	ck_assert_int_eq(lp_file_map(path, LP_FILE_DOCUMENT, LP_MEM_DOC, &m, &d), LP_OK);
	ck_assert_uint_eq(m.len, 5);
	ck_assert_int_eq(memcmp(m.data, "first", 5), 0);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 5);
	lp_file_unmap(&m);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 0);
	ck_assert_int_eq(lp_file_map(dir, LP_FILE_DOCUMENT, LP_MEM_DOC, &m, &d), LP_E_IO);
	ck_assert_int_eq(lp_file_map("/nonexistent/x", LP_FILE_DOCUMENT, LP_MEM_DOC, &m, &d), LP_E_IO);
	ck_assert_str_eq(d.file, "/nonexistent/x");
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A mapping that reserves nothing, whose pages can be dropped and mapped
 * again without losing a byte. */
START_TEST(test_file_map_unreserved_and_advise)
{
	char path[] = "/tmp/lpcoreadvXXXXXX";
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 5 * page + 123;
	unsigned char *want = malloc(len);
	struct lp_mapped m;
	struct lp_diag d;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	for (size_t i = 0; i < len; i++)
		want[i] = (unsigned char)(i * 31 + 7);
	ck_assert_int_eq(write(fd, want, len), (ssize_t)len);
	close(fd);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_file_map_unreserved(path, LP_FILE_DOCUMENT, LP_MEM_DOC, &m, &d), LP_OK);
	ck_assert_int_eq(m.is_mmap, 1);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 0);
	ck_assert_int_eq(memcmp(m.data, want, len), 0);
	/* unaligned ranges, past the end too: widened and clipped */
	ck_assert_int_eq(lp_file_advise(&m, page + 5, 2 * page, LP_ADVISE_DROP), 0);
	ck_assert_int_eq(lp_file_advise(&m, 3 * page, 10 * page, LP_ADVISE_POPULATE), 0);
	ck_assert_int_eq(lp_file_advise(&m, 0, len, LP_ADVISE_PREFETCH), 0);
	ck_assert_int_eq(lp_file_advise(&m, len + 1, 1, LP_ADVISE_DROP), 0);
	ck_assert_int_eq(memcmp(m.data, want, len), 0);
	ck_assert_int_eq(lp_file_advise(&m, 0, len, LP_ADVISE_DROP), 0);
	ck_assert_int_eq(memcmp(m.data, want, len), 0);
	lp_file_unmap(&m);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 0);
	unlink(path);
	free(want);
}
END_TEST

/* Resident kB of the mapping that holds `p`, from /proc/self/smaps; -1
 * when unknown. */
static long mapping_rss_kb(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long a, b;
	long rss = -1;
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= a && (uintptr_t)p < b;
			continue;
		}
		if (in && !strncmp(line, "Rss:", 4)) {
			rss = atol(line + 4);
			in = 0;
		}
	}
	fclose(f);
	return rss;
}

START_TEST(test_file_map_window_and_drop)
{
	char dir[] = "/tmp/lpcoreXXXXXX";
	char path[256];
	size_t len = 16u << 20, window = 1u << 20, want, sum = 0;
	char *bytes = malloc(len);
	struct lp_diag d;
	struct lp_mapped m;
	long rss;

	ck_assert_ptr_nonnull(bytes);
	for (size_t i = 0; i < len; i++)
		bytes[i] = (char)('a' + i % 26);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/doc.txt", dir);
	lp_diag_init(&d);
	ck_assert_int_eq(lp_file_write_atomic(path, bytes, len, &d), LP_OK);

	/* the reservation is the window plus what one fault may map */
	want = window + lp_file_fault_bytes();
	ck_assert_int_eq(lp_file_map_window(path, LP_FILE_DOCUMENT, LP_MEM_DOC, window, &m, &d), LP_OK);
	ck_assert_uint_eq(m.len, len);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), want);
	/* read it all, releasing behind: the bytes stay right and the
	 * mapping's resident set stays near the window */
	for (size_t off = 0; off < len; off += 65536) {
		for (size_t i = off; i < off + 65536; i += 512)
			sum += (unsigned char)m.data[i] == (unsigned char)bytes[i];
		/* before the drop: what a reader holds at its worst */
		if (off % (1u << 20) == 0 && (rss = mapping_rss_kb(m.data)) >= 0)
			ck_assert_msg((size_t)rss * 1024 <= want, "%ld kB resident at %zu", rss, off);
		lp_file_drop(&m, off, 65536);
	}
	ck_assert_uint_eq(sum, len / 512);
	ck_assert_int_eq(memcmp(m.data + len - 26, bytes + len - 26, 26), 0);
	/* holding more than the window reserves the difference, under the budget */
	lp_mem_set_budget(lp_mem_current_total() + 1024);
	ck_assert_int_eq(lp_file_need(&m, want + 4096, &d), LP_E_NOMEM);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), want);
	lp_mem_set_budget(0);
	ck_assert_int_eq(lp_file_need(&m, want + 4096, &d), LP_OK);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), want + 4096);
	ck_assert_int_eq(lp_file_need(&m, 2 * len, &d), LP_OK); /* capped at the size */
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), len);
	lp_file_unmap(&m);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), 0);

	/* a file smaller than the window reserves its size */
	ck_assert_int_eq(lp_file_map_window(path, LP_FILE_DOCUMENT, LP_MEM_DOC, 64u << 20, &m, &d), LP_OK);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_DOC), len);
	lp_file_unmap(&m);
	unlink(path);
	rmdir(dir);
	free(bytes);
}
END_TEST

START_TEST(test_diag_format_and_exit_codes)
{
	struct lp_diag d;
	char out[256];
	FILE *f;

	lp_diag_init(&d);
	ck_assert_int_eq(lp_diag_set(&d, LP_E_CONFIG, "p.yaml", 3, 7, "unknown key '%s'", "x"),
			 LP_E_CONFIG);
	f = fmemopen(out, sizeof(out), "w");
	lp_diag_print(&d, f);
	fclose(f);
	ck_assert_str_eq(out, "p.yaml:3:7: error: unknown key 'x'\n");
	ck_assert_int_eq(lp_status_exit_code(LP_E_CONFIG), 2);
	ck_assert_int_eq(lp_status_exit_code(LP_E_INPUT), 3);
	ck_assert_int_eq(lp_status_exit_code(LP_E_NOMEM), 4);
	ck_assert_int_eq(lp_status_exit_code(LP_E_VERIFY), 1);
	ck_assert_int_eq(lp_status_exit_code(LP_E_INTERNAL), 5);
}
END_TEST

START_TEST(test_progress_plain_lines)
{
	char path[] = "/tmp/lpipe-progress.XXXXXX", text[512], t[16];
	struct lp_progress outer, inner;
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	size_t n;
	FILE *f;

	ck_assert_str_eq(lp_progress_format_time(0, t, sizeof(t)), "0:00");
	ck_assert_str_eq(lp_progress_format_time(75.4, t, sizeof(t)), "1:15");
	ck_assert_str_eq(lp_progress_format_time(3725, t, sizeof(t)), "1:02:05");
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(saved, 0);
	/* stderr a file: plain lines, when forced on */
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	lp_progress_enable(0);
	lp_progress_begin(&inner, "off", "things", 2);
	lp_progress_end(&inner);
	lp_progress_enable(1);
	ck_assert(!lp_progress_live());
	lp_progress_set_stage("1/2 test");
	lp_progress_begin(&outer, NULL, NULL, 0);
	lp_progress_begin(&inner, "step", "things", 3);
	lp_progress_add_tokens(30);
	lp_progress_update(&inner, 3);
	lp_progress_end(&inner);
	lp_progress_clear(); /* nothing live to erase */
	lp_progress_end(&outer);
	lp_progress_set_stage(NULL);
	lp_progress_enable(-1);
	fflush(stderr);
	ck_assert_int_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	unlink(path);
	close(fd);
	close(saved);
	/* one last line for the counted step, none while off, none for the
	 * stage (it counts nothing), and no terminal controls */
	ck_assert_msg(!strncmp(text, "lpipe: progress: [1/2 test] step: 3/3 things, ", 46), "%s", text);
	ck_assert_ptr_nonnull(strstr(text, " tok/s, done in "));
	ck_assert_ptr_null(strchr(text, '\r'));
	ck_assert_ptr_null(strchr(text, '\033'));
	ck_assert_ptr_null(strstr(text, "off"));
	ck_assert_int_eq((int)(strchr(text, '\n') - text) + 1, (int)n);
	ck_assert_int_ge(lp_progress_tokens(), 30);
}
END_TEST

/* FNV-1a gives the published values, and hashes pieces as one. */
START_TEST(test_hash_fnv1a)
{
	ck_assert_uint_eq(lp_hash_fnv1a(LP_HASH_FNV_BASIS, "", 0), 0xcbf29ce484222325ull);
	ck_assert_uint_eq(lp_hash_fnv1a(LP_HASH_FNV_BASIS, "a", 1), 0xaf63dc4c8601ec8cull);
	ck_assert_uint_eq(lp_hash_fnv1a(LP_HASH_FNV_BASIS, "foobar", 6), 0x85944171f73967e8ull);
	ck_assert_uint_eq(lp_hash_fnv1a(lp_hash_fnv1a(LP_HASH_FNV_BASIS, "foo", 3), "bar", 3),
			  0x85944171f73967e8ull);
}
END_TEST

/* A slot of the table test: the hash, then the key. */
struct test_slot {
	uint64_t h;
	unsigned key;
};

static int same_test_key(const void *slot, void *ctx)
{
	return ((const struct test_slot *)slot)->key == *(const unsigned *)ctx;
}

/* Keys whose hashes collide in their low bits probe past each other; the
 * table grows before it is half full and keeps every key; its slots are
 * tracked under its tag and released. */
START_TEST(test_table_probe_grow_release)
{
	struct lp_table t;
	size_t before = lp_mem_current(LP_MEM_SCRATCH), used = 0;

	lp_table_init(&t, sizeof(struct test_slot), 4, LP_MEM_SCRATCH);
	ck_assert_ptr_null(lp_table_find(&t, 1, same_test_key, &(unsigned){ 1 }));
	for (unsigned k = 1; k <= 100; k++) {
		uint64_t h = ((uint64_t)k << 32) | 8; /* every key starts at one slot */
		struct test_slot *s;

		if (lp_table_needs_room(&t))
			ck_assert_int_eq(lp_table_grow(&t, NULL), LP_OK);
		s = lp_table_find(&t, h, same_test_key, &k);
		ck_assert_uint_eq(s->h, 0);
		s->key = k;
		lp_table_put(&t, s, h);
		ck_assert_uint_le(t.n * 2, t.cap);
	}
	ck_assert_uint_eq(t.n, 100);
	for (unsigned k = 1; k <= 100; k++) {
		struct test_slot *s = lp_table_find(&t, ((uint64_t)k << 32) | 8, same_test_key, &k);
		ck_assert_uint_eq(s->key, k);
	}
	for (size_t i = 0; i < t.cap; i++)
		used += ((struct test_slot *)lp_table_slot(&t, i))->h != 0;
	ck_assert_uint_eq(used, 100);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_SCRATCH) - before, t.cap * sizeof(struct test_slot));
	lp_table_release(&t);
	ck_assert_uint_eq(lp_mem_current(LP_MEM_SCRATCH), before);
	ck_assert_uint_eq(t.cap, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("core");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_mem_budget_and_peaks);
	tcase_add_test(tc, test_mem_reserve_counts_against_budget);
	tcase_add_test(tc, test_mem_fault_injection);
	tcase_add_test(tc, test_mem_alloc_pages_resident_as_written);
	tcase_add_test(tc, test_mem_accounts_apart);
	tcase_add_test(tc, test_mem_parse_size);
	tcase_add_test(tc, test_arena_and_buf);
	tcase_add_test(tc, test_utf8_decode);
	tcase_add_test(tc, test_atomic_write_keeps_old_on_abort);
	tcase_add_test(tc, test_file_map_unreserved_and_advise);
	tcase_add_test(tc, test_file_map_window_and_drop);
	tcase_add_test(tc, test_diag_format_and_exit_codes);
	tcase_add_test(tc, test_progress_plain_lines);
	tcase_add_test(tc, test_table_probe_grow_release);
	tcase_add_test(tc, test_hash_fnv1a);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
