/* fuzz_textread.c - any bytes through the plain-text reader into the
 * document model, cleaned first as a load cleans them (both ways), and
 * raw: blocks must lie inside the clean text, in order, and the clean text
 * must be valid UTF-8 whatever the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "doc/model.h"
#include "doc/textread.h"
#include "text/document.h"

static void check_model(const struct lp_doc_model *m, int clean)
{
	char path[256];

	if (clean && lp_utf8_find_invalid((const unsigned char *)m->text, m->len) != m->len)
		abort();
	for (size_t i = 0; i < m->n_blocks; i++) {
		const struct lp_doc_block *b = &m->blocks[i];

		if (b->off > m->len || b->len > m->len - b->off)
			abort();
		if (i && b->off < m->blocks[i - 1].off + m->blocks[i - 1].len)
			abort();
		if (b->first_cell + b->n_cells > m->n_cells)
			abort();
		if (b->term != LP_DOC_NONE && b->term >= i)
			abort();
		if (b->section != LP_DOC_NONE && b->section >= i)
			abort();
		if (lp_doc_model_find(m, b->off) != i)
			abort();
		lp_doc_model_section_path(m, i, path, sizeof(path));
		if (clean &&
		    lp_utf8_find_invalid((const unsigned char *)path, strlen(path)) != strlen(path))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_document doc;
	struct lp_doc_model m;
	struct lp_textread_stats st;
	struct lp_diag d;

	lp_diag_init(&d);
	if (!lp_document_from_bytes_as("fuzz", data, size, LP_UTF8_REPLACE, LP_DOC_FORMAT_TEXT,
				       &doc, &d)) {
		check_model(&doc.model, 1);
		if (lp_textread_count_breaks(doc.text, doc.len) > doc.len)
			abort();
		lp_document_release(&doc);
	} else if (d.status != LP_E_INPUT) {
		abort();
	}
	/* raw bytes: the reader must not trust that a load cleaned them */
	lp_diag_init(&d);
	lp_doc_model_init(&m, (const char *)data, size);
	if (lp_textread_run("fuzz", (const char *)data, size, lp_doc_model_sink(&m), &st, &d) ==
		    LP_OK &&
	    lp_doc_model_finish(&m, "fuzz", &d) == LP_OK)
		check_model(&m, 0);
	lp_doc_model_release(&m);
	return 0;
}
