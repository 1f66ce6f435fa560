#pragma once
// Marks the threads that are inside one of cuboid's own GEMMs. Kokkos Kernels calls the host
// BLAS by its Fortran name (dgemm_ and kin): a BLAS drop-in that interposes those names asks
// here and passes such a call straight on, instead of taking it back into cuboid.

namespace cuboid::kokkos_ext {

class OwnGemm {
 public:
  OwnGemm();
  ~OwnGemm();
  OwnGemm(const OwnGemm&) = delete;
  OwnGemm& operator=(const OwnGemm&) = delete;
  // Whether the calling thread is inside one.
  static bool active();
};

}  // namespace cuboid::kokkos_ext
