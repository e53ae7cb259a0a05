/* fuzz_html.c - any bytes through lp_read_html (see fuzz_readers.h). */
#include "fuzz_readers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_reader(lp_read_html, data, size);
}
