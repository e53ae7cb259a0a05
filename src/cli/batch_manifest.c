/* batch_manifest.c - lpipe batch's manifest (JSON lines) and CSV report. */
#include "cli/batch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"

void lp_batch_entry_release(struct lp_batch_entry *e)
{
	free(e->input);
	free(e->key);
	free(e->sha256);
	free(e->pipeline);
	free(e->status);
	free(e->reason);
	free(e->output);
	free(e->output_sha256);
	free(e->shard);
	memset(e, 0, sizeof(*e));
}

/* Set o[key] to a string, or null for NULL. 0 or -1. */
static int put_str(json_t *o, const char *key, const char *v)
{
	return json_object_set_new(o, key, v ? json_string(v) : json_null());
}

static int put_int(json_t *o, const char *key, size_t v)
{
	return json_object_set_new(o, key, json_integer((json_int_t)v));
}

static int put_real(json_t *o, const char *key, double v)
{
	/* three decimals: seconds to the millisecond, rates to 0.1% */
	return json_object_set_new(o, key, json_real((double)(long long)(v * 1000 + 0.5) / 1000));
}

char *lp_batch_entry_json(const struct lp_batch_entry *e)
{
	json_t *o = json_object();
	int bad = !o;
	char *s;

	if (bad)
		return NULL;
	bad |= put_str(o, "input", e->input);
	bad |= put_str(o, "key", e->key);
	bad |= put_int(o, "bytes", e->bytes);
	bad |= put_str(o, "sha256", e->sha256);
	bad |= put_str(o, "pipeline", e->pipeline);
	bad |= put_str(o, "status", e->status);
	bad |= json_object_set_new(o, "exit_code", json_integer(e->exit_code));
	bad |= put_str(o, "reason", e->reason);
	bad |= put_real(o, "wall_s", e->wall_s);
	bad |= put_real(o, "cpu_s", e->cpu_s);
	bad |= put_int(o, "tokens_in", e->tokens_in);
	bad |= put_int(o, "tokens_out", e->tokens_out);
	bad |= put_int(o, "peak_tracked_bytes", e->peak_tracked_bytes);
	bad |= e->survival < 0 ? json_object_set_new(o, "keyphrase_survival", json_null())
			       : put_real(o, "keyphrase_survival", e->survival);
	bad |= put_str(o, "output", e->output);
	bad |= put_int(o, "output_bytes", e->output_bytes);
	bad |= put_str(o, "output_sha256", e->output_sha256);
	bad |= put_str(o, "shard", e->shard);
	s = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(o);
	return s;
}

static char *get_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? strdup(s) : NULL;
}

static size_t get_size(json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	return v > 0 ? (size_t)v : 0;
}

enum lp_status lp_batch_entry_parse(const char *line, struct lp_batch_entry *e)
{
	json_t *o = json_loads(line, 0, NULL), *sv;

	memset(e, 0, sizeof(*e));
	if (!o || !json_is_object(o) || !json_is_string(json_object_get(o, "key")) ||
	    !json_is_string(json_object_get(o, "status"))) {
		json_decref(o);
		return LP_E_INPUT;
	}
	e->input = get_str(o, "input");
	e->key = get_str(o, "key");
	e->sha256 = get_str(o, "sha256");
	e->pipeline = get_str(o, "pipeline");
	e->status = get_str(o, "status");
	e->reason = get_str(o, "reason");
	e->output = get_str(o, "output");
	e->output_sha256 = get_str(o, "output_sha256");
	e->shard = get_str(o, "shard");
	e->exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
	e->bytes = get_size(o, "bytes");
	e->output_bytes = get_size(o, "output_bytes");
	e->tokens_in = get_size(o, "tokens_in");
	e->tokens_out = get_size(o, "tokens_out");
	e->peak_tracked_bytes = get_size(o, "peak_tracked_bytes");
	e->wall_s = json_number_value(json_object_get(o, "wall_s"));
	e->cpu_s = json_number_value(json_object_get(o, "cpu_s"));
	sv = json_object_get(o, "keyphrase_survival");
	e->survival = json_is_number(sv) ? json_number_value(sv) : -1;
	json_decref(o);
	return e->key && e->status ? LP_OK : LP_E_NOMEM;
}

struct lp_batch_entry *lp_batch_manifest_find(struct lp_batch_manifest *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].key, key))
			return &m->v[i];
	return NULL;
}

enum lp_status lp_batch_manifest_put(struct lp_batch_manifest *m, struct lp_batch_entry *e)
{
	struct lp_batch_entry *old = lp_batch_manifest_find(m, e->key);

