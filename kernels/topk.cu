/*
 * topk.cu - per-row top-k by radix select.
 *
 * Key of a score: its float bits made order-preserving as unsigned (sign
 * bit flipped for positives, all bits for negatives), -0 read as +0, NaN
 * mapped to 0, below every number. Each digit round histograms the keys that match the
 * prefix found so far (shared-memory bins, then global), and one thread
 * per row walks the bins from the top to the digit that holds the k-th
 * key. After four rounds the k-th key T is known with `remaining`, how
 * many keys equal to T belong to the k; when more than that equal T, the
 * lowest indices win, found by the same rounds over the index digits.
 */
#include "kernels/topk.h"
#include "kernels/common.cuh"

struct tk_state {
	uint32_t prefix, mask;   /* key digits found */
	int remaining;           /* winners still to place within the prefix */
	int tie;                 /* more keys equal T than remaining */
	uint32_t iprefix, imask; /* index digits found (ties only) */
	uint32_t count;          /* gathered so far */
	uint32_t pad;
};

static __device__ __forceinline__ uint32_t tk_key(float f)
{
	uint32_t u = __float_as_uint(f);

	if (isnan(f))
		return 0;
	if (f == 0.0f) /* -0 ties with +0, as the CPU's comparison has it */
		u = 0;
	return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

static __global__ void tk_init(struct tk_state *st, uint32_t *hist, int n, int k)
{
	int q = blockIdx.x;

	if (threadIdx.x == 0) {
		struct tk_state s = { 0, 0, min(k, n), 0, 0, 0, 0, 0 };
		st[q] = s;
	}
	hist[q * 256 + threadIdx.x] = 0;
}

/* Digit `shift` of the keys (idx_round 0) or of the indices of the keys
 * equal to T (idx_round 1) that match the prefix so far. */
static __global__ void tk_hist(const float *__restrict__ S, size_t lds, int n,
			       const struct tk_state *__restrict__ st, uint32_t *hist, int shift,
			       int idx_round)
{
	__shared__ uint32_t h[256];
	int q = blockIdx.y;
	struct tk_state s = st[q];
	const float *row = S + q * lds;

	if (idx_round && !s.tie)
		return;
	h[threadIdx.x] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		uint32_t key = tk_key(row[i]);
		if (!idx_round) {
			if ((key & s.mask) == s.prefix)
				atomicAdd(&h[(key >> shift) & 255], 1u);
		} else if (key == s.prefix && ((uint32_t)i & s.imask) == s.iprefix) {
			atomicAdd(&h[((uint32_t)i >> shift) & 255], 1u);
		}
	}
	__syncthreads();
	if (h[threadIdx.x])
		atomicAdd(&hist[q * 256 + threadIdx.x], h[threadIdx.x]);
}

/* Keys: walk the bins from the highest; indices: from the lowest. */
static __global__ void tk_select(struct tk_state *st, uint32_t *hist, int shift, int idx_round)
{
	int q = blockIdx.x;
	uint32_t *hq = hist + q * 256;
	struct tk_state s = st[q];

	if (threadIdx.x == 0 && !(idx_round && !s.tie)) {
		int rem = s.remaining;
		uint32_t cum = 0;
		for (int i = 0; i < 256; i++) {
			int b = idx_round ? i : 255 - i;
			uint32_t c = hq[b];
			if (cum + c >= (uint32_t)rem) {
				s.remaining = rem - (int)cum;
				if (idx_round) {
					s.iprefix |= (uint32_t)b << shift;
					s.imask |= 255u << shift;
				} else {
					s.prefix |= (uint32_t)b << shift;
					s.mask |= 255u << shift;
					if (shift == 0)
						s.tie = c > (uint32_t)s.remaining;
				}
				break;
			}
			cum += c;
		}
		st[q] = s;
	}
	__syncthreads();
	hq[threadIdx.x] = 0;
}

static __global__ void tk_gather(const float *__restrict__ S, size_t lds, int n,
				 struct tk_state *st, uint32_t *__restrict__ ckey,
				 uint32_t *__restrict__ cidx, int k)
{
	int q = blockIdx.y;
	struct tk_state s = st[q];
	const float *row = S + q * lds;

	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		uint32_t key = tk_key(row[i]);
		bool take = key > s.prefix ||
			    (key == s.prefix && (!s.tie || (uint32_t)i <= s.iprefix));
		if (take) {
			uint32_t slot = atomicAdd(&st[q].count, 1u);
			if (slot < (uint32_t)k) {
				ckey[(size_t)q * k + slot] = key;
				cidx[(size_t)q * k + slot] = (uint32_t)i;
			}
		}
	}
}

