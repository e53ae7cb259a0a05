/*
 * cudart.cc - the CUDA runtime calls lpipe makes, on the emulated device.
 *
 * Device memory is host memory filled with 0xFF (runtime.cc); every copy
 * is checked against the registry for its direction and its size, every
 * free for being an allocation's start. Streams queue their work, which
 * runs at a synchronisation point (LPIPE_CUDA_EMU_DEFER=0: at once). A copy
 * from pageable memory is taken at the call, as the real runtime stages
 * it; one from pinned memory is read when it runs, so a captured copy
 * reads the pinned bytes of each replay. While this thread captures a
 * stream the calls the real runtime refuses in that mode fail alike with
 * cudaErrorStreamCaptureUnsupported and spoil the capture, so that
 * cudaStreamEndCapture returns cudaErrorStreamCaptureInvalidated.
 */
#include "emu_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

using namespace lp_emu;

#define LOCK std::lock_guard<std::recursive_mutex> lock_(lock())
/* After a device fault every call returns it (as the real runtime does). */
#define STICKY                                   \
	do {                                     \
		if (sticky != cudaSuccess)       \
			return set_error(sticky); \
	} while (0)

static const size_t TOTAL_MEM = (size_t)16 << 30;

/* A stream's or event's creation: *out = make(), unless a device fault
 * is sticky or out is NULL. */
template <class T, class F> static cudaError_t make_handle(T **out, F make)
{
	LOCK;
	STICKY;
	if (!out)
		return set_error(cudaErrorInvalidValue);
	*out = make();
	return cudaSuccess;
}

extern "C" {

/* *out = v, or cudaErrorInvalidValue for a NULL out (the queries' rule). */
static cudaError_t put_int(int *out, int v)
{
	if (!out)
		return set_error(cudaErrorInvalidValue);
	*out = v;
	return cudaSuccess;
}

/* one device, number 0 */
cudaError_t cudaGetDeviceCount(int *n)
{
	return put_int(n, 1);
}

cudaError_t cudaGetDevice(int *d)
{
	return put_int(d, 0);
}

cudaError_t cudaSetDevice(int d)
{
	return d == 0 ? cudaSuccess : set_error(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
	if (!p)
		return set_error(cudaErrorInvalidValue);
	if (d != 0)
		return set_error(cudaErrorInvalidDevice);
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "cuda-emu (emulated on the CPU)");
	p->major = 9;
	p->minor = 0;
	p->multiProcessorCount = opts().n_sm;
	p->totalGlobalMem = TOTAL_MEM;
	p->warpSize = 32;
	p->maxThreadsPerBlock = 1024;
	p->sharedMemPerBlock = 48 * 1024;
	p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
	p->maxThreadsDim[2] = 64;
	p->maxGridSize[0] = 0x7fffffff;
	p->maxGridSize[1] = p->maxGridSize[2] = 65535;
	p->unifiedAddressing = 1;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
	if (!v)
		return set_error(cudaErrorInvalidValue);
	if (d != 0)
		return set_error(cudaErrorInvalidDevice);
	switch (a) {
	case cudaDevAttrMultiProcessorCount: *v = opts().n_sm; return cudaSuccess;
	case cudaDevAttrMaxThreadsPerBlock: *v = 1024; return cudaSuccess;
	case cudaDevAttrWarpSize: *v = 32; return cudaSuccess;
	case cudaDevAttrComputeCapabilityMajor: *v = 9; return cudaSuccess;
	case cudaDevAttrComputeCapabilityMinor: *v = 0; return cudaSuccess;
	default: return set_error(cudaErrorInvalidValue);
	}
}

cudaError_t cudaMemGetInfo(size_t *fr, size_t *tot)
{
	LOCK;
	STICKY;
	if (!fr || !tot)
		return set_error(cudaErrorInvalidValue);
	*tot = TOTAL_MEM;
	*fr = TOTAL_MEM > mem_in_use() ? TOTAL_MEM - mem_in_use() : 0;
	return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
	return put_int(v, CUDART_VERSION);
}

const char *cudaGetErrorName(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "cudaSuccess";
	case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
	case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
	case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
	case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
	case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
	case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
	case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
	case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
	case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
	case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
	case cudaErrorIllegalState: return "cudaErrorIllegalState";
	case cudaErrorNotReady: return "cudaErrorNotReady";
	default: return "cudaErrorUnknown";
	}
}

