#pragma once
// A rank's share of a distributed matrix, generated from the seed: no rank ever builds a whole
// matrix, and any rank can regenerate any element to check it. The share is one buffer; where
// each owned element sits in it is the distribution's business (MatrixDist::offset).
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "exec/matrices.hpp"
#include "layout/distribution.hpp"

namespace cuboid::mpi {
using layout::BlockCyclic;
using layout::MatrixDist;

template <class Scalar>
using LocalStorage = Kokkos::View<Scalar*, Kokkos::HostSpace>;

template <class Scalar>
LocalStorage<Scalar> local_storage(const MatrixDist& d, int rank, const char* label) {
  return LocalStorage<Scalar>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                              std::size_t(d.local_size(rank)));
}

// The block-cyclic local array as a matrix (ScaLAPACK's lld = local rows), or the tiles stored
// as one panel (MatrixDist::store_as_panel), for GEMMs that read or write it in place.
template <class Scalar>
exec::HostMatrix<Scalar> local_array(const LocalStorage<Scalar>& s, const MatrixDist& d, int rank) {
  if (d.kind() == MatrixDist::Kind::tiles) {
    const std::int64_t rows = d.panel_rows(rank);
    return exec::HostMatrix<Scalar>(s.data(), rows, rows > 0 ? d.local_size(rank) / rows : 0);
  }
  const BlockCyclic& L = d.block_cyclic();
  return exec::HostMatrix<Scalar>(s.data(), L.local_rows(rank), L.local_cols(rank));
}

template <class Scalar>
void fill_local(const LocalStorage<Scalar>& M, const MatrixDist& d, int rank, std::uint64_t seed,
                exec::MatrixId id) {
  std::vector<exec::Rect> units;
  d.for_each_owned(rank, [&](const exec::Rect& u) { units.push_back(u); });
  Scalar* data = M.data();
  for (const exec::Rect& u : units) {
    const std::int64_t off = d.offset(u.i0, u.j0), ld = d.ld(u.i0, u.j0);
    using policy = Kokkos::MDRangePolicy<Kokkos::DefaultHostExecutionSpace,
                                         Kokkos::Rank<2, Kokkos::Iterate::Left>>;
    Kokkos::parallel_for(
        "cuboid::mpi::fill_local", policy({0, 0}, {u.rows(), u.cols()}),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
          data[off + i + j * ld] = exec::element<Scalar>(seed, id, u.i0 + i, u.j0 + j);
        });
  }
  Kokkos::DefaultHostExecutionSpace().fence();
}

}  // namespace cuboid::mpi
