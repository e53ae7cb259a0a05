/*
 * standalone.c - runs a libFuzzer target without libFuzzer, inside
 * `make check`.
 *
 * The target's seed corpus is tests/fuzz/corpus/<target name>/ (found
 * through $top_srcdir). Every seed is run as is, then LPIPE_FUZZ_ITERS
 * (default 2000) deterministic mutations of the seeds: byte flips,
 * truncations, insertions of interesting values and splices. A crash or
 * sanitizer report fails the test. For coverage-guided fuzzing, compile
 * the same target with clang -fsanitize=fuzzer in place of this file and
 * link it with the library; the build has no rule for that.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SEEDS 256
#define FUZZ_MAX_INPUT (1 << 20)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static size_t load_seed(const char *path, uint8_t **out)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t n;

	if (!f)
		return 0;
	buf = malloc(FUZZ_MAX_INPUT);
	n = buf ? fread(buf, 1, FUZZ_MAX_INPUT, f) : 0;
	fclose(f);
	*out = buf;
	return n;
}

static size_t mutate(uint8_t *buf, size_t n, size_t cap)
{
	static const uint8_t interesting[] = { 0, 0xff, 0x7f, 0x80, 0x01, '\n', ':', '{', '[', '*', '&', 0xc0, 0xe4 };
	int rounds = 1 + (int)(rng_next() % 4);

	for (int r = 0; r < rounds; r++) {
		switch (rng_next() % 5) {
		case 0: /* flip a bit */
			if (n)
				buf[rng_next() % n] ^= (uint8_t)(1u << (rng_next() % 8));
			break;
		case 1: /* truncate */
			if (n)
				n = rng_next() % n;
			break;
		case 2: /* overwrite with an interesting byte */
			if (n)
				buf[rng_next() % n] = interesting[rng_next() % sizeof(interesting)];
			break;
		case 3: /* insert a byte */
			if (n < cap) {
				size_t at = n ? rng_next() % n : 0;
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = interesting[rng_next() % sizeof(interesting)];
				n++;
			}
			break;
		case 4: /* overwrite 4 bytes with a random/huge value */
			if (n >= 4) {
				size_t at = rng_next() % (n - 3);
				uint32_t v = (rng_next() & 1) ? 0xFFFFFFFFu : (uint32_t)rng_next();
				memcpy(buf + at, &v, 4);
			}
			break;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	const char *iters_env = getenv("LPIPE_FUZZ_ITERS");
	long iters = iters_env ? strtol(iters_env, NULL, 10) : 2000;
	char dir[4096];
	uint8_t *seeds[MAX_SEEDS], *work;
	size_t sizes[MAX_SEEDS], n_seeds = 0;
	DIR *dp;
	struct dirent *e;

	if (!strncmp(name, "lt-", 3))
		name += 3;
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", top ? top : ".", name);
	if (argc > 1)
		snprintf(dir, sizeof(dir), "%s", argv[1]);
	dp = opendir(dir);
	if (!dp) {
		fprintf(stderr, "%s: no seed corpus at '%s'\n", name, dir);
		return 1;
	}
	while ((e = readdir(dp)) && n_seeds < MAX_SEEDS) {
		char path[8192];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		sizes[n_seeds] = load_seed(path, &seeds[n_seeds]);
		if (seeds[n_seeds])
			n_seeds++;
	}
	closedir(dp);
	if (!n_seeds) {
		fprintf(stderr, "%s: empty seed corpus '%s'\n", name, dir);
		return 1;
	}
	work = malloc(FUZZ_MAX_INPUT);
	for (size_t i = 0; i < n_seeds; i++)
		LLVMFuzzerTestOneInput(seeds[i], sizes[i]);
	for (long i = 0; i < iters; i++) {
		size_t s = rng_next() % n_seeds;
		size_t n = sizes[s] < FUZZ_MAX_INPUT ? sizes[s] : FUZZ_MAX_INPUT;
		memcpy(work, seeds[s], n);
		n = mutate(work, n, FUZZ_MAX_INPUT);
		LLVMFuzzerTestOneInput(work, n);
	}
	printf("%s: %zu seeds, %ld mutations, no crash\n", name, n_seeds, iters);
	for (size_t i = 0; i < n_seeds; i++)
		free(seeds[i]);
	free(work);
	return 0;
}
