/*
 * check_kernels.cu - the kernels that are not ops of backend.h, checked on
 * a GPU against references written here, plus two measurements for
 * tests/gpu/run.sh: the device's copy bandwidth (the decode floor's
 * divisor) and top-k latency over 1,000,000 random 384-d vectors.
 *
 *   LayerNorm with the residual folded in, GELU, masked softmax, mean
 *   pooling with L2 normalisation (issue 12's encoder kernels): f32,
 *   tolerance 1e-5 relative to the output's largest magnitude.
 *   Top-k against lp_topk_select (the CPU scorer's selection) on odd
 *   sizes, ties and NaN: the same indices in the same order, exactly.
 *
 * Lines "maxerr OP CASE ERR TOL", "bandwidth_gbs X", "graph_node_us X"
 * (cost of one kernel in a replayed CUDA graph), "topk_ms NQ X" and
 * "topk_match NQ OK" are what run.sh reads. Exit 0 when every check
 * passed, 1 when one failed, 77 when there is no GPU.
 *
 * Built by run.sh:
 *   nvcc -std=c++17 -arch=sm_90 -I. -Isrc tests/gpu/check_kernels.cu \
 *        kernels/*.cu src/retrieve/topk.c -lcublas -o check_kernels
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/bert.h"
#include "kernels/membw.h"
#include "kernels/topk.h"

extern "C" {
#include "retrieve/topk.h"
}

static int failures;

#define CK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
			cudaGetErrorString(e_)); \
		exit(1); \
	} \
} while (0)

#define CKB(call) do { \
	cublasStatus_t s_ = (call); \
	if (s_ != CUBLAS_STATUS_SUCCESS) { \
		fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, \
			(int)s_); \
		exit(1); \
	} \
} while (0)

static unsigned long long rng = 88172645463325252ull;

static float frand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 40) & 0xffffff) / 8388608.0f - 1.0f;
}

static void expect(const char *op, const char *cs, const float *got, const float *want, size_t n,
		   double tol)
{
	double num = 0, den = 0;

	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)got[i] - want[i]);
		if (isnan(got[i]) != isnan(want[i]))
			e = INFINITY;
		num = e > num ? e : num;
		den = fabs(want[i]) > den ? fabs(want[i]) : den;
	}
	double r = den > 0 ? num / den : num;
	printf("maxerr %s %s %.3g %.0e\n", op, cs, r, tol);
	if (!(r <= tol)) {
		printf("FAIL %s %s\n", op, cs);
		failures++;
	}
}

template <typename T> static T *dput(const T *h, size_t n)
{
	T *d;
	CK(cudaMalloc((void **)&d, n * sizeof(T) + 16));
	CK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
	return d;
}

template <typename T> static void dget(T *h, const T *d, size_t n)
{
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost));
}

/* ---- encoder kernels ------------------------------------------------------ */

static float erf_ref(float z) /* src/retrieve/bert.c's */
{
	float a = fabsf(z), t = 1.0f / (1.0f + 0.3275911f * a);
	float p = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f +
		  t * (-1.453152027f + t * 1.061405429f))));
	float r = 1.0f - p * expf(-a * a);

	return z < 0 ? -r : r;
}

