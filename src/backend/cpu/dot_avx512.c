/*
 * dot_avx512.c - AVX-512 (F, BW, VL, VNNI) dot products and the int8
 * batch product of prompts (x86-64 only).
 *
 * Built in its own convenience library with -mavx512f -mavx512bw
 * -mavx512vl -mavx512vnni (and the AVX2 set's -mavx2 -mfma -mf16c) when the
 * compiler takes them; nothing here runs unless lp_cpu_kernels_avx512()
 * found those features at run time.
 *
 * What AVX-512 brings to these kernels, beyond the AVX2 set:
 * - vpdpbusd (VNNI) sums four u8 x s8 products into each int32 lane in
 *   one instruction, where AVX2 needs vpmaddubsw then vpmaddwd; it sums
 *   in 32 bits, so there is no int16 saturation to keep below.
 * - byte masks (BW): the fifth bits of Q5_0/Q5_1 are a 32-bit mask that
 *   adds 16 to the bytes it selects, one instruction instead of five.
 * - masked loads finish a float row of any length without a scalar tail.
 *
 * Not every type gains. The K types (whose 6-bit sub-block scales
 * multiply int16 pair sums: vpdpwssd) were written with VNNI and measured
 * slower than the AVX2 set's vpmaddubsw + vpmaddwd on this project's Zen 4
 * (one thread, 1536 x 1536 in cache: Q4_K 0.78x, Q6_K 0.86x of the AVX2
 * kernel, also with two and four vpdpwssd chains); so this set's mat-vec
 * takes the AVX2 kernels for Q4_K, Q5_K and Q6_K (and the AVX2 activation
 * quantizers and dequantizer), and its own where they won: the legacy
 * types, Q8_0 and the float types. Q8_0 (signed by signed) was slower
 * too (0.76x) while each row made its own correction of w + 128; taken
 * as a fifth legacy format, four rows sharing the correction of each
 * activation block, it is faster (1.36x, below).
 * Its int8 batch product of prompts (at the end of this file) takes all
 * but Q5_K: there vpdpbusd does the whole of the work.
 *
 * The integer kernels compute the scalar reference's integer sums per
 * block exactly (the order of integer additions does not matter) and then
 * one float multiply-add per block, as the AVX2 set does; they differ from
 * the reference only by the order of the float sums.
 *
 * The quantized mat-vec kernels stay 256 bits wide: a block of 32 8-bit
 * activations is one ymm register, and on Zen 4 (which runs a 512-bit
 * operation as two 256-bit halves) wider vectors would only add the
 * shuffles that pair two blocks' scales. The float kernels, whose rows
 * are contiguous, and the batch product (16 tokens a vector) take 512.
 *
 * AVX-512 BF16 (vdpbf16ps) is not used: it multiplies bf16 by bf16, so the
 * float activations would be rounded to 8 bits of mantissa first, and no
 * weight type here is computed with that loss; a bf16 weight widens to
 * float exactly with a shift, as in the AVX2 set.
 */
#include "backend/cpu/kernels.h"

#include <immintrin.h>
#include <string.h>

#include "backend/cpu/simd_x86.h"
#include "quant/blocks.h"
#include "quant/rowgroup.h"

/* Lanes [0, n) of 16 (n <= 16). */
static inline __mmask16 first16(size_t n)
{
	return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

/* ---- float weights: 16 lanes, the tail by a masked load ---- */

static float dot_f32(const void *w, const void *a, size_t n)
{
	const float *x = w, *y = a;
	__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), acc0);
		acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16),
				       acc1);
	}
	for (; i < n; i += 16) {
		__mmask16 m = first16(n - i);
		acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i),
				       _mm512_maskz_loadu_ps(m, y + i), acc0);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

static inline __m512 load_f16(const uint16_t *p, __mmask16 m)
{
	return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

/* bf16 is the top half of a float: widening is exact. */
static inline __m512 load_bf16(const uint16_t *p, __mmask16 m)
{
	__m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));

	return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}

