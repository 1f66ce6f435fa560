#pragma once
// cuboid's distributed entry: C <- alpha op(A) op(B) + beta C on matrices spread over the ranks
// of an MPI communicator in ScaLAPACK's 2D block-cyclic layout, each rank's processors (those of
// its Context) computing its share. Collective: every rank of the communicator calls it with
// the same global arguments and its own local arrays.
//
// The layout: a grid_rows x grid_cols process grid, row-major over the communicator's ranks
// (rank = prow * grid_cols + pcol, BLACS order 'R'); square blocks of `block` x `block` for A, B
// and C; block (I, J) of a matrix on process ((I + r) mod grid_rows, (J + c) mod grid_cols), where
// (r, c) is the process holding that matrix's first block (ScaLAPACK's RSRC and CSRC; (0, 0) by
// default, and each of A, B and C has its own); each rank stores its blocks in one column-major
// local array with leading dimension at least its local rows (ScaLAPACK's NUMROC,
// `local_extent` below).
//
// A block-aligned sub-matrix of a ScaLAPACK matrix (its first row and column multiples of the
// block) is such a matrix: its first block's process is the one holding the sub-matrix's first
// block, and each rank passes its local array from the first local element of the sub-matrix.
//
// MPI: the application initialises and finalises MPI. cuboid calls MPI only from the calling
// thread, on a duplicate of the communicator made once (kept with the communicator as an MPI
// attribute), so its messages never meet the application's; MPI_THREAD_FUNNELED is what that
// formally requires, and a plain MPI_Init (MPI_THREAD_SINGLE in Open MPI) works.
#include <mpi.h>

#include <cstdint>
#include <cuboid/cuboid.hpp>
#include <string>
#include <vector>

namespace cuboid {

// A process of the grid by its coordinates.
struct GridCoord {
  int row = 0, col = 0;
};

struct BlockCyclicLayout {
  int grid_rows = 0, grid_cols = 0;  // 0 x 0: the most nearly square grid, rows <= cols
  std::int64_t block = 0;            // block edge, > 0
  // The process holding the first block of A, of B and of C, each as stored.
  GridCoord first_a, first_b, first_c;

  // `{rows, cols, block}` as before the first blocks' processes were fields.
  BlockCyclicLayout(int rows = 0, int cols = 0, std::int64_t block_edge = 0, GridCoord a = {},
                    GridCoord b = {}, GridCoord c = {})
      : grid_rows(rows), grid_cols(cols), block(block_edge), first_a(a), first_b(b), first_c(c) {}
};

// ScaLAPACK's NUMROC: how many of n indices cut in blocks of `block`, dealt cyclically over
// `procs` process coordinates from coordinate `first` (the first block's), coordinate `coord`
// owns.
std::int64_t local_extent(std::int64_t n, std::int64_t block, int coord, int procs, int first = 0);

// The layout's grid for a communicator of `ranks` ranks (resolving 0 x 0); throws
// KeyedError("layout", ...) when the grid's processes are not the ranks.
void grid_of(const BlockCyclicLayout& layout, int ranks, int& grid_rows, int& grid_cols);

// How a context's distributed calls share a product between the ranks. Every rank of a call's
// communicator must give its context the same options (a call checks that they agree).
struct RankOptions {
  // "auto": the traffic model chooses among its candidates (process grid, stationary operands,
  // 2.5D and 3D cuts), by bytes and time, among those that fit memory_limit_mib. Else a
  // partition algorithm ("nrrp3d", "nrrp2d", "grid", ...) cuts the tile cuboid between the
  // ranks by their speeds alone.
  std::string algorithm = "auto";
  std::vector<double> speeds;   // relative speed of each rank of the communicator; empty: equal
  double bandwidth_gbs = 10;    // the traffic model's receive bandwidth per rank, GB/s
  double memory_limit_mib = 0;  // bytes a rank may hold for a call, in MiB; 0: no limit
};

// Sets the rank options of `context`'s later distributed calls (and forgets the products it had
// prepared with others). Throws KeyedError naming the field ("algorithm", "speeds",
// "bandwidth_gbs", "memory_limit_mib") of a value that can never be valid.
void set_rank_options(Context& context, const RankOptions& options);

// Collective over `comm`. A, B, C are this rank's local arrays (A of op(A)'s stored m x k or
// k x m, B of k x n or n x k, C of m x n), with leading dimensions lda, ldb, ldc. BLAS's rules
// apply: k = 0 or alpha = 0 scale C by beta without reading A or B, m = 0 or n = 0 do nothing,
// beta = 0 never reads C. An argument error on any rank is a KeyedError on every rank, before any
// data moves. A failure once data is moving is an Error on the failing rank; the others may
// then wait for it, and the application should end the job (MPI_Abort).
void gemm(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
          std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* A,
          std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C,
          std::int64_t ldc);
void gemm(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
          std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* A,
          std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
          std::int64_t ldc);
// Complex (pzgemm's and pcgemm's types): arrays aligned as their reals, as Fortran's are.
void gemm(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
          std::int64_t m, std::int64_t n, std::int64_t k, std::complex<double> alpha,
          const std::complex<double>* A, std::int64_t lda, const std::complex<double>* B,
          std::int64_t ldb, std::complex<double> beta, std::complex<double>* C, std::int64_t ldc);
void gemm(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
          std::int64_t m, std::int64_t n, std::int64_t k, std::complex<float> alpha,
          const std::complex<float>* A, std::int64_t lda, const std::complex<float>* B,
          std::int64_t ldb, std::complex<float> beta, std::complex<float>* C, std::int64_t ldc);

}  // namespace cuboid
