/*
 * pipeline.h - a pipeline file, loaded and validated (format version 1).
 *
 * lp_pipeline_load reads the YAML, substitutes ${vars}, applies --set
 * overrides, then validates every section into the structs below; each
 * stage's options are parsed by that stage kind's own parse function (see
 * stages/stage.h). Anything it accepts is runnable: later code does not
 * re-check configuration. Defaults are filled in, so `lpipe check` can print
 * the resolved plan.
 *
 * --set paths: "a.b.c=value" addresses map keys; inside `stages`, a segment
 * is either a stage kind (the first stage of that kind: stages.split.size)
 * or an index (stages.0.size). A missing final key is added, and so are
 * missing maps on the way. The value is read as YAML ("[a, b]", "1GiB",
 * "{size: 3}") with ${var} substitution; an empty value is null. Errors in
 * a --set, and validation errors about a value it gave, are reported as
 * "--set:N:COL" where N is the 1-based number of the --set and COL the
 * position inside that argument.
 *
 * Stage kinds' parse functions run last, in file order: when one runs, the
 * sections of `p` (model, memory, ...) are resolved and p->stages[0..i)
 * hold the stages before it.
 */
#ifndef LP_PIPELINE_H
#define LP_PIPELINE_H

#include <stddef.h>
#include <stdio.h>

#include "config/node.h"
#include "core/arena.h"
#include "core/status.h"
#include "core/utf8.h"
#include "doc/readers.h"

struct lp_stage_kind;

enum lp_device { LP_DEVICE_AUTO, LP_DEVICE_CPU, LP_DEVICE_CUDA };

/* "auto", "cpu" or "cuda": the name the pipeline file gives a device, and
 * the one the backends and embedders take. */
const char *lp_device_name(enum lp_device dev);
enum lp_kv_type { LP_KV_F32, LP_KV_F16, LP_KV_Q8_0 };
enum lp_on_oom { LP_ON_OOM_SHRINK, LP_ON_OOM_FAIL };
enum lp_weights_cfg { LP_WEIGHTS_CFG_MAP, LP_WEIGHTS_CFG_STREAM };
enum lp_model_backend { LP_BACKEND_LOCAL, LP_BACKEND_OPENAI };
enum lp_scorer { LP_SCORER_BM25, LP_SCORER_HASH, LP_SCORER_DENSE, LP_SCORER_HYBRID };
enum lp_fusion { LP_FUSION_RRF, LP_FUSION_WEIGHTED };
enum lp_format { LP_FORMAT_TEXT, LP_FORMAT_MARKDOWN, LP_FORMAT_JSON, LP_FORMAT_HTML };

/* Document languages a pipeline may choose a model for: the tags of
 * text/lang.h lp_lang_tag ("en" Latin script, "zh" Han, "und" another). */
#define LP_MODEL_N_LANGS 3

struct lp_model_cfg {
	int present;           /* the file has a model: section */
	const char *path;      /* GGUF path, NULL: the default model */
	enum lp_device device;
	long long context;     /* n_ctx tokens */
	enum lp_kv_type kv_type;
	long long gpu_layers;  /* -1: all */
	int gpu_layers_set;    /* the file (or --set) gives gpu_layers */
	const char *chat_template; /* override, NULL: from the GGUF */
	enum lp_weights_cfg weights; /* map (whole file) or stream (per layer) */
	/* model.by_lang: the settings for documents of language
	 * lp_model_lang_name(i), NULL where the file gives none. An entry
	 * gives path, context, kv_type, chat_template and weights; what it
	 * leaves out is this section's. Entries have no by_lang of their own. */
	const struct lp_model_cfg *by_lang[LP_MODEL_N_LANGS];
	/* backend openai: generation on a server (model/remote/openai.h);
	 * path is then not allowed and context is the server's */
	enum lp_model_backend backend;
	const char *url;         /* base URL ending in /v1 */
	const char *name;        /* the server's model name */
	const char *api_key_env; /* variable holding the key, NULL: none */
	const char *tokenizer;   /* GGUF read for its vocabulary, NULL: estimates */
	long long timeout_ms;    /* per request attempt, default 60 s */
	long long retries;       /* default 4 */
	long long concurrency;   /* requests in flight (lpipe batch), default 4 */
};

struct lp_memory_cfg {
	size_t budget;         /* bytes, 0: unlimited */
	size_t gpu_budget;     /* device bytes, 0: the GPU's free memory less a margin */
	enum lp_on_oom on_oom;
};

struct lp_retrieval_cfg {
	enum lp_scorer scorer;
	double bm25_k1;        /* default 1.2 */
	double bm25_b;         /* default 0.75 */
	long long rrf_k;       /* reciprocal-rank fusion constant, default 60 */
	enum lp_fusion fusion; /* how hybrid combines BM25 and dense, default rrf */
	double weight;         /* dense weight of fusion: weighted, default 0.5 */
	long long hash_dim;    /* buckets of the hashed embedder, default 1024 */
	enum lp_device device; /* where the dense embedder runs; default model.device */
	int device_set;        /* the file (or --set) gives retrieval.device */
};