/* F16 or BF16 weights (bf: which), widened to float 16 at a time. */
static inline __attribute__((always_inline)) float
dot_half(const void *w, const void *a, size_t n, int bf)
{
	const uint16_t *x = w;
	const float *y = a;
	__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		prefetch_at(x + i, PF_AHEAD, 64);
		acc0 = _mm512_fmadd_ps(bf ? load_bf16(x + i, 0xFFFF) : load_f16(x + i, 0xFFFF),
				       _mm512_loadu_ps(y + i), acc0);
		acc1 = _mm512_fmadd_ps(bf ? load_bf16(x + i + 16, 0xFFFF) : load_f16(x + i + 16, 0xFFFF),
				       _mm512_loadu_ps(y + i + 16), acc1);
	}
	for (; i < n; i += 16) {
		__mmask16 m = first16(n - i);
		acc0 = _mm512_fmadd_ps(bf ? load_bf16(x + i, m) : load_f16(x + i, m),
				       _mm512_maskz_loadu_ps(m, y + i), acc0);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

static float dot_f16(const void *w, const void *a, size_t n)
{
	return dot_half(w, a, n, 0);
}

static float dot_bf16(const void *w, const void *a, size_t n)
{
	return dot_half(w, a, n, 1);
}

/* ---- legacy blocks of 32 ---- */

/* The AVX2 set's fp16 table (dot_avx2.c): a scale's broadcast is a load. */
#define FP16(h) (&lp_cpu_fp16_tab[(h)])

/* d_w * d_a in all 8 lanes. */
static inline __m256 block_scale(uint16_t dw, const float *da)
{
	return _mm256_mul_ps(_mm256_broadcast_ss(FP16(dw)), _mm256_broadcast_ss(da));
}

/* Q5 values 0..31: the nibbles plus 16 where bit j of the little-endian
 * word qh is set, the word itself being the byte mask. */
static inline __m256i q5_values(const uint8_t *qs, const uint8_t *qh)
{
	uint32_t h;
	__m256i q = unpack_nibbles16(qs);

	memcpy(&h, qh, 4);
	return _mm256_mask_add_epi8(q, (__mmask32)h, q, _mm256_set1_epi8(0x10));
}

/* sum over the block of u[j] * s[j], u unsigned, s signed, as 8 floats */
static inline __m256 udot(__m256i u, const int8_t *s)
{
	__m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), u,
					_mm256_loadu_si256((const __m256i *)s));

	return _mm256_cvtepi32_ps(p);
}

/*
 * The four legacy formats, one kernel: a block is d (fp16), then m (fp16,
 * Q4_1/Q5_1), then qh (4 bytes, Q5_0/Q5_1), then 16 bytes of nibbles.
 * Q4_0/Q5_0: sum (q - o) a (o = 8 or 16) is summed in integers, as the
 * reference does, by starting vpdpbusd's sums at - o (sum a) rather than
 * zero; Q4_1/Q5_1: sum (d q + m) a = d * da * sum q a + m * s, the second
 * term a side sum (every lane the same). Q8_0 is taken as a fifth such
 * format: its signed bytes plus 128 (an xor) are vpdpbusd's unsigned
 * operand, and o = 128 comes back through the starting sums.
 *
 * What bounds these kernels on Zen 4 is not the arithmetic's latency (four
 * accumulators a row ran no faster than two) but the work a block needs,
 * and most of all its loads: a row alone loads, per block, its nibbles,
 * its d and m and their floats (lp_cpu_fp16_tab), and the activations'
 * 32 bytes, d and s, eight loads. So the four-row kernel loads each
 * activation block once for four rows (and, for the offset formats, makes
 * the offsets' starting sums once): 0.72x the cycles of a block of the
 * one-row kernel it replaced in cache (2.7 against 3.8 cycles, a 64-row
 * Q4_1 matrix of 1536 columns; Q8_0 40.9 against the AVX2 set's four-row
 * kernel's 30.1 GB/s, 1536 x 576), and eight rows gained too little more
 * (2.6) to pay for their tails. Wider vectors did not help: two blocks a
 * 512-bit step (vpermw to lay out both, vcvtph2ps to widen both scales)
 * ran slower, at 5 cycles a block, since on Zen 4 a 512-bit vcvtph2ps
 * takes two cycles and a masked 16-bit load almost two.
 *
 * Each row keeps one product sum and one side sum, its blocks in order,
 * in both kernels, so that the four-row kernel gives the one-row kernel's
 * floats bit for bit.
 */
struct legacy {
	size_t bytes;    /* of a block */
	int has_min;     /* Q4_1, Q5_1 */
	int has_qh;      /* Q5_0, Q5_1 */
	float offset;    /* 8 or 16 for Q4_0, Q5_0, 128 for Q8_0 */
	int is_q8;       /* Q8_0: d, then 32 signed bytes */
};

static inline __m256i legacy_values(const struct legacy *f, const uint8_t *blk)
{
	const uint8_t *qh = blk + 2 + 2 * f->has_min;

	if (f->is_q8)  /* w + 128 as unsigned bytes */
		return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(blk + 2)),
					_mm256_set1_epi8((char)0x80));
	return f->has_qh ? q5_values(qh + 4, qh) : unpack_nibbles16(qh);
}

/* What every row takes of one activation block. */
struct legacy_act {
	__m256i q;     /* the 32 values */
	__m256i init;  /* vpdpbusd's starting sums: - o (a's 4-sums), or 0 */
	__m256 d, s;   /* its d and s in every lane */
};

