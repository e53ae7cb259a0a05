/*
 * blas.h - float matrix products through OpenBLAS, loaded at run time.
 *
 * Every dense float product in lpipe (the BERT encoder, batched prefill,
 * the vector index) goes through lp_blas_sgemm. The library is opened with
 * dlopen on first use rather than linked, for one reason: OpenBLAS picks
 * its kernels for the CPU in a load-time constructor, and the Debian build
 * (0.3.21) takes some recent Xeons for a "Prescott" and then runs its SSE3
 * kernels, five times slower than the AVX-512 ones on the same machine.
 * The only remedy it offers is OPENBLAS_CORETYPE in the environment before
 * it loads, which a linked library reads before main() runs.
 *
 * So, before loading, when OPENBLAS_CORETYPE is unset: a CPU with AVX-512
 * F, BW, DQ, VL and CD (and the OS saving their state) gets "SkylakeX"; one
 * with AVX2 and FMA gets "Haswell" (the best x86 core OpenBLAS has without
 * AVX-512, and the one it uses for Zen); any other CPU is left to the
 * library. OPENBLAS_NUM_THREADS is set to 1 when unset, so that OpenBLAS
 * starts no idle threads: lpipe parallelises over blocks of the product
 * with its own pool (core/threadpool.h) and calls sgemm from each worker.
 * Both variables are put back as they were once the library is loaded, so
 * child processes see the environment lpipe was given.
 *
 * The library is $LPIPE_BLAS when set (a path or a soname; any library
 * with a CBLAS cblas_sgemm will do, the openblas_* extras are optional),
 * else libopenblas.so.0, else libopenblas.so, else libopenblas.so.0 in the
 * directory pkg-config named at build time.
 *
 * Invariants: loading happens once per process (thread-safe); after a
 * successful lp_blas_load every function here may be called from any
 * thread. lp_blas_sgemm never fails: if the library could not be loaded it
 * computes the same product with a plain loop (slow, but it cannot crash
 * a caller that skipped lp_blas_load). Callers that need the library call
 * lp_blas_load when they set up, so a missing library is reported there.
 */
#ifndef LP_BACKEND_CPU_BLAS_H
#define LP_BACKEND_CPU_BLAS_H

#include "core/status.h"

/* The CBLAS values (fixed by the CBLAS interface, checked in blas.c). */
enum lp_blas_order { LP_BLAS_ROW_MAJOR = 101, LP_BLAS_COL_MAJOR = 102 };
enum lp_blas_trans { LP_BLAS_NO_TRANS = 111, LP_BLAS_TRANS = 112 };

/*
 * Load the library (first call) or report how the first call went.
 * Returns LP_OK, or LP_E_MODEL with d saying which libraries were tried
 * ("unable to load OpenBLAS ('libopenblas.so.0': ...): install the Debian
 * package 'libopenblas0'"). Thread-safe.
 */
enum lp_status lp_blas_load(struct lp_diag *d);

/*
 * C = alpha * op(A) op(B) + beta * C, op(X) = X or X^T as `ta`, `tb` say:
 * cblas_sgemm's arguments and meaning (op(A) is m x k, op(B) k x n, C m x n;
 * lda, ldb, ldc in elements). Loads the library on first use. With beta 0,
 * C need not be initialised.
 */
void lp_blas_sgemm(enum lp_blas_order order, enum lp_blas_trans ta, enum lp_blas_trans tb,
		   int m, int n, int k, float alpha, const float *A, int lda, const float *B,
		   int ldb, float beta, float *C, int ldc);

/* Threads OpenBLAS itself uses per call (n >= 1); a no-op when the library
 * has no openblas_set_num_threads or is not loaded. Process-wide. */
void lp_blas_set_threads(int n);

/*
 * The kernel set the library chose ("SkylakeX", "Haswell", ...), "unknown"
 * when it cannot say, "none" when it is not loaded. Static storage.
 */
const char *lp_blas_core_name(void);

/* The kernel set lpipe asked for through OPENBLAS_CORETYPE ("SkylakeX",
 * "Haswell"), or NULL when it left the choice to the library (the variable
 * was already set, or the CPU has neither feature set). */
const char *lp_blas_core_asked(void);

/* The library that was loaded (as named to dlopen), or NULL. */
const char *lp_blas_library(void);

#endif
