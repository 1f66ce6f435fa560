/* cuboid's distributed C interface: C <- alpha op(A) op(B) + beta C on matrices in ScaLAPACK's
 * 2D block-cyclic layout over the ranks of an MPI communicator, each rank computing its share
 * with the processors of its context. Collective: every rank calls with the same global
 * arguments and its own local arrays.
 *
 * The layout: a grid_rows x grid_cols process grid, row-major over the communicator's ranks
 * (rank = prow * grid_cols + pcol; 0 x 0: the most nearly square grid); square blocks of
 * `block` for A, B and C, block (I, J) of a matrix on process ((I + r) mod grid_rows,
 * (J + c) mod grid_cols) with (r, c) the process of that matrix's first block (ScaLAPACK's RSRC
 * and CSRC: first_a, first_b, first_c, zeros by default); each rank's blocks in one column-major
 * local array whose leading dimension is at least its local rows (cuboid_local_extent_from,
 * ScaLAPACK's NUMROC). A block-aligned sub-matrix of a ScaLAPACK matrix is such a matrix: the
 * process of its first block, each rank's local array from the sub-matrix's first local element.
 *
 * MPI is the application's to initialise and finalise. cuboid calls it only from the calling
 * thread, on its own duplicate of the communicator. An argument error on any rank returns
 * CUBOID_INVALID_ARGUMENT on every rank before any data moves; a failure once data moves
 * returns CUBOID_RUNTIME_ERROR on the failing rank, and the others may wait for it: end the job
 * with MPI_Abort then. The rest of the contract is cuboid.h's. */
#ifndef CUBOID_CUBOID_MPI_H
#define CUBOID_CUBOID_MPI_H

#include <mpi.h>
#include <stdint.h>

#include <cuboid/cuboid.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Since version 0.2 the first blocks' processes are fields (zero-initialise the struct, as
 * `cuboid_block_cyclic L = {rows, cols, block};` does, for the earlier layout). */
typedef struct {
  int grid_rows, grid_cols; /* 0, 0: the most nearly square grid (rows <= cols) */
  int64_t block;            /* block edge, > 0 */
  int first_a[2];           /* (row, column) of the process holding A's first block */
  int first_b[2];           /* B's */
  int first_c[2];           /* C's */
} cuboid_block_cyclic;

/* How many of n indices in blocks of `block`, dealt over `procs` coordinates from 0, coordinate
 * `coord` owns; -1 on bad arguments. */
int64_t cuboid_local_extent(int64_t n, int64_t block, int coord, int procs);
/* The same with the first block on coordinate `first`. */
int64_t cuboid_local_extent_from(int64_t n, int64_t block, int coord, int first, int procs);

/* The rank options of the context's later distributed calls (cuboid::RankOptions): algorithm
 * "auto" (NULL too) or a partition algorithm; `speeds`, `nspeeds` factors one per rank (NULL, 0:
 * equal); the model's bandwidth in GB/s; a per-rank memory limit in MiB (0: none). Every rank
 * gives the same. */
cuboid_status cuboid_set_rank_options(cuboid_context* context, const char* algorithm,
                                      const double* speeds, int nspeeds, double bandwidth_gbs,
                                      double memory_limit_mib);

cuboid_status cuboid_dgemm_distributed(cuboid_context* context, MPI_Comm comm,
                                       const cuboid_block_cyclic* layout, char transa, char transb,
                                       int64_t m, int64_t n, int64_t k, double alpha,
                                       const double* A, int64_t lda, const double* B, int64_t ldb,
                                       double beta, double* C, int64_t ldc);
cuboid_status cuboid_sgemm_distributed(cuboid_context* context, MPI_Comm comm,
                                       const cuboid_block_cyclic* layout, char transa, char transb,
                                       int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                                       int64_t lda, const float* B, int64_t ldb, float beta,
                                       float* C, int64_t ldc);
/* Complex double and complex float: alpha, beta and the arrays point to (re, im) pairs, as CBLAS
 * passes them (aligned as their reals). */
cuboid_status cuboid_zgemm_distributed(cuboid_context* context, MPI_Comm comm,
                                       const cuboid_block_cyclic* layout, char transa, char transb,
                                       int64_t m, int64_t n, int64_t k, const void* alpha,
                                       const void* A, int64_t lda, const void* B, int64_t ldb,
                                       const void* beta, void* C, int64_t ldc);
cuboid_status cuboid_cgemm_distributed(cuboid_context* context, MPI_Comm comm,
                                       const cuboid_block_cyclic* layout, char transa, char transb,
                                       int64_t m, int64_t n, int64_t k, const void* alpha,
                                       const void* A, int64_t lda, const void* B, int64_t ldb,
                                       const void* beta, void* C, int64_t ldc);
/* The same with a Fortran communicator handle (an INTEGER from MPI_COMM_WORLD or MPI_Comm_split
 * in Fortran, converted with MPI_Comm_f2c), for ISO_C_BINDING callers. */
cuboid_status cuboid_dgemm_distributed_f(cuboid_context* context, MPI_Fint comm,
                                         const cuboid_block_cyclic* layout, char transa,
                                         char transb, int64_t m, int64_t n, int64_t k, double alpha,
                                         const double* A, int64_t lda, const double* B, int64_t ldb,
                                         double beta, double* C, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif /* CUBOID_CUBOID_MPI_H */
