/*
 * runtime.cc - the emulated device's core: CUDA threads as fibers, the
 * warp and block scheduler, the launch, the memory registry, the streams.
 *
 * A kernel runs block by block (the block order forward, reverse or
 * seeded random: LPIPE_CUDA_EMU_ORDER=forward|reverse|random[:SEED]).
 * Within a block every thread is a fiber on a stack of its own; the
 * scheduler runs each ready thread, in the thread order, until it ends or
 * waits at a barrier or a shuffle. When none is ready it resolves: a
 * shuffle goes on once all live lanes of its mask wait at the same one
 * (same source line, kind, mask and width); a barrier once every live
 * thread of the block waits at the same one. When neither can go on, the
 * kernel has diverged or deadlocked: that is reported with the kernel's
 * name and the block's and threads' ids, the rest of the kernel is
 * dropped and the error is sticky (cudaErrorLaunchFailure), as a device
 * fault is. So a missing barrier reads another thread's value before it
 * is written (0xFF-filled shared memory: NaN), and shows in one order or
 * another.
 *
 * The fibers switch with a few instructions on x86-64 (no system call,
 * unlike swapcontext); ASan is told of every switch.
 *
 * The environment: LPIPE_CUDA_EMU_ORDER (above; a random order prints its
 * seed), LPIPE_CUDA_EMU_DEFER=0 to run queued work at once instead of at
 * the next synchronisation point, LPIPE_CUDA_EMU_SMS the multiprocessor
 * count the device reports (default 8; an H200 has 132), which sets how
 * the backend splits attention.
 */
#include "emu.h"
#include "emu_rt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>

#if defined(__SANITIZE_ADDRESS__)
#define LP_EMU_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#else
#define LP_EMU_ASAN 0
#endif

extern "C" {
__attribute__((visibility("hidden"))) uint3 lp_emu_tid_cur, lp_emu_bid_cur;
__attribute__((visibility("hidden"))) dim3 lp_emu_bdim_cur, lp_emu_gdim_cur;
}

/* The section of every __shared__ variable (emu.h): the linker names its
 * bounds. A module without one gets an empty range. */
extern "C" char __start_lp_emu_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_lp_emu_shared[] __attribute__((weak, visibility("hidden")));

