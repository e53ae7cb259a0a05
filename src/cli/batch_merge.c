/*
 * batch_merge.c - `lpipe batch --merge OUTDIR...`: the shards of one batch
 * (a Slurm array, GNU parallel over hosts) as one report.
 *
 * Each shard left inputs[-I-of-N].txt (the keys it owns and the total
 * before sharding) and manifest[-I-of-N].jsonl. The merge checks that the
 * shards 0..N-1 are there once each, that every key is owned once and has
 * its manifest line, and writes merged.jsonl and merged.csv. Anything
 * missing or doubled is named and fails the merge, which then writes
 * nothing (an earlier complete merge stays as it was).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/batch.h"
#include "cli/commands.h"
#include "core/status.h"

struct shard_files {
	char *dir;
	unsigned long index, count;
	size_t total;
	char **keys;      /* [n_keys] owned by the shard */
	size_t n_keys;
	struct lp_batch_manifest m;
};

/* Read inputs file `path` into sf; 0, or -1 when it is not one of ours. */
static int read_inputs(const char *path, struct shard_files *sf)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, room = 0;
	ssize_t len;
	int rc = -1;

	if (!f)
		return -1;
	if (getline(&line, &cap, f) > 0 &&
	    sscanf(line, "# lpipe batch inputs: shard %lu/%lu of %zu", &sf->index, &sf->count,
		   &sf->total) == 3) {
		rc = 0;
		while ((len = getline(&line, &cap, f)) > 0) {
			if (line[len - 1] == '\n')
				line[--len] = '\0';
			if (sf->n_keys == room) {
				char **v = realloc(sf->keys, (room = room ? 2 * room : 64) *
							     sizeof(*v));
				if (!v) {
					rc = -1;
					break;
				}
				sf->keys = v;
			}
			if (!(sf->keys[sf->n_keys] = strdup(line))) {
				rc = -1;
				break;
			}
			sf->n_keys++;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

static void release_shard(struct shard_files *sf)
{
	for (size_t i = 0; i < sf->n_keys; i++)
		free(sf->keys[i]);
	free(sf->keys);
	free(sf->dir);
	lp_batch_manifest_release(&sf->m);
}

/* Is `name` inputs.txt or inputs-I-of-N.txt? */
static int is_inputs_name(const char *name)
{
	unsigned long i, n;
	int end = 0;

	if (!strcmp(name, "inputs.txt"))
		return 1;
	return sscanf(name, "inputs-%lu-of-%lu.txt%n", &i, &n, &end) == 2 &&
	       (size_t)end == strlen(name);
}

/* Every shard found in `dir`, appended to *v. Returns 0, or -1 (message
 * printed). */
static int find_shards(const char *dir, struct shard_files **v, size_t *n, size_t *cap)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!dp) {
		fprintf(stderr, "lpipe batch: %s: error: unable to read the directory\n", dir);
		return -1;
	}
	while ((e = readdir(dp)) && !rc) {
		struct shard_files sf;
		char *path = NULL, *mpath = NULL;
		struct lp_diag d;
		if (!is_inputs_name(e->d_name))
			continue;
		memset(&sf, 0, sizeof(sf));
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			return -1;
		if (read_inputs(path, &sf)) {
			fprintf(stderr, "lpipe batch: %s: error: not an inputs list of lpipe batch\n",
				path);
			free(path);
			release_shard(&sf);
			rc = -1;
			break;
		}
		free(path);
		sf.dir = strdup(dir);
		if (sf.count > 1)
			rc = asprintf(&mpath, "%s/manifest-%lu-of-%lu.jsonl", dir, sf.index, sf.count);
		else
			rc = asprintf(&mpath, "%s/manifest.jsonl", dir);
		rc = rc < 0 ? -1 : 0;
		lp_diag_init(&d);
		if (!rc && lp_batch_manifest_read(mpath, 0, &sf.m, NULL, &d)) {
			lp_diag_print(&d, stderr);
			rc = -1;
		}
		free(mpath);
		if (*n == *cap) {
			struct shard_files *nv = realloc(*v, (*cap = *cap ? 2 * *cap : 8) * sizeof(*nv));
			if (!nv) {
				release_shard(&sf);
				rc = -1;
				break;
			}
			*v = nv;
		}
		(*v)[(*n)++] = sf;
	}
	closedir(dp);
	return rc;
}

struct owner {
	const char *key;
	size_t shard;
};

static int cmp_owner(const void *a, const void *b)
{
	return strcmp(((const struct owner *)a)->key, ((const struct owner *)b)->key);
}

/* Print a problem, the first 20 of each run of them; count it. */
static void problem(size_t *n, const char *fmt, const char *a, const char *b)
{
	if (++*n <= 20) {
		fputs("lpipe batch: merge: ", stderr);
		fprintf(stderr, fmt, a, b);
		fputc('\n', stderr);
	} else if (*n == 21) {
		fputs("lpipe batch: merge: (more problems not shown)\n", stderr);
	}
}

/* Check the shards; move the owned entries into `out`. Returns the number
 * of problems. */
