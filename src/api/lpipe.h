/*
 * lpipe.h - the lpipe library: run a pipeline on a document from C.
 *
 * Three opaque handles:
 *
 *  - lpipe_pipeline: a pipeline (lpipe-pipeline(5)) with its variables
 *    (${question}, ...) and --set style overrides. Set them first, then
 *    load the pipeline from a file or a string; setting one after a load
 *    loads the pipeline again with it.
 *  - lpipe_engine: what outlives one document (the loaded models). Give one
 *    engine to many runs so that a model is loaded once; NULL is allowed
 *    (each run then loads and frees what it needs).
 *  - lpipe_result: the outcome of one run: the result text, the report in
 *    any format (text, markdown, json, html), the verification.
 *
 * Errors: every function that can fail returns an int, one of the exit
 * codes of lpipe(1) (enum lpipe_code), and leaves a one-line message for
 * the calling thread in lpipe_errmsg(). LPIPE_VERIFY from a run is not a
 * failure of the run: the result is made and can be read.
 *
 * A pipeline may be run from several threads at once, each run with its
 * own result; it must not be changed (set, loaded) meanwhile. A result
 * keeps what it needs of its pipeline, so either may be freed first.
 * Memory: each engine has a budget of its own, which covers its runs and
 * the models and documents it keeps: two engines in one process have two
 * budgets, and a run on one never sees the other's bytes. The budget is
 * lpipe_engine_set_mem_budget's, else lpipe_set_mem_budget's, else the
 * environment variable LPIPE_MEM_BUDGET's, else the memory.budget of the
 * pipeline a run on the engine starts (runs side by side on one engine
 * with different memory.budget then share the one set last). Runs without
 * an engine share the process's budget, as lpipe(1) runs.
 */
#ifndef LPIPE_H
#define LPIPE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The exit codes of lpipe(1). */
enum lpipe_code {
	LPIPE_OK = 0,
	LPIPE_VERIFY = 1,   /* the verification failed; the result is there */
	LPIPE_USAGE = 2,    /* a usage or configuration error (bad pipeline) */
	LPIPE_INPUT = 3,    /* an input error: document, file, model, device */
	LPIPE_NOMEM = 4,    /* out of memory or over the memory budget */
	LPIPE_INTERNAL = 5,
};

typedef struct lpipe_pipeline lpipe_pipeline;
typedef struct lpipe_engine lpipe_engine;
typedef struct lpipe_result lpipe_result;

/* The message of the calling thread's last failure ("" when none), as
 * lpipe(1) prints it, without "lpipe: " and the newline. */
const char *lpipe_errmsg(void);

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *lpipe_version(void);

/*
 * Settings of the whole process, as lpipe(1)'s options set them. Change
 * them before runs start, not while one is in progress.
 */
/* What the library prints on standard error, as "lpipe: ..." lines. */
enum lpipe_log_level {
	LPIPE_LOG_ERROR,  /* nothing (errors are returned, never printed) */
	LPIPE_LOG_WARN,   /* warnings (lpipe --quiet) */
	LPIPE_LOG_INFO,   /* and notices (the default) */
	LPIPE_LOG_DEBUG,  /* and each stage's time, memory and note (lpipe -v) */
};
void lpipe_set_log_level(enum lpipe_log_level level);
/* Progress of long stages on standard error: -1 on a terminal only (the
 * default: one line redrawn), 0 never, 1 always (plain lines every few
 * seconds when standard error is not a terminal). */
void lpipe_set_progress(int mode);
/* The memory budget, a size such as "512MiB" ("0": none), over the
 * environment variable LPIPE_MEM_BUDGET and the pipeline's memory.budget,
 * for runs without an engine and engines without a budget of their own
 * (lpipe_engine_set_mem_budget); NULL: back to those. It covers loading
 * pipelines too. LPIPE_USAGE for a size that does not parse. */
int lpipe_set_mem_budget(const char *size);

/* A new pipeline handle with nothing loaded; NULL when out of memory. */
lpipe_pipeline *lpipe_pipeline_new(void);
/* Bind ${name} to a copy of `value` (NULL: unbind). */
int lpipe_pipeline_set_var(lpipe_pipeline *p, const char *name, const char *value);
/* An override "KEY=VALUE" as --set takes it, e.g. "stages.split.size=256". */
int lpipe_pipeline_set(lpipe_pipeline *p, const char *key_value);
/* Load the pipeline file `path` (a bare name such as "summarize" that is
 * no file here names a ready pipeline, as in lpipe(1)), or the YAML
 * text[0..len) (`name` names it in messages and as its default name;
 * NULL: "<string>"). */
int lpipe_pipeline_load_file(lpipe_pipeline *p, const char *path);
int lpipe_pipeline_load_string(lpipe_pipeline *p, const char *name, const char *text,
			       size_t len);
/* The loaded pipeline's name; NULL before a load. */
const char *lpipe_pipeline_name(const lpipe_pipeline *p);
/* Its output.format: "text", "markdown", "json" or "html"; NULL before a load. */
const char *lpipe_pipeline_format(const lpipe_pipeline *p);
/* The resolved plan, as `lpipe check` prints it (variables and overrides
 * applied): equal plans run alike. NULL before a load. Owned by `p`, valid
 * until its next set or load. */