namespace lp_emu {

/* ---- errors and options ---------------------------------------------------- */

cudaError_t sticky = cudaSuccess, last = cudaSuccess;

cudaError_t set_error(cudaError_t e)
{
	if (e != cudaSuccess && last == cudaSuccess)
		last = e;
	return e;
}

void report(const char *fmt, ...)
{
	va_list ap;

	fputs("cuda-emu: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

std::recursive_mutex &lock()
{
	static std::recursive_mutex m;
	return m;
}

const options &opts()
{
	static options o;
	static bool done;

	if (!done) {
		const char *v = getenv("LPIPE_CUDA_EMU_ORDER"), *d = getenv("LPIPE_CUDA_EMU_DEFER");
		const char *sm = getenv("LPIPE_CUDA_EMU_SMS");
		done = true;
		o.order = 0;
		o.defer = d && *d ? atoi(d) != 0 : 1;
		o.n_sm = sm && *sm ? atoi(sm) : 8;
		if (o.n_sm < 1)
			o.n_sm = 1;
		if (v && !strcmp(v, "reverse")) {
			o.order = 1;
		} else if (v && !strncmp(v, "random", 6)) {
			o.order = 2;
			if (v[6] == ':')
				o.seed = strtoull(v + 7, NULL, 0);
			else
				o.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
			/* printed so that a failure can be run again */
			fprintf(stderr, "cuda-emu: thread and block order random, seed %llu "
					"(LPIPE_CUDA_EMU_ORDER=random:%llu repeats it)\n",
				(unsigned long long)o.seed, (unsigned long long)o.seed);
		} else if (v && *v && strcmp(v, "forward")) {
			fprintf(stderr, "cuda-emu: warning: LPIPE_CUDA_EMU_ORDER=%s is not "
					"forward, reverse or random[:SEED]; using forward\n", v);
		}
	}
	return o;
}

/* ---- memory ---------------------------------------------------------------- */

/* Without ASan, CANARY bytes of a pattern on each side of a device
 * allocation show a write past either end. With ASan the allocation ends
 * exactly where the buffer does, so ASan sees the first byte past it. */
enum { CANARY = LP_EMU_ASAN ? 0 : 256, CANARY_BYTE = 0xA5 };

static std::map<uintptr_t, alloc> &registry()
{
	static std::map<uintptr_t, alloc> r;
	return r;
}

static size_t in_use;

const alloc *find(const void *p, size_t n)
{
	auto &r = registry();
	uintptr_t a = (uintptr_t)p;
	auto it = r.upper_bound(a);

	if (it == r.begin())
		return nullptr;
	--it;
	if (a < it->second.base)
		return nullptr;
	if (n == 0 ? a > it->second.base + it->second.size
		   : a + n > it->second.base + it->second.size || a + n < a)
		return nullptr;
	return &it->second;
}

void *mem_alloc(size_t bytes, int kind)
{
	size_t canary = kind == MEM_DEVICE ? CANARY : 0;
	void *raw = nullptr;
	uint8_t *p;

	if (posix_memalign(&raw, 256, bytes + 2 * canary) != 0 || !raw)
		return nullptr;
	p = (uint8_t *)raw + canary;
	memset(raw, CANARY_BYTE, canary);
	memset(p + bytes, CANARY_BYTE, canary);
	/* unwritten device memory reads as NaN (float) or -1 (integers) */
	memset(p, 0xFF, bytes);
	registry()[(uintptr_t)p] = alloc{ (uintptr_t)p, bytes, kind, raw };
	in_use += bytes;
	return p;
}

cudaError_t mem_free(void *p, int kind, const char *api)
{
	auto &r = registry();
	auto it = r.find((uintptr_t)p);

	if (!p)
		return cudaSuccess;
	if (it == r.end() || it->second.kind != kind) {
		const alloc *in = find(p, 1);
		if (in)
			report("%s(%p): not the start of an allocation (%zu bytes into one of %zu)",
			       api, p, (size_t)((uintptr_t)p - in->base), in->size);
		else
			report("%s(%p): not %s memory allocated by this process (freed twice?)", api,
			       p, kind == MEM_DEVICE ? "device" : "pinned host");
		return cudaErrorInvalidValue;
	}
	in_use -= it->second.size;
	free(it->second.raw);
	r.erase(it);
	return cudaSuccess;
}

size_t mem_in_use()
{
	return in_use;
}

static bool canary_ok(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY_BYTE)
			return false;
	return true;
}

bool canaries_intact(const char *who)
{
	if (CANARY == 0)
		return true;
	for (auto &kv : registry()) {
		const alloc &a = kv.second;
		const uint8_t *p = (const uint8_t *)a.base;
		if (a.kind != MEM_DEVICE)
			continue;
		if (!canary_ok(p - CANARY, CANARY) || !canary_ok(p + a.size, CANARY)) {
			bool after = !canary_ok(p + a.size, CANARY);
			report("%s wrote %s the device buffer %p of %zu bytes", who,
			       after ? "past the end of" : "before the start of", (void *)p, a.size);
			/* once reported, not again for every later op */
			memset(after ? (void *)(p + a.size) : (void *)(p - CANARY), CANARY_BYTE, CANARY);
			return false;
		}
	}
	return true;
}

/* ---- streams ----------------------------------------------------------------- */

static CUstream_st legacy_stream;
static std::vector<CUstream_st *> &streams()
{
	static std::vector<CUstream_st *> v{ &legacy_stream };
	return v;
}

CUstream_st *stream_of(cudaStream_t s)
{
	return s ? s : &legacy_stream;
}

CUstream_st *new_stream(unsigned flags)
{
	CUstream_st *s = new CUstream_st;
	s->flags = flags;
	streams().push_back(s);
	return s;
}

void free_stream(CUstream_st *s)
{
	auto &v = streams();
	drain(s);
	v.erase(std::remove(v.begin(), v.end(), s), v.end());
	delete s;
}

static thread_local CUstream_st *cap_stream;

CUstream_st *capturing()
{
	return cap_stream;
}

void set_capturing(CUstream_st *s)
{
	cap_stream = s;
}

cudaError_t forbid_in_capture(const char *api)
{
	if (!cap_stream)
		return cudaSuccess;
	report("%s while stream %p is being captured (not allowed in this capture mode)", api,
	       (void *)cap_stream);
	cap_stream->cap_invalid = true;
	return cudaErrorStreamCaptureUnsupported;
}

void drain(CUstream_st *s)
{
	if (s == &legacy_stream)
		drain_for_legacy();
	while (!s->q.empty()) {
		std::function<void()> f = std::move(s->q.front());
		s->q.pop_front();
		if (sticky == cudaSuccess)
			f();
	}
}

void drain_all()
{
	for (CUstream_st *s : std::vector<CUstream_st *>(streams()))
		drain(s);
}

void drain_for_legacy()
{
	for (CUstream_st *s : std::vector<CUstream_st *>(streams()))
		if (s != &legacy_stream && !(s->flags & cudaStreamNonBlocking))
			drain(s);
}

void enqueue(cudaStream_t st, std::function<void()> f)
{
	CUstream_st *s = stream_of(st);

	if (s->capturing) {
		s->cap.push_back(std::move(f));
		return;
	}
	s->q.push_back(std::move(f));
	if (!opts().defer)
		drain(s);
}

/* ---- fibers ------------------------------------------------------------------ */

enum { ST_READY, ST_BARRIER, ST_SHFL, ST_DONE };

struct fiber {
	void *sp;
	uint8_t *stack;      /* lowest usable byte */
	size_t stack_size;
	uint3 tid;
	int lin, state;
	/* what it waits at */
	const char *file;
	int line, op, arg, width;
	unsigned mask;
	uint64_t val, res;
};

#if defined(__x86_64__)
/* switch(save, to): push the callee-saved registers and the FP control
 * words, store rsp in *save, load `to`, pop, return into the other fiber.
 * A new fiber's first return lands in lp_emu_fiber_start, which calls
 * r13(r12). */
extern "C" void lp_emu_ctx_switch(void **save, void *to) __attribute__((visibility("hidden")));
extern "C" void lp_emu_fiber_start(void) __attribute__((visibility("hidden")));
asm(".text\n"
    ".p2align 4\n"
    ".globl lp_emu_ctx_switch\n"
    ".hidden lp_emu_ctx_switch\n"
    ".type lp_emu_ctx_switch,@function\n"
    "lp_emu_ctx_switch:\n"
    "	pushq %rbp\n"
    "	pushq %rbx\n"
    "	pushq %r12\n"
    "	pushq %r13\n"
    "	pushq %r14\n"
    "	pushq %r15\n"
    "	subq $8, %rsp\n"
    "	stmxcsr (%rsp)\n"
    "	fnstcw 4(%rsp)\n"
    "	movq %rsp, (%rdi)\n"
    "	movq %rsi, %rsp\n"
    "	ldmxcsr (%rsp)\n"
    "	fldcw 4(%rsp)\n"
    "	addq $8, %rsp\n"
    "	popq %r15\n"
    "	popq %r14\n"
    "	popq %r13\n"
    "	popq %r12\n"
    "	popq %rbx\n"
    "	popq %rbp\n"
    "	ret\n"
    ".size lp_emu_ctx_switch, .-lp_emu_ctx_switch\n"
    ".globl lp_emu_fiber_start\n"
    ".hidden lp_emu_fiber_start\n"
    ".type lp_emu_fiber_start,@function\n"
    "lp_emu_fiber_start:\n"
    "	movq %r12, %rdi\n"
    "	callq *%r13\n"
    "	ud2\n"
    ".size lp_emu_fiber_start, .-lp_emu_fiber_start\n");

static void *fiber_init(uint8_t *stack, size_t size, void (*entry)(void *), void *arg)
{
	uintptr_t top = ((uintptr_t)(stack + size)) & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)(top - 80);
	uint32_t ctl[2] = { 0x1f80, 0x037f }; /* MXCSR and x87 control word at reset */

	memcpy(&sp[0], ctl, 8);
	sp[1] = 0;                  /* r15 */
	sp[2] = 0;                  /* r14 */
	sp[3] = (uint64_t)entry;    /* r13 */
	sp[4] = (uint64_t)arg;      /* r12 */
	sp[5] = 0;                  /* rbx */
	sp[6] = 0;                  /* rbp */
	sp[7] = (uint64_t)lp_emu_fiber_start;
	return sp;
}
#else
#error "the emulated device's fibers are written for x86-64"
#endif

static void *sched_sp;
static fiber *cur;
#if LP_EMU_ASAN
static const void *sched_stack_bottom;
static size_t sched_stack_size;
#endif

static inline void switch_to_fiber(fiber *f)
{
#if LP_EMU_ASAN
	void *fake = nullptr;
	__sanitizer_start_switch_fiber(&fake, f->stack, f->stack_size);
	lp_emu_ctx_switch(&sched_sp, f->sp);
	__sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
	lp_emu_ctx_switch(&sched_sp, f->sp);
#endif
}

static inline void switch_to_sched(fiber *f, bool dying)
{
#if LP_EMU_ASAN
	void *fake = nullptr;
	__sanitizer_start_switch_fiber(dying ? nullptr : &fake, sched_stack_bottom,
				       sched_stack_size);
	lp_emu_ctx_switch(&f->sp, sched_sp);
	__sanitizer_finish_switch_fiber(fake, &sched_stack_bottom, &sched_stack_size);
#else
	(void)dying;
	lp_emu_ctx_switch(&f->sp, sched_sp);
#endif
}

/* The kernel being run and its block. */
struct kernel_run {
	const char *name;
	dim3 grid, block;
	lp_emu_body *body;
	std::vector<fiber> th;
	int n;
	bool failed;
};
static kernel_run *krun;

static void fiber_entry(void *arg)
{
	fiber *f = (fiber *)arg;
#if LP_EMU_ASAN
	__sanitizer_finish_switch_fiber(nullptr, &sched_stack_bottom, &sched_stack_size);
#endif
	krun->body->run();
	f->state = ST_DONE;
	switch_to_sched(f, true);
	abort(); /* a finished fiber is never resumed */
}

/* Stacks: one per thread of the largest block so far, with a guard page
 * below each. */
static const size_t STACK = LP_EMU_ASAN ? (512u << 10) : (128u << 10);
static uint8_t *stacks;
static int n_stacks;

static bool ensure_stacks(int n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), each = STACK + page;
	uint8_t *m;

