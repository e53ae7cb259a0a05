/*
 * check_cuda_emu.c - the emulated CUDA device (tests/cuda-emu) catches
 * the bugs it is there to catch: each planted bug (tests/cuda-emu/planted.cu
 * or a wrong call) must fail the way a GPU would at worst, and its
 * correct twin must pass, so that this suite fails if the emulator stops
 * catching one or starts flagging correct code.
 *
 * Each test runs in a process of its own (Check's fork mode), because a
 * device fault is sticky, as on a GPU. The emulator's reports go to
 * stderr; the tests that check their wording send stderr to a file first.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

cudaError_t planted_neighbour(const float *in, float *out, int n, int barrier, cudaStream_t s);
cudaError_t planted_warp_sum(const float *in, float *out, int half, cudaStream_t s);
cudaError_t planted_split_barrier(float *out, cudaStream_t s);
cudaError_t planted_fill(float *out, int n, int past, cudaStream_t s);
cudaError_t planted_block_sum(const float *in, float *out, int n, int blocks, cudaStream_t s);
cudaError_t planted_add_scalar(float *y, const float *scale, int n, cudaStream_t s);

static const char *const orders[] = { "forward", "reverse", "random:7" };

static float *dev_floats(const float *src, size_t n)
{
	float *d = NULL;

	ck_assert_int_eq(cudaMalloc((void **)&d, n * sizeof(float)), cudaSuccess);
	if (src)
		ck_assert_int_eq(cudaMemcpy(d, src, n * sizeof(float), cudaMemcpyHostToDevice),
				 cudaSuccess);
	return d;
}

static void get(float *dst, const float *d, size_t n)
{
	ck_assert_int_eq(cudaMemcpy(dst, d, n * sizeof(float), cudaMemcpyDeviceToHost),
			 cudaSuccess);
}

/* stderr into a file, read back by stderr_has */
static char err_path[64];

static void capture_stderr(void)
{
	int fd;

	snprintf(err_path, sizeof(err_path), "/tmp/lpipe-cuda-emu-XXXXXX");
	fd = mkstemp(err_path);
	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	ck_assert_int_ge(dup2(fd, 2), 0);
	close(fd);
}

