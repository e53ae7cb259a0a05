#include "core/hash.h"

#include <string.h>

#define P1 0x9e3779b97f4a7c15ULL
#define P2 0xc2b2ae3d27d4eb4fULL
#define P3 0x165667b19e3779f9ULL

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

uint64_t lp_hash_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

uint64_t lp_hash_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* One word into the state: multiply-rotate-multiply so that neighbouring
 * words do not cancel. */
static uint64_t absorb(uint64_t h, uint64_t k)
{
	k *= P2;
	k = rotl(k, 31);
	k *= P1;
	h ^= k;
	return rotl(h, 27) * P1 + P3;
}

uint64_t lp_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ ((uint64_t)len * P1), k;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&k, p, 8);
		h = absorb(h, k);
	}
	if (len) {
		/* The tail, padded with zeros; its length is already in h. */
		k = 0;
		memcpy(&k, p, len);
		h = absorb(h ^ P2, k);
	}
	return lp_hash_mix(h);
}