static void check_layernorm_gelu(void)
{
	const int rows = 7, widths[] = { 1, 33, 384, 1537 };

	for (int w = 0; w < 4; w++) {
		int n = widths[w];
		size_t cnt = (size_t)rows * n;
		float *x = (float *)malloc(cnt * 4), *r = (float *)malloc(cnt * 4);
		float *g = (float *)malloc(n * 4), *b = (float *)malloc(n * 4);
		float *want = (float *)malloc(cnt * 4), *got = (float *)malloc(cnt * 4);
		char cs[32];

		for (size_t i = 0; i < cnt; i++) {
			x[i] = 3 * frand();
			r[i] = frand();
		}
		for (int i = 0; i < n; i++) {
			g[i] = 1 + 0.2f * frand();
			b[i] = 0.1f * frand();
		}
		for (int i = 0; i < rows; i++) {
			double mean = 0, var = 0;
			float row[2048];
			for (int j = 0; j < n; j++)
				mean += row[j] = x[i * n + j] + r[i * n + j];
			mean /= n;
			for (int j = 0; j < n; j++)
				var += (row[j] - mean) * (row[j] - mean);
			float inv = (float)(1.0 / sqrt(var / n + 1e-12));
			for (int j = 0; j < n; j++)
				want[i * n + j] = ((float)(row[j] - mean)) * inv * g[j] + b[j];
		}
		float *dx = dput(x, cnt), *dr = dput(r, cnt), *dg = dput(g, (size_t)n),
		      *db = dput(b, (size_t)n);
		CK(lp_cuk_layernorm(dx, n, dx, n, dr, n, dg, db, rows, n, 1e-12f, 0));
		dget(got, dx, cnt);
		snprintf(cs, sizeof(cs), "residual_%dx%d", rows, n);
		expect("layernorm", cs, got, want, cnt, 1e-5);
		for (size_t i = 0; i < cnt; i++)
			want[i] = 0.5f * x[i] * (1.0f + erf_ref(x[i] * (float)M_SQRT1_2));
		CK(cudaMemcpy(dx, x, cnt * 4, cudaMemcpyHostToDevice));
		CK(lp_cuk_gelu(dx, cnt, 0));
		dget(got, dx, cnt);
		snprintf(cs, sizeof(cs), "%zu", cnt);
		expect("gelu", cs, got, want, cnt, 1e-5);
		cudaFree(dx); cudaFree(dr); cudaFree(dg); cudaFree(db);
		free(x); free(r); free(g); free(b); free(want); free(got);
	}
}

static void check_softmax_pool(void)
{
	const int n_seq = 3, n_head = 2, L = 37, E = 384;
	const int32_t lens[3] = { 37, 5, 1 };
	size_t na = (size_t)n_seq * n_head * L * L, nx = (size_t)n_seq * L * E;
	float *a = (float *)malloc(na * 4), *want = (float *)malloc(na * 4);
	float *got = (float *)malloc(na * 4), *x = (float *)malloc(nx * 4);
	float pw[3 * 384], pg[3 * 384], scale = 0.125f;

	for (size_t i = 0; i < na; i++)
		a[i] = 8 * frand();
	for (size_t row = 0; row < na / L; row++) {
		int len = lens[row / ((size_t)n_head * L)];
		float *r = a + row * L, *o = want + row * L, mx = r[0], sum = 0;
		for (int j = 1; j < len; j++)
			mx = r[j] > mx ? r[j] : mx;
		for (int j = 0; j < len; j++)
			sum += expf((r[j] - mx) * scale);
		for (int j = 0; j < L; j++)
			o[j] = j < len ? expf((r[j] - mx) * scale) / sum : 0.0f;
	}
	float *da = dput(a, na);
	int32_t *dl = dput(lens, 3);
	CK(lp_cuk_softmax_masked(da, n_seq, n_head, L, dl, scale, 0));
	dget(got, da, na);
	expect("softmax_masked", "3x2x37x37", got, want, na, 1e-5);

	for (size_t i = 0; i < nx; i++)
		x[i] = frand();
	for (int s = 0; s < n_seq; s++) {
		double ss = 0;
		for (int j = 0; j < E; j++) {
			float v = 0;
			for (int t = 0; t < lens[s]; t++)
				v += x[((size_t)s * L + t) * E + j];
			pw[s * E + j] = v;
			ss += (double)v * v;
		}
		for (int j = 0; j < E; j++)
			pw[s * E + j] *= (float)(1.0 / sqrt(ss));
	}
	float *dx = dput(x, nx), *dout;
	CK(cudaMalloc((void **)&dout, sizeof(pg)));
	CK(lp_cuk_mean_pool_l2(dx, n_seq, L, E, dl, dout, 0));
	dget(pg, dout, (size_t)n_seq * E);
	expect("mean_pool_l2", "3x37x384", pg, pw, (size_t)n_seq * E, 1e-5);
	cudaFree(da); cudaFree(dl); cudaFree(dx); cudaFree(dout);
	free(a); free(want); free(got); free(x);
}

/* ---- top-k ----------------------------------------------------------------- */

/* Rows of `scores` on the device against lp_topk_select: same indices,
 * same order. */
