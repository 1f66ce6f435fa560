#pragma once
// A rank's share of a block-cyclic matrix, generated from the seed: no rank ever builds a
// whole matrix, and any rank can regenerate any element to check it.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "dist/layout.hpp"
#include "exec/matrices.hpp"

namespace cuboid::dist {

template <class Scalar>
exec::HostMatrix<Scalar> local_matrix(const BlockCyclic& L, int rank, const char* label) {
  // An empty share is still a valid 0 x n array (ScaLAPACK: lld >= 1, no elements).
  return exec::HostMatrix<Scalar>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), L.local_rows(rank),
      L.local_cols(rank));
}

template <class Scalar>
void fill_local(const exec::HostMatrix<Scalar>& M, const BlockCyclic& L, int rank,
                std::uint64_t seed, exec::MatrixId id) {
  const int prow = L.grid().row_of(rank), pcol = L.grid().col_of(rank);
  using policy = Kokkos::MDRangePolicy<Kokkos::DefaultHostExecutionSpace,
                                       Kokkos::Rank<2, Kokkos::Iterate::Left>>;
  if (M.extent(0) == 0 || M.extent(1) == 0) return;
  const BlockCyclic layout = L;
  Kokkos::parallel_for(
      "cuboid::dist::fill_local", policy({0, 0}, {M.extent(0), M.extent(1)}),
      KOKKOS_LAMBDA(std::int64_t li, std::int64_t lj) {
        M(li, lj) = Scalar(exec::element_value(seed, id, layout.global_row(li, prow),
                                               layout.global_col(lj, pcol)));
      });
  Kokkos::DefaultHostExecutionSpace().fence();
}

}  // namespace cuboid::dist
