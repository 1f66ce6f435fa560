#pragma once
// The one place that knows which Kokkos / Kokkos Kernels version cuboid is built against.
// Every call takes the execution space first, even where the underlying API does not.
#include <KokkosKernels_config.h>
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

#include "kokkos_ext/features.hpp"
#include "kokkos_ext/own_gemm.hpp"

namespace cuboid::kokkos_ext {

// Whether this Kokkos Kernels has a vendor GEMM (TPL) for views in MemSpace: the BLAS TPL for
// host memory, cuBLAS for CUDA memory, rocBLAS for HIP memory.
template <class MemSpace>
constexpr bool vendor_gemm_built() {
  if constexpr (std::is_same_v<MemSpace, Kokkos::HostSpace>) {
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
    return true;
#endif
  }
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
  if constexpr (std::is_same_v<MemSpace, Kokkos::CudaSpace>) return true;
#endif
#if defined(KOKKOS_ENABLE_HIP) && defined(KOKKOSKERNELS_ENABLE_TPL_ROCBLAS)
#if KOKKOS_VERSION >= 40000  // HIP left Kokkos::Experimental in 4.0
  if constexpr (std::is_same_v<MemSpace, Kokkos::HIPSpace>) return true;
#else
  if constexpr (std::is_same_v<MemSpace, Kokkos::Experimental::HIPSpace>) return true;
#endif
#endif
  return false;
}

// Whether KokkosBlas::gemm on `ExecSpace` with these views dispatches to the vendor BLAS. It asks
// Kokkos Kernels' own TPL availability trait with the view types KokkosBlas::gemm hands it
// (unmanaged, same layout and device type). From 4.1 the trait also requires the views'
// execution space to be `ExecSpace`: views typed Device<OpenMP, HostSpace> run on a Serial
// instance silently take Kokkos Kernels' own kernel.
template <class ExecSpace, class AView, class BView, class CView>
constexpr bool gemm_uses_vendor_blas() {
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using AVT = Kokkos::View<typename AView::const_value_type**, typename AView::array_layout,
                           typename AView::device_type, Unmanaged>;
  using BVT = Kokkos::View<typename BView::const_value_type**, typename BView::array_layout,
                           typename BView::device_type, Unmanaged>;
  using CVT = Kokkos::View<typename CView::non_const_value_type**, typename CView::array_layout,
                           typename CView::device_type, Unmanaged>;
#if CUBOID_HAVE_GEMM_TPL_TRAIT_WITH_SPACE
  return KokkosBlas::Impl::gemm_tpl_spec_avail<ExecSpace, AVT, BVT, CVT>::value;
#else
  return KokkosBlas::Impl::gemm_tpl_spec_avail<AVT, BVT, CVT>::value;
#endif
}

template <class T>
constexpr bool blas_scalar =
    std::is_same_v<T, double> || std::is_same_v<T, float> ||
    std::is_same_v<T, Kokkos::complex<double>> || std::is_same_v<T, Kokkos::complex<float>>;

// op(A) and op(B) of a GEMM as BLAS spells them: 'N', 'T' or 'C' (the conjugate transpose, the
// transpose for real scalars). A view handed with op 'T' or 'C' is the matrix as stored.
struct Ops {
  char a = 'N', b = 'N';
  bool operator==(const Ops& o) const { return a == o.a && b == o.b; }
};

// C = alpha * op(A) * op(B) + beta * C on `space`. Kokkos Kernels before 3.6 has no space
// argument; it then runs on the views' default instance, which is why callers fence the space
// they pass (on a GPU that is not enough: platform::gemm points the BLAS handle at the space's
// stream first). Kokkos Kernels 3.6-4.0 take only the C view's execution space: a call on
// another space waits for `space`, runs on the C view's space and waits for it.
template <class ExecSpace, class AView, class BView, class CView>
void gemm(const ExecSpace& space, Ops ops, typename CView::const_value_type alpha, const AView& A,
          const BView& B, typename CView::const_value_type beta, const CView& C) {
#if CUBOID_REQUIRE_VENDOR_GEMM
  using Scalar = typename CView::non_const_value_type;
  if constexpr (blas_scalar<Scalar> && vendor_gemm_built<typename CView::memory_space>()) {
    static_assert(gemm_uses_vendor_blas<ExecSpace, AView, BView, CView>(),
                  "cuboid: this GEMM would run Kokkos Kernels' own kernel although it was built "
                  "with a vendor BLAS for this memory space. Type the views with the execution "
                  "space that runs the GEMM (Kokkos::Device<ExecSpace, MemorySpace>) and a "
                  "LayoutLeft or LayoutRight layout (configure with "
                  "-DCUBOID_REQUIRE_VENDOR_GEMM=OFF only to measure the slow path).");
  }
#endif
  const char ta[2] = {ops.a, '\0'}, tb[2] = {ops.b, '\0'};
  const OwnGemm own;  // a BLAS drop-in passes the call Kokkos Kernels makes straight on
#if CUBOID_HAVE_GEMM_WITH_SPACE
  if constexpr (std::is_same_v<ExecSpace, typename CView::execution_space> ||
                CUBOID_HAVE_GEMM_TPL_TRAIT_WITH_SPACE) {
    KokkosBlas::gemm(space, ta, tb, alpha, A, B, beta, C);
  } else {
    using CSpace = typename CView::execution_space;
    space.fence();
    KokkosBlas::gemm(CSpace(), ta, tb, alpha, A, B, beta, C);
    CSpace().fence();
  }
#else
  (void)space;
  KokkosBlas::gemm(ta, tb, alpha, A, B, beta, C);
#endif
}

template <class ExecSpace, class AView, class BView, class CView>
void gemm(const ExecSpace& space, typename CView::const_value_type alpha, const AView& A,
          const BView& B, typename CView::const_value_type beta, const CView& C) {
  gemm(space, Ops{}, alpha, A, B, beta, C);
}

// Asynchronous deep copy ordered on `space` where Kokkos offers it (3.x and later all do; the
// fallback keeps older trees building).
template <class ExecSpace, class Dst, class Src>
void deep_copy(const ExecSpace& space, const Dst& dst, const Src& src) {
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

// Kokkos::initialize without command-line arguments, warnings about thread binding off.
inline void initialize() {
#if CUBOID_HAVE_INITIALIZATION_SETTINGS
  Kokkos::initialize(Kokkos::InitializationSettings().set_disable_warnings(true));
#else
  Kokkos::InitArguments args;
  args.disable_warnings = true;
  Kokkos::initialize(args);
#endif
}

}  // namespace cuboid::kokkos_ext