static inline __attribute__((always_inline)) struct legacy_act
legacy_act(const struct legacy *f, const struct lp_act_q8_32 *y)
{
	struct legacy_act A;

	A.q = _mm256_loadu_si256((const __m256i *)y->qs);
	A.d = _mm256_broadcast_ss(&y->d);
	A.s = _mm256_broadcast_ss(&y->s);
	A.init = _mm256_setzero_si256();
	if (!f->has_min)
		A.init = _mm256_sub_epi32(A.init, _mm256_dpbusd_epi32(A.init,
				_mm256_set1_epi8((char)(int)f->offset), A.q));
	return A;
}

/* One block of one row: acc += d_w d_a (q - o) . a, and side += m s for
 * the formats with a minimum. */
static inline __attribute__((always_inline)) void
legacy_step(const struct legacy *f, const uint8_t *blk, const struct legacy_act *A, __m256 *acc,
	    __m256 *side)
{
	uint16_t d, m;
	__m256i isum = _mm256_dpbusd_epi32(A->init, legacy_values(f, blk), A->q);

	memcpy(&d, blk, 2);
	*acc = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_broadcast_ss(FP16(d)), A->d),
			       _mm256_cvtepi32_ps(isum), *acc);
	if (f->has_min) {
		memcpy(&m, blk + 2, 2);
		*side = _mm256_fmadd_ps(_mm256_broadcast_ss(FP16(m)), A->s, *side);
	}
}

static inline float legacy_end(const struct legacy *f, __m256 acc, __m256 side)
{
	float dot = hsum_ps(acc);

	return f->has_min ? dot + _mm256_cvtss_f32(side) : dot;
}

static inline __attribute__((always_inline)) float
legacy_dot(const struct legacy *f, const void *w, const void *a, size_t n)
{
	const struct lp_act_q8_32 *y = a;
	const uint8_t *x = w;
	__m256 acc = _mm256_setzero_ps(), side = acc;

	for (size_t i = 0; i < n / LP_QK; i++) {
		struct legacy_act A = legacy_act(f, &y[i]);
		prefetch_at(x + i * f->bytes, PF_AHEAD, f->bytes);
		legacy_step(f, x + i * f->bytes, &A, &acc, &side);
	}
	return legacy_end(f, acc, side);
}

/*
 * Four rows, rb bytes apart. The rows advance together, and the group's
 * bytes are read ahead as one stream at the rate the four rows read
 * them, PF_GROUP_AHEAD bytes past the group's end: with two groups of
 * rows ahead (as dot4_q8_0 in the AVX2 set reads), 2.9 KiB for SmolLM2's
 * rows of 576 columns, a step took about a tenth longer (bench_forward,
 * one thread, load 4-6: 2.49 against 2.09-2.35 CPU seconds for 256 steps;
 * 16 KiB ran as 8).
 */
#define PF_GROUP_AHEAD 8192

static inline __attribute__((always_inline)) void
legacy_dot4(const struct legacy *f, const void *w, size_t rb, const void *a, size_t n,
	    float out[4])
{
	const struct lp_act_q8_32 *y = a;
	const uint8_t *x0 = w, *x1 = x0 + rb, *x2 = x1 + rb, *x3 = x2 + rb;
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	__m256 s0 = a0, s1 = a0, s2 = a0, s3 = a0;

	for (size_t i = 0, at = 0; i < n / LP_QK; i++, at += f->bytes) {
		struct legacy_act A = legacy_act(f, &y[i]);
		prefetch_at(w, 4 * rb + PF_GROUP_AHEAD + 4 * at, 4 * f->bytes);
		legacy_step(f, x0 + at, &A, &a0, &s0);
		legacy_step(f, x1 + at, &A, &a1, &s1);
		legacy_step(f, x2 + at, &A, &a2, &s2);
		legacy_step(f, x3 + at, &A, &a3, &s3);
	}
	out[0] = legacy_end(f, a0, s0);
	out[1] = legacy_end(f, a1, s1);
	out[2] = legacy_end(f, a2, s2);
	out[3] = legacy_end(f, a3, s3);
}

static const struct legacy f_q4_0 = { sizeof(struct lp_blk_q4_0), 0, 0, 8.0f, 0 };
static const struct legacy f_q4_1 = { sizeof(struct lp_blk_q4_1), 1, 0, 0.0f, 0 };
static const struct legacy f_q5_0 = { sizeof(struct lp_blk_q5_0), 0, 1, 16.0f, 0 };
static const struct legacy f_q5_1 = { sizeof(struct lp_blk_q5_1), 1, 1, 0.0f, 0 };
static const struct legacy f_q8_0 = { sizeof(struct lp_blk_q8_0), 0, 0, 128.0f, 1 };

