/*
 * buf.h - growable byte string (git's strbuf).
 *
 * Invariant: after lp_buf_init, `data` is never NULL and data[len] == '\0',
 * so a buffer can be passed as a C string at any time. Growth goes through
 * the tracked allocator (tag LP_MEM_OTHER). Functions that can grow return
 * LP_OK or LP_E_NOMEM; on failure the buffer is unchanged.
 */
#ifndef LP_BUF_H
#define LP_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "core/status.h"

struct lp_buf {
	char *data;
	size_t len; /* bytes, excluding the terminating NUL */
	size_t cap; /* allocated bytes, 0 while data points at a static "" */
};

void lp_buf_init(struct lp_buf *b);
void lp_buf_release(struct lp_buf *b);
/* Empty the buffer, keeping its storage. */
void lp_buf_reset(struct lp_buf *b);
/* Make room for `extra` more bytes. */
enum lp_status lp_buf_grow(struct lp_buf *b, size_t extra);
enum lp_status lp_buf_add(struct lp_buf *b, const void *data, size_t len);
enum lp_status lp_buf_adds(struct lp_buf *b, const char *s);
enum lp_status lp_buf_addc(struct lp_buf *b, char c);
enum lp_status lp_buf_addf(struct lp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
enum lp_status lp_buf_vaddf(struct lp_buf *b, const char *fmt, va_list ap);
/* Hand the string to the caller, who now owns it and frees it with
 * lp_mem_free(); the buffer is left empty and initialised. Never NULL
 * unless out of memory. */
char *lp_buf_detach(struct lp_buf *b, size_t *len);

#endif