static int topk_agrees(const float *h, int n_q, int n, int k, const int32_t *idx, const char *cs)
{
	double *sd = (double *)malloc((size_t)n * sizeof(double));
	size_t *want = (size_t *)malloc((size_t)k * sizeof(size_t));
	int bad = 0;

	for (int q = 0; q < n_q; q++) {
		for (int i = 0; i < n; i++)
			sd[i] = h[(size_t)q * n + i];
		size_t m = lp_topk_select(sd, (size_t)n, (size_t)k, want);
		for (int j = 0; j < k; j++) {
			long w = j < (int)m ? (long)want[j] : -1;
			if (idx[(size_t)q * k + j] != w) {
				if (bad < 3)
					printf("topk %s: row %d rank %d: gpu %d, cpu %ld\n", cs, q, j,
					       idx[(size_t)q * k + j], w);
				bad++;
			}
		}
	}
	free(sd);
	free(want);
	return bad == 0;
}

static void check_topk(void)
{
	static const int cases[][4] = {
		/* n_q, n, k, kind: 0 random, 1 ties (few values), 2 with NaN */
		{ 1, 1, 1, 0 }, { 3, 100, 10, 0 }, { 2, 1000, 1000, 1 }, { 2, 5000, 1000, 0 },
		{ 1, 300, 500, 2 }, { 4, 70001, 1000, 1 }, { 5, 4097, 64, 2 }, { 1, 1 << 20, 100, 1 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int n_q = cases[c][0], n = cases[c][1], k = cases[c][2], kind = cases[c][3];
		size_t cnt = (size_t)n_q * n;
		float *h = (float *)malloc(cnt * 4), *out = (float *)malloc((size_t)n_q * k * 4);
		int32_t *idx = (int32_t *)malloc((size_t)n_q * k * 4), *didx;
		float *dout;
		void *scratch;
		char cs[64];

		for (size_t i = 0; i < cnt; i++) {
			h[i] = frand();
			if (kind == 1)
				h[i] = roundf(h[i] * 4) / 4;
			if (kind == 2 && i % 13 == 0)
				h[i] = NAN;
			if (kind == 2 && i % 17 == 0)
				h[i] = -INFINITY;
		}
		float *dh = dput(h, cnt);
		CK(cudaMalloc((void **)&dout, (size_t)n_q * k * 4));
		CK(cudaMalloc((void **)&didx, (size_t)n_q * k * 4));
		CK(cudaMalloc(&scratch, lp_cuk_topk_scratch_bytes(n_q, k)));
		CK(lp_cuk_topk(dh, n, n_q, n, k, scratch, dout, didx, 0));
		dget(idx, didx, (size_t)n_q * k);
		snprintf(cs, sizeof(cs), "%dx%d_k%d_%s", n_q, n, k,
			 kind == 0 ? "random" : kind == 1 ? "ties" : "nan");
		int ok = topk_agrees(h, n_q, n, k, idx, cs);
		printf("topk_check %s %s\n", cs, ok ? "ok" : "MISMATCH");
		if (!ok)
			failures++;
		cudaFree(dh); cudaFree(dout); cudaFree(didx); cudaFree(scratch);
		free(h); free(out); free(idx);
	}
}

/* Deterministic pseudo-random f16 in [-1, 1) from the index. */
static __global__ void fill_f16(__half *v, size_t n, uint32_t seed)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		uint32_t x = (uint32_t)i * 2654435761u ^ seed;
		x ^= x >> 15;
		x *= 2246822519u;
		x ^= x >> 13;
		v[i] = __float2half((float)(x >> 8) / 8388608.0f - 1.0f);
	}
}

/* Latency of all queries against 1,000,000 vectors: one GEMM (f16 in, f32
 * accumulate) and the top-k, timed with events; and the selection of one
 * row checked against the CPU's on the very scores. */