static int stderr_has(const char *what)
{
	static char buf[16384];
	FILE *f;
	size_t n;

	fflush(stderr);
	f = fopen(err_path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return strstr(buf, what) != NULL;
}

static void teardown(void)
{
	if (err_path[0])
		unlink(err_path);
	err_path[0] = 0;
}

/* A missing __syncthreads: a thread reads its neighbour's shared value
 * before the neighbour wrote it, in every order; with the barrier, never. */
START_TEST(test_missing_barrier)
{
	enum { N = 64 };
	float in[N], out[N];
	float *d_in, *d_out;
	int wrong = 0;

	setenv("LPIPE_CUDA_EMU_ORDER", orders[_i], 1);
	for (int i = 0; i < N; i++)
		in[i] = (float)i;
	d_in = dev_floats(in, N);
	d_out = dev_floats(NULL, N);
	ck_assert_int_eq(planted_neighbour(d_in, d_out, N, 1, 0), cudaSuccess);
	get(out, d_out, N);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(out[i], in[(i + 1) % N]);
	ck_assert_int_eq(planted_neighbour(d_in, d_out, N, 0, 0), cudaSuccess);
	get(out, d_out, N);
	for (int i = 0; i < N; i++)
		wrong += !(out[i] == in[(i + 1) % N]);
	ck_assert_msg(wrong > 0, "order %s: the missing barrier went unnoticed", orders[_i]);
}
END_TEST

/* A shuffle that half the warp skips: reported as divergence, with the
 * kernel, block and thread; a full warp sums right. */
START_TEST(test_half_warp_shuffle)
{
	float in[64], out[64];
	float *d_in, *d_out;

	setenv("LPIPE_CUDA_EMU_ORDER", orders[_i], 1);
	for (int i = 0; i < 64; i++)
		in[i] = (float)(i % 7);
	d_in = dev_floats(in, 64);
	d_out = dev_floats(NULL, 64);
	ck_assert_int_eq(planted_warp_sum(d_in, d_out, 0, 0), cudaSuccess);
	get(out, d_out, 64);
	for (int w = 0; w < 2; w++) {
		float s = 0;
		for (int i = 0; i < 32; i++)
			s += in[w * 32 + i];
		for (int i = 0; i < 32; i++)
			ck_assert_float_eq(out[w * 32 + i], s);
	}
	capture_stderr();
	ck_assert_int_eq(planted_warp_sum(d_in, d_out, 1, 0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
	ck_assert_msg(stderr_has("kernel warp_sum, block (0,0,0)") && stderr_has("divergent warp") &&
			      stderr_has("__shfl_xor_sync") && stderr_has("__syncthreads"),
		      "the report does not name the kernel, block, shuffle and barrier");
	/* sticky, as a device fault is */
	ck_assert_int_eq(cudaMemcpy(out, d_out, 4, cudaMemcpyDeviceToHost), cudaErrorLaunchFailure);
}
END_TEST

START_TEST(test_split_barrier)
{
	float *d = dev_floats(NULL, 32);

	capture_stderr();
	ck_assert_int_eq(planted_split_barrier(d, 0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
	ck_assert(stderr_has("threads wait at different barriers"));
	ck_assert(stderr_has("planted.cu"));
}
END_TEST

/* One element past the end: caught at the end of the kernel (the canary
 * behind every device buffer), named. */
START_TEST(test_past_end)
{
	float out[100];
	float *d = dev_floats(NULL, 100);

	ck_assert_int_eq(planted_fill(d, 100, 0, 0), cudaSuccess);
	get(out, d, 100);
	for (int i = 0; i < 100; i++)
		ck_assert_float_eq(out[i], (float)i);
	capture_stderr();
	ck_assert_int_eq(planted_fill(d, 100, 1, 0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
	ck_assert(stderr_has("kernel fill wrote past the end of the device buffer"));
}
END_TEST

/* The block sum with its barriers: right in every order, over blocks. */
START_TEST(test_block_sum_orders)
{
	enum { B = 5 };
	float in[256], out[B], want = 0;
	float *d_in, *d_out;

	setenv("LPIPE_CUDA_EMU_ORDER", orders[_i], 1);
	for (int i = 0; i < 256; i++)
		want += in[i] = (float)(i % 13) - 6.0f;
	d_in = dev_floats(in, 256);
	d_out = dev_floats(NULL, B);
	ck_assert_int_eq(planted_block_sum(d_in, d_out, 256, B, 0), cudaSuccess);
	get(out, d_out, B);
	for (int b = 0; b < B; b++)
		ck_assert_float_eq(out[b], want);
}
END_TEST

/* A kernel handed pageable host memory: refused at the launch. */
START_TEST(test_host_pointer_argument)
{
	float host[8] = { 0 };

	ck_assert_int_eq(planted_fill(host, 8, 0, 0), cudaErrorInvalidValue);
}
END_TEST

/* GEMM: lda below what the documentation allows; lda allowed but reaching
 * past the buffer; the right one against a naive product. */
START_TEST(test_wrong_lda)
{
	enum { M = 5, N = 3, K = 4 };
	float A[M * K], B[K * N], C[M * N];
	const float one = 1, zero = 0;
	float *dA, *dB, *dC;
	cublasHandle_t h;

	for (int i = 0; i < M * K; i++)
		A[i] = (float)(i % 5) - 2;
	for (int i = 0; i < K * N; i++)
		B[i] = (float)(i % 3) + 0.5f;
	dA = dev_floats(A, M * K);
	dB = dev_floats(B, K * N);
	dC = dev_floats(NULL, M * N);
	ck_assert_int_eq(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
	ck_assert_int_eq(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, CUDA_R_32F, M,
				      dB, CUDA_R_32F, K, &zero, dC, CUDA_R_32F, M, CUBLAS_COMPUTE_32F,
				      CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_SUCCESS);
	get(C, dC, M * N);
	for (int j = 0; j < N; j++)
		for (int i = 0; i < M; i++) {
			double s = 0;
			for (int l = 0; l < K; l++)
				s += (double)A[l * M + i] * B[j * K + l];
			ck_assert_double_eq_tol(C[j * M + i], s, 1e-6);
		}
	ck_assert_int_eq(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, CUDA_R_32F,
				      M - 1, dB, CUDA_R_32F, K, &zero, dC, CUDA_R_32F, M,
				      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			 CUBLAS_STATUS_INVALID_VALUE);
	ck_assert_int_eq(cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, dA,
						   K - 1, 0, dB, K, 0, &zero, dC, M, 0, 1),
			 CUBLAS_STATUS_INVALID_VALUE);
	ck_assert_int_eq(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, CUDA_R_16F, M,
				      dB, CUDA_R_32F, K, &zero, dC, CUDA_R_32F, M,
				      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			 CUBLAS_STATUS_NOT_SUPPORTED);
	ck_assert_int_eq(cublasGemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, CUDA_R_32F,
				      M, dB, CUDA_R_32F, K, &zero, dC, CUDA_R_32F, M,
				      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			 CUBLAS_STATUS_NOT_INITIALIZED);
	capture_stderr();
	ck_assert_int_eq(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, CUDA_R_32F,
				      M + 1, dB, CUDA_R_32F, K, &zero, dC, CUDA_R_32F, M,
				      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			 CUBLAS_STATUS_EXECUTION_FAILED);
	ck_assert(stderr_has("cublasGemmEx: A spans"));
}
END_TEST

/* Copies in the wrong direction, past a buffer's end; frees of what was
 * not allocated. */
START_TEST(test_copy_checks)
{
	float host[16] = { 0 }, *d = dev_floats(NULL, 16);

	ck_assert_int_eq(cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice), cudaSuccess);
	ck_assert_int_eq(cudaMemcpy(d, host, sizeof(host), cudaMemcpyDeviceToHost),
			 cudaErrorInvalidValue);
	ck_assert_int_eq(cudaMemcpy(host, d, sizeof(host), cudaMemcpyHostToDevice),
			 cudaErrorInvalidValue);
	ck_assert_int_eq(cudaMemcpy(d + 1, host, sizeof(host), cudaMemcpyHostToDevice),
			 cudaErrorInvalidValue);
	ck_assert_int_eq(cudaMemcpy(host, d, sizeof(host) + 4, cudaMemcpyDeviceToHost),
			 cudaErrorInvalidValue);
	ck_assert_int_eq(cudaFree(d + 1), cudaErrorInvalidValue);
	ck_assert_int_eq(cudaFree(host), cudaErrorInvalidValue);
	ck_assert_int_eq(cudaFree(d), cudaSuccess);
	ck_assert_int_eq(cudaFree(d), cudaErrorInvalidValue);
	/* unwritten device memory reads as NaN */
	d = dev_floats(NULL, 4);
	get(host, d, 4);
	ck_assert(isnan(host[0]) && isnan(host[3]));
}
END_TEST

/* Calls a capture forbids: they fail, and spoil the capture. */
START_TEST(test_sync_during_capture)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	float host[4] = { 0 }, *d = dev_floats(NULL, 4), *p = NULL;

	ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	ck_assert_int_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
	ck_assert_int_eq(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	ck_assert_int_eq(cudaMalloc((void **)&p, 16), cudaErrorStreamCaptureUnsupported);
	ck_assert_int_eq(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	ck_assert_int_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	ck_assert_int_eq(cudaMemcpy(d, host, 16, cudaMemcpyHostToDevice),
			 cudaErrorStreamCaptureUnsupported);
	ck_assert_int_eq(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	/* a captured copy from pageable memory would read it at each replay */
	ck_assert_int_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	ck_assert_int_eq(cudaMemcpyAsync(d, host, 16, cudaMemcpyHostToDevice, s),
			 cudaErrorStreamCaptureUnsupported);
	ck_assert_int_eq(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	/* the stream works again afterwards */
	ck_assert_int_eq(cudaMemcpyAsync(d, host, 16, cudaMemcpyHostToDevice, s), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
}
END_TEST

/* A graph replays its copy from pinned memory reading the pinned bytes of
 * each replay, and its result equals the eager run's. */
START_TEST(test_graph_replay)
{
	enum { N = 100 };
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t x;
	float *h_scale, *d_scale = dev_floats(NULL, 1), *d_y, y[N], e[N];
	float zeros[N] = { 0 };

	ck_assert_int_eq(cudaMallocHost((void **)&h_scale, sizeof(float)), cudaSuccess);
	ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	d_y = dev_floats(zeros, N);
	ck_assert_int_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	ck_assert_int_eq(cudaMemcpyAsync(d_scale, h_scale, 4, cudaMemcpyHostToDevice, s),
			 cudaSuccess);
	ck_assert_int_eq(planted_add_scalar(d_y, d_scale, N, s), cudaSuccess);
	ck_assert_int_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
	ck_assert_int_eq(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
	/* nothing ran while capturing */
	get(y, d_y, N);
	ck_assert_float_eq(y[0], 0.0f);
	*h_scale = 1.0f;
	ck_assert_int_eq(cudaGraphLaunch(x, s), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
	*h_scale = 2.5f;
	ck_assert_int_eq(cudaGraphLaunch(x, s), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
	get(y, d_y, N);
	/* eagerly, the same two steps */
	ck_assert_int_eq(cudaMemcpy(d_y, zeros, sizeof(zeros), cudaMemcpyHostToDevice), cudaSuccess);
	*h_scale = 1.0f;
	ck_assert_int_eq(cudaMemcpyAsync(d_scale, h_scale, 4, cudaMemcpyHostToDevice, s),
			 cudaSuccess);
	ck_assert_int_eq(planted_add_scalar(d_y, d_scale, N, s), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
	*h_scale = 2.5f;
	ck_assert_int_eq(cudaMemcpyAsync(d_scale, h_scale, 4, cudaMemcpyHostToDevice, s),
			 cudaSuccess);
	ck_assert_int_eq(planted_add_scalar(d_y, d_scale, N, s), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
	get(e, d_y, N);
	for (int i = 0; i < N; i++) {
		ck_assert_float_eq(y[i], 3.5f);
		ck_assert_float_eq(y[i], e[i]);
	}
	ck_assert_int_eq(cudaGraphExecDestroy(x), cudaSuccess);
	ck_assert_int_eq(cudaGraphDestroy(g), cudaSuccess);
}
END_TEST

/* Queued work runs at a synchronisation point, not at the launch: a host
 * that reads pinned memory before waiting sees the old bytes. */
START_TEST(test_deferred_stream)
{
	cudaStream_t s;
	float *h, *d = dev_floats(NULL, 4);

	ck_assert_int_eq(cudaMallocHost((void **)&h, 16), cudaSuccess);
	ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	h[0] = 7.0f;
	ck_assert_int_eq(planted_fill(d, 4, 0, s), cudaSuccess);
	ck_assert_int_eq(cudaMemcpyAsync(h, d, 16, cudaMemcpyDeviceToHost, s), cudaSuccess);
	ck_assert_float_eq(h[0], 7.0f);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
	ck_assert_float_eq(h[3], 3.0f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cuda_emu");
	TCase *tc = tcase_create("planted");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, test_missing_barrier, 0, 3);
	tcase_add_loop_test(tc, test_half_warp_shuffle, 0, 3);
	tcase_add_test(tc, test_split_barrier);
	tcase_add_test(tc, test_past_end);
	tcase_add_loop_test(tc, test_block_sum_orders, 0, 3);
	tcase_add_test(tc, test_host_pointer_argument);
	tcase_add_test(tc, test_wrong_lda);
	tcase_add_test(tc, test_copy_checks);
	tcase_add_test(tc, test_sync_during_capture);
	tcase_add_test(tc, test_graph_replay);
	tcase_add_test(tc, test_deferred_stream);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
