/*
 * emu_rt.h - what the parts of the emulated device share (internal to
 * tests/cuda-emu/): the memory registry, the streams and their queues,
 * the error state, the run-time options.
 *
 * Invariants: every byte a kernel or a copy may touch belongs to one
 * registered allocation (device or pinned host) or is pageable host memory
 * that only copies name; a stream's queue runs in order, and only on the
 * host thread that synchronizes (or at once with LPIPE_CUDA_EMU_DEFER=0);
 * a sticky error, once set, is returned by every later call, as a
 * device fault is by the real runtime.
 */
#ifndef LP_CUDA_EMU_RT_H
#define LP_CUDA_EMU_RT_H

#include <cuda_runtime_api.h>

#include <stddef.h>
#include <stdint.h>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct CUstream_st {
	std::deque<std::function<void()>> q;
	unsigned flags = 0;
	bool capturing = false, cap_invalid = false;
	std::vector<std::function<void()>> cap;
};

struct CUevent_st {
	CUstream_st *stream = nullptr;
	uint64_t recorded = 0, done = 0; /* epochs: done == recorded when complete */
	bool in_capture = false;
};

struct CUgraph_st {
	std::vector<std::function<void()>> ops;
};

struct CUgraphExec_st {
	std::vector<std::function<void()>> ops;
};

namespace lp_emu {

enum kind { MEM_DEVICE = 1, MEM_PINNED = 2 };

struct alloc {
	uintptr_t base;
	size_t size;
	int kind;
	void *raw;
};

/* The registry (runtime.cc). find: the allocation holding [p, p + n), or
 * NULL; with n == 0 a pointer one past the end counts. */
const alloc *find(const void *p, size_t n);
void *mem_alloc(size_t bytes, int kind);
/* cudaErrorInvalidValue (and a message) unless p is an allocation's base
 * of that kind. */
cudaError_t mem_free(void *p, int kind, const char *api);
size_t mem_in_use();
/* The canaries around every device allocation; false and a message
 * naming `who` when one was overwritten. */
bool canaries_intact(const char *who);

/* Streams (runtime.cc). */
CUstream_st *stream_of(cudaStream_t s);
/* Queue work (or record it while capturing). */
void enqueue(cudaStream_t s, std::function<void()> f);
void drain(CUstream_st *s);
void drain_all();
/* Work queued on the legacy stream waits for the blocking streams. */
void drain_for_legacy();
CUstream_st *new_stream(unsigned flags);
void free_stream(CUstream_st *s);
/* The stream being captured by this host thread, or NULL. */
CUstream_st *capturing();
void set_capturing(CUstream_st *s);
/* An API call that is illegal while this thread captures: invalidates the
 * capture and returns cudaErrorStreamCaptureUnsupported (else success). */
cudaError_t forbid_in_capture(const char *api);

/* Errors. */
extern cudaError_t sticky, last;
cudaError_t set_error(cudaError_t e);
/* Print "cuda-emu: error: ..." to stderr (always; tests read it). */
void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Options from the environment. */
struct options {
	int order;       /* 0 forward, 1 reverse, 2 random */
	uint64_t seed;
	int defer;       /* 1: queued work runs at synchronisation points */
	int n_sm;
};
const options &opts();

/* The big lock: one host thread drives the emulated device at a time. */
std::recursive_mutex &lock();

} // namespace lp_emu

#endif
