/* fuzz_readers.h - the check every reader's fuzz target makes: any bytes
 * through the reader under a memory budget, and every block it gives
 * well formed (clean UTF-8, a range inside the input, cells that add up),
 * a failure a known status with a message naming the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/utf8.h"
#include "doc/readers.h"

static enum lp_status fuzz_block(struct lp_doc_sink *sink, const struct lp_block_in *b,
				 struct lp_diag *d)
{
	size_t len = *(size_t *)sink->ctx;

	(void)d;
	if (!b->len || lp_utf8_find_invalid((const unsigned char *)b->text, b->len) != b->len)
		abort();
	if ((unsigned)b->kind >= LP_BLOCK_N_KINDS || b->src_off > len ||
	    b->src_len > len - b->src_off)
		abort();
	if (b->kind == LP_BLOCK_HEADING && (b->level < 1 || b->level > 6))
		abort();
	for (size_t i = 0; i < b->n_cells; i++)
		if (b->cell_lens[i] > b->len)
			abort();
	return LP_OK;
}

static int fuzz_reader(enum lp_status (*read)(const char *, const char *, size_t,
					      struct lp_doc_sink *, struct lp_diag *),
		       const uint8_t *data, size_t size)
{
	struct lp_doc_sink sink = { fuzz_block, &size };
	struct lp_diag d;
	enum lp_status st;

	lp_diag_init(&d);
	lp_mem_set_budget(256u << 20);
	st = read("fuzz", (const char *)data, size, &sink, &d);
	lp_mem_set_budget(0);
	if (st != LP_OK && ((st != LP_E_INPUT && st != LP_E_NOMEM) || !d.msg[0] ||
			    strcmp(d.file, "fuzz")))
		abort();
	if (lp_mem_current(LP_MEM_DOC) > (1u << 20)) /* what a reader leaves behind */
		abort();
	return 0;
}
