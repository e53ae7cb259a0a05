#include "cli/shard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"

unsigned long lp_shard_of(const char *key, unsigned long count)
{
	struct lp_sha256 c;
	unsigned char dg[32];
	uint64_t v = 0;

	if (count <= 1)
		return 0;
	lp_sha256_init(&c);
	lp_sha256_update(&c, key, strlen(key));
	lp_sha256_final(&c, dg);
	for (int i = 0; i < 8; i++)
		v = v << 8 | dg[i];
	return (unsigned long)(v % count);
}

int lp_shard_mine(const struct lp_shard *s, const char *key)
{
	return s->count <= 1 || lp_shard_of(key, s->count) == s->index;
}

/* A whole decimal number in [0, ULONG_MAX); -1 when `s` is not one. */
static int parse_ulong(const char *s, const char *end, unsigned long *out)
{
	char *e;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoul(s, &e, 10);
	return errno || e != end ? -1 : 0;
}

enum lp_status lp_shard_parse(const char *text, struct lp_shard *out, struct lp_diag *d)
{
	const char *slash = strchr(text, '/');
	unsigned long i, n;

	if (!slash || parse_ulong(text, slash, &i) ||
	    parse_ulong(slash + 1, slash + strlen(slash), &n))
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "invalid shard '%s' (expected I/N, such as 0/4)", text);
	if (n == 0 || i >= n)
		return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
				   "invalid shard '%s': need 0 <= I < N", text);
	out->index = i;
	out->count = n;
	return LP_OK;
}

/* The variable `name` as a number: 1 and *v, 0 when unset, -1 when bad. */
static int env_ulong(const char *name, unsigned long *v)
{
	const char *s = getenv(name);

	if (!s || !*s)
		return 0;
	return parse_ulong(s, s + strlen(s), v) ? -1 : 1;
}

int lp_shard_from_slurm(struct lp_shard *out, struct lp_diag *d)
{
	unsigned long id, min = 0, max, count, step = 1;
	int has_step = env_ulong("SLURM_ARRAY_TASK_STEP", &step);
	int has_id = env_ulong("SLURM_ARRAY_TASK_ID", &id);
	int has_min = env_ulong("SLURM_ARRAY_TASK_MIN", &min);
	int has_max = env_ulong("SLURM_ARRAY_TASK_MAX", &max);
	int has_count = env_ulong("SLURM_ARRAY_TASK_COUNT", &count);

	out->index = 0;
	out->count = 1;
	if (!has_id)
		return 0;
	if (has_id < 0 || has_min < 0 || has_max < 0 || has_count < 0 || has_step < 0)
		goto bad;
	if (!has_min)
		min = 0;
	if (!has_step || step == 0)
		step = 1;
	if (!has_count) {
		if (has_max <= 0 || max < min)
			goto bad;
		count = (max - min) / step + 1;
	}
	/* an array "0-15:4" runs tasks 0, 4, 8, 12: shards 0..3 */
	if (id < min || (id - min) % step || count == 0 || (id - min) / step >= count)
		goto bad;
	out->index = (id - min) / step;
	out->count = count;
	return 1;
bad:
	lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
		    "SLURM_ARRAY_TASK_ID, _MIN, _MAX and _COUNT do not describe a task of an "
		    "array (give --shard I/N)");
	return -1;
}
