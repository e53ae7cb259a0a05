/*
 * runner.h - running one pipeline over one document, stage by stage.
 *
 * The commands that process documents (run: a batch of one, and batch)
 * share this code so that they load, budget, trace and stop in the same
 * way:
 *
 *  1. lp_runner_load_pipeline: the pipeline, with -q as the variable
 *     `question` and the --set overrides;
 *  2. lp_runner_budget: the memory budget, from --mem-budget, else the
 *     environment variable LPIPE_MEM_BUDGET, else memory.budget;
 *  3. lp_runner_run: load the document (input.invalid_utf8 decides what
 *     happens to invalid UTF-8), then run every stage in order.
 *
 * The runner owns the per-stage bookkeeping: before a stage runs it sets the
 * memory phase to the stage's kind name, starts new memory peaks and appends
 * the stage's entry to doc->trace (so the stage may set its note with
 * lp_doc_note); afterwards it records the seconds and the tracked peak. When
 * the first stage that is not a split finds no chunks, the whole text
 * becomes one chunk.
 *
 * Reruns: a stage may ask, through doc->rerun (stages/doc.h), that the
 * stages from an earlier index up to itself run again (the verify stage's
 * on_fail retry). The runner honours it after the stage returns, at most
 * LP_DOC_MAX_RERUNS times in a run: every stage run again is a step like
 * any other, with its memory phase, its own peaks and a new trace entry
 * whose `pass` is 2 for the first rerun, 3 for the next. A stage is never
 * run again behind the runner's back.
 *
 * Cancellation: before each stage the runner asks core/cancel.h whether
 * the calling thread was asked to stop; if so the run ends there with
 * LP_E_INTERNAL and "run cancelled before stage N KIND", freeing what it
 * holds as any failure does. Inside a stage the model session, the model
 * server's client and the embedder ask at each of their steps, and the
 * stage fails with their "run cancelled ..." message.
 *
 * A run stops at the first failing stage, except for LP_E_VERIFY: a failed
 * verification is remembered, the remaining stages still run, and the run
 * returns LP_E_VERIFY with its message so the output is still produced. A
 * verification that is run again by a rerun is judged by its last run.
 */
#ifndef LP_API_RUNNER_H
#define LP_API_RUNNER_H

#include <stddef.h>

#include "config/pipeline.h"
#include "core/status.h"
#include "report/report.h"
#include "stages/doc.h"

/*
 * Load `path` with `question` (may be NULL) bound to ${question} and the
 * --set strings `sets[0..n_sets)`. Returns what lp_pipeline_load returns:
 * LP_OK and a new *out (free with lp_pipeline_free), LP_E_CONFIG or LP_E_IO.
 */
enum lp_status lp_runner_load_pipeline(const char *path, const char *question,
				       const char *const *sets, size_t n_sets,
				       struct lp_pipeline **out, struct lp_diag *d);

/*
 * The GGUF file that `lpipe plan` and `lpipe probe` look at: `arg` itself,
 * unless it names a pipeline (it ends in .yaml or .yml): then the model
 * that pipeline opens for a document in language `lang` ("en", "zh", "und";
 * NULL: its model section), resolved as a run resolves it
 * (stages/model_stage.h lp_stage_pick_model, the notice of a missing
 * per-language model printed as in a run), into buf[0..cap). Returns LP_OK;
 * LP_E_USAGE when `lang` is given for a model file or is no language tag;
 * or what loading the pipeline returns; `d` is filled on failure.
 */
enum lp_status lp_runner_model_arg(const char *arg, const char *lang, char *buf, size_t cap,
				   struct lp_diag *d);

/*
 * The memory budget in bytes for `p` (0: unlimited): `cli_value` (the
 * --mem-budget argument, may be NULL) wins over LPIPE_MEM_BUDGET, which wins
 * over memory.budget (0 when `p` is NULL: the pipeline is not read yet).
 * Returns LP_OK, or LP_E_USAGE (bad --mem-budget) /
 * LP_E_CONFIG (bad LPIPE_MEM_BUDGET) with `d` filled. Does not set it.
 */
enum lp_status lp_runner_budget(const struct lp_pipeline *p, const char *cli_value,
				size_t *bytes, struct lp_diag *d);

/*
 * Initialise `doc` for `p` on `engine` (engine/engine.h; NULL: the doc
 * loads what it needs for itself), load the document `doc_path` ("-":
 * stdin) and run every stage. `question` (may be NULL) is stored in
 * doc->question and must outlive doc. `stats` (may be NULL) receives the
 * run's memory peaks and final status. The run charges the engine's
 * memory account (lp_engine_account), under its budget, else the calling
 * thread's; the peaks are those of the thread's memory scope (core/mem.h)
 * on that account when it has one, so that documents run side by side
 * each see their own, else of the account. The model is given back
 * (lp_doc_release_model) when the run ends: the report needs only the doc.
 * The caller calls lp_doc_release(doc) afterwards in every case, on the
 * same account (what the document reserved goes back to it).
 *
 * Returns LP_OK; LP_E_VERIFY when a verification failed but every stage ran
 * (`d` holds the first verification message); or the first error (LP_E_INPUT,
 * LP_E_IO, LP_E_NOMEM, LP_E_MODEL, LP_E_INTERNAL, ...) with `d` filled, in
 * which case the doc is incomplete and no output should be written.
 */
struct lp_engine;
enum lp_status lp_runner_run(const struct lp_pipeline *p, const char *doc_path,
			     const char *question, struct lp_engine *engine, struct lp_doc *doc,
			     struct lp_run_stats *stats, struct lp_diag *d);

/*
 * Same on the bytes data[0..len) (they must outlive doc), named `name` in
 * messages and in the report (the library's run on a buffer, api/lpipe.h).
 */
enum lp_status lp_runner_run_bytes(const struct lp_pipeline *p, const char *name,
				   const void *data, size_t len, const char *question,
				   struct lp_engine *engine, struct lp_doc *doc,
				   struct lp_run_stats *stats, struct lp_diag *d);

#endif
