/*
 * bench_gpu.c - prefill and decode speed of one model on the GPU and on the
 * CPU, in one process, for tests/gpu/run.sh.
 *
 *   bench_gpu MODEL.gguf [--write] [--prefill N] [--decode N] [--threads N]
 *
 * With --write, MODEL.gguf is first written: random weights with exactly
 * SmolLM2-135M's shapes (embd 576, 30 layers, 9 heads, 3 KV heads, ffn
 * 1536, vocab 49152) and Q4_1 matrices. Then, on the CUDA backend (every
 * layer offloaded) and on the CPU backend: a prompt of N random tokens
 * (default 512) in one eval, timed; then greedy decoding of N tokens
 * (default 64), timed per token after one warm-up token. Prints lines that
 * run.sh reads:
 *   model_bytes B
 *   bench DEV prefill_tok_s X decode_tok_s Y decode_ms Z
 *   peak_gpu_bytes B
 *   prefill_logits_maxerr E      (GPU against CPU, relative to max |cpu|)
 *   greedy_match K N             (decoded tokens identical to the CPU's)
 * Exit 0, 1 on an error, 77 when the CUDA backend does not open (the CPU
 * figures are still printed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "backend/backend.h"
#include "core/mem.h"
#include "model/forward.h"
#include "model/gguf.h"
#include "model/model.h"
#include "tools/tiny_model.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int argmax(const float *v, uint32_t n)
{
	int best = 0;

	for (uint32_t i = 1; i < n; i++)
		if (v[i] > v[best])
			best = (int)i;
	return best;
}

struct run {
	double prefill_s, decode_s;
	float *prefill_logits;
	int32_t *tokens;   /* decoded */
};

static int run_one(const struct lp_model *m, struct lp_backend *gpu, const int32_t *prompt,
		   uint32_t n_prompt, uint32_t n_decode, int threads, struct run *r)
{
	struct lp_forward_params p = lp_forward_default_params();
	uint32_t n_vocab = m->hp.n_vocab;
	struct lp_forward *c;
	struct lp_diag d;
	float *logits = malloc(n_vocab * sizeof(float));
	int32_t tok;
	double t0;

	lp_diag_init(&d);
	p.n_ctx = n_prompt + n_decode + 8;
	p.n_threads = threads;
	p.kv_type = LP_Q_F16;
	if (gpu) {
		p.offload = gpu;
		p.gpu_layers = m->hp.n_layer;
	}
	if (lp_forward_new(m, &p, &c, &d) != LP_OK) {
		fprintf(stderr, "bench_gpu: %s\n", d.msg);
		free(logits);
		return -1;
	}
	r->prefill_logits = malloc(n_vocab * sizeof(float));
	r->tokens = malloc(n_decode * sizeof(int32_t));
	t0 = now();
	if (lp_forward_eval(c, prompt, n_prompt, 0, r->prefill_logits, &d) != LP_OK)
		goto fail;
	r->prefill_s = now() - t0;
	/* one warm-up token (a GPU records its decode step here) */
	tok = argmax(r->prefill_logits, n_vocab);
	r->tokens[0] = tok;
	if (lp_forward_eval(c, &tok, 1, n_prompt, logits, &d) != LP_OK)
		goto fail;
	t0 = now();
	for (uint32_t i = 1; i < n_decode; i++) {
		tok = argmax(logits, n_vocab);
		r->tokens[i] = tok;
		if (lp_forward_eval(c, &tok, 1, n_prompt + i, logits, &d) != LP_OK)
			goto fail;
	}
	r->decode_s = (now() - t0) / (n_decode - 1);
	lp_forward_free(c);
	free(logits);
	return 0;
fail:
	fprintf(stderr, "bench_gpu: %s\n", d.msg);
	lp_forward_free(c);
	free(logits);
	return -1;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	uint32_t n_prompt = 512, n_decode = 64;
	int write = 0, threads = 0, rc = 0;
	struct lp_gguf *g = NULL;
	struct lp_model *m = NULL;
	struct lp_backend *gpu = NULL;
	struct lp_backend_params bp = lp_backend_default_params();
	struct run rg = { 0 }, rcpu = { 0 };
	struct lp_diag d;
	struct stat st;
	int32_t *prompt;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--write"))
			write = 1;
		else if (!strcmp(argv[i], "--prefill") && i + 1 < argc)
			n_prompt = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--decode") && i + 1 < argc)
			n_decode = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else
			path = argv[i];
	}
	if (!path || n_prompt < 1 || n_decode < 2) {
		fprintf(stderr, "usage: bench_gpu MODEL.gguf [--write] [--prefill N] [--decode N] "
				"[--threads N]\n");
		return 1;
	}
	lp_diag_init(&d);
	if (write) {
		struct tiny_spec s = { .type = LP_Q_Q4_1, .embd = 576, .heads = 9, .kv_heads = 3,
				       .ffn = 1536, .vocab = 49152, .layers = 30,
				       .n_ctx_train = 8192 };
		if (tiny_model_write(path, &s, 135)) {
			perror(path);
			return 1;
		}
	}
	if (stat(path, &st) || lp_gguf_open(path, &g, &d) || lp_model_load(g, &m, &d)) {
		fprintf(stderr, "bench_gpu: %s: %s\n", path, d.msg);
		return 1;
	}
	printf("model_bytes %lld\n", (long long)st.st_size);
	prompt = malloc(n_prompt * sizeof(int32_t));
	for (uint32_t i = 0; i < n_prompt; i++)
		prompt[i] = (int32_t)((i * 2654435761u + 17) % m->hp.n_vocab);

	if (lp_backend_open("cuda", &bp, &gpu, &d) != LP_OK) {
		printf("bench cuda skipped: %s\n", d.msg);
		rc = 77;
	} else {
		printf("device %s\n", gpu->device);
		if (run_one(m, gpu, prompt, n_prompt, n_decode, threads, &rg))
			rc = 1;
		else
			printf("bench cuda prefill_tok_s %.1f decode_tok_s %.1f decode_ms %.3f\n",
			       n_prompt / rg.prefill_s, 1.0 / rg.decode_s, rg.decode_s * 1e3);
		printf("peak_gpu_bytes %zu\n", lp_mem_peak_gpu());
	}
	if (run_one(m, NULL, prompt, n_prompt, n_decode, threads, &rcpu)) {
		rc = 1;
	} else {
		printf("bench cpu prefill_tok_s %.1f decode_tok_s %.1f decode_ms %.3f\n",
		       n_prompt / rcpu.prefill_s, 1.0 / rcpu.decode_s, rcpu.decode_s * 1e3);
	}
	if (rg.prefill_logits && rcpu.prefill_logits) {
		double num = 0, den = 0;
		uint32_t same = 0;
		for (uint32_t i = 0; i < m->hp.n_vocab; i++) {
			double e = fabs((double)rg.prefill_logits[i] - rcpu.prefill_logits[i]);
			num = e > num ? e : num;
			den = fabs(rcpu.prefill_logits[i]) > den ? fabs(rcpu.prefill_logits[i]) : den;
		}
		while (same < n_decode && rg.tokens[same] == rcpu.tokens[same])
			same++;
		printf("prefill_logits_maxerr %.3g\n", den > 0 ? num / den : num);
		printf("greedy_match %u %u\n", same, n_decode);
	}
	free(rg.prefill_logits);
	free(rg.tokens);
	free(rcpu.prefill_logits);
	free(rcpu.tokens);
	free(prompt);
	lp_backend_free(gpu);
	lp_model_free(m);
	lp_gguf_close(g);
	return rc;
}
