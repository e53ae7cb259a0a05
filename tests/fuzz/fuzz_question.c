/*
 * fuzz_question.c - what a question asks (text/focus.h), whether it asks
 * for the document's words (text/request.h), the prices of a text
 * (text/money.h), whether a sentence stands alone (text/alone.h) and the
 * sides of a sentence with the shapes of its names (text/sides.h), on any
 * bytes.
 *
 * The input is the question and the text both: the focus tokens of the
 * input are looked for in the input itself, its kind of answer and
 * quantity are read, and cuts of it are checked for standing alone.
 * Invariants, a violation aborts: tokens are in order, non-empty and
 * inside the input; a token without white space is held by the input (a
 * quoted phrase may hold a run of spaces, which matches as one); counts never
 * exceed their cap; a request's topic and a price lie inside the input, a
 * price holds its number; the sides are in order, non-empty, and cover
 * the input; nothing reads outside the input (ASan, and the copy
 * below is exactly as long as the input, plus the NUL lp_focus_asks
 * needs).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/alone.h"
#include "text/focus.h"
#include "text/money.h"
#include "text/request.h"
#include "text/sides.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *q = malloc(size + 1);
	size_t pos = 0, end = 0;
	struct lp_span tok, kind;

	if (!q)
		return 0;
	memcpy(q, data, size);
	q[size] = '\0';
	while (lp_focus_next(q, size, &pos, &tok)) {
		if (!tok.len || tok.off < end || tok.off + tok.len > size || pos < tok.off + tok.len)
			abort();
		end = tok.off + tok.len;
		/* a token without white space is held by its own text (a
		 * phrase's run of spaces would match only one) */
		if (!memchr(q + tok.off, ' ', tok.len) && !lp_focus_held(q, size, q + tok.off, tok.len))
			abort();
		if (lp_focus_count(q, size, q + tok.off, tok.len, 3) > 3)
			abort();
		(void)lp_focus_is_name(q + tok.off, tok.len);
	}
	switch (lp_focus_asks(q, &kind)) {
	case LP_ASKS_NAME:
		if (!kind.len || kind.off + kind.len > strlen(q))
			abort();
		break;
	case LP_ASKS_QUANTITY:
	case LP_ASKS_OTHER:
		if (kind.len)
			abort();
		break;
	default:
		abort();
	}
	(void)lp_focus_has_number(q, size);
	(void)lp_focus_quantity_held(q, q, size);
	{
		/* a question uses every word it holds; half of it may not */
		struct lp_span w[4];
		size_t n = lp_focus_absent_words(q, q, strlen(q), w, 4);
		if (n)
			abort();
		n = lp_focus_absent_words(q, q + size / 2, strlen(q + size / 2), w, 4);
		for (size_t i = 0; i < n && i < 4; i++)
			if (w[i].len < 4 || w[i].off + w[i].len > strlen(q))
				abort();
	}
	if (lp_request_quote(q, &tok) && (!tok.len || tok.off + tok.len > strlen(q)))
		abort();
	(void)lp_money_named(q, size);
	for (size_t i = 0; i < size; i++) {
		size_t n = 0;
		struct lp_span price;

		while (i + n < size && q[i + n] >= '0' && q[i + n] <= '9')
			n++;
		if (n && lp_money_price(q, size, i, n, &price) &&
		    (price.off > i || price.off + price.len < i + n || price.off + price.len > size))
			abort();
		i += n;
	}
	for (size_t i = 0; i <= size; i += 1 + size / 8)
		(void)lp_alone_check(q + i, size - i);
	{
		struct lp_span side[8];
		size_t k = lp_sides_of(q, size, side, 8), at = 0;
		for (size_t i = 0; i < k; i++) {
			if (side[i].off != at || !side[i].len)
				abort();
			at += side[i].len;
			(void)lp_sides_holds_like(q + side[i].off, side[i].len, ~0u);
			(void)lp_name_shape(q, side[i].off, side[i].len);
		}
		if (at != size)
			abort();
	}
	free(q);
	return 0;
}
