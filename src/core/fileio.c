#include "core/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static enum lp_status map_read_stream(int fd, const char *path, enum lp_mem_tag tag,
				      struct lp_mapped *m, struct lp_diag *d)
{
	size_t cap = 1 << 16, len = 0;
	unsigned char *buf = lp_mem_alloc(tag, cap, d);

	if (!buf)
		return LP_E_NOMEM;
	for (;;) {
		ssize_t n;
		if (len == cap) {
			unsigned char *nb = lp_mem_realloc(tag, buf, cap * 2, d);
			if (!nb) {
				lp_mem_free(buf);
				return LP_E_NOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			lp_mem_free(buf);
			return lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to read: %s", strerror(errno));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	m->data = buf;
	m->len = len;
	m->is_mmap = 0;
	m->tag = tag;
	return LP_OK;
}

size_t lp_file_fault_bytes(void)
{
	static size_t bytes;
	FILE *f;

	if (bytes)
		return bytes;
	bytes = (size_t)2 << 20; /* x86-64 and most arm64 kernels */
	f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	if (f) {
		unsigned long v;
		if (fscanf(f, "%lu", &v) == 1 && v >= 4096 && v <= ((size_t)1 << 30))
			bytes = v;
		fclose(f);
	}
	return bytes;
}

/* Map `path`. reserve 0: reserve nothing (the caller reserves what it keeps
 * resident); else reserve the whole file, or with window > 0 at most
 * window + lp_file_fault_bytes(). */
static enum lp_status map_file(const char *path, enum lp_mem_tag tag, int reserve,
			       size_t window, struct lp_mapped *m, struct lp_diag *d)
{
	size_t charge;
	struct stat st;
	int fd;
	void *p;
	enum lp_status s;

	memset(m, 0, sizeof(*m));
	m->tag = tag;
	if (!strcmp(path, "-"))
		return map_read_stream(STDIN_FILENO, "<stdin>", tag, m, d);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to open: %s", strerror(errno));
	if (fstat(fd, &st)) {
		s = lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to stat: %s", strerror(errno));
		close(fd);
		return s;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "is a directory, not a file");
	}
	if (!S_ISREG(st.st_mode)) {
		s = map_read_stream(fd, path, tag, m, d);
		close(fd);
		return s;
	}
	if (st.st_size == 0) {
		close(fd);
		return LP_OK;
	}
	if (window)
		window += lp_file_fault_bytes();
	charge = window && window < (size_t)st.st_size ? window : (size_t)st.st_size;
	if (!reserve)
		charge = 0;
	if (charge && (s = lp_mem_reserve(tag, charge, d))) {
		close(fd);
		return s;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		lp_mem_unreserve(tag, charge);
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to map: %s", strerror(errno));
	}
	/* A whole-file reader streams through once; a partial one jumps. */
	madvise(p, (size_t)st.st_size, reserve ? MADV_SEQUENTIAL : MADV_NORMAL);
	m->data = p;
	m->len = (size_t)st.st_size;
	m->is_mmap = 1;
	m->reserved = charge;
	return LP_OK;
}

enum lp_status lp_file_map(const char *path, enum lp_mem_tag tag,
			   struct lp_mapped *m, struct lp_diag *d)
{
	return map_file(path, tag, 1, 0, m, d);
}

enum lp_status lp_file_map_window(const char *path, enum lp_mem_tag tag, size_t window,
				  struct lp_mapped *m, struct lp_diag *d)
{
	return map_file(path, tag, 1, window, m, d);
}

enum lp_status lp_file_map_unreserved(const char *path, enum lp_mem_tag tag,
				      struct lp_mapped *m, struct lp_diag *d)
{
	return map_file(path, tag, 0, 0, m, d);
}

int lp_file_advise(const struct lp_mapped *m, size_t off, size_t len,
		   enum lp_file_advice advice)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), lo, hi;
	int how = MADV_WILLNEED;

	if (!m->is_mmap || !m->data || off >= m->len || !len)
		return 0;
	if (len > m->len - off)
		len = m->len - off;
	/* the mapping starts on a page boundary, so offsets round alike; the
	 * kernel rounds the length up to whole pages itself */
	lo = off / page * page;
	hi = off + len;
	if (advice == LP_ADVISE_DROP)
		how = MADV_DONTNEED;
#ifdef MADV_POPULATE_READ
	else if (advice == LP_ADVISE_POPULATE)
		how = MADV_POPULATE_READ;
#endif
	if (madvise((void *)(m->data + lo), hi - lo, how) == 0)
		return 0;
#ifdef MADV_POPULATE_READ
	/* kernels before 5.14 do not know it: a hint is enough */
	if (how == MADV_POPULATE_READ && errno == EINVAL)
		return madvise((void *)(m->data + lo), hi - lo, MADV_WILLNEED) ? -1 : 0;
#endif
	return -1;
}

