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

/* FNV-1a's offset basis: the usual first h for lp_hash_fnv1a. */
#define LP_HASH_FNV_BASIS 0xcbf29ce484222325ull

/* FNV-1a: hash h (the basis, or the result of an earlier call, to hash
 * pieces as one) continued over data[0..len). One byte at a time and with
 * weak low bits: it is kept for the tables and keys whose values must not
 * change (a walk in slot order, a key already stored); new code wants
 * lp_hash_bytes. */
uint64_t lp_hash_fnv1a(uint64_t h, const void *data, size_t len);

/* The final avalanche alone: a bijective mix of one 64-bit word. */
uint64_t lp_hash_mix(uint64_t x);

#endif