#define LEGACY(name, fmt) \
	static float dot_##name(const void *w, const void *a, size_t n) \
	{ \
		return legacy_dot(&fmt, w, a, n); \
	} \
	static void dot4_##name(const void *w, size_t rb, const void *a, size_t n, float y[4]) \
	{ \
		legacy_dot4(&fmt, w, rb, a, n, y); \
	}
LEGACY(q4_0, f_q4_0)
LEGACY(q4_1, f_q4_1)
LEGACY(q5_0, f_q5_0)
LEGACY(q5_1, f_q5_1)
LEGACY(q8_0, f_q8_0)
#undef LEGACY

/* ---- int8 products of a batch (kernels.h: struct lp_q8_gemm) ---- */

/*
 * The mat-vec takes a row against one token; a batch of tokens is better
 * taken the other way round: with 16 tokens in the 16 int32 lanes of a
 * vector, vpdpbusd adds the products of four weights of one row (the same
 * 4 bytes broadcast to every lane) with four activations of each token,
 * and a block of 32 columns is 8 such steps into the same integer sums,
 * whose scales are then those of one block of one row: a float multiply
 * and add per block of 32 columns, row and 16 tokens, instead of one per
 * block, row and token. (The mat-vec's layout, a row and one token per
 * vector, needs those float steps for every 32 products.)
 *
 * The weights become unsigned bytes, as vpdpbusd wants: the values of
 * Q4_0/Q4_1/Q4_K (0..15) and Q5_0/Q5_1 (0..31) as they are, Q8_0's plus
 * 128; Q4_K's blocks of 32 take d * scale as their d and - dmin * min as
 * their m (its activations, in blocks of 256, are packed as 8 blocks of
 * 32 sharing d, with the sums of their groups of 16);
 * the offsets (8, 16 and 128) come back through the activation sums,
 * sum (q - o) a = sum q a - o sum a, in integers, as the reference does.
 * A block's integer sum is then the reference's exactly, and so is its
 * float step (d_w d_a isum, plus m s for the formats with a minimum).
 *
 * A pack block (group g, column block b) holds, for k-step q < 8, the
 * 4 activations 4q..4q+3 of token i at q * 128 + 4 i (two vectors of 16
 * tokens per step), then the 32 tokens' d, s and integer sums, of all 32
 * activations and of the first 16.
 *
 * Q6_K (0..63, offset 32) has a signed scale per 16 columns: its blocks
 * of 32 are two halves, each with its own integer sum, offset and d.
 */
#define PK_D (LP_Q8_GROUP * 32)
#define PK_S (PK_D + 4 * LP_Q8_GROUP)
#define PK_SUM (PK_S + 4 * LP_Q8_GROUP)
#define PK_SUM16 (PK_SUM + 4 * LP_Q8_GROUP)  /* of the first 16 (Q6_K's scales) */

/* Block b (of 32) of a quantized row: its bytes, d, s and integer sum.
 * For the K types a block of 256 holds 8 of them, which share its d; the
 * sums are those of its two groups of 16. */
static inline const int8_t *act_block(enum lp_qtype t, const void *blocks, size_t b, float *d,
				      float *s, int32_t *sum, int32_t *sum16)
{
	if (lp_qtype_block_elems(t) == 256) {
		const struct lp_act_q8_256 *y = (const struct lp_act_q8_256 *)blocks + b / 8;
		int j = (int)(b % 8);
		*sum16 = y->bsums[2 * j];
		*sum = y->bsums[2 * j] + y->bsums[2 * j + 1];
		*d = y->d;
		*s = y->d * (float)*sum;
		return y->qs + 32 * j;
	} else {
		const struct lp_act_q8_32 *y = (const struct lp_act_q8_32 *)blocks + b;
		*sum = *sum16 = 0;
		for (int j = 0; j < 32; j++)
			*sum += y->qs[j];
		for (int j = 0; j < 16; j++)
			*sum16 += y->qs[j];
		*d = y->d;
		*s = y->s;
		return y->qs;
	}
}

