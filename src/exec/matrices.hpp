#pragma once
// Host matrices and their deterministic contents: any rank can generate any block of A, B or
// C from the seed alone, which is what lets the MPI layer start from a distributed layout.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

#include "exec/initial_c.hpp"
#include "exec/scalar.hpp"
#include "kokkos_ext/host.hpp"

namespace cuboid::exec {

template <class Scalar>
using HostMatrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

enum class MatrixId : std::uint64_t { A = 1, B = 2, C = 3 };

// Counter-based generator (splitmix64 finaliser): element (i, j) of matrix `id`, in [-1, 1).
KOKKOS_INLINE_FUNCTION double element_value(std::uint64_t seed, MatrixId id, std::int64_t i,
                                            std::int64_t j) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + std::uint64_t(id) * 0xD1B54A32D192ED03ull +
                    std::uint64_t(i) * 0xBF58476D1CE4E5B9ull +
                    std::uint64_t(j) * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z = z ^ (z >> 31);
  return double(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

// Element (i, j) of the global matrix `id` in the scalar type: a complex element takes its
// imaginary part from a stream of its own, so that its real part is the real type's element.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar element(std::uint64_t seed, MatrixId id, std::int64_t i,
                                      std::int64_t j) {
  const double re = element_value(seed, id, i, j);
  const double im =
      is_complex<Scalar> ? element_value(seed, MatrixId(std::uint64_t(id) + 16), i, j) : 0.0;
  return make_scalar<Scalar>(re, im);
}

// Fills `M` with the elements of rows row0.. and columns col0.. of the global matrix `id`.
template <class Scalar>
void fill_random(const HostMatrix<Scalar>& M, std::uint64_t seed, MatrixId id,
                 std::int64_t row0 = 0, std::int64_t col0 = 0) {
  kokkos_ext::host_for(
      "cuboid::exec::fill_random", std::int64_t(M.extent(0)), std::int64_t(M.extent(1)),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        M(i, j) = element<Scalar>(seed, id, row0 + i, col0 + j);
      });
}

template <class Scalar>
void fill_value(const HostMatrix<Scalar>& M, Scalar value) {
  kokkos_ext::host_for(
      "cuboid::exec::fill_value", std::int64_t(M.extent(0)), std::int64_t(M.extent(1)),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { M(i, j) = value; });
}

// Element (i, j) of C0 as asked, on the host: what fill_initial writes there.
template <class Scalar>
Scalar initial_element(InitialC init, std::uint64_t seed, std::int64_t i, std::int64_t j) {
  switch (init) {
    case InitialC::zero:
      return Scalar(0);
    case InitialC::nan:
      return quiet_nan<Scalar>();
    case InitialC::random:
      break;
  }
  return element<Scalar>(seed, MatrixId::C, i, j);
}

// C0 as asked: the global C's elements from the seed (rows row0.., columns col0..), zeros or NaN.
template <class Scalar>
void fill_initial(const HostMatrix<Scalar>& M, InitialC init, std::uint64_t seed,
                  std::int64_t row0 = 0, std::int64_t col0 = 0) {
  switch (init) {
    case InitialC::random:
      fill_random(M, seed, MatrixId::C, row0, col0);
      break;
    case InitialC::zero:
      fill_value(M, Scalar(0));
      break;
    case InitialC::nan:
      fill_value(M, quiet_nan<Scalar>());
      break;
  }
}

}  // namespace cuboid::exec
