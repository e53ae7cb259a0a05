/*
 * simd_x86.h - the small AVX2 pieces the AVX2 and AVX-512 kernel sets share
 * (dot_avx2.c, dot_avx512.c): static inline, so each set's file compiles
 * them with its own target flags. Include only from files built with at
 * least -mavx2 -mfma -mf16c.
 */
#ifndef LP_BACKEND_CPU_SIMD_X86_H
#define LP_BACKEND_CPU_SIMD_X86_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

static inline float hsum_ps(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/*
 * Decode streams every weight once per token, and waiting for memory, not
 * arithmetic, bounds it: the hardware prefetchers do not run far enough
 * ahead (and lose track of the four interleaved rows of the dot4 kernels).
 * So each kernel asks for the bytes PF_AHEAD past those it reads now,
 * spread over its loop a few lines at a time (a burst of prefetches at the
 * start of a row measured slower than none). Prefetching past the end of
 * a matrix is harmless: prefetches never fault. They fill L2, not L1
 * (prefetcht1): a step's weights pass through once, and L1's misses in
 * flight are then left to the loads (a SmolLM2 step took about 4% less,
 * bench_forward, one thread, load 4).
 */
#define PF_AHEAD 4096

/* Prefetch `bytes` from `ahead` bytes past p (integer arithmetic: the
 * address may lie outside any object). */
static inline void prefetch_at(const void *p, size_t ahead, size_t bytes)
{
	uintptr_t a = (uintptr_t)p + ahead;

	for (size_t o = 0; o < bytes; o += 64)
		_mm_prefetch((const char *)(a + o), _MM_HINT_T1);
}

/* 32 nibbles of 16 bytes: low nibbles in bytes 0..15, high in 16..31 (the
 * legacy formats' element order). A broadcast load and a blend instead of
 * a lane insert keep this off the shuffle port (see lp_cpu_fp16_tab). */
static inline __m256i unpack_nibbles16(const uint8_t *p)
{
	__m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
	__m256i both = _mm256_blend_epi32(b, _mm256_srli_epi16(b, 4), 0xF0);

	return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

/*
 * The eight 6-bit scales and mins of a Q4_K/Q5_K block, unpacked with
 * 32-bit word operations (the same layout lp_k_scale_min reads byte by
 * byte): bytes 0-3 hold scales 0-3 and the top bits of scales 4-7, bytes
 * 4-7 the mins 0-3 and the top bits of mins 4-7, bytes 8-11 the low
 * nibbles of scales (low) and mins (high) 4-7.
 */
static inline void k_unpack(const uint8_t *packed, uint8_t sc[8], uint8_t m[8])
{
	uint32_t u[3], s[2], mm[2];

	memcpy(u, packed, 12);
	s[0] = u[0] & 0x3f3f3f3f;
	mm[0] = u[1] & 0x3f3f3f3f;
	s[1] = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
	mm[1] = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
	memcpy(sc, s, 8);
	memcpy(m, mm, 8);
}

#endif
