/*
 * fileio.h - reading inputs without copying, writing outputs atomically.
 *
 * lp_file_map maps a regular file read-only (a large document or model is
 * never copied into the heap); a pipe or stdin ("-") is read into tracked
 * memory instead. The mapping is reserved against the memory budget under
 * the tag the caller names, unless made with lp_file_map_unreserved by a
 * caller that keeps only part of it resident (lp_file_advise drops pages
 * and maps them again) and reserves that part itself.
 *
 * Resident window: a mapped file's pages are in the process's resident set
 * only once read. lp_file_map_window maps a file that is read in passes
 * (a document) and reserves only a window of it: the reader releases each
 * range it is done with (lp_file_drop: the pages leave the resident set and
 * come back from the page cache if read again), so what stays resident is
 * bounded by the largest range a pass holds at once, whatever the file's
 * length. A reader that holds more than the window at once says so with
 * lp_file_need, which raises the reservation (and may fail the budget).
 * One more term is the kernel's: a read fault may map a whole large folio
 * of the page cache at once (up to the huge page size, 2 MiB on x86-64,
 * whatever was asked), and pages mapped ahead of the reader stay until it
 * passes them; so the reservation is the window plus lp_file_fault_bytes.
 * Stream input (a pipe, stdin) is in tracked memory whole: nothing to drop.
 *
 * A mapping is read-only and private, so dropping a range is always safe:
 * a later read sees the same bytes.
 *
 * Kinds and limits: every read names the kind of file it reads, and each
 * kind has its limits (LP_FILE_*_MAX below, documented in lpipe(1)). A
 * model or cache file must be a regular file: it is mapped, and a device or
 * pipe that never ends would be read forever. Text kinds (pipeline, prompt,
 * document) read from a pipe, device or stdin are read into tracked memory
 * as they grow (so the budget applies from the first byte), stop at the
 * kind's size limit, and stop at the first NUL byte (a binary file) rather
 * than at end of file. A pipeline or prompt file is refused over its limit
 * whatever it is; a regular document is mapped, and only its window counts.
 *
 * lp_afile writes a regular file through "NAME.tmp.PID.XXXXXX" in the same
 * directory (NAME cut short when the whole would pass the system's name
 * limit), renamed over PATH only on lp_afile_commit, so a failed run never
 * leaves a half-written output and never destroys the previous one. PATH
 * that is a symbolic link is followed: its target is replaced atomically
 * and the link kept. PATH that is a device, FIFO or socket is written
 * through, as a shell redirection would (no temporary, no rename: it is
 * never replaced). A temporary left by a process that is gone (SIGKILL, a
 * crash) is removed by the next lp_afile_open of the same PATH; SIGINT,
 * SIGTERM and SIGHUP remove the open temporaries once
 * lp_afile_handle_signals has been called.
 */
#ifndef LP_FILEIO_H
#define LP_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "core/mem.h"
#include "core/status.h"

struct lp_mapped {
	const unsigned char *data; /* file bytes; NULL for an empty file */
	size_t len;                /* bytes */
	int is_mmap;               /* 1: munmap on release; 0: lp_mem_free */
	enum lp_mem_tag tag;
	size_t reserved;           /* mmap: bytes reserved under tag (len, the
				    * window, or 0 when unreserved) */
};

/* What a file is for, which sets the limits on reading it. */
enum lp_file_kind {
	LP_FILE_PIPELINE, /* a pipeline (YAML): at most LP_FILE_PIPELINE_MAX, text */
	LP_FILE_PROMPT,   /* a prompt_file: at most LP_FILE_PROMPT_MAX, text */
	LP_FILE_MODEL,    /* GGUF, safetensors, vocab.txt: a regular file only */
	LP_FILE_DOCUMENT, /* a document: regular of any size (mapped in a
			   * window), else read up to LP_FILE_STREAM_MAX, text */
	LP_FILE_CACHE,    /* an embedding-cache record: a regular file only */
};

#define LP_FILE_PIPELINE_MAX ((size_t)1 << 20) /* 1 MiB */
#define LP_FILE_PROMPT_MAX ((size_t)1 << 20)   /* 1 MiB */
#define LP_FILE_STREAM_MAX ((size_t)1 << 30)   /* 1 GiB from a pipe or device */

/* The kind's name for messages ("pipeline", "prompt file", ...). */
const char *lp_file_kind_name(enum lp_file_kind kind);

/*
 * Map `path` ("-" for stdin), a file of the given kind. On success *m owns
 * the bytes until lp_file_unmap. On failure returns LP_E_IO (cannot
 * open/read, a directory, not a regular file where the kind needs one),
 * LP_E_INPUT (over the kind's size limit, or a NUL in a text kind read
 * from a stream) or LP_E_NOMEM, with `d` naming the file.
 */
enum lp_status lp_file_map(const char *path, enum lp_file_kind kind, enum lp_mem_tag tag,
			   struct lp_mapped *m, struct lp_diag *d);
void lp_file_unmap(struct lp_mapped *m);

