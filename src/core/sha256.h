/*
 * sha256.h - SHA-256 (FIPS 180-4), for content hashes that must agree with
 * `sha256sum`: a batch's manifest names each input by the hash of its
 * bytes, so a resume can tell a changed file from the one it processed.
 *
 * Usage: lp_sha256_init, any number of lp_sha256_update, lp_sha256_final;
 * or lp_sha256_file for a whole file. Not thread-safe per context (one
 * context per thread); the functions keep no global state.
 */
#ifndef LP_CORE_SHA256_H
#define LP_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

struct lp_sha256 {
	uint32_t h[8];
	uint64_t bytes;          /* message length so far */
	unsigned char block[64]; /* pending input, `bytes % 64` of it */
};

void lp_sha256_init(struct lp_sha256 *c);
void lp_sha256_update(struct lp_sha256 *c, const void *data, size_t len);
/* Finish: the digest in out[32]; the context must be initialised again
 * before reuse. */
void lp_sha256_final(struct lp_sha256 *c, unsigned char out[32]);
/* The digest of data[0..len) as 64 lowercase hex digits and a NUL in hex[65]. */
void lp_sha256_hex(const void *data, size_t len, char hex[65]);
/* Hex form of a digest, into hex[65]. */
void lp_sha256_to_hex(const unsigned char digest[32], char hex[65]);

/*
 * Hash the file `path` (read in pieces: a file of any size) into hex[65]
 * and its size into *bytes (may be NULL). Returns LP_OK, or LP_E_IO with
 * `d` naming the file and the reason.
 */
enum lp_status lp_sha256_file(const char *path, char hex[65], size_t *bytes,
			      struct lp_diag *d);

#endif
