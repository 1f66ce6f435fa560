// Feature check: Kokkos::deep_copy(space, dst, src) between the staged processor's 2-D
// unmanaged buffers and host staging memory.
#include <Kokkos_Core.hpp>

using Host = Kokkos::DefaultHostExecutionSpace;
using Block = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::Device<Host, Kokkos::HostSpace>,
                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

int main() {
  double a[4] = {}, b[4] = {};
  Kokkos::deep_copy(Host(), Block(a, 2, 2), Block(b, 2, 2));
  return 0;
}
