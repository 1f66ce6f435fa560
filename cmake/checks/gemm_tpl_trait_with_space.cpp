// Feature check: Kokkos Kernels' GEMM TPL availability trait takes the execution space first
// (4.1 and later: the vendor BLAS is used only when it matches the views' execution space).
#include <KokkosBlas3_gemm.hpp>

using V = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace,
                       Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using CV = Kokkos::View<const double**, Kokkos::LayoutLeft, Kokkos::HostSpace,
                        Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
constexpr bool avail =
    KokkosBlas::Impl::gemm_tpl_spec_avail<Kokkos::DefaultHostExecutionSpace, CV, CV, V>::value;

int main() { return avail ? 0 : 1; }