/* Bitonic sort of up to 1024 (key, ~index) pairs, descending. */
static __global__ void tk_sort(const float *__restrict__ S, size_t lds, int n,
			       const uint32_t *__restrict__ ckey, const uint32_t *__restrict__ cidx,
			       int k, float *__restrict__ out, int32_t *__restrict__ idx)
{
	__shared__ unsigned long long v[LP_CUK_TOPK_MAX];
	int q = blockIdx.x, keff = min(k, n);

	for (int j = threadIdx.x; j < LP_CUK_TOPK_MAX; j += blockDim.x)
		v[j] = j < keff ? ((unsigned long long)ckey[(size_t)q * k + j] << 32) |
					  (uint32_t)~cidx[(size_t)q * k + j]
				: 0ull;
	__syncthreads();
	for (int size = 2; size <= LP_CUK_TOPK_MAX; size <<= 1)
		for (int stride = size / 2; stride > 0; stride >>= 1) {
			for (int j = threadIdx.x; j < LP_CUK_TOPK_MAX; j += blockDim.x) {
				int p = j ^ stride;
				if (p > j) {
					bool desc = (j & size) == 0;
					unsigned long long a = v[j], b = v[p];
					if (desc ? a < b : a > b) {
						v[j] = b;
						v[p] = a;
					}
				}
			}
			__syncthreads();
		}
	for (int j = threadIdx.x; j < k; j += blockDim.x) {
		if (j < keff) {
			uint32_t i = ~(uint32_t)v[j];
			idx[(size_t)q * k + j] = (int32_t)i;
			out[(size_t)q * k + j] = S[q * lds + i];
		} else {
			idx[(size_t)q * k + j] = -1;
			out[(size_t)q * k + j] = -INFINITY;
		}
	}
}

struct tk_layout {
	struct tk_state *st;
	uint32_t *hist, *ckey, *cidx;
};

static size_t align256(size_t b)
{
	return (b + 255) & ~(size_t)255;
}

static size_t layout(int n_q, int k, void *base, struct tk_layout *l)
{
	size_t off = 0;
	char *p = (char *)base;

	l->st = (struct tk_state *)(p + off);
	off += align256((size_t)n_q * sizeof(struct tk_state));
	l->hist = (uint32_t *)(p + off);
	off += align256((size_t)n_q * 256 * sizeof(uint32_t));
	l->ckey = (uint32_t *)(p + off);
	off += align256((size_t)n_q * k * sizeof(uint32_t));
	l->cidx = (uint32_t *)(p + off);
	off += align256((size_t)n_q * k * sizeof(uint32_t));
	return off;
}

extern "C" size_t lp_cuk_topk_scratch_bytes(int n_q, int k)
{
	struct tk_layout l;

	return layout(n_q, k, NULL, &l);
}

extern "C" cudaError_t lp_cuk_topk(const float *scores, size_t lds, int n_q, int n, int k,
				   void *scratch, float *out, int32_t *idx, cudaStream_t stream)
{
	struct tk_layout l;
	cudaError_t e;
	int nbits = 0;

	if (n_q < 0 || n_q > 65535 || n < 1 || k < 1 || k > LP_CUK_TOPK_MAX)
		return cudaErrorInvalidValue;
	if (n_q == 0)
		return cudaSuccess;
	layout(n_q, k, scratch, &l);
	/* enough blocks per row to fill the chip when there are few rows */
	unsigned chunks = lpk_blocks((size_t)n, 256 * 16);
	unsigned want = lpk_blocks(1056, (unsigned)n_q);
	dim3 grid(chunks < want ? chunks : want, n_q);
	while (nbits < 32 && (1u << nbits) < (uint32_t)n)
		nbits++;
	tk_init<<<n_q, 256, 0, stream>>>(l.st, l.hist, n, k);
	for (int shift = 24; shift >= 0; shift -= 8) {
		tk_hist<<<grid, 256, 0, stream>>>(scores, lds, n, l.st, l.hist, shift, 0);
		tk_select<<<n_q, 256, 0, stream>>>(l.st, l.hist, shift, 0);
	}
	for (int shift = (nbits + 7) / 8 * 8 - 8; shift >= 0; shift -= 8) {
		tk_hist<<<grid, 256, 0, stream>>>(scores, lds, n, l.st, l.hist, shift, 1);
		tk_select<<<n_q, 256, 0, stream>>>(l.st, l.hist, shift, 1);
	}
	tk_gather<<<grid, 256, 0, stream>>>(scores, lds, n, l.st, l.ckey, l.cidx, k);
	if ((e = lpk_launched()) != cudaSuccess)
		return e;
	tk_sort<<<n_q, 512, 0, stream>>>(scores, lds, n, l.ckey, l.cidx, k, out, idx);
	return lpk_launched();
}
