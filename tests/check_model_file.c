/*
 * check_model_file.c - the real SmolLM2-135M-Instruct Q4_1 file, when it is
 * around: $LPIPE_MODEL_DIR/SmolLM2-135M-Instruct.Q4_1.gguf or
 * ~/.cache/lpipe/models/SmolLM2-135M-Instruct.Q4_1.gguf. Exits 77 (skip)
 * when neither exists.
 *
 * Checks the hyper-parameters and pins a few dequantized weights against
 * values computed independently with the Python gguf package:
 *     r = gguf.GGUFReader(path); t = {x.name: x for x in r.tensors}[NAME]
 *     d = gguf.quants.dequantize(t.data, t.tensor_type)
 *     [float(v).hex() for v in d[ROW][:6]], float(d[ROW].astype('f8').sum())
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend/backend.h"
#include "model/gguf.h"
#include "quant/quant.h"

static int failures;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)

static const char *find_model(char *buf, size_t cap)
{
	const char *dir = getenv("LPIPE_MODEL_DIR"), *home = getenv("HOME");

	if (dir) {
		snprintf(buf, cap, "%s/SmolLM2-135M-Instruct.Q4_1.gguf", dir);
		if (!access(buf, R_OK))
			return buf;
	}
	if (home) {
		snprintf(buf, cap, "%s/.cache/lpipe/models/SmolLM2-135M-Instruct.Q4_1.gguf", home);
		if (!access(buf, R_OK))
			return buf;
	}
	return NULL;
}

static void check_row(const struct lp_gguf *g, const char *name, enum lp_qtype type,
		      uint64_t row, const double first[6], double sum)
{
	const struct lp_gguf_tensor *t = lp_gguf_find_tensor(g, name);
	float y[4096];
	double s = 0;

	CHECK(t && t->type == type && t->ne[0] <= 4096);
	if (!t || t->type != type || t->ne[0] > 4096)
		return;
	lp_dequantize_row(t->type, (const unsigned char *)t->data +
			  row * lp_qtype_row_bytes(t->type, t->ne[0]), y, (size_t)t->ne[0]);
	for (int i = 0; i < 6; i++)
		CHECK(y[i] == (float)first[i]);
	for (uint64_t i = 0; i < t->ne[0]; i++)
		s += y[i];
	CHECK(fabs(s - sum) < 1e-9);
}

int main(void)
{
	static const double embd[6] = { -0x1.ca8p-4, -0x1.2efp-4, 0x1.372p-5, -0x1.26cp-6,
					 -0x1.4b98p-3, -0x1.478p-7 };
	static const double down[6] = { 0x1.6ap-3, -0x1.898p-4, 0x1.1e1p-1, -0x1.0ap-2,
					 0x1.15p-4, 0x1.acp-7 };
	static const double q29[6] = { 0x1.e2cp-5, -0x1.082p-4, 0x1.ccp-6, 0x1.e2cp-5,
				       -0x1.6cp-9, 0x1.f3dp-3 };
	char path[4096];
	struct lp_gguf *g;
	struct lp_diag d;
	const struct lp_gguf_kv *kv;
	uint64_t u;
	double f;

	if (!find_model(path, sizeof(path))) {
		printf("check_model_file: SmolLM2-135M-Instruct.Q4_1.gguf not found, skipped\n");
		return 77;
	}
	lp_diag_init(&d);
	if (lp_gguf_open(path, &g, &d)) {
		lp_diag_print(&d, stderr);
		return 1;
	}
	CHECK(lp_gguf_get_u64(g, "llama.block_count", &u) && u == 30);
	CHECK(lp_gguf_get_u64(g, "llama.embedding_length", &u) && u == 576);
	CHECK(lp_gguf_get_u64(g, "llama.feed_forward_length", &u) && u == 1536);
	CHECK(lp_gguf_get_u64(g, "llama.attention.head_count", &u) && u == 9);
	CHECK(lp_gguf_get_u64(g, "llama.attention.head_count_kv", &u) && u == 3);
	CHECK(lp_gguf_get_f64(g, "llama.rope.freq_base", &f) && f == 100000.0);
	kv = lp_gguf_find(g, "tokenizer.ggml.tokens");
	CHECK(kv && kv->type == LP_GGUF_ARRAY && kv->v.arr.n == 49152);
	CHECK(lp_gguf_n_tensors(g) == 272);
	check_row(g, "token_embd.weight", LP_Q_Q8_0, 1000, embd, 1.9784250259399414);
	check_row(g, "blk.0.ffn_down.weight", LP_Q_Q4_1, 7, down, -7.4338226318359375);
	check_row(g, "blk.29.attn_q.weight", LP_Q_Q4_1, 575, q29, 0.1107177734375);
	lp_gguf_close(g);
	printf("check_model_file: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