void lp_file_drop(struct lp_mapped *m, size_t off, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), a, e;

	if (!m->is_mmap || !m->data || !len || off >= m->len)
		return;
	if (len > m->len - off)
		len = m->len - off;
	/* A page that straddles the end of the range is kept: the reader goes
	 * on there, and releasing it would make the next read fault again,
	 * and a fault may map a whole large folio around it, pages already
	 * released included. */
	a = off / page * page;
	e = off + len == m->len ? m->len : (off + len) / page * page;
	if (e > a)
		lp_file_advise(m, a, e - a, LP_ADVISE_DROP);
}

enum lp_status lp_file_need(struct lp_mapped *m, size_t bytes, struct lp_diag *d)
{
	enum lp_status s;

	if (!m->is_mmap || bytes <= m->reserved)
		return LP_OK;
	if (bytes > m->len)
		bytes = m->len;
	if (bytes <= m->reserved)
		return LP_OK;
	if ((s = lp_mem_reserve(m->tag, bytes - m->reserved, d)))
		return s;
	m->reserved = bytes;
	return LP_OK;
}

void lp_file_unmap(struct lp_mapped *m)
{
	if (m->is_mmap && m->data) {
		munmap((void *)m->data, m->len);
		lp_mem_unreserve(m->tag, m->reserved);
	} else {
		lp_mem_free((void *)m->data);
	}
	memset(m, 0, sizeof(*m));
}

enum lp_status lp_afile_open(struct lp_afile *af, const char *path, struct lp_diag *d)
{
	size_t n = strlen(path);
	int fd;

	memset(af, 0, sizeof(*af));
	af->path = lp_mem_strdup(path);
	af->tmp_path = lp_mem_alloc(LP_MEM_OTHER, n + 16, d);
	if (!af->path || !af->tmp_path) {
		lp_afile_abort(af);
		return LP_E_NOMEM;
	}
	snprintf(af->tmp_path, n + 16, "%s.tmp.XXXXXX", path);
	fd = mkstemp(af->tmp_path);
	if (fd < 0) {
		enum lp_status s = lp_diag_set(d, LP_E_IO, path, 0, 0,
					       "unable to create temporary file: %s", strerror(errno));
		af->tmp_path[0] = '\0';
		lp_afile_abort(af);
		return s;
	}
	fchmod(fd, 0644);
	af->fp = fdopen(fd, "w");
	if (!af->fp) {
		close(fd);
		lp_afile_abort(af);
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to open: %s", strerror(errno));
	}
	return LP_OK;
}

enum lp_status lp_afile_commit(struct lp_afile *af, struct lp_diag *d)
{
	int failed;

	if (!af->fp)
		return lp_diag_set(d, LP_E_INTERNAL, af->path, 0, 0, "output not open");
	failed = fflush(af->fp) != 0 || ferror(af->fp) || fsync(fileno(af->fp)) != 0;
	failed |= fclose(af->fp) != 0;
	af->fp = NULL;
	if (failed || rename(af->tmp_path, af->path)) {
		enum lp_status s = lp_diag_set(d, LP_E_IO, af->path, 0, 0,
					       "unable to write: %s", strerror(errno));
		lp_afile_abort(af);
		return s;
	}
	af->tmp_path[0] = '\0';
	lp_afile_abort(af);
	return LP_OK;
}

void lp_afile_abort(struct lp_afile *af)
{
	if (af->fp)
		fclose(af->fp);
	if (af->tmp_path && af->tmp_path[0])
		unlink(af->tmp_path);
	lp_mem_free(af->path);
	lp_mem_free(af->tmp_path);
	memset(af, 0, sizeof(*af));
}

enum lp_status lp_file_write_atomic(const char *path, const void *data, size_t len,
				    struct lp_diag *d)
{
	struct lp_afile af;
	enum lp_status s = lp_afile_open(&af, path, d);

	if (s)
		return s;
	if (len && fwrite(data, 1, len, af.fp) != len) {
		lp_afile_abort(&af);
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to write: %s", strerror(errno));
	}
	return lp_afile_commit(&af, d);
}
