#include "core/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *lp_file_kind_name(enum lp_file_kind kind)
{
	switch (kind) {
	case LP_FILE_PIPELINE: return "pipeline";
	case LP_FILE_PROMPT: return "prompt file";
	case LP_FILE_MODEL: return "model file";
	case LP_FILE_DOCUMENT: return "document";
	case LP_FILE_CACHE: return "cache record";
	}
	return "file";
}

/* The most bytes a file of `kind` may hold when read whole (a pipe, a
 * device, or a pipeline or prompt of any type). */
static size_t kind_limit(enum lp_file_kind kind)
{
	switch (kind) {
	case LP_FILE_PIPELINE: return LP_FILE_PIPELINE_MAX;
	case LP_FILE_PROMPT: return LP_FILE_PROMPT_MAX;
	default: return LP_FILE_STREAM_MAX;
	}
}

static int kind_is_text(enum lp_file_kind kind)
{
	return kind == LP_FILE_PIPELINE || kind == LP_FILE_PROMPT || kind == LP_FILE_DOCUMENT;
}

static enum lp_status too_large(const char *path, enum lp_file_kind kind, struct lp_diag *d)
{
	char lim[32];

	return lp_diag_set(d, LP_E_INPUT, path, 0, 0, "larger than the %s limit for a %s",
			   lp_mem_format_size(kind_limit(kind), lim, sizeof(lim)),
			   lp_file_kind_name(kind));
}

/* Read a stream into tracked memory as it grows: the budget applies from
 * the first byte, the kind's limit stops it, and a text kind stops at its
 * first NUL (a binary file), not at an end that may never come. */
static enum lp_status map_read_stream(int fd, const char *path, enum lp_file_kind kind,
				      enum lp_mem_tag tag, struct lp_mapped *m,
				      struct lp_diag *d)
{
	size_t limit = kind_limit(kind), cap = 1 << 16, len = 0;
	unsigned char *buf = lp_mem_alloc(tag, cap, d), *nul;
	enum lp_status s = LP_OK;

	if (!buf)
		return LP_E_NOMEM;
	for (;;) {
		ssize_t n;
		if (len == cap) {
			/* one byte past the limit tells "too large" from "just fits" */
			size_t ncap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
			unsigned char *nb;
			if (len > limit) {
				s = too_large(path, kind, d);
				break;
			}
			if (!(nb = lp_mem_realloc(tag, buf, ncap, d))) {
				s = LP_E_NOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s = lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to read: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (kind_is_text(kind) && (nul = memchr(buf + len, 0, (size_t)n))) {
			size_t at = (size_t)(nul - buf);
			s = lp_diag_set_offset(d, LP_E_INPUT, path, (long long)at,
					       "binary file (NUL byte at offset %zu), not text", at);
			break;
		}
		len += (size_t)n;
	}
	if (!s && len > limit)
		s = too_large(path, kind, d);
	if (s) {
		lp_mem_free(buf);
		return s;
	}
	m->data = buf;
	m->len = len;
	m->is_mmap = 0;
	m->tag = tag;
	return LP_OK;
}

size_t lp_file_fault_bytes(void)
{
	static size_t cached; /* documents of a batch ask from several threads */
	size_t bytes = __atomic_load_n(&cached, __ATOMIC_RELAXED);
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
	__atomic_store_n(&cached, bytes, __ATOMIC_RELAXED);
	return bytes;
}

/* Map the regular file open on fd (size bytes), reserving as map_file
 * says; fd stays open (the caller closes it). */
static enum lp_status map_regular(int fd, const char *path, size_t size, enum lp_mem_tag tag,
				  int reserve, size_t window, struct lp_mapped *m,
				  struct lp_diag *d)
{
	size_t charge;
	void *p;
	enum lp_status s;

	if (size == 0)
		return LP_OK;
	if (window)
		window += lp_file_fault_bytes();
	charge = window && window < size ? window : size;
	if (!reserve)
		charge = 0;
	if (charge && (s = lp_mem_reserve(tag, charge, d)))
		return s;
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		lp_mem_unreserve(tag, charge);
		return lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to map: %s", strerror(errno));
	}
	/* A whole-file reader streams through once; a partial one jumps. */
	madvise(p, size, reserve ? MADV_SEQUENTIAL : MADV_NORMAL);
	m->data = p;
	m->len = size;
	m->is_mmap = 1;
	m->reserved = charge;
	return LP_OK;
}

/* Map `path`. reserve 0: reserve nothing (the caller reserves what it keeps
 * resident); else reserve the whole file, or with window > 0 at most
 * window + lp_file_fault_bytes(). */
static enum lp_status map_file(const char *path, enum lp_file_kind kind, enum lp_mem_tag tag,
			       int reserve, size_t window, struct lp_mapped *m,
			       struct lp_diag *d)
{
	struct stat st;
	int fd;
	enum lp_status s;

