#include "tools/chat_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "model/vocab.h"
#include "tools/gguf_writer.h"

#define EMBD 64
#define HEADS 4
#define KV_HEADS 2
#define FFN 128
#define LAYERS 2
#define VOCAB 259

static uint64_t rng;

static float frand(void) /* uniform in [-1, 1) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static void add_mat(struct gw *w, const char *name, uint64_t rows, uint64_t cols, float scale)
{
	float *a = malloc(rows * cols * sizeof(float));

	for (size_t i = 0; i < rows * cols; i++)
		a[i] = frand() * scale;
	gw_add_tensor(w, name, LP_Q_F32, 2, (uint64_t[]){ cols, rows }, a);
	free(a);
}

static void add_vec(struct gw *w, const char *name, uint64_t n)
{
	float *a = malloc(n * sizeof(float));

	for (size_t i = 0; i < n; i++)
		a[i] = 1.0f + 0.2f * frand();
	gw_add_tensor(w, name, LP_Q_F32, 1, (uint64_t[]){ n }, a);
	free(a);
}

static void add_vocab(struct gw *w)
{
	static char store[256][5];
	const char *toks[VOCAB], *merges[] = { "a b" };
	int32_t types[VOCAB];

	for (unsigned b = 0; b < 256; b++) {
		memset(store[b], 0, 5);
		lp_utf8_encode(lp_vocab_byte_to_cp((unsigned char)b), (unsigned char *)store[b]);
		toks[b] = store[b];
		types[b] = LP_TOKEN_NORMAL;
	}
	toks[256] = "ab";
	toks[257] = "<|im_start|>";
	toks[258] = "<|im_end|>";
	types[256] = LP_TOKEN_NORMAL;
	types[257] = types[258] = LP_TOKEN_CONTROL;
	gw_add_str(w, "tokenizer.ggml.model", "gpt2");
	gw_add_str(w, "tokenizer.ggml.pre", "smollm");
	gw_add_arr_str(w, "tokenizer.ggml.tokens", toks, VOCAB);
	gw_add_arr(w, "tokenizer.ggml.token_type", LP_GGUF_INT32, types, VOCAB);
	gw_add_arr_str(w, "tokenizer.ggml.merges", merges, 1);
	gw_add_u32(w, "tokenizer.ggml.bos_token_id", 257);
	gw_add_u32(w, "tokenizer.ggml.eos_token_id", 258);
	gw_add_str(w, "tokenizer.chat_template",
		   "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
		   "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}");
}

int chat_model_write(const char *path, uint64_t seed)
{
	return chat_model_write_layers(path, seed, LAYERS);
}

int chat_model_write_layers(const char *path, uint64_t seed, uint32_t layers)
{
	struct gw *w = gw_new();
	uint32_t hd = EMBD / HEADS, kv = KV_HEADS * hd;
	int rc;

	rng = seed * 2654435761u + 1;
	gw_add_str(w, "general.architecture", "llama");
	gw_add_u32(w, "llama.embedding_length", EMBD);
	gw_add_u32(w, "llama.block_count", layers);
	gw_add_u32(w, "llama.feed_forward_length", FFN);
	gw_add_u32(w, "llama.attention.head_count", HEADS);
	gw_add_u32(w, "llama.attention.head_count_kv", KV_HEADS);
	gw_add_u32(w, "llama.context_length", 4096);
	gw_add_f32(w, "llama.rope.freq_base", 10000.0f);
	gw_add_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
	gw_add_u32(w, "llama.rope.dimension_count", hd);
	add_vocab(w);
	add_mat(w, "token_embd.weight", VOCAB, EMBD, 1.0f);
	add_vec(w, "output_norm.weight", EMBD);
	add_mat(w, "output.weight", VOCAB, EMBD, 2.0f / sqrtf(EMBD));
	for (uint32_t l = 0; l < layers; l++) {
		char n[64];
#define NAME(x) (snprintf(n, sizeof(n), "blk.%u." x, l), n)
		add_vec(w, NAME("attn_norm.weight"), EMBD);
		add_mat(w, NAME("attn_q.weight"), EMBD, EMBD, 2.0f / sqrtf(EMBD));
		add_mat(w, NAME("attn_k.weight"), kv, EMBD, 2.0f / sqrtf(EMBD));
		add_mat(w, NAME("attn_v.weight"), kv, EMBD, 1.0f / sqrtf(EMBD));
		add_mat(w, NAME("attn_output.weight"), EMBD, EMBD, 1.0f / sqrtf(EMBD));
		add_vec(w, NAME("ffn_norm.weight"), EMBD);
		add_mat(w, NAME("ffn_gate.weight"), FFN, EMBD, 1.0f / sqrtf(EMBD));
		add_mat(w, NAME("ffn_up.weight"), FFN, EMBD, 1.0f / sqrtf(EMBD));
		add_mat(w, NAME("ffn_down.weight"), EMBD, FFN, 1.0f / sqrtf(FFN));
#undef NAME
	}
	rc = gw_write_file(w, path);
	gw_free(w);
	return rc;
}
