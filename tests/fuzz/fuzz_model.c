/* fuzz_model.c - hostile GGUF files through the model loader, a context
 * and a three-token evaluation: errors are fine, crashes and sanitizer
 * reports are not. */
#include <stddef.h>
#include <stdint.h>

#include "model/forward.h"
#include "model/gguf.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_diag d;
	struct lp_gguf *g;
	struct lp_model *m;
	struct lp_forward *c;

	lp_diag_init(&d);
	if (lp_gguf_open_bytes("fuzz.gguf", data, size, &g, &d))
		return 0;
	if (lp_model_load(g, &m, &d) == LP_OK) {
		struct lp_forward_params p = lp_forward_default_params();
		p.n_ctx = 4;
		p.n_threads = 1;
		p.kv_type = LP_Q_F32;
		if (lp_forward_new(m, &p, &c, &d) == LP_OK) {
			int32_t t[3];
			for (int i = 0; i < 3; i++)
				t[i] = (int32_t)(i % m->hp.n_vocab);
			lp_forward_eval(c, t, 3, 0, NULL, &d);
			lp_forward_eval(c, t, 1, 3, NULL, &d);
			lp_forward_free(c);
		}
		lp_model_free(m);
	}
	lp_gguf_close(g);
	return 0;
}
