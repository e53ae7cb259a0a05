#include "doc/readers.h"

enum lp_status lp_read_pdf(const char *name, const char *bytes, size_t len,
			   struct lp_doc_sink *sink, struct lp_diag *d)
{
	(void)bytes;
	(void)len;
	(void)sink;
	return lp_diag_set(d, LP_E_INPUT, name, 0, 0, "PDF reader: work in progress");
}