static void q8_pack(enum lp_qtype t, const struct lp_q8_act *xq, size_t n, size_t cols,
		    void *pack, size_t g0, size_t g1)
{
	size_t nb = cols / 32;

	for (size_t g = g0; g < g1; g++) {
		uint8_t *dst = (uint8_t *)pack + g * nb * LP_Q8_PACK_BYTES;
		memset(dst, 0, nb * LP_Q8_PACK_BYTES);
		for (size_t i = 0; i < LP_Q8_GROUP && g * LP_Q8_GROUP + i < n; i++) {
			const void *blocks = xq[g * LP_Q8_GROUP + i].blocks;
			for (size_t b = 0; b < nb; b++) {
				uint8_t *pb = dst + b * LP_Q8_PACK_BYTES;
				float d, sd;
				int32_t sum, sum16;
				const int8_t *qs = act_block(t, blocks, b, &d, &sd, &sum, &sum16);
				for (int q = 0; q < 8; q++)
					memcpy(pb + q * 4 * LP_Q8_GROUP + 4 * i, qs + 4 * q, 4);
				memcpy(pb + PK_D + 4 * i, &d, 4);
				memcpy(pb + PK_S + 4 * i, &sd, 4);
				memcpy(pb + PK_SUM + 4 * i, &sum, 4);
				memcpy(pb + PK_SUM16 + 4 * i, &sum16, 4);
			}
		}
	}
}

static int q8_has(enum lp_qtype t)
{
	return t == LP_Q_Q4_0 || t == LP_Q_Q4_1 || t == LP_Q_Q5_0 || t == LP_Q_Q5_1 ||
	       t == LP_Q_Q8_0 || t == LP_Q_Q4_K || t == LP_Q_Q6_K;
}

static const struct legacy *legacy_of(enum lp_qtype t)
{
	switch (t) {
	case LP_Q_Q4_0: return &f_q4_0;
	case LP_Q_Q4_1: return &f_q4_1;
	case LP_Q_Q5_0: return &f_q5_0;
	case LP_Q_Q5_1: return &f_q5_1;
	default: return NULL;
	}
}

/*
 * One weight row as unsigned bytes (32 per block, in element order), its
 * blocks' d (float) and m (float, 0 for the formats without), for the
 * offset `*off` the activation sums must take back.
 */
static void q8_unpack_row(enum lp_qtype t, const uint8_t *row, size_t nb, uint8_t *q, float *d,
			  float *m, int *off)
{
	const struct legacy *f = legacy_of(t);

	if (t == LP_Q_Q6_K) {
		/* per 16 columns: d * scale (d and m then hold two floats a block) */
		const struct lp_blk_q6_k *x = (const void *)row;
		const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
		*off = 32;
		for (size_t i = 0; i < nb / 8; i++) {
			float dd = lp_cpu_fp16_tab[x[i].d];
			for (int h = 0; h < 2; h++)
				for (int k = 0; k < 4; k++) {
					__m256i l = _mm256_loadu_si256((const __m256i *)(x[i].ql + 64 * h +
											 32 * (k & 1)));
					__m256i hb = _mm256_loadu_si256((const __m256i *)(x[i].qh + 32 * h));
					__m256i lo = k < 2 ? _mm256_and_si256(l, m4)
							   : _mm256_and_si256(_mm256_srli_epi16(l, 4), m4);
					hb = _mm256_and_si256(_mm256_srl_epi16(hb, _mm_cvtsi32_si128(2 * k)), m2);
					_mm256_storeu_si256((__m256i *)(q + 256 * i + 128 * h + 32 * k),
							    _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4)));
				}
			for (int j = 0; j < 16; j++) {
				d[16 * i + j] = dd * (float)x[i].scales[j];
				m[16 * i + j] = 0.0f;
			}
		}
		return;
	}
	if (t == LP_Q_Q4_K) {
		/* per block of 32: the nibbles, d * scale and - dmin * min, so that
		 * sum w a = d_w d_a isum + m s as for Q4_1 */
		const struct lp_blk_q4_k *x = (const void *)row;
		const __m256i m4 = _mm256_set1_epi8(0x0F);
		*off = 0;
		for (size_t i = 0; i < nb / 8; i++) {
			uint8_t sc[8], mn[8];
			float dd = lp_cpu_fp16_tab[x[i].d], dm = lp_cpu_fp16_tab[x[i].dmin];
			k_unpack(x[i].scales, sc, mn);
			for (int c = 0; c < 4; c++) {
				__m256i v = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * c));
				uint8_t *o = q + 256 * i + 64 * c;
				_mm256_storeu_si256((__m256i *)o, _mm256_and_si256(v, m4));
				_mm256_storeu_si256((__m256i *)(o + 32),
						    _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
			}
			for (int j = 0; j < 8; j++) {
				d[8 * i + j] = dd * (float)sc[j];
				m[8 * i + j] = -(dm * (float)mn[j]);
			}
		}
		return;
	}
	if (!f) {  /* Q8_0 */
		const struct lp_blk_q8_0 *x = (const void *)row;
		*off = 128;
		for (size_t b = 0; b < nb; b++) {
			__m256i v = _mm256_loadu_si256((const __m256i *)x[b].qs);
			_mm256_storeu_si256((__m256i *)(q + 32 * b),
					    _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80)));
			d[b] = lp_cpu_fp16_tab[x[b].d];
			m[b] = 0.0f;
		}
		return;
	}
	*off = f->has_min ? 0 : (int)f->offset;
	for (size_t b = 0; b < nb; b++) {
		const uint8_t *blk = row + b * f->bytes;
		uint16_t h;
		_mm256_storeu_si256((__m256i *)(q + 32 * b), legacy_values(f, blk));
		memcpy(&h, blk, 2);
		d[b] = lp_cpu_fp16_tab[h];
		if (f->has_min)
			memcpy(&h, blk + 2, 2);
		m[b] = f->has_min ? lp_cpu_fp16_tab[h] : 0.0f;
	}
}

