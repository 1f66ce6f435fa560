// Feature check: KokkosBlas::gemm(space, ...) with the views cuboid passes. The host processor
// runs on blocks of LayoutLeft HostSpace matrices; the staged processor on unmanaged
// LayoutLeft buffers typed with the execution space that runs them. Kokkos Kernels 3.6-4.0
// accept only the C view's execution space; earlier versions take no space at all.
#include <KokkosBlas3_gemm.hpp>

#include <utility>

using Host = Kokkos::DefaultHostExecutionSpace;
#if defined(KOKKOS_ENABLE_SERIAL)
using Staged = Kokkos::Serial;
#else
using Staged = Host;
#endif

int main() {
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> m("m", 4, 4);
  auto block = Kokkos::subview(m, std::make_pair(0, 2), std::make_pair(1, 3));
  KokkosBlas::gemm(Host(), "N", "N", 1.0, block, block, 0.0, block);
  using Buffer =
      Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::Device<Staged, Kokkos::HostSpace>,
                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Buffer b(m.data(), 2, 2);
  KokkosBlas::gemm(Staged(), "N", "N", 1.0, b, b, 0.0, b);
  return 0;
}