	if (old) {
		lp_batch_entry_release(old);
		*old = *e;
		memset(e, 0, sizeof(*e));
		return LP_OK;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct lp_batch_entry *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return LP_E_NOMEM;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = *e;
	memset(e, 0, sizeof(*e));
	return LP_OK;
}

enum lp_status lp_batch_manifest_read(const char *path, int repair,
				      struct lp_batch_manifest *m, size_t *n_lines,
				      struct lp_diag *d)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, good_end = 0;
	ssize_t len;
	enum lp_status s = LP_OK;

	if (n_lines)
		*n_lines = 0;
	if (!f)
		return errno == ENOENT ? LP_OK
				       : lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to open: %s",
						     strerror(errno));
	while (!s && (len = getline(&line, &cap, f)) > 0) {
		struct lp_batch_entry e;
		if (line[len - 1] != '\n')
			break; /* the half-written last line of a killed run */
		good_end += (size_t)len;
		if (lp_batch_entry_parse(line, &e) != LP_OK) {
			lp_batch_entry_release(&e);
			continue;
		}
		if (n_lines)
			(*n_lines)++;
		if (lp_batch_manifest_put(m, &e)) {
			lp_batch_entry_release(&e);
			s = lp_diag_set(d, LP_E_NOMEM, path, 0, 0, "out of memory");
		}
	}
	free(line);
	fclose(f);
	if (!s && repair) {
		struct stat st;
		if (!stat(path, &st) && (size_t)st.st_size > good_end && truncate(path, (off_t)good_end))
			s = lp_diag_set(d, LP_E_IO, path, 0, 0, "unable to cut the unfinished line: %s",
					strerror(errno));
	}
	return s;
}

static int cmp_entries(const void *a, const void *b)
{
	return strcmp(((const struct lp_batch_entry *)a)->key,
		      ((const struct lp_batch_entry *)b)->key);
}

/* Sort m by key and open `path` for its rewrite. */
static enum lp_status open_sorted(struct lp_batch_manifest *m, const char *path,
				  struct lp_afile *af, struct lp_diag *d)
{
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_entries);
	return lp_afile_open(af, path, d);
}

enum lp_status lp_batch_manifest_write(struct lp_batch_manifest *m, const char *path,
				       struct lp_diag *d)
{
	struct lp_afile af;
	enum lp_status s;

	if ((s = open_sorted(m, path, &af, d)))
		return s;
	for (size_t i = 0; i < m->n; i++) {
		char *line = lp_batch_entry_json(&m->v[i]);
		if (!line) {
			lp_afile_abort(&af);
			return lp_diag_set(d, LP_E_NOMEM, path, 0, 0, "out of memory");
		}
		fprintf(af.fp, "%s\n", line);
		free(line);
	}
	return lp_afile_commit(&af, d);
}

/* A CSV field: quoted when it holds a comma, quote or line break. */
static void csv_field(FILE *f, const char *s, int last)
{
	if (s && strpbrk(s, ",\"\r\n")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else if (s) {
		fputs(s, f);
	}
	fputc(last ? '\n' : ',', f);
}

enum lp_status lp_batch_report_csv(struct lp_batch_manifest *m, const char *path,
				   struct lp_diag *d)
{
	struct lp_afile af;
	enum lp_status s;

	if ((s = open_sorted(m, path, &af, d)))
		return s;
	fputs("key,input,status,exit_code,reason,bytes,wall_s,cpu_s,tokens_in,tokens_out,"
	      "peak_tracked_bytes,keyphrase_survival,output,shard\n", af.fp);
	for (size_t i = 0; i < m->n; i++) {
		const struct lp_batch_entry *e = &m->v[i];
		char num[64];
		csv_field(af.fp, e->key, 0);
		csv_field(af.fp, e->input, 0);
		csv_field(af.fp, e->status, 0);
		fprintf(af.fp, "%d,", e->exit_code);
		csv_field(af.fp, e->reason, 0);
		fprintf(af.fp, "%zu,%.3f,%.3f,%zu,%zu,%zu,", e->bytes, e->wall_s, e->cpu_s,
			e->tokens_in, e->tokens_out, e->peak_tracked_bytes);
		if (e->survival >= 0)
			snprintf(num, sizeof(num), "%.3f", e->survival);
		csv_field(af.fp, e->survival >= 0 ? num : "", 0);
		csv_field(af.fp, e->output, 0);
		csv_field(af.fp, e->shard, 1);
	}
	return lp_afile_commit(&af, d);
}

void lp_batch_manifest_release(struct lp_batch_manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		lp_batch_entry_release(&m->v[i]);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

int lp_batch_worse(int a, int b)
{
	return a > b ? a : b;
}
