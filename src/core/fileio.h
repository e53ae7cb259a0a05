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
 * lp_afile writes go to "PATH.tmp.XXXXXX" in the same directory and are
 * renamed over PATH only on lp_afile_commit, so a failed run never leaves a
 * half-written output and never destroys the previous one.
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
	size_t reserved;           /* bytes of an mmap reserved under tag */
};

/*
 * Map `path` ("-" for stdin). On success *m owns the bytes until
 * lp_file_unmap. On failure returns LP_E_IO (cannot open/read, a directory)
 * or LP_E_NOMEM, with `d` naming the file.
 */
enum lp_status lp_file_map(const char *path, enum lp_mem_tag tag,
			   struct lp_mapped *m, struct lp_diag *d);
void lp_file_unmap(struct lp_mapped *m);

/*
 * Same as lp_file_map, except that a regular file's mapping reserves
 * nothing: the caller keeps only part of it resident (lp_file_advise) and
 * reserves what it keeps itself. A pipe or stdin is still read into
 * tracked memory, and is_mmap says which of the two happened.
 */
enum lp_status lp_file_map_unreserved(const char *path, enum lp_mem_tag tag,
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

struct lp_afile {
	FILE *fp;         /* write here */
	char *path;       /* final path */
	char *tmp_path;   /* temporary path, renamed on commit */
};

/* Open a temporary file beside `path`. Returns LP_OK or LP_E_IO. */
enum lp_status lp_afile_open(struct lp_afile *af, const char *path, struct lp_diag *d);
/* Flush, fsync and rename over the final path. Returns LP_OK or LP_E_IO
 * (the temporary file is removed on failure). */
enum lp_status lp_afile_commit(struct lp_afile *af, struct lp_diag *d);
/* Discard the temporary file; safe after commit or on an unopened struct. */
void lp_afile_abort(struct lp_afile *af);

/* Write `len` bytes to `path` atomically (open, write, commit). */
enum lp_status lp_file_write_atomic(const char *path, const void *data, size_t len,
				    struct lp_diag *d);

#endif
