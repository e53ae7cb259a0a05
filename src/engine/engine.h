/*
 * engine.h - what outlives one document: the model sessions, the dense
 * embedder, and through them the backend and the thread pools.
 *
 * `lpipe run` processes one document and `lpipe batch` thousands; both
 * hand each document's run an engine (api/runner.h), and the document's
 * state (stages/doc.h) borrows from it what it needs:
 *
 *  - Sessions are keyed by everything that makes one differ from another
 *    (model path, context, KV type, weights mode, device, GPU layers, chat
 *    template, shrink, sampler), so a pipeline that picks a model per
 *    document keeps one session per model. A document acquires a session
 *    (lp_engine_session) and releases it when it ends; documents of a batch
 *    share it from their threads, the session serializing generation on
 *    its lock (model/session.h).
 *  - The dense embedder (MiniLM) is loaded once and lent to one caller at
 *    a time (lp_engine_dense): its pool runs one loop at a time, and each
 *    embedding call already uses every core.
 *
 * Keeping: an engine made with keep_idle 0 (a run: a batch of one) frees a
 * session or the embedder as soon as nobody holds it, so a run's memory
 * over time is what it was before engines existed. With keep_idle 1 (a
 * batch) what is released stays loaded for the next document, within the
 * memory budget: when loading something new is refused by the budget, the
 * engine frees what nobody holds, least recently used first, and tries
 * again; only when nothing idle is left does a session open with shrinking
 * (memory.on_oom: shrink), so a document is never given a smaller context
 * just because an idle model of another document is still loaded.
 *
 * Documents: an engine made with keep_documents also keeps, for the next
 * runs of the same document, its parsed form and the BM25 indexes of its
 * chunks (engine/docstore.h); its owner must count them and drop them
 * when it needs the room.
 *
 * Memory accounting: an engine has a memory account of its own (core/mem.h,
 * lp_engine_account): one budget for its runs and what it keeps, so two
 * engines in one process have two budgets and neither sees the other's
 * bytes. What the engine loads is opened on that account under no memory
 * scope, so it is shared memory, seen by every document's peaks, and never
 * part of one document's own bytes.
 *
 * All functions are thread-safe. lp_engine_free may be called while
 * documents still hold what they acquired (a result of the library,
 * api/lpipe.h, kept after its engine): it frees what nobody holds, and the
 * rest, and the engine itself, at the last release. Nothing may be
 * acquired after it.
 */
#ifndef LP_ENGINE_ENGINE_H
#define LP_ENGINE_ENGINE_H

#include <stddef.h>

#include "core/status.h"
#include "engine/docstore.h"
#include "model/session.h"
#include "retrieve/embedder.h"

struct lp_engine;

struct lp_engine_params {
	int keep_idle;     /* keep released sessions and the embedder loaded */
	int keep_documents; /* keep documents' parsed forms and indexes for the
			     * next runs of them (engine/docstore.h) */
	size_t max_sessions; /* sessions kept at most, held ones included when
			      * more are held (0: 4) */
};

/* keep_idle 0, keep_documents 0, max_sessions 4. */
struct lp_engine_params lp_engine_default_params(void);

/* A new engine; LP_OK and *out (lp_engine_free), or LP_E_NOMEM. */
enum lp_status lp_engine_new(const struct lp_engine_params *p, struct lp_engine **out,
			     struct lp_diag *d);
/* Free every session and the embedder, those held now at their release
 * (above); NULL is a no-op. */
void lp_engine_free(struct lp_engine *e);

/*
 * A session opened with `p`: the loaded one with the same key, else a new
 * one. *opened is set to 1 when this call opened it (its notes, "shrink:
 * ...", are then news for the caller's trace), else 0. The caller holds it
 * until lp_engine_session_release. Returns LP_OK, or what lp_session_open
 * returns.
 */
enum lp_status lp_engine_session(struct lp_engine *e, const struct lp_session_params *p,
				 struct lp_session **out, int *opened, struct lp_diag *d);
/* Let go of a session from lp_engine_session; NULL is a no-op. */
void lp_engine_session_release(struct lp_engine *e, struct lp_session *s);

/*
 * The dense embedder (embedder.h lp_embedder_new_dense_on(NULL, device,
 * ...), device "cpu", "cuda" or "auto"), for the caller alone until
 * lp_engine_dense_release: a second caller waits. One embedder is kept: a
 * caller asking for another device than the loaded one's gets it reloaded
 * there. Returns LP_OK and *out (owned by the engine), or what
 * lp_embedder_new_dense_on returns (nothing is then held).
 */
enum lp_status lp_engine_dense(struct lp_engine *e, const char *device,
			       struct lp_embedder **out, struct lp_diag *d);
void lp_engine_dense_release(struct lp_engine *e, struct lp_embedder *x);

/* Free every session opened on the model file `path` that nobody holds
 * (a caller that plans memory by model, as lpipe serve's admission does,
 * making room for another). Returns how many went. */
size_t lp_engine_unload_idle(struct lp_engine *e, const char *path);

/* The store of documents' parsed forms and indexes (engine/docstore.h)
 * of an engine made with keep_documents, else NULL. */
struct lp_docstore *lp_engine_docs(struct lp_engine *e);

/* The engine's memory account (core/mem.h): its budget, and what its
 * runs and what it keeps are charged to. A run puts its thread on it
 * (lp_mem_account_use) for as long as it runs; the engine opens and frees
 * its sessions, its embedder and its documents there itself. Owned by the
 * engine; a caller that keeps it past lp_engine_free takes a reference
 * (lp_mem_account_ref). NULL for NULL. */
struct lp_mem_account *lp_engine_account(struct lp_engine *e);

/* Sessions loaded now (held or idle), and sessions opened so far: a batch
 * that loads its model once shows 1 and 1. */
size_t lp_engine_n_sessions(struct lp_engine *e);
size_t lp_engine_n_opened(struct lp_engine *e);

#endif
