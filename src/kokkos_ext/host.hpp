#pragma once
// Host work that may run on any thread of the application: Kokkos 3's OpenMP back end refuses
// kernels and initialised views off the thread that initialised it, and a library cannot choose
// its caller's thread.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace cuboid::kokkos_ext {

// Whether this thread may launch host-space kernels and construct views that initialise their
// data. Kokkos 3's OpenMP back end keeps its instance per thread: only the thread that
// initialised Kokkos (outside a parallel region of someone else's) may; on any other it throws.
// A library called from an application's threads asks here first.
inline bool host_kernels_here() {
#if defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same_v<Kokkos::DefaultHostExecutionSpace, Kokkos::OpenMP>)
    return Kokkos::OpenMP::impl_is_initialized() && !Kokkos::OpenMP::in_parallel();
#endif
  return true;
}

// f(i, j) for every element of a rows x cols matrix, column by column: a host-space kernel
// where this thread may launch one, a plain loop on this thread elsewhere.
template <class F>
void host_for(const char* label, std::int64_t rows, std::int64_t cols, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  if (host_kernels_here()) {
    using policy = Kokkos::MDRangePolicy<Kokkos::DefaultHostExecutionSpace,
                                         Kokkos::Rank<2, Kokkos::Iterate::Left>>;
    Kokkos::parallel_for(label, policy({0, 0}, {rows, cols}), f);
    Kokkos::DefaultHostExecutionSpace().fence();
    return;
  }
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) f(i, j);
}

// A host view of `extents` set to zero, on any thread (see host_kernels_here).
template <class View, class... Extents>
View host_zeros(const std::string& label, Extents... extents) {
  View v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
  using T = typename View::non_const_value_type;
  std::fill_n(v.data(), v.span(), T(0));
  return v;
}

}  // namespace cuboid::kokkos_ext
