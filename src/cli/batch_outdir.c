/* batch_outdir.c - lpipe batch's output directory: its files' names,
 * parent directories, and the temporaries killed runs left. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/batch.h"

/* mkdir -p of the directory part of `path` (the file itself not made). */
int lp_batch_make_parents(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

/* Is `name` "OUT.tmp.PID.XXXXXX" (an lp_afile temporary) of a process
 * that is gone? Sets *out_len to the length of OUT. */
static int stale_tmp(const char *name, size_t *out_len)
{
	const char *t = strstr(name, ".tmp."), *next;
	char *end;
	long pid;

	for (; t; t = next) {
		next = strstr(t + 1, ".tmp.");
		if (next)
			continue; /* the last ".tmp." is the one */
		errno = 0;
		pid = strtol(t + 5, &end, 10);
		if (errno || pid <= 0 || *end != '.' || strlen(end + 1) != 6)
			return 0;
		*out_len = (size_t)(t - name);
		return kill((pid_t)pid, 0) && errno == ESRCH;
	}
	return 0;
}

/*
 * Is `rel` (a path relative to OUTDIR) a file this run writes: one of its
 * shard's own files, or the output of a key in its shard? Shards may share
 * OUTDIR from several hosts, where a pid means nothing: a run only ever
 * touches the temporaries of what it owns.
 */
static int owned(const struct lp_shard *shard, const char *ext, const char *rel, size_t len)
{
	static const char *const stems[] = { "manifest", "report", "inputs" };
	static const char *const exts[] = { "jsonl", "csv", "txt" };
	size_t el = strlen(ext);
	char name[PATH_MAX];
	int mine;

	for (int i = 0; i < 3; i++) {
		char *own = lp_batch_shard_file(".", stems[i], exts[i], shard);
		mine = own && strlen(own + 2) == len && !strncmp(own + 2, rel, len);
		free(own);
		if (mine)
			return 1;
	}
	if (len <= el || len - el >= sizeof(name) || strncmp(rel + len - el, ext, el))
		return 0;
	memcpy(name, rel, len - el);
	name[len - el] = '\0';
	return lp_shard_mine(shard, name);
}

/* Remove, under OUTDIR/`rel`, the stale temporaries `shard` owns. */
static size_t remove_under(const char *outdir, const struct lp_shard *shard, const char *ext,
			   const char *rel)
{
	char dir[PATH_MAX];
	DIR *dp;
	struct dirent *e;
	size_t n = 0, out_len;

	if (snprintf(dir, sizeof(dir), "%s%s%s", outdir, *rel ? "/" : "", rel) >=
	    (int)sizeof(dir) || !(dp = opendir(dir)))
		return 0;
	while ((e = readdir(dp))) {
		struct stat st;
		char path[PATH_MAX], sub[PATH_MAX];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >=
			    (int)sizeof(sub) ||
		    lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			n += remove_under(outdir, shard, ext, sub);
		else if (S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
			 stale_tmp(e->d_name, &out_len) &&
			 owned(shard, ext, sub, strlen(sub) - strlen(e->d_name) + out_len) && !unlink(path))
			n++;
	}
	closedir(dp);
	return n;
}

char *lp_batch_shard_file(const char *outdir, const char *stem, const char *ext,
			const struct lp_shard *s)
{
	char *p = NULL;
	int rc = s->count > 1 ? asprintf(&p, "%s/%s-%lu-of-%lu.%s", outdir, stem, s->index,
					 s->count, ext)
			      : asprintf(&p, "%s/%s.%s", outdir, stem, ext);

	return rc < 0 ? NULL : p;
}

size_t lp_batch_remove_stale(const char *outdir, const struct lp_shard *shard, const char *ext)
{
	return remove_under(outdir, shard, ext, "");
}
