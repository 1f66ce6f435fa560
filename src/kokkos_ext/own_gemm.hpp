#pragma once
// Marks the threads that are inside one of cuboid's own GEMMs. Kokkos Kernels calls the host
// BLAS by its Fortran name (dgemm_ and kin): a BLAS drop-in that interposes those names asks
// here and passes such a call straight on, instead of taking it back into cuboid.

namespace cuboid::kokkos_ext {

// Whether the calling thread is inside one.
bool in_own_gemm();

// Held on the calling thread for the length of one (they nest).
struct OwnGemm {
  OwnGemm();
  ~OwnGemm();
  OwnGemm(OwnGemm&&) = delete;  // and so no copies either
};

}  // namespace cuboid::kokkos_ext
