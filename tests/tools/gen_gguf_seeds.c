/*
 * gen_gguf_seeds.c - writes the seed corpus of fuzz_gguf (and the small
 * model used by the `lpipe model info` test):
 *     tests/tools/gen_gguf_seeds tests/fuzz/corpus/fuzz_gguf
 * Built by `make check`, run by hand when the seeds need to change.
 */
#include <stdio.h>
#include <string.h>

#include "tools/gguf_writer.h"

static float data[4096];

static void fill(void)
{
	uint32_t s = 12345;

	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++) {
		s = s * 1664525u + 1013904223u;
		data[i] = (float)(s >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
	}
}

static int save(struct gw *w, const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (gw_write_file(w, path)) {
		perror(path);
		return 1;
	}
	gw_free(w);
	return 0;
}

/* A 1-layer llama with 8 tokens: every key `lpipe model info` reads. */
static struct gw *tiny_llama(void)
{
	static const char *const toks[] = { "<unk>", "<s>", "</s>", "a", "b", "ab", " ", "\xc4\xa0" };
	float scores[8] = { 0, 0, 0, -1, -2, -3, -4, -5 };
	int32_t types[8] = { 2, 3, 3, 1, 1, 1, 1, 1 };
	struct gw *w = gw_new();

	gw_add_str(w, "general.architecture", "llama");
	gw_add_str(w, "general.name", "tiny test llama");
	gw_add_u32(w, "llama.context_length", 128);
	gw_add_u32(w, "llama.embedding_length", 64);
	gw_add_u32(w, "llama.block_count", 1);
	gw_add_u32(w, "llama.feed_forward_length", 96);
	gw_add_u32(w, "llama.attention.head_count", 4);
	gw_add_u32(w, "llama.attention.head_count_kv", 2);
	gw_add_f32(w, "llama.rope.freq_base", 10000.0f);
	gw_add_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
	gw_add_str(w, "tokenizer.ggml.model", "gpt2");
	gw_add_str(w, "tokenizer.ggml.pre", "default");
	gw_add_arr_str(w, "tokenizer.ggml.tokens", toks, 8);
	gw_add_arr(w, "tokenizer.ggml.scores", LP_GGUF_FLOAT32, scores, 8);
	gw_add_arr(w, "tokenizer.ggml.token_type", LP_GGUF_INT32, types, 8);
	gw_add_u32(w, "tokenizer.ggml.bos_token_id", 1);
	gw_add_tensor(w, "token_embd.weight", LP_Q_Q8_0, 2, (uint64_t[]){ 64, 8 }, data);
	gw_add_tensor(w, "blk.0.attn_norm.weight", LP_Q_F32, 1, (uint64_t[]){ 64 }, data);
	gw_add_tensor(w, "blk.0.attn_q.weight", LP_Q_Q4_1, 2, (uint64_t[]){ 64, 64 }, data);
	gw_add_tensor(w, "blk.0.attn_k.weight", LP_Q_Q4_0, 2, (uint64_t[]){ 64, 32 }, data);
	gw_add_tensor(w, "blk.0.attn_v.weight", LP_Q_F16, 2, (uint64_t[]){ 64, 32 }, data);
	gw_add_tensor(w, "output_norm.weight", LP_Q_BF16, 1, (uint64_t[]){ 64 }, data);
	return w;
}

static struct gw *k_types(void)
{
	struct gw *w = gw_new();
	uint64_t ne[2] = { 256, 1 };

	gw_set_version(w, 2);
	gw_add_u32(w, "general.alignment", 64);
	gw_add_tensor(w, "q4k", LP_Q_Q4_K, 2, ne, data);
	gw_add_tensor(w, "q5k", LP_Q_Q5_K, 2, ne, data);
	gw_add_tensor(w, "q6k", LP_Q_Q6_K, 2, ne, data);
	return w;
}

static struct gw *all_values(void)
{
	static const char *const strs[] = { "x", "", "yz" };
	int16_t i16[3] = { -1, 2, -3 };
	double f64[2] = { 1.5, -0.0 };
	unsigned char nested[12 + 12 + 2];
	uint32_t et = LP_GGUF_ARRAY, t16 = LP_GGUF_UINT16;
	uint64_t one = 1;
	uint16_t v = 7;
	struct gw *w = gw_new();

	gw_add_u8(w, "u8", 1);
	gw_add_i8(w, "i8", -1);
	gw_add_u16(w, "u16", 2);
	gw_add_i16(w, "i16", -2);
	gw_add_u32(w, "u32", 3);
	gw_add_i32(w, "i32", -3);
	gw_add_f32(w, "f32", 0.5f);
	gw_add_bool(w, "bool", 1);
	gw_add_str(w, "str", "hello");
	gw_add_u64(w, "u64", 4);
	gw_add_i64(w, "i64", -4);
	gw_add_f64(w, "f64", 2.5);
	gw_add_arr_str(w, "astr", strs, 3);
	gw_add_arr(w, "ai16", LP_GGUF_INT16, i16, 3);
	gw_add_arr(w, "af64", LP_GGUF_FLOAT64, f64, 2);
	memcpy(nested, &et, 4);
	memcpy(nested + 4, &one, 8);
	memcpy(nested + 12, &t16, 4);
	memcpy(nested + 16, &one, 8);
	memcpy(nested + 24, &v, 2);
	gw_add_raw(w, "nested", LP_GGUF_ARRAY, nested, sizeof(nested));
	gw_add_tensor(w, "t", LP_Q_F32, 1, (uint64_t[]){ 4 }, data);
	return w;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";

	fill();
	return save(tiny_llama(), dir, "tiny-llama.gguf") ||
	       save(k_types(), dir, "k-types-v2.gguf") ||
	       save(all_values(), dir, "all-values.gguf");
}
