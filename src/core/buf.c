#include "core/buf.h"
#include "core/mem.h"

#include <stdio.h>
#include <string.h>

static char buf_empty[1];

void lp_buf_init(struct lp_buf *b)
{
	b->data = buf_empty;
	b->len = 0;
	b->cap = 0;
}

void lp_buf_release(struct lp_buf *b)
{
	if (b->cap)
		lp_mem_free(b->data);
	lp_buf_init(b);
}

void lp_buf_reset(struct lp_buf *b)
{
	b->len = 0;
	if (b->cap)
		b->data[0] = '\0';
}

enum lp_status lp_buf_grow(struct lp_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > (size_t)-1 - b->len - 1)
		return LP_E_NOMEM;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return LP_OK;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > (size_t)-1 / 2 ? need : cap * 2;
	p = lp_mem_realloc(LP_MEM_OTHER, b->cap ? b->data : NULL, cap, NULL);
	if (!p)
		return LP_E_NOMEM;
	if (!b->cap)
		p[0] = '\0';
	b->data = p;
	b->cap = cap;
	return LP_OK;
}

enum lp_status lp_buf_add(struct lp_buf *b, const void *data, size_t len)
{
	if (lp_buf_grow(b, len))
		return LP_E_NOMEM;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return LP_OK;
}

enum lp_status lp_buf_adds(struct lp_buf *b, const char *s)
{
	return lp_buf_add(b, s, strlen(s));
}

enum lp_status lp_buf_addc(struct lp_buf *b, char c)
{
	return lp_buf_add(b, &c, 1);
}

enum lp_status lp_buf_vaddf(struct lp_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return LP_E_INTERNAL;
	if (lp_buf_grow(b, (size_t)n))
		return LP_E_NOMEM;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return LP_OK;
}

enum lp_status lp_buf_addf(struct lp_buf *b, const char *fmt, ...)
{
	va_list ap;
	enum lp_status s;

	va_start(ap, fmt);
	s = lp_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return s;
}

char *lp_buf_detach(struct lp_buf *b, size_t *len)
{
	char *p;

	if (!b->cap && lp_buf_grow(b, 0))
		return NULL;
	p = b->data;
	if (len)
		*len = b->len;
	lp_buf_init(b);
	return p;
}
