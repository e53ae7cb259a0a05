/*
 * cmd_embed.c - `lpipe embed MODEL FILE`: cut a document into chunks, embed
 * each with a dense sentence model, and write the vectors as a NumPy .npy
 * file (float32, rows x dim, format 1.0) with a JSON sidecar of the chunks'
 * byte offsets, for a vector database to take.
 *
 * Both files are written atomically (fileio.h lp_afile) and committed only
 * when both are complete, so a failed run leaves neither a half-written
 * output nor a stale pair that disagree.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "core/buf.h"
#include "core/fileio.h"
#include "core/mem.h"
#include "core/status.h"
#include "retrieve/embedder.h"
#include "text/document.h"
#include "text/split.h"

const char lp_usage_embed[] =
	"usage: lpipe embed MODEL FILE [-o OUT.npy] [--unit UNIT] [--size N]\n"
	"                   [--overlap N]\n"
	"\n"
	"Cut FILE ('-' reads standard input) into chunks as the split stage does and\n"
	"embed each with the BERT sentence model in directory MODEL (the layout of\n"
	"all-MiniLM-L6-v2; 'default' is the one the dense scorer uses). Writes the\n"
	"unit-length vectors as OUT.npy (NumPy format 1.0, float32, shape rows x dim)\n"
	"and OUT.json: the model, the split settings and each chunk's byte offset and\n"
	"length in the document (after CRLF and BOM normalisation). Both files are\n"
	"replaced only when both are complete.\n"
	"  -o OUT.npy     output (default FILE.npy; required for '-'); the sidecar is\n"
	"                 OUT with .npy replaced by .json (or .json appended)\n"
	"  --unit UNIT    chars, words, sentences, paragraphs or tokens (default words)\n"
	"  --size N       units per chunk (default 200)\n"
	"  --overlap N    units shared by neighbouring chunks, < size (default 30)\n"
	"Chunks break at sentence ends. Exit status 2 for bad options, 3 when the\n"
	"model or FILE cannot be read.\n";

/* Chunks embedded per call: bounds the vectors held at once. */
#define EMBED_BATCH 64

struct embed_opts {
	const char *model, *file, *out;
	struct lp_split_params split;
};

static int parse_args(int argc, char **argv, struct embed_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->split = lp_split_default_params();
	o->split.unit = LP_SPLIT_WORDS;
	o->split.size = 200;
	o->split.overlap = 30;
	o->split.boundary = LP_BOUNDARY_SENTENCE;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int has_value = !strcmp(a, "-o") || !strcmp(a, "--size") ||
				!strcmp(a, "--overlap") || !strcmp(a, "--unit");

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(lp_usage_embed, stdout);
			return -1;
		}
		if (has_value && i + 1 >= argc)
			return lp_cli_usage_error("embed", "option '%s' needs a value", a);
		if (!strcmp(a, "-o")) {
			o->out = argv[++i];
		} else if (!strcmp(a, "--size") || !strcmp(a, "--overlap")) {
			long long v;
			int is_size = a[2] == 's';
			int rc = lp_opt_int("embed", a, argv[++i], is_size, 100000000LL, &v);
			if (rc)
				return rc;
			*(is_size ? &o->split.size : &o->split.overlap) = (size_t)v;
		} else if (!strcmp(a, "--unit")) {
			int u = -1;
			for (int k = 0; lp_split_unit_names[k]; k++)
				if (!strcmp(lp_split_unit_names[k], argv[i + 1]) &&
				    k != LP_SPLIT_REGEX)
					u = k;
			if (u < 0)
				return lp_cli_usage_error("embed", "unknown unit '%s'", argv[i + 1]);
			o->split.unit = (enum lp_split_unit)u;
			i++;
		} else if (a[0] == '-' && a[1]) {
			return lp_cli_usage_error("embed", "unknown option '%s'", a);
		} else if (!o->model) {
			o->model = a;
		} else if (!o->file) {
			o->file = a;
		} else {
			return lp_cli_usage_error("embed", "unexpected argument '%s'", a);
		}
	}
	if (!o->model || !o->file)
		return lp_cli_usage_error("embed", "missing %s", o->model ? "FILE" : "MODEL");
	if (o->split.size == 0 || o->split.overlap >= o->split.size)
		return lp_cli_usage_error("embed", "--overlap %zu must be below --size %zu "
					  "(and --size above 0)", o->split.overlap, o->split.size);
	if (!o->out && !strcmp(o->file, "-"))
		return lp_cli_usage_error("embed", "reading standard input needs -o OUT.npy");
	return 0;
}

