// Every GEMM the processors run reaches the vendor BLAS when Kokkos Kernels was built with one.
// Kokkos Kernels marks each gemm with a Kokkos Tools region naming the path it took
// ("KokkosBlas::gemm[TPL_BLAS,double]" or "KokkosBlas::gemm[ETI]"/"[noETI]" for its own
// kernel): the test records them while the host and staged workers calibrate, and also checks
// the compile-time predicate kokkos_ext::gemm asserts with, including cases it must reject.
#include <KokkosKernels_config.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "exec/matrices.hpp"
#include "exec/worker.hpp"
#include "kokkos_ext/compat.hpp"
#include "platform/processor.hpp"

using namespace cuboid;

namespace {

std::mutex regions_mutex;
std::vector<std::string> regions;

void record_region(const char* name) {
  std::lock_guard<std::mutex> lock(regions_mutex);
  regions.emplace_back(name);
}

std::vector<std::string> gemm_regions_of(const std::string& processor) {
  {
    std::lock_guard<std::mutex> lock(regions_mutex);
    regions.clear();
  }
  Kokkos::Tools::Experimental::set_push_region_callback(record_region);
  auto specs = platform::resolve_processors({processor}, "test");
  auto worker = exec::make_worker<double>(specs.at(0));
  const double rate = worker->measure_gemm_rate(96, 0.05);
  Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
  EXPECT_GT(rate, 0.0) << processor;
  std::vector<std::string> gemms;
  std::lock_guard<std::mutex> lock(regions_mutex);
  for (const auto& r : regions)
    if (r.rfind("KokkosBlas::gemm", 0) == 0) gemms.push_back(r);
  return gemms;
}

using Host = Kokkos::DefaultHostExecutionSpace;
#if defined(KOKKOS_ENABLE_SERIAL)
using Staged = Kokkos::Serial;
#else
using Staged = Host;
#endif
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
template <class Device, class Layout = Kokkos::LayoutLeft>
using Block = Kokkos::View<double**, Layout, Device, Unmanaged>;

}  // namespace

TEST(VendorGemm, HostAndStagedWorkersCallTheVendorBlas) {
#if !defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  GTEST_SKIP() << "Kokkos Kernels was built without the BLAS TPL: nothing to reach";
#endif
  for (const char* p : {"host", "staged"}) {
    const auto gemms = gemm_regions_of(p);
    ASSERT_FALSE(gemms.empty()) << p << ": no KokkosBlas::gemm region recorded";
    for (const auto& g : gemms)
      EXPECT_NE(g.find("[TPL_BLAS"), std::string::npos)
          << p << " ran " << g << " instead of the vendor BLAS";
  }
}

TEST(VendorGemm, PredicateAcceptsTheViewsCuboidPasses) {
#if !defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  GTEST_SKIP() << "Kokkos Kernels was built without the BLAS TPL";
#endif
  using HostMatrix = exec::HostMatrix<double>;
  using Sub = decltype(Kokkos::subview(std::declval<HostMatrix>(), std::make_pair(0, 1),
                                       std::make_pair(0, 1)));
  // The host processor: blocks of the LayoutLeft host matrices, on the default host space.
  EXPECT_TRUE((kokkos_ext::gemm_uses_vendor_blas<Host, Sub, Sub, Sub>()));
  EXPECT_TRUE((kokkos_ext::gemm_uses_vendor_blas<Host, HostMatrix, HostMatrix, HostMatrix>()));
  // The staged processor: its buffers typed with the space that runs them.
  using S = Block<Kokkos::Device<Staged, Kokkos::HostSpace>>;
  EXPECT_TRUE((kokkos_ext::gemm_uses_vendor_blas<Staged, S, S, S>()));
}

TEST(VendorGemm, PredicateRejectsWhatKokkosKernelsSendsToItsOwnKernel) {
  // A strided layout never reaches the vendor BLAS, on any version.
  using Strided = Block<Kokkos::Device<Host, Kokkos::HostSpace>, Kokkos::LayoutStride>;
  EXPECT_FALSE((kokkos_ext::gemm_uses_vendor_blas<Host, Strided, Strided, Strided>()));
#if CUBOID_HAVE_GEMM_TPL_TRAIT_WITH_SPACE && defined(KOKKOS_ENABLE_SERIAL) && \
    defined(KOKKOS_ENABLE_OPENMP)
  // Kokkos Kernels 4.1 and later: views typed for OpenMP, GEMM on a Serial instance.
  using OpenMPViews = Block<Kokkos::Device<Kokkos::OpenMP, Kokkos::HostSpace>>;
  EXPECT_FALSE(
      (kokkos_ext::gemm_uses_vendor_blas<Kokkos::Serial, OpenMPViews, OpenMPViews, OpenMPViews>()));
#endif
}