/*
 * q8_unpack_row for row r of a matrix in row groups (quant/rowgroup.h):
 * a block's 4-byte pieces of the row, one in each 64-byte vector, widened
 * to its 32 values in element order, the same bytes, d and m that
 * q8_unpack_row takes from the file's layout.
 */
static void q8_unpack_group_row(enum lp_qtype t, const uint8_t *W, size_t nb, size_t r,
				uint8_t *q, float *d, float *m, int *off)
{
	size_t gb = lp_rowgroup_block_bytes(t);
	const uint8_t *g = W + r / LP_RG_ROWS * nb * gb;
	size_t at = 4 * (r % LP_RG_ROWS);
	const __m128i m4 = _mm_set1_epi8(0x0F);
	uint16_t h;

	*off = t == LP_Q_Q8_0 ? 128 : t == LP_Q_Q5_0 ? 16 : 0;
	for (size_t b = 0; b < nb; b++, g += gb) {
		uint8_t *o = q + 32 * b;
		if (t == LP_Q_Q8_0) {
			for (int p = 0; p < 8; p++)
				memcpy(o + 4 * p, g + 64 * p + at, 4);
			memcpy(&h, g + LP_RG_Q8_0_D + 2 * (r % LP_RG_ROWS), 2);
			d[b] = lp_cpu_fp16_tab[h];
			m[b] = 0.0f;
			continue;
		}
		{
			/* the nibbles of vectors 0..3, then low and high interleaved
			 * a piece at a time: values 8p .. 8p + 7 */
			int32_t v0, v1, v2, v3;
			memcpy(&v0, g + at, 4);
			memcpy(&v1, g + 64 + at, 4);
			memcpy(&v2, g + 128 + at, 4);
			memcpy(&v3, g + 192 + at, 4);
			__m128i v = _mm_setr_epi32(v0, v1, v2, v3);
			__m128i lo = _mm_and_si128(v, m4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m4);
			__m256i vals = _mm256_set_m128i(_mm_unpackhi_epi32(lo, hi),
							_mm_unpacklo_epi32(lo, hi));
			if (t == LP_Q_Q5_0) {
				/* mask 2p + h's bits 4r' .. 4r' + 3 are values 8p + 4h .. + 3 */
				uint32_t bits = 0;
				for (int k = 0; k < 8; k++) {
					uint64_t mk;
					memcpy(&mk, g + LP_RG_Q5_0_MASKS + 8 * k, 8);
					bits |= (uint32_t)((mk >> at) & 0xF) << (4 * k);
				}
				vals = _mm256_mask_add_epi8(vals, (__mmask32)bits, vals,
							    _mm256_set1_epi8(0x10));
			}
			_mm256_storeu_si256((__m256i *)o, vals);
		}
		memcpy(&h, g + (t == LP_Q_Q5_0 ? LP_RG_Q5_0_D : LP_RG_Q4_1_D) + 2 * (r % LP_RG_ROWS),
		       2);
		d[b] = lp_cpu_fp16_tab[h];
		m[b] = 0.0f;
		if (t == LP_Q_Q4_1) {
			memcpy(&h, g + LP_RG_Q4_1_M + 2 * (r % LP_RG_ROWS), 2);
			m[b] = lp_cpu_fp16_tab[h];
		}
	}
}

/*
 * Four rows (q: 4 x cols bytes, d, m: 4 x nb) against the 32 tokens of
 * one pack group: acc[2r + h] holds row r's results for tokens 16h..16h+15.
 * Written out row by row (the ROW macros) so that the 8 integer and 8
 * float sums stay in registers: as arrays in loops, gcc kept them on the
 * stack.
 */
#define ROW_STEP(r) do { \
		int32_t w4; \
		memcpy(&w4, q + (r) * cols + 32 * b + 4 * k, 4); \
		__m512i w = _mm512_set1_epi32(w4); \
		i##r##0 = _mm512_dpbusd_epi32(i##r##0, w, x0); \
		i##r##1 = _mm512_dpbusd_epi32(i##r##1, w, x1); \
	} while (0)
