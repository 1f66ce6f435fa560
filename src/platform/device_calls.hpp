#pragma once
// GEMMs, scaling and copies on any execution space, a device's included: on a device the calling
// thread first makes the space's device current (a thread may drive several), and where Kokkos
// Kernels takes no execution space the vendor BLAS handle is pointed at the space's stream (without
// a vendor BLAS the GEMM runs on the default instance, waited for here). Every other space goes
// straight to kokkos_ext, which knows nothing of devices.
#include <cstdint>

#include "kokkos_ext/compat.hpp"
#include "platform/device_backend.hpp"

namespace cuboid::platform {

template <class ExecSpace, class AView, class BView, class CView>
void gemm(const ExecSpace& space, kokkos_ext::Ops ops, typename CView::const_value_type alpha,
          const AView& A, const BView& B, typename CView::const_value_type beta, const CView& C) {
#if CUBOID_DEVICE_BACKEND
  if constexpr (std::is_same_v<ExecSpace, DeviceExecSpace>) {
    make_current(space);
#if !CUBOID_HAVE_GEMM_WITH_SPACE
    if (!bind_blas_stream(space)) {
      space.fence();  // work queued on `space` comes first
      kokkos_ext::gemm(DeviceExecSpace(), ops, alpha, A, B, beta, C);
      DeviceExecSpace().fence();
      return;
    }
#endif
  }
#endif
  kokkos_ext::gemm(space, ops, alpha, A, B, beta, C);
}

template <class ExecSpace, class AView, class BView, class CView>
void gemm(const ExecSpace& space, typename CView::const_value_type alpha, const AView& A,
          const BView& B, typename CView::const_value_type beta, const CView& C) {
  platform::gemm(space, kokkos_ext::Ops{}, alpha, A, B, beta, C);
}

// C <- beta C on `space`, asynchronous; beta = 0 writes zeros without reading C, as BLAS does.
// The GEMM of a product with k = 0 or alpha = 0: Kokkos Kernels' gemm returns at once when
// k = 0, where BLAS scales C.
template <class ExecSpace, class CView>
void scale(const ExecSpace& space, typename CView::const_value_type beta, const CView& C) {
#if CUBOID_DEVICE_BACKEND
  if constexpr (std::is_same_v<ExecSpace, DeviceExecSpace>) make_current(space);
#endif
  using Scalar = typename CView::non_const_value_type;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "cuboid::platform::scale",
      Policy(space, {0, 0}, {std::int64_t(C.extent(0)), std::int64_t(C.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        C(i, j) = beta == Scalar(0) ? Scalar(0) : beta * C(i, j);
      });
}

template <class ExecSpace, class Dst, class Src>
void deep_copy(const ExecSpace& space, const Dst& dst, const Src& src) {
#if CUBOID_DEVICE_BACKEND
  if constexpr (std::is_same_v<ExecSpace, DeviceExecSpace>) make_current(space);
#endif
  kokkos_ext::deep_copy(space, dst, src);
}

}  // namespace cuboid::platform