	if (n <= n_stacks)
		return true;
	if (stacks)
		munmap(stacks, (size_t)n_stacks * each);
	stacks = nullptr;
	n_stacks = 0;
	m = (uint8_t *)mmap(nullptr, (size_t)n * each, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return false;
	for (int i = 0; i < n; i++)
		mprotect(m + (size_t)i * each, page, PROT_NONE);
	stacks = m;
	n_stacks = n;
	return true;
}

static uint8_t *stack_of(int i)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	return stacks + (size_t)i * (STACK + page) + page;
}

static void block_wait(int state, const char *file, int line)
{
	fiber *f = cur;

	f->state = state;
	f->file = file;
	f->line = line;
	switch_to_sched(f, false);
}

static const char *op_name(int op)
{
	switch (op) {
	case LP_EMU_SHFL_IDX: return "__shfl_sync";
	case LP_EMU_SHFL_UP: return "__shfl_up_sync";
	case LP_EMU_SHFL_DOWN: return "__shfl_down_sync";
	case LP_EMU_SHFL_XOR: return "__shfl_xor_sync";
	default: return "__syncwarp";
	}
}

static std::string where(const fiber &f)
{
	char b[256];

	switch (f.state) {
	case ST_DONE: snprintf(b, sizeof(b), "has exited"); break;
	case ST_BARRIER: snprintf(b, sizeof(b), "waits at __syncthreads (%s:%d)", f.file, f.line); break;
	case ST_SHFL:
		snprintf(b, sizeof(b), "waits at %s mask 0x%08x (%s:%d)", op_name(f.op), f.mask, f.file,
			 f.line);
		break;
	default: snprintf(b, sizeof(b), "is ready"); break;
	}
	return b;
}

