/* fuzz_document.c - any bytes through lp_document_from_bytes (both modes),
 * then sentence and paragraph iteration over what it accepts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "text/document.h"
#include "text/sentence.h"

static void check_spans(const char *t, size_t len,
			int (*next)(const char *, size_t, size_t *, struct lp_span *))
{
	size_t pos = 0, last_end = 0;
	struct lp_span s;

	while (next(t, len, &pos, &s)) {
		if (!s.len || s.off < last_end || s.off + s.len > len || pos != s.off + s.len)
			abort();
		last_end = s.off + s.len;
	}
	if (pos != len)
		abort();
}

static void check_mode(const uint8_t *data, size_t size, enum lp_invalid_utf8 mode)
{
	struct lp_document doc;
	struct lp_diag d;

	lp_diag_init(&d);
	if (lp_document_from_bytes("fuzz", data, size, mode, &doc, &d)) {
		if (d.status != LP_E_INPUT || !d.msg[0])
			abort();
		return;
	}
	if (lp_utf8_find_invalid((const unsigned char *)doc.text, doc.len) != doc.len ||
	    memchr(doc.text, '\r', doc.len) || memchr(doc.text, '\0', doc.len))
		abort();
	if (mode == LP_UTF8_ERROR && doc.n_replaced)
		abort();
	check_spans(doc.text, doc.len, lp_sentence_next);
	check_spans(doc.text, doc.len, lp_paragraph_next);
	lp_document_release(&doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_mode(data, size, LP_UTF8_ERROR);
	check_mode(data, size, LP_UTF8_REPLACE);
	/* The segmenters must also survive bytes no loader cleaned. */
	check_spans((const char *)data, size, lp_sentence_next);
	return 0;
}