const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorInvalidDevice: return "invalid device ordinal";
	case cudaErrorInvalidConfiguration: return "invalid configuration argument";
	case cudaErrorInvalidResourceHandle: return "invalid resource handle";
	case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
	case cudaErrorLaunchFailure: return "unspecified launch failure";
	case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
	case cudaErrorStreamCaptureUnsupported:
		return "operation not permitted when stream is capturing";
	case cudaErrorStreamCaptureInvalidated:
		return "operation failed due to a previous error during capture";
	case cudaErrorIllegalState: return "the operation is not permitted in this state";
	case cudaErrorNotReady: return "device not ready";
	default: return "unknown error";
	}
}

cudaError_t cudaGetLastError(void)
{
	LOCK;
	cudaError_t e = sticky != cudaSuccess ? sticky : last;
	last = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	LOCK;
	return sticky != cudaSuccess ? sticky : last;
}

/* ---- memory ---------------------------------------------------------------- */

static cudaError_t alloc_call(void **p, size_t n, int kind, const char *api)
{
	LOCK;
	cudaError_t e;

	STICKY;
	if (!p)
		return set_error(cudaErrorInvalidValue);
	*p = nullptr;
	if ((e = forbid_in_capture(api)) != cudaSuccess)
		return set_error(e);
	if (n > TOTAL_MEM - (mem_in_use() < TOTAL_MEM ? mem_in_use() : TOTAL_MEM))
		return set_error(cudaErrorMemoryAllocation);
	*p = mem_alloc(n ? n : 1, kind);
	return *p ? cudaSuccess : set_error(cudaErrorMemoryAllocation);
}

cudaError_t cudaMalloc(void **p, size_t n)
{
	return alloc_call(p, n, MEM_DEVICE, "cudaMalloc");
}

cudaError_t cudaMallocHost(void **p, size_t n)
{
	return alloc_call(p, n, MEM_PINNED, "cudaMallocHost");
}

static cudaError_t free_call(void *p, int kind, const char *api)
{
	LOCK;
	cudaError_t e;

	STICKY;
	if ((e = forbid_in_capture(api)) != cudaSuccess)
		return set_error(e);
	/* freeing waits for the device, as the real call does */
	drain_all();
	return set_error(mem_free(p, kind, api));
}

cudaError_t cudaFree(void *p)
{
	return free_call(p, MEM_DEVICE, "cudaFree");
}

cudaError_t cudaFreeHost(void *p)
{
	return free_call(p, MEM_PINNED, "cudaFreeHost");
}

static const char *kind_name(cudaMemcpyKind k)
{
	switch (k) {
	case cudaMemcpyHostToHost: return "host to host";
	case cudaMemcpyHostToDevice: return "host to device";
	case cudaMemcpyDeviceToHost: return "device to host";
	case cudaMemcpyDeviceToDevice: return "device to device";
	default: return "default";
	}
}

/* Whether [p, p + n) is device memory: 1 all of it, 0 none of it, -1 it
 * starts in a device buffer but runs past its end (reported). */
static int device_range(const void *p, size_t n, const char *api, const char *side)
{
	const alloc *a = find(p, 0);

	if (!a || a->kind != MEM_DEVICE)
		return 0;
	if (find(p, n ? n : 1) == a)
		return 1;
	report("%s: %s range of %zu bytes at offset %zu runs past the end of a device buffer of "
	       "%zu bytes", api, side, n, (size_t)((uintptr_t)p - a->base), a->size);
	return -1;
}

/* The copy's checks; 0 or an error (reported). *src_pageable and
 * *dst_pageable: host memory not pinned by cudaMallocHost. */
