#include "layout/layout.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cuboid::layout {

ProcessGrid near_square_grid(int p) {
  if (p <= 0) throw std::invalid_argument("process grid: need at least one process");
  int r = int(std::sqrt(double(p)));
  while (r > 1 && p % r != 0) --r;
  return ProcessGrid{r, p / r};
}

std::int64_t numroc(std::int64_t n, std::int64_t nb, int iproc, int isrcproc, int nprocs) {
  const std::int64_t mydist = (nprocs + iproc - isrcproc) % nprocs;
  const std::int64_t nblocks = n / nb;
  std::int64_t num = (nblocks / nprocs) * nb;
  const std::int64_t extra = nblocks % nprocs;
  if (mydist < extra)
    num += nb;
  else if (mydist == extra)
    num += n % nb;
  return num;
}

std::int64_t owned_in_range(std::int64_t lo, std::int64_t hi, std::int64_t nb, int p, int nprocs) {
  if (hi <= lo) return 0;
  // numroc(x) counts the owned indices below x.
  return numroc(hi, nb, p, 0, nprocs) - numroc(lo, nb, p, 0, nprocs);
}

BlockCyclic::BlockCyclic(std::int64_t m, std::int64_t n, std::int64_t mb, std::int64_t nb,
                         ProcessGrid grid, FirstProcess first, std::int64_t context)
    : m_(m), n_(n), mb_(mb), nb_(nb), grid_(grid), first_(first), context_(context) {
  if (m <= 0 || n <= 0) throw std::invalid_argument("block-cyclic layout: empty matrix");
  if (mb <= 0 || nb <= 0)
    throw std::invalid_argument("block-cyclic layout: block size must be positive");
  if (grid.rows <= 0 || grid.cols <= 0)
    throw std::invalid_argument("block-cyclic layout: empty process grid");
  if (first.row < 0 || first.row >= grid.rows || first.col < 0 || first.col >= grid.cols)
    throw std::invalid_argument("block-cyclic layout: first block's process (" +
                                std::to_string(first.row) + ", " + std::to_string(first.col) +
                                ") is not on the " + describe(grid) + " grid");
}

std::int64_t BlockCyclic::local_rows(int rank) const {
  return numroc(m_, mb_, grid_.row_of(rank), first_.row, grid_.rows);
}

std::int64_t BlockCyclic::local_cols(int rank) const {
  return numroc(n_, nb_, grid_.col_of(rank), first_.col, grid_.cols);
}

Descriptor BlockCyclic::descriptor(int rank) const {
  return Descriptor{1,          context_,   m_,
                    n_,         mb_,        nb_,
                    first_.row, first_.col, std::max<std::int64_t>(1, local_rows(rank))};
}

std::int64_t BlockCyclic::owned_elements(const exec::Rect& r, int rank) const {
  return owned_in_range(r.i0, r.i1, mb_, row_offset(grid_.row_of(rank)), grid_.rows) *
         owned_in_range(r.j0, r.j1, nb_, col_offset(grid_.col_of(rank)), grid_.cols);
}

std::string describe(const ProcessGrid& g) {
  return std::to_string(g.rows) + "x" + std::to_string(g.cols);
}

}  // namespace cuboid::layout