const char *lpipe_pipeline_plan(const lpipe_pipeline *p);
/* The tracked bytes a run of the loaded pipeline plans to take of its own
 * on a document of `doc_len` bytes, the model aside: the document and its
 * chunks and the largest of its stages' figures (the memory planner's,
 * stages/plan.h), whose kind goes into *stage (may be NULL; a static
 * string). 0 (and "") before a load. */
size_t lpipe_pipeline_plan_bytes(const lpipe_pipeline *p, size_t doc_len, const char **stage);
/* Documents worth running at once on one engine: model.concurrency when the
 * model is served (backend openai), else 1 (a model in this process
 * generates for one document at a time); 0 before a load. */
int lpipe_pipeline_concurrency(const lpipe_pipeline *p);
void lpipe_pipeline_free(lpipe_pipeline *p);

/* An engine; keep_models 0 frees a model when its run ends, 1
 * (LPIPE_KEEP_MODELS) keeps it loaded for the next run (within the memory
 * budget). LPIPE_KEEP_DOCUMENTS (or'ed in) also keeps what runs on a
 * buffer make of it, its parsed form and BM25 indexes, for the next runs
 * on the same bytes: the caller counts them (lpipe_engine_documents) and
 * drops them when it needs the room (lpipe_engine_drop_documents). A run
 * gives its model back when it ends, so a result holds none. An engine
 * may be freed before the results made with it. */
#define LPIPE_KEEP_MODELS 1
#define LPIPE_KEEP_DOCUMENTS 2
int lpipe_engine_new(int keep_models, lpipe_engine **out);
void lpipe_engine_free(lpipe_engine *e);
/* The engine's own memory budget, a size such as "512MiB" ("0": none),
 * over lpipe_set_mem_budget's, LPIPE_MEM_BUDGET and the pipeline's
 * memory.budget; NULL: back to those. It holds for its next runs and for
 * what it keeps; set it before they start. LPIPE_USAGE for a size that
 * does not parse or no engine. */
int lpipe_engine_set_mem_budget(lpipe_engine *e, const char *size);
/* Models the engine has loaded so far (a kept model counts once). */
size_t lpipe_engine_models_loaded(const lpipe_engine *e);
/* Free the kept models of the GGUF file `path` that no run holds now, to
 * make room for others; returns how many sessions went (0 for NULL). */
size_t lpipe_engine_unload(lpipe_engine *e, const char *path);
/* What an engine made with LPIPE_KEEP_DOCUMENTS keeps of documents: its
 * tracked bytes and entries now, the times runs found what they asked
 * for and the times they made it (any pointer may be NULL; zeros without
 * the flag). */
void lpipe_engine_documents(lpipe_engine *e, size_t *bytes, size_t *entries,
			    unsigned long long *hits, unsigned long long *misses);
/* Drop what no run holds of it, least recently used first, until at least
 * `bytes` went; returns the bytes dropped. */
size_t lpipe_engine_drop_documents(lpipe_engine *e, size_t bytes);

/* Run `p` on the document `path` ("-": standard input), or on the bytes
 * data[0..len) (copied; `name` names it in messages, NULL: "<buffer>").
 * `e` may be NULL. Returns LPIPE_OK or LPIPE_VERIFY with *out set (free
 * it with lpipe_result_free), else an error code and *out NULL. */
int lpipe_run_file(lpipe_pipeline *p, lpipe_engine *e, const char *path, lpipe_result **out);
int lpipe_run_buffer(lpipe_pipeline *p, lpipe_engine *e, const char *name, const void *data,
		     size_t len, lpipe_result **out);

/* The product: the answer, else the summary, else the kept chunks. */
const char *lpipe_result_text(lpipe_result *r);
/* The report as `lpipe run --format FORMAT` writes it: "text", "markdown",
 * "json" or "html"; NULL: the pipeline's output.format. NULL on failure
 * (lpipe_errmsg says why). Owned by the result. */
const char *lpipe_result_report(lpipe_result *r, const char *format);
/* LPIPE_OK when `format` names a report format, else LPIPE_USAGE. */
int lpipe_format_check(const char *format);
/* The JSON report (lpipe_result_report(r, "json")). */
const char *lpipe_result_json(lpipe_result *r);
/* Write the report to `out` without keeping a copy (format as above).
 * LPIPE_OK; LPIPE_INPUT when a write fails, LPIPE_NOMEM, LPIPE_USAGE. */
int lpipe_result_write(lpipe_result *r, const char *format, FILE *out);
/* The run's code: LPIPE_OK or LPIPE_VERIFY. */
int lpipe_result_code(const lpipe_result *r);
/* 1 passed, 0 failed, -1 when no verify stage ran. */
int lpipe_result_passed(const lpipe_result *r);
/* The share of keyphrases that survived, 0..1 (1 when none or no verify). */
double lpipe_result_survival(const lpipe_result *r);
/* The run's peak of tracked memory in bytes: its own, plus what it shared
 * with runs beside it on the same engine (the models). */
size_t lpipe_result_peak_bytes(const lpipe_result *r);
/* Tokens the run's model requests took in and gave out, retries included
 * (0 and 0 without a model). Either pointer may be NULL. */
void lpipe_result_tokens(const lpipe_result *r, size_t *prompt, size_t *generated);
void lpipe_result_free(lpipe_result *r);

#ifdef __cplusplus
}
#endif

#endif