/*
 * Same as lp_file_map, except that a regular file's mapping reserves
 * nothing: the caller keeps only part of it resident (lp_file_advise) and
 * reserves what it keeps itself. A pipe or stdin is still read into
 * tracked memory, and is_mmap says which of the two happened.
 */
enum lp_status lp_file_map_unreserved(const char *path, enum lp_file_kind kind,
				      enum lp_mem_tag tag,
				      struct lp_mapped *m, struct lp_diag *d);

enum lp_file_advice {
	LP_ADVISE_DROP,      /* unmap the pages from the process (they are read
			      * again from the page cache on the next access) */
	LP_ADVISE_PREFETCH,  /* start reading the pages into the page cache */
	LP_ADVISE_POPULATE,  /* map the pages now, in one call rather than one
			      * page fault at a time (PREFETCH where the kernel
			      * cannot) */
};

/*
 * Advise the kernel about bytes [off, off + len) of a mapping, widened to
 * whole pages and clipped to the file. Only a read-only file mapping is
 * ever advised: for memory read from a pipe, dropping would lose the
 * bytes, so nothing is done. Returns 0, or -1 when the kernel refused
 * (the mapping is unchanged and still readable).
 */
int lp_file_advise(const struct lp_mapped *m, size_t off, size_t len,
		   enum lp_file_advice advice);

/*
 * Make bytes [off, off + len) of m writable (writable = 1, widened to
 * whole pages) or read-only again (0). A mapping is private: what is
 * written becomes the process's own copy of those pages (resident as the
 * file's pages were, so the reservation stays right) and never reaches
 * the file; such pages must not be advised LP_ADVISE_DROP, which would
 * give the file's bytes back. Memory read from a pipe is writable as it
 * is. Returns 0, or -1 when the kernel refused (nothing changed).
 */
int lp_file_protect(const struct lp_mapped *m, size_t off, size_t len, int writable);

/* Same, but a regular file reserves min(size, window + lp_file_fault_bytes())
 * bytes instead of its size (see "resident window" above); window 0 means
 * the whole file. */
enum lp_status lp_file_map_window(const char *path, enum lp_file_kind kind,
				  enum lp_mem_tag tag, size_t window,
				  struct lp_mapped *m, struct lp_diag *d);

/* Same for the regular file open on `fd` (a spool the caller wrote; the
 * mapping stays valid after fd is closed or the file unlinked). `name`
 * names it in messages. window (size_t)-1: reserve nothing (the caller
 * reserves what it keeps resident, as lp_file_map_unreserved). */
enum lp_status lp_file_map_fd_window(int fd, const char *name, enum lp_mem_tag tag,
				     size_t window, struct lp_mapped *m, struct lp_diag *d);

/* The most a read fault may map at once: the kernel's huge page size
 * (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size), else 2 MiB. */
size_t lp_file_fault_bytes(void);

/* Release the pages of data[off, off + len) from the resident set: from the
 * page holding `off` up to, not including, the page holding off + len (the
 * reader goes on there), or to the end when the range reaches it. A no-op
 * for stream input and empty ranges. */
void lp_file_drop(struct lp_mapped *m, size_t off, size_t len);

/* The reader is about to hold `bytes` of the mapping resident at once:
 * raise the reservation to min(len, bytes) when it is smaller. Returns
 * LP_OK, or LP_E_NOMEM (the budget, with `d` filled; the reservation is
 * unchanged). A no-op for stream input, which is reserved whole. */
enum lp_status lp_file_need(struct lp_mapped *m, size_t bytes, struct lp_diag *d);

struct lp_afile {
	FILE *fp;         /* write here */
	char *path;       /* final path as given, for messages */
	char *target;     /* the file replaced: path, or a symlink's target */
	char *tmp_path;   /* temporary path, renamed on commit; "" when the
			   * output is written through (a device or FIFO) */
	int slot;         /* 1 + index in the signal-cleanup table; 0: none */
};

/*
 * Open the output `path`: a temporary file beside it (beside the target of
 * a symbolic link), or `path` itself when it is a device, FIFO or socket.
 * Stale temporaries of the same output whose process is gone are removed
 * first. Returns LP_OK, or LP_E_IO naming `path` and the reason (a
 * directory, a dangling link, a directory that cannot be written).
 */
enum lp_status lp_afile_open(struct lp_afile *af, const char *path, struct lp_diag *d);
/* Flush, fsync and rename over the final path (flush and close only when
 * written through). Returns LP_OK or LP_E_IO naming the path and the
 * reason (the temporary file is removed on failure). */
enum lp_status lp_afile_commit(struct lp_afile *af, struct lp_diag *d);
/* Discard the temporary file; safe after commit or on an unopened struct. */
void lp_afile_abort(struct lp_afile *af);

/*
 * Install handlers for SIGINT, SIGTERM and SIGHUP that remove the
 * temporaries of every open lp_afile, then die of the same signal (the
 * shell sees status 128 + the signal: 130, 143, 129). Call once, from the
 * program, not from library code that may share the process.
 */
void lp_afile_handle_signals(void);

/* Write `len` bytes to `path` atomically (open, write, commit). */
enum lp_status lp_file_write_atomic(const char *path, const void *data, size_t len,
				    struct lp_diag *d);

#endif
