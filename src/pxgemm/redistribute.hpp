#pragma once
// Moving a sub-matrix between two 2D block-cyclic layouts over one process grid, with an optional
// transpose (and conjugation) on the way: how p?gemm_ brings operands in any layout ScaLAPACK
// accepts into the one the distributed entry computes in, and C back.
//
// The sub-matrix's index space is cut at every block boundary of either side, so that each
// piece is contiguous along columns on both; sender and receiver enumerate the same pieces in
// the same order, which lets a message be the bare concatenation of its pieces' elements (one
// MPI_Alltoallv). The grid's ranks are row-major in the communicator: rank = prow * cols + pcol.
#include <mpi.h>

#include <complex>
#include <cstdint>
#include <vector>

namespace cuboid::pxgemm {

// One axis of a block-cyclic layout: index x of the sub-matrix is global index offset + x, in
// blocks of `block` dealt over `procs` process coordinates from `source`, the first block
// `first` long (PBLAS's IMB/INB; 0: a whole block). A source of -1 is ScaLAPACK's replication:
// every coordinate holds the whole axis, at its global index.
struct Axis {
  std::int64_t offset = 0, block = 1;
  int source = 0, procs = 1;
  std::int64_t first = 0;
  bool replicated() const { return source < 0; }
  // The global index moved by what the first block lacks, so that blocks start at multiples.
  std::int64_t shifted(std::int64_t x) const {
    return offset + x + (first > 0 ? block - first : 0);
  }
  int proc(std::int64_t x) const {
    return replicated() ? -1 : int((shifted(x) / block + source) % procs);
  }
  std::int64_t local(std::int64_t x) const {
    if (replicated()) return offset + x;
    const std::int64_t h = shifted(x);
    const std::int64_t l = (h / (block * procs)) * block + h % block;
    // The source's first block holds only `first` elements.
    return proc(x) == source && first > 0 ? l - (block - first) : l;
  }
  // The first index after x where the owner or the local run may change.
  std::int64_t next_cut(std::int64_t x) const {
    if (replicated()) return std::int64_t(1) << 62;
    const std::int64_t h = shifted(x);
    return x + (h / block + 1) * block - h;
  }
};

// A rank's view of one layout of the sub-matrix: the row and column axes and its local array.
template <class Scalar>
struct Side {
  Axis rows, cols;
  Scalar* data = nullptr;  // this rank's local array
  std::int64_t ld = 1;
};

struct Grid {
  int rows = 1, cols = 1, me = 0;
  MPI_Comm comm = MPI_COMM_NULL;
};

// How the sub-matrix's rows x cols elements land on the target: as they are, transposed, or
// conjugate-transposed (the target's row axis then runs along the source's columns).
enum class Map { same, transpose, conjugate_transpose };

// Collective over grid.comm. Moves the rows x cols sub-matrix described by `from` into `to`
// (to's axes are in the target's own orientation: for a transposed map, to.rows runs along
// from.cols). Returns the bytes this rank received from other ranks.
template <class Scalar>
double redistribute(const Grid& grid, std::int64_t rows, std::int64_t cols,
                    const Side<const Scalar>& from, const Side<Scalar>& to, Map map);

// Calls f(x0, x1, y0, y1) for every piece of the rows x cols sub-matrix that this rank holds in
// `side` (row segment [x0, x1), column segment [y0, y1)).
template <class Scalar, class F>
void for_each_owned(const Grid& grid, std::int64_t rows, std::int64_t cols,
                    const Side<Scalar>& side, F&& f) {
  const int prow = grid.me / grid.cols, pcol = grid.me % grid.cols;
  for (std::int64_t y = 0; y < cols;) {
    const std::int64_t y1 = std::min(cols, side.cols.next_cut(y));
    if (side.cols.replicated() || side.cols.proc(y) == pcol)
      for (std::int64_t x = 0; x < rows;) {
        const std::int64_t x1 = std::min(rows, side.rows.next_cut(x));
        if (side.rows.replicated() || side.rows.proc(x) == prow) f(x, x1, y, y1);
        x = x1;
      }
    y = y1;
  }
}

}  // namespace cuboid::pxgemm
