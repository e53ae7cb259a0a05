/* tiny_model.c - see tiny_model.h. */
#include "tiny_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gguf_writer.h"

struct tiny_spec tiny_default_spec(void)
{
	return (struct tiny_spec){ .type = LP_Q_F32, .embd = 64, .heads = 2, .kv_heads = 1,
				   .ffn = 128, .vocab = 256, .layers = 2, .n_ctx_train = 1024 };
}

struct tiny_spec tiny_layered_spec(void)
{
	struct tiny_spec s = tiny_default_spec();

	s.layers = 6;
	s.embd = 128;
	s.heads = 4;
	s.kv_heads = 2;
	s.ffn = 384;
	return s;
}

static uint64_t state;

static float frand(void) /* uniform in [-1, 1) */
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (float)((state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static void add(struct gw *w, const char *name, enum lp_qtype t, uint64_t rows,
		uint64_t cols, float base, float scale)
{
	float *a = malloc(rows * cols * sizeof(float));

	if (!a)
		abort();
	for (size_t i = 0; i < rows * cols; i++)
		a[i] = base + frand() * scale;
	if (rows == 1)
		gw_add_tensor(w, name, LP_Q_F32, 1, (uint64_t[]){ cols }, a);
	else
		gw_add_tensor(w, name, t, 2, (uint64_t[]){ cols, rows }, a);
	free(a);
}

int tiny_model_write(const char *path, const struct tiny_spec *s, uint64_t seed)
{
	struct gw *w = gw_new();
	uint32_t hd = s->embd / s->heads, kv = s->kv_heads * hd;
	float sc = 1.0f / sqrtf((float)s->embd);
	char n[64];
	int rc;

	state = seed * 2654435761u + 1;
	gw_add_str(w, "general.architecture", "llama");
	gw_add_str(w, "general.name", "tiny");
	gw_add_u32(w, "llama.embedding_length", s->embd);
	gw_add_u32(w, "llama.block_count", s->layers);
	gw_add_u32(w, "llama.feed_forward_length", s->ffn);
	gw_add_u32(w, "llama.attention.head_count", s->heads);
	gw_add_u32(w, "llama.attention.head_count_kv", s->kv_heads);
	gw_add_u32(w, "llama.context_length", s->n_ctx_train);
	gw_add_f32(w, "llama.rope.freq_base", 10000.0f);
	gw_add_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
	gw_add_u32(w, "llama.rope.dimension_count", hd);
	add(w, "token_embd.weight", s->type, s->vocab, s->embd, 0, 1);
	add(w, "output_norm.weight", s->type, 1, s->embd, 1, 0.2f);
	if (!s->tied)
		add(w, "output.weight", s->type, s->vocab, s->embd, 0, sc);
	for (uint32_t l = 0; l < s->layers; l++) {
#define NAME(x) (snprintf(n, sizeof(n), "blk.%u." x, l), n)
		add(w, NAME("attn_norm.weight"), s->type, 1, s->embd, 1, 0.2f);
		add(w, NAME("attn_q.weight"), s->type, s->embd, s->embd, 0, sc);
		add(w, NAME("attn_k.weight"), s->type, kv, s->embd, 0, sc);
		add(w, NAME("attn_v.weight"), s->type, kv, s->embd, 0, sc);
		add(w, NAME("attn_output.weight"), s->type, s->embd, s->embd, 0, sc);
		add(w, NAME("ffn_norm.weight"), s->type, 1, s->embd, 1, 0.2f);
		add(w, NAME("ffn_gate.weight"), s->type, s->ffn, s->embd, 0, sc);
		add(w, NAME("ffn_up.weight"), s->type, s->ffn, s->embd, 0, sc);
		add(w, NAME("ffn_down.weight"), s->type, s->embd, s->ffn, 0, sc);
#undef NAME
	}
	rc = gw_write_file(w, path);
	gw_free(w);
	return rc;
}