static void kernel_error(const fiber *a, const fiber *b, const char *what)
{
	char head[512];

	snprintf(head, sizeof(head), "kernel %s, block (%u,%u,%u) of (%u,%u,%u), %u threads: %s",
		 krun->name, lp_emu_bid_cur.x, lp_emu_bid_cur.y, lp_emu_bid_cur.z, krun->grid.x,
		 krun->grid.y, krun->grid.z, (unsigned)krun->n, what);
	if (a && b)
		report("%s: thread (%u,%u,%u) (warp %d lane %d) %s; thread (%u,%u,%u) (warp %d "
		       "lane %d) %s", head, a->tid.x, a->tid.y, a->tid.z, a->lin / 32, a->lin % 32,
		       where(*a).c_str(), b->tid.x, b->tid.y, b->tid.z, b->lin / 32, b->lin % 32,
		       where(*b).c_str());
	else if (a)
		report("%s: thread (%u,%u,%u) (warp %d lane %d) %s", head, a->tid.x, a->tid.y,
		       a->tid.z, a->lin / 32, a->lin % 32, where(*a).c_str());
	else
		report("%s", head);
	krun->failed = true;
}

static bool same_shuffle(const fiber &a, const fiber &b)
{
	return b.state == ST_SHFL && a.op == b.op && a.line == b.line && a.mask == b.mask &&
	       a.width == b.width && !strcmp(a.file, b.file);
}