static size_t check_shards(struct shard_files *v, size_t n, struct lp_batch_manifest *out)
{
	struct owner *own = NULL;
	size_t n_own = 0, problems = 0, keys = 0;
	unsigned long count = v[0].count;
	char label[64], other[64];

	for (size_t i = 0; i < n; i++) {
		keys += v[i].n_keys;
		if (v[i].count != count || v[i].total != v[0].total) {
			snprintf(label, sizeof(label), "%lu/%lu", v[i].index, v[i].count);
			problem(&problems, "shard %s in '%s' belongs to another batch (shard count "
				"or input total differs)", label, v[i].dir);
		}
	}
	for (unsigned long k = 0; k < count; k++) {
		size_t seen = 0;
		for (size_t i = 0; i < n; i++)
			seen += v[i].index == k;
		snprintf(label, sizeof(label), "%lu/%lu", k, count);
		if (!seen)
			problem(&problems, "shard %s is missing%s", label, " (no inputs file)");
		else if (seen > 1)
			problem(&problems, "shard %s is doubled%s", label, " (found more than once)");
	}
	own = calloc(keys + 1, sizeof(*own));
	for (size_t i = 0; own && i < n; i++)
		for (size_t j = 0; j < v[i].n_keys; j++)
			own[n_own++] = (struct owner){ v[i].keys[j], i };
	if (own)
		qsort(own, n_own, sizeof(*own), cmp_owner);
	for (size_t i = 0; own && i < n_own; i++) {
		struct shard_files *sf = &v[own[i].shard];
		struct lp_batch_entry *e = lp_batch_manifest_find(&sf->m, own[i].key);
		if (i && !strcmp(own[i - 1].key, own[i].key)) {
			snprintf(other, sizeof(other), "%s", v[own[i - 1].shard].dir);
			problem(&problems, "'%s' is doubled: owned by shards in '%s' and another",
				own[i].key, other);
			continue;
		}
		if (!e) {
			problem(&problems, "'%s' is missing: its shard in '%s' has no manifest line "
				"for it (not processed yet?)", own[i].key, sf->dir);
			continue;
		}
		/* a copy: the shard's manifest is still searched */
		{
			char *line = lp_batch_entry_json(e);
			struct lp_batch_entry c;
			if (line && !lp_batch_entry_parse(line, &c) && lp_batch_manifest_append(out, &c))
				lp_batch_entry_release(&c);
			free(line);
		}
	}
	if (n_own != v[0].total && !problems) {
		snprintf(label, sizeof(label), "%zu", n_own);
		snprintf(other, sizeof(other), "%zu", v[0].total);
		problem(&problems, "the shards own %s inputs, the batch had %s", label, other);
	}
	free(own);
	return problems;
}

int lp_batch_merge(const char *const *dirs, size_t n_dirs, const char *outdir)
{
	struct shard_files *v = NULL;
	struct lp_batch_manifest out = { 0 };
	size_t n = 0, cap = 0, problems = 0, counts[3] = { 0 };
	char *mpath = NULL, *cpath = NULL;
	struct lp_diag d;
	int rc = 0, worst = 0;

	for (size_t i = 0; i < n_dirs && !rc; i++)
		rc = find_shards(dirs[i], &v, &n, &cap);
	if (rc) {
		rc = LP_EXIT_INPUT;
		goto out;
	}
	if (!n) {
		fprintf(stderr, "lpipe batch: merge: error: no batch outputs (inputs*.txt) in the "
			"directories given\n");
		rc = LP_EXIT_INPUT;
		goto out;
	}
	problems = check_shards(v, n, &out);
	for (size_t i = 0; i < out.n; i++) {
		worst = lp_batch_worse(worst, out.v[i].exit_code);
		counts[!strcmp(out.v[i].status, "ok") ? 0 :
		       !strcmp(out.v[i].status, "verify_failed") ? 1 : 2]++;
	}
	if (!outdir)
		outdir = dirs[0];
	lp_diag_init(&d);
	if (asprintf(&mpath, "%s/merged.jsonl", outdir) < 0 ||
	    asprintf(&cpath, "%s/merged.csv", outdir) < 0) {
		rc = LP_EXIT_NOMEM;
		goto out;
	}
	/* an incomplete merge replaces no earlier, complete one */
	if (!problems &&
	    (lp_batch_manifest_write(&out, mpath, &d) || lp_batch_report_csv(&out, cpath, &d))) {
		lp_diag_print(&d, stderr);
		rc = LP_EXIT_INPUT;
		goto out;
	}
	fprintf(stderr, "lpipe batch: merged %zu shard%s: %zu of %zu documents: %zu ok, %zu "
		"verification failed, %zu failed; %s\n", n, n == 1 ? "" : "s", out.n, v[0].total,
		counts[0], counts[1], counts[2], problems ? "nothing written" : mpath);
	if (problems)
		fprintf(stderr, "lpipe batch: merge: error: %zu problem%s: documents missing or "
			"doubled; %s not written\n", problems, problems == 1 ? "" : "s", mpath);
	rc = problems ? LP_EXIT_INPUT : worst;
out:
	for (size_t i = 0; i < n; i++)
		release_shard(&v[i]);
	free(v);
	/* the entries were moved out of the shards' manifests */
	lp_batch_manifest_release(&out);
	free(mpath);
	free(cpath);
	return rc;
}
