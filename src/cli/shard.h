/*
 * shard.h - which inputs of a batch one process takes, when a scheduler
 * (a Slurm job array, GNU parallel over hosts) runs N of them.
 *
 * An input belongs to shard (first 8 bytes of SHA-256 of its key, read as
 * a big-endian integer) mod N. The key is the input's path relative to the
 * input it was found under (the name of its output in OUTDIR), so the
 * split is the same on every machine whatever the corpus's mount point,
 * and does not move when inputs are added or removed: every input is in
 * exactly one shard for a given N.
 */
#ifndef LP_CLI_SHARD_H
#define LP_CLI_SHARD_H

#include <stddef.h>

#include "core/status.h"

struct lp_shard {
	unsigned long index; /* 0 <= index < count */
	unsigned long count; /* 1: no sharding */
};

/* The shard of `key` among `count` (>= 1). */
unsigned long lp_shard_of(const char *key, unsigned long count);

/* 1 when `key` belongs to shard `s`. */
int lp_shard_mine(const struct lp_shard *s, const char *key);

/* Parse "I/N" (0 <= I < N, N >= 1). Returns LP_OK, or LP_E_USAGE with `d`
 * saying what is wrong. */
enum lp_status lp_shard_parse(const char *text, struct lp_shard *out, struct lp_diag *d);

/*
 * The shard a Slurm array task is: index (SLURM_ARRAY_TASK_ID -
 * SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP (MIN 0 and STEP 1 when
 * unset), count SLURM_ARRAY_TASK_COUNT (else (MAX - MIN) / STEP + 1). Returns 1 and fills *out when
 * SLURM_ARRAY_TASK_ID is set; 0 when it is not (*out is then 0/1); -1 with
 * `d` filled (LP_E_USAGE) when the variables are inconsistent.
 */
int lp_shard_from_slurm(struct lp_shard *out, struct lp_diag *d);

#endif