/* Resolve the shuffles of one warp that can go on; 1 if any did, -1 on
 * an error. */
static int resolve_warp(int w)
{
	std::vector<fiber> &th = krun->th;
	int base = w * 32, n = std::min(32, krun->n - base), any = 0;

	for (int i = 0; i < n; i++) {
		fiber &f = th[base + i];
		bool ok = true;
		if (f.state != ST_SHFL)
			continue;
		if (!(f.mask >> i & 1u)) {
			kernel_error(&f, nullptr, "a lane not in its own shuffle mask");
			return -1;
		}
		for (int j = 0; j < 32 && ok; j++)
			if (f.mask >> j & 1u && j < n && th[base + j].state != ST_DONE &&
			    !same_shuffle(f, th[base + j]))
				ok = false;
		if (!ok)
			continue;
		/* all live lanes of the mask are here: exchange */
		for (int j = 0; j < n; j++) {
			fiber &g = th[base + j];
			int wd = g.width, seg = j & ~(wd - 1), src = j;
			if (!(f.mask >> j & 1u) || g.state != ST_SHFL)
				continue;
			switch (g.op) {
			case LP_EMU_SHFL_IDX: src = seg + (g.arg & (wd - 1)); break;
			case LP_EMU_SHFL_UP: src = j - g.arg >= seg ? j - g.arg : j; break;
			case LP_EMU_SHFL_DOWN: src = j + g.arg < seg + wd ? j + g.arg : j; break;
			case LP_EMU_SHFL_XOR: src = (j ^ g.arg) < seg + wd ? j ^ g.arg : j; break;
			default: break; /* __syncwarp */
			}
			if (g.op <= LP_EMU_SHFL_XOR &&
			    (src >= n || !(f.mask >> src & 1u) || th[base + src].state != ST_SHFL)) {
				kernel_error(&g, src < n ? &th[base + src] : nullptr,
					     src >= n ? "shuffle from a lane beyond the block"
						      : "shuffle from a lane not taking part");
				return -1;
			}
			g.res = th[base + src].val;
		}
		for (int j = 0; j < n; j++)
			if (f.mask >> j & 1u && th[base + j].state == ST_SHFL)
				th[base + j].state = ST_READY;
		any = 1;
	}
	return any;
}

