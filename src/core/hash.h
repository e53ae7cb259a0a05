/*
 * hash.h - a fast 64-bit hash of bytes, for hashed features and cache keys.
 *
 * The hash reads eight bytes at a time, mixes each word with multiplies and
 * rotations, and ends with a full avalanche, so every output bit depends on
 * every input bit: low bits can pick a bucket and the top bit a sign
 * without a second hash. It is not cryptographic; keys that must survive
 * an adversary need something else. Words are read in native byte order:
 * the same bytes hash alike on every little-endian machine, which is all
 * an on-disk cache of this machine needs.
 */
#ifndef LP_CORE_HASH_H
#define LP_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Hash data[0..len) with `seed` (different seeds give independent hashes).
 * len may be 0 (data is then not read). */
uint64_t lp_hash_bytes(const void *data, size_t len, uint64_t seed);

/* The final avalanche alone: a bijective mix of one 64-bit word. */
uint64_t lp_hash_mix(uint64_t x);

#endif
