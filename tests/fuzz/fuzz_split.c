/*
 * fuzz_split.c - the chunker's invariants on any text.
 *
 * Byte 0 picks the unit and boundary, byte 1 the size, byte 2 the overlap,
 * byte 3 the regex pattern; the rest, cleaned by lp_document_from_bytes in
 * replace mode, is the text. Every invariant of text/split.h is checked and
 * a violation aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/utf8.h"
#include "text/document.h"
#include "text/split.h"

static const char *const patterns[] = { "(?m)^#+ ", "\\n\\n+", "[.!?]\\s", "x*", "(?<=\\.)" };

static int is_space_at(const char *t, size_t len, size_t i, size_t *n)
{
	uint32_t cp;
	int k = lp_utf8_decode((const unsigned char *)t + i, len - i, &cp);

	*n = k ? (size_t)k : 1;
	return k && lp_utf8_is_space(cp);
}

static void assert_blank(const char *t, size_t len, size_t from, size_t to)
{
	size_t n;

	for (size_t i = from; i < to; i += n)
		if (!is_space_at(t, len, i, &n))
			abort();
}

/* Units (sorted, disjoint) lying inside [a, b), by binary search. */
static size_t units_in(const struct lp_span *u, size_t nu, size_t a, size_t b)
{
	size_t lo = 0, hi = nu, first, last;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u[mid].off < a) lo = mid + 1; else hi = mid;
	}
	first = lo;
	hi = nu;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u[mid].off + u[mid].len <= b) lo = mid + 1; else hi = mid;
	}
	last = lo;
	return last > first ? last - first : 0;
}

static int cp_start(const char *t, size_t len, size_t i)
{
	return i == len || ((unsigned char)t[i] & 0xC0) != 0x80;
}

static void check(const struct lp_split_params *p, const char *t, size_t len)
{
	struct lp_split_params one = *p;
	struct lp_splitter *s, *su;
	struct lp_span *v, *u;
	size_t n, nu, covered = 0, sp;

	one.size = 1;
	one.overlap = 0;
	one.boundary = LP_BOUNDARY_NONE;
	if (lp_split_new(p, &s, NULL) || lp_split_new(&one, &su, NULL))
		abort();
	if (lp_split_run(s, t, len, &v, &n, NULL) || lp_split_run(su, t, len, &u, &nu, NULL))
		abort();
	for (size_t i = 0; i < n; i++) {
		size_t off = v[i].off, end = off + v[i].len;
		if (end > len || !v[i].len || !cp_start(t, len, off) || !cp_start(t, len, end) ||
		    is_space_at(t, len, off, &sp) || units_in(u, nu, off, end) > p->size)
			abort();
		assert_blank(t, len, covered, off > covered ? off : covered);
		if (i) {
			size_t pend = v[i - 1].off + v[i - 1].len;
			if (off <= v[i - 1].off || end <= pend)
				abort();
			if (p->overlap == 0 ? off < pend : units_in(u, nu, off, pend) != p->overlap)
				abort();
		}
		if (end > covered)
			covered = end;
	}
	assert_blank(t, len, covered, len);
	lp_mem_free(v);
	lp_mem_free(u);
	lp_split_free(s);
	lp_split_free(su);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_split_params p = lp_split_default_params();
	struct lp_document doc;

	if (size < 4)
		return 0;
	p.unit = (enum lp_split_unit)(data[0] % 6);
	p.boundary = (enum lp_split_boundary)(data[0] / 6 % 3);
	p.size = 1 + data[1] % 64;
	p.overlap = data[2] % p.size;
	p.pattern = patterns[data[3] % (sizeof(patterns) / sizeof(patterns[0]))];
	if (lp_document_from_bytes("fuzz", data + 4, size - 4, LP_UTF8_REPLACE, &doc, NULL))
		return 0;
	check(&p, doc.text, doc.len);
	lp_document_release(&doc);
	return 0;
}
