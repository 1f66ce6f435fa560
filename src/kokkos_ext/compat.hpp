#pragma once
// The one place that knows which Kokkos / Kokkos Kernels version cuboid is built against.
// Every call takes the execution space first, even where the underlying API does not.
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

#include "kokkos_ext/features.hpp"
#if defined(KOKKOS_ENABLE_CUDA)
#include "platform/device_backend.hpp"
#endif

namespace cuboid::kokkos_ext {

// C = alpha * A * B + beta * C on `space`. Kokkos Kernels before 3.6 has no space argument; it
// then runs on the views' default instance, which is why callers fence the space they pass. On
// a GPU that is not enough (the default instance is another stream), so there the cuBLAS handle
// is pointed at `space`'s stream first, or, without cuBLAS, the GEMM is waited for here.
template <class ExecSpace, class AView, class BView, class CView>
void gemm(const ExecSpace& space, typename CView::const_value_type alpha, const AView& A,
          const BView& B, typename CView::const_value_type beta, const CView& C) {
#if CUBOID_HAVE_GEMM_WITH_SPACE
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) platform::make_current(space);
#endif
  KokkosBlas::gemm(space, "N", "N", alpha, A, B, beta, C);
#else
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    platform::make_current(space);
    if (!platform::bind_blas_stream(space)) {
      space.fence();  // work queued on `space` comes first
      KokkosBlas::gemm("N", "N", alpha, A, B, beta, C);
      Kokkos::Cuda().fence();
      return;
    }
  }
#endif
  (void)space;
  KokkosBlas::gemm("N", "N", alpha, A, B, beta, C);
#endif
}

// Asynchronous deep copy ordered on `space` where Kokkos offers it (3.x and later all do; the
// fallback keeps older trees building).
template <class ExecSpace, class Dst, class Src>
void deep_copy(const ExecSpace& space, const Dst& dst, const Src& src) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) platform::make_current(space);
#endif
#if CUBOID_HAVE_ASYNC_DEEP_COPY
  Kokkos::deep_copy(space, dst, src);
#else
  space.fence();
  Kokkos::deep_copy(dst, src);
#endif
}

// A Kokkos Tools region that closes itself: every phase of a run is labelled "cuboid::...".
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& label) { Kokkos::Profiling::pushRegion(label); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};

inline std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         (v % 100 < 10 ? "0" : "") + std::to_string(v % 100);
}

}  // namespace cuboid::kokkos_ext

namespace cuboid::kokkos_ext {

// Kokkos::initialize without command-line arguments, warnings about thread binding off.
inline void initialize() {
#if KOKKOS_VERSION >= 40000
  Kokkos::initialize(Kokkos::InitializationSettings().set_disable_warnings(true));
#else
  Kokkos::InitArguments args;
  args.disable_warnings = true;
  Kokkos::initialize(args);
#endif
}

}  // namespace cuboid::kokkos_ext
