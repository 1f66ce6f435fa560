/* cuboid's C interface: C <- alpha op(A) op(B) + beta C on column-major host matrices, computed
 * by every processor of a context (the host's cores, staged processors, GPUs) on a partition
 * that follows their speeds. Callable from C and, through ISO_C_BINDING, from Fortran.
 *
 * The contract:
 * - A context owns its processors, their threads and buffers, its speeds and its options. Make
 *   one with cuboid_create() and keep it for many calls: it is the expensive part.
 * - One call at a time per context: calls on one context are serialised by the context (a second
 *   thread waits). Contexts are independent and may be used from different threads at once.
 * - Kokkos: the first context initialises it if the application has not, and then finalises it
 *   at exit (never otherwise). Make that first context on the main thread (Kokkos finalises the
 *   thread pool of the thread that initialised it), and destroy every context before main
 *   returns.
 * - Errors: every function returns a status; cuboid_last_error() gives the message of the
 *   context's last failure. Nothing aborts the application.
 * - Results repeat bit for bit when the partition is fixed: given speeds, or
 *   `reproducible` = 1 (the speeds are measured once per context and kept).
 */
#ifndef CUBOID_CUBOID_H
#define CUBOID_CUBOID_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CUBOID_SUCCESS = 0,
  CUBOID_INVALID_ARGUMENT = 1, /* a bad argument: the message names it */
  CUBOID_UNSUPPORTED = 2,      /* valid, but not computed by this version */
  CUBOID_OUT_OF_MEMORY = 3,
  CUBOID_RUNTIME_ERROR = 4 /* a processor or runtime failed */
} cuboid_status;

typedef struct cuboid_context cuboid_context;

typedef struct {
  /* Processors, comma-separated: "host", "host,staged", "host,cuda:0"; NULL: every execution
   * space of the build. An empty string or an empty name ("host,") is refused. */
  const char* processors;
  /* Given speeds (GFLOP/s), one per processor; NULL: from the speed cache, else measured on
   * the first call of each scalar type. */
  const double* speeds;
  int speed_count;
  /* The speed cache file; NULL: ${CUBOID_CACHE_DIR:-~/.cache/cuboid}/speeds.json; "": none. */
  const char* speed_cache;
  /* Partition: "nrrp3d" (default), "nrrp3d-2mode", "nrrp2d", "column", "slab", "grid";
   * discretisation "rounded" (default), "precise", "stepped". NULL: the default. */
  const char* algorithm;
  const char* discretization;
  /* Memory budget of each staged processor or device, MiB; 0: the default. */
  double memory_budget_mib;
  /* Tile edge of the partition; 0: chosen per call. */
  int64_t tile;
  /* Products of fewer flops than this run as one GEMM on the first processor that computes in
   * host memory, with no partition; < 0: below 2*128^3 always, above it the faster path per
   * call shape, timed on its first two calls (given speeds or reproducible: below 2*384^3). */
  double direct_below_flops;
  /* 1: keep the speeds of the first calibration for the context's life, so that the same call
   * gives bitwise-identical results every time. */
  int reproducible;
} cuboid_options;

/* Fills `options` with the defaults. */
void cuboid_options_init(cuboid_options* options);

/* Makes a context; on failure *context is NULL and, where `error`/`error_size` are given, the
 * message is copied there. */
cuboid_status cuboid_create(const cuboid_options* options, cuboid_context** context, char* error,
                            int64_t error_size);
void cuboid_destroy(cuboid_context* context);

/* The message of the calling thread's last call on the context ("" after a success): threads
 * that share a context each read their own calls' outcome. Valid until that thread's next call
 * on the context. */
const char* cuboid_last_error(const cuboid_context* context);

/* What the last call on the context did, as cuboid::Context::last_call() says it in C++. */
typedef struct {
  int direct;              /* 1: one GEMM on one processor, no partition */
  int trial;               /* 1: a call that timed its path (the first calls of a shape) */
  double seconds;          /* the product, calibration excluded */
  double calibration_s;    /* spent calibrating within this call (first call of a type) */
  int processors;          /* the processors partitioned among (their speeds: cuboid_speeds) */
  char algorithm[32];      /* the partition used; "" for a direct call */
  char processor[32];      /* the processor of a direct call; "" when partitioned */
  int ranks;               /* a distributed call: the ranks; 1 otherwise */
  char rank_partition[64]; /* a distributed call: the rank partition chosen; "" otherwise */
  double received_bytes;   /* a distributed call: bytes this rank received, as MPI counted */
  /* Since 0.2. A distributed call: how often this rank drove MPI while a GEMM step ran, and the
   * pieces it computed on the calling thread (which then drives no MPI until each ends). */
  double mpi_polls_while_computing;
  int pieces_on_calling_thread;
} cuboid_call_report;

/* Fills `report` (CUBOID_INVALID_ARGUMENT for a null context or report). */
cuboid_status cuboid_last_call(cuboid_context* context, cuboid_call_report* report);

/* C (m x n, leading dimension ldc) <- alpha op(A) op(B) + beta C. trans: 'N', 'T' or 'C' (either
 * case); A is m x k for 'N' and k x m otherwise, B k x n or n x k; BLAS rules: k = 0 or
 * alpha = 0 scales C by beta, m = 0 or n = 0 does nothing, beta = 0 never reads C. */
cuboid_status cuboid_dgemm(cuboid_context* context, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, double alpha, const double* A, int64_t lda, const double* B,
                           int64_t ldb, double beta, double* C, int64_t ldc);
cuboid_status cuboid_sgemm(cuboid_context* context, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, float alpha, const float* A, int64_t lda, const float* B,
                           int64_t ldb, float beta, float* C, int64_t ldc);
/* Complex double and complex float, as CBLAS passes them: alpha, beta and the arrays point to
 * pairs of reals (re, im), column-major, aligned as their reals (C's double complex, C++'s
 * std::complex, Fortran's COMPLEX*16 and COMPLEX all do); 'C' conjugates. */
cuboid_status cuboid_zgemm(cuboid_context* context, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, const void* alpha, const void* A, int64_t lda, const void* B,
                           int64_t ldb, const void* beta, void* C, int64_t ldc);
cuboid_status cuboid_cgemm(cuboid_context* context, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, const void* alpha, const void* A, int64_t lda, const void* B,
                           int64_t ldb, const void* beta, void* C, int64_t ldc);

/* The speeds the context uses for a scalar type ('d', 's', 'z' or 'c'), GFLOP/s, into `speeds` (at
 * most `capacity`; NULL with capacity 0 asks for the count alone); returns how many processors
 * there are, or -1 on an error (a null context, speeds NULL with capacity > 0, a negative
 * capacity, another type). Calibrates if needed. */
int cuboid_speeds(cuboid_context* context, char type, double* speeds, int capacity);

#ifdef __cplusplus
}
#endif

#endif /* CUBOID_CUBOID_H */