/* The .npy header, format 1.0: magic, version, a little-endian length, and
 * a Python dict literal padded with spaces to end in '\n' on a multiple of
 * 64 bytes (what numpy itself writes). */
static void npy_header(struct lp_buf *b, size_t rows, size_t dim)
{
	char dict[128];
	int n = snprintf(dict, sizeof(dict),
			 "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }",
			 rows, dim);
	size_t hlen = (size_t)n + 1, pad = (64 - (10 + hlen) % 64) % 64;

	hlen += pad;
	lp_buf_add(b, "\x93NUMPY\x01\x00", 8);
	lp_buf_addc(b, (char)(hlen & 0xff));
	lp_buf_addc(b, (char)(hlen >> 8));
	lp_buf_add(b, dict, (size_t)n);
	for (size_t i = 0; i < pad; i++)
		lp_buf_addc(b, ' ');
	lp_buf_addc(b, '\n');
}

/* Write v[0..n) as little-endian float32, whatever the host's order. */
static int write_f32le(FILE *fp, const float *v, size_t n)
{
	unsigned char b[4 * 256];

	while (n) {
		size_t k = n < 256 ? n : 256;
		for (size_t i = 0; i < k; i++) {
			uint32_t u;
			memcpy(&u, &v[i], 4);
			b[4 * i] = (unsigned char)u;
			b[4 * i + 1] = (unsigned char)(u >> 8);
			b[4 * i + 2] = (unsigned char)(u >> 16);
			b[4 * i + 3] = (unsigned char)(u >> 24);
		}
		if (fwrite(b, 4, k, fp) != k)
			return -1;
		v += k;
		n -= k;
	}
	return 0;
}

/* OUT.npy -> OUT.json, else OUT + ".json"; malloc'd. */
static char *sidecar_path(const char *npy)
{
	size_t n = strlen(npy);
	int swap = n > 4 && !strcmp(npy + n - 4, ".npy");
	char *p = malloc(n + 6);

	if (p)
		snprintf(p, n + 6, "%.*s.json", (int)(swap ? n - 4 : n), npy);
	return p;
}

static json_t *sidecar_json(const struct embed_opts *o, const struct lp_embedder *e,
			    const struct lp_span *spans, size_t n)
{
	json_t *root = json_object(), *chunks = json_array(), *split = json_object();
	char id[17];

	snprintf(id, sizeof(id), "%016" PRIx64, lp_embedder_id(e));
	json_object_set_new(split, "unit", json_string(lp_split_unit_names[o->split.unit]));
	json_object_set_new(split, "size", json_integer((json_int_t)o->split.size));
	json_object_set_new(split, "overlap", json_integer((json_int_t)o->split.overlap));
	json_object_set_new(split, "boundary", json_string("sentence"));
	json_object_set_new(root, "file", json_string(o->file));
	json_object_set_new(root, "model", json_string(o->model));
	json_object_set_new(root, "model_id", json_string(id));
	json_object_set_new(root, "dtype", json_string("float32"));
	json_object_set_new(root, "rows", json_integer((json_int_t)n));
	json_object_set_new(root, "dim", json_integer((json_int_t)lp_embedder_dim(e)));
	json_object_set_new(root, "split", split);
	for (size_t i = 0; i < n; i++) {
		json_t *c = json_object();
		json_object_set_new(c, "offset", json_integer((json_int_t)spans[i].off));
		json_object_set_new(c, "length", json_integer((json_int_t)spans[i].len));
		json_array_append_new(chunks, c);
	}
	json_object_set_new(root, "chunks", chunks);
	return root;
}

/* Embed the chunks a batch at a time, straight into the open .npy. */
static enum lp_status write_vectors(struct lp_embedder *e, struct lp_document *doc,
				    const struct lp_span *spans, size_t n, FILE *fp,
				    struct lp_diag *d)
{
	size_t dim = lp_embedder_dim(e);
	float *vec = lp_mem_alloc(LP_MEM_SCRATCH, EMBED_BATCH * dim * sizeof(float), d);
	const char *texts[EMBED_BATCH];
	size_t lens[EMBED_BATCH], from = 0;
	enum lp_status st = vec ? LP_OK : LP_E_NOMEM;