static uint64_t rng_state;

static uint64_t rng_next()
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void order(std::vector<int> &v, int n)
{
	v.resize((size_t)n);
	for (int i = 0; i < n; i++)
		v[(size_t)i] = opts().order == 1 ? n - 1 - i : i;
	if (opts().order == 2)
		for (int i = n - 1; i > 0; i--)
			std::swap(v[(size_t)i], v[rng_next() % (uint64_t)(i + 1)]);
}

static void run_block()
{
	std::vector<fiber> &th = krun->th;
	int n = krun->n, live = n;
	std::vector<int> ord;

	for (int i = 0; i < n; i++) {
		fiber &f = th[(size_t)i];
		f.lin = i;
		f.tid.x = (unsigned)i % krun->block.x;
		f.tid.y = (unsigned)i / krun->block.x % krun->block.y;
		f.tid.z = (unsigned)i / (krun->block.x * krun->block.y);
		f.state = ST_READY;
		f.stack = stack_of(i);
		f.stack_size = STACK;
		f.sp = fiber_init(f.stack, STACK, fiber_entry, &f);
	}
	order(ord, n);
	while (live > 0 && !krun->failed) {
		int any = 0, at_bar = 0;
		const fiber *first_bar = nullptr;

		if (opts().order == 2)
			order(ord, n);
		for (int i : ord) {
			fiber &f = th[(size_t)i];
			if (f.state != ST_READY)
				continue;
			cur = &f;
			lp_emu_tid_cur = f.tid;
			switch_to_fiber(&f);
			if (f.state == ST_DONE)
				live--;
		}
		if (live == 0 || krun->failed)
			break;
		for (int w = 0; w * 32 < n; w++) {
			int r = resolve_warp(w);
			if (r < 0)
				return;
			any |= r;
		}
		if (any)
			continue;
		for (int i = 0; i < n; i++) {
			fiber &f = th[(size_t)i];
			if (f.state == ST_BARRIER) {
				if (first_bar && (f.line != first_bar->line ||
						  strcmp(f.file, first_bar->file))) {
					kernel_error(first_bar, &f, "threads wait at different barriers");
					return;
				}
				if (!first_bar)
					first_bar = &f;
				at_bar++;
			}
		}
		if (at_bar == live) {
			for (int i = 0; i < n; i++)
				if (th[(size_t)i].state == ST_BARRIER)
					th[(size_t)i].state = ST_READY;
			continue;
		}
		/* stuck: name a waiting shuffle lane and the lane it waits for */
		for (int i = 0; i < n; i++) {
			fiber &f = th[(size_t)i];
			if (f.state != ST_SHFL)
				continue;
			int base = i / 32 * 32;
			for (int j = 0; j < 32 && base + j < n; j++) {
				fiber &g = th[(size_t)(base + j)];
				if (f.mask >> j & 1u && g.state != ST_DONE && !same_shuffle(f, g)) {
					kernel_error(&f, &g, "divergent warp: the lanes of a "
							     "shuffle's mask wait at different places");
					return;
				}
			}
		}
		kernel_error(first_bar, nullptr, "deadlock");
		return;
	}
}