	memset(m, 0, sizeof(*m));
	m->tag = tag;
	if (!strcmp(path, "-") && (kind == LP_FILE_MODEL || kind == LP_FILE_CACHE))
		return lp_diag_set(d, LP_E_IO, "<stdin>", 0, 0, "a %s must be a regular file",
				   lp_file_kind_name(kind));
	if (!strcmp(path, "-"))
		return map_read_stream(STDIN_FILENO, "<stdin>", kind, tag, m, d);
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
	if (!S_ISREG(st.st_mode) && (kind == LP_FILE_MODEL || kind == LP_FILE_CACHE)) {
		close(fd);
		return lp_diag_set(d, LP_E_IO, path, 0, 0,
				   "not a regular file (a %s is mapped, not read from a "
				   "device or pipe)", lp_file_kind_name(kind));
	}
	if (!S_ISREG(st.st_mode)) {
		s = map_read_stream(fd, path, kind, tag, m, d);
		close(fd);
		return s;
	}
	if (kind != LP_FILE_DOCUMENT && kind_is_text(kind) &&
	    (size_t)st.st_size > kind_limit(kind)) {
		close(fd);
		return too_large(path, kind, d);
	}
	s = map_regular(fd, path, (size_t)st.st_size, tag, reserve, window, m, d);
	close(fd);
	return s;
}

enum lp_status lp_file_map(const char *path, enum lp_file_kind kind, enum lp_mem_tag tag,
			   struct lp_mapped *m, struct lp_diag *d)
{
	return map_file(path, kind, tag, 1, 0, m, d);
}

enum lp_status lp_file_map_window(const char *path, enum lp_file_kind kind,
				  enum lp_mem_tag tag, size_t window,
				  struct lp_mapped *m, struct lp_diag *d)
{
	return map_file(path, kind, tag, 1, window, m, d);
}

enum lp_status lp_file_map_fd_window(int fd, const char *name, enum lp_mem_tag tag,
				     size_t window, struct lp_mapped *m, struct lp_diag *d)
{
	struct stat st;

	memset(m, 0, sizeof(*m));
	m->tag = tag;
	if (fstat(fd, &st))
		return lp_diag_set(d, LP_E_IO, name, 0, 0, "unable to stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return lp_diag_set(d, LP_E_IO, name, 0, 0, "not a regular file");
	if (window == (size_t)-1)
		return map_regular(fd, name, (size_t)st.st_size, tag, 0, 0, m, d);
	return map_regular(fd, name, (size_t)st.st_size, tag, 1, window, m, d);
}

enum lp_status lp_file_map_unreserved(const char *path, enum lp_file_kind kind,
				      enum lp_mem_tag tag,
				      struct lp_mapped *m, struct lp_diag *d)
{
	return map_file(path, kind, tag, 0, 0, m, d);
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

int lp_file_protect(const struct lp_mapped *m, size_t off, size_t len, int writable)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), lo;

	if (!m->is_mmap || !m->data || off >= m->len || !len)
		return 0;
	if (len > m->len - off)
		len = m->len - off;
	lo = off / page * page;
	return mprotect((void *)(m->data + lo), off + len - lo,
			writable ? PROT_READ | PROT_WRITE : PROT_READ) ? -1 : 0;
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

/* ---- atomic output ------------------------------------------------------- */

/* "NAME.tmp.PID.XXXXXX": NAME is cut to a length that does not depend on
 * the pid, so every run computes the same prefix for the same output. */
#define TMP_NAME_MAX 255
#define TMP_PID_DIGITS 10
#define TMP_SUFFIX_MAX (sizeof(".tmp.") - 1 + TMP_PID_DIGITS + sizeof(".XXXXXX") - 1)

/* Temporaries the signal handler removes: a claim flag and the path. */
#define N_SLOTS 16
static volatile sig_atomic_t slot_used[N_SLOTS];
static char slot_path[N_SLOTS][PATH_MAX];
static int slot_claimed[N_SLOTS];

static int slot_register(const char *tmp)
{
	if (strlen(tmp) >= PATH_MAX)
		return -1;
	for (int i = 0; i < N_SLOTS; i++) {
		int free_ = 0;
		if (__atomic_compare_exchange_n(&slot_claimed[i], &free_, 1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			strcpy(slot_path[i], tmp);
			__atomic_thread_fence(__ATOMIC_RELEASE);
			slot_used[i] = 1;
			return i + 1;
		}
	}
	return 0; /* more outputs open than slots: a signal leaves this one */
}

/* Release slot number `slot` (1-based; 0: none). */
static void slot_release(int slot)
{
	int i = slot - 1;

	if (i < 0)
		return;
	slot_used[i] = 0;
	__atomic_store_n(&slot_claimed[i], 0, __ATOMIC_RELEASE);
}

static void on_signal(int sig)
{
	for (int i = 0; i < N_SLOTS; i++)
		if (slot_used[i])
			unlink(slot_path[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

void lp_afile_handle_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* The length of the NAME part of a temporary for the output named `base`. */
static size_t tmp_prefix_len(const char *base)
{
	size_t n = strlen(base);

	return n > TMP_NAME_MAX - TMP_SUFFIX_MAX ? TMP_NAME_MAX - TMP_SUFFIX_MAX : n;
}

/* Is `name` "PREFIX.tmp.PID.XXXXXX" for this prefix? Sets *pid. */
static int is_tmp_of(const char *name, const char *prefix, size_t plen, long *pid)
{
	const char *p = name + plen;
	char *end;

	if (strncmp(name, prefix, plen) || strncmp(p, ".tmp.", 5))
		return 0;
	p += 5;
	if (*p < '1' || *p > '9')
		return 0;
	errno = 0;
	*pid = strtol(p, &end, 10);
	return !errno && *end == '.' && strlen(end + 1) == 6;
}

/* Remove the temporaries of this output left by processes that are gone
 * (killed or crashed mid-write): only regular files of ours, only when the
 * pid in the name is no process at all. */
static void remove_stale(const char *dir, const char *base)
{
	size_t plen = tmp_prefix_len(base);
	DIR *dp = opendir(dir);
	struct dirent *e;

	if (!dp)
		return;
	while ((e = readdir(dp))) {
		struct stat st;
		long pid;
		if (!is_tmp_of(e->d_name, base, plen, &pid) || pid == (long)getpid() ||
		    pid > INT32_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (!fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode) && st.st_uid == geteuid())
			unlinkat(dirfd(dp), e->d_name, 0);
	}
	closedir(dp);
}

/* The file an output replaces: `path`, or the file a symbolic link at
 * `path` leads to (the link is kept, as a shell redirection keeps it).
 * NULL with `d` filled for a dangling link. */
static char *output_target(const char *path, struct lp_diag *d)
{
	struct stat st;
	char *t;

	if (lstat(path, &st) || !S_ISLNK(st.st_mode))
		return lp_mem_strdup(path);
	if (!(t = realpath(path, NULL))) {
		lp_diag_set(d, LP_E_IO, path, 0, 0,
			    "unable to follow the symbolic link: %s", strerror(errno));
		return NULL;
	}
	{
		char *copy = lp_mem_strdup(t);
		free(t);
		return copy;
	}
}

/* Write straight into a device, FIFO or socket: it is never replaced. */
static enum lp_status open_through(struct lp_afile *af, struct lp_diag *d)
{
	int fd = open(af->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return lp_diag_set(d, LP_E_IO, af->path, 0, 0, "unable to open: %s",
				   strerror(errno));
	if (!(af->fp = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		return lp_diag_set(d, LP_E_IO, af->path, 0, 0, "unable to open: %s", strerror(e));
	}
	af->tmp_path = lp_mem_strdup("");
	return af->tmp_path ? LP_OK : lp_diag_set(d, LP_E_NOMEM, af->path, 0, 0, "out of memory");
}

static enum lp_status open_tmp(struct lp_afile *af, struct lp_diag *d)
{
	const char *slash = strrchr(af->target, '/');
	const char *base = slash ? slash + 1 : af->target;
	size_t dlen = slash ? (size_t)(slash - af->target) : 0, plen = tmp_prefix_len(base);
	size_t cap = dlen + 1 + plen + TMP_SUFFIX_MAX + 1;
	char *dir;
	int fd;

	if (!*base)
		return lp_diag_set(d, LP_E_IO, af->path, 0, 0, "is a directory, not a file");
	if (!(dir = lp_mem_alloc(LP_MEM_OTHER, dlen + 2, d)) ||
	    !(af->tmp_path = lp_mem_alloc(LP_MEM_OTHER, cap, d))) {
		lp_mem_free(dir);
		return LP_E_NOMEM;
	}
	if (slash)
		snprintf(dir, dlen + 2, "%.*s", (int)(dlen ? dlen : 1), af->target);
	else
		strcpy(dir, ".");
	remove_stale(dir, base);
	lp_mem_free(dir);
	snprintf(af->tmp_path, cap, "%.*s%.*s.tmp.%ld.XXXXXX", (int)(base - af->target),
		 af->target, (int)plen, base, (long)getpid());
	fd = mkstemp(af->tmp_path);
	if (fd < 0) {
		enum lp_status s = lp_diag_set(d, LP_E_IO, af->path, 0, 0,
					       "unable to create a temporary file beside it: %s",
					       strerror(errno));
		af->tmp_path[0] = '\0';
		return s;
	}
	af->slot = slot_register(af->tmp_path);
	fchmod(fd, 0644);
	if (!(af->fp = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		return lp_diag_set(d, LP_E_IO, af->path, 0, 0, "unable to open: %s", strerror(e));
	}
	return LP_OK;
}

enum lp_status lp_afile_open(struct lp_afile *af, const char *path, struct lp_diag *d)
{
	enum lp_status s;
	struct stat st;

	memset(af, 0, sizeof(*af));
	if (!(af->path = lp_mem_strdup(path)))
		return lp_diag_set(d, LP_E_NOMEM, path, 0, 0, "out of memory");
	if (!(af->target = output_target(path, d))) {
		s = d && d->status ? d->status : LP_E_NOMEM;
		lp_afile_abort(af);
		return s;
	}
	if (!stat(af->target, &st) && S_ISDIR(st.st_mode))
		s = lp_diag_set(d, LP_E_IO, path, 0, 0, "is a directory, not a file");
	else if (!stat(af->target, &st) && !S_ISREG(st.st_mode))
		s = open_through(af, d);
	else
		s = open_tmp(af, d);
	if (s)
		lp_afile_abort(af);
	return s;
}

enum lp_status lp_afile_commit(struct lp_afile *af, struct lp_diag *d)
{
	int through = af->tmp_path && !af->tmp_path[0], e = 0;
	enum lp_status s;

	if (!af->fp)
		return lp_diag_set(d, LP_E_INTERNAL, af->path, 0, 0, "output not open");
	errno = 0;
	if (fflush(af->fp) != 0 || ferror(af->fp))
		e = errno ? errno : EIO;
	/* a device or pipe has nothing to sync */
	else if (!through && fsync(fileno(af->fp)) != 0)
		e = errno;
	if (fclose(af->fp) != 0 && !e)
		e = errno;
	af->fp = NULL;
	if (!e && !through) {
		slot_release(af->slot);
		af->slot = 0;
		if (rename(af->tmp_path, af->target))
			e = errno;
	}
	if (e) {
		s = lp_diag_set(d, LP_E_IO, af->path, 0, 0, "unable to write: %s", strerror(e));
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
	slot_release(af->slot);
	lp_mem_free(af->path);
	lp_mem_free(af->target);
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