static cudaError_t check_copy(void *dst, const void *src, size_t n, cudaMemcpyKind k,
			      const char *api, bool *src_pageable, bool *dst_pageable)
{
	int dd, sd;

	if (n == 0)
		return cudaSuccess;
	if (!dst || !src) {
		report("%s: a NULL pointer", api);
		return cudaErrorInvalidValue;
	}
	if ((dd = device_range(dst, n, api, "destination")) < 0 ||
	    (sd = device_range(src, n, api, "source")) < 0)
		return cudaErrorInvalidValue;
	if (k == cudaMemcpyDefault)
		k = sd ? (dd ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
		       : (dd ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
	if (k < cudaMemcpyHostToHost || k > cudaMemcpyDeviceToDevice) {
		report("%s: copy kind %d", api, (int)k);
		return cudaErrorInvalidMemcpyDirection;
	}
	bool want_sd = k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
	bool want_dd = k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
	if (want_sd != (sd == 1) || want_dd != (dd == 1)) {
		report("%s: %s copy of %zu bytes from %s memory %p to %s memory %p", api,
		       kind_name(k), n, sd ? "device" : "host", src, dd ? "device" : "host", dst);
		return cudaErrorInvalidValue;
	}
	if (!sd) {
		const alloc *a = find(src, n);
		*src_pageable = !(a && a->kind == MEM_PINNED);
	}
	if (!dd) {
		const alloc *a = find(dst, n);
		*dst_pageable = !(a && a->kind == MEM_PINNED);
	}
	return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind k)
{
	LOCK;
	bool sp = false, dp = false;
	cudaError_t e;

	STICKY;
	if ((e = forbid_in_capture("cudaMemcpy")) != cudaSuccess ||
	    (e = check_copy(dst, src, n, k, "cudaMemcpy", &sp, &dp)) != cudaSuccess)
		return set_error(e);
	/* the legacy stream: after the blocking streams' work, not the
	 * non-blocking ones' */
	drain(stream_of(0));
	if (sticky != cudaSuccess)
		return set_error(sticky);
	if (n)
		memmove(dst, src, n);
	return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind k,
			    cudaStream_t st)
{
	LOCK;
	CUstream_st *s = stream_of(st);
	bool sp = false, dp = false;
	cudaError_t e;

	STICKY;
	if ((e = check_copy(dst, src, n, k, "cudaMemcpyAsync", &sp, &dp)) != cudaSuccess)
		return set_error(e);
	if (n == 0)
		return cudaSuccess;
	if (s->capturing && (sp || dp)) {
		report("cudaMemcpyAsync: a captured copy %s pageable host memory %p",
		       sp ? "from" : "to", sp ? src : (const void *)dst);
		s->cap_invalid = true;
		return set_error(cudaErrorStreamCaptureUnsupported);
	}
	if (dp) {
		/* into pageable memory the call returns once the copy is done */
		drain(s);
		if (sticky != cudaSuccess)
			return set_error(sticky);
		memmove(dst, src, n);
		return cudaSuccess;
	}
	if (sp) {
		/* from pageable memory the bytes are staged before the call
		 * returns */
		auto copy = std::make_shared<std::vector<uint8_t>>((const uint8_t *)src,
								   (const uint8_t *)src + n);
		enqueue(st, [=] { memcpy(dst, copy->data(), n); });
		return cudaSuccess;
	}
	enqueue(st, [=] { memmove(dst, src, n); });
	return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st)
{
	LOCK;
	STICKY;
	if (n && device_range(p, n, "cudaMemsetAsync", "destination") != 1) {
		report("cudaMemsetAsync: %p is not %zu bytes of device memory", p, n);
		return set_error(cudaErrorInvalidValue);
	}
	enqueue(st, [=] { memset(p, v, n); });
	return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int v, size_t n)
{
	LOCK;
	cudaError_t e;

	STICKY;
	if ((e = forbid_in_capture("cudaMemset")) != cudaSuccess)
		return set_error(e);
	if ((e = cudaMemsetAsync(p, v, n, 0)) != cudaSuccess)
		return e;
	drain(stream_of(0));
	return sticky != cudaSuccess ? set_error(sticky) : cudaSuccess;
}

/* ---- streams and events ------------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
	return make_handle(s, [=] { return new_stream(flags); });
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
	return cudaStreamCreateWithFlags(s, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	LOCK;
	if (!s)
		return set_error(cudaErrorInvalidResourceHandle);
	if (s->capturing) {
		report("cudaStreamDestroy: stream %p is being captured", (void *)s);
		return set_error(cudaErrorStreamCaptureUnsupported);
	}
	free_stream(s);
	return sticky != cudaSuccess ? set_error(sticky) : cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t st)
{
	LOCK;
	CUstream_st *s = stream_of(st);

	STICKY;
	if (s->capturing) {
		report("cudaStreamSynchronize on stream %p while it is being captured", (void *)s);
		s->cap_invalid = true;
		return set_error(cudaErrorStreamCaptureUnsupported);
	}
	drain(s);
	return sticky != cudaSuccess ? set_error(sticky) : cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
	LOCK;
	cudaError_t e;

	STICKY;
	if ((e = forbid_in_capture("cudaDeviceSynchronize")) != cudaSuccess)
		return set_error(e);
	drain_all();
	return sticky != cudaSuccess ? set_error(sticky) : cudaSuccess;
}

static uint64_t epoch;

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
	return make_handle(e, [] { return new CUevent_st; });
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
	return cudaEventCreateWithFlags(e, 0);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	LOCK;
	if (!e)
		return set_error(cudaErrorInvalidResourceHandle);
	/* its record may still be queued */
	if (e->stream && e->done != e->recorded)
		drain(e->stream);
	delete e;
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t st)
{
	LOCK;
	CUstream_st *s = stream_of(st);

	STICKY;
	if (!e)
		return set_error(cudaErrorInvalidResourceHandle);
	if (s->capturing) {
		/* a node of the graph: orders the captured work, runs nothing */
		e->in_capture = true;
		return cudaSuccess;
	}
	uint64_t ep = ++epoch;
	e->in_capture = false;
	e->stream = s;
	e->recorded = ep;
	enqueue(st, [e, ep] { e->done = ep > e->done ? ep : e->done; });
	return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	LOCK;
	STICKY;
	if (!e)
		return set_error(cudaErrorInvalidResourceHandle);
	if (e->in_capture) {
		report("cudaEventSynchronize on an event recorded in a capture");
		if (capturing())
			capturing()->cap_invalid = true;
		return set_error(cudaErrorStreamCaptureUnsupported);
	}
	while (e->stream && e->done < e->recorded && !e->stream->q.empty()) {
		std::function<void()> f = std::move(e->stream->q.front());
		e->stream->q.pop_front();
		if (sticky == cudaSuccess)
			f();
	}
	return sticky != cudaSuccess ? set_error(sticky) : cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
	LOCK;
	STICKY;
	if (!e)
		return set_error(cudaErrorInvalidResourceHandle);
	return e->done >= e->recorded ? cudaSuccess : cudaErrorNotReady;
}

/* ---- capture and graphs --------------------------------------------------------- */

cudaError_t cudaStreamBeginCapture(cudaStream_t st, enum cudaStreamCaptureMode mode)
{
	LOCK;
	CUstream_st *s = stream_of(st);

	STICKY;
	if (!st) {
		report("cudaStreamBeginCapture on the legacy stream");
		return set_error(cudaErrorStreamCaptureUnsupported);
	}
	if (s->capturing || capturing()) {
		report("cudaStreamBeginCapture: a capture is already under way");
		return set_error(cudaErrorIllegalState);
	}
	s->capturing = true;
	s->cap_invalid = false;
	s->cap.clear();
	if (mode != cudaStreamCaptureModeRelaxed)
		set_capturing(s);
	return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t st, cudaGraph_t *g)
{
	LOCK;
	CUstream_st *s = stream_of(st);

	if (!g)
		return set_error(cudaErrorInvalidValue);
	*g = nullptr;
	if (!s->capturing)
		return set_error(cudaErrorIllegalState);
	s->capturing = false;
	if (capturing() == s)
		set_capturing(nullptr);
	if (s->cap_invalid) {
		s->cap.clear();
		return set_error(cudaErrorStreamCaptureInvalidated);
	}
	*g = new CUgraph_st;
	(*g)->ops.swap(s->cap);
	return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t st, enum cudaStreamCaptureStatus *status)
{
	LOCK;
	CUstream_st *s = stream_of(st);

	if (!status)
		return set_error(cudaErrorInvalidValue);
	*status = !s->capturing ? cudaStreamCaptureStatusNone
		  : s->cap_invalid ? cudaStreamCaptureStatusInvalidated
				   : cudaStreamCaptureStatusActive;
	return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long flags)
{
	LOCK;
	STICKY;
	if (!x || !g)
		return set_error(cudaErrorInvalidValue);
	*x = new CUgraphExec_st;
	(*x)->ops = g->ops;
	return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t st)
{
	LOCK;
	STICKY;
	if (!x)
		return set_error(cudaErrorInvalidResourceHandle);
	for (auto &f : x->ops)
		enqueue(st, f);
	return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
	LOCK;
	if (!g)
		return set_error(cudaErrorInvalidValue);
	delete g;
	return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x)
{
	LOCK;
	if (!x)
		return set_error(cudaErrorInvalidValue);
	delete x;
	return cudaSuccess;
}

} // extern "C"