static void run_kernel(const char *name, dim3 grid, dim3 block, lp_emu_body *body)
{
	kernel_run k;
	size_t shared = (size_t)(__stop_lp_emu_shared - __start_lp_emu_shared);
	int nb = (int)(grid.x * grid.y * grid.z);
	std::vector<int> ord;
	char who[300];

	k.name = name;
	k.grid = grid;
	k.block = block;
	k.body = body;
	k.n = (int)(block.x * block.y * block.z);
	k.failed = false;
	k.th.resize((size_t)k.n);
	if (!ensure_stacks(k.n)) {
		report("kernel %s: no memory for %d fiber stacks", name, k.n);
		sticky = set_error(cudaErrorLaunchOutOfResources);
		return;
	}
	krun = &k;
	lp_emu_bdim_cur = block;
	lp_emu_gdim_cur = grid;
	if (opts().order == 2 && rng_state == 0)
		rng_state = opts().seed ^ 0x5bd1e995u;
	order(ord, nb);
	for (int b : ord) {
		lp_emu_bid_cur.x = (unsigned)b % grid.x;
		lp_emu_bid_cur.y = (unsigned)b / grid.x % grid.y;
		lp_emu_bid_cur.z = (unsigned)b / (grid.x * grid.y);
		if (shared)
			memset(__start_lp_emu_shared, 0xFF, shared);
		run_block();
		if (k.failed)
			break;
	}
#if LP_EMU_ASAN
	if (k.failed) /* the abandoned fibers' frames leave their poison */
		for (int i = 0; i < k.n; i++)
			__asan_unpoison_memory_region(stack_of(i), STACK);
#endif
	krun = nullptr;
	snprintf(who, sizeof(who), "kernel %s", name);
	if (!canaries_intact(who) && !k.failed)
		k.failed = true, sticky = set_error(cudaErrorIllegalAddress);
	if (k.failed && sticky == cudaSuccess)
		sticky = set_error(cudaErrorLaunchFailure);
}

} // namespace lp_emu

using namespace lp_emu;

extern "C" void lp_emu_barrier(const char *file, int line)
{
	block_wait(ST_BARRIER, file, line);
}

extern "C" uint64_t lp_emu_shuffle(int op, const char *file, int line, unsigned mask, uint64_t v,
				  int arg, int width)
{
	fiber *f = cur;

	if (width <= 0 || width > 32 || (width & (width - 1))) {
		kernel_error(f, nullptr, "shuffle width not a power of two up to 32");
		width = 32;
	}
	f->op = op;
	f->mask = mask;
	f->val = v;
	f->arg = arg;
	f->width = width;
	block_wait(ST_SHFL, file, line);
	return f->res;
}

extern "C" void lp_emu_syncwarp(const char *file, int line, unsigned mask)
{
	fiber *f = cur;

	f->op = 99;
	f->mask = mask;
	f->width = 32;
	block_wait(ST_SHFL, file, line);
}

extern "C" cudaError_t lp_emu_enqueue_kernel(const char *name, dim3 grid, dim3 block, size_t shmem,
					    cudaStream_t stream, lp_emu_body *body,
					    const void *const *ptrs, int n_ptrs)
{
	std::lock_guard<std::recursive_mutex> g(lock());
	unsigned long long nt = (unsigned long long)block.x * block.y * block.z;
	std::shared_ptr<lp_emu_body> keep(body);

	if (sticky)
		return set_error(sticky);
	if (nt == 0 || nt > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
	    grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535 || shmem > 48 * 1024) {
		report("kernel %s: invalid launch <<<(%u,%u,%u), (%u,%u,%u), %zu>>>", name, grid.x,
		       grid.y, grid.z, block.x, block.y, block.z, shmem);
		return set_error(cudaErrorInvalidConfiguration);
	}
	/* every pointer argument must be memory the device can reach */
	for (int i = 0; i < n_ptrs; i++)
		if (ptrs[i] && !find(ptrs[i], 0)) {
			report("kernel %s: pointer argument %p is neither device nor pinned host "
			       "memory", name, ptrs[i]);
			return set_error(cudaErrorInvalidValue);
		}
	enqueue(stream, [=] { run_kernel(name, grid, block, keep.get()); });
	return cudaSuccess;
}
