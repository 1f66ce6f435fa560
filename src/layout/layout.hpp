#pragma once
// The initial and final data layout of the MPI layer: 2D block-cyclic over a process grid,
// exactly as ScaLAPACK lays out a matrix, so that A, B and C could be handed to (or taken
// from) a ScaLAPACK code without reshuffling.
//
// - The process grid is P_r x P_c, row-major: rank = p_r * P_c + p_c (BLACS order 'R').
// - Block (I, J) (rows [I*mb, (I+1)*mb), columns [J*nb, (J+1)*nb)) lives on process
//   ((I + rsrc) mod P_r, (J + csrc) mod P_c): (rsrc, csrc) is the process holding the first
//   block, ScaLAPACK's RSRC and CSRC, and each of A, B and C has its own (a block-aligned
//   sub-matrix of a ScaLAPACK matrix is a matrix of this layout whose first block is the
//   process holding the sub-matrix's first block).
// - A process stores its blocks in one column-major local array of numroc(m) x numroc(n)
//   elements with leading dimension lld = max(1, numroc(m)); global row g sits at local row
//   (g / (mb*P_r)) * mb + g mod mb, whatever rsrc (each cycle of P_r blocks gives every process
//   row one).
// No MPI here: `simulate` uses this file to predict traffic without running anything.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "exec/plan.hpp"

namespace cuboid::layout {

struct ProcessGrid {
  int rows = 1, cols = 1;
  int size() const { return rows * cols; }
  int rank_of(int prow, int pcol) const { return prow * cols + pcol; }
  int row_of(int rank) const { return rank / cols; }
  int col_of(int rank) const { return rank % cols; }
};

// The most nearly square grid with rows <= cols and rows * cols == p (a prime p gives 1 x p).
ProcessGrid near_square_grid(int p);

// ScaLAPACK's NUMROC: how many of the n indices, cut in blocks of nb and dealt cyclically over
// nprocs processes starting at isrcproc, process iproc owns.
std::int64_t numroc(std::int64_t n, std::int64_t nb, int iproc, int isrcproc, int nprocs);

// Indices in [lo, hi) that process coordinate `p` owns, counted from the first block's
// coordinate (source 0; with a source s, pass (p - s) mod nprocs).
std::int64_t owned_in_range(std::int64_t lo, std::int64_t hi, std::int64_t nb, int p, int nprocs);

// The nine-integer ScaLAPACK array descriptor (DTYPE_ = 1 for dense matrices).
using Descriptor = std::array<std::int64_t, 9>;
enum DescField { DTYPE_ = 0, CTXT_, M_, N_, MB_, NB_, RSRC_, CSRC_, LLD_ };

// The process (row, column) holding a matrix's first block.
struct FirstProcess {
  int row = 0, col = 0;
  bool operator==(const FirstProcess& o) const { return row == o.row && col == o.col; }
};

// The first processes of the three matrices of a product, as stored.
struct FirstProcesses {
  FirstProcess a, b, c;
};

class BlockCyclic {
 public:
  BlockCyclic() = default;
  // Throws std::invalid_argument on an empty matrix or block, or a first process off the grid.
  BlockCyclic(std::int64_t m, std::int64_t n, std::int64_t mb, std::int64_t nb, ProcessGrid grid,
              FirstProcess first = {}, std::int64_t context = 0);

  std::int64_t rows() const { return m_; }
  std::int64_t cols() const { return n_; }
  std::int64_t row_block() const { return mb_; }
  std::int64_t col_block() const { return nb_; }
  const ProcessGrid& grid() const { return grid_; }
  const FirstProcess& first() const { return first_; }
  // A process row's (column's) distance from the first block's, the coordinate NUMROC counts by.
  int row_offset(int prow) const { return (prow - first_.row + grid_.rows) % grid_.rows; }
  int col_offset(int pcol) const { return (pcol - first_.col + grid_.cols) % grid_.cols; }

  int owner(std::int64_t gi, std::int64_t gj) const {
    return grid_.rank_of(int((gi / mb_ + first_.row) % grid_.rows),
                         int((gj / nb_ + first_.col) % grid_.cols));
  }
  std::int64_t local_rows(int rank) const;
  std::int64_t local_cols(int rank) const;
  std::int64_t local_row(std::int64_t gi) const {
    return (gi / (mb_ * grid_.rows)) * mb_ + gi % mb_;
  }
  std::int64_t local_col(std::int64_t gj) const {
    return (gj / (nb_ * grid_.cols)) * nb_ + gj % nb_;
  }
  std::int64_t global_row(std::int64_t li, int prow) const {
    return ((li / mb_) * grid_.rows + row_offset(prow)) * mb_ + li % mb_;
  }
  std::int64_t global_col(std::int64_t lj, int pcol) const {
    return ((lj / nb_) * grid_.cols + col_offset(pcol)) * nb_ + lj % nb_;
  }
  Descriptor descriptor(int rank) const;

  // Elements of `r` that `rank` owns: a product of two per-axis counts, O(1).
  std::int64_t owned_elements(const exec::Rect& r, int rank) const;

  // Calls f(piece, owner) for each intersection of `r` with a block, blocks in column-major
  // order. Sender and receiver enumerate the same pieces in the same order, which is what
  // lets a message be a bare concatenation of pieces.
  template <class F>
  void for_each_piece(const exec::Rect& r, F&& f) const {
    for (std::int64_t j = r.j0; j < r.j1;) {
      const std::int64_t j1 = std::min(r.j1, (j / nb_ + 1) * nb_);
      for (std::int64_t i = r.i0; i < r.i1;) {
        const std::int64_t i1 = std::min(r.i1, (i / mb_ + 1) * mb_);
        f(exec::Rect{i, i1, j, j1}, owner(i, j));
        i = i1;
      }
      j = j1;
    }
  }

 private:
  std::int64_t m_ = 0, n_ = 0, mb_ = 1, nb_ = 1;
  ProcessGrid grid_;
  FirstProcess first_;
  std::int64_t context_ = 0;
};

std::string describe(const ProcessGrid& g);

}  // namespace cuboid::layout