static void topk_latency(void)
{
	const int n = 1000000, dim = 384, k = 100, qs[2] = { 1, 1000 };
	__half *vec, *qv;
	float *scores, *dout;
	int32_t *didx;
	void *scratch;
	cublasHandle_t h;
	cudaEvent_t e0, e1;
	const float one = 1.0f, zero = 0.0f;

	CK(cudaMalloc((void **)&vec, (size_t)n * dim * 2));
	CK(cudaMalloc((void **)&qv, (size_t)1000 * dim * 2));
	CK(cudaMalloc((void **)&scores, (size_t)1000 * n * 4));
	CK(cudaMalloc((void **)&dout, (size_t)1000 * k * 4));
	CK(cudaMalloc((void **)&didx, (size_t)1000 * k * 4));
	CK(cudaMalloc(&scratch, lp_cuk_topk_scratch_bytes(1000, k)));
	fill_f16<<<(unsigned)(((size_t)n * dim + 255) / 256), 256>>>(vec, (size_t)n * dim, 1);
	fill_f16<<<(1000 * dim + 255) / 256, 256>>>(qv, (size_t)1000 * dim, 2);
	CK(cudaGetLastError());
	CKB(cublasCreate(&h));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int qi = 0; qi < 2; qi++) {
		int nq = qs[qi];
		float best = 1e30f;
		for (int rep = 0; rep < 8; rep++) {
			float ms;
			CK(cudaEventRecord(e0));
			/* scores (nq x n, row-major) = Q (nq x dim) V^T */
			CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, nq, dim, &one, vec, CUDA_R_16F,
					 dim, qv, CUDA_R_16F, dim, &zero, scores, CUDA_R_32F, n,
					 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
			CK(lp_cuk_topk(scores, n, nq, n, k, scratch, dout, didx, 0));
			CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1));
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (rep >= 2 && ms < best)
				best = ms;
		}
		printf("topk_ms %d %.3f\n", nq, best);
		/* the last row's selection against the CPU's, on the same floats */
		float *row = (float *)malloc((size_t)n * 4);
		int32_t idx[100];
		dget(row, scores + (size_t)(nq - 1) * n, (size_t)n);
		dget(idx, didx + (size_t)(nq - 1) * k, (size_t)k);
		int ok = topk_agrees(row, 1, n, k, idx, "1M");
		/* and one score against a host dot product */
		__half hv[384], hq[384];
		dget(hv, vec + (size_t)idx[0] * dim, (size_t)dim);
		dget(hq, qv + (size_t)(nq - 1) * dim, (size_t)dim);
		double dot = 0;
		for (int j = 0; j < dim; j++)
			dot += (double)__half2float(hv[j]) * __half2float(hq[j]);
		if (fabs(dot - row[idx[0]]) > 1e-3 * (fabs(dot) + 1))
			ok = 0;
		printf("topk_match %d %s\n", nq, ok ? "ok" : "MISMATCH");
		if (!ok)
			failures++;
		free(row);
	}
	cublasDestroy(h);
	cudaFree(vec); cudaFree(qv); cudaFree(scores); cudaFree(dout); cudaFree(didx);
	cudaFree(scratch);
}

/* ---- bandwidth --------------------------------------------------------------- */

static void bandwidth(void)
{
	const size_t bytes = (size_t)2 << 30;
	void *a, *b;
	cudaEvent_t e0, e1;
	float best = 1e30f;

	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMemset(a, 1, bytes));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int rep = 0; rep < 10; rep++) {
		float ms;
		CK(cudaEventRecord(e0));
		CK(lp_cuk_copy(a, b, bytes, 0));
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (rep >= 3 && ms < best)
			best = ms;
	}
	/* bytes read plus bytes written */
	printf("bandwidth_gbs %.1f\n", 2.0 * bytes / (best * 1e-3) / 1e9);
	cudaFree(a);
	cudaFree(b);
}

/* ---- launch cost --------------------------------------------------------------- */

static __global__ void nothing(int *p)
{
	if (p && threadIdx.x == 1024)
		*p = 0;
}

/* Cost of one kernel node in a replayed graph: 500 empty kernels
 * captured once, replayed, timed; the launch part of the decode floor. */
static void graph_node_cost(void)
{
	const int nodes = 500;
	cudaStream_t st;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaEvent_t e0, e1;
	float best = 1e30f;

	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
	for (int i = 0; i < nodes; i++)
		nothing<<<1, 32, 0, st>>>(NULL);
	CK(cudaStreamEndCapture(st, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int rep = 0; rep < 12; rep++) {
		float ms;
		CK(cudaEventRecord(e0, st));
		CK(cudaGraphLaunch(ge, st));
		CK(cudaEventRecord(e1, st));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (rep >= 2 && ms < best)
			best = ms;
	}
	printf("graph_node_us %.3f\n", best * 1e3 / nodes);
	cudaGraphExecDestroy(ge);
	cudaGraphDestroy(g);
	cudaStreamDestroy(st);
}

int main(int argc, char **argv)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess || n == 0) {
		printf("skip: no GPU (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "no device");
		return 77;
	}
	bandwidth();
	graph_node_cost();
	check_layernorm_gelu();
	check_softmax_pool();
	check_topk();
	if (argc < 2 || strcmp(argv[1], "--no-latency"))
		topk_latency();
	printf("%s\n", failures ? "check_kernels: FAILED" : "check_kernels: all passed");
	return failures ? 1 : 0;
}