struct lp_input_cfg {
	enum lp_invalid_utf8 invalid_utf8;
	enum lp_doc_format format; /* auto (sniffed), text, markdown, html, pdf */
};

struct lp_output_cfg {
	enum lp_format format;
};

struct lp_stage {
	const struct lp_stage_kind *kind;
	void *opts;            /* parsed by kind->parse, owned by the arena */
	const struct lp_node *node; /* the stage's options map, for messages */
	int line, col;
};

/*
 * Limits on a pipeline: the file is at most LP_FILE_PIPELINE_MAX bytes (1
 * MiB, see core/fileio.h), read and parsed under the memory budget of the
 * command line or environment, and holds at most this many stages (each
 * run of a split stage keeps its chunk table until the document is done).
 */
#define LP_PIPELINE_MAX_STAGES 64

struct lp_pipeline {
	struct lp_arena arena;  /* owns everything below */
	const char *path;
	long long version;
	const char *name;      /* default: the file name without its directory
				* and .yaml/.yml extension */
	struct lp_model_cfg model;
	struct lp_memory_cfg memory;
	struct lp_retrieval_cfg retrieval;
	struct lp_input_cfg input;
	struct lp_output_cfg output;
	struct lp_stage *stages;
	size_t n_stages;
	struct lp_node *root;   /* the substituted tree, for traces */
};

/*
 * Load, substitute, override and validate `path`. `sets` are "key=value"
 * strings from --set (may be NULL when n_sets is 0). On success *out is a
 * new pipeline the caller frees with lp_pipeline_free. On failure returns
 * LP_E_CONFIG (too many stages, ...), LP_E_IO (the file cannot be read),
 * LP_E_INPUT (over the size limit, binary) or LP_E_NOMEM (the budget), with
 * `d` naming file:line:col (for a bad --set, the file is "--set").
 * A bare name is the ready pipeline lp_pipeline_find gives; LP_E_IO, naming
 * the folder looked in, when there is none.
 */
enum lp_status lp_pipeline_load(const char *path, const struct lp_vars *vars,
				const char *const *sets, size_t n_sets,
				struct lp_pipeline **out, struct lp_diag *d);
/*
 * The folder of the ready pipelines: $LPIPE_PIPELINES_DIR when set and not
 * empty, else the one `make install` fills ($(pkgdatadir)/pipelines, or
 * where a staged or moved install put it: core/prefix.h). Written to
 * out[0..cap) (truncated to fit); returns out.
 */
const char *lp_pipeline_dir(char *out, size_t cap);
/*
 * The ready pipeline for a bare name (`lpipe run summarize doc.txt`): when
 * `name` has no '/', is not "-" and names no file in the current folder,
 * and lp_pipeline_dir's folder has NAME.yaml (NAME itself when it ends in
 * .yaml or .yml), writes that file's path to out[0..cap) and returns 1;
 * returns 0 otherwise.
 */
int lp_pipeline_find(const char *name, char *out, size_t cap);
/* Same from text in memory (tests, fuzzing). */
enum lp_status lp_pipeline_load_text(const char *path, const char *text, size_t len,
				     const struct lp_vars *vars,
				     const char *const *sets, size_t n_sets,
				     struct lp_pipeline **out, struct lp_diag *d);
void lp_pipeline_free(struct lp_pipeline *p);

/* Print the resolved pipeline (defaults filled in) as YAML that loads back
 * to the same plan (given stage describe() functions that print every
 * option with lp_cfg_quote for strings). Each stage is one line,
 * "  - KIND: " followed by its describe() output ("{}" without one).
 * Returns LP_OK, or LP_E_NOMEM when an allocation failed on the way (the
 * text written may then lack parts: do not use it). */
enum lp_status lp_pipeline_print(const struct lp_pipeline *p, FILE *out);

/* The language tag of by_lang[i] ("en", "zh", "und"); NULL out of range. */
const char *lp_model_lang_name(int i);

/*
 * The model settings for a document whose language tag is `lang` (see
 * text/lang.h lp_lang_tag): m->by_lang's entry for it, or m itself when
 * there is none (or `lang` is NULL or unknown). *which is set to the
 * entry's index, or -1 for m. Whether the entry's file exists is the
 * caller's question (stages/model_stage.h lp_stage_pick_model).
 */
const struct lp_model_cfg *lp_model_cfg_for_lang(const struct lp_model_cfg *m,
						 const char *lang, int *which);

/* Names of the enums above, for printing and JSON ("?" when out of range). */
const char *lp_scorer_name(enum lp_scorer s);
const char *lp_format_name(enum lp_format f);

#endif