/* d_w d_a isum (+ m s), the reference's order; j: the d of this sum */
#define ROW_END(r, j) do { \
		__m512 dw = _mm512_set1_ps(d[(r) * nd + (j)]); \
		a##r##0 = _mm512_fmadd_ps(_mm512_mul_ps(dw, da0), _mm512_cvtepi32_ps(i##r##0), a##r##0); \
		a##r##1 = _mm512_fmadd_ps(_mm512_mul_ps(dw, da1), _mm512_cvtepi32_ps(i##r##1), a##r##1); \
		if (has_min) { \
			__m512 mw = _mm512_set1_ps(m[(r) * nd + (j)]); \
			a##r##0 = _mm512_fmadd_ps(mw, sa0, a##r##0); \
			a##r##1 = _mm512_fmadd_ps(mw, sa1, a##r##1); \
		} \
	} while (0)
/* steps [k0, k1) of block b from the starting sums s0, s1, then their
 * float step with the j-th d of each row */
#define BLOCK_PART(k0, k1, j) do { \
		__m512i i00 = s0, i01 = s1, i10 = s0, i11 = s1; \
		__m512i i20 = s0, i21 = s1, i30 = s0, i31 = s1; \
		for (int k = (k0); k < (k1); k++) { \
			__m512i x0 = _mm512_loadu_si512(pb + k * 4 * LP_Q8_GROUP); \
			__m512i x1 = _mm512_loadu_si512(pb + k * 4 * LP_Q8_GROUP + 64); \
			ROW_STEP(0); \
			ROW_STEP(1); \
			ROW_STEP(2); \
			ROW_STEP(3); \
		} \
		ROW_END(0, j); \
		ROW_END(1, j); \
		ROW_END(2, j); \
		ROW_END(3, j); \
	} while (0)

/* sums (16 tokens) at `at` times -off */
static inline __m512i neg_off(const uint8_t *at, __m512i noff)
{
	return _mm512_mullo_epi32(_mm512_loadu_si512(at), noff);
}

static inline __attribute__((always_inline)) void
q8_tile(const uint8_t *q, size_t cols, const float *d, const float *m, int off, int has_min,
	int halves, const uint8_t *pg, size_t nb, __m512 acc[8])
{
	__m512 a00 = _mm512_setzero_ps(), a01 = a00, a10 = a00, a11 = a00;
	__m512 a20 = a00, a21 = a00, a30 = a00, a31 = a00;
	const __m512i noff = _mm512_set1_epi32(-off);
	size_t nd = halves ? 2 * nb : nb;  /* d's per row */

	for (size_t b = 0; b < nb; b++) {
		const uint8_t *pb = pg + b * LP_Q8_PACK_BYTES;
		__m512 da0 = _mm512_loadu_ps(pb + PK_D), da1 = _mm512_loadu_ps(pb + PK_D + 64);
		__m512 sa0 = _mm512_loadu_ps(pb + PK_S), sa1 = _mm512_loadu_ps(pb + PK_S + 64);
		/* the offsets' part, - off * sum a, as every row's starting sum */
		if (halves) {
			__m512i h0 = neg_off(pb + PK_SUM16, noff), h1 = neg_off(pb + PK_SUM16 + 64, noff);
			__m512i s0 = h0, s1 = h1;
			BLOCK_PART(0, 4, 2 * b);
			s0 = _mm512_sub_epi32(neg_off(pb + PK_SUM, noff), h0);
			s1 = _mm512_sub_epi32(neg_off(pb + PK_SUM + 64, noff), h1);
			BLOCK_PART(4, 8, 2 * b + 1);
		} else {
			__m512i s0 = neg_off(pb + PK_SUM, noff), s1 = neg_off(pb + PK_SUM + 64, noff);
			BLOCK_PART(0, 8, b);
		}
	}
	acc[0] = a00, acc[1] = a01, acc[2] = a10, acc[3] = a11;
	acc[4] = a20, acc[5] = a21, acc[6] = a30, acc[7] = a31;
}
#undef BLOCK_PART
#undef ROW_STEP
#undef ROW_END

/* Four rows of 16 tokens each (a0..a3) into Y, token-major: the four
 * rows of a token are 4 adjacent floats, so they are transposed to one
 * 128-bit store per token. Within each 128-bit lane, after the unpacks
 * and shuffles u[k] holds tokens k, k + 4, k + 8, k + 12 in its lanes. */