	for (size_t at = 0; at < n && st == LP_OK; at += EMBED_BATCH) {
		size_t k = n - at < EMBED_BATCH ? n - at : EMBED_BATCH;
		for (size_t i = 0; i < k; i++) {
			texts[i] = doc->text + spans[at + i].off;
			lens[i] = spans[at + i].len;
		}
		st = lp_embedder_embed(e, texts, lens, k, vec, d);
		if (st == LP_OK && write_f32le(fp, vec, k * dim))
			st = lp_diag_set(d, LP_E_IO, NULL, 0, 0, "unable to write the vectors");
		if (st == LP_OK)
			lp_document_done_upto(doc, &from, spans[at + k - 1].off,
					      spans[at + k - 1].len);
	}
	lp_mem_free(vec);
	return st;
}

static enum lp_status run_embed(const struct embed_opts *o, struct lp_diag *d)
{
	struct lp_document doc;
	struct lp_splitter *sp = NULL;
	struct lp_embedder *e = NULL;
	struct lp_span *spans = NULL;
	struct lp_afile npy = { 0 }, side = { 0 };
	struct lp_buf hdr;
	char *out = NULL, *json_path = NULL, *json_text = NULL;
	json_t *meta = NULL;
	size_t n = 0;
	enum lp_status st;

	lp_buf_init(&hdr);
	memset(&doc, 0, sizeof(doc));
	st = lp_embedder_new_dense(strcmp(o->model, "default") ? o->model : NULL, &e, d);
	if (st == LP_OK)
		st = lp_document_load(o->file, LP_UTF8_ERROR, &doc, d);
	if (st == LP_OK)
		st = lp_split_new(&o->split, &sp, d);
	if (st == LP_OK)
		st = lp_split_run(sp, doc.text, doc.len, &spans, &n, d);
	if (st != LP_OK)
		goto done;
	if (o->out) {
		out = strdup(o->out);
	} else if ((out = malloc(strlen(o->file) + 5))) {
		strcpy(out, o->file);
		strcat(out, ".npy");
	}
	json_path = out ? sidecar_path(out) : NULL;
	if (!out || !json_path) {
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
		goto done;
	}
	npy_header(&hdr, n, lp_embedder_dim(e));
	meta = sidecar_json(o, e, spans, n);
	json_text = meta ? json_dumps(meta, JSON_INDENT(1)) : NULL;
	if (!json_text) {
		st = lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory");
		goto done;
	}
	if ((st = lp_afile_open(&npy, out, d)) != LP_OK ||
	    (st = lp_afile_open(&side, json_path, d)) != LP_OK)
		goto done;
	if (fwrite(hdr.data, 1, hdr.len, npy.fp) != hdr.len ||
	    fputs(json_text, side.fp) == EOF || fputc('\n', side.fp) == EOF) {
		st = lp_diag_set(d, LP_E_IO, out, 0, 0, "unable to write");
		goto done;
	}
	if ((st = write_vectors(e, &doc, spans, n, npy.fp, d)) != LP_OK)
		goto done;
	if ((st = lp_afile_commit(&npy, d)) == LP_OK)
		st = lp_afile_commit(&side, d);
	if (st == LP_OK)
		fprintf(stderr, "lpipe embed: %zu chunks x %zu dims -> '%s', '%s'\n", n,
			lp_embedder_dim(e), out, json_path);
done:
	lp_afile_abort(&npy);
	lp_afile_abort(&side);
	free(json_text);
	json_decref(meta);
	free(json_path);
	free(out);
	lp_buf_release(&hdr);
	lp_mem_free(spans);
	lp_split_free(sp);
	if (doc.text)
		lp_document_release(&doc);
	lp_embedder_free(e);
	return st;
}

int cmd_embed(int argc, char **argv)
{
	struct embed_opts o;
	struct lp_diag d;
	enum lp_status st;
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc < 0 ? LP_EXIT_OK : rc;
	lp_diag_init(&d);
	st = run_embed(&o, &d);
	if (st != LP_OK)
		lp_diag_print(&d, stderr);
	return lp_status_exit_code(st);
}
