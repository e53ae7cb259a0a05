/* batch_inputs.c - the inputs of lpipe batch: files, directories, lists. */
#include "cli/batch.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static enum lp_status add(struct lp_batch_inputs *in, const char *path, const char *key,
			  struct lp_diag *d)
{
	struct lp_batch_input *x;

	if (in->n == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 64;
		struct lp_batch_input *v = realloc(in->v, cap * sizeof(*v));
		if (!v)
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the inputs");
		in->v = v;
		in->cap = cap;
	}
	x = &in->v[in->n];
	x->path = strdup(path);
	x->key = strdup(key);
	if (!x->path || !x->key) {
		free(x->path);
		free(x->key);
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the inputs");
	}
	in->n++;
	return LP_OK;
}

/* The key of a path named directly: no leading "/" or "./", and each ".."
 * component as "__", so the output stays inside OUTDIR. */
static char *direct_key(const char *path)
{
	char *k = malloc(strlen(path) + 1), *o = k;
	const char *p = path;

	if (!k)
		return NULL;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* empty or "." component: dropped */
		} else {
			if (o != k)
				*o++ = '/';
			if (n == 2 && p[0] == '.' && p[1] == '.') {
				memcpy(o, "__", 2);
				o += 2;
			} else {
				memcpy(o, p, n);
				o += n;
			}
		}
		p += n + (e != NULL);
	}
	*o = '\0';
	return k;
}

static int matches_any(const char *const *pats, size_t n, const char *s, int flags)
{
	for (size_t i = 0; i < n; i++)
		if (!fnmatch(pats[i], s, flags))
			return 1;
	return 0;
}

static int excluded(const struct lp_batch_walk *w, const char *key, const char *name)
{
	return matches_any(w->excludes, w->n_excludes, key, 0) ||
	       matches_any(w->excludes, w->n_excludes, name, 0);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of directory `dir` but "." and ".."; NULL on error. */
static char **list_dir(const char *dir, size_t *n)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!dp)
		return NULL;
	while ((e = readdir(dp))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (*n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 32) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[*n] = strdup(e->d_name)))
			break;
		(*n)++;
	}
	closedir(dp);
	if (!v)
		v = calloc(1, sizeof(*v));
	if (v)
		qsort(v, *n, sizeof(*v), cmp_names);
	return v;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static enum lp_status walk(struct lp_batch_inputs *in, const char *dir, const char *prefix,
			   const struct lp_batch_walk *w, const struct stat *out_st,
			   struct lp_diag *d)
{
	size_t n;
	char **names = list_dir(dir, &n);
	enum lp_status s = LP_OK;

	if (!names)
		return lp_diag_set(d, LP_E_IO, dir, 0, 0, "unable to read the directory: %s",
				   strerror(errno));
	for (size_t i = 0; i < n && !s; i++) {
		char *path = NULL, *key = NULL;
		struct stat lst, st;
		if (asprintf(&path, "%s/%s", dir, names[i]) < 0 ||
		    asprintf(&key, "%s%s%s", prefix, *prefix ? "/" : "", names[i]) < 0) {
			free(path);
			s = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for the inputs");
			break;
		}
		if (lstat(path, &lst) || excluded(w, key, names[i]))
			goto next;
		if (S_ISDIR(lst.st_mode)) {
			if (!(out_st && same_file(&lst, out_st)))
				s = walk(in, path, key, w, out_st, d);
			goto next;
		}
		if (S_ISLNK(lst.st_mode) && !stat(path, &st) && !S_ISREG(st.st_mode))
			goto next; /* a link to a directory (or a device): not followed */
		if (!S_ISREG(lst.st_mode) && !S_ISLNK(lst.st_mode))
			goto next; /* FIFOs, sockets, devices in a tree are no documents */
		if (w->n_globs && !matches_any(w->globs, w->n_globs, names[i], 0))
			goto next;
		s = add(in, path, key, d);
next:
		free(path);
		free(key);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return s;
}

enum lp_status lp_batch_add_arg(struct lp_batch_inputs *in, const char *arg,
				const struct lp_batch_walk *w, struct lp_diag *d)
{
	struct stat st, out_st;
	enum lp_status s;
	char *key;

	if (stat(arg, &st)) {
		struct stat lst;
		/* a link that leads nowhere is an input that will fail */
		if (!lstat(arg, &lst) && S_ISLNK(lst.st_mode))
			goto file;
		return lp_diag_set(d, LP_E_IO, arg, 0, 0, "unable to open: %s", strerror(errno));
	}
	if (S_ISDIR(st.st_mode)) {
		size_t len = strlen(arg);
		char *dir = strdup(arg);
		if (!dir)
			return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
		while (len > 1 && dir[len - 1] == '/')
			dir[--len] = '\0';
		s = walk(in, dir, "", w, w->outdir && !stat(w->outdir, &out_st) ? &out_st : NULL,
			 d);
		free(dir);
		return s;
	}
file:
	if (!(key = direct_key(arg)))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
	s = *key ? add(in, arg, key, d)
		 : lp_diag_set(d, LP_E_USAGE, arg, 0, 0, "no file name to write an output for");
	free(key);
	return s;
}

enum lp_status lp_batch_add_list(struct lp_batch_inputs *in, const char *list,
				 struct lp_diag *d)
{
	FILE *f = strcmp(list, "-") ? fopen(list, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	enum lp_status s = LP_OK;

	if (!f)
		return lp_diag_set(d, LP_E_IO, list, 0, 0, "unable to open: %s", strerror(errno));
	while (!s && (len = getline(&line, &cap, f)) >= 0) {
		char *key;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		if (!(key = direct_key(line))) {
			s = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
			break;
		}
		s = *key ? add(in, line, key, d) : LP_OK;
		free(key);
	}
	if (!s && ferror(f))
		s = lp_diag_set(d, LP_E_IO, list, 0, 0, "unable to read: %s", strerror(errno));
	free(line);
	if (f != stdin)
		fclose(f);
	return s;
}

static int cmp_inputs(const void *a, const void *b)
{
	return strcmp(((const struct lp_batch_input *)a)->key,
		      ((const struct lp_batch_input *)b)->key);
}

enum lp_status lp_batch_finish(struct lp_batch_inputs *in, struct lp_diag *d)
{
	if (in->n)
		qsort(in->v, in->n, sizeof(*in->v), cmp_inputs);
	for (size_t i = 1; i < in->n; i++)
		if (!strcmp(in->v[i - 1].key, in->v[i].key))
			return lp_diag_set(d, LP_E_USAGE, NULL, 0, 0,
					   "'%s' and '%s' would both write the output '%s'",
					   in->v[i - 1].path, in->v[i].path, in->v[i].key);
	return LP_OK;
}

void lp_batch_keep_shard(struct lp_batch_inputs *in, const struct lp_shard *s)
{
	size_t k = 0;

	for (size_t i = 0; i < in->n; i++) {
		if (lp_shard_mine(s, in->v[i].key)) {
			in->v[k++] = in->v[i];
		} else {
			free(in->v[i].path);
			free(in->v[i].key);
		}
	}
	in->n = k;
}

void lp_batch_inputs_release(struct lp_batch_inputs *in)
{
	for (size_t i = 0; i < in->n; i++) {
		free(in->v[i].path);
		free(in->v[i].key);
	}
	free(in->v);
	memset(in, 0, sizeof(*in));
}