static inline void store4x16(__m512 a0, __m512 a1, __m512 a2, __m512 a3, float *y, size_t ldy)
{
	__m512 t0 = _mm512_unpacklo_ps(a0, a1), t1 = _mm512_unpackhi_ps(a0, a1);
	__m512 t2 = _mm512_unpacklo_ps(a2, a3), t3 = _mm512_unpackhi_ps(a2, a3);
	__m512 u[4] = { _mm512_shuffle_ps(t0, t2, 0x44), _mm512_shuffle_ps(t0, t2, 0xEE),
			_mm512_shuffle_ps(t1, t3, 0x44), _mm512_shuffle_ps(t1, t3, 0xEE) };

	for (int k = 0; k < 4; k++) {
		_mm_storeu_ps(y + (size_t)k * ldy, _mm512_castps512_ps128(u[k]));
		_mm_storeu_ps(y + (size_t)(k + 4) * ldy, _mm512_extractf32x4_ps(u[k], 1));
		_mm_storeu_ps(y + (size_t)(k + 8) * ldy, _mm512_extractf32x4_ps(u[k], 2));
		_mm_storeu_ps(y + (size_t)(k + 12) * ldy, _mm512_extractf32x4_ps(u[k], 3));
	}
}

static void q8_rows(enum lp_qtype t, const void *W, size_t row_bytes, size_t cols,
		    const void *pack, size_t n, float *Y, size_t ldy, size_t r0, size_t r1,
		    void *wbuf)
{
	size_t nb = cols / 32, ng = (n + LP_Q8_GROUP - 1) / LP_Q8_GROUP;
	uint8_t *q = wbuf;
	/* d and m: nd floats a row, two a block for Q6_K's halves */
	size_t nd = t == LP_Q_Q6_K ? 2 * nb : nb;
	float *d = (float *)(((uintptr_t)(q + 4 * cols) + 63) & ~(uintptr_t)63), *m = d + 4 * nd;
	int off = 0, has_min = t == LP_Q_Q4_1 || t == LP_Q_Q5_1 || t == LP_Q_Q4_K;

	for (size_t r = r0; r < r1; r += 4) {
		size_t nr = r1 - r < 4 ? r1 - r : 4;
		/* rows past r1 are zeros: computed, never stored */
		for (size_t i = 0; i < 4; i++) {
			if (i < nr && !row_bytes) {
				q8_unpack_group_row(t, W, nb, r + i, q + i * cols, d + i * nd,
						    m + i * nd, &off);
			} else if (i < nr) {
				q8_unpack_row(t, (const uint8_t *)W + (r + i) * row_bytes, nb,
					      q + i * cols, d + i * nd, m + i * nd, &off);
			} else {
				memset(q + i * cols, 0, cols);
				memset(d + i * nd, 0, nd * sizeof(float));
				memset(m + i * nd, 0, nd * sizeof(float));
			}
		}
		for (size_t g = 0; g < ng; g++) {
			const uint8_t *pg = (const uint8_t *)pack + g * nb * LP_Q8_PACK_BYTES;
			__m512 acc[8];
			float out[16];
			if (t == LP_Q_Q6_K)
				q8_tile(q, cols, d, m, off, 0, 1, pg, nb, acc);
			else if (has_min)
				q8_tile(q, cols, d, m, off, 1, 0, pg, nb, acc);
			else
				q8_tile(q, cols, d, m, off, 0, 0, pg, nb, acc);
			for (size_t h = 0; h < 2; h++) {
				size_t t0 = g * LP_Q8_GROUP + 16 * h;
				if (nr == 4 && t0 + 16 <= n) {
					store4x16(acc[h], acc[2 + h], acc[4 + h], acc[6 + h],
						  Y + t0 * ldy + r, ldy);
					continue;
				}
				for (size_t i = 0; i < nr; i++) {
					_mm512_storeu_ps(out, acc[2 * i + h]);
					for (size_t k = 0; k < 16 && t0 + k < n; k++)
						Y[(t0 + k) * ldy + r + i] = out[k];
				}
			}
		}
	}
}

static const struct lp_q8_gemm q8_gemm = { q8_has, q8_pack, q8_rows };

/* NULL fields are the AVX2 set's, filled in by lp_cpu_kernels_avx512()
 * (kernels.c): see the top of this file for why. */
struct lp_cpu_kernels lp_cpu_kernels_avx512_set = {
	"avx512", dot_f32, dot_f16, dot_bf16, dot_q4_0, dot_q4_1, dot_q5_0, dot_q5_1, dot_q8_0,
	NULL, NULL, NULL, dot4_q8_0, NULL, dot4_q4_0, dot4_q4_1, dot4_q5_0, dot4_q5_1, NULL, NULL,
	NULL, &q8_gemm, NULL, lp_cpu_attn_f16_avx512, lp_cpu_gelu_avx512, lp_cpu_exp_shift_avx512,
	NULL, NULL, NULL,  /* the row-group kernels: dot16_avx512.c */
};
