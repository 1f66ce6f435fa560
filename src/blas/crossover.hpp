#pragma once
// Where the BLAS drop-in starts to gain: the smallest cube on a ladder of sizes at which the
// process-wide context runs a GEMM at most 5 % slower than the next BLAS, timed on this machine
// once and kept in the speed cache (per routine, processors and host threads).
#include <cuboid/cuboid.hpp>

#include "platform/crossover.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace cuboid::blas {

using blas_int = int;  // LP64, as Debian's BLAS and numpy call it

// The Fortran GEMM, with the two hidden lengths of its character arguments.
template <class T>
using FortranGemm = void (*)(const char*, const char*, const blas_int*, const blas_int*,
                             const blas_int*, const T*, const T*, const blas_int*, const T*,
                             const blas_int*, const T*, T*, const blas_int*, std::size_t,
                             std::size_t);

// The routine's first letter: s, d, c or z.
template <class T>
constexpr char letter() {
  if constexpr (std::is_same_v<T, float>) return 's';
  if constexpr (std::is_same_v<T, double>) return 'd';
  if constexpr (std::is_same_v<T, std::complex<float>>) return 'c';
  return 'z';
}

// The library's count for T: 2mnk, 8mnk for the complex types.
template <class T>
double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return cuboid::gemm_flops(scalar_type_of<T>(), m, n, k);
}

// Below the crossover ladder's smallest size a call is never worth taking.
template <class T>
const double kLadderFloorFlops = gemm_flops<T>(platform::kCrossoverFloor, platform::kCrossoverFloor,
                                               platform::kCrossoverFloor);

// The crossover in flops for the routine of T: from the cache, or measured against `next` (and
// then cached). Above the ladder's top when cuboid is slower even there.
struct Crossover {
  double flops = 0;
  bool measured = false;  // now, rather than found in the cache
};
template <class T>
Crossover crossover(Context& context, FortranGemm<T> next);

}  // namespace cuboid::blas
